"""Encounter phase: secret-mission flips, tokens, henchman tests, encounter cards, rewards.

Field manual "2 Encounters", Appendix "Rewards and Penalties"; docs/RULES.md "Encounters".
"""

from __future__ import annotations

import numpy as np

from sim.content import constants as K
from sim.rng import ENCOUNTER, FATE, STATUS, TOKENS, TOP_SECRET
from sim.rules.choices import TestOption, TokenChoice
from sim.rules.decks import draw_card, draw_token, pick_on_space
from sim.rules.endgame import check_henchmen, check_location
from sim.rules.errors import RuleError, StrategyError, is_index
from sim.rules.missions import flip_missions
from sim.rules.skill_tests import choose_option, describe_option, run_test
from sim.rules.state import DEFEATED, POOL, REMOVED, SUPPLY, GameState
from sim.rules.status import IN_DECK, holds_kind, status_name
from sim.rules.villain import name, take_injuries, v_minus_1, villain_advancement


def token_choices(g: GameState, seat: int) -> list[TokenChoice]:
    """What the player may do with the tokens on their space (always: ignore them)."""
    space = g.players[seat].space
    choices = [TokenChoice.NO_INTEL]
    if g.green_on(space):
        choices.append(TokenChoice.HENCHMAN)
    if g.yellow_on(space):
        choices.append(TokenChoice.POOL)
        if g.greens_in(SUPPLY):
            choices.append(TokenChoice.EXCHANGE)
    return choices


def encounter_phase(g: GameState, seat: int) -> None:
    """Flip secret missions, then resolve exactly one token or a No Intel encounter."""
    p = g.players[seat]
    flip_missions(g, seat)
    choices = token_choices(g, seat)
    choice = TokenChoice.NO_INTEL
    if len(choices) > 1:
        strat = g.strategy(seat)
        i = strat.token(g.view(seat, "token"), list(choices))
        if not is_index(i) or not 0 <= i < len(choices):
            raise StrategyError(f"strategy {strat.name!r} chose token option {i!r} of {len(choices)}")
        choice = choices[int(i)]
    space = p.space
    if choice == TokenChoice.HENCHMAN:
        henchman_encounter(g, seat, pick_on_space(g, g.green_loc, space))
    elif choice == TokenChoice.POOL:
        token = pick_on_space(g, g.intel_loc, space)
        g.intel_loc[token] = POOL
        g.say(f"  takes the Intel token into the Intel Pool (Pool: {len(g.intel_in(POOL))})")
        encounter_card(g, seat, K.WITH_INTEL)
    elif choice == TokenChoice.EXCHANGE:
        exchange_intel(g, seat, pick_on_space(g, g.intel_loc, space))
        encounter_card(g, seat, K.WITH_INTEL)
    else:
        encounter_card(g, seat, K.NO_INTEL)


def exchange_intel(g: GameState, seat: int, token: int) -> None:
    """Yellow token back to the supply; a face-down green token goes to a Fate-drawn city."""
    c = g.content
    g.intel_loc[token] = SUPPLY
    green = draw_token(g, g.green_loc, SUPPLY)
    if green < 0:
        raise RuleError("exchange offered with an empty green supply")
    card = draw_card(g, g.fate, FATE)
    if card < 0:
        raise RuleError("Fate deck exhausted")
    city = int(c.fate_city[card])
    g.fate.discard.append(card)
    g.green_loc[green] = city
    g.say(f"  exchanges the Intel token: a Location token goes to {c.space_names[city]}")


def use_auto_pass(g: GameState, seat: int, skill: int, henchman: int, no_advance: bool) -> bool:
    """The player holds the test's auto-pass advanced skill: use it, or test anyway?

    "It may be to that character's advantage to fail the encounter" (Additional Rules:
    Villain Advancement), so the player may decline.
    """
    strat = g.strategy(seat)
    use = strat.use_auto_pass(g.view(seat, "use_auto_pass"), skill, henchman, no_advance)
    if not isinstance(use, (bool, np.bool_)):
        raise StrategyError(f"strategy {strat.name!r} answered use_auto_pass with {use!r}, not true or false")
    if not use:
        g.say(f"  declines the automatic pass with {K.ADVANCED_SKILLS[skill]}")
    return bool(use)


