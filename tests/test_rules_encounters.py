"""Encounter phase: tokens, henchmen, encounter decks, auto-pass, gamble option, Appendix effects.

Field manual "2 Encounters", "Advanced skills", FAQ 1 and 3, Appendix; MODEL.md A.2.
"""

import pytest

from sim.content import constants as K
from sim.rng import TOKENS
from sim.rules import choices as ch
from sim.rules.choices import TokenChoice
from sim.rules.encounters import (
    apply_effect,
    encounter_card,
    encounter_options,
    encounter_phase,
    exchange_intel,
    henchman_encounter,
    token_choices,
)
from sim.rules.errors import GameOver
from sim.rules.invariants import check_invariants
from sim.rules.state import DEFEATED, POOL, REMOVED, SUPPLY, Outcome
from tests.rules_helpers import (
    DICE,
    GAMBLE,
    VILLAIN,
    clear_table,
    content,
    face,
    give_top_secret,
    install_rng,
    new_game,
    next_to_lobo,
    pool,
    put,
    put_green,
    put_intel,
    script_dice,
    sp,
    stack_encounter,
    stack_fate,
    stack_villain,
    villain_cards,
)

CALLI, ROCKO, DEXTER, NIKA, FIVE = range(5)
EUROPE = K.DECKS.index("europe")


def table(players=4, characters=None, variant="fixed-skills", **kw):
    """A cleared table; the characters hold their fixed advanced skills (characters.toml)."""
    g = clear_table(new_game(players, characters, variant, **kw))
    rng = install_rng(g)
    return g, rng


def card_where(pred):
    c = content()
    for x in range(c.n_encounters):
        if pred(c, x):
            return x
    raise AssertionError("no encounter card matches")


def n_options(c, x, side):
    return sum(1 for i in range(K.MAX_OPTIONS) if c.encounter_option_skill[x, side, i] >= 0) + int(
        c.encounter_gamble[x, side]
    )


def plain(c, x, side):
    """No auto-pass, no gamble, a reward and a penalty that touch nothing drawn at random."""
    return c.encounter_autopass[x, side] < 0 and not c.encounter_gamble[x, side]


def two_sided_europe_card():
    """A Europe card whose sides offer different options (two each), no auto-pass."""
    def pred(c, x):
        return (
            c.encounter_deck[x] == EUROPE
            and all(plain(c, x, s) and n_options(c, x, s) == 2 for s in (0, 1))
            and all(c.encounter_option_successes[x, s, 0] == 1 for s in (0, 1))
            and encounter_options_raw(c, x, 0) != encounter_options_raw(c, x, 1)
        )

    return card_where(pred)


def encounter_options_raw(c, x, side):
    return [
        (int(c.encounter_option_skill[x, side, i]), int(c.encounter_option_modifier[x, side, i]),
         int(c.encounter_option_successes[x, side, i]))
        for i in range(K.MAX_OPTIONS)
    ]


def side_used(g, seat, card):
    """Which side's options the strategy was shown for ``card`` (last test_option call)."""
    offered = g.strategies[seat].asked("test_option")[-1][0]
    sides = [s for s in (0, 1) if encounter_options(g, card, s) == offered]
    assert len(sides) == 1
    return sides[0]


def pass_dice(rng):
    """Queue a pass on the Yellow die alone (the player draws nothing from the bag: ``no_bag``)."""
    rng.push(DICE, (6, face("yellow", "S")))


def fail_dice(rng):
    rng.push(DICE, (6, face("yellow", "-")))


def no_bag(g, seat):
    g.strategies[seat].set_default("draw_die", False)


# ------------------------------------------------------------------ tokens
def test_no_tokens_no_intel_encounter_from_the_continent_deck():
    g, rng = table()
    card = two_sided_europe_card()
    put(g, 0, "Paris")
    stack_encounter(g, card)
    no_bag(g, 0)
    pass_dice(rng)
    s = g.strategies[0]
    encounter_phase(g, 0)
    assert not s.asked("token")  # nothing to choose
    assert side_used(g, 0, card) == K.NO_INTEL
    assert g.encounters[EUROPE].discard == [card]


def test_leaving_a_yellow_token_gives_the_no_intel_side():
    g, rng = table()
    card = two_sided_europe_card()
    put(g, 0, "Paris")
    t = put_intel(g, "Paris")
    stack_encounter(g, card)
    no_bag(g, 0)
    pass_dice(rng)
    s = g.strategies[0]
    s.push("token", lambda view, choices: choices.index(TokenChoice.NO_INTEL))
    encounter_phase(g, 0)
    assert s.asked("token")[0][0] == [TokenChoice.NO_INTEL, TokenChoice.POOL, TokenChoice.EXCHANGE]
    assert g.intel_loc[t] == sp("Paris")
    assert side_used(g, 0, card) == K.NO_INTEL


