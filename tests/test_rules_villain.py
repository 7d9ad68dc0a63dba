"""Dr. Lobo and the villain deck: End of Turn events, Intel overflow, advancement, V-1, reshuffle.

Field manual "3 Villain phase", "Intel Overflow", "Villain Advancement", FAQ 1 and 4,
Appendix "V-1"; MODEL.md A.3 and 'Villain track'.
"""

import pytest

from sim.content import constants as K
from sim.rng import TOKENS
from sim.rules.errors import GameOver
from sim.rules.invariants import check_invariants
from sim.rules.state import POOL, SUPPLY, Outcome
from sim.rules.villain import (
    end_of_turn_event,
    in_region,
    intel_overflow,
    v_minus_1,
    villain_advancement,
    villain_phase,
)
from tests.rules_helpers import (
    VILLAIN,
    clear_table,
    content,
    give_top_secret,
    install_rng,
    new_game,
    next_to_lobo,
    put_green,
    put_intel,
    sp,
    stack_villain,
    villain_cards,
)


def table(players=4):
    g = clear_table(new_game(players))
    rng = install_rng(g)
    return g, rng


def region_code(name):
    return K.REGIONS.index(name)


def card_where(pred):
    c = content()
    for x in range(c.n_villain):
        if pred(c, x):
            return x
    raise AssertionError("no villain card matches")


def adds(c, x):
    return [int(s) for s in c.villain_add_intel[x] if s >= 0]


def quiet_card(c, x, n_add=1):
    """No region removal, ``n_add`` Intel added, a city airport that is not red."""
    return (
        c.villain_remove_region[x] < 0
        and len(adds(c, x)) == n_add
        and not c.villain_injury[x]
    )


def on_board_names(g):
    return sorted(g.content.space_names[g.intel_loc[t]] for t in g.yellow_on_board())


# ------------------------------------------------------------------ End of Turn events
def test_end_of_turn_removes_then_adds_then_closes():
    c = content()
    card = card_where(
        lambda c, x: c.villain_remove_region[x] >= 0
        and any(in_region_static(c, s, int(c.villain_remove_region[x])) for s in adds(c, x))
        and c.villain_close_city[x] >= 0 and not c.space_red_airport[c.villain_close_city[x]]
    )
    g, _ = table()
    region = int(c.villain_remove_region[card])
    inside = [s for s in range(c.n_spaces) if c.space_kind[s] == K.CITY and in_region(g, s, region)]
    outside = next(s for s in range(c.n_spaces) if c.space_kind[s] == K.CITY and not in_region(g, s, region))
    for s in inside[:3]:
        put_intel(g, s)
    put_intel(g, outside)
    added = adds(c, card)
    assert any(s in inside for s in added)
    g.villain.pile.remove(card)
    end_of_turn_event(g, card)
    # the old Intel of the region is removed first, then the new Intel is added (and stays)
    assert sorted(g.intel_loc[t] for t in g.yellow_on_board()) == sorted([outside] + added)
    assert g.airport_closed[int(c.villain_close_city[card])]
    assert g.villain.discard == [card]


def in_region_static(c, space, region):
    if c.space_kind[space] == K.OCEAN:
        return False
    if region == K.USSR_REGION:
        return bool(c.space_ussr[space])
    return int(c.space_deck[space]) == region


def test_remove_asia_also_clears_ussr_cities():
    c = content()
    card = card_where(lambda c, x: c.villain_remove_region[x] == region_code("asia"))
    g, _ = table()
    for city in ("Moscow", "Bombay", "Athens"):
        put_intel(g, city)
    g.villain.pile.remove(card)
    end_of_turn_event(g, card)
    assert on_board_names(g) == sorted(["Athens"] + [c.space_names[s] for s in adds(c, card)])
    assert not {"Moscow", "Bombay"} & {c.space_names[s] for s in adds(c, card)}
    assert c.space_ussr[sp("Moscow")] and c.space_deck[sp("Moscow")] == K.DECKS.index("asia")


def test_remove_ussr_leaves_the_rest_of_asia():
    card = card_where(lambda c, x: c.villain_remove_region[x] == region_code("ussr"))
    g, _ = table()
    c = g.content
    for city in ("Leningrad", "Bombay"):
        put_intel(g, city)
    g.villain.pile.remove(card)
    end_of_turn_event(g, card)
    assert on_board_names(g) == sorted(["Bombay"] + [c.space_names[s] for s in adds(c, card)])
    assert "Leningrad" not in {c.space_names[s] for s in adds(c, card)}


def test_every_ussr_city_is_in_asia():
    c = content()
    ussr = [s for s in range(c.n_spaces) if c.space_ussr[s] and c.space_kind[s] == K.CITY]
    assert len(ussr) >= 5
    assert all(in_region_static(c, s, region_code("asia")) for s in ussr)


