"""Poker against the House: hand evaluator, exchange policies and the gamble protocol.

Every function here is plain Python that runs as is (the readable rules engine)
*and* is compiled with :func:`sim.jit.compile_twins` (the ``*_nb`` names), so
the engine and the numba kernels share one source of truth.

Fate deck
---------
44 cards, ranks 4..14 (11 = J, 12 = Q, 13 = K, 14 = A) in four suits 0..3; card
code ``c = (rank - 4) * 4 + suit`` (:data:`DECK_RANK`, :data:`DECK_SUIT`). Every
function takes ``deck_rank`` / ``deck_suit`` arrays so a content pack can pass
its own deck (ranks must lie in 0..15, suits are arbitrary ints).

Hand values
-----------
:func:`hand_value` returns an int ``category << 20 | k1 << 16 | ... | k5`` that
orders hands by the rulebook ranking, low to high: high card (0), pair (1), two
pair (2), three of a kind (3), straight (4), flush (5), full house (6), four of a
kind (7), straight flush (8), royal flush (9). Kickers are standard poker:
grouped ranks by (group size, rank) descending; a straight or straight flush is
ranked by its top card only. There is NO ace-low straight (no 2s and 3s):
4-5-6-7-8 is the lowest straight, A-K-Q-J-10 the highest; A-4-5-6-7 is high card.
A royal flush (A-high straight flush) is its own category.

Gamble protocol (the rules engine follows it exactly)
-----------------------------------------------------
A gamble uses a freshly shuffled deck drawn lazily from stream ``GAMBLE``:
``deck = [0, 1, ..., n_cards - 1]``, ``n_left = n_cards``; to draw a card
``j = next_below(state, GAMBLE, n_left)``, take ``deck[j]``, swap ``deck[j]``
with ``deck[n_left - 1]`` and decrement ``n_left``. The player draws 5 cards
(positions 0..4 in draw order) and picks the positions to exchange with
:func:`choose_exchange`; the exchanged positions are refilled at once, in
increasing position order, by the next draws (discards stay out of play). Then
the House draws 5 cards. The player wins iff the player's value is greater than
the House's (a tie loses). See :func:`play_gamble`.

Exchange policy (:func:`choose_exchange`)
-----------------------------------------
A fixed rule given an allowance (max cards to exchange):

1. a made straight, flush, full house, four of a kind, straight flush or royal
   flush is kept whole (nothing is exchanged); so is any hand if allowance is 0;
2. a hand no better than a pair that holds 4 cards of one suit exchanges the
   odd card (a flush draw; this breaks a pair made with the odd card);
3. otherwise the cards that form the hand are kept (trips: the three; two pair:
   both pairs; pair: the pair; high card: the single highest card) and the
   other cards are exchanged lowest rank first (ties: lowest position first), at
   most ``allowance`` of them.

Built-in policies (:data:`POLICIES`): ``stand_pat`` (allowance 0),
``exchange_1`` (1, the basic rule), ``exchange_2`` (2, the Gambling/Luck
skill), ``exchange_5`` (up to 5, spending 1 Resolve).
"""

from __future__ import annotations

import numpy as np

from sim.jit import compile_twins
from sim.rng import GAMBLE, next_below, next_below_nb

N_RANKS = 11
N_SUITS = 4
DECK_SIZE = 44
DECK_RANK = np.repeat(np.arange(4, 15, dtype=np.int64), N_SUITS)
DECK_SUIT = np.tile(np.arange(N_SUITS, dtype=np.int64), N_RANKS)
RANK_NAMES = {
    4: "4",
    5: "5",
    6: "6",
    7: "7",
    8: "8",
    9: "9",
    10: "T",
    11: "J",
    12: "Q",
    13: "K",
    14: "A",
}
SUIT_NAMES = "shdc"

HIGH_CARD = 0
PAIR = 1
TWO_PAIR = 2
THREE_OF_A_KIND = 3
STRAIGHT = 4
FLUSH = 5
FULL_HOUSE = 6
FOUR_OF_A_KIND = 7
STRAIGHT_FLUSH = 8
ROYAL_FLUSH = 9
N_CATEGORIES = 10
CATEGORY_NAMES = (
    "high card",
    "pair",
    "two pair",
    "three of a kind",
    "straight",
    "flush",
    "full house",
    "four of a kind",
    "straight flush",
    "royal flush",
)
ACE = 14