def test_pooling_a_yellow_token_gives_the_with_intel_side():
    g, rng = table()
    card = two_sided_europe_card()
    put(g, 0, "Paris")
    t = put_intel(g, "Paris")
    stack_encounter(g, card)
    no_bag(g, 0)
    pass_dice(rng)
    g.strategies[0].push("token", lambda view, choices: choices.index(TokenChoice.POOL))
    encounter_phase(g, 0)
    assert g.intel_loc[t] == POOL
    assert side_used(g, 0, card) == K.WITH_INTEL


def test_exchanging_a_yellow_token_places_a_green_token_on_the_fate_city():
    g, rng = table()
    c = g.content
    card = two_sided_europe_card()
    put(g, 0, "Paris")
    t = put_intel(g, "Paris")
    stack_encounter(g, card)
    fate = next(f for f in g.fate.pile if c.space_names[c.fate_city[f]] != "Paris")
    city = int(c.fate_city[fate])
    stack_fate(g, fate)
    no_bag(g, 0)
    pass_dice(rng)
    g.strategies[0].push("token", lambda view, choices: choices.index(TokenChoice.EXCHANGE))
    encounter_phase(g, 0)
    assert g.intel_loc[t] == SUPPLY
    assert len(g.green_on_board()) == 1 and g.green_loc[g.green_on_board()[0]] == city
    assert fate in g.fate.discard
    assert side_used(g, 0, card) == K.WITH_INTEL
    check_invariants(g)


def test_exchange_draws_a_random_green_token_from_the_supply():
    g, rng = table()
    put_intel(g, "Paris")
    put_green(g, "Darling", "Rome")
    put(g, 0, "Paris")
    rng.push(TOKENS, (3, 2))  # Mr. Big, Fedor, Pierre left
    exchange_intel(g, 0, g.yellow_on(sp("Paris"))[0])
    assert g.green_loc[3] >= 0  # Pierre placed
    assert g.green_loc[1] == SUPPLY and g.green_loc[2] == SUPPLY


def test_exchange_not_offered_with_an_empty_green_supply():
    g, _ = table()
    for h, city in enumerate(["Rome", "Lima", "Cairo", "Bombay"]):
        put_green(g, h, city)
    put(g, 0, "Paris")
    put_intel(g, "Paris")
    assert token_choices(g, 0) == [TokenChoice.NO_INTEL, TokenChoice.POOL]


def test_only_one_token_per_turn():
    g, rng = table()
    put(g, 0, "Paris")
    t1 = put_intel(g, "Paris")
    t2 = put_intel(g, "Paris")
    h = put_green(g, "Fedor", "Paris")
    assert token_choices(g, 0) == [
        TokenChoice.NO_INTEL, TokenChoice.HENCHMAN, TokenChoice.POOL, TokenChoice.EXCHANGE,
    ]
    no_bag(g, 0)
    pass_dice(rng)
    g.strategies[0].push("token", lambda view, choices: choices.index(TokenChoice.POOL))
    encounter_phase(g, 0)
    assert sorted([g.intel_loc[t1], g.intel_loc[t2]]) == sorted([POOL, sp("Paris")])
    assert g.green_loc[h] == sp("Paris")
    assert g.henchman_level[h] == 1


# ------------------------------------------------------------------ henchmen
def fedor_at_paris(level=1, seat=0):
    g, rng = table()
    put(g, seat, "Paris")
    h = put_green(g, "Fedor", "Paris")
    g.henchman_level[h] = level
    return g, rng, h


def test_henchman_pass_advances_location_and_levels_up():
    g, rng, h = fedor_at_paris()
    no_bag(g, 0)
    pass_dice(rng)
    g.strategies[0].push("token", lambda view, choices: choices.index(TokenChoice.HENCHMAN))
    encounter_phase(g, 0)
    assert g.location_track == 1
    assert g.henchman_level[h] == 2
    assert g.green_loc[h] == SUPPLY
    assert g.next_to_lobo == [] and g.stats.villain_drawn == 0
    assert g.stats.henchman_tests == 1 and g.stats.henchman_passed == 1
    assert all(d.discard == [] for d in g.encounters)  # no encounter card with a henchman