def test_add_intel_takes_from_the_pool_when_the_supply_is_empty():
    card = card_where(lambda c, x: quiet_card(c, x, 1))
    g, rng = table()
    c = g.content
    for t in range(len(g.intel_loc)):
        g.intel_loc[t] = POOL
    rng.push(TOKENS, (20, 7))
    g.villain.pile.remove(card)
    end_of_turn_event(g, card)
    assert g.intel_loc[7] == adds(c, card)[0]
    assert len(g.intel_in(POOL)) == 19


def test_add_intel_from_the_supply_first():
    card = card_where(lambda c, x: quiet_card(c, x, 2))
    g, _ = table()
    pool_tokens = [put_intel(g, 0, where=POOL) for _ in range(3)]
    g.villain.pile.remove(card)
    end_of_turn_event(g, card)
    assert all(g.intel_loc[t] == POOL for t in pool_tokens)
    assert len(g.yellow_on_board()) == 2


def test_closing_uses_up_close_airport_tokens():
    card = card_where(
        lambda c, x: c.villain_close_city[x] >= 0 and not c.space_red_airport[c.villain_close_city[x]]
    )
    g, _ = table()
    g.close_tokens_left = 0
    g.villain.pile.remove(card)
    end_of_turn_event(g, card)
    assert not any(g.airport_closed)


# ------------------------------------------------------------------ Intel overflow
def fill(g, n, cities=("Paris", "Rome", "Vienna", "Athens", "Berlin", "Stockholm", "Madrid")):
    return [put_intel(g, cities[i]) for i in range(n)]


@pytest.mark.parametrize(
    "players, before, overflow",
    [(4, 4, True), (4, 3, False), (3, 4, False), (3, 5, True), (1, 4, False), (1, 5, True),
     (2, 5, True), (5, 4, True), (6, 3, False)],
)
def test_overflow_limit_by_player_count(players, before, overflow):
    """4+ players: 5 tokens overflow; 1-3 players: 5 do not, 6 do (one card adds one)."""
    g, _ = table(players)
    c = g.content
    card = card_where(lambda c, x: quiet_card(c, x, 1) and c.space_deck[adds(c, x)[0]] != K.DECKS.index("europe"))
    if card not in g.villain.pile:
        g.villain.pile.append(card)
        g.villain_removed.remove(card)
    fill(g, before)
    stack_villain(g, card)
    villain_phase(g, 1)
    if overflow:
        assert g.yellow_on_board() == [] and g.stats.overflows == 1
        assert len(g.intel_in(SUPPLY)) == c.n_intel
    else:
        assert len(g.yellow_on_board()) == before + 1 and g.stats.overflows == 0


def test_overflow_is_checked_after_all_end_of_turn_events():
    """After a rest: the first card goes over the limit, the second removes Europe: no overflow."""
    g, _ = table(4)
    c = g.content
    europe = region_code("europe")
    first = card_where(
        lambda c, x: quiet_card(c, x, 1) and c.space_deck[adds(c, x)[0]] == europe
    )
    second = card_where(
        lambda c, x: c.villain_remove_region[x] == europe and not c.villain_injury[x]
        and all(c.space_deck[s] != europe for s in adds(c, x))
    )
    fill(g, 4)  # four European cities
    stack_villain(g, first, second)
    villain_phase(g, 2)
    assert g.stats.overflows == 0
    assert on_board_names(g) == sorted(c.space_names[s] for s in adds(c, second))
    # the same first card alone does overflow
    g, _ = table(4)
    fill(g, 4)
    stack_villain(g, first)
    villain_phase(g, 1)
    assert g.stats.overflows == 1


def test_overflow_leaves_at_most_one_green_token():
    g, rng = table(4)
    fill(g, 5)
    for h, city in zip((0, 2, 3), ("Lima", "Cairo", "Bombay")):
        put_green(g, h, city)
    rng.push(TOKENS, (3, 1))  # keep the second of the three green tokens (henchman 2)
    intel_overflow(g)
    assert g.yellow_on_board() == []
    assert g.green_on_board() == [2] and g.green_loc[2] == sp("Cairo")
    assert g.green_loc[0] == SUPPLY and g.green_loc[3] == SUPPLY
    check_invariants(g)


def test_overflow_keeps_a_single_green_token():
    g, rng = table(4)
    fill(g, 5)
    put_green(g, 1, "Lima")
    intel_overflow(g)
    assert g.green_loc[1] == sp("Lima")
    assert rng.drawn(TOKENS) == []


def test_no_overflow_at_the_limit():
    g, _ = table(4)
    fill(g, 4)
    put_green(g, 1, "Lima")
    put_green(g, 2, "Cairo")
    intel_overflow(g)
    assert len(g.yellow_on_board()) == 4 and len(g.green_on_board()) == 2


# ------------------------------------------------------------------ villain advancement
def test_end_of_turn_cards_do_not_move_the_track():
    g, _ = table()
    plus2 = villain_cards(g, advance=2)[0]
    stack_villain(g, plus2)
    villain_phase(g, 1)
    assert g.lobo == 0 and g.next_to_lobo == [] and g.villain.discard == [plus2]


