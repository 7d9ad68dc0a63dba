"""Kernel twin of ``sim.rules.endgame``: the end of the game, checked when a track moves."""

from __future__ import annotations

from sim.content import constants as codes
from sim.jit import KERNEL_OPTIONS, njit
from sim.kernel.decks import lobo, work
from sim.kernel.layout import (
    K_LOBO_LOSS,
    K_N_HENCHMEN,
    K_N_INTEL,
    L_HLEVEL,
    L_INTEL,
    L_W_POOL,
    S_LOC_TARGET,
    S_LOC_TRACK,
    S_OUTCOME,
)

jit = njit(**KERNEL_OPTIONS)


@jit
def intel_pool_counts(pk, st, out):
    """Fill ``out[4]`` with the Intel Pool by type (W, T, D, A)."""
    out[:] = 0
    off = pk.lay[L_INTEL]
    for t in range(pk.scal[K_N_INTEL]):
        if st[off + t] == codes.POOL:
            out[pk.intel_token_type[t]] += 1


@jit
def check_henchmen(pk, st):
    """All four henchmen defeated: an immediate win."""
    off = pk.lay[L_HLEVEL]
    for h in range(pk.scal[K_N_HENCHMEN]):
        if st[off + h] != codes.DEFEATED:
            return
    st[S_OUTCOME] = codes.WIN_HENCHMEN


@jit
def check_location(pk, st):
    """Location Track at its target: reveal the Pool and compare with Dr. Lobo's symbols."""
    if st[S_LOC_TRACK] < st[S_LOC_TARGET]:
        return
    loss = pk.scal[K_LOBO_LOSS]
    pos = min(max(lobo(pk, st), 0), loss - 1)
    have = work(pk, st, L_W_POOL)
    intel_pool_counts(pk, st, have)
    for i in range(pk.lobo_intel_required.shape[1]):
        if have[i] < pk.lobo_intel_required[pos, i]:
            st[S_OUTCOME] = codes.LOSS_INTEL
            return
    st[S_OUTCOME] = codes.WIN_LOCATION
