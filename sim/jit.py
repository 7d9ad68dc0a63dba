"""Numba flags in one place, and compiled twins of plain-Python functions.

Everything that decides a game is compiled with the same options: on-disk cache,
no fastmath (floating-point shortcuts must never change an outcome).
"""

from __future__ import annotations

import types
from collections.abc import Iterable

from numba import njit

JIT_OPTIONS = {"cache": True, "nogil": True, "fastmath": False}
# The game kernel never allocates: its scratch space lives in the state vector. Without
# numba's runtime (NRT) a compiled call no longer increments and decrements the atomic
# reference count of every array argument, which was a seventh of the kernel's time.
# Such a function cannot create or return a new array (numba refuses to compile it).
KERNEL_OPTIONS = {**JIT_OPTIONS, "_nrt": False}
PARALLEL_OPTIONS = {**JIT_OPTIONS, "parallel": True}


def jit(func):
    """Compile ``func`` with the project's standard options."""
    return njit(**JIT_OPTIONS)(func)


def compile_twins(
    namespace: dict, names: Iterable[str], replacements: dict | None = None, allocating: Iterable[str] = ()
) -> dict:
    """Compile plain functions of ``namespace`` so that they call each other compiled.

    The plain-Python originals stay untouched (and keep calling plain Python),
    so a readable engine and a kernel can share one source of truth for small
    pure helpers such as the random streams or the poker hand evaluator.
    ``replacements`` maps a name to a different plain function compiled in its
    place (a faster formulation with identical results, tested as such).
    The twins are compiled with :data:`KERNEL_OPTIONS` (no runtime), except those named
    in ``allocating`` (they create arrays), which get :data:`JIT_OPTIONS`.
    Returns ``{name: dispatcher}``.
    """
    allocating = set(allocating)
    env = dict(namespace)
    out = {}
    for name, func in (replacements or {}).items():
        env[name] = out[name] = njit(**(JIT_OPTIONS if name in allocating else KERNEL_OPTIONS))(func)
    for name in names:
        if name in out:
            continue
        f = namespace[name]
        clone = types.FunctionType(f.__code__, env, f.__name__, f.__defaults__, f.__closure__)
        clone.__qualname__ = f.__qualname__
        clone.__module__ = f.__module__
        clone.__doc__ = f.__doc__
        dispatcher = njit(**(JIT_OPTIONS if name in allocating else KERNEL_OPTIONS))(clone)
        env[name] = dispatcher
        out[name] = dispatcher
    return out
