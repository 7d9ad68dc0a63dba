"""The clock a core really runs at while it works (not the TSC's base clock), from a chain of multiplies.

``perf`` reads no hardware counters on a virtual machine, so instructions a cycle
cannot be read off the CPU. This measures the cycle instead: a compiled loop of
64-bit multiplies, each waiting on the one before, takes 3 cycles a multiply on
every x86-64 core since Intel's Sandy Bridge and AMD's Zen (``imul r64, r64``
latency), whatever the clock; the wall time of a long chain then gives the cycles
a second. Together with ``count_instructions.py`` (instructions a game) and a
bench (games a second), that gives the kernel's instructions a cycle:

    .venv/bin/python tools/core_clock.py
"""

from __future__ import annotations

import argparse
import statistics
import time

from numba import njit

IMUL_LATENCY = 3  # cycles of a dependent 64-bit imul (Intel since Sandy Bridge, AMD since Zen)


@njit(cache=False)
def _chain(x, n):
    """``n`` rounds of two dependent squarings (wrapping int64): 2n multiplies in a row."""
    for _ in range(n):
        x = x * x
        x = x * x
    return x


def core_ghz(multiplies: int = 2_000_000_000, repeats: int = 3) -> list[float]:
    """The core's clock in GHz from ``repeats`` timings of a chain of ``multiplies`` multiplies."""
    _chain(3, 10)  # compile first
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        _chain(3, multiplies // 2)
        out.append(multiplies * IMUL_LATENCY / (time.perf_counter() - t) / 1e9)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--multiplies", type=int, default=2_000_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    ghz = core_ghz(args.multiplies, args.repeats)
    print(f"core clock: {statistics.median(ghz):.2f} GHz (median of {', '.join(f'{g:.2f}' for g in ghz)}; "
          f"{IMUL_LATENCY} cycles a dependent multiply)")


if __name__ == "__main__":
    main()