def test_henchman_test_uses_the_level_printed_option():
    g, rng, h = fedor_at_paris()
    c = g.content
    # Fedor level 1: Athletics +1 [1]; Calli's Athletics is 1 -> 2 dice allowed
    tests = []
    g.strategies[0].set_default("draw_die", lambda view, test, drawn: tests.append(test) or True)
    script_dice(rng, ["red", "blue"], ["-", "-"], "S")
    henchman_encounter(g, 0, h)
    assert tests[0].option == ch.TestOption(K.BASIC_SKILLS.index("athletics"), 1, 1)
    assert tests[0].dice_allowed == 2 and tests[0].henchman == h and tests[0].level == 1
    assert len(tests) == 2  # offered exactly the two allowed dice
    assert g.henchman_level[h] == 2
    assert int(c.henchman_option_skill[h, 0, 0]) == K.BASIC_SKILLS.index("athletics")


def test_henchman_fail_advances_the_villain_and_no_level_up():
    g, rng, h = fedor_at_paris()
    plus2 = villain_cards(g, advance=2)[0]
    stack_villain(g, plus2)
    no_bag(g, 0)
    fail_dice(rng)
    henchman_encounter(g, 0, h)
    assert g.location_track == 0
    assert g.henchman_level[h] == 1
    assert g.green_loc[h] == SUPPLY
    assert g.next_to_lobo == [plus2] and g.lobo == 2


def test_defeating_a_level_three_henchman_removes_his_token():
    g, rng, h = fedor_at_paris(level=3)
    s = g.strategies[0]
    # level 3: Athletics -1 [1] or Hand-to-hand +0 [2]; Calli Athletics 1 -> 0 dice: Yellow only
    rng.push(DICE, (6, 0))  # Yellow: S
    henchman_encounter(g, 0, h)
    assert [len(o) for (o,) in s.asked("test_option")] == [2]
    assert not s.asked("draw_die")
    assert g.henchman_level[h] == DEFEATED
    assert g.green_loc[h] == REMOVED
    assert g.location_track == 1
    check_invariants(g)


def test_all_four_henchmen_defeated_is_an_immediate_win():
    g, rng, h = fedor_at_paris(level=3)
    for other in range(4):
        if other != h:
            g.henchman_level[other] = DEFEATED
            g.green_loc[other] = REMOVED
    next_to_lobo(g, *villain_cards(g, advance=2)[:4])  # Dr. Lobo at 8 and an empty Pool: ignored
    rng.push(DICE, (6, 0))
    with pytest.raises(GameOver):
        henchman_encounter(g, 0, h)
    assert g.outcome == Outcome.WIN_HENCHMEN


def test_henchman_auto_pass_with_the_level_one_advanced_skill():
    g, rng, h = fedor_at_paris(seat=3)  # Nika has Speed, Fedor's level-1 auto-pass skill
    henchman_encounter(g, 3, h)
    assert rng.drawn(DICE) == []
    assert g.henchman_level[h] == 2 and g.location_track == 1
    # at level 2 the skill no longer helps: dice are drawn
    put_green(g, h, "Paris")
    no_bag(g, 3)
    fail_dice(rng)
    henchman_encounter(g, 3, h)
    assert rng.drawn(DICE)
    assert g.henchman_level[h] == 2


# ------------------------------------------------------------------ encounter decks
@pytest.mark.parametrize(
    "space, deck",
    [("Cairo", "africa"), ("Bombay", "asia"), ("Moscow", "asia"), ("Paris", "europe"),
     ("Chicago", "north_america"), ("Lima", "south_america"), ("North Atlantic", "ocean"),
     ("Japan", "asia"), ("Congo", "africa")],
)
def test_encounter_deck_by_continent_and_ocean(space, deck):
    g, _ = table()
    c = g.content
    put(g, 3, space)
    g.strategies[3].set_default("draw_die", False)
    g.strategies[3].set_default("cancel_advance", False)
    encounter_card(g, 3, K.NO_INTEL)
    d = K.DECKS.index(deck)
    assert len(g.encounters[d].discard) == 1
    assert int(c.encounter_deck[g.encounters[d].discard[0]]) == d
    assert sum(len(x.discard) for x in g.encounters) == 1


def test_encounter_auto_pass_advanced_skill():
    c = content()
    seduction = K.ADVANCED_SKILLS.index("seduction")
    card = card_where(lambda c, x: c.encounter_autopass[x, 0] == seduction and c.encounter_reward[x, 0] != K.E_NONE)
    g, rng = table()
    put(g, 0, c.space_names[[s for s in range(c.n_spaces) if c.space_deck[s] == c.encounter_deck[card]][0]])
    stack_encounter(g, card)
    encounter_card(g, 0, K.NO_INTEL)  # Calli has Seduction
    assert rng.drawn(DICE) == [] and not g.strategies[0].asked("test_option")
    assert g.stats.tests_passed == 1 and g.stats.tests_attempted == 1


