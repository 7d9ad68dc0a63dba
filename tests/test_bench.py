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


def test_bench_refuses_no_timing():
    with pytest.raises(ValueError, match="repeats"):
        run_bench(games=10, reference_games=1, cold=False, repeats=0)
    with pytest.raises(ValueError, match="reference games must be from 1 to the kernel's 10 games"):
        run_bench(games=10, reference_games=11, cold=False)
