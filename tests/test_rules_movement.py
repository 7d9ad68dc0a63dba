"""Movement phase: walking, oceans, Resolve, trains, planes, UN Transport, regional areas, rest.

Field manual "1 Movement", "UN Transport", "Regional areas and Islands"; MODEL.md A.1.
"""

import pytest

from sim.content import constants as K
from sim.rules.choices import Means
from sim.rules.game import play_turn
from sim.rules.movement import apply_move, can_rest, legal_moves, movement_phase, rest
from sim.rules.state import SUPPLY
from sim.rules.villain import close_airport, end_of_turn_event
from tests.rules_helpers import (
    DICE,
    clear_table,
    content,
    face,
    give_top_secret,
    install_rng,
    moves_to,
    new_game,
    pick_move,
    put,
    sp,
    stack_villain,
    villain_cards,
)


def table(players=4, characters=None, **kw):
    g = clear_table(new_game(players, characters, **kw))
    rng = install_rng(g)
    return g, rng


def names(g, spaces):
    return {g.content.space_names[s] for s in spaces}


def walk_dests(g, seat, resolve):
    return names(g, {m.dest for m in legal_moves(g, seat) if m.means == Means.WALK and m.resolve == resolve})


# ------------------------------------------------------------------ walking and oceans
def test_walk_up_to_two_mp_and_ocean_stops_movement():
    g, _ = table()
    put(g, 0, "Madrid")
    g.players[0].resolve = 0
    assert walk_dests(g, 0, False) == {
        "Paris", "Casablanca", "North Atlantic",  # 1 MP
        "London", "Rome", "Berlin", "Algiers", "Dakar",  # 2 MP; nothing beyond the ocean
    }
    assert walk_dests(g, 0, True) == set()  # no Resolve, no third MP
    moves = legal_moves(g, 0)
    assert moves_to(moves, sp("Paris"), Means.WALK)[0].steps == 1
    assert moves_to(moves, sp("Berlin"), Means.WALK)[0].steps == 2
    # Montreal is 2 connections away but only through the North Atlantic
    assert not moves_to(moves, sp("Montreal"), Means.WALK)


def test_resolve_buys_a_third_mp_but_never_out_of_an_ocean_entered_this_turn():
    g, _ = table()
    put(g, 0, "Madrid")
    g.players[0].resolve = 2
    assert walk_dests(g, 0, True) == {"Stockholm", "Vienna", "Athens", "Moscow", "Lagos", "South Atlantic"}
    # the ocean still stops the player: no Montreal, New York, Caribbean Sea...
    assert not {"Montreal", "New York", "Caribbean Sea", "Arctic Ocean"} & walk_dests(g, 0, True)


def test_resolve_for_movement_is_paid_and_only_once_a_turn():
    g, _ = table()
    put(g, 0, "Madrid")
    p = g.players[0]
    p.resolve = 2
    apply_move(g, 0, moves_to(legal_moves(g, 0), sp("Vienna"), Means.WALK, True)[0])
    assert p.space == sp("Vienna") and p.resolve == 1 and g.move_resolve_used
    assert not [m for m in legal_moves(g, 0) if m.resolve]
    g.move_resolve_used = False
    p.resolve = 0
    assert not [m for m in legal_moves(g, 0) if m.resolve]


def test_player_starting_in_an_ocean_may_leave_it():
    g, _ = table()
    put(g, 0, "North Atlantic")
    g.players[0].resolve = 0
    dests = walk_dests(g, 0, False)
    assert {"London", "Paris", "Montreal", "Chicago", "South Atlantic"} <= dests
    # but a second ocean entered this turn stops it again
    assert "Indian Ocean" not in dests


def test_movement_phase_applies_the_chosen_walk():
    g, _ = table()
    put(g, 0, "Madrid")
    g.strategies[0].push("move", pick_move("Berlin", Means.WALK))
    assert movement_phase(g, 0) is False
    assert g.players[0].space == sp("Berlin")


