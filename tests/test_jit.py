"""sim/jit.py optimizes a kernel function's whole module once, where Python calls it: a kernel callee keeps
numba's per-function passes only and is optimized whole inside its caller, which owns its copies."""

import re
import threading

import numba
import numpy as np
import pytest

from sim import jit
from tests.kernel_support import NO_JIT

pytestmark = pytest.mark.skipif(NO_JIT, reason="compiled code")


@pytest.fixture
def optimized(monkeypatch):
    """{function name: the linkage of each function its library defines, besides its own, when numba's whole-module
    optimization ran on it}; a library missing from it was not optimized as a whole."""
    seen = {}
    plain = jit._plain_optimize

    def spy(library):
        func = jit._compiling()[-1].py_func
        if library.name == func.__qualname__:  # the function's own library, not one numba made meanwhile
            own = func.__name__
            seen[own] = {f.name: f.linkage.name for f in library._final_module.functions
                         if not f.is_declaration and own not in f.name}
        plain(library)

    monkeypatch.setattr(jit, "_plain_optimize", spy)
    return seen


def _kernel(func, module="sim.kernel._jit_probe"):
    """``func`` compiled as a function of a kernel module (no disk cache)."""
    func.__module__ = module
    return jit.njit()(func)


def test_a_kernel_callee_is_optimized_whole_only_in_the_function_python_calls(optimized):
    def callee_kernel(x):
        return x * 3 + 1

    callee_kernel = _kernel(callee_kernel)

    @numba.njit
    def callee_plain(x):  # a user's own numba function: optimized as numba always does
        return x - 2

    def callee_elsewhere(x):  # one of ours outside sim.kernel (sim.odds calls samplers Python calls too)
        return x + 10

    callee_elsewhere = _kernel(callee_elsewhere, "sim.odds_probe")

    def entry(x):
        return callee_kernel(x) + callee_plain(x) + callee_elsewhere(x)

    entry = _kernel(entry)
    assert entry(5) == 16 + 3 + 15
    assert "callee_kernel" not in optimized
    assert {"callee_plain", "callee_elsewhere", "entry"} <= set(optimized)
    # the entry point owns its copies of what it calls: internal, under names no other library defines
    copies = optimized["entry"]
    assert any("callee_kernel" in name for name in copies), copies
    assert set(copies.values()) == {"internal"}, copies
    assert all(re.search(r"\.own\.[0-9a-f]{16}$", name) for name in copies), copies
    # called from Python on its own, the callee gives the same answer (its code is only less optimized)
    assert callee_kernel(5) == 16


def test_a_kernel_callees_machine_code_takes_the_quick_path_and_its_callers_link_its_plain_ir():
    """A callee's own machine code (run only where Python calls it on its own) is made with ``optnone``; what its
    callers link in, and the cache keeps for them, is its IR without the mark, so they optimize it fully."""

    def quick_callee(x):
        total = 0
        for i in range(x):
            total += i * i
        return total

    quick_callee = _kernel(quick_callee)

    def quick_entry(x):
        return quick_callee(x) + 1

    quick_entry = _kernel(quick_entry)
    assert quick_entry(4) == 15 and quick_callee(4) == 14

    def marks(module, name):
        return {f.name: {word for group in f.attributes for word in bytes(group).split()}
                for f in module.functions if not f.is_declaration and name in f.name}

    callee = next(iter(quick_callee.overloads.values())).library
    own = marks(callee._final_module, "quick_callee")
    assert own and all(b"optnone" in a and b"noinline" in a for a in own.values()), own
    linking = marks(callee._get_module_for_linking(), "quick_callee")
    assert linking.keys() == own.keys() and not any(b"optnone" in a for a in linking.values()), linking
    # the cache keeps the linking module beside the machine code: a caller compiled in another process links that
    assert callee.serialize_using_object_code()[2][1] == callee._get_module_for_linking().as_bitcode()
    entry = next(iter(quick_entry.overloads.values())).library
    assert not any(b"optnone" in a for a in marks(entry._final_module, "").values())


def test_a_part_compiled_ahead_for_its_caller_counts_as_a_callee_in_its_thread_only(optimized):
    def part(x):
        return x + 7

    def alone(x):
        return x + 8

    part, alone = _kernel(part), _kernel(alone)
    elsewhere = []
    with jit.callee_part():
        part.compile((numba.types.int64,))
        # another thread's compile meanwhile is its own entry point
        t = threading.Thread(target=lambda: elsewhere.append(alone(1)))
        t.start()
        t.join()
    assert elsewhere == [9]
    assert "part" not in optimized and "alone" in optimized
    assert jit._state.parts == 0 and jit._compiling() == []


