"""Hand evaluator, exchange policy and gamble protocol (plain Python and compiled twins)."""

import itertools
from math import comb

import numpy as np
import pytest

from sim import odds, poker, rng

R = {"T": 10, "J": 11, "Q": 12, "K": 13, "A": 14}
S = {"s": 0, "h": 1, "d": 2, "c": 3}


def parse(hand: str):
    """'As Kh 4d ...' -> (ranks, suits) int64 arrays."""
    ranks, suits = [], []
    for card in hand.split():
        ranks.append(R.get(card[0]) or int(card[0]))
        suits.append(S[card[1]])
    return np.array(ranks, np.int64), np.array(suits, np.int64)


def value(hand: str) -> int:
    r, s = parse(hand)
    v = int(poker.hand_value_arr(r, s))
    assert int(poker.hand_value_arr_nb(r, s)) == v
    return v


def category(hand: str) -> str:
    return poker.CATEGORY_NAMES[poker.hand_category(value(hand))]


# --- evaluator edge cases -------------------------------------------------------------
def test_lowest_straight_is_4_to_8():
    assert category("4s 5h 6d 7c 8s") == "straight"
    assert value("5s 6h 7d 8c 9s") > value("4s 5h 6d 7c 8s")
    assert category("4s 5s 6s 7s 8s") == "straight flush"


def test_royal_flush_and_broadway():
    assert category("As Ks Qs Js Ts") == "royal flush"
    assert poker.hand_category(value("As Ks Qs Js Ts")) == poker.N_CATEGORIES - 1
    assert value("As Ks Qs Js Ts") > value("Ks Qs Js Ts 9s")
    assert category("Ah Ks Qs Js Ts") == "straight"
    assert value("Ah Ks Qs Js Ts") > value("Kh Qs Js Ts 9s")


def test_no_ace_low_straight():
    assert category("Ah 4s 5d 6c 7s") == "high card"
    assert category("As 4s 5s 6s 7s") == "flush"
    assert value("Ah 4s 5d 6c 7s") < value("4s 5h 6d 7c 8s")


def test_category_order_and_full_house_beats_flush():
    hands = [
        "Ah Js 9d 7c 5s",  # high card
        "4h 4s 5d 6c 8s",  # pair
        "4h 4s 5d 5c 8s",  # two pair
        "4h 4s 4d 5c 7s",  # three of a kind
        "4s 5h 6d 7c 8s",  # straight
        "4s 5s 6s 7s 9s",  # flush
        "4h 4s 4d 5c 5s",  # full house
        "4h 4s 4d 4c 5s",  # four of a kind
        "4s 5s 6s 7s 8s",  # straight flush
        "As Ks Qs Js Ts",  # royal flush
    ]
    vals = [value(h) for h in hands]
    assert [poker.hand_category(v) for v in vals] == list(range(10))
    assert vals == sorted(vals)
    assert value("4h 4s 4d 5c 5s") > value("As Ks Qs Js 9s")  # full house beats flush


def test_kickers_and_ties():
    assert value("Ah 9s 8d 6c 5s") == value("As 9h 8c 6d 5h")  # tie
    assert value("Ks Kh Ad 5c 4s") > value("Ks Kh Qd Jc Ts")
    assert value("Ks Kh Qd Qc 4s") > value("Ks Kh Jd Jc As")
    assert value("Ks Kh Qd Qc 5s") > value("Kd Kc Qs Qh 4d")
    assert value("5s 5h 5d 4c 4s") > value("4h 4d 4c As Ah")
    assert value("4s 4h 4d 4c 6s") > value("4s 4h 4d 4c 5s")
    assert value("As Ks Qs Js 9s") > value("As Ks Qs Js 8s")
    assert value("Ts Jh Qd Kc As") == value("As Kh Qs Jd Tc")


def test_order_of_cards_does_not_matter():
    r, s = parse("Qs 4h Qd 9c 4s")
    v = poker.hand_value_arr(r, s)
    for perm in itertools.permutations(range(5)):
        p = list(perm)
        assert poker.hand_value_arr(r[p], s[p]) == v


def test_plain_and_compiled_evaluators_agree():
    g = np.random.default_rng(7)
    for _ in range(3000):
        cards = g.choice(44, 5, replace=False)
        r, s = poker.DECK_RANK[cards], poker.DECK_SUIT[cards]
        v = poker.hand_value_arr(r, s)
        assert poker.hand_value_arr_nb(r, s) == v
        assert poker.hand_value_cards_nb(*cards, poker.DECK_RANK, poker.DECK_SUIT) == v
        for allowance in (0, 1, 2, 5):
            assert poker.choose_exchange(r, s, allowance) == poker.choose_exchange_nb(
                r, s, allowance
            )


# --- exact category counts ----------------------------------------------------------
def test_category_counts_match_combinatorics():
    n_seq = 7  # straights 4-8 .. T-A (no ace-low)
    expected = {
        "royal flush": 4,
        "straight flush": 4 * (n_seq - 1),
        "four of a kind": 11 * 40,
        "full house": 11 * comb(4, 3) * 10 * comb(4, 2),
        "flush": 4 * comb(11, 5) - 4 * n_seq,
        "straight": n_seq * (4**5 - 4),
        "three of a kind": 11 * comb(4, 3) * comb(10, 2) * 4**2,
        "two pair": comb(11, 2) * comb(4, 2) ** 2 * 9 * 4,
        "pair": 11 * comb(4, 2) * comb(10, 3) * 4**3,
        "high card": (comb(11, 5) - n_seq) * (4**5 - 4),
    }
    counts = odds.hand_category_counts()
    got = {poker.CATEGORY_NAMES[c]: int(counts[c]) for c in range(10)}
    assert got == expected
    assert got["full house"] == 2640 and got["flush"] == 1820
    assert sum(got.values()) == comb(44, 5) == 1_086_008


