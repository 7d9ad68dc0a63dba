"""Experiment specs, resumable study runs, Parquet results and paired comparisons."""

import json
import textwrap
from pathlib import Path

import pandas as pd
import polars as pl
import pyarrow.parquet as pq
import pytest

from sim.compare import compare_run
from sim.experiments import SpecError, load_spec
from sim.study import run_study

SPEC = """
[experiment]
name = "mini"
seed = 5
games = 48
batch = 16

[grid]
players = [2, 3]
strategies = ["heuristic", "cancel_early"]

[strategy.cancel_early]     # differs from heuristic in a few moves only: the paired games stay close
base = "heuristic"
params = { cancel_at = 1 }

[compare]
baseline = { strategy = "heuristic" }
"""


def write_spec(tmp_path: Path, text: str = SPEC, name: str = "mini.toml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("study")
    spec = load_spec(write_spec(tmp))
    report = run_study(spec, tmp / "out", progress=False)
    assert report.finished
    return spec, tmp / "out", report


@pytest.mark.parametrize(
    "patch,key,reason",
    [
        (("games = 48", "games = 0"), "experiment.games", "greater than or equal to 1"),
        (("players = [2, 3]", "players = [2, 7]"), "grid.players", "1..6"),
        (("seed = 5", "seed = 5\nsede = 3"), "experiment.sede", "unknown key"),
        (('strategies = ["heuristic", "cancel_early"]', 'strategies = ["heuristic", "nope"]'), "grid.strategies", "unknown strategy 'nope'"),
        (("cancel_at = 1", "cancel_ta = 1"), "strategy.cancel_early.params", "unknown heuristic parameter"),
        # the label and the seat count are not parameters (no clash of arguments in the message)
        (("cancel_at = 1", 'name = "foo"'), "strategy.cancel_early.params", "unknown heuristic parameter(s): name"),
        (("cancel_at = 1", "players = 3"), "strategy.cancel_early.params", "unknown heuristic parameter(s): players"),
        (('base = "heuristic"\nparams = { cancel_at = 1 }', 'base = "tuned"\nparams = { players = 3 }'),
         "strategy.cancel_early.params", "unknown heuristic parameter(s): players"),
        (('[compare]', '[setup.odd]\noverrides = { "lobo.track.strat" = 2 }\n[compare]'), None, None),
    ],
)
def test_bad_specs_name_file_key_and_reason(tmp_path, patch, key, reason):
    text = SPEC.replace(*patch)
    if key is None:  # an unknown setup named in the grid, and a bad override path
        text = text.replace('strategies = ["heuristic", "cancel_early"]',
                            'strategies = ["heuristic", "cancel_early"]\nsetups = ["odd"]')
        with pytest.raises(SpecError) as e:
            load_spec(write_spec(tmp_path, text))
        # one clean line: the file and the table once each, then the reason
        assert str(e.value) == ("mini.toml: setup.odd.overrides: override 'lobo.track.strat': lobo.toml.track has no "
                                "key 'strat' (keys: loss, start)")
        return
    with pytest.raises(SpecError) as e:
        load_spec(write_spec(tmp_path, text))
    msg = str(e.value)
    assert msg.startswith("mini.toml: "), msg
    assert key in msg and reason in msg, msg


@pytest.mark.parametrize("strategies, tables, key, says", [
    # two tables whose names differ by a space only: one cell id, one row and one folder of batches
    ('["a b", "ab"]', '[strategy."a b"]\nbase = "heuristic"\nparams = { pool_target = 5 }\n'
                      '[strategy.ab]\nbase = "heuristic"\nparams = { pool_target = 9 }\n',
     "grid.strategies", "'a b' and 'ab' give the same cell id 'p2_ab_standard_default_default'"),
    # a per-seat team and a table named like its cell id: the table's name reads as a label, refused first
    ('["heuristic,bold", "heuristic+bold"]', '[strategy."heuristic+bold"]\nbase = "bold"\n',
     "strategy.heuristic+bold", "holds +, which the labels of strategies use"),
    ('["a/b"]', '[strategy."a/b"]\nbase = "heuristic"\n', "grid.strategies",
     "'a/b' gives the cell id 'p2_a/b_standard_default_default', which is not one folder name"),
])
def test_cells_whose_ids_collide_or_are_no_folder_name_are_refused(tmp_path, strategies, tables, key, says):
    text = f"""
[experiment]
name = "ids"
seed = 1
games = 10
batch = 10

[grid]
players = [2]
strategies = {strategies}

{tables}"""
    with pytest.raises(SpecError) as e:
        load_spec(write_spec(tmp_path, text))
    assert str(e.value).startswith(f"mini.toml: {key}: {says}"), str(e.value)


def test_results_open_in_polars_pandas_and_duckdb_with_metadata(finished_run):
    import duckdb

    spec, out, _ = finished_run
    for name, rows in (("summary.parquet", 4), ("games.parquet", 4 * 48)):
        path = out / name
        assert pl.read_parquet(path).height == rows
        assert len(pd.read_parquet(path)) == rows
        assert duckdb.sql(f"select count(*) from read_parquet('{path}')").fetchall()[0][0] == rows
        meta = pq.read_schema(path).metadata
        assert json.loads(meta[b"smersh.spec"])["experiment"]["name"] == "mini"
        for key in (b"smersh.seed", b"smersh.content_hash", b"smersh.rules_version", b"smersh.key"):
            assert meta[key], key
    summary = pl.read_parquet(out / "summary.parquet")
    games = pl.read_parquet(out / "games.parquet")
    # the summary agrees with the per-game table
    for r in summary.iter_rows(named=True):
        g = games.filter(pl.col("cell") == r["cell"])
        assert g.height == r["games"] == 48
        assert int(g["win"].sum()) == r["wins"]
        assert abs(g["turns"].mean() - r["turns_mean"]) < 1e-12
        assert sorted(g["game"].to_list()) == list(range(48))
    for f in ("win_rate_by_players.png", "outcomes.png", "game_length.png"):
        assert (out / f).stat().st_size > 1000


def test_interrupted_run_resumes_without_recomputing_and_matches(tmp_path, finished_run):
    spec, full_out, _ = finished_run
    out = tmp_path / "resumed"
    first = run_study(spec, out, progress=False, max_batches=5)
    assert not first.finished and len(first.computed) == 5
    assert not (out / "summary.parquet").exists()
    second = run_study(spec, out, progress=False)
    assert second.finished
    assert set(second.skipped) == set(first.computed)
    assert set(second.computed).isdisjoint(first.computed)
    assert len(second.computed) + len(second.skipped) == 4 * 3
    for name in ("summary.parquet", "games.parquet"):
        assert (out / name).read_bytes() == (full_out / name).read_bytes(), name
    assert not list(out.glob("*.tmp"))


def test_games_override_changes_cells_and_keeps_results_apart(tmp_path):
    spec = load_spec(write_spec(tmp_path)).with_games(20)
    report = run_study(spec, tmp_path / "quick", progress=False, charts=False)
    assert report.finished
    assert pl.read_parquet(tmp_path / "quick" / "summary.parquet")["games"].to_list() == [20] * 4


def test_paired_comparison_is_narrower_than_unpaired(finished_run):
    spec, out, _ = finished_run
    table, baseline = compare_run(out)
    assert baseline == {"strategy": "heuristic"}
    assert table.height == 2
    for r in table.iter_rows(named=True):
        assert r["paired_se"] < r["unpaired_se"], r
        assert r["paired_low"] <= r["diff"] <= r["paired_high"]
        assert abs(r["diff"] - (r["win_rate"] - r["baseline_win_rate"])) < 1e-12


def test_content_overrides_change_the_game(tmp_path):
    text = SPEC.replace('strategies = ["heuristic", "cancel_early"]', 'strategies = ["heuristic"]\nsetups = ["default", "lobo2"]')
    text = text.split("[strategy.cancel_early]")[0] + "[compare]" + text.split("[compare]")[1]  # no unlisted table
    text = text.replace("[compare]", '[setup.lobo2]\noverrides = { "lobo.track.start" = 2 }\n[compare]')
    text = text.replace('baseline = { strategy = "heuristic" }', 'baseline = { setup = "default" }')
    spec = load_spec(write_spec(tmp_path, text))
    run_study(spec, tmp_path / "o", progress=False, charts=False)
    s = pl.read_parquet(tmp_path / "o" / "summary.parquet")
    lobo = {(r["players"], r["setup"]): r["mean_lobo"] for r in s.iter_rows(named=True)}
    # Dr. Lobo starts 2 higher: his final position is higher on average in the same games
    assert all(lobo[(p, "lobo2")] > lobo[(p, "default")] for p in (2, 3))


SKILLS = """
[experiment]
name = "skills"
seed = 5
games = 16
batch = 16
skills = "fixed"

[grid]
players = [2]
variants = ["standard", "dirty"]

[compare]
baseline = { variant = "standard" }
"""


def test_variants_that_play_the_same_games_with_fixed_skills_are_refused(tmp_path):
    text = SKILLS.replace('variants = ["standard", "dirty"]', 'variants = ["standard", "fixed-skills"]')
    with pytest.raises(SpecError) as e:
        load_spec(write_spec(tmp_path, text))
    assert str(e.value).startswith("mini.toml: grid.variants: 'fixed-skills' and 'standard' play the same games "
                                   "(fixed-skills) with skills = \"fixed\""), e.value
    pick = load_spec(write_spec(tmp_path, text.replace('skills = "fixed"', 'skills = "pick"')))
    assert [c.variant for c in pick.cells()] == ["standard", "fixed-skills"]
    with pytest.raises(SpecError, match="grid.variants: 'fixed-skills' and 'standard' play the same games"):
        pick.with_skills("fixed")  # run --skills fixed
    from sim.cli import main

    with pytest.raises(SystemExit) as e:  # the committed rule-readings spec: one line, before any game
        main(["run", "experiments/rule_readings.toml", "--skills", "fixed", "--out", str(tmp_path / "o"), "--quiet"])
    assert e.value.code == 2  # the spec is valid alone: --skills is refused (exit status 2)
    assert "error: --skills fixed: rule_readings.toml: grid.variants:" in str(e.value)
    assert not (tmp_path / "o").exists()


def test_a_cells_variant_is_what_it_played(tmp_path):
    spec = load_spec(write_spec(tmp_path, SKILLS))
    run_study(spec, tmp_path / "o", progress=False, charts=False)
    summary = pl.read_parquet(tmp_path / "o" / "summary.parquet")
    games = pl.read_parquet(tmp_path / "o" / "games.parquet")
    played = dict(games.group_by("cell").agg(pl.col("variant").unique()).iter_rows())
    assert {r["cell"]: [r["variant"]] for r in summary.iter_rows(named=True)} == played
    assert sorted(played) == ["p2_heuristic_dirty-lobo+dirty-location+fixed-skills_default_default",
                              "p2_heuristic_fixed-skills_default_default"]
    table, baseline = compare_run(tmp_path / "o")  # the spec's baseline names the grid's variant
    assert baseline == {"variant": "fixed-skills"} and table.height == 1
    assert table["variant"].to_list() == ["dirty-lobo,dirty-location,fixed-skills"]
    with pytest.raises(ValueError, match="variant='standard' matches no cell"):  # no cell played standard
        compare_run(tmp_path / "o", {"variant": "standard"})
    assert compare_run(tmp_path / "o", {"variant": "fixed-skills"})[0].equals(table)


def test_run_prints_the_variant_setup_column_aligned_however_long_the_labels():
    from sim.cli import _summary_table

    summary = pl.DataFrame({
        "players": [2, 2], "strategy": ["heuristic"] * 2, "variant": ["standard", "dirty-lobo,dirty-location"],
        "characters": ["default"] * 2, "setup": ["default", "a-rather-long-setup-name-lobo_start=3"],
        "games": [200, 200], "win_rate": [0.47, 0.315], "ci_low": [0.4, 0.25], "ci_high": [0.54, 0.38]})
    lines = _summary_table(summary).splitlines()
    assert lines[0].startswith("players  variant / setup ")
    ends = {line.index("games") + len("games") if i == 0 else line.index(" 200 ") + 4 for i, line in enumerate(lines)}
    assert len(ends) == 1, lines  # every games figure ends under the header's
    assert len({line.index("%") for line in lines[1:]}) == 1
