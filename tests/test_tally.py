"""One summary implementation: the tally merges exactly, and play / simulate / run / check report the same numbers."""

import contextlib
import io
import json
import textwrap

import numpy as np
import polars as pl
import pytest

import sim
from sim.bands import run_check
from sim.cli import main
from sim.experiments import load_spec
from sim.kernel import ROW_FIELDS
from sim.study import run_study
from sim.tally import QUANTILES, SUM_COLUMNS, Tally, TallyError, hist_mean_sd, hist_quantile

PLAYERS, GAMES, SEED, BATCH = 4, 30, 11, 7  # 30 games in uneven batches of 7 (win bits cross byte edges)
NEED = __import__("sim.content", fromlist=["load"]).load().lobo_intel_required


@pytest.fixture(scope="module")
def games():
    return sim.simulate(players=PLAYERS, games=GAMES, seed=SEED)


def test_quantiles_and_sd_from_a_histogram_are_numpys():
    rng = np.random.default_rng(5)
    for _ in range(300):
        x = rng.integers(0, rng.integers(1, 40), size=rng.integers(1, 60))
        h = np.bincount(x)
        for q in QUANTILES + (0.0, 0.1, 0.9, 1.0):
            assert hist_quantile(h, q) == pytest.approx(float(np.quantile(x, q)), abs=1e-9), (x, q)
        m, sd = hist_mean_sd(h)
        assert m == pytest.approx(float(x.mean()), abs=1e-12)
        assert sd == pytest.approx(float(x.std(ddof=1)) if x.size > 1 else 0.0, abs=1e-9)


def test_merged_batch_tallies_equal_the_tally_of_the_whole(games):
    whole = Tally.of_frame(games, NEED)
    rng = np.random.default_rng(3)
    for _ in range(25):
        cuts = np.sort(rng.integers(0, GAMES + 1, size=rng.integers(0, 6)))
        edges = [0, *cuts.tolist(), GAMES]
        parts = [Tally.of_frame(games.slice(a, b - a), NEED) for a, b in zip(edges, edges[1:])]
        assert Tally.merge(parts).equals(whole), edges
    assert np.array_equal(whole.win_vector(), games["win"].to_numpy())
    assert Tally.from_arrays(whole.to_arrays()).equals(whole)
    streamed = sim.run.simulate_tally(players=PLAYERS, games=GAMES, seed=SEED, batch=BATCH, keep_bits=True)
    assert streamed.equals(whole)


def test_kernel_rows_and_the_table_give_the_same_tally(games):
    from sim.content import load
    from sim.kernel import run_batch
    from sim.rules.state import Settings

    c = load()
    rows = run_batch(c, Settings.build(c, PLAYERS, None, None), sim.run._kernel_strategy("heuristic", None), SEED, 0, GAMES)
    assert Tally.of_rows(rows, ROW_FIELDS, NEED).equals(Tally.of_frame(games, NEED))


def test_rows_that_contradict_themselves_are_refused(games):
    bad = games.with_columns(pl.when(pl.col("game") == 3).then(~pl.col("win")).otherwise(pl.col("win")).alias("win"))
    with pytest.raises(TallyError, match="row 3: win = .* disagrees with outcome"):
        Tally.of_frame(bad, NEED)
    with pytest.raises(TallyError, match="tally format None, expected"):
        Tally.from_arrays({k: v for k, v in Tally.of_frame(games, NEED).to_arrays().items() if k != "format"})


def _cli_json(argv) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return json.loads(out.getvalue())