POLICIES = {"stand_pat": 0, "exchange_1": 1, "exchange_2": 2, "exchange_5": 5}


def card_code(rank: int, suit: int) -> int:
    """Card code of the standard Fate deck: ``(rank - 4) * 4 + suit``."""
    return (rank - 4) * 4 + suit


def card_name(code: int) -> str:
    """Short name of a standard Fate card, e.g. ``'Ts'``."""
    return RANK_NAMES[int(DECK_RANK[code])] + SUIT_NAMES[int(DECK_SUIT[code])]


def _pack(cat, k1, k2, k3, k4, k5):
    return (cat << 20) | (k1 << 16) | (k2 << 12) | (k3 << 8) | (k4 << 4) | k5


def hand_value(r0, r1, r2, r3, r4, s0, s1, s2, s3, s4):
    """Value of a 5-card hand (ranks r*, suits s*); a greater value is a better hand."""
    a, b, c, d, e = r0, r1, r2, r3, r4
    # bubble sort, descending: a >= b >= c >= d >= e
    if a < b:
        a, b = b, a
    if b < c:
        b, c = c, b
    if c < d:
        c, d = d, c
    if d < e:
        d, e = e, d
    if a < b:
        a, b = b, a
    if b < c:
        b, c = c, b
    if c < d:
        c, d = d, c
    if a < b:
        a, b = b, a
    if b < c:
        b, c = c, b
    if a < b:
        a, b = b, a
    flush = s0 == s1 and s0 == s2 and s0 == s3 and s0 == s4
    distinct = a > b and b > c and c > d and d > e
    straight = distinct and a - e == 4
    if straight and flush:
        if a == ACE:
            return _pack(ROYAL_FLUSH, a, 0, 0, 0, 0)
        return _pack(STRAIGHT_FLUSH, a, 0, 0, 0, 0)
    if a == d:
        return _pack(FOUR_OF_A_KIND, a, e, 0, 0, 0)
    if b == e:
        return _pack(FOUR_OF_A_KIND, b, a, 0, 0, 0)
    if a == c and d == e:
        return _pack(FULL_HOUSE, a, d, 0, 0, 0)
    if a == b and c == e:
        return _pack(FULL_HOUSE, c, a, 0, 0, 0)
    if flush:
        return _pack(FLUSH, a, b, c, d, e)
    if straight:
        return _pack(STRAIGHT, a, 0, 0, 0, 0)
    if a == c:
        return _pack(THREE_OF_A_KIND, a, d, e, 0, 0)
    if b == d:
        return _pack(THREE_OF_A_KIND, b, a, e, 0, 0)
    if c == e:
        return _pack(THREE_OF_A_KIND, c, a, b, 0, 0)
    if a == b and c == d:
        return _pack(TWO_PAIR, a, c, e, 0, 0)
    if a == b and d == e:
        return _pack(TWO_PAIR, a, d, c, 0, 0)
    if b == c and d == e:
        return _pack(TWO_PAIR, b, d, a, 0, 0)
    if a == b:
        return _pack(PAIR, a, c, d, e, 0)
    if b == c:
        return _pack(PAIR, b, a, d, e, 0)
    if c == d:
        return _pack(PAIR, c, a, b, e, 0)
    if d == e:
        return _pack(PAIR, d, a, b, c, 0)
    return _pack(HIGH_CARD, a, b, c, d, e)


def hand_value_arr(ranks, suits):
    """:func:`hand_value` of a hand given as two length-5 arrays."""
    return hand_value(
        ranks[0],
        ranks[1],
        ranks[2],
        ranks[3],
        ranks[4],
        suits[0],
        suits[1],
        suits[2],
        suits[3],
        suits[4],
    )


def hand_value_cards(c0, c1, c2, c3, c4, deck_rank, deck_suit):
    """:func:`hand_value` of five card codes of the deck ``deck_rank`` / ``deck_suit``."""
    return hand_value(
        deck_rank[c0],
        deck_rank[c1],
        deck_rank[c2],
        deck_rank[c3],
        deck_rank[c4],
        deck_suit[c0],
        deck_suit[c1],
        deck_suit[c2],
        deck_suit[c3],
        deck_suit[c4],
    )


def hand_category(value):
    """Category 0..9 (index into :data:`CATEGORY_NAMES`) of a hand value."""
    return value >> 20


