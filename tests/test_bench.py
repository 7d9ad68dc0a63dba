"""``smersh-sim bench``: its figures are medians of the timings it keeps, and the engines agree."""

import statistics

import pytest

import sim
from sim.bench import format_bench, run_bench


def test_bench_reports_the_median_of_its_timings():
    r = run_bench(games=40, reference_games=3, cold=False, repeats=3)
    for key, rate in (("kernel_1_thread", "kernel_1_thread_games_per_s"),
                      ("kernel_all_threads", "kernel_all_threads_games_per_s"),
                      ("reference", "reference_games_per_s")):
        runs = r[f"{key}_runs"]
        assert len(runs) == 3 and all(x > 0 for x in runs)
        assert r[rate] == statistics.median(runs)
    assert r["sample_identical"] is True
    assert r["ratio_kernel_1_thread_vs_reference"] == r["kernel_1_thread_games_per_s"] / r["reference_games_per_s"]
    turns = {key: sim.simulate(players=4, games=n, seed=1)["turns"].mean() for key, n in (("kernel", 40), ("reference", 3))}
    assert r["kernel_turns_per_game"] == pytest.approx(turns["kernel"])
    assert r["reference_turns_per_game"] == pytest.approx(turns["reference"])
    assert r["ratio_kernel_1_thread_vs_reference_per_turn"] == pytest.approx(
        r["kernel_1_thread_games_per_s"] * turns["kernel"] / (r["reference_games_per_s"] * turns["reference"]))
    text = format_bench(r)
    assert "median of 3 timings" in text and "range of the timings" in text and "per player turn" in text
    # the figures say which machine gave them
    import os

    import llvmlite.binding as llvm
    m = r["machine"]
    assert m["llvm_cpu"] == llvm.get_host_cpu_name() and m["cores"] == len(os.sched_getaffinity(0)) and m["cpu"]
    assert f"machine: {m['cpu']} (LLVM compiles for {m['llvm_cpu']}), {m['cores']} cores" in text


def test_bench_refuses_no_timing():
    with pytest.raises(ValueError, match="repeats"):
        run_bench(games=10, reference_games=1, cold=False, repeats=0)
    with pytest.raises(ValueError, match="reference games must be from 1 to the kernel's 10 games"):
        run_bench(games=10, reference_games=11, cold=False)


def test_bench_text_of_one_timing_is_singular():
    r = {"players": 4, "strategy": "heuristic", "seed": 1, "threads_available": 1, "repeats": 1,
         "kernel_1_thread_games_per_s": 80_000.0, "kernel_all_threads_games_per_s": 80_000.0,
         "kernel_all_threads_games_per_min": 4.8e6, "seconds_per_million_games": 12.5, "reference_games": 1,
         "reference_games_per_s": 300.0, "ratio_threads": 1.0, "ratio_kernel_1_thread_vs_reference": 266.7,
         "ratio_kernel_all_threads_vs_reference": 266.7, "ratio_kernel_1_thread_vs_reference_per_turn": 270.0,
         "reference_turns_per_game": 28.0, "kernel_turns_per_game": 28.4, "sample_identical": True,
         "cached_start_s": 0.9}
    text = format_bench(r)
    assert "each rate one timing" in text and "1 thread available" in text and "(the first game)" in text
    assert "median of 1 timings" not in text and "1 threads" not in text and "1 games" not in text
    assert "median of 3 timings" in format_bench({**r, "repeats": 3, "kernel_1_thread_runs": [1.0] * 3,
                                                  "kernel_all_threads_runs": [1.0] * 3, "reference_runs": [1.0] * 3})