def test_play_simulate_run_and_check_report_the_same_summary(games, tmp_path):
    turns = games["turns"].to_numpy()
    expected_q = {f"q{round(q * 100):02d}": float(np.quantile(turns, q)) for q in QUANTILES}
    assert any(v != int(v) for v in expected_q.values())  # an interpolated quantile: the definitions must agree
    wins, mean = int(games["win"].sum()), float(turns.mean())

    play = _cli_json(["play", "--players", str(PLAYERS), "--games", str(GAMES), "--seed", str(SEED), "--json"])
    only = sim.simulate(players=PLAYERS, games=GAMES, seed=SEED, summary_only=True, batch=BATCH)

    spec_path = tmp_path / "same.toml"
    spec_path.write_text(textwrap.dedent(f"""
        [experiment]
        name = "same"
        seed = {SEED}
        games = {GAMES}
        batch = {BATCH}
        [grid]
        players = [{PLAYERS}]
    """))
    assert run_study(load_spec(spec_path), tmp_path / "out", progress=False, charts=False).finished
    row = pl.read_parquet(tmp_path / "out" / "summary.parquet").row(0, named=True)

    bands_path = tmp_path / "bands.toml"
    bands_path.write_text(textwrap.dedent(f"""
        [check]
        seed = {SEED}
        games = {GAMES}
        batch = {BATCH}
        [[cell]]
        name = "same"
        players = {PLAYERS}
        win_rate = [0.0, 1.0]
        mean_turns = [0.0, 100.0]
    """))
    checked = run_check(bands_path, update=True)[0]
    check = checked.tally.summary()

    for name, s in (("play", play), ("simulate(summary_only)", only), ("check", check)):
        assert s["games"] == GAMES and s["wins"] == wins, name
        assert s["turn_quantiles"] == expected_q, name
        assert s["mean_turns"] == pytest.approx(mean, abs=1e-12), name
        for o, k in s["outcomes"].items():
            assert k == int((games["outcome"] == o).sum()), (name, o)
    assert (row["games"], row["wins"]) == (GAMES, wins)
    assert {k: row[f"turns_{k}"] for k in expected_q} == expected_q
    assert row["turns_mean"] == pytest.approx(mean, abs=1e-12)
    for c in SUM_COLUMNS[1:]:
        assert row[f"mean_{c}"] == pytest.approx(only["means"][c], abs=1e-12) == games[c].mean()
    assert checked.estimates["mean_turns"].value == pytest.approx(mean, abs=1e-12)
    assert checked.estimates["win_rate"].value == wins / GAMES


def test_summary_only_on_the_reference_engine_plays_the_variant_asked_for():
    kw = {"players": 2, "games": 40, "seed": 3, "variant": "dirty", "summary_only": True, "batch": 15}
    assert sim.simulate(engine="reference", **kw) == sim.simulate(**kw)


def test_a_batch_file_of_another_format_is_played_again(tmp_path):
    spec_path = tmp_path / "fmt.toml"
    spec_path.write_text(textwrap.dedent("""
        [experiment]
        name = "fmt"
        seed = 2
        games = 20
        batch = 10
        [grid]
        players = [2]
    """))
    spec = load_spec(spec_path)
    first = run_study(spec, tmp_path / "out", progress=False, charts=False)
    summary = (tmp_path / "out" / "summary.parquet").read_bytes()
    old = next((tmp_path / "out" / ".state").rglob("batch_000001.npz"))
    np.savez(old, n=np.array([10]), outcomes=np.zeros(5, np.int64))  # an older layout
    again = run_study(spec, tmp_path / "out", progress=False, charts=False)
    assert len(first.computed) == 2 and [b for _, b in again.computed] == [1]
    assert (tmp_path / "out" / "summary.parquet").read_bytes() == summary


def test_loss_details_count_what_the_per_game_table_says():
    """Rounds of won games, the Location Track at a loss to Dr. Lobo, and the Intel a short Pool lacked."""
    from sim.content import load
    from sim.tally import INTEL_TYPE_NAMES, POOL_COLUMNS

    c = load()
    df = sim.simulate(players=3, games=3000, seed=4)
    t = Tally.of_frame(df, c.lobo_intel_required)
    won = df.filter(pl.col("win"))
    assert t.rounds_hist_win.tolist() == np.bincount(won["rounds"].to_numpy()).tolist()
    lobo = df.filter(pl.col("outcome") == "loss_lobo")
    assert t.track_hist_lobo.tolist() == np.bincount(lobo["location_track"].to_numpy()).tolist()
    short = df.filter(pl.col("outcome") == "loss_intel")
    assert short.height > 0
    for k, (name, col) in enumerate(zip(INTEL_TYPE_NAMES, POOL_COLUMNS)):
        need = c.lobo_intel_required[np.minimum(short["lobo"].to_numpy(), c.lobo_loss - 1), k]
        assert int(t.intel_short[k]) == int(np.sum(need > short[col].to_numpy())), name
    # every game lost on Intel was short of at least one type
    assert int(t.intel_short.sum()) >= short.height
