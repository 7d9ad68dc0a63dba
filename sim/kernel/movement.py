"""Kernel twin of ``sim.rules.movement``: legal moves in the canonical order, moving, resting.

A move list is an int64 array ``moves[cap, 4]`` with rows ``(dest, means,
resolve, steps)`` (the reference's :class:`~sim.rules.choices.Move`) and a count;
``cap`` = :func:`move_capacity`.
"""

from __future__ import annotations

from sim.content import constants as codes
from sim.jit import KERNEL_OPTIONS, njit
from sim.kernel import strategy as decide
from sim.kernel.decks import airport_open, extra_mp, play_top_secret, player_base, top_secret_card
from sim.kernel.layout import (
    C_PLAYERS,
    K_N_SPACES,
    L_W_SEEN,
    P_GIVES,
    P_INJ,
    P_RESOLVE,
    P_SPACE,
    P_UN,
    S_MOVE_RES,
    S_UN_SUPPLY,
    ST_RESOLVE_SPENT,
    ST_UN_USED,
)
from sim.kernel.villain import heal, villain_advancement
from sim.rng import DICE, next_below_nb

jit = njit(**KERNEL_OPTIONS)
inline_jit = njit(inline="always", **KERNEL_OPTIONS)



MOVES_PER_SPACE = 5  # to each space: walk, plane, plane + Resolve, two UN means


def move_capacity(pk) -> int:
    """Most moves a position can offer (stay, then :data:`MOVES_PER_SPACE` a space): the move list's rows."""
    return 1 + MOVES_PER_SPACE * int(pk.scal[K_N_SPACES])


@jit
def un_giver(ctx, seat):
    """The first other seat who gives UN Transports and has one (Calli's gift), or -1."""
    pk, cfg, st = ctx.pk, ctx.cfg, ctx.st
    for q in range(cfg[C_PLAYERS]):
        bq = player_base(pk, q)
        if q != seat and st[bq + P_GIVES] != 0 and st[bq + P_UN] > 0:
            return q
    return -1


@jit
def can_rest(pk, st, seat):
    """Resting needs 2+ injuries and is not allowed on a regional area or island."""
    b = player_base(pk, seat)
    return st[b + P_INJ] >= 2 and pk.space_kind[st[b + P_SPACE]] != codes.REGIONAL


@jit
def _add(moves, n, dest, means, res, steps):
    """Append the move row ``(dest, means, res, steps)`` at ``moves[n]``; returns ``n + 1``."""
    moves[n, 0] = dest
    moves[n, 1] = means
    moves[n, 2] = res
    moves[n, 3] = steps
    return n + 1


