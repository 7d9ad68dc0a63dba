"""``smersh-sim bench``: kernel vs readable engine speed, threads, and compile times, in one run.

Timings are measured here and printed as rates and ratios from the same run;
they are never asserted in tests (the machine is shared and noisy).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

FIRST_RESULT = (
    "import time; t=time.perf_counter(); import sim; "
    "sim.simulate(players=4, games=1, seed=1); print(time.perf_counter()-t)"
)


def _first_result_seconds(env_extra: dict | None = None) -> float:
    """Wall time of a fresh process until its first simulated game (import + load/compile + play)."""
    env = dict(os.environ)
    env.update(env_extra or {})
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", FIRST_RESULT], env=env, capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(f"benchmark subprocess failed:\n{out.stderr[-2000:]}")
    return wall


def machine() -> dict:
    """The machine a bench ran on: the CPU's model name (from ``/proc/cpuinfo`` where there is one), the
    CPU LLVM compiles the kernel for, and the cores this process may use. Figures from different
    machines do not compare; the bench's JSON says which one gave its figures."""
    import platform

    import llvmlite.binding as llvm

    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"cpu": model, "llvm_cpu": llvm.get_host_cpu_name(), "cores": cores}


def _rate(games: int, run) -> tuple[float, object]:
    """Games a second of one timed call of ``run()``, and what it returned."""
    t0 = time.perf_counter()
    value = run()
    return games / (time.perf_counter() - t0), value


def run_bench(games: int = 200_000, reference_games: int = 300, players: int = 4, strategy: str = "heuristic",
              seed: int = 1, cold: bool = True, repeats: int = 3) -> dict:
    """One bench run: each rate is the median of ``repeats`` timings, taken in turns (1 thread,
    all threads, the reference engine, then again), so a burst of other work on the machine
    moves one timing, not the figure; every timing is kept in the ``*_runs`` lists."""
    import statistics

    import numba

    import sim

    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    if not 1 <= reference_games <= games:  # the reference's games are compared with the kernel's first ones
        raise ValueError(f"reference games must be from 1 to the kernel's {games:,} games, got {reference_games}")
    threads = numba.config.NUMBA_NUM_THREADS
    result: dict = {"players": players, "strategy": strategy, "seed": seed, "threads_available": threads,
                    "repeats": repeats, "machine": machine()}
    if cold:
        with tempfile.TemporaryDirectory() as tmp:
            result["cold_start_s"] = _first_result_seconds({"NUMBA_CACHE_DIR": tmp})
    sim.simulate(players=players, games=10, seed=seed, strategy=strategy)  # make sure this process has it loaded
    sim.simulate(players=players, games=2, seed=seed, strategy=strategy, engine="reference")  # and the reference
    result["cached_start_s"] = _first_result_seconds()
    runs: dict[str, list[float]] = {"kernel_1_thread": [], "kernel_all_threads": [], "reference": []}
    tables = {}  # each key's last table: the sample both engines must agree on
    for _ in range(repeats):
        for key, n in (("kernel_1_thread", 1), ("kernel_all_threads", threads)):
            rate, tables[key] = _rate(games, lambda n=n: sim.simulate(players=players, games=games, seed=seed,
                                                                       strategy=strategy, threads=n))
            runs[key].append(rate)
        rate, tables["reference"] = _rate(reference_games, lambda: sim.simulate(
            players=players, games=reference_games, seed=seed, strategy=strategy, engine="reference"))
        runs["reference"].append(rate)
    result["kernel_games"] = games
    result["kernel_1_thread_games_per_s"] = statistics.median(runs["kernel_1_thread"])
    result["kernel_all_threads_games_per_s"] = statistics.median(runs["kernel_all_threads"])
    result["kernel_all_threads_games_per_min"] = 60 * result["kernel_all_threads_games_per_s"]
    result["reference_games"] = reference_games
    result["reference_games_per_s"] = statistics.median(runs["reference"])
    for key, values in runs.items():
        result[f"{key}_runs"] = values
    # the timed tables themselves: the reference's games against the same games from both kernel runs
    ref = tables["reference"]
    result["sample_identical"] = all(bool(tables[key].head(ref.height).equals(ref)) and tables[key].height == games
                                     for key in ("kernel_1_thread", "kernel_all_threads"))
    result["ratio_threads"] = result["kernel_all_threads_games_per_s"] / result["kernel_1_thread_games_per_s"]
    result["ratio_kernel_1_thread_vs_reference"] = result["kernel_1_thread_games_per_s"] / result["reference_games_per_s"]
    result["ratio_kernel_all_threads_vs_reference"] = result["kernel_all_threads_games_per_s"] / result["reference_games_per_s"]
    # the reference plays only the first games, which may be longer or shorter than the kernel's average:
    # the same ratio per player turn compares the engines on equal work
    result["kernel_turns_per_game"] = float(tables["kernel_1_thread"]["turns"].mean())
    result["reference_turns_per_game"] = float(ref["turns"].mean())
    result["ratio_kernel_1_thread_vs_reference_per_turn"] = (
        result["ratio_kernel_1_thread_vs_reference"] * result["kernel_turns_per_game"] / result["reference_turns_per_game"])
    result["seconds_per_million_games"] = 1e6 / result["kernel_all_threads_games_per_s"]
    return result


