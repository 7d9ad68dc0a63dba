"""Kernel twin of ``sim.rules.gamble``: poker against the House on the GAMBLE stream."""

from __future__ import annotations

from sim.content import constants as codes
from sim.jit import KERNEL_OPTIONS, njit
from sim.kernel import strategy as decide
from sim.kernel.decks import player_base, work
from sim.kernel.layout import (
    K_N_FATE,
    L_W_DECK,
    L_W_HAND,
    P_ADV,
    P_RESOLVE,
    ST_GAMBLES_PLAYED,
    ST_GAMBLES_WON,
    ST_RESOLVE_SPENT,
)
from sim.poker import hand_value_arr_nb
from sim.rng import GAMBLE, next_below_nb

jit = njit(**KERNEL_OPTIONS)



@jit
def free_exchanges(pk, st, seat):
    """Cards a player may exchange without Resolve (2 with Gambling/Luck)."""
    return codes.LUCK_EXCHANGE if st[player_base(pk, seat) + P_ADV + codes.GAMBLING_LUCK] else codes.FREE_EXCHANGE


@jit
def _draw(rs, deck, n_left):
    """Draw a uniformly random card from ``deck[:n_left]`` (swap with the last, as the protocol)."""
    j = next_below_nb(rs, GAMBLE, n_left)
    card = deck[j]
    deck[j] = deck[n_left - 1]
    return card


@jit
def gamble(ctx, seat):
    """Play one gamble for the seat; True if the player's hand is better (a tie loses)."""
    pk, st, rs = ctx.pk, ctx.st, ctx.rs
    n_left = pk.scal[K_N_FATE]
    deck = work(pk, st, L_W_DECK)[:n_left]
    for i in range(n_left):
        deck[i] = i
    hand5 = work(pk, st, L_W_HAND)
    hand, ranks, suits = hand5[0:5], hand5[5:10], hand5[10:15]
    st[ST_GAMBLES_PLAYED] += 1
    for i in range(5):
        hand[i] = _draw(rs, deck, n_left)
        n_left -= 1
        ranks[i] = pk.fate_rank[hand[i]]
        suits[i] = pk.fate_suit[hand[i]]
    free = free_exchanges(pk, st, seat)
    mask, spend = decide.gamble_exchange(ctx, seat, ranks, suits, free)
    n = 0
    for i in range(5):
        n += (mask >> i) & 1
    b = player_base(pk, seat)
    if mask < 0 or mask >= 32:
        raise ValueError("strategy returned an illegal exchange mask")
    if spend and st[b + P_RESOLVE] <= 0:
        raise ValueError("strategy spends Resolve it does not have in a gamble")
    if n > (codes.RESOLVE_EXCHANGE if spend else free):
        raise ValueError("strategy exchanges more cards than allowed")
    if spend:
        st[b + P_RESOLVE] -= 1
        st[ST_RESOLVE_SPENT] += 1
    for i in range(5):
        if (mask >> i) & 1:
            hand[i] = _draw(rs, deck, n_left)
            n_left -= 1
            ranks[i] = pk.fate_rank[hand[i]]
            suits[i] = pk.fate_suit[hand[i]]
    mine = hand_value_arr_nb(ranks, suits)
    for i in range(5):
        c = _draw(rs, deck, n_left)
        n_left -= 1
        ranks[i] = pk.fate_rank[c]
        suits[i] = pk.fate_suit[c]
    theirs = hand_value_arr_nb(ranks, suits)
    won = mine > theirs
    if won:
        st[ST_GAMBLES_WON] += 1
    return won