def henchman_encounter(g: GameState, seat: int, token: int) -> None:
    """Reveal the Location token and test its henchman at his current level.

    On a pass the Location Track advances first (the game may end there), then the
    henchman levels up or, at level 3, is defeated (Field Manual, 2.3).
    """
    c = g.content
    h = token  # Location token t belongs to henchman t
    level = g.henchman_level[h]
    g.stats.henchman_tests += 1
    g.say(f"  reveals the Location token: {c.henchman_names[h]} (level {level})")
    g.green_loc[token] = SUPPLY  # the token leaves the board whatever happens
    passed = henchman_test(g, seat, h)
    if not passed:
        g.say(f"  {c.henchman_names[h]} wins")
        villain_advancement(g)
        henchman_consequence(g, seat, h, level, False)
        return
    g.stats.henchman_passed += 1
    g.location_track += 1
    g.say(f"  Location Track {g.location_track}/{g.location_target}")
    check_location(g)
    henchman_level_up(g, h, reshuffle=False)
    henchman_consequence(g, seat, h, level, True)


def henchman_consequence(g: GameState, seat: int, h: int, level: int, passed: bool) -> None:
    """The pass or fail consequence printed on the henchman's card for the level tested."""
    c = g.content
    if passed:
        apply_effect(g, seat, int(c.henchman_reward[h, level - 1]), int(c.henchman_reward_amount[h, level - 1]),
                     int(c.henchman_reward_skill[h, level - 1]))
    else:
        apply_effect(g, seat, int(c.henchman_penalty[h, level - 1]), int(c.henchman_penalty_amount[h, level - 1]),
                     int(c.henchman_penalty_skill[h, level - 1]))


def henchman_test(g: GameState, seat: int, h: int, no_advance: bool = False) -> bool:
    """The test printed on a henchman's card for his current level (his auto-pass skill included)."""
    c = g.content
    p = g.players[seat]
    level = g.henchman_level[h]
    auto = int(c.henchman_autopass[h, level - 1])
    if auto >= 0 and p.advanced[auto] and use_auto_pass(g, seat, auto, h, no_advance):
        g.stats.tests_attempted += 1
        g.stats.tests_passed += 1
        g.say(f"  passes automatically with {K.ADVANCED_SKILLS[auto]}")
        return True
    options = skill_options(c.henchman_option_skill[h, level - 1], c.henchman_option_modifier[h, level - 1],
                            c.henchman_option_successes[h, level - 1])
    option = choose_option(g, seat, options)
    g.say(f"  tests {describe_option(g, option)}")
    return run_test(g, seat, option, henchman=h, level=level, no_advance=no_advance)


def henchman_level_up(g: GameState, h: int, *, reshuffle: bool) -> None:
    """A passed henchman test: the henchman levels up, or at level 3 is defeated.

    A defeat removes his Location token from the game; after a test inside an encounter
    card (``reshuffle``) the Location tokens on the board are flipped up and dealt anew
    (FAQ 8). Then the all-henchmen win is checked.
    """
    c = g.content
    level = g.henchman_level[h]
    if level < 3:
        g.henchman_level[h] = level + 1
        g.say(f"  {c.henchman_names[h]} levels up to {level + 1}")
        return
    g.henchman_level[h] = DEFEATED
    g.say(f"  {c.henchman_names[h]} is DEFEATED: his token leaves the game")
    if reshuffle:
        reshuffle_locations(g, h)
    g.green_loc[h] = REMOVED
    check_henchmen(g)