def test_a_function_without_a_module_is_optimized_as_numba_does(optimized):
    """A pairing's adapters are made by exec(): no module (``__module__`` None), not a kernel callee."""
    env = {}
    exec("def made(x):\n    return x + 1\n", env)  # noqa: S102
    made = jit.njit()(env["made"])

    def entry(x):
        return made(x) * 2

    entry = _kernel(entry)
    assert env["made"].__module__ is None and entry(1) == 4
    assert {"made", "entry"} <= set(optimized)


def test_a_failed_compile_leaves_no_compile_behind():
    def broken(x):
        return x.no_such_attribute

    broken = _kernel(broken)
    with pytest.raises(numba.core.errors.TypingError):
        broken(1)
    assert jit._compiling() == []


def _probe_module(source: str, monkeypatch):
    """A kernel module made of ``source`` (``njit`` is sim.jit's), registered, as numba names recursive calls by
    their function's module."""
    import sys
    import types

    module = types.ModuleType("sim.kernel._jit_probe")
    module.njit = jit.njit
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(source, vars(module))  # noqa: S102
    return module


def test_a_library_compiled_after_an_entry_point_calls_its_own_copy_of_a_shared_callee(monkeypatch):
    """The JIT's loader lists a module's internal functions in the process-wide symbol table: had the entry
    point's copies kept their names, another library's weak copy of the same callee would bind to the entry
    point's, whose arguments LLVM changed for the entry point's calls alone (``step`` is always 1 there,
    ``unused`` is dropped): a crash. ``walk`` calls itself, so LLVM keeps it a function of its own."""
    m = _probe_module(
        "@njit()\n"
        "def walk(n, step, unused):\n"
        "    return n if n < 2 else walk(n - step, step, unused) + walk(n - 2 * step, step, unused) + 1\n"
        "@njit()\n"
        "def entry(n):\n"
        "    return walk(n, 1, 0.5) * 2\n", monkeypatch)
    assert m.entry(12) == 2 * m.walk.py_func(12, 1, 0.5) == 752

    @numba.njit
    def later(n, step, unused):  # a user's own numba function, compiled after the entry point
        return m.walk(n, step, unused) + 1

    assert later(20, 2, 9.5) == m.walk.py_func(20, 2, 9.5) + 1 == 34


def test_functions_calling_each_other_keep_their_names(monkeypatch, optimized):
    """Functions calling each other call through a pointer numba fills in by name once a loaded library
    defines it: the entry point's copies of those keep their names (renamed, a cached entry point's pointer
    would stay unfilled: an abort)."""
    m = _probe_module(
        "@njit()\n"
        "def even(n, unused):\n"
        "    return 1 if n == 0 else odd(n - 1, unused)\n"
        "@njit()\n"
        "def odd(n, unused):\n"
        "    return 0 if n == 0 else even(n - 1, unused)\n"
        "@njit()\n"
        "def entry(n):\n"
        "    return even(n, 0.5) * 2 + 1\n", monkeypatch)
    assert (m.entry(12), m.entry(7)) == (3, 1)
    kept = {name: linkage for name, linkage in optimized["entry"].items() if ".own." not in name}
    assert kept and set(kept.values()) == {"linkonce_odr"}, optimized["entry"]
    assert all("4even" in name or "3odd" in name for name in kept), kept

    @numba.njit
    def later(n, unused):
        return m.odd(n, unused)

    assert (later(12, 0.0), later(7, 0.0)) == (0, 1)


def test_a_library_numba_makes_during_a_callees_compile_is_optimized(monkeypatch):
    """numba finishes libraries of its own while a kernel callee compiles (here the array sort's, which it keeps
    for the process and later code reuses): only the callee's own library skips the whole-module optimization."""
    finished = []
    plain = jit._plain_optimize

    def spy(library):
        finished.append(library.name)
        plain(library)

    monkeypatch.setattr(jit, "_plain_optimize", spy)

    def sorting_callee(a):
        b = a.copy()
        b.sort()
        return b[0]

    sorting_callee = _kernel(sorting_callee)

    def entry(a):
        return sorting_callee(a) + 1

    entry = _kernel(entry)
    assert entry(np.array([3, 1, 2])) == 2
    assert "array_sort_impl" in finished and entry.py_func.__qualname__ in finished
    assert sorting_callee.py_func.__qualname__ not in finished
