"""Numba flags in one place, and compiled twins of plain-Python functions.

Everything that decides a game is compiled with the same options: on-disk cache,
no fastmath (floating-point shortcuts must never change an outcome).
"""

from __future__ import annotations

import hashlib
import threading
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


# Whole-module optimization once, at the function Python calls. numba makes each compiled function a
# library of its own, links into it every library it calls and optimizes the lot again (LLVM's full
# module pipeline), so a kernel function was optimized once for itself and again in each caller up to
# the entry point: about 20 of the 89-95 s the whole kernel took to compile in one process. A kernel
# function (of sim.kernel) compiled while another is being compiled (a callee, typed for its caller)
# now keeps only numba's per-function passes: its code is optimized whole where it is linked in, at
# the function called from Python, which still runs the full pipeline over everything it calls. That
# function's copies of what it calls are made its own (see _own_linked_copies): numba links them in as
# weak copies, which the loader replaces by the callee's own library where that one is loaded too (a
# pairing's process, a test calling a phase), so the entry point would have run the callees'
# unoptimized code.
# The games are the same (LLVM's passes never change what the code computes); a kernel function
# compiled as a callee and then called from Python on its own runs unoptimized code, correct but
# slower (Python calls the entry points). Other numba code, this project's outside sim.kernel and a
# user's own decision functions included, is optimized as numba always does.
_state = threading.local()  # .compiling: the dispatchers being compiled, innermost last; .parts: callee_part depth
KERNEL_MODULE = "sim.kernel."


def _compiling() -> list:
    if not hasattr(_state, "compiling"):
        _state.compiling, _state.parts = [], 0
    return _state.compiling


def _plain_optimize(library) -> None:
    """numba's own whole-module optimization (replaced by :func:`_track_compiles`)."""
    raise AssertionError("sim.jit._track_compiles did not run")


def _track_compiles() -> None:
    """Keep :func:`_compiling` from numba's ``numba:compile`` events; skip the whole-module optimization of a
    library of ours (:func:`_ours`) compiled as a callee (:func:`_is_callee`), and make one that is optimized own
    its callees' copies."""
    global _plain_optimize
    from numba.core import codegen, event

    if getattr(codegen.CPUCodeLibrary._optimize_final_module, "callees_linked_only", False):
        return

    class Compiles(event.Listener):
        def on_start(self, ev):
            _compiling().append(ev.data["dispatcher"])

        def on_end(self, ev):
            stack = _compiling()
            if stack and stack[-1] is ev.data["dispatcher"]:
                stack.pop()

    event.register("numba:compile", Compiles())
    _plain_optimize = codegen.CPUCodeLibrary._optimize_final_module

    def _optimize_final_module(self):
        """numba's whole-module optimization, except for a callee of ours (see above)."""
        if _ours(self):
            if _is_callee():
                _machine_code_unoptimized(self)
                return
            _own_linked_copies(self._final_module)
        _plain_optimize(self)

    _optimize_final_module.callees_linked_only = True
    codegen.CPUCodeLibrary._optimize_final_module = _optimize_final_module


def _machine_code_unoptimized(library) -> None:
    """A kernel callee's own library (:func:`_ours`, :func:`_is_callee`) turned into machine code by LLVM's quick path (its
    functions marked ``optnone``: fast instruction selection, most machine-code optimizations skipped): a third
    less machine code time in a cold start. That code runs only where Python calls the callee on its own (a test
    calling a phase); what its callers link in is its IR as numba's per-function passes left it, set aside first
    as numba's own linking copy (its functions weak), without the marks, so the entry point optimizes it as
    before."""
    from llvmlite import binding as ll

    module = library._final_module
    linking = module.clone()
    for fn in linking.functions:  # what numba's _get_module_for_linking makes of the module
        if not fn.is_declaration and fn.linkage == ll.Linkage.external:
            fn.linkage = "linkonce_odr"
    library._shared_module = linking
    for fn in module.functions:
        attributes = {word for group in fn.attributes for word in bytes(group).split()}
        if fn.is_declaration or attributes & {b"alwaysinline", b"optsize", b"minsize"}:  # optnone contradicts them
            continue
        if b"noinline" not in attributes:
            fn.add_function_attribute("noinline")
        fn.add_function_attribute("optnone")


def _ours(library) -> bool:
    """Whether ``library`` is the own library of the innermost function being compiled, and that is a kernel
    function (one of this project's dispatchers, of a ``sim.kernel`` module). numba names a function's library
    by its qualified name; other libraries finished meanwhile (numba's runtime, a helper numba compiles for a
    call and keeps for the process) are optimized as numba always does."""
    stack = _compiling()
    # a pairing's adapters are made by exec(), with no module: optimized as numba always does
    return (bool(stack) and isinstance(stack[-1], Dispatcher) and library.name == stack[-1].py_func.__qualname__
            and (stack[-1].py_func.__module__ or "").startswith(KERNEL_MODULE))


def _is_callee() -> bool:
    """Whether the innermost function being compiled is compiled as a callee: another compile encloses it, or it
    is compiled as a part ahead of its caller (:class:`callee_part`). A library of ours (:func:`_ours`) compiled
    so is linked only: its callers optimize it."""
    return len(_compiling()) >= 2 or _state.parts > 0


def _own_linked_copies(module) -> None:
    """The weak (``linkonce_odr``) copies numba linked into ``module`` made its own: internal, under names of
    this module's (a suffix hashed from its code). Its calls then stay in its own optimized code, whatever other
    library defining the original names is loaded, and LLVM may change how it calls them (drop an argument,
    pass it in registers), since no other code can call them. The new names are needed: the JIT's loader
    puts a module's internal functions in the process-wide symbol table too, where another library's weak
    copy of the same name would bind to this module's, called as it no longer expects (a crash)."""
    from numba.core.codegen import RuntimeLinker

    # functions calling each other call through a pointer numba fills in by name, once a library defines it
    by_name = {g.name[len(RuntimeLinker.PREFIX):] for g in module.global_variables
               if g.name.startswith(RuntimeLinker.PREFIX)}
    copies = [fn for fn in module.functions
              if not fn.is_declaration and fn.linkage.name == "linkonce_odr" and fn.name not in by_name]
    if copies:
        suffix = ".own." + hashlib.sha1(module.as_bitcode()).hexdigest()[:16]
        for fn in copies:
            fn.name = fn.name + suffix
            fn.linkage = "internal"


class callee_part:
    """``with callee_part(): f.compile(sig)``: compile ``f`` as a callee (no whole-module optimization of
    its own), for a caller compiled later, which optimizes it where it links it in (a cold start's
    helper processes compile the kernel's phases ahead of its entry point). For this thread only."""

    def __enter__(self):
        _compiling()
        _state.parts += 1

    def __exit__(self, *exc):
        _state.parts -= 1


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


_track_compiles()


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
