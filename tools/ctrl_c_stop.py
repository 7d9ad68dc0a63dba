"""Seconds from a Ctrl-C to the exit of ``run --scheduler local:2``: its workers killed, against Dask's own stop.

On a Ctrl-C, ``DaskRunner.close(interrupted=True)`` kills the local cluster's worker
processes at once; Dask's own ``cluster.close()`` asks a busy worker to finish its batch
and waits up to about 4 s before it kills it. This plays the same small study under both,
in turns, sends SIGINT to the process group (as a terminal does) once the first batch is
saved, and prints the medians and their ratio:

    .venv/bin/python tools/ctrl_c_stop.py --rounds 3

Timings are never asserted anywhere (tests/test_distributed.py checks the exit, its one
line, the kept batches and that no process is left); compare only figures from one run.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = """
[experiment]
name = "interrupted"
seed = 11
games = 1000
batch = 50
engine = "reference"

[grid]
players = [2, 4]
strategies = ["heuristic", "bold"]
"""
# the command line, with Dask's own stop in place of the kill when asked
RUN = ("import sys, sim.distributed as d\n"
       "if sys.argv[1] == 'dask': d._kill_workers = lambda cluster: None\n"
       "from sim.cli import main\n"
       "sys.exit(main(sys.argv[2:]))\n")


def stop_seconds(way: str, folder: Path) -> float:
    """One run under ``way`` ("kill" or "dask"), interrupted after its first saved batch: seconds to its exit."""
    spec, out = folder / "spec.toml", folder / f"out-{way}-{time.monotonic_ns()}"
    spec.write_text(SPEC)
    p = subprocess.Popen([sys.executable, "-c", RUN, way, "run", str(spec), "--out", str(out), "--quiet",
                          "--scheduler", "local:2"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, start_new_session=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        while not list(out.glob(".state/**/batch_*.json")) and p.poll() is None:
            time.sleep(0.05)
        if p.poll() is not None:
            raise SystemExit(f"the run ended before it could be interrupted:\n{p.stderr.read()}")
        sent = time.monotonic()
        os.killpg(p.pid, signal.SIGINT)
        _, err = p.communicate(timeout=300)
        took = time.monotonic() - sent
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    if p.returncode != 130:
        raise SystemExit(f"{way}: exit {p.returncode}, not 130:\n{err}")
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    times: dict[str, list[float]] = {"kill": [], "dask": []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for way in ("kill", "dask") if r % 2 == 0 else ("dask", "kill"):
                times[way].append(stop_seconds(way, Path(tmp)))
    kill, dask = statistics.median(times["kill"]), statistics.median(times["dask"])
    print(f"workers killed: {kill:.2f} s from the Ctrl-C to the exit (median of {args.rounds}: "
          f"{', '.join(f'{t:.2f}' for t in times['kill'])})")
    print(f"Dask's own stop: {dask:.2f} s ({', '.join(f'{t:.2f}' for t in times['dask'])})")
    print(f"Dask's own stop / workers killed: {dask / kill:.1f}x")


if __name__ == "__main__":
    main()