# ------------------------------------------------------------------ trains
def test_train_from_a_train_city_to_any_train_city_for_one_mp():
    g, _ = table()
    put(g, 0, "Moscow")
    g.players[0].resolve = 0
    moves = legal_moves(g, 0)
    for city in ("Sverdlovsk", "Omsk", "Novosibirsk", "Irkutsk", "Vladivostok"):
        assert moves_to(moves, sp(city), Means.WALK)[0].steps == 1
    # train then walk: Vladivostok (1) -> Peking / North Pacific (2)
    assert moves_to(moves, sp("Peking"), Means.WALK)[0].steps == 2
    assert moves_to(moves, sp("North Pacific"), Means.WALK)[0].steps == 2


def test_walk_then_train():
    g, _ = table()
    put(g, 0, "Berlin")  # no train: walk to Moscow (1), then the train (2)
    g.players[0].resolve = 0
    moves = legal_moves(g, 0)
    assert moves_to(moves, sp("Vladivostok"), Means.WALK)[0].steps == 2
    assert moves_to(moves, sp("Irkutsk"), Means.WALK)[0].steps == 2
    # Hong Kong -> Peking -> Irkutsk: the train would need a third MP
    put(g, 0, "Hong Kong")
    moves = legal_moves(g, 0)
    assert moves_to(moves, sp("Irkutsk"), Means.WALK)[0].steps == 2
    assert not moves_to(moves, sp("Moscow"), Means.WALK)


# ------------------------------------------------------------------ planes
def open_airports(g):
    c = g.content
    return {s for s in range(c.n_spaces) if c.space_airport[s] and (c.space_red_airport[s] or not g.airport_closed[s])}


def test_plane_between_open_airports_uses_all_mp():
    g, _ = table()
    put(g, 0, "Paris")
    g.players[0].resolve = 0
    plane = [m for m in legal_moves(g, 0) if m.means == Means.PLANE]
    assert {m.dest for m in plane} == open_airports(g) - {sp("Paris")}
    assert all(not m.resolve and m.steps == 2 for m in plane)
    assert sp("Dakar") not in {m.dest for m in plane}  # no airport


def test_closed_airports_are_excluded_both_ways():
    g, _ = table()
    put(g, 0, "Paris")
    g.players[0].resolve = 0
    close_airport(g, sp("Rome"))
    assert g.airport_closed[sp("Rome")]
    assert not moves_to(legal_moves(g, 0), sp("Rome"), Means.PLANE)
    put(g, 0, "Rome")  # no plane from a closed airport
    assert not [m for m in legal_moves(g, 0) if m.means == Means.PLANE]


def test_plane_then_one_resolve_mp():
    g, _ = table()
    put(g, 0, "Paris")
    g.players[0].resolve = 1
    moves = legal_moves(g, 0)
    # Dakar has no airport: fly to Casablanca (or Lagos) and walk on for 1 Resolve
    m = moves_to(moves, sp("Dakar"), Means.PLANE, True)
    assert len(m) == 1 and m[0].steps == 3
    apply_move(g, 0, m[0])
    assert g.players[0].resolve == 0 and g.move_resolve_used
    # without Resolve, no extra step after flying
    g.players[0].resolve = 0
    put(g, 0, "Paris")
    assert not moves_to(legal_moves(g, 0), sp("Dakar"), Means.PLANE)


def test_red_airports_never_close():
    g, _ = table()
    c = g.content
    red = [s for s in range(c.n_spaces) if c.space_red_airport[s]]
    assert names(g, red) == {"London", "Moscow", "Hong Kong", "New York", "Rio de Janeiro"}
    for s in red:
        close_airport(g, s)
    assert not any(g.airport_closed)
    assert g.close_tokens_left == c.n_close_airport_tokens
    # an End of Turn card naming a red airport closes nothing
    card = next(x for x in range(c.n_villain) if c.space_red_airport[c.villain_close_city[x]])
    g.villain.pile.remove(card)
    end_of_turn_event(g, card)
    assert not any(g.airport_closed)
    # and flights to and from red airports stay open even if flagged
    g.airport_closed[sp("London")] = True
    put(g, 0, "London")
    assert moves_to(legal_moves(g, 0), sp("New York"), Means.PLANE)
    put(g, 0, "Paris")
    assert moves_to(legal_moves(g, 0), sp("London"), Means.PLANE)


