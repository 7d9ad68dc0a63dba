"""Gamble actions: poker against the House (field manual "Gamble Actions"; MODEL.md A 'Gamble')."""

import numpy as np
import pytest

from sim.content import constants as K
from sim.rules.encounters import encounter_card
from sim.rules.errors import StrategyError
from sim.rules.gamble import gamble
from tests.rules_helpers import (
    GAMBLE,
    cards,
    clear_table,
    content,
    install_rng,
    new_game,
    put,
    script_gamble,
    stack_encounter,
    stack_villain,
    villain_cards,
)


def table():
    g = clear_table(new_game(4, variant="fixed-skills"))  # the characters' own advanced skills
    rng = install_rng(g, strict=True)
    return g, rng, g.players[0], g.strategies[0]


def trace_hands(g):
    return [line.strip() for line in g.trace if "gamble:" in line or "exchanges" in line or "House:" in line]


def test_fate_deck_is_44_cards_4_to_ace():
    c = content()
    assert c.n_fate == 44
    assert sorted(set(int(r) for r in c.fate_rank)) == list(range(4, 15))
    assert all(sum(1 for r in c.fate_rank if r == rank) == 4 for rank in range(4, 15))


def test_deal_five_then_house_five_from_a_fresh_deck():
    g, rng, p, s = table()
    script_gamble(rng, "Ah Ad 9c 7s 5h", "Kc Qd 9d 7h 4c")
    assert gamble(g, 0) is True  # pair of aces beats king high
    hand, free = s.asked("gamble_exchange")[0]
    assert hand == cards("Ah Ad 9c 7s 5h") and free == 1
    assert [n for n, _ in rng.drawn(GAMBLE)] == list(range(44, 34, -1))
    assert g.stats.gambles_played == 1 and g.stats.gambles_won == 1
    assert rng.left() == {}


def test_a_tie_loses():
    g, rng, p, s = table()
    script_gamble(rng, "Ah Kd 9c 7s 5h", "As Kc 9d 7h 5c")
    assert gamble(g, 0) is False
    assert any("tie, which loses" in line for line in g.trace)
    assert g.stats.gambles_won == 0


def test_worse_hand_loses():
    g, rng, p, s = table()
    script_gamble(rng, "Ah Kd 9c 7s 5h", "4s 4c 6d 7h 8c")
    assert gamble(g, 0) is False


@pytest.mark.parametrize(
    "mine, house, won",
    [
        ("Qs Qd 9c 9s 5h", "As Ac Kd 7h 8c", True),  # two pair beats a pair
        ("4s 5d 6c 7s 8h", "Ks Kc Kd 7h 8c", True),  # lowest straight beats trips
        ("Ah 4d 5c 6s 7h", "4s 4c 6d 7d 9c", False),  # A-4-5-6-7 is no straight
        ("4h 6h 8h Th Qh", "Ks Kc Kd 7h 7c", False),  # a flush loses to a full house
        ("Ts Js Qs Ks As", "9d Td Jd Qd Kd", True),  # royal flush beats a straight flush
        ("Ks Kc 9d 7h 5c", "Kh Kd 9s 7c 4c", True),  # kickers decide between pairs
    ],
)
def test_better_hand_wins(mine, house, won):
    g, rng, p, s = table()
    script_gamble(rng, mine, house)
    assert gamble(g, 0) is won


@pytest.mark.parametrize("spend", [False, np.False_])  # numpy's False too, as use_auto_pass takes it
def test_exchange_one_card_free(spend):
    g, rng, p, s = table()
    s.push("gamble_exchange", (0b00001, spend))  # throw away the 4c
    script_gamble(rng, "4c 6d 8h Th Qs", "Ac Kh 9s 7d 5s", exchanged="Qd")
    assert gamble(g, 0) is True  # pair of queens beats ace high
    assert len(s.asked("gamble_exchange")) == 1  # one exchange decision: all at once
    assert [n for n, _ in rng.drawn(GAMBLE)] == list(range(44, 33, -1))
    assert p.resolve == 3
    assert "exchanges 1 card(s): Qd 6d 8h Th Qs" in trace_hands(g)


