"""Henchman passes (Field Manual 2.3), henchman tests inside encounter cards (FAQ 6 and 8),
villain cards that remove Intel, and where lost Intel goes.
"""

import pytest

from sim.content import ContentError
from sim.content import constants as K
from sim.rng import TOKENS
from sim.rules.encounters import (
    apply_effect,
    encounter_card,
    henchman_encounter,
    reshuffle_locations,
)
from sim.rules.errors import GameOver
from sim.rules.invariants import check_invariants
from sim.rules.state import DEFEATED, POOL, REMOVED, SUPPLY, Outcome
from tests.rules_helpers import (
    DICE,
    clear_table,
    content,
    content_with,
    face,
    install_rng,
    new_game,
    pool,
    put,
    put_green,
    put_intel,
    sp,
    stack_encounter,
    stack_villain,
    villain_cards,
)

EUROPE_CARD = "europe-01"


def _card_index(c, cid):
    return c.encounter_ids.index(cid)


def henchman_pack(henchman="Fedor", **side):
    """The default pack with europe-01's No Intel side testing ``henchman``."""
    def patch(raw):
        card = next(x for x in raw["encounters.toml"]["card"] if x["id"] == EUROPE_CARD)
        card["no_intel"].update(
            henchman=henchman, autopass=None, reward={"effect": "gain_resolve", "amount": 1},
            penalty={"effect": "injuries", "amount": 1}, no_advance=False,
            options=[{"skill": "spycraft", "modifier": 5, "successes": 1}],
        )
        card["no_intel"] = {k: v for k, v in card["no_intel"].items() if v is not None}
        card["no_intel"].update(side)
    return content_with(patch)


def table(cont=None, players=4):
    g = clear_table(new_game(players, cont=cont))
    rng = install_rng(g)
    g.strategies[0].set_default("draw_die", False)  # the Yellow die alone
    return g, rng


def yellow(rng, code):
    rng.push(DICE, (6, face("yellow", code)))


# ------------------------------------------------------------------ 2.3: order on a pass
def test_a_pass_moves_the_location_track_before_the_henchman_is_defeated():
    """The last Location pass on the last henchman ends on the Location Track, not the henchmen."""
    g, rng = table()
    put(g, 0, "Paris")
    h = put_green(g, "Fedor", "Paris")
    for o in range(4):
        g.henchman_level[o] = 3 if o == h else DEFEATED
        g.green_loc[o] = sp("Paris") if o == h else REMOVED
    g.location_track = g.location_target - 1  # and an empty Pool: the Location end is a loss
    yellow(rng, "S")
    with pytest.raises(GameOver):
        henchman_encounter(g, 0, h)
    assert g.outcome == Outcome.LOSS_INTEL
    assert g.henchman_level[h] == 3  # the game ended before he was defeated


def test_a_pass_below_the_target_still_defeats_and_wins_by_henchmen():
    g, rng = table()
    put(g, 0, "Paris")
    h = put_green(g, "Fedor", "Paris")
    for o in range(4):
        g.henchman_level[o] = 3 if o == h else DEFEATED
        g.green_loc[o] = sp("Paris") if o == h else REMOVED
    g.location_track = g.location_target - 2
    yellow(rng, "S")
    with pytest.raises(GameOver):
        henchman_encounter(g, 0, h)
    assert g.location_track == g.location_target - 1
    assert g.outcome == Outcome.WIN_HENCHMEN and g.green_loc[h] == REMOVED


# ------------------------------------------------------------------ FAQ 6: tests inside encounters
def test_an_encounter_henchman_pass_levels_up_without_moving_the_track():
    c = henchman_pack()
    g, rng = table(c)
    h = c.henchman_index("Fedor")
    card = _card_index(c, EUROPE_CARD)
    put(g, 0, "Paris")
    stack_encounter(g, card)
    p = g.players[0]
    p.resolve = 0
    yellow(rng, "S")
    encounter_card(g, 0, K.NO_INTEL)
    # his level-1 test (Athletics +1), not the side's own Spycraft +5
    offered = g.strategies[0].asked("draw_die")
    assert offered and offered[0][0].henchman == h and offered[0][0].level == 1
    assert g.henchman_level[h] == 2 and g.location_track == 0
    assert p.resolve == 1  # the side's reward
    assert g.stats.card_henchman_tests == 1 and g.stats.card_henchman_passed == 1
    assert g.stats.henchman_tests == 0