def test_end_of_turn_closes_an_ordinary_airport():
    g, _ = table()
    c = g.content
    card = next(x for x in range(c.n_villain) if not c.space_red_airport[c.villain_close_city[x]])
    city = int(c.villain_close_city[card])
    g.villain.pile.remove(card)
    end_of_turn_event(g, card)
    assert g.airport_closed[city]
    assert g.close_tokens_left == c.n_close_airport_tokens - 1


# ------------------------------------------------------------------ UN Transport, regional areas
def test_un_transport_to_any_city_or_ocean_never_into_a_regional_area():
    g, _ = table()
    c = g.content
    put(g, 0, "Paris")
    g.players[0].un_tokens, g.un_supply = 1, g.un_supply - 1
    un = [m for m in legal_moves(g, 0) if m.means == Means.UN]
    expected = {s for s in range(c.n_spaces) if c.space_kind[s] != K.REGIONAL} - {sp("Paris")}
    assert {m.dest for m in un} == expected
    assert len(un) == len(expected)
    supply = g.un_supply
    apply_move(g, 0, moves_to(un, sp("Lima"))[0])
    assert g.players[0].space == sp("Lima") and g.players[0].un_tokens == 0
    assert g.un_supply == supply + 1


@pytest.mark.parametrize("region", ["Siberia", "Japan", "Congo", "Northern Territories"])
def test_regional_area_must_be_left_and_cannot_be_entered(region):
    g, _ = table()
    c = g.content
    put(g, 0, region)
    p = g.players[0]
    p.injuries = 3
    p.un_tokens, g.un_supply = 1, g.un_supply - 1
    moves = legal_moves(g, 0)
    assert not [m for m in moves if m.means == Means.STAY]
    assert all(m.dest != sp(region) for m in moves)
    assert {m.dest for m in moves if m.means == Means.UN} >= {sp("London")}  # UN out is fine
    assert not can_rest(g, 0)  # no rest on a regional area
    s = g.strategies[0]
    movement_phase(g, 0)
    assert not s.asked("rest")
    assert p.space != sp(region)
    # no connection leads into any regional area
    regional = {x for x in range(c.n_spaces) if c.space_kind[x] == K.REGIONAL}
    for x in range(c.n_spaces):
        if x not in regional:
            assert not any(c.adjacent[x, r] for r in regional)


def test_siberia_walk_options():
    g, _ = table()
    put(g, 0, "Siberia")
    g.players[0].resolve = 0
    one = {m.dest for m in legal_moves(g, 0) if m.means == Means.WALK and m.steps == 1}
    assert names(g, one) == {"Omsk", "Novosibirsk", "Irkutsk"}
    assert sp("Moscow") in {m.dest for m in legal_moves(g, 0) if m.steps == 2}  # by train


def test_calli_hands_over_her_un_transport():
    g, _ = table(2, [0, 1])  # Calli, Rocko
    calli, rocko = g.players
    calli.un_tokens, g.un_supply = 1, g.un_supply - 1
    put(g, 1, "Paris")
    moves = legal_moves(g, 1)
    gift = [m for m in moves if m.means == Means.UN_GIFT]
    assert gift and not [m for m in moves if m.means == Means.UN]
    supply = g.un_supply
    apply_move(g, 1, moves_to(gift, sp("Bombay"))[0])
    assert rocko.space == sp("Bombay")
    assert calli.un_tokens == 0 and rocko.un_tokens == 0 and g.un_supply == supply + 1
    # Calli has none left: no gift offered any more
    assert not [m for m in legal_moves(g, 1) if m.means == Means.UN_GIFT]


def test_only_calli_gives_un_transports():
    g, _ = table(2, [2, 1])  # Dexter, Rocko
    g.players[0].un_tokens, g.un_supply = 2, g.un_supply - 2
    put(g, 1, "Paris")
    assert not [m for m in legal_moves(g, 1) if m.means in (Means.UN, Means.UN_GIFT)]


def test_top_secret_un_transport_card():
    g, _ = table()
    put(g, 0, "Paris")
    card = give_top_secret(g, 0, K.TS_UN_TRANSPORT)
    ts_moves = [m for m in legal_moves(g, 0) if m.means == Means.TOP_SECRET_UN]
    c = g.content
    assert {m.dest for m in ts_moves} == {s for s in range(c.n_spaces) if c.space_kind[s] != K.REGIONAL} - {sp("Paris")}
    supply = g.un_supply
    apply_move(g, 0, moves_to(ts_moves, sp("Havana"))[0])
    assert g.players[0].space == sp("Havana")
    assert card not in g.players[0].top_secret and card in g.top_secret.discard
    assert g.un_supply == supply and g.stats.top_secret_played == 1


