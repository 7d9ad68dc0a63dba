"""Kernel games/s of two checkouts, A and B, measured interleaved in one run.

The machine is shared and noisy, so two versions are only compared inside one run:
one worker process per checkout (each imports its own ``sim``), then rounds of
A, B, A, B ... of the same games on one thread each, and the ratio of the medians
(and of each round's pair). Timings are never asserted anywhere.

    .venv/bin/python tools/ab_kernel.py /path/to/checkout-A /path/to/checkout-B --games 100000 --rounds 7

Each side runs in several worker processes (--procs), since one process can keep a layout that is
slower or faster all run long; the ratio is of the means of the processes' medians. With --cpu each
round is timed in thread CPU time, which other work on the cores disturbs far less than the wall clock.

Each checkout compiles its own kernel, in its own ``sim/kernel/__pycache__``, first and in a
process of its own: code compiled in the process that plays ran 7-10% slower than the same
code loaded from the cache.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

WORKER = r"""
import hashlib, os, sys, time
if {pin} >= 0:
    os.sched_setaffinity(0, {{{pin}}})
sys.path.insert(0, {tree!r})
import numpy as np
import sim, strategies
from sim.content import load
from sim.kernel import layout
from sim.kernel.batch import bundle
from sim.kernel.game import simulate_batch
from sim.rng import N_SOURCES
from sim.rules.state import Settings
assert sim.__file__.startswith({tree!r}), sim.__file__
players, strategy, games, seed = {players}, {strategy!r}, {games}, {seed}
content = load()
settings = Settings.build(content, players)
content = content.for_players(players)
sid, prm = layout.team_vectors([strategies.make(strategy, players=players) for _ in range(players)])
pk, kp = bundle(content)
cfg = layout.settings_vector(content, settings)
offsets = np.zeros(N_SOURCES, np.int64)
out = np.zeros((games, layout.row_width(pk)), np.int64)
import sim.kernel.game as game
work = game.work_arrays(pk) if hasattr(game, "work_arrays") else ()  # (a checkout whose kernel allocates: none)
simulate_batch(kp, cfg, sid, prm, seed, 0, 10, out[:10], offsets, *work)
print("ready", flush=True)
for line in sys.stdin:
    t = time.thread_time() if {cpu} else time.perf_counter()
    simulate_batch(kp, cfg, sid, prm, seed, 0, games, out, offsets, *work)
    dt = (time.thread_time() if {cpu} else time.perf_counter()) - t
    print(dt, hashlib.sha256(out.tobytes()).hexdigest()[:16], flush=True)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--games", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--procs", type=int, default=3, help="worker processes per checkout (default 3)")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--strategy", default="heuristic")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pin", type=int, default=-1, metavar="CORE",
                    help="run both workers on this core only (else each process keeps the core the system gave it, "
                         "and one sharing a core with other work is slower all run long: a bias of up to 8%% seen)")
    ap.add_argument("--cpu", action="store_true",
                    help="time the thread's CPU time instead of the wall clock (steadier when other work "
                         "shares the cores: waiting for a core is not counted)")
    ap.add_argument("--b-env", action="append", default=[], metavar="NAME=VALUE",
                    help="an environment variable for B only (give B its own NUMBA_CACHE_DIR with numba flags)")
    args = ap.parse_args()
    procs = {}  # (checkout, k): worker process k of that checkout
    for name, tree in (("A", args.a), ("B", args.b)):
        code = WORKER.format(tree=tree, players=args.players, strategy=args.strategy, games=args.games, seed=args.seed,
                             cpu=args.cpu, pin=args.pin)
        env = dict(os.environ)
        if name == "B":
            env.update(kv.split("=", 1) for kv in args.b_env)
        # compile (or load) first, in a process of its own: a kernel compiled in the process that
        # then plays ran 7-10% slower than the same kernel loaded from numba's cache
        subprocess.run([sys.executable, "-c", code], input="", text=True, cwd=tree, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        for k in range(args.procs):
            procs[name, k] = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                                              stdout=subprocess.PIPE, text=True, cwd=tree, env=env)
    for p in procs.values():
        line = p.stdout.readline()
        if line.strip() != "ready":
            raise SystemExit(f"worker failed to start: {line!r}")
    times = {key: [] for key in procs}
    sums = {}
    for r in range(args.rounds):
        for k in range(args.procs):
            for name in ("A", "B") if (r + k) % 2 == 0 else ("B", "A"):
                p = procs[name, k]
                p.stdin.write("go\n")
                p.stdin.flush()
                dt, check = p.stdout.readline().split()
                times[name, k].append(float(dt))
                sums.setdefault(name, check)
    for p in procs.values():
        p.stdin.close()
        p.wait()
    # each process has its own memory layout and keeps it: the same code ran up to ~8% apart in two
    # processes, so each side is the mean over its processes of their median round
    per = {key: statistics.median(t) for key, t in times.items()}
    mean = {name: statistics.mean(per[name, k] for k in range(args.procs)) for name in ("A", "B")}
    for name, tree in (("A", args.a), ("B", args.b)):
        meds = [per[name, k] for k in range(args.procs)]
        print(f"{name} {tree}: {args.games / mean[name]:,.0f} games/s (mean of {args.procs} processes' medians: "
              f"{', '.join(f'{m:.3f}' for m in meds)} s)")
    ratios = sorted(per["A", k] / per["B", k] for k in range(args.procs))
    print(f"speed-up B/A: {mean['A'] / mean['B']:.3f}x (means of the processes' medians); "
          f"per process pair {[round(x, 3) for x in ratios]}")
    print(f"same rows: {'yes' if sums['A'] == sums['B'] else 'NO'}")


if __name__ == "__main__":
    main()