def reshuffle_locations(g: GameState, h: int) -> None:
    """FAQ 8: flip up every Location token on the board, take out henchman ``h``'s token,
    reshuffle the others face down and deal one back to each of their places.

    Protocol (both engines): the other tokens on the board in ascending id order, and
    their places in the same order; each place in turn gets ``tokens[j]`` with
    ``j = below(len(tokens))`` from the TOKENS stream (no draw for the last token),
    the last token moving into slot ``j``.
    """
    tokens = [t for t, loc in enumerate(g.green_loc) if loc >= 0 and t != h]
    places = [g.green_loc[t] for t in tokens]
    if g.green_loc[h] >= 0:
        g.say(f"  flips up the Location tokens: {g.content.henchman_names[h]}'s token found at "
              f"{g.content.space_names[g.green_loc[h]]} leaves the board")
    g.green_loc[h] = REMOVED
    for place in places:
        j = g.rng.below(len(tokens), TOKENS) if len(tokens) > 1 else 0
        g.green_loc[tokens[j]] = place
        tokens[j] = tokens[-1]
        tokens.pop()
    if places:
        g.say(f"  the {len(places)} other Location token(s) are reshuffled face down onto their places")


def flip_up(g: GameState, amount: int, places: tuple[int, ...]) -> None:
    """Flip up to ``amount`` face-down Intel tokens face up, for the rest of the game.

    Each flip takes a random face-down token (ascending ids, TOKENS stream) of the first
    place in ``places`` that holds one: POOL, SUPPLY, or any space (the value 0 stands
    for the map). Nothing happens when no face-down token is left there.
    """
    for _ in range(amount):
        for where in places:
            cands = [t for t, loc in enumerate(g.intel_loc)
                     if not g.intel_face_up[t] and (loc == where if where < 0 else loc >= 0)]
            if cands:
                t = cands[g.rng.below(len(cands), TOKENS)]
                g.intel_face_up[t] = True
                kind = K.INTEL_TYPES[int(g.content.intel_token_type[t])]
                loc = g.intel_loc[t]
                at = "the Pool" if loc == POOL else "the supply" if loc == SUPPLY else g.content.space_names[loc]
                g.say(f"    flips up {'an' if kind[0] in 'aeiou' else 'a'} {kind} Intel token in {at}")
                break


def skill_options(skills, modifiers, successes) -> list[TestOption]:
    """The printed test options (skill, modifier, successes needed); -1 skill pads."""
    return [TestOption(int(skills[i]), int(modifiers[i]), int(successes[i]))
            for i in range(K.MAX_OPTIONS) if skills[i] >= 0]


def encounter_options(g: GameState, card: int, side: int) -> list[TestOption]:
    c = g.content
    options = skill_options(c.encounter_option_skill[card, side], c.encounter_option_modifier[card, side],
                            c.encounter_option_successes[card, side])
    if c.encounter_gamble[card, side]:
        options.append(TestOption(gamble=True))
    return options


def encounter_card(g: GameState, seat: int, side: int) -> None:
    """Draw from the space's continent deck (ocean deck at sea) and resolve one side."""
    c = g.content
    p = g.players[seat]
    deck = int(c.space_deck[p.space])
    card = draw_card(g, g.encounters[deck], ENCOUNTER + deck)
    if card < 0:
        raise RuleError(f"encounter deck {K.DECKS[deck]} is empty")
    g.encounters[deck].discard.append(card)
    no_advance = bool(c.encounter_no_advance[card, side])
    g.say(f"  {K.DECKS[deck]} encounter card {card} ({'With Intel' if side else 'No Intel'})")
    auto = int(c.encounter_autopass[card, side])
    h = int(c.encounter_henchman[card, side])
    level = g.henchman_level[h] if h >= 0 else 0
    henchman_card = h >= 0 and level != DEFEATED
    if henchman_card:
        # FAQ 6: a test against the henchman; a pass levels him up, the Location Track stays
        g.stats.card_henchman_tests += 1
        g.say(f"  the encounter calls for a test against {c.henchman_names[h]} (level {g.henchman_level[h]})")
        passed = henchman_test(g, seat, h, no_advance)
        if passed:
            g.stats.card_henchman_passed += 1
            henchman_level_up(g, h, reshuffle=True)
    elif auto >= 0 and p.advanced[auto] and use_auto_pass(g, seat, auto, -1, no_advance):
        g.stats.tests_attempted += 1
        g.stats.tests_passed += 1
        g.say(f"  passes automatically with {K.ADVANCED_SKILLS[auto]}")
        passed = True
    else:
        option = choose_option(g, seat, encounter_options(g, card, side))
        g.say(f"  tests {describe_option(g, option)}")
        passed = run_test(g, seat, option, no_advance=no_advance)
    # the henchman card's own consequence too? (henchmen.toml [readings] consequences_in_encounters)
    henchman_too = henchman_card and c.henchman_consequences_in_encounters
    if passed:
        if henchman_too:
            henchman_consequence(g, seat, h, level, True)
        apply_effect(g, seat, int(c.encounter_reward[card, side]),
                     int(c.encounter_reward_amount[card, side]), int(c.encounter_reward_skill[card, side]))
    else:
        if no_advance:
            g.say("  failed, but the encounter says: do not advance villain")
        else:
            villain_advancement(g)
        if henchman_too:
            henchman_consequence(g, seat, h, level, False)
        apply_effect(g, seat, int(c.encounter_penalty[card, side]),
                     int(c.encounter_penalty_amount[card, side]), int(c.encounter_penalty_skill[card, side]))


