"""sim/jit.py optimizes a compiled function's whole module once, where Python calls it: a callee of ours
keeps numba's per-function passes only and is optimized whole inside its caller."""

import numba
import pytest

from sim import jit
from tests.kernel_support import NO_JIT

pytestmark = pytest.mark.skipif(NO_JIT, reason="compiled code")


@pytest.fixture
def finished(monkeypatch):
    """[(library name, whether its whole-module optimization was skipped)] of each library numba finishes."""
    seen = []
    plain = jit._linked_only

    def spy():
        skipped = plain()
        seen.append((jit._compiling[-1].py_func.__name__ if jit._compiling else None, skipped))
        return skipped

    monkeypatch.setattr(jit, "_linked_only", spy)
    return seen


def _skipped(seen, name):
    (skipped,) = {s for n, s in seen if n == name}
    return skipped


def test_a_callee_of_ours_is_optimized_whole_only_in_the_function_python_calls(finished):
    @jit.njit()
    def callee_ours(x):
        return x * 3 + 1

    @numba.njit
    def callee_plain(x):  # a user's own numba function: optimized as numba always does
        return x - 2

    @jit.njit()
    def entry(x):
        return callee_ours(x) + callee_plain(x)

    assert entry(5) == 16 + 3
    assert _skipped(finished, "callee_ours") is True
    assert _skipped(finished, "callee_plain") is False
    assert _skipped(finished, "entry") is False
    # called from Python on its own, the callee gives the same answer (its code is only less optimized)
    assert callee_ours(5) == 16


def test_a_part_compiled_ahead_for_its_caller_counts_as_a_callee(finished):
    @jit.njit()
    def part(x):
        return x + 7

    with jit.callee_part():
        part.compile((numba.types.int64,))
    assert _skipped(finished, "part") is True
    assert jit._callee_parts == [0]

    @jit.njit()
    def alone(x):
        return x + 8

    assert alone(1) == 9 and _skipped(finished, "alone") is False