@pytest.mark.parametrize("advance", [2, 1, -1])
def test_advancement_card_lies_next_to_lobo(advance):
    g, _ = table()
    card = villain_cards(g, advance=advance)[0]
    stack_villain(g, card)
    villain_advancement(g)
    assert g.next_to_lobo == [card]
    assert g.lobo == advance  # -1 takes the track below zero
    assert card not in g.villain.discard


def test_injury_card_injures_the_active_player_and_leaves_the_track():
    g, _ = table()
    g.active = 2
    card = villain_cards(g, injury=True)[0]
    stack_villain(g, card)
    villain_advancement(g)
    assert g.players[2].injuries == 1 and g.players[0].injuries == 0
    assert g.lobo == 0 and g.next_to_lobo == []
    assert g.villain.discard == [card]


def test_lobo_at_nine_loses_at_once():
    g, _ = table()
    twos = villain_cards(g, advance=2)
    ones = villain_cards(g, advance=1)
    next_to_lobo(g, *twos[:3], ones[0])  # 7
    stack_villain(g, twos[3])
    with pytest.raises(GameOver):
        villain_advancement(g)
    assert g.lobo == 9 and g.outcome == Outcome.LOSS_LOBO


def test_lobo_at_eight_plays_on():
    g, _ = table()
    twos = villain_cards(g, advance=2)
    next_to_lobo(g, *twos[:3])  # 6
    stack_villain(g, twos[3])
    villain_advancement(g)
    assert g.lobo == 8 and g.outcome is None


def v1_table():
    g, rng = table()
    two, one, minus = villain_cards(g, advance=2)[0], villain_cards(g, advance=1)[0], villain_cards(g, advance=-1)[0]
    next_to_lobo(g, two, one, minus)
    assert g.lobo == 2
    return g, rng, two, one, minus


@pytest.mark.parametrize("which, lobo", [("two", 0), ("one", 1), ("minus", 3)])
def test_v_minus_1_discards_a_random_card_and_recomputes_the_track(which, lobo):
    g, rng, two, one, minus = v1_table()
    card = {"two": two, "one": one, "minus": minus}[which]
    rng.push(VILLAIN, (3, sorted([two, one, minus]).index(card)))
    v_minus_1(g)
    assert card not in g.next_to_lobo and card in g.villain.discard
    assert g.lobo == lobo
    check_invariants(g)


def test_v_minus_1_removing_a_minus_one_can_reach_nine():
    g, rng = table()
    twos = villain_cards(g, advance=2)[:4]
    minus = villain_cards(g, advance=-1)[0]
    plus1 = villain_cards(g, advance=1)[0]
    next_to_lobo(g, *twos, plus1, minus)  # 8
    rng.push(VILLAIN, (6, sorted(twos + [plus1, minus]).index(minus)))
    with pytest.raises(GameOver):
        v_minus_1(g)
    assert g.outcome == Outcome.LOSS_LOBO


def test_v_minus_1_with_no_card_next_to_lobo():
    g, rng = table()
    v_minus_1(g)
    assert g.lobo == 0 and rng.log == []


def test_villain_deck_reshuffled_from_the_discard_cards_next_to_lobo_stay():
    g, rng = table()
    pile = sorted(g.villain.pile)
    lobo_card, a, b, *rest = pile
    next_to_lobo(g, lobo_card)
    g.villain.pile = []
    g.villain.discard = [b, a] + rest
    rng.push(VILLAIN, (len(rest) + 2, 1))
    villain_phase(g, 1)
    assert g.next_to_lobo == [lobo_card]
    assert sorted(g.villain.pile) == sorted([a] + rest)
    assert g.villain.discard == [b]  # the drawn End of Turn card is discarded again
    check_invariants(g)


def test_top_secret_cancels_an_advancement():
    g, _ = table()
    g.active = 0
    ts = give_top_secret(g, 0, K.TS_CANCEL_ADVANCE)
    plus2 = villain_cards(g, advance=2)[0]
    stack_villain(g, plus2)
    s = g.strategies[0]
    s.push("cancel_advance", True)
    villain_advancement(g)
    assert s.asked("cancel_advance") == [(plus2,)]
    assert g.lobo == 0 and g.next_to_lobo == [] and plus2 in g.villain.discard
    assert ts in g.top_secret.discard and g.players[0].top_secret == []


def test_top_secret_cancel_may_be_kept():
    g, _ = table()
    g.active = 0
    ts = give_top_secret(g, 0, K.TS_CANCEL_ADVANCE)
    plus2 = villain_cards(g, advance=2)[0]
    stack_villain(g, plus2)
    villain_advancement(g)  # default: do not play it
    assert g.lobo == 2 and g.players[0].top_secret == [ts]


def test_cancel_not_offered_without_the_card():
    g, _ = table()
    stack_villain(g, villain_cards(g, advance=1)[0])
    villain_advancement(g)
    assert not g.strategies[0].asked("cancel_advance")
