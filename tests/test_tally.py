"""One summary implementation: the tally merges exactly, and play / simulate / run / check report the same numbers."""

import contextlib
import io
import json
import textwrap

import numpy as np
import polars as pl
import pytest

import sim
import sim.run
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
    for _ in range(3000):
        x = rng.integers(0, rng.integers(1, 40), size=rng.integers(1, 60))
        h = np.bincount(x)
        for q in QUANTILES + (0.0, 0.1, 0.9, 1.0):
            # the same float, to the last bit (the README says numpy.quantile's numbers; 14.850000000000001 had
            # been printed for numpy's 14.85)
            assert hist_quantile(h, q) == float(np.quantile(x, q)), (x, q)
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


def _numpy_tally(rows, fields, need, keep_bits):
    """Tally.of_rows written column by column with numpy: the independent check of its compiled passes."""
    from sim.tally import OUTCOME_CODE, OUTCOMES, POOL_COLUMNS, pack_wins

    col = {c: rows[:, list(fields).index(c)].astype(np.int64) for c in ("outcome", "win") + SUM_COLUMNS}
    outcome, won = col["outcome"], col["win"] != 0

    def hist(v):
        return np.bincount(v).astype(np.int64) if v.size else np.zeros(0, np.int64)

    lobo = np.clip(col["lobo"], 0, need.shape[0] - 1)
    pools = np.column_stack([col[c] for c in POOL_COLUMNS])
    short = (need[lobo] > pools) & (outcome == OUTCOME_CODE["loss_intel"])[:, None]
    return Tally(n=rows.shape[0], wins=int(won.sum()),
                 outcomes=np.bincount(outcome, minlength=len(OUTCOMES)).astype(np.int64),
                 sums=np.array([int(col[c].sum()) for c in SUM_COLUMNS], np.int64),
                 turns_hist=hist(col["turns"]), rounds_hist=hist(col["rounds"]),
                 win_bits=pack_wins(won) if keep_bits else None, rounds_hist_win=hist(col["rounds"][won]),
                 track_hist_lobo=hist(col["location_track"][outcome == OUTCOME_CODE["loss_lobo"]]),
                 intel_short=short.sum(axis=0).astype(np.int64)) if rows.shape[0] else Tally.empty(keep_bits)


def test_the_compiled_row_passes_give_numpys_tally():
    """Tally.of_rows (two compiled passes along the rows) against a numpy tally, column by column: on real
    kernel rows of every player count, on blocks of them in a shuffled order and on random valid rows."""
    from sim.content import load
    from sim.kernel import run_batch
    from sim.rules.state import Settings
    from sim.tally import OUTCOME_CODE, OUTCOMES, WIN_OUTCOMES

    c = load()
    rng = np.random.default_rng(8)
    blocks = []
    for players in range(1, 7):
        rows = run_batch(c, Settings.build(c, players, None, None), sim.run._kernel_strategy("heuristic", None),
                         SEED, 0, 400)
        need = c.for_players(players).lobo_intel_required
        blocks.append((rows, need))
        blocks.append((rows[rng.permutation(rows.shape[0])[: rng.integers(0, 50)]], need))
    fake = rng.integers(0, 12, size=(2000, len(ROW_FIELDS)))
    fake[:, ROW_FIELDS.index("outcome")] = rng.integers(0, len(OUTCOMES), 2000)
    wins = np.isin(fake[:, ROW_FIELDS.index("outcome")], [OUTCOME_CODE[o] for o in WIN_OUTCOMES])
    fake[:, ROW_FIELDS.index("win")] = wins
    blocks.append((fake, NEED))
    seen = set()
    for rows, need in blocks:
        for keep_bits in (True, False):
            fast, slow = Tally.of_rows(rows, ROW_FIELDS, need, keep_bits), _numpy_tally(rows, ROW_FIELDS, need, keep_bits)
            assert fast.equals(slow)
            for name in ("turns_hist", "rounds_hist", "rounds_hist_win", "track_hist_lobo"):  # the same lengths too
                assert np.array_equal(getattr(fast, name), getattr(slow, name)), name
        seen |= {OUTCOMES[o] for o in rows[:, ROW_FIELDS.index("outcome")]}
    assert {"win_location", "loss_lobo", "loss_intel"} <= seen  # the branches of the second pass all ran


def test_rows_off_their_ranges_are_refused():
    rows = sim.kernel.run_batch(*_cell(), SEED, 0, 40)
    for column, value, message in (("outcome", 99, r"outcome codes must be 0\.\.\d+, got \d+\.\.99"),
                                   ("turns", -2, "column turns holds a negative value \\(-2\\)"),
                                   ("rounds", -1, "column rounds holds a negative value \\(-1\\)")):
        bad = rows.copy()
        bad[5, ROW_FIELDS.index(column)] = value
        with pytest.raises(TallyError, match=message):
            Tally.of_rows(bad, ROW_FIELDS, NEED)
    lobo = np.flatnonzero(rows[:, ROW_FIELDS.index("outcome")] == sim.tally.OUTCOME_CODE["loss_lobo"])
    for where in (lobo[:1], lobo):  # one of them, or every one (the histogram would have no cell at all)
        bad = rows.copy()
        bad[where, ROW_FIELDS.index("location_track")] = -3
        with pytest.raises(TallyError, match="location_track holds a negative value \\(-3\\) in a game lost to Dr. Lobo"):
            Tally.of_rows(bad, ROW_FIELDS, NEED)
    with pytest.raises(TallyError, match="need must be a \\[Lobo position, 4 Intel types\\] table, got shape \\(9,\\)"):
        Tally.of_rows(rows, ROW_FIELDS, NEED[:, 0])


def _cell():
    from sim.content import load
    from sim.rules.state import Settings

    c = load()
    return c, Settings.build(c, PLAYERS, None, None), sim.run._kernel_strategy("heuristic", None)


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