def choose_exchange(ranks, suits, allowance):
    """Bitmask of the hand positions (bit i = position i) to exchange; see the module doc."""
    if allowance <= 0:
        return 0
    cat = hand_category(hand_value_arr(ranks, suits))
    if cat >= STRAIGHT:
        return 0
    if cat <= PAIR:
        # four cards of one suit: exchange the odd one
        odd = -1
        four = False
        for i in range(5):
            same = 0
            for j in range(5):
                if suits[j] == suits[i]:
                    same += 1
            if same == 1:
                odd = i
            elif same == 4:
                four = True
        if four and odd >= 0:
            return 1 << odd
    # which positions form the hand
    keep = 0
    if cat == HIGH_CARD:
        best = 0
        for i in range(1, 5):
            if ranks[i] > ranks[best]:
                best = i
        keep = 1 << best
    else:
        want = 3 if cat == THREE_OF_A_KIND else 2
        for i in range(5):
            same = 0
            for j in range(5):
                if ranks[j] == ranks[i]:
                    same += 1
            if same == want:
                keep |= 1 << i
    mask = 0
    for _ in range(allowance):
        low = -1
        for i in range(5):
            if (keep >> i) & 1 or (mask >> i) & 1:
                continue
            if low < 0 or ranks[i] < ranks[low]:
                low = i
        if low < 0:
            break
        mask |= 1 << low
    return mask


def draw_card(state, deck, n_left):
    """Draw one card of the lazily shuffled ``deck`` (``n_left`` cards left); caller decrements."""
    j = next_below(state, GAMBLE, n_left)
    c = deck[j]
    deck[j] = deck[n_left - 1]
    deck[n_left - 1] = c
    return c


def play_gamble(state, allowance, deck_rank, deck_suit):
    """Play one gamble on stream ``state`` (see the protocol); return (player value, House value)."""
    n_left = deck_rank.shape[0]
    deck = np.arange(n_left)
    ranks = np.empty(5, np.int64)
    suits = np.empty(5, np.int64)
    for i in range(5):
        c = draw_card(state, deck, n_left)
        n_left -= 1
        ranks[i] = deck_rank[c]
        suits[i] = deck_suit[c]
    mask = choose_exchange(ranks, suits, allowance)
    for i in range(5):
        if (mask >> i) & 1:
            c = draw_card(state, deck, n_left)
            n_left -= 1
            ranks[i] = deck_rank[c]
            suits[i] = deck_suit[c]
    player = hand_value_arr(ranks, suits)
    for i in range(5):
        c = draw_card(state, deck, n_left)
        n_left -= 1
        ranks[i] = deck_rank[c]
        suits[i] = deck_suit[c]
    house = hand_value_arr(ranks, suits)
    return player, house


def deal_hand_value(state, deck_rank, deck_suit):
    """Value of the first 5 cards of a fresh gamble deck (the player's dealt hand)."""
    n_left = deck_rank.shape[0]
    deck = np.arange(n_left)
    ranks = np.empty(5, np.int64)
    suits = np.empty(5, np.int64)
    for i in range(5):
        c = draw_card(state, deck, n_left)
        n_left -= 1
        ranks[i] = deck_rank[c]
        suits[i] = deck_suit[c]
    return hand_value_arr(ranks, suits)


# --- numba twins ----------------------------------------------------------------------
_ns = dict(globals())
_ns["next_below"] = next_below_nb  # compiled code draws through the compiled stream
_twins = compile_twins(
    _ns,
    [
        "_pack",
        "hand_value",
        "hand_value_arr",
        "hand_value_cards",
        "hand_category",
        "choose_exchange",
        "draw_card",
        "play_gamble",
        "deal_hand_value",
    ],
    runtime_free=("_pack", "hand_value", "hand_value_arr", "hand_value_cards", "hand_category", "choose_exchange",
                  "draw_card"),
)
hand_value_nb = _twins["hand_value"]
hand_value_arr_nb = _twins["hand_value_arr"]
hand_value_cards_nb = _twins["hand_value_cards"]
hand_category_nb = _twins["hand_category"]
choose_exchange_nb = _twins["choose_exchange"]
draw_card_nb = _twins["draw_card"]
play_gamble_nb = _twins["play_gamble"]
deal_hand_value_nb = _twins["deal_hand_value"]
