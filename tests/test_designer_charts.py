"""What compare prints beside the paired difference, target bands in specs, and the study charts."""

import json
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


# ------------------------------------------------------------------ which level of play a chart shows
# A chart's numbers depend on the strategy that played (the built-in heuristic wins about 45% of 4-player
# games, the tuned one about 87%): every chart names it, whether or not it varies, in its title and in its
# PNG's Description, and a [strategy.X] table is named with its base and parameters.

ONE_STRATEGY = """
[experiment]
name = "one"
seed = 5
games = 200
batch = 200

[grid]
players = [2, 4]
strategies = ["tuned"]
"""

SETUP_SWEEP = """
[experiment]
name = "sweep"
seed = 5
games = 200
batch = 200

[grid]
players = [2, 4]
strategies = ["early"]
setups = ["default", "lost_intel_removed"]

[strategy.early]
base = "heuristic"
params = { exchange_when = "early" }

[setup.lost_intel_removed]
overrides = { "encounters.readings.lost_intel" = "removed" }

[compare]
baseline = { setup = "default" }
"""


def _figure_texts(fig) -> list[str]:
    """Every visible text of a figure: its title, the axes' titles, labels, tick labels, legends and notes."""
    from matplotlib.text import Text

    return [t.get_text() for t in fig.findobj(Text) if t.get_visible() and t.get_text()]


def _outside_the_figure(fig) -> list[str]:
    """The texts that run past the figure's edges (a title wider than its panel was cut off on the left)."""
    from matplotlib.text import Text

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    edge = fig.bbox
    undrawn = set()  # the labels of ticks beyond an axis' limits, which matplotlib keeps but does not draw
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            undrawn |= {id(t.label1) for t in axis.get_major_ticks() if not lo - 1e-9 <= t.get_loc() <= hi + 1e-9}
    out = []
    for t in fig.findobj(Text):
        if not t.get_visible() or not t.get_text() or id(t) in undrawn:
            continue
        bb = t.get_window_extent(renderer)
        if bb.x0 < edge.x0 - 0.5 or bb.x1 > edge.x1 + 0.5 or bb.y0 < edge.y0 - 0.5 or bb.y1 > edge.y1 + 0.5:
            out.append(t.get_text())
    return out


@pytest.fixture
def saved_figures(monkeypatch):
    """path name -> (the texts of the figure saved there, those running past its edges, its PNG Description)."""
    from PIL import Image

    from sim import charts

    seen = {}
    save = charts._save

    def spy(fig, path, title, description, **kw):
        seen[path.name.removeprefix("tmp_")] = (" | ".join(_figure_texts(fig)).replace("\n", " "),
                                                _outside_the_figure(fig))
        out = save(fig, path, title, description, **kw)
        with Image.open(out) as im:
            seen[path.name.removeprefix("tmp_")] += (json.loads(im.text["Description"]),)
        return out

    monkeypatch.setattr(charts, "_save", spy)
    return seen


def _study(tmp_path, text):
    p = tmp_path / "spec.toml"
    p.write_text(textwrap.dedent(text))
    return run_study(load_spec(p), tmp_path / "out", progress=False)


def test_a_single_strategy_study_names_its_strategy_on_every_chart(tmp_path, saved_figures):
    """Nothing varies but the player count: the charts once said only '2p'/'4p'."""
    report = _study(tmp_path, ONE_STRATEGY)
    assert set(saved_figures) == {"win_rate_by_players.png", "outcomes.png", "game_length.png"}
    meta = json.loads((report.out / "metadata.json").read_text())
    for name, (texts, outside, description) in saved_figures.items():
        assert "strategy: tuned" in texts, name
        assert outside == [], name
        assert description["strategies"] == {"tuned": "tuned"}, name
        # the parameters every seat played, by player count, as metadata.json records them
        assert description["strategy_params"] == meta["strategy_params"], name
        assert set(description["strategy_params"]["tuned"]) == {"2", "4"}


def test_a_setup_sweep_names_its_strategy_with_its_parameters(tmp_path, saved_figures, capsys):
    """Only the setup varies: the charts once showed the setups alone; the strategy is a table, so its label
    says what it is (the heuristic with other parameters), never a bare registered name."""
    report = _study(tmp_path, SETUP_SWEEP)
    assert main(["compare", str(report.out)]) == 0
    capsys.readouterr()
    assert set(saved_figures) == {"win_rate_by_players.png", "outcomes.png", "game_length.png",
                                  "paired_differences.png"}
    for name, (texts, outside, description) in saved_figures.items():
        assert "strategy: early = heuristic with exchange_when=early" in texts, name
        assert description["strategies"] == {"early": "early = heuristic with exchange_when=early"}, name
        if name != "paired_differences.png":  # saved with a tight bounding box, which takes in every text
            assert outside == [], name
    assert saved_figures["paired_differences.png"][2]["baseline"] == "setup=default"


def test_a_chart_lists_every_strategy_in_the_spec_order(run):
    from sim.charts import played_by

    spec, report = run
    meta = json.loads((report.out / "metadata.json").read_text())
    summary = read_summary(report.out)
    assert played_by(summary, meta["spec"]) == "strategies: heuristic, cautious"
    assert played_by(summary.filter(pl.col("strategy") == "cautious"), meta["spec"]) == "strategy: cautious"


def test_outcome_panels_with_no_loss_start_at_zero_and_say_so(run):
    """With no game lost on Intel the middle panel's axis ran from -0.04%: a share never goes below 0."""
    import matplotlib.pyplot as plt

    from sim.charts import outcome_figure

    _, report = run
    summary = read_summary(report.out)
    none = summary.with_columns(pl.lit(0).alias("n_loss_intel"),
                                *(pl.lit(0).alias(c) for c in summary.columns if c.startswith("n_loss_intel_short_")))
    for table, intel_games in ((summary, summary["n_loss_intel"].sum()), (none, 0)):
        fig = outcome_figure(table)
        try:
            _, intel, lobo = fig.axes[:3]
            assert intel.get_ylim()[0] == 0 and lobo.get_ylim()[0] == 0
            notes = [t.get_text() for t in intel.texts]
            assert notes == ([] if intel_games else ["no game was lost on Intel"])
            assert _outside_the_figure(fig) == []
        finally:
            plt.close(fig)


def test_many_series_get_a_colour_each_and_one_legend_beside_the_panels(run):
    """14 series (as in results/rule_readings): tab10 gave two series one colour, and a legend per game-length
    panel covered the curves and ran past the figure's edge."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_hex

    from sim.charts import game_length_figure, win_rate_figure

    _, report = run
    summary = read_summary(report.out)
    many = pl.concat([summary.with_columns(pl.lit(f"setup_{i}").alias("setup")) for i in range(7)])
    fig = win_rate_figure(many)
    try:
        colours = [to_hex(c.lines[0].get_color()) for c in fig.axes[0].containers]
        assert len(colours) == 14 and len(set(colours)) == 14
        assert _outside_the_figure(fig) == []
    finally:
        plt.close(fig)
    fig = game_length_figure(many)
    try:
        assert all(ax.get_legend() is None for ax in fig.axes)
        (legend,) = fig.legends
        labels = [t.get_text() for t in legend.get_texts()]
        series = sorted({f"{r['strategy']}, {r['setup']}" for r in many.iter_rows(named=True)})
        assert labels == ["won", "lost", *series]
        assert _outside_the_figure(fig) == []
    finally:
        plt.close(fig)
