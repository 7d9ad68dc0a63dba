"""Kernel twin of ``sim.rules.movement``: legal moves in the canonical order, moving, resting.

A move list is an int64 array ``moves[cap, 4]`` with rows ``(dest, means,
resolve, steps)`` (the reference's :class:`~sim.rules.choices.Move`) and a count;
``cap`` = :func:`move_capacity`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sim.content import constants as K
from sim.jit import JIT_OPTIONS
from sim.kernel import strategy as S
from sim.kernel.decks import play_top_secret, player_base, top_secret_card
from sim.kernel.layout import (
    C_PLAYERS,
    L_AIRPORT,
    P_GIVES,
    P_INJ,
    P_RESOLVE,
    P_SPACE,
    P_UN,
    S_MOVE_RES,
    S_UN_SUPPLY,
    ST_RESOLVE,
    ST_UN,
)
from sim.kernel.strategy import M_PLANE, M_STAY, M_TOP_SECRET_UN, M_UN, M_UN_GIFT, M_WALK
from sim.kernel.villain import heal, villain_advancement
from sim.rng import DICE, next_below_nb

jit = njit(**JIT_OPTIONS)

BASE_MP = 2


def move_capacity(pk) -> int:
    """Most moves a position can offer (stay, walk, plane, plane + Resolve, two UN means)."""
    return 1 + 5 * int(pk.space_kind.shape[0])


@jit
def airport_open(pk, st, space):
    """Open airport: has one, and is red (never closes) or not closed."""
    return pk.space_airport[space] != 0 and (
        pk.space_red_airport[space] != 0 or st[pk.lay[L_AIRPORT] + space] == 0
    )


@jit
def walk_costs(pk, start, budget, cost):
    """Fill ``cost[n_spaces]`` with the fewest MP to reach each space within ``budget`` (-1: no)."""
    cost[:] = -1
    cost[start] = 0
    frontier = [start]
    for mp in range(1, budget + 1):
        nxt = [start for _ in range(0)]
        for s in frontier:
            if s != start and pk.space_kind[s] == K.OCEAN:
                continue  # movement stopped in this ocean
            for k in range(pk.steps_start[s], pk.steps_start[s + 1]):
                t = pk.steps_list[k]
                if cost[t] < 0:
                    cost[t] = mp
                    nxt.append(t)
        frontier = nxt


@jit
def can_rest(pk, st, seat):
    """Resting needs 2+ injuries and is not allowed on a regional area or island."""
    b = player_base(pk, seat)
    return st[b + P_INJ] >= 2 and pk.space_kind[st[b + P_SPACE]] != K.REGIONAL


@jit
def _add(moves, n, dest, means, res, steps):
    moves[n, 0] = dest
    moves[n, 1] = means
    moves[n, 2] = res
    moves[n, 3] = steps
    return n + 1


@jit
def legal_moves(pk, cfg, st, seat, moves):
    """Every legal move of the seat in ``moves`` (canonical order); returns their number."""
    b = player_base(pk, seat)
    here = st[b + P_SPACE]
    n_s = pk.space_kind.shape[0]
    can_resolve = st[b + P_RESOLVE] > 0 and st[S_MOVE_RES] == 0
    n = 0
    if pk.space_kind[here] != K.REGIONAL:
        n = _add(moves, n, here, M_STAY, 0, 0)
    cost = np.empty(n_s, np.int64)
    walk_costs(pk, here, BASE_MP + 1, cost)
    for dest in range(n_s):
        mp = cost[dest]
        if mp < 0 or dest == here:
            continue
        if mp <= BASE_MP:
            n = _add(moves, n, dest, M_WALK, 0, mp)
        elif can_resolve:
            n = _add(moves, n, dest, M_WALK, 1, mp)
    if airport_open(pk, st, here):
        for a in range(n_s):
            if a != here and airport_open(pk, st, a):
                n = _add(moves, n, a, M_PLANE, 0, BASE_MP)
        if can_resolve:
            seen = np.zeros(n_s, np.bool_)
            for a in range(n_s):
                if a != here and airport_open(pk, st, a):
                    for k in range(pk.steps_start[a], pk.steps_start[a + 1]):
                        t = pk.steps_list[k]
                        if t != a:
                            seen[t] = True
            for t in range(n_s):
                if seen[t]:
                    n = _add(moves, n, t, M_PLANE, 1, BASE_MP + 1)
    # UN Transport: any city or ocean space, never into a regional area or island
    means = [M_UN for _ in range(0)]
    if st[b + P_UN] > 0:
        means.append(M_UN)
    else:
        for q in range(cfg[C_PLAYERS]):
            bq = player_base(pk, q)
            if q != seat and st[bq + P_GIVES] != 0 and st[bq + P_UN] > 0:
                means.append(M_UN_GIFT)
                break
    if top_secret_card(pk, st, seat, K.TS_UN_TRANSPORT) >= 0:
        means.append(M_TOP_SECRET_UN)
    for m in means:
        for dest in range(n_s):
            if dest != here and pk.space_kind[dest] != K.REGIONAL:
                n = _add(moves, n, dest, m, 0, 0)
    return n


@jit
def rest(pk, cfg, st, rs, sid, prm, seat):
    """Rest action: heal 2 injuries; in a solo game also roll the rest die (Blue)."""
    heal(pk, st, seat, 2)
    die = pk.setup_rest_roll_die[cfg[C_PLAYERS]]
    if die >= 0:
        face = next_below_nb(rs, DICE, 6)
        if not pk.die_success[die, face]:
            villain_advancement(pk, st, rs, sid, prm)


@jit
def apply_move(pk, cfg, st, seat, dest, means, res):
    """Carry out a chosen move, paying Resolve / UN tokens / Top Secret cards."""
    b = player_base(pk, seat)
    if res:
        st[b + P_RESOLVE] -= 1
        st[S_MOVE_RES] = 1
        st[ST_RESOLVE] += 1
    if means == M_UN:
        st[b + P_UN] -= 1
        st[S_UN_SUPPLY] += 1
        st[ST_UN] += 1
    elif means == M_UN_GIFT:
        for q in range(cfg[C_PLAYERS]):
            bq = player_base(pk, q)
            if st[bq + P_GIVES] != 0 and st[bq + P_UN] > 0 and q != seat:
                st[bq + P_UN] -= 1
                break
        st[S_UN_SUPPLY] += 1
        st[ST_UN] += 1
    elif means == M_TOP_SECRET_UN:
        play_top_secret(pk, st, seat, top_secret_card(pk, st, seat, K.TS_UN_TRANSPORT))
        st[ST_UN] += 1
    st[b + P_SPACE] = dest


@jit
def movement_phase(pk, cfg, st, rs, sid, prm, seat, moves):
    """Rest or move. Returns True when the player rested (no encounter, 2 villain cards)."""
    if can_rest(pk, st, seat) and S.rest(pk, st, rs, sid, prm, seat):
        rest(pk, cfg, st, rs, sid, prm, seat)
        return True
    n = legal_moves(pk, cfg, st, seat, moves)
    if n == 0:
        raise RuntimeError("a player has no legal move")
    i = S.move(pk, st, rs, sid, prm, seat, moves, n)
    if i < 0 or i >= n:
        raise ValueError("strategy chose an illegal move")
    apply_move(pk, cfg, st, seat, moves[i, 0], moves[i, 1], moves[i, 2])
    return False