def test_an_encounter_henchman_fail_advances_the_villain_then_the_penalty():
    c = henchman_pack()
    g, rng = table(c)
    h = c.henchman_index("Fedor")
    plus2 = villain_cards(g, advance=2)[0]
    stack_villain(g, plus2)
    put(g, 0, "Paris")
    stack_encounter(g, _card_index(c, EUROPE_CARD))
    yellow(rng, "-")
    encounter_card(g, 0, K.NO_INTEL)
    assert g.henchman_level[h] == 1 and g.lobo == 2
    assert g.players[0].injuries == 1
    assert g.stats.card_henchman_passed == 0


def test_the_henchman_auto_pass_skill_passes_an_encounter_henchman_test():
    c = henchman_pack()
    g, _ = table(c)
    h = c.henchman_index("Fedor")
    g.players[0].advanced[K.ADVANCED_SKILLS.index("speed")] = True  # Fedor's level-1 auto-pass
    put(g, 0, "Paris")
    stack_encounter(g, _card_index(c, EUROPE_CARD))
    encounter_card(g, 0, K.NO_INTEL)
    assert g.henchman_level[h] == 2


def test_once_the_henchman_is_defeated_the_side_plays_its_own_options():
    c = henchman_pack()
    g, rng = table(c)
    h = c.henchman_index("Fedor")
    g.henchman_level[h] = DEFEATED
    g.green_loc[h] = REMOVED
    put(g, 0, "Paris")
    stack_encounter(g, _card_index(c, EUROPE_CARD))
    tests = []
    g.strategies[0].set_default("draw_die", lambda view, test, drawn: tests.append(test) and False)
    yellow(rng, "S")
    encounter_card(g, 0, K.NO_INTEL)
    assert tests and tests[0].option.skill == K.BASIC_SKILLS.index("spycraft") and tests[0].henchman == -1
    assert g.stats.card_henchman_tests == 0


# ------------------------------------------------------------------ FAQ 8: a level-3 defeat
def test_faq8_defeat_deals_the_other_location_tokens_anew_and_removes_his():
    c = henchman_pack()
    g, rng = table(c)
    h = c.henchman_index("Fedor")
    g.henchman_level[h] = 3
    darling, big, pierre = (c.henchman_index(n) for n in ("Darling", "Mr. Big", "Pierre"))
    put_green(g, "Fedor", "Rome")
    put_green(g, "Darling", "Cairo")
    put_green(g, "Mr. Big", "Peking")
    put_green(g, "Pierre", "Lima")
    put(g, 0, "Paris")
    stack_encounter(g, _card_index(c, EUROPE_CARD))
    yellow(rng, "S")
    # deal: Cairo gets tokens[2] (Pierre), then Tokyo gets tokens[0] (Darling), Lima the last
    rng.push(TOKENS, (3, 2), (2, 0))
    encounter_card(g, 0, K.NO_INTEL)
    assert g.henchman_level[h] == DEFEATED and g.green_loc[h] == REMOVED
    assert g.green_loc[pierre] == sp("Cairo")
    assert g.green_loc[darling] == sp("Peking")
    assert g.green_loc[big] == sp("Lima")
    assert g.location_track == 0
    check_invariants(g)


def test_faq8_with_the_defeated_henchman_off_the_board_keeps_every_place():
    g, rng = table()
    c = g.content
    h = c.henchman_index("Fedor")
    darling, big = c.henchman_index("Darling"), c.henchman_index("Mr. Big")
    put_green(g, "Darling", "Cairo")
    put_green(g, "Mr. Big", "Peking")
    rng.push(TOKENS, (2, 1))  # Cairo gets Mr. Big; Darling goes to Tokyo
    reshuffle_locations(g, h)
    assert g.green_loc[h] == REMOVED
    assert g.green_loc[big] == sp("Cairo") and g.green_loc[darling] == sp("Peking")