def format_bench(r: dict) -> str:
    threads = f"{r['threads_available']} thread{'s' if r['threads_available'] != 1 else ''}"
    timings = f"the median of {r['repeats']} timings" if r["repeats"] != 1 else "one timing"
    lines = [f"{r['players']}-player {r['strategy']} games, seed {r['seed']}, {threads} available; "
             f"each rate {timings}"]
    if "machine" in r:  # JSON of earlier runs lacks it
        m = r["machine"]
        lines.append(f"  machine: {m['cpu']} (LLVM compiles for {m['llvm_cpu']}), {m['cores']} cores")
    first = "the first game" if r["reference_games"] == 1 else f"first {r['reference_games']} games"
    lines.append(f"  kernel, 1 thread:          {r['kernel_1_thread_games_per_s']:>12,.0f} games/s")
    lines.append(f"  kernel, all threads:       {r['kernel_all_threads_games_per_s']:>12,.0f} games/s"
                 f"  ({r['kernel_all_threads_games_per_min']:,.0f} games/min; 1M games in {r['seconds_per_million_games']:.1f} s)")
    lines.append(f"  reference engine:          {r['reference_games_per_s']:>12,.1f} games/s  ({first})")
    lines.append(f"  ratios: all threads / 1 thread {r['ratio_threads']:.2f}x; kernel 1 thread / reference "
                 f"{r['ratio_kernel_1_thread_vs_reference']:.0f}x; all threads / reference {r['ratio_kernel_all_threads_vs_reference']:.0f}x")
    lines.append(f"  per player turn: kernel 1 thread / reference {r['ratio_kernel_1_thread_vs_reference_per_turn']:.0f}x "
                 f"(the reference's games average {r['reference_turns_per_game']:.2f} turns, the kernel's "
                 f"{r['kernel_turns_per_game']:.2f})")
    if r["repeats"] > 1:
        spread = ", ".join(f"{key.replace('_', ' ')} {min(r[key + '_runs']):,.0f}-{max(r[key + '_runs']):,.0f}"
                           for key in ("kernel_1_thread", "kernel_all_threads", "reference"))
        lines.append(f"  range of the timings: {spread} games/s")
    lines.append(f"  same games from both engines on the sample: {'yes' if r['sample_identical'] else 'NO (a bug)'}")
    if "cold_start_s" in r:
        lines.append(f"  first result in a new process: cold (empty numba cache) {r['cold_start_s']:.1f} s, "
                     f"cached {r['cached_start_s']:.1f} s")
    else:
        lines.append(f"  first result in a new process (cached): {r['cached_start_s']:.1f} s")
    return "\n".join(lines)
