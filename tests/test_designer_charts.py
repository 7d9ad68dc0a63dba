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


def test_summary_rounds_split_by_wins_add_up(run):
    _, report = run
    for r in read_summary(report.out).iter_rows(named=True):
        assert sum(r["rounds_histogram"]) == r["games"]
        assert sum(r["rounds_histogram_win"]) == r["wins"]
        assert sum(r["track_histogram_loss_lobo"]) == r["n_loss_lobo"]
        assert all(0 <= x for x in r["rounds_histogram_win"])
    assert isinstance(read_summary(report.out), pl.DataFrame)