def test_evaluator_matches_treys_on_every_hand():
    treys = pytest.importorskip("treys")
    ev = treys.Evaluator()
    tcards = [
        treys.Card.new("456789TJQKA"[r - 4] + "shdc"[s])
        for r, s in zip(poker.DECK_RANK, poker.DECK_SUIT, strict=True)
    ]
    t_rank = np.fromiter(
        (ev.evaluate(list(h[:2]), list(h[2:])) for h in itertools.combinations(tcards, 5)),
        dtype=np.int64,
        count=comb(44, 5),
    )
    ours, _ = odds.enumerate_hands(poker.DECK_RANK, poker.DECK_SUIT)  # same lexicographic order
    assert ours.shape == t_rank.shape
    order = np.argsort(t_rank, kind="stable")
    ts, vs = t_rank[order], ours[order]
    dt, dv = np.diff(ts), np.diff(vs)
    # equal treys rank <=> equal value; better treys rank (lower) <=> greater value
    assert np.array_equal(dt == 0, dv == 0)
    assert np.all(dv[dt > 0] < 0)
    assert poker.hand_category(vs[0]) == poker.ROYAL_FLUSH
    assert ts[0] == 1  # treys' best hand class (royal flush) occurs
    assert np.all(poker.hand_category(ours) <= poker.ROYAL_FLUSH)


# --- exchange policy --------------------------------------------------------------------
def exch(hand: str, allowance: int) -> list[int]:
    r, s = parse(hand)
    m = poker.choose_exchange(r, s, allowance)
    assert poker.choose_exchange_nb(r, s, allowance) == m
    return [i for i in range(5) if (m >> i) & 1]


@pytest.mark.parametrize(
    "hand",
    ["4s 5h 6d 7c 8s", "4s 6s 8s Ts Qs", "4h 4s 4d 5c 5s", "9h 9s 9d 9c 5s", "As Ks Qs Js Ts"],
)
def test_made_hands_are_kept(hand):
    for allowance in (0, 1, 2, 5):
        assert exch(hand, allowance) == []


def test_allowance_zero_keeps_everything():
    assert exch("Ah Js 9d 7c 5s", 0) == []
    assert exch("Ah Js 9s 7s 5s", 0) == []


def test_sets_pairs_and_high_cards():
    assert exch("9h 4s 9d 9c Ks", 1) == [1]
    assert exch("9h 4s 9d 9c Ks", 5) == [1, 4]
    assert exch("9h 4s 9d 4c Ks", 2) == [4]
    assert exch("Qh 4s 9d 5c Qs", 1) == [1]
    assert exch("Qh 4s 9d 5c Qs", 2) == [1, 3]
    assert exch("Qh 4s 9d 5c Qs", 5) == [1, 2, 3]
    assert exch("Ah Js 9d 7c 5s", 1) == [4]
    assert exch("Ah Js 9d 7c 5s", 2) == [3, 4]
    assert exch("Js Ah 9d 7c 5s", 5) == [0, 2, 3, 4]


def test_four_flush_draws():
    assert exch("Ah Js 9s 7s 5s", 1) == [0]
    assert exch("Ah Js 9s 7s 5s", 5) == [0]
    assert exch("5h Js 9s 7s 5s", 2) == [0]  # a pair no better: go for the flush
    assert exch("5h 5d 9s 7s 5s", 2) == [2, 3]  # trips beat a flush draw


# --- gamble protocol --------------------------------------------------------------------
def replay_gamble(seed, game, allowance):
    """The documented protocol, written out with the Python Streams handle."""
    st = rng.Streams(seed, game)
    deck = list(range(44))
    n_left = 44

    def draw():
        nonlocal n_left
        j = st.below(n_left, rng.GAMBLE)
        c = deck[j]
        deck[j], deck[n_left - 1] = deck[n_left - 1], c
        n_left -= 1
        return c

    hand = [draw() for _ in range(5)]
    r, s = poker.DECK_RANK[hand], poker.DECK_SUIT[hand]
    mask = poker.choose_exchange(r, s, allowance)
    for i in range(5):
        if (mask >> i) & 1:
            hand[i] = draw()
    house = [draw() for _ in range(5)]
    used = hand + house
    assert len(set(used)) == 10
    return (
        int(poker.hand_value_cards(*hand, poker.DECK_RANK, poker.DECK_SUIT)),
        int(poker.hand_value_cards(*house, poker.DECK_RANK, poker.DECK_SUIT)),
    )


@pytest.mark.parametrize("allowance", [0, 1, 2, 5])
def test_play_gamble_follows_protocol(allowance):
    for game in range(40):
        want = replay_gamble(3, game, allowance)
        st = rng.new_state(3, game)
        got_py = poker.play_gamble(st, allowance, poker.DECK_RANK, poker.DECK_SUIT)
        st2 = rng.new_state(3, game)
        got_nb = poker.play_gamble_nb(st2, allowance, poker.DECK_RANK, poker.DECK_SUIT)
        assert tuple(int(x) for x in got_py) == want == tuple(int(x) for x in got_nb)
        assert np.array_equal(st, st2)
