"""Shared helpers of the kernel-vs-reference equality tests (tests/test_kernel_*.py)."""

from __future__ import annotations

import os

import numpy as np
from numba import njit

import strategies
from sim.content import load
from sim.kernel import layout, packref
from sim.kernel.packref import kernel_pack
from sim.rng import COUNTS, N_SOURCES, STATE_SIZE
from sim.rules import Settings
from sim.rules.setup import setup_game

# Under NUMBA_DISABLE_JIT=1 the kernel runs as plain Python: keep the samples small.
NO_JIT = os.environ.get("NUMBA_DISABLE_JIT", "") not in ("", "0")
STRATEGY_NAMES = ("heuristic", "cautious", "bold", "random")
VARIANTS = (None, "easier", "dirty", "easier,dirty-lobo", "fixed-skills")

_CONTENT = None
_PACK = None
_KPACK = None


def content_and_pack():
    """(Content, layout.Pack): the default pack and its namedtuple bundle (Python side)."""
    global _CONTENT, _PACK
    if _CONTENT is None:
        _CONTENT = load()
        _PACK = layout.pack(_CONTENT)
    return _CONTENT, _PACK


def kernel_bundle():
    """The bundle jitted kernel functions take (a PackRef; the namedtuple without JIT)."""
    global _KPACK
    if _KPACK is None:
        _KPACK = kernel_pack(content_and_pack()[1])
    return _KPACK


def kernel_context(pk=None, cfg=None, st=None, rs=None, sid=0, prm=None):
    """A kernel :class:`~sim.kernel.layout.Context` from the parts a test has (the rest empty)."""
    empty = np.zeros(0, dtype=np.int64)
    return packref.kernel_context(
        kernel_bundle() if pk is None else pk,
        empty if cfg is None else cfg,
        empty if st is None else st,
        empty if rs is None else rs,
        int(sid),
        np.zeros(0, dtype=np.float64) if prm is None else prm,
    )


def n_cases(full: int, no_jit: int) -> int:
    """Sample size: ``full`` compiled, ``no_jit`` under NUMBA_DISABLE_JIT=1."""
    return no_jit if NO_JIT else full


def reference_game(players: int, name: str, seed: int, game: int, variant=None):
    """A reference game right after set-up, plus its kernel twins: (g, settings, cfg, sid, prm)."""
    c, _ = content_and_pack()
    s = Settings.build(c, players, None, variant)
    g = setup_game(c, s, [strategies.make(name) for _ in range(players)], seed, game)
    sid, prm = layout.strategy_vector(strategies.make(name))
    return g, s, layout.settings_vector(c, s), sid, prm


def kernel_copy(g):
    """(st, rs): the kernel state vector and stream state of a reference position."""
    _, pk = content_and_pack()
    st = layout.encode(pk, g)
    rs = g.rng.state()
    return st, rs


def new_rng_state() -> np.ndarray:
    return np.zeros(STATE_SIZE, dtype=np.int64)


def assert_same(g, st, rs, where: str = "") -> None:
    """The kernel state equals the reference position, random stream counters included."""
    _, pk = content_and_pack()
    a = layout.snapshot(g)
    b = layout.snapshot_state(pk, st, len(g.players))
    if a != b:
        diff = {k: (a[k], b[k]) for k in a if a[k] != b[k]}
        raise AssertionError(f"{where}: kernel state differs from the reference: {diff}")
    rebuilt = st.copy()  # the counts the kernel keeps (cards, advanced skills held) equal a count from scratch
    layout.count_held(pk, rebuilt)
    assert np.array_equal(rebuilt, st), f"{where}: the counts kept (S_HELD_*, S_ADV_HELD) differ from a count from scratch"
    counts = [int(x) for x in rs[COUNTS:COUNTS + N_SOURCES]]
    assert counts == g.rng.counts, f"{where}: stream counters {counts} != reference {g.rng.counts}"


# --- the base strategy's answer to each decision without options: view.base_rest() ... (KernelStrategy tests)
@njit
def base_rest(view):
    return view.base_rest()


@njit
def base_heal_all(view):
    return view.base_heal_all()


@njit
def base_intel_to_pool(view):
    return view.base_intel_to_pool()


@njit
def base_use_watch(view):
    return view.base_use_watch()


@njit
def base_status_top_secret(view):
    return view.base_status_top_secret()


OPTIONLESS = {"rest": base_rest, "heal_all": base_heal_all, "intel_to_pool": base_intel_to_pool,
              "use_watch": base_use_watch, "status_top_secret": base_status_top_secret}