# ------------------------------------------------------------------ rest
def test_rest_needs_two_injuries():
    g, _ = table()
    put(g, 0, "Paris")
    s = g.strategies[0]
    s.set_default("rest", True)
    g.players[0].injuries = 1
    assert not can_rest(g, 0)
    assert movement_phase(g, 0) is False
    assert not s.asked("rest")
    g.players[0].injuries = 2
    assert can_rest(g, 0)
    assert movement_phase(g, 0) is True
    assert g.players[0].injuries == 0


def test_rest_heals_two():
    g, _ = table()
    put(g, 0, "Paris")
    g.players[0].injuries = 3
    rest(g, 0)
    assert g.players[0].injuries == 1


def test_resting_skips_the_encounter_and_draws_two_end_of_turn_cards():
    g, rng = table()
    put(g, 0, "Paris")
    p = g.players[0]
    p.injuries = 3
    g.strategies[0].push("rest", True)
    c = g.content
    quiet = [
        x for x in villain_cards(g, advance=1) + villain_cards(g, advance=2)
        if c.villain_remove_region[x] < 0 and not c.space_red_airport[c.villain_close_city[x]]
    ]
    first = quiet[0]
    second = next(
        x for x in quiet
        if c.villain_close_city[x] != c.villain_close_city[first]
        and not set(c.villain_add_intel[x]) & set(c.villain_add_intel[first]) - {-1}
    )
    stack_villain(g, first, second)
    piles = [list(d.pile) for d in g.encounters]
    play_turn(g, 0)
    assert p.injuries == 1 and p.space == sp("Paris")
    assert [list(d.pile) for d in g.encounters] == piles  # no encounter card drawn
    assert all(not d.discard for d in g.encounters)
    assert g.stats.villain_drawn == 2 and g.stats.tests_attempted == 0
    assert g.villain.discard == [first, second]
    assert g.airport_closed[int(c.villain_close_city[first])]
    assert g.airport_closed[int(c.villain_close_city[second])]
    added = [int(x) for card in (first, second) for x in c.villain_add_intel[card] if x >= 0]
    assert sorted(g.intel_loc[t] for t in g.yellow_on_board()) == sorted(added)
    assert rng.drawn(DICE) == []  # no rest roll with 4 players
    assert g.next_to_lobo == []


def test_a_turn_without_rest_draws_one_end_of_turn_card():
    g, rng = table()
    put(g, 0, "Paris")
    g.players[0].injuries = 3
    first, second = villain_cards(g, advance=1)[:2]
    stack_villain(g, first, second)
    rng.policies[DICE] = lambda n: 0
    play_turn(g, 0)  # stays in Paris, passes the encounter (every die shows S)
    assert g.stats.tests_passed == 1
    assert g.stats.villain_drawn == 1
    assert g.villain.discard == [first] and g.villain.pile[-1] == second


@pytest.mark.parametrize("blue, advances", [("S", False), ("-", True)])
def test_solo_rest_rolls_the_blue_die(blue, advances):
    g, rng = table(1, [3])  # Nika
    put(g, 0, "Paris")
    g.players[0].injuries = 2
    plus_one = villain_cards(g, advance=1)[0]
    stack_villain(g, plus_one)
    rng.push(DICE, (6, face("blue", blue)))
    rest(g, 0)
    assert g.players[0].injuries == 0
    assert rng.drawn(DICE) == [(6, face("blue", blue))]
    assert g.next_to_lobo == ([plus_one] if advances else [])
    assert g.lobo == (1 if advances else 0)


def test_blue_die_faces():
    c = content()
    blue = c.die_index("blue")
    assert [int(x) for x in c.die_success[blue]].count(1) == 2


def test_stay_is_a_legal_move_on_a_city():
    g, _ = table()
    put(g, 0, "Paris")
    movement_phase(g, 0)  # default answer: stay
    assert g.players[0].space == sp("Paris")
    assert all(loc == SUPPLY for loc in g.intel_loc)
