"""Dr. Lobo and the villain deck: advancement, End of Turn events, Intel overflow, V-1, injuries.

Field manual: "Villain phase", "Injuries", Appendix "V-1"; docs/RULES.md "Villain phase".
"""

from __future__ import annotations

from sim.content import constants as K
from sim.rng import TOKENS, VILLAIN
from sim.rules.decks import draw_card, draw_token
from sim.rules.endgame import check_lobo
from sim.rules.errors import RuleError
from sim.rules.state import POOL, SUPPLY, GameState
from sim.rules.status import discard_status, first_held, status_name


def draw_villain_card(g: GameState) -> int:
    """Top card of the villain deck (the discard pile is reshuffled when it runs out)."""
    card = draw_card(g, g.villain, VILLAIN)
    if card < 0:
        raise RuleError("villain deck and discard pile are both empty")
    g.stats.villain_drawn += 1
    return card


def describe_advance(g: GameState, card: int) -> str:
    if g.content.villain_injury[card]:
        return "Injury"
    return f"{int(g.content.villain_advance[card]):+d}"


def villain_advancement(g: GameState) -> None:
    """Draw a villain card and apply its Villain Advancement side.

    A number goes next to Dr. Lobo and moves his track; an Injury card injures the
    active player (track unchanged) and is discarded. A Top Secret "cancel one
    villain advancement" card may cancel it as it is drawn (the card is discarded).
    """
    c = g.content
    card = draw_villain_card(g)
    player = g.players[g.active]
    ts = _top_secret_card(g, player, K.TS_CANCEL_ADVANCE)
    if ts >= 0 and g.strategy(g.active).cancel_advance(g.view(g.active, "cancel_advance"), card):
        _play_top_secret(g, player, ts)
        g.villain.discard.append(card)
        g.say(f"  villain advancement {describe_advance(g, card)} cancelled by Top Secret card")
        return
    if c.villain_injury[card]:
        g.villain.discard.append(card)
        g.say("  villain advancement: Injury card, 1 injury to the active player")
        take_injuries(g, player.seat, 1)
        return
    g.next_to_lobo.append(card)
    g.say(f"  villain advancement {describe_advance(g, card)}: Dr. Lobo at {g.lobo}")
    check_lobo(g)


def v_minus_1(g: GameState) -> None:
    """V-1: shuffle the cards next to Dr. Lobo, discard one at random, recompute the track."""
    if not g.next_to_lobo:
        g.say("  V-1: no card next to Dr. Lobo")
        return
    pile = sorted(g.next_to_lobo)
    card = pile[g.rng.below(len(pile), VILLAIN)]
    g.next_to_lobo.remove(card)
    g.villain.discard.append(card)
    g.say(f"  V-1 removes a {describe_advance(g, card)} card: Dr. Lobo at {g.lobo}")
    check_lobo(g)


def take_injuries(g: GameState, seat: int, n: int) -> None:
    """Injure a player; reaching life points knocks them out (discard all, villain advances).

    An injury_protection status card the player holds (the lowest id) cancels up to its
    amount of the injuries and is discarded.
    """
    if n <= 0:
        return
    card = first_held(g, seat, K.SE_INJURY_PROTECTION)
    if card >= 0:
        cancel = min(n, int(g.content.status_amount[g.content.status_type[card]]))
        n -= cancel
        discard_status(g, card)
        g.say(f"  {status_name(g, card)!r} cancels {cancel} injur{'y' if cancel == 1 else 'ies'} and is discarded")
        if n <= 0:
            return
    p = g.players[seat]
    p.injuries += n
    g.stats.injuries_taken += n
    if p.injuries >= p.life:
        p.injuries = 0
        g.stats.knockouts += 1
        g.say(f"  {name(g, seat)} is knocked out: injuries discarded, villain advances")
        villain_advancement(g)


def heal(g: GameState, seat: int, n: int) -> None:
    p = g.players[seat]
    p.injuries = max(0, p.injuries - n)