def test_exchanging_two_needs_gambling_luck_or_resolve():
    g, rng, p, s = table()
    s.push("gamble_exchange", (0b00011, False))
    script_gamble(rng, "4c 6d 8h Th Qs", "Ac Kh 9s 7d 5s")
    with pytest.raises(StrategyError):
        gamble(g, 0)


def test_gambling_luck_exchanges_two_at_once():
    g, rng, p, s = table()
    p.advanced[K.GAMBLING_LUCK] = True
    s.push("gamble_exchange", (0b10100, False))  # positions 2 and 4
    script_gamble(rng, "4c 6d 8h Th Qs", "Ac Kh 9s 7d 5s", exchanged="Td 6h")
    assert gamble(g, 0) is True  # two pair (tens and sixes)
    assert s.asked("gamble_exchange")[0][1] == 2
    # refilled in increasing position order by the next draws; discards stay out of play
    assert "exchanges 2 card(s): 4c 6d Td Th 6h" in trace_hands(g)
    assert [n for n, _ in rng.drawn(GAMBLE)] == list(range(44, 32, -1))
    assert p.resolve == 3


def test_gambling_luck_still_limits_to_two():
    g, rng, p, s = table()
    p.advanced[K.GAMBLING_LUCK] = True
    s.push("gamble_exchange", (0b00111, False))
    script_gamble(rng, "4c 6d 8h Th Qs", "Ac Kh 9s 7d 5s")
    with pytest.raises(StrategyError):
        gamble(g, 0)


@pytest.mark.parametrize("spend", [True, np.True_])
def test_resolve_buys_up_to_five(spend):
    g, rng, p, s = table()
    s.push("gamble_exchange", (0b11111, spend))
    script_gamble(rng, "4c 6d 8h Th Qs", "Ac Kh 9s 7d 5s", exchanged="4h 4d 4s 9h 9d")
    assert gamble(g, 0) is True  # full house
    assert p.resolve == 2 and g.stats.resolve_spent == 1
    assert [n for n, _ in rng.drawn(GAMBLE)] == list(range(44, 29, -1))


def test_resolve_exchange_needs_resolve():
    g, rng, p, s = table()
    p.resolve = 0
    s.push("gamble_exchange", (0b00011, True))
    script_gamble(rng, "4c 6d 8h Th Qs", "Ac Kh 9s 7d 5s")
    with pytest.raises(StrategyError):
        gamble(g, 0)


def test_gamble_resolve_does_not_use_the_dice_resolve():
    g, rng, p, s = table()
    s.push("gamble_exchange", (0b00011, True))
    script_gamble(rng, "4c 6d 8h Th Qs", "Ac Kh 9s 7d 5s", exchanged="Qd Qh")
    gamble(g, 0)
    assert not g.dice_resolve_used


def gamble_card():
    c = content()
    for x in range(c.n_encounters):
        if c.encounter_gamble[x, 0] and c.encounter_autopass[x, 0] < 0 and not c.encounter_no_advance[x, 0]:
            return x
    raise AssertionError


def gamble_encounter(won):
    g, rng, p, s = table()
    rng.strict = False  # the reward may draw Intel tokens
    c = g.content
    card = gamble_card()
    city = next(x for x in range(c.n_spaces) if c.space_deck[x] == c.encounter_deck[card] and c.space_kind[x] == K.CITY)
    put(g, 0, city)
    stack_encounter(g, card)
    plus2 = villain_cards(g, advance=2)[0]
    stack_villain(g, plus2)
    s.push("test_option", lambda view, options: [o.gamble for o in options].index(True))
    if won:
        script_gamble(rng, "Ah Ad 9c 7s 5h", "Kc Qd 9d 7h 4c")
    else:
        script_gamble(rng, "Kc Qd 9d 7h 4c", "Ah Ad 9c 7s 5h")
    encounter_card(g, 0, K.NO_INTEL)
    return g, plus2


def test_lost_gamble_is_a_failed_test():
    g, plus2 = gamble_encounter(False)
    assert g.next_to_lobo == [plus2]
    assert (g.stats.tests_attempted, g.stats.tests_passed) == (1, 0)


def test_won_gamble_is_a_passed_test():
    g, plus2 = gamble_encounter(True)
    assert g.next_to_lobo == []
    assert (g.stats.tests_attempted, g.stats.tests_passed) == (1, 1)