def test_gamble_option_offered_and_played():
    card = card_where(lambda c, x: c.encounter_gamble[x, 0] and c.encounter_autopass[x, 0] < 0)
    c = content()
    g, rng = table()
    put(g, 0, c.space_names[[s for s in range(c.n_spaces) if c.space_deck[s] == c.encounter_deck[card]][0]])
    stack_encounter(g, card)
    s = g.strategies[0]
    s.push("test_option", lambda view, options: [o.gamble for o in options].index(True))
    stack_villain(g, villain_cards(g, advance=1)[0])
    rng.policies[GAMBLE] = lambda n: 0  # any hands: win or lose, a gamble is played
    encounter_card(g, 0, K.NO_INTEL)
    offered = s.asked("test_option")[0][0]
    assert offered[-1] == ch.TestOption(gamble=True)
    assert g.stats.gambles_played == 1
    assert len(rng.drawn(GAMBLE)) == 10
    assert rng.drawn(DICE) == []


def test_failed_encounter_advances_villain_and_applies_penalty():
    card = card_where(
        lambda c, x: c.encounter_penalty[x, 0] == K.E_INJURIES and not c.encounter_no_advance[x, 0]
        and plain(c, x, 0) and c.encounter_deck[x] == EUROPE
    )
    g, rng = table()
    put(g, 0, "Paris")
    stack_encounter(g, card)
    plus1 = villain_cards(g, advance=1)[0]
    stack_villain(g, plus1)
    no_bag(g, 0)
    fail_dice(rng)
    encounter_card(g, 0, K.NO_INTEL)
    assert g.next_to_lobo == [plus1]
    assert g.players[0].injuries == int(g.content.encounter_penalty_amount[card, 0])


def test_do_not_advance_villain_on_fail():
    card = card_where(
        lambda c, x: c.encounter_no_advance[x, 0] and plain(c, x, 0) and c.encounter_penalty[x, 0] == K.E_INJURIES
    )
    c = content()
    g, rng = table()
    put(g, 0, c.space_names[[s for s in range(c.n_spaces) if c.space_deck[s] == c.encounter_deck[card]][0]])
    stack_encounter(g, card)
    no_bag(g, 0)
    fail_dice(rng)
    encounter_card(g, 0, K.NO_INTEL)
    assert g.stats.villain_drawn == 0 and g.next_to_lobo == []
    assert g.players[0].injuries == int(c.encounter_penalty_amount[card, 0])


def test_passed_encounter_gives_the_reward_and_no_advance():
    card = card_where(
        lambda c, x: c.encounter_deck[x] == EUROPE and plain(c, x, 0) and c.encounter_reward[x, 0] == K.E_UN_TRANSPORT
    )
    g, rng = table()
    put(g, 0, "Paris")
    stack_encounter(g, card)
    no_bag(g, 0)
    pass_dice(rng)
    encounter_card(g, 0, K.NO_INTEL)
    assert g.players[0].un_tokens == 1
    assert g.stats.villain_drawn == 0


def test_a_test_can_be_failed_with_tokens_ignored_then_taken_next_turn():
    """FAQ 3: tokens may be ignored; the other token stays for a later turn."""
    g, rng = table()
    put(g, 0, "Paris")
    put_green(g, "Fedor", "Paris")
    no_bag(g, 0)
    pass_dice(rng)
    encounter_phase(g, 0)  # default answer: NO_INTEL
    assert g.green_loc[2] == sp("Paris")


# ------------------------------------------------------------------ Appendix effects
def effect_table():
    g, rng = table()
    return g, rng, g.players[0]


def test_effect_gain_intel_from_supply_to_pool():
    g, _, _ = effect_table()
    apply_effect(g, 0, K.E_GAIN_INTEL, 2, -1)
    assert len(g.intel_in(POOL)) == 2
    # FAQ 1: with an empty supply, out of luck
    for t in range(len(g.intel_loc)):
        if g.intel_loc[t] == SUPPLY:
            g.intel_loc[t] = sp("Lima")
    apply_effect(g, 0, K.E_GAIN_INTEL, 1, -1)
    assert len(g.intel_in(POOL)) == 2


def test_effect_top_secret():
    g, _, p = effect_table()
    apply_effect(g, 0, K.E_TOP_SECRET, 1, -1)
    assert len(p.top_secret) == 1