def test_defeating_the_last_henchman_inside_an_encounter_wins():
    c = henchman_pack()
    g, rng = table(c)
    h = c.henchman_index("Fedor")
    for o in range(4):
        g.henchman_level[o] = 3 if o == h else DEFEATED
        g.green_loc[o] = SUPPLY if o == h else REMOVED
    put(g, 0, "Paris")
    stack_encounter(g, _card_index(c, EUROPE_CARD))
    g.players[0].resolve = 0
    yellow(rng, "S")
    with pytest.raises(GameOver):
        encounter_card(g, 0, K.NO_INTEL)
    assert g.outcome == Outcome.WIN_HENCHMEN
    assert g.players[0].resolve == 0  # the game ended before the reward


def test_an_unknown_henchman_is_refused_naming_the_card():
    with pytest.raises(ContentError, match=r"encounters\.toml.*europe-01.*no_intel\.henchman names unknown henchman 'Blofeld'"):
        henchman_pack("Blofeld")


def test_the_default_pack_tests_a_henchman_on_a_few_sides_of_every_deck():
    c = content()
    sides = (c.encounter_henchman >= 0)
    assert 0 < sides.sum() <= 0.1 * sides.size
    for d in range(len(K.DECKS)):
        assert sides[c.encounter_deck == d].any()
    assert sorted(set(c.encounter_henchman[sides].tolist())) == list(range(4))


# ------------------------------------------------------------------ villain cards that remove Intel
def test_most_villain_cards_remove_intel():
    c = content()
    removing = int((c.villain_remove_region >= 0).sum())
    assert removing >= 18 and removing > c.n_villain / 2


# ------------------------------------------------------------------ lost Intel
def test_lost_intel_goes_back_to_the_supply_by_default():
    g, _ = table()
    pool(g, "weapon", "tech")
    apply_effect(g, 0, K.E_LOSE_INTEL, 2, -1)
    assert not g.intel_in(POOL) and not g.intel_in(REMOVED)


def test_lost_intel_leaves_the_game_with_the_removed_reading():
    c = content_with(lambda raw: raw["encounters.toml"]["readings"].update(lost_intel="removed"))
    g, _ = table(c)
    supply = len(g.intel_in(SUPPLY))
    pool(g, "weapon", "tech")
    apply_effect(g, 0, K.E_LOSE_INTEL, 2, -1)
    assert len(g.intel_in(REMOVED)) == 2 and len(g.intel_in(SUPPLY)) == supply - 2


def test_an_unknown_lost_intel_reading_is_refused():
    with pytest.raises(ContentError, match=r"encounters\.toml.*lost_intel.*'gone'"):
        content_with(lambda raw: raw["encounters.toml"]["readings"].update(lost_intel="gone"))


# ------------------------------------------------------------------ henchman cards' consequences
def test_a_location_pass_gives_the_henchman_cards_reward_after_the_level_up():
    g, rng = table()
    c = g.content
    put(g, 0, "Paris")
    h = put_green(g, "Fedor", "Paris")
    assert c.henchman_reward[h, 0] == K.E_GAIN_RESOLVE  # the default pack's (assumed) pass consequence
    g.players[0].resolve = 0
    yellow(rng, "S")
    henchman_encounter(g, 0, h)
    assert g.henchman_level[h] == 2 and g.players[0].resolve == int(c.henchman_reward_amount[h, 0])


def test_a_location_fail_gives_the_villain_advancement_then_the_henchman_cards_penalty():
    g, rng = table()
    c = g.content
    put(g, 0, "Paris")
    h = put_green(g, "Fedor", "Paris")
    plus2 = villain_cards(g, advance=2)[0]
    stack_villain(g, plus2)
    yellow(rng, "-")
    henchman_encounter(g, 0, h)
    assert g.lobo == 2 and g.players[0].injuries == int(c.henchman_penalty_amount[h, 0])


def consequence_pack(level_reward, level_penalty, in_encounters):
    def patch(raw):
        for hm in raw["henchmen.toml"]["henchman"]:
            for lv in hm["level"]:
                lv["reward"], lv["penalty"] = dict(level_reward), dict(level_penalty)
        raw["henchmen.toml"]["readings"]["consequences_in_encounters"] = in_encounters
        card = next(x for x in raw["encounters.toml"]["card"] if x["id"] == EUROPE_CARD)
        card["no_intel"].update(henchman="Fedor", reward={"effect": "gain_resolve", "amount": 1},
                                penalty={"effect": "injuries", "amount": 1}, no_advance=True)
        card["no_intel"].pop("autopass", None)
    return content_with(patch)