def draw_top_secret(g: GameState, seat: int) -> None:
    card = draw_card(g, g.top_secret, TOP_SECRET)
    if card < 0:
        g.say("  no Top Secret card left")
        return
    g.players[seat].top_secret.append(card)
    g.say(f"  draws Top Secret card {card} ({K.TOP_SECRET_EFFECTS[int(g.content.top_secret_effect[card])]})")


def gain_resolve(g: GameState, seat: int, n: int) -> None:
    p = g.players[seat]
    p.resolve = min(p.resolve_max, p.resolve + n)


def gain_un(g: GameState, seat: int) -> None:
    if g.un_supply > 0:
        g.un_supply -= 1
        g.players[seat].un_tokens += 1


def skill_max(g: GameState, seat: int) -> int:
    """The highest basic skill level shown on the player's Character Mat (``skill_max``)."""
    return int(g.content.character_skill_max[g.players[seat].character])


def raise_skill(g: GameState, seat: int, skill: int, delta: int) -> None:
    """Basic skills stay inside the limits shown on the Character Mat (``skill_min``..``skill_max``)."""
    p = g.players[seat]
    lo = int(g.content.character_skill_min[p.character])
    p.skills[skill] = min(skill_max(g, seat), max(lo, p.skills[skill] + delta))


def lower_any_skill(g: GameState, seat: int) -> None:
    """The player lowers a basic skill of their choice by 1 (none above the mat's minimum: nothing)."""
    p = g.players[seat]
    lo = int(g.content.character_skill_min[p.character])
    options = [s for s in range(len(K.BASIC_SKILLS)) if p.skills[s] > lo]
    if not options:
        g.say("    no skill can be lowered")
        return
    strat = g.strategy(seat)
    i = strat.skill_down(g.view(seat, "skill_down"), options)
    if not is_index(i) or not 0 <= i < len(options):
        raise StrategyError(f"strategy {strat.name!r} chose skill {i!r} of {len(options)} to lower")
    i = int(i)
    raise_skill(g, seat, options[i], -1)
    g.say(f"    lowers {K.BASIC_SKILLS[options[i]]}: now {p.skills[options[i]]}")


def take_status(g: GameState, seat: int, card: int) -> None:
    """The seat takes status card ``card`` from the deck; a resolve card acts as it is gained."""
    c = g.content
    p = g.players[seat]
    kind = int(c.status_type[card])
    g.status_holder[card] = seat
    g.say(f"    takes the status card {status_name(g, card)!r} ({K.STATUS_POLARITIES[int(c.status_polarity[kind])]})")
    if c.status_effect[kind] == K.SE_RESOLVE:
        p.resolve = max(0, min(p.resolve_max, p.resolve + int(c.status_amount[kind])))
        g.say(f"    Resolve now {p.resolve}")