def test_effect_gain_resolve_capped_at_max():
    g, _, p = effect_table()
    p.resolve = p.resolve_max - 1
    apply_effect(g, 0, K.E_GAIN_RESOLVE, 2, -1)
    assert p.resolve == p.resolve_max


def test_effect_up_any_skill_player_chooses_and_skills_at_five_excluded():
    g, _, p = effect_table()
    p.skills = [5, 2, 5, 1, 1]
    s = g.strategies[0]
    s.push("skill_up", 2)  # options [1, 3, 4] -> Hand-to-hand
    apply_effect(g, 0, K.E_UP_ANY_SKILL, 1, -1)
    assert s.asked("skill_up") == [([1, 3, 4],)]
    assert p.skills == [5, 2, 5, 1, 2]


def test_effect_up_named_skill_capped_at_five():
    g, _, p = effect_table()
    p.skills = [2, 5, 2, 1, 1]
    apply_effect(g, 0, K.E_UP_SKILL, 1, 0)
    apply_effect(g, 0, K.E_UP_SKILL, 1, 1)
    assert p.skills == [3, 5, 2, 1, 1]


def test_effect_un_transport():
    g, _, p = effect_table()
    apply_effect(g, 0, K.E_UN_TRANSPORT, 1, -1)
    assert p.un_tokens == 1
    g.un_supply, p.un_tokens = 0, p.un_tokens + g.un_supply  # supply empty: nothing
    before = p.un_tokens
    apply_effect(g, 0, K.E_UN_TRANSPORT, 1, -1)
    assert p.un_tokens == before


def test_effect_advanced_skill_of_choice():
    g, _, p = effect_table()
    s = g.strategies[0]
    s.push("advanced_skill", 0)
    apply_effect(g, 0, K.E_ADVANCED_SKILL, 1, -1)
    offered = s.asked("advanced_skill")[0][0]
    assert K.ADVANCED_SKILLS.index("seduction") not in offered  # Calli already has it
    assert p.advanced[offered[0]]


def test_effect_named_advanced_skill():
    g, _, p = effect_table()
    apply_effect(g, 0, K.E_NAMED_ADVANCED_SKILL, 1, K.GAMBLING_LUCK)
    assert p.advanced[K.GAMBLING_LUCK]


def test_effect_v_minus_1():
    g, rng, _ = effect_table()
    a, b = villain_cards(g, advance=2)[:2]
    next_to_lobo(g, a, b)
    rng.push(VILLAIN, (2, 0))
    apply_effect(g, 0, K.E_V_MINUS_1, 1, -1)
    assert g.lobo == 2 and len(g.next_to_lobo) == 1
    assert sorted([a, b])[0] in g.villain.discard


def test_effect_lose_intel_from_pool_back_to_the_supply():
    g, _, _ = effect_table()
    supply = len(g.intel_in(SUPPLY))
    pool(g, "weapon", "tech", "atomic")
    apply_effect(g, 0, K.E_LOSE_INTEL, 2, -1)
    assert len(g.intel_in(POOL)) == 1 and len(g.intel_in(SUPPLY)) == supply - 1
    apply_effect(g, 0, K.E_LOSE_INTEL, 2, -1)  # only one left: lose what is there
    assert len(g.intel_in(POOL)) == 0 and len(g.intel_in(SUPPLY)) == supply
    assert not g.intel_in(REMOVED)


def test_effect_injuries():
    g, _, p = effect_table()
    apply_effect(g, 0, K.E_INJURIES, 2, -1)
    assert p.injuries == 2


def test_effect_lower_skill_floor_zero():
    g, _, p = effect_table()
    p.skills = [0, 2, 2, 1, 1]
    apply_effect(g, 0, K.E_LOWER_SKILL, 1, 0)
    apply_effect(g, 0, K.E_LOWER_SKILL, 1, 1)
    assert p.skills == [0, 1, 2, 1, 1]


def test_effect_none_changes_nothing():
    g, _, p = effect_table()
    before = (list(p.skills), p.resolve, p.injuries, list(g.intel_loc))
    apply_effect(g, 0, K.E_NONE, 0, -1)
    assert (list(p.skills), p.resolve, p.injuries, list(g.intel_loc)) == before


def test_every_effect_code_is_handled():
    g, _, _ = effect_table()
    give_top_secret(g, 1, K.TS_AUTO_PASS)  # keep the deck non-trivial
    for effect in range(len(K.EFFECTS)):
        apply_effect(g, 0, effect, 1, 0)
    check_invariants(g)