def name(g: GameState, seat: int) -> str:
    return f"P{seat + 1} {g.content.character_names[g.players[seat].character]}"


def _top_secret_card(g: GameState, player, effect: int) -> int:
    """Lowest-id Top Secret card with ``effect`` in the player's hand, or -1."""
    eff = g.content.top_secret_effect
    cards = [t for t in sorted(player.top_secret) if eff[t] == effect]
    return cards[0] if cards else -1


def _play_top_secret(g: GameState, player, card: int) -> None:
    player.top_secret.remove(card)
    g.top_secret.discard.append(card)
    g.stats.top_secret_played += 1


# --- End of Turn events ------------------------------------------------------------


def in_region(g: GameState, space: int, region: int) -> bool:
    """USSR cities count as Asia too (FAQ 4)."""
    c = g.content
    if c.space_kind[space] == K.OCEAN:
        return False
    if region == K.USSR_REGION:
        return bool(c.space_ussr[space])
    return int(c.space_deck[space]) == region


def place_intel(g: GameState, space: int) -> None:
    """Add one yellow Intel at a space: from the supply, else a random one from the Pool."""
    t = draw_token(g, g.intel_loc, SUPPLY)
    source = "supply"
    if t < 0:
        t = draw_token(g, g.intel_loc, POOL)
        source = "Intel Pool"
    if t < 0:
        g.say(f"    no Intel left to place at {g.content.space_names[space]}")
        return
    g.intel_loc[t] = space
    g.say(f"    Intel added at {g.content.space_names[space]} (from the {source})")


def close_airport(g: GameState, space: int) -> None:
    """Close an airport; red airports never close; closures are limited by the tokens."""
    c = g.content
    if not c.space_airport[space] or c.space_red_airport[space] or g.airport_closed[space]:
        return
    if g.close_tokens_left <= 0:
        return
    g.airport_closed[space] = True
    g.close_tokens_left -= 1
    g.stats.airports_closed += 1
    g.say(f"    airport closed: {c.space_names[space]}")


def end_of_turn_event(g: GameState, card: int) -> None:
    """Apply a card's End of Turn side: remove Intel, then add Intel, then close an airport."""
    c = g.content
    region = int(c.villain_remove_region[card])
    if region >= 0:
        removed = 0
        for t, loc in enumerate(g.intel_loc):
            if loc >= 0 and in_region(g, loc, region):
                g.intel_loc[t] = SUPPLY
                removed += 1
        g.say(f"    remove Intel: {K.REGIONS[region]} ({removed} token(s) back to the supply)")
    for space in c.villain_add_intel[card]:
        if space >= 0:
            place_intel(g, int(space))
    target = int(c.villain_close_city[card])
    if target >= 0:
        close_airport(g, target)
    g.villain.discard.append(card)


def intel_overflow(g: GameState) -> None:
    """Too many yellow tokens on the board: clear them all and keep at most one green token."""
    on_board = g.yellow_on_board()
    if len(on_board) <= g.overflow_limit:
        return
    g.stats.overflows += 1
    for t in on_board:
        g.intel_loc[t] = SUPPLY
    greens = g.green_on_board()
    kept = -1
    if len(greens) > 1:
        kept = greens[g.rng.below(len(greens), TOKENS)]
        for t in greens:
            if t != kept:
                g.green_loc[t] = SUPPLY
    g.say(
        f"  INTEL OVERFLOW: {len(on_board)} yellow tokens cleared"
        + (f", {len(greens) - 1} green token(s) back to the supply" if kept >= 0 else "")
    )


def villain_phase(g: GameState, cards: int) -> None:
    """Draw 1 villain card (2 after a rest), apply the End of Turn events, then check overflow."""
    for _ in range(cards):
        card = draw_villain_card(g)
        g.say(f"  villain card {card}: End of Turn event")
        end_of_turn_event(g, card)
    intel_overflow(g)