def status_unavailable(g: GameState, seat: int, polarity: int) -> None:
    """No copy of the card to deal (FAQ 2): positive, a Top Secret card or 1 Resolve (the
    player's choice); negative, lower any skill (status.toml [readings] unavailable_negative
    "lower_skill"; else as a positive card); a third person, nothing."""
    if polarity == K.POSITIVE or (polarity == K.NEGATIVE and not g.content.status_negative_lowers_skill):
        strat = g.strategy(seat)
        ts = strat.status_top_secret(g.view(seat, "status_top_secret"))
        if not isinstance(ts, (bool, np.bool_)):
            raise StrategyError(f"strategy {strat.name!r} answered status_top_secret with {ts!r}, not true or false")
        if ts:
            g.say("    no copy left: draws a Top Secret card instead")
            draw_top_secret(g, seat)
        else:
            g.say("    no copy left: gains 1 Resolve instead")
            gain_resolve(g, seat, 1)
    elif polarity == K.NEGATIVE:
        g.say("    no copy left: lowers any skill instead")
        lower_any_skill(g, seat)
    else:
        g.say("    no copy left: a third person gives nothing")


def gain_status(g: GameState, seat: int, kind: int) -> None:
    """Deal the named status card (its lowest-id copy in the deck) to the seat.

    A third person the player already holds gives nothing (FAQ 2); no copy in the deck:
    :func:`status_unavailable`.
    """
    c = g.content
    polarity = int(c.status_polarity[kind])
    if polarity == K.THIRD_PERSON and holds_kind(g, seat, kind):
        g.say(f"    already with {c.status_names[kind]!r}: a third person gives nothing the second time")
        return
    for card, h in enumerate(g.status_holder):
        if h == IN_DECK and c.status_type[card] == kind:
            take_status(g, seat, card)
            return
    g.say(f"    status card {c.status_names[kind]!r}:")
    status_unavailable(g, seat, polarity)


def gain_random_status(g: GameState, seat: int, negative: bool) -> None:
    """A random status card from the deck: a negative one (penalty), else one that is not
    negative and that the player may gain (no third person they already hold).

    Protocol (both engines): the eligible cards in the deck in ascending id order, one
    drawn with ``below(count)`` from the STATUS stream; none eligible: the unavailable
    rule of the polarity asked for (positive for a reward, negative for a penalty).
    """
    c = g.content
    cands = []
    for card, h in enumerate(g.status_holder):
        if h != IN_DECK:
            continue
        kind = int(c.status_type[card])
        pol = int(c.status_polarity[kind])
        if negative:
            if pol == K.NEGATIVE:
                cands.append(card)
        elif pol == K.POSITIVE or (pol == K.THIRD_PERSON and not holds_kind(g, seat, kind)):
            cands.append(card)
    if not cands:
        status_unavailable(g, seat, K.NEGATIVE if negative else K.POSITIVE)
        return
    take_status(g, seat, cands[g.rng.below(len(cands), STATUS)])


def advanced_available(g: GameState, skill: int) -> bool:
    """A token of this advanced skill is left: fewer players hold it than the pack has tokens."""
    held = sum(1 for p in g.players if p.advanced[skill])
    return held < int(g.content.n_advanced_skill_tokens)


REWARD_CODES = frozenset(K.EFFECTS.index(e) for e in K.REWARD_EFFECTS)


