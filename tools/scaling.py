"""Games a second by thread count: how the kernel scales on a machine with many cores.

For each thread count, ``simulate()`` (the per-game table included) and ``run_batch``
alone (the kernel's rows only) are timed ``--repeats`` times, in turns across the thread
counts, and the medians printed with the speed-up over one thread:

    .venv/bin/python tools/scaling.py --games 400000 --threads 1,2,4,8,16 --json scaling.json

Timings are never asserted anywhere; compare only figures from one run.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import platform
import statistics
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=400_000)
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--strategy", default="heuristic")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", default="", help="comma-separated thread counts (default: 1, 2, 4, ... up to "
                                                  "the cores, and the cores)")
    ap.add_argument("--json", default="", help="also write the figures to this file")
    args = ap.parse_args()
    import numba

    import sim
    from sim.kernel import run_batch
    from sim.rules.state import Settings
    from sim.run import _kernel_strategy, resolve_content

    cores = os.cpu_count() or 1
    if args.threads:
        counts = [int(x) for x in args.threads.split(",")]
    else:
        counts = [1 << k for k in range(cores.bit_length()) if 1 << k <= cores]
        counts += [] if counts[-1] == cores else [cores]
    if max(counts) > numba.config.NUMBA_NUM_THREADS:
        raise SystemExit(f"--threads: at most NUMBA_NUM_THREADS={numba.config.NUMBA_NUM_THREADS}")
    content = resolve_content(None)
    settings = Settings.build(content, args.players)
    strat = _kernel_strategy(args.strategy, None, args.players)
    # the kernel alone: its rows handed to a sink that keeps nothing (a checkout from before the
    # sink keeps them all in one array)
    sink = {"sink": lambda lo, hi, rows: None} if "sink" in inspect.signature(run_batch).parameters else {}
    sim.simulate(players=args.players, games=100, seed=args.seed, strategy=args.strategy)  # loaded or compiled
    runs: dict[str, dict[int, list[float]]] = {"simulate": {t: [] for t in counts}, "kernel": {t: [] for t in counts}}
    for _ in range(args.repeats):
        for t in counts:
            t0 = time.perf_counter()
            sim.simulate(players=args.players, games=args.games, seed=args.seed, strategy=args.strategy, threads=t)
            runs["simulate"][t].append(args.games / (time.perf_counter() - t0))
            t0 = time.perf_counter()
            run_batch(content, settings, strat, args.seed, 0, args.games, threads=t, **sink)
            runs["kernel"][t].append(args.games / (time.perf_counter() - t0))
    result = {"games": args.games, "players": args.players, "strategy": args.strategy, "repeats": args.repeats,
              "cores": cores, "machine": platform.processor() or platform.machine(),
              "numba": numba.__version__, "runs": {k: {str(t): v for t, v in r.items()} for k, r in runs.items()}}
    print(f"{args.players}-player {args.strategy} games, {args.games:,} a timing, median of {args.repeats}; "
          f"{cores} cores, numba {numba.__version__}; sim from {os.path.dirname(sim.__file__)}")
    print(f"{'threads':>7}  {'simulate() games/s':>19} {'x 1 thread':>10}  {'kernel only games/s':>20} {'x 1 thread':>10}")
    one = {k: statistics.median(r[counts[0]]) * 1.0 for k, r in runs.items()}
    for t in counts:
        s, k = statistics.median(runs["simulate"][t]), statistics.median(runs["kernel"][t])
        print(f"{t:>7}  {s:>19,.0f} {s / one['simulate']:>10.2f}  {k:>20,.0f} {k / one['kernel']:>10.2f}")
        result.setdefault("median", {})[str(t)] = {"simulate": s, "kernel": k}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
