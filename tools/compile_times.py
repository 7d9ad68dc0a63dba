"""Where the cold start goes: the first result from an empty numba cache, function by function.

Runs ``sim.simulate(players=4, games=1)`` with ``NUMBA_CACHE_DIR`` set to a fresh
temporary folder (so nothing is loaded from disk), compiling the whole kernel in this
process (not in the helper processes a cold start uses), with numba's ``numba:compile``
and ``numba:run_pass`` events recorded. Prints the wall time of the imports and of the
first result, each compiled function's own compile time (its compile minus the compiles
nested in it: numba compiles a callee while it types the caller), the time per compiler
pass, and LLVM's share split into per-function passes, whole-module optimization and
machine code. ``--json`` prints those totals as one JSON object.

    .venv/bin/python tools/compile_times.py [--top 25] [--json]
    PYTHONPATH=/path/to/checkout .venv/bin/python tools/compile_times.py   # another checkout's kernel
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--json", action="store_true", help="only the totals, as JSON")
    args = ap.parse_args()
    empty_cache()
    t0 = time.perf_counter()
    from numba.core import event

    t_numba = time.perf_counter()
    stack = []  # [name, start, nested seconds]
    own = defaultdict(float)
    total = defaultdict(float)
    passes = defaultdict(float)
    pass_stack = []

    class Compiles(event.Listener):
        def on_start(self, ev):
            d = ev.data["dispatcher"]
            stack.append([f"{d.py_func.__module__}.{d.py_func.__qualname__}", time.perf_counter(), 0.0])

        def on_end(self, ev):
            name, start, nested = stack.pop()
            dt = time.perf_counter() - start
            own[name] += dt - nested
            total[name] += dt
            if stack:
                stack[-1][2] += dt

    class Passes(event.Listener):
        def on_start(self, ev):
            pass_stack.append((ev.data["name"].split(" [")[0], time.perf_counter()))

        def on_end(self, ev):
            name, start = pass_stack.pop()
            dt = time.perf_counter() - start
            passes[name] += dt
            if pass_stack:  # nested pass (a callee compiled inside): count it once
                passes[pass_stack[-1][0]] -= dt

    event.register("numba:compile", Compiles())
    event.register("numba:run_pass", Passes())
    llvm = _time_llvm()
    import sim
    from sim.kernel import batch

    batch._compile_cold_in_helpers = lambda: None  # compile here, where the events are recorded
    t_import = time.perf_counter()
    sim.simulate(players=4, games=1, seed=1)
    t_end = time.perf_counter()
    if args.json:
        import json

        print(json.dumps({"first_result_s": round(t_end - t_import, 2), "compiled_functions": len(own),
                          **{k: round(v, 2) for k, v in llvm.items()}, "sim": sim.__file__}))
        return
    print(f"import numba {t_numba - t0:.2f} s, import sim (incl. twins) {t_import - t_numba:.2f} s, "
          f"first result {t_end - t_import:.2f} s; total {t_end - t0:.2f} s")
    print(f"compiled functions: {len(own)}; sum of own compile times {sum(own.values()):.2f} s")
    print(f"\n{'own s':>7} {'incl s':>7}  function")
    for name, dt in sorted(own.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"{dt:7.2f} {total[name]:7.2f}  {name}")
    print(f"\n{'s':>7}  compiler pass (own time)")
    for name, dt in sorted(passes.items(), key=lambda kv: -kv[1])[:12]:
        print(f"{dt:7.2f}  {name}")
    print("\nLLVM (inside native_lowering): " + ", ".join(f"{k} {v:.1f} s" for k, v in llvm.items()))


def empty_cache() -> str:
    """Point numba at a new, empty cache folder (removed when this process ends) before numba or sim is imported;
    refuse to run in a process that has imported either."""
    if "numba" in sys.modules or "sim" in sys.modules:
        raise SystemExit("run in a fresh process")
    tmp = tempfile.mkdtemp(prefix="numba-cold-")
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    os.environ["NUMBA_CACHE_DIR"] = tmp
    return tmp


def _time_llvm() -> dict:
    """Seconds in LLVM's per-function passes, whole-module optimization and machine code, summed over every
    library finished in this process (wrapping numba's codegen methods; sim.jit's wrapper around them, which
    skips a kernel callee's optimization and renames an entry point's copies, runs outside these timers)."""
    from numba.core import codegen

    spent = {"function_passes_s": 0.0, "module_optimization_s": 0.0, "machine_code_s": 0.0}

    def timing(plain, key):
        def timed(*a, **k):
            t = time.perf_counter()
            try:
                return plain(*a, **k)
            finally:
                spent[key] += time.perf_counter() - t

        return timed

    for cls, method, key in ((codegen.CPUCodeLibrary, "_optimize_functions", "function_passes_s"),
                             (codegen.CPUCodeLibrary, "_optimize_final_module", "module_optimization_s"),
                             (codegen.JITCodeLibrary, "_finalize_specific", "machine_code_s")):
        setattr(cls, method, timing(getattr(cls, method), key))
    return spent


if __name__ == "__main__":
    main()
