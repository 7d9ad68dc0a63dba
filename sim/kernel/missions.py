"""Kernel twin of ``sim.rules.missions``: dealing, flipping and rewarding secret missions."""

from __future__ import annotations

import numpy as np
from numba import config
from numba.np.arrayobj import reshape_unchecked

from sim.content import constants as codes
from sim.jit import KERNEL_OPTIONS, njit
from sim.kernel import strategy as decide
from sim.kernel.decks import (
    cards_in,
    discard,
    discard_status,
    draw_card,
    draw_top_secret,
    gain_resolve,
    gain_un,
    player_base,
    raise_skill,
    skill_max,
    status_holds_kind,
    work,
)
from sim.kernel.layout import (
    C_PLAYERS,
    D_NDISC,
    K_N_STATUS,
    L_FATE,
    L_FCAP,
    L_STATUS,
    L_TS,
    L_W_MOPTS,
    N_SKILLS,
    P_FLIPPED,
    P_MISSIONS,
    P_N_MISSIONS,
    P_RESOLVE,
    P_RESOLVE_MAX,
    P_SKILLS,
    P_SPACE,
    S_UN_SUPPLY,
    ST_MISSIONS_COMPLETED,
)
from sim.rng import FATE

jit = njit(**KERNEL_OPTIONS)
# views into the state vector cannot be returned from a runtime-free function: inline them
inline_jit = njit(inline="always", **KERNEL_OPTIONS)
# a view with the given shape and strides, made in place (numba's own as_strided lowers to it;
# the overload itself may not return a view without numba's runtime); numpy's as plain Python
as_view = np.lib.stride_tricks.as_strided if config.DISABLE_JIT else reshape_unchecked


@inline_jit
def work_rows(pk, st, region, rows, cols):
    """The first ``rows * cols`` ints of a scratch region (``L_W_*``) as a [rows, cols] view."""
    flat = work(pk, st, region)[: rows * cols]
    # not reshape(), which calls numba's general C helper (numba_attempt_nocopy_reshape) every time
    return as_view(flat, (rows, cols), (cols * flat.itemsize, flat.itemsize))


@jit
def deal_missions(ctx, seat):
    """Draw two Fate cards as the player's secret-mission cities."""
    pk, st, rs = ctx.pk, ctx.st, ctx.rs
    b = player_base(pk, seat)
    st[b + P_N_MISSIONS] = 0
    for i in range(2):
        card = draw_card(st, pk.lay[L_FATE], pk.lay[L_FCAP], rs, FATE)
        if card < 0:
            raise RuntimeError("Fate deck exhausted while dealing secret missions")
        st[b + P_MISSIONS + i] = card
        st[b + P_N_MISSIONS] = i + 1
    st[b + P_FLIPPED] = 0
    st[b + P_FLIPPED + 1] = 0


@jit
def flip_missions(pk, st, seat):
    """On a mission city at the start of the encounter phase, that mission card flips."""
    b = player_base(pk, seat)
    for i in range(st[b + P_N_MISSIONS]):
        if not st[b + P_FLIPPED + i] and pk.fate_city[st[b + P_MISSIONS + i]] == st[b + P_SPACE]:
            st[b + P_FLIPPED + i] = 1


@jit
def mission_reward(ctx, seat):
    """Both mission cards flipped: claim one reward, then draw two new missions."""
    pk, cfg, st = ctx.pk, ctx.cfg, ctx.st
    b = player_base(pk, seat)
    if not (st[b + P_FLIPPED] and st[b + P_FLIPPED + 1]):
        return
    st[ST_MISSIONS_COMPLETED] += 1
    opts = work_rows(pk, st, L_W_MOPTS, pk.region_size[L_W_MOPTS] // 2, 2)
    opts[:] = 0
    n = 0
    tsb = pk.lay[L_TS]
    if cards_in(st, tsb) + st[tsb + D_NDISC] > 0:
        opts[n, 0] = codes.R_TOP_SECRET
        n += 1
    if st[b + P_RESOLVE] < st[b + P_RESOLVE_MAX]:
        opts[n, 0] = codes.R_RESOLVE
        n += 1
    if st[S_UN_SUPPLY] > 0:
        opts[n, 0] = codes.R_UN
        n += 1
    for s in range(N_SKILLS):
        if st[b + P_SKILLS + s] < skill_max(pk, st, seat):
            opts[n, 0] = codes.R_SKILL
            opts[n, 1] = s
            n += 1
    # discard a negative status card: one option per negative kind held, ascending kind
    o = pk.lay[L_STATUS]
    for kind in range(pk.status_polarity.shape[0]):
        if pk.status_polarity[kind] == codes.NEGATIVE and status_holds_kind(pk, st, seat, kind):
            opts[n, 0] = codes.R_DISCARD_STATUS
            opts[n, 1] = kind
            n += 1
    if n:
        i = decide.mission_reward(ctx, seat, opts, n)
        if i < 0 or i >= n:
            raise ValueError("strategy chose an illegal mission reward")
        kind = opts[i, 0]
        if kind == codes.R_TOP_SECRET:
            draw_top_secret(ctx, seat)
        elif kind == codes.R_RESOLVE:
            gain_resolve(pk, st, seat, pk.setup_mission_resolve[cfg[C_PLAYERS]])
        elif kind == codes.R_UN:
            gain_un(pk, st, seat)
        elif kind == codes.R_DISCARD_STATUS:
            for card in range(pk.scal[K_N_STATUS]):  # the lowest-id card of that kind
                if st[o + card] == seat and pk.status_type[card] == opts[i, 1]:
                    discard_status(pk, st, card)
                    break
        else:
            raise_skill(pk, st, seat, opts[i, 1], 1)
    for i in range(st[b + P_N_MISSIONS]):
        discard(st, pk.lay[L_FATE], pk.lay[L_FCAP], st[b + P_MISSIONS + i])
    deal_missions(ctx, seat)
