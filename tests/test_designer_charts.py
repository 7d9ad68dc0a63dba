"""What compare prints beside the paired difference, target bands in specs, and the study charts."""

import textwrap

import polars as pl
import pytest

from sim.cli import main
from sim.experiments import SpecError, load_spec
from sim.study import read_summary, run_study

SPEC = """
[experiment]
name = "charts"
seed = 5
games = 1500
batch = 750

[grid]
players = [2, 4]
strategies = ["heuristic", "cautious"]

[targets]
win_rate = { "2" = [0.30, 0.40], "4" = [0.43, 0.47] }

[compare]
baseline = { strategy = "heuristic" }
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("charts")
    p = tmp / "spec.toml"
    p.write_text(textwrap.dedent(SPEC))
    spec = load_spec(p)
    report = run_study(spec, tmp / "out", progress=False)
    return spec, report


def test_targets_are_read_and_checked(run, tmp_path):
    spec, _ = run
    assert spec.targets() == {2: (0.30, 0.40), 4: (0.43, 0.47)}
    for bad in ('{ "7" = [0.1, 0.2] }', '{ "2" = [0.5, 0.4] }', '{ "2" = [0.5, 1.4] }'):
        p = tmp_path / "bad.toml"
        p.write_text(textwrap.dedent(SPEC).replace('{ "2" = [0.30, 0.40], "4" = [0.43, 0.47] }', bad))
        with pytest.raises(SpecError, match="targets"):
            load_spec(p)


def test_the_study_draws_its_three_charts(run):
    _, report = run
    names = {f.name for f in report.files}
    assert {"win_rate_by_players.png", "outcomes.png", "game_length.png"} <= names


def test_compare_prints_both_absolute_win_rates_beside_the_difference(run, capsys):
    _, report = run
    assert main(["compare", str(report.out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    summary = read_summary(report.out)
    rate = {r["cell"]: r["win_rate"] for r in summary.iter_rows(named=True)}
    for players in (2, 4):
        cell, base = f"p{players}_cautious_standard_default_default", f"p{players}_heuristic_standard_default_default"
        (line,) = [x for x in lines if x.startswith(cell)]
        fields = line.split()
        assert fields[1] == f"{100 * rate[base]:.2f}%" and fields[2] == f"{100 * rate[cell]:.2f}%"
        assert fields[3] == f"{100 * (rate[cell] - rate[base]):+.2f}"


def test_compare_says_how_many_intervals_it_prints_and_gives_family_wise_ones(run, capsys):
    """Among many rows a 95% interval that excludes 0 can be chance: compare says how many intervals it prints
    and gives each row its family-wise interval (Bonferroni over the rows) beside the paired one."""
    from sim.compare import compare_run

    _, report = run
    assert main(["compare", str(report.out)]) == 0
    out = capsys.readouterr().out
    table, _ = compare_run(report.out)
    assert table.height == 2 and (table["family_size"] == 2).all()
    assert out.startswith("2 paired differences in win rate against baseline strategy=heuristic (same games)")
    assert "of 2 such intervals about 0.1 exclude the true difference by chance alone" in out
    assert "family-wise: Bonferroni-widened (97.5% each), all 2 hold together with at least 95% confidence" in out
    for r in table.iter_rows(named=True):
        (line,) = [x for x in out.splitlines() if x.startswith(r["cell"])]
        paired, family = (f"[{100 * r[k + '_low']:+.2f}, {100 * r[k + '_high']:+.2f}]" for k in ("paired", "familywise"))
        fields = line.split()
        assert (" ".join(fields[4:6]), " ".join(fields[6:8])) == (paired, family), line
    excl = {k: sum(r[k + "_low"] > 0 or r[k + "_high"] < 0 for r in table.iter_rows(named=True))
            for k in ("paired", "familywise")}
    assert f"intervals excluding 0: {excl['paired']} of 2 paired 95%, {excl['familywise']} of 2 family-wise" in out


def test_summary_rounds_split_by_wins_add_up(run):
    _, report = run
    for r in read_summary(report.out).iter_rows(named=True):
        assert sum(r["rounds_histogram"]) == r["games"]
        assert sum(r["rounds_histogram_win"]) == r["wins"]
        assert sum(r["track_histogram_loss_lobo"]) == r["n_loss_lobo"]
        assert all(0 <= x for x in r["rounds_histogram_win"])
    assert isinstance(read_summary(report.out), pl.DataFrame)


def test_game_length_chart_plots_the_share_lasting_more_than_r_rounds(run):
    """The chart's curve against the per-game table: after r rounds, the share of games with more than
    r rounds (a game's ``rounds`` counts the rounds it started)."""
    import numpy as np

    from sim.charts import survival_curve

    _, report = run
    games = pl.read_parquet(report.out / "games.parquet")
    summary = read_summary(report.out)
    checked = 0
    for r in summary.iter_rows(named=True):
        mine = games.filter(pl.col("cell") == r["cell"])
        total = np.array(r["rounds_histogram"])
        won = np.zeros_like(total)
        won[: len(r["rounds_histogram_win"])] = r["rounds_histogram_win"]
        for hist, rows in ((won, mine.filter(pl.col("win"))), (total - won, mine.filter(~pl.col("win")))):
            if rows.height == 0:
                continue
            x, y = survival_curve(hist)
            rounds = rows["rounds"].to_numpy()
            assert x[-1] == rounds.max()
            want = np.array([(rounds > k).mean() for k in x])
            assert np.allclose(y, want, atol=1e-12), (r["cell"], y, want)
            assert y[int(np.median(rounds))] <= 0.5 <= y[int(np.median(rounds)) - 1]
            checked += 1
    assert checked == 8