@pytest.mark.parametrize("in_encounters", [False, True])
def test_an_encounter_henchman_test_applies_his_card_only_with_the_reading(in_encounters):
    c = consequence_pack({"effect": "top_secret"}, {"effect": "lower_skill", "skill": "athletics"}, in_encounters)
    for code, want in (("S", "pass"), ("-", "fail")):
        g, rng = table(c)
        p = g.players[0]
        p.resolve, hand, athletics = 0, len(p.top_secret), p.skills[K.BASIC_SKILLS.index("athletics")]
        put(g, 0, "Paris")
        stack_encounter(g, _card_index(c, EUROPE_CARD))
        yellow(rng, code)
        encounter_card(g, 0, K.NO_INTEL)
        if want == "pass":
            assert p.resolve == 1  # the card's reward always
            assert len(p.top_secret) == hand + int(in_encounters)
        else:
            assert p.injuries == 1  # the card's penalty always
            assert p.skills[K.BASIC_SKILLS.index("athletics")] == athletics - int(in_encounters)


def test_a_henchman_level_with_a_penalty_as_reward_is_refused():
    def patch(raw):
        raw["henchmen.toml"]["henchman"][0]["level"][0]["reward"] = {"effect": "injuries", "amount": 1}
    with pytest.raises(ContentError, match=r"henchmen\.toml.*Darling.*is a penalty, not a reward"):
        content_with(patch)


# ------------------------------------------------------------------ Flip Up Intel
def test_flip_up_in_the_pool_flips_random_face_down_tokens_there_only():
    g, rng = table()
    w, t = pool(g, "weapon", "tech")
    rng.push(TOKENS, (2, 1))  # the second face-down Pool token by id
    apply_effect(g, 0, K.E_FLIP_POOL, 2, -1)  # the second flip takes the last one
    assert g.intel_face_up[w] and g.intel_face_up[t]
    assert sum(g.intel_face_up) == 2  # nothing flipped outside the Pool
    apply_effect(g, 0, K.E_FLIP_POOL, 1, -1)  # none face down left: nothing happens
    assert sum(g.intel_face_up) == 2


@pytest.mark.parametrize("reading, first", [("pool", "pool"), ("board", "board")])
def test_flip_up_anywhere_follows_the_reading(reading, first):
    c = content_with(lambda raw: raw["encounters.toml"]["readings"].update(flip_anywhere=reading))
    g, rng = table(c)
    (in_pool,) = pool(g, "atomic")
    on_map = put_intel(g, "Paris", "weapon")
    apply_effect(g, 0, K.E_FLIP_ANYWHERE, 1, -1)
    assert g.intel_face_up[in_pool if first == "pool" else on_map]
    apply_effect(g, 0, K.E_FLIP_ANYWHERE, 1, -1)
    assert g.intel_face_up[in_pool] and g.intel_face_up[on_map]
    apply_effect(g, 0, K.E_FLIP_ANYWHERE, 1, -1)  # then the supply
    assert sum(g.intel_face_up) == 3 and any(
        up and loc == SUPPLY for loc, up in zip(g.intel_loc, g.intel_face_up))


def test_a_face_up_token_stays_face_up_in_the_supply_and_the_view_shows_only_face_up_ones():
    g, rng = table()
    w, t = pool(g, "weapon", "tech")
    rng.push(TOKENS, (2, 0))
    apply_effect(g, 0, K.E_FLIP_POOL, 1, -1)
    assert g.intel_face_up[w] and not g.intel_face_up[t]
    view = g.view(1)
    assert view.face_up_intel() == [(POOL, K.INTEL_TYPES.index("weapon"))]
    assert view.pool_face_up() == [1, 0, 0, 0] and view.pool_size == 2
    g.intel_loc[w] = SUPPLY  # e.g. lost from the Pool: back to the supply, still face up
    assert g.intel_face_up[w]
    assert view.face_up_intel() == [(SUPPLY, K.INTEL_TYPES.index("weapon"))]
    assert view.pool_face_up() == [0, 0, 0, 0]


def test_an_unknown_flip_reading_is_refused():
    with pytest.raises(ContentError, match=r"encounters\.toml.*flip_anywhere.*'map'"):
        content_with(lambda raw: raw["encounters.toml"]["readings"].update(flip_anywhere="map"))