@jit
def legal_moves(ctx, seat, moves):
    """Every legal move of the seat in ``moves`` (canonical order); returns their number."""
    pk, st = ctx.pk, ctx.st
    b = player_base(pk, seat)
    here = st[b + P_SPACE]
    can_resolve = st[b + P_RESOLVE] > 0 and st[S_MOVE_RES] == 0
    n = 0
    if pk.space_kind[here] != codes.REGIONAL:
        n = _add(moves, n, here, codes.M_STAY, 0, 0)
    walk_dest, walk_mp = pk.walk_dest, pk.walk_mp
    free = codes.BASE_MP + extra_mp(pk, st, seat)  # an extra_move status card: one more MP
    for k in range(pk.walk_start[here], pk.walk_start[here + 1]):
        mp = walk_mp[k]
        if mp <= free:
            n = _add(moves, n, walk_dest[k], codes.M_WALK, 0, mp)
        elif mp == free + 1 and can_resolve:
            n = _add(moves, n, walk_dest[k], codes.M_WALK, 1, mp)
    if airport_open(pk, st, here):
        # plane to every other open airport; with Resolve, one step further: the union of
        # the open airports' neighbourhoods, a bit set of ``words`` int64 in ``L_W_SEEN``
        airports, reach = pk.airport_spaces, pk.airport_reach
        words = reach.shape[1]
        acc = pk.lay[L_W_SEEN]
        for w in range(words):
            st[acc + w] = 0
        for i in range(airports.shape[0]):
            a = airports[i]
            if a != here and airport_open(pk, st, a):
                n = _add(moves, n, a, codes.M_PLANE, 0, codes.BASE_MP)
                for w in range(words):
                    st[acc + w] |= reach[a, w]
        if can_resolve:
            n_s = pk.scal[K_N_SPACES]
            for w in range(words):
                m = st[acc + w]
                if m == 0:
                    continue
                for t in range(w * 64, min(n_s, w * 64 + 64)):
                    if (m >> (t - w * 64)) & 1:
                        n = _add(moves, n, t, codes.M_PLANE, 1, codes.BASE_MP + 1)
    # UN Transport: any city or ocean space, never into a regional area or island
    un_own = st[b + P_UN] > 0
    gift = not un_own and un_giver(ctx, seat) >= 0
    ts_un = top_secret_card(pk, st, seat, codes.TS_UN_TRANSPORT) >= 0
    dests = pk.un_dests
    for m in (codes.M_UN, codes.M_UN_GIFT, codes.M_TOP_SECRET_UN):
        if (m == codes.M_UN and un_own) or (m == codes.M_UN_GIFT and gift) or (m == codes.M_TOP_SECRET_UN and ts_un):
            for i in range(dests.shape[0]):
                dest = dests[i]
                if dest != here:
                    n = _add(moves, n, dest, m, 0, 0)
    return n


@jit
def rest(ctx, seat):
    """Rest action: heal 2 injuries; in a solo game also roll the rest die (Blue)."""
    pk, cfg, st, rs = ctx.pk, ctx.cfg, ctx.st, ctx.rs
    heal(pk, st, seat, 2)
    die = pk.setup_rest_roll_die[cfg[C_PLAYERS]]
    if die >= 0:
        face = next_below_nb(rs, DICE, 6)
        if not pk.die_success[die, face]:
            villain_advancement(ctx)


@inline_jit
def apply_move(ctx, seat, dest, means, res):
    """Carry out a chosen move, paying Resolve / UN tokens / Top Secret cards."""
    pk, st = ctx.pk, ctx.st
    b = player_base(pk, seat)
    if res:
        st[b + P_RESOLVE] -= 1
        st[S_MOVE_RES] = 1
        st[ST_RESOLVE_SPENT] += 1
    if means == codes.M_UN:
        st[b + P_UN] -= 1
        st[S_UN_SUPPLY] += 1
        st[ST_UN_USED] += 1
    elif means == codes.M_UN_GIFT:
        q = un_giver(ctx, seat)
        if q >= 0:
            st[player_base(pk, q) + P_UN] -= 1
        st[S_UN_SUPPLY] += 1
        st[ST_UN_USED] += 1
    elif means == codes.M_TOP_SECRET_UN:
        play_top_secret(pk, st, seat, top_secret_card(pk, st, seat, codes.TS_UN_TRANSPORT))
        st[ST_UN_USED] += 1
    st[b + P_SPACE] = dest


@jit
def movement_phase(ctx, seat, moves):
    """Rest or move. Returns True when the player rested (no encounter, 2 villain cards)."""
    pk, st = ctx.pk, ctx.st
    if can_rest(pk, st, seat) and decide.rest(ctx, seat):
        rest(ctx, seat)
        return True
    b = player_base(pk, seat)
    gift = st[b + P_UN] == 0 and un_giver(ctx, seat) >= 0
    dest, means, res = decide.direct_move(ctx, seat, gift)
    if means >= 0:  # the strategy found its move without the list
        apply_move(ctx, seat, dest, means, res)
        return False
    n = legal_moves(ctx, seat, moves)
    if n == 0:
        raise RuntimeError("a player has no legal move")
    i = decide.move(ctx, seat, moves, n)
    if i < 0 or i >= n:
        raise ValueError("strategy chose an illegal move")
    apply_move(ctx, seat, moves[i, 0], moves[i, 1], moves[i, 2])
    return False
