"""Numba flags in one place, and compiled twins of plain-Python functions.

Everything that decides a game is compiled with the same options: on-disk cache,
no fastmath (floating-point shortcuts must never change an outcome).
"""

from __future__ import annotations

import types
from collections.abc import Iterable

from numba import config
from numba import types as nbtypes
from numba.core.registry import CPUDispatcher

from sim._cache import refresh_cache

refresh_cache()  # drop compiled code made from other sources or flags before any is loaded

JIT_OPTIONS = {"cache": True, "nogil": True, "fastmath": False}
# The game kernel never allocates: its scratch space lives in the state vector. Without
# numba's runtime (NRT) a compiled call no longer increments and decrements the atomic
# reference count of every array argument, which was a seventh of the kernel's time.
# Such a function cannot create or return a new array (numba refuses to compile it).
KERNEL_OPTIONS = {**JIT_OPTIONS, "_nrt": False, "no_cfunc_wrapper": True}


# Compiled code of these modules (its symbols start so) indexes arrays without Python's
# negative-index wraparound: every index it uses is >= 0 (the tests run it under
# NUMBA_BOUNDSCHECK=1 too, where a negative index raises IndexError instead of
# wrapping). Numba otherwise adds ``if i < 0: i += n`` to every ``st[off + t]``, which
# costs a compare and a select per access and turns the token scans into gathers.
NO_WRAPAROUND = ("_ZN3sim6kernel", "_ZN3sim3rng", "_ZN3sim5poker")


def _without_wraparound() -> None:
    """Make numba skip the wraparound of signed indices inside :data:`NO_WRAPAROUND` code only."""
    from numba.np import arrayobj

    if getattr(arrayobj.fix_integer_index, "no_wraparound", False):
        return
    plain = arrayobj.fix_integer_index

    def fix_integer_index(context, builder, idxty, idx, size):
        """numba's index fix-up, minus the wraparound in the kernel's own functions."""
        if idxty.signed and builder.function.name.startswith(NO_WRAPAROUND):
            return context.cast(builder, idx, idxty, nbtypes.intp)
        return plain(context, builder, idxty, idx, size)

    fix_integer_index.no_wraparound = True
    arrayobj.fix_integer_index = fix_integer_index


_without_wraparound()


class Dispatcher(CPUDispatcher):
    """numba's dispatcher, compiling one version per argument *type*, never per constant.

    Plain numba compiles a callee again for each literal argument a caller passes
    (``draw_card(..., FATE)``, ``heal(pk, st, seat, 2)``, ``seat = 0``...): the kernel
    compiled 258 versions of its ~100 functions. Typing calls with the arguments'
    non-literal types compiles each function once (the code is the same; LLVM still
    sees the constants where it inlines).
    """

    def get_call_template(self, args, kws):
        args = tuple(nbtypes.unliteral(a) for a in args)
        kws = {k: nbtypes.unliteral(v) for k, v in kws.items()}
        return super().get_call_template(args, kws)


def njit(**options):
    """``numba.njit(**options)`` with :class:`Dispatcher` (plain Python under NUMBA_DISABLE_JIT)."""
    options = dict(options)
    cache = options.pop("cache", False)
    options["nopython"] = True

    def wrap(func):
        if config.DISABLE_JIT:
            return func
        dispatcher = Dispatcher(py_func=func, locals={}, targetoptions=options)
        if cache:
            dispatcher.enable_caching()
        return dispatcher

    return wrap


def jit(func):
    """Compile ``func`` with the project's standard options."""
    return njit(**JIT_OPTIONS)(func)


def compile_twins(
    namespace: dict, names: Iterable[str], replacements: dict | None = None, runtime_free: Iterable[str] = ()
) -> dict:
    """Compile plain functions of ``namespace`` so that they call each other compiled.

    The plain-Python originals stay untouched (and keep calling plain Python),
    so a readable engine and a kernel can share one source of truth for small
    pure helpers such as the random streams or the poker hand evaluator.
    ``replacements`` maps a name to a different plain function compiled in its
    place (a faster formulation with identical results, tested as such).
    The twins are compiled with :data:`JIT_OPTIONS`, except those named in
    ``runtime_free`` (they never create an array; the kernel calls them), which
    get :data:`KERNEL_OPTIONS`. Returns ``{name: dispatcher}``.
    """
    runtime_free = set(runtime_free)

    def compiled(name, func):
        return njit(**(KERNEL_OPTIONS if name in runtime_free else JIT_OPTIONS))(func)

    env = dict(namespace)
    out = {}
    for name, func in (replacements or {}).items():
        env[name] = out[name] = compiled(name, func)
    for name in names:
        if name in out:
            continue
        f = namespace[name]
        clone = types.FunctionType(f.__code__, env, f.__name__, f.__defaults__, f.__closure__)
        clone.__qualname__ = f.__qualname__
        clone.__module__ = f.__module__
        clone.__doc__ = f.__doc__
        dispatcher = compiled(name, clone)
        env[name] = dispatcher
        out[name] = dispatcher
    return out