def apply_effect(g: GameState, seat: int, effect: int, amount: int, skill: int) -> None:
    """One reward or penalty of the Appendix (``skill``: the effect's skill or status card kind)."""
    if effect == K.E_NONE:
        return
    p = g.players[seat]
    strat = g.strategy(seat)
    named = ""
    if effect in (K.E_UP_SKILL, K.E_LOWER_SKILL):
        named = f" ({K.BASIC_SKILLS[skill]})"
    elif effect == K.E_NAMED_ADVANCED_SKILL:
        named = f" ({K.ADVANCED_SKILLS[skill]})"
    if effect == K.E_STATUS:  # a reward or a penalty: the card's polarity says which
        g.say(f"  status card: {g.content.status_names[skill]!r}")
    else:
        word = "reward" if effect in REWARD_CODES else "penalty"
        g.say(f"  {word}: {'V-1' if effect == K.E_V_MINUS_1 else K.EFFECTS[effect].replace('_', ' ')}"
              + (f" x{amount}" if amount > 1 else "") + named)
    if effect == K.E_GAIN_INTEL:
        for _ in range(amount):
            t = draw_token(g, g.intel_loc, SUPPLY)
            if t < 0:
                break  # supply empty: out of luck (FAQ 1)
            g.intel_loc[t] = POOL
    elif effect == K.E_TOP_SECRET:
        draw_top_secret(g, seat)
    elif effect == K.E_GAIN_RESOLVE:
        gain_resolve(g, seat, amount)
    elif effect == K.E_UP_ANY_SKILL:
        options = [s for s in range(len(K.BASIC_SKILLS)) if p.skills[s] < skill_max(g, seat)]
        if options:
            i = strat.skill_up(g.view(seat, "skill_up"), options)
            if not is_index(i) or not 0 <= i < len(options):
                raise StrategyError(f"strategy {strat.name!r} chose skill {i!r} of {len(options)}")
            i = int(i)
            raise_skill(g, seat, options[i], +1)
            g.say(f"    chooses {K.BASIC_SKILLS[options[i]]}: now {p.skills[options[i]]}")
    elif effect == K.E_UP_SKILL:
        raise_skill(g, seat, skill, +1)
    elif effect == K.E_UN_TRANSPORT:
        gain_un(g, seat)
    elif effect == K.E_ADVANCED_SKILL:
        options = [s for s in range(len(K.ADVANCED_SKILLS)) if not p.advanced[s] and advanced_available(g, s)]
        if options:
            i = strat.advanced_skill(g.view(seat, "advanced_skill"), options)
            if not is_index(i) or not 0 <= i < len(options):
                raise StrategyError(f"strategy {strat.name!r} chose advanced skill {i!r} of {len(options)}")
            i = int(i)
            p.advanced[options[i]] = True
            g.say(f"    chooses {K.ADVANCED_SKILLS[options[i]]}")
    elif effect == K.E_NAMED_ADVANCED_SKILL:
        if not p.advanced[skill]:
            if advanced_available(g, skill):  # "Take the named Advanced Skill, if available"
                p.advanced[skill] = True
            else:
                g.say("    no token of that advanced skill is left")
    elif effect == K.E_V_MINUS_1:
        v_minus_1(g)
    elif effect == K.E_FLIP_POOL:
        flip_up(g, amount, (POOL,))
    elif effect == K.E_FLIP_ANYWHERE:
        board = K.SUPPLY + 1  # any space (a location >= 0)
        first = (POOL, board) if g.content.flip_anywhere_first == K.FLIP_POOL_FIRST else (board, POOL)
        flip_up(g, amount, first + (SUPPLY,))
    elif effect == K.E_LOSE_INTEL:
        # back to the supply, or out of the game (encounters.toml [readings] lost_intel)
        to = SUPPLY if g.content.lost_intel_to_supply else REMOVED
        for _ in range(amount):
            t = draw_token(g, g.intel_loc, POOL)
            if t < 0:
                break
            g.intel_loc[t] = to
    elif effect == K.E_INJURIES:
        take_injuries(g, seat, amount)
    elif effect == K.E_LOWER_SKILL:
        raise_skill(g, seat, skill, -1)
    elif effect == K.E_STATUS:
        gain_status(g, seat, skill)
    elif effect == K.E_RANDOM_STATUS:
        gain_random_status(g, seat, False)
    elif effect == K.E_RANDOM_NEGATIVE_STATUS:
        gain_random_status(g, seat, True)
    else:
        raise RuleError(f"unknown effect code {effect}")


__all__ = ["encounter_phase", "henchman_encounter", "encounter_card", "apply_effect", "name"]
