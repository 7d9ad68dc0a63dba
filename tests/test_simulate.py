"""The public entry point: sim.simulate() input checks, engines, summary-only mode."""

import numpy as np
import polars as pl
import pytest

import sim
import sim.kernel.batch as batch


def test_simulate_returns_one_row_per_game_with_stable_columns():
    df = sim.simulate(players=3, games=40, seed=9)
    assert isinstance(df, pl.DataFrame) and df.height == 40
    assert df["game"].to_list() == list(range(40))
    assert set(df["outcome"].unique()) <= {"win_location", "win_henchmen", "loss_lobo", "loss_intel", "timeout"}
    assert (df["win"] == df["outcome"].is_in(["win_location", "win_henchmen"])).all()


def test_kernel_and_reference_agree_on_variants_and_lineups():
    for kw in ({"variant": "dirty"}, {"variant": "easier"}, {"characters": "random"},
               {"characters": "Nika Shizuka,Agent Five"}, {"strategy": "bold", "params": {"pool_target": 4}}):
        players = 2
        a = sim.simulate(players=players, games=60, seed=4, **kw)
        b = sim.simulate(players=players, games=60, seed=4, engine="reference", **kw)
        assert a.equals(b), kw


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"players": 7}, "players must be an integer from 1 to 6"),
        ({"games": -1}, "games must be a non-negative integer"),
        ({"seed": -5}, "seed must be in"),
        ({"engine": "gpu"}, "engine must be one of"),
        ({"threads": 0}, "threads must be a positive integer"),
        ({"strategy": "nope"}, "unknown strategy 'nope'"),
        ({"variant": "harder"}, "unknown variant 'harder'"),
        ({"characters": "Calli Dagger"}, "1 given for 4 players"),
        ({"params": {"pool_target": 3, "bogus": 1}}, "unknown heuristic parameter"),
        ({"params": {"name": "x"}}, r"unknown heuristic parameter\(s\): name \(name is the strategy's label"),
        ({"params": {"players": 2}}, r"unknown heuristic parameter\(s\): players \(players is the seat count"),
        ({"strategy": "tuned", "params": {"players": 2}}, r"unknown heuristic parameter\(s\): players"),
        ({"strategy": "tuned", "params": {"name": "x"}}, r"unknown heuristic parameter\(s\): name"),
        ({"strategy": "heuristic,bold,bold,bold", "params": {"name": "x"}}, r"unknown heuristic parameter\(s\): name"),
        ({"engine": "reference", "params": {"name": "x"}}, r"unknown heuristic parameter\(s\): name"),
        ({"params": {"pool_target": -5}}, "pool_target must be an integer from 0 to 1,000,000,000, got int -5"),
        ({"params": {"patience_rounds": -1}}, "patience_rounds must be an integer from 0 to"),
        ({"params": {"dice_stop_margin": -1_000_000_000}}, "dice_stop_margin must be an integer from 0 to"),
        ({"params": {"cancel_at": -1_000_000_001}}, "cancel_at must be an integer from -1,000,000,000 to"),
    ],
)
def test_bad_input_is_refused_clearly(kw, match):
    args = {"players": 4, "games": 5, "seed": 1, **kw}
    with pytest.raises(ValueError, match=match):
        sim.simulate(**args)


def test_only_cancel_at_takes_a_negative_value_and_it_plays_as_its_own_setting():
    """Every other integer knob is a count, a round, a distance or a margin below a player's life, where
    a negative value would play exactly as 0: refused. cancel_at meets villain card values, -1 included:
    at -1 a -1 card is cancelled too, so it plays other games than at 0."""
    from dataclasses import fields

    from strategies.heuristic import SIGNED_INT_PARAMS, HeuristicParams

    ints = [f.name for f in fields(HeuristicParams) if f.type in ("int", int)]
    assert len(ints) >= 10 and set(SIGNED_INT_PARAMS) == {"cancel_at"}
    for name in ints:
        if name not in SIGNED_INT_PARAMS:
            with pytest.raises(ValueError, match=f"{name} must be an integer from 0 to"):
                HeuristicParams(**{name: -1})
            HeuristicParams(**{name: 0})
    kw = {"players": 4, "games": 300, "seed": 2, "engine": "reference"}
    a = sim.simulate(params={"cancel_at": -1}, **kw)
    b = sim.simulate(params={"cancel_at": 0}, **kw)
    assert not a.equals(b)


def test_the_table_built_as_the_threads_play_is_the_table_of_the_rows():
    """simulate() copies each chunk's columns out in the playing threads: the same table as
    kernel_frame() of the whole batch's rows, whatever the thread count."""
    from sim.content import load
    from sim.kernel import run_batch
    from sim.rules.state import Settings
    from sim.run import _kernel_strategy, kernel_frame

    c = load()
    s = Settings.build(c, 5, "random")
    rows = run_batch(c, s, _kernel_strategy("bold", None, 5), 3, 40, 900)
    whole = kernel_frame(c, s, "bold", rows)
    for threads in (1, 2):
        assert sim.simulate(players=5, games=900, seed=3, game0=40, strategy="bold", characters="random",
                            threads=threads).equals(whole)
    assert whole["characters"].n_unique() > 20 and whole["henchman_levels"].n_unique() > 5  # codes decoded


def test_a_value_the_table_cannot_hold_is_refused_not_wrapped():
    """A row value beyond int32, or a character or level off its range, stops the table loudly."""
    from sim.content import load
    from sim.kernel import run_batch
    from sim.kernel.layout import OFFSETS, row_block_slots
    from sim.rules.state import Settings
    from sim.run import _kernel_strategy, kernel_frame

    c = load()
    s = Settings.build(c, 4)
    rows = run_batch(c, s, _kernel_strategy("heuristic", None, 4), 1, 0, 5)
    assert kernel_frame(c, s, "heuristic", rows).height == 5
    seat0, _ = row_block_slots(len(c.henchman_names))["characters"]
    level0, _ = row_block_slots(len(c.henchman_names))["henchman_levels"]
    for slot, value in ((OFFSETS["R_TURNS"], 2**31), (OFFSETS["R_INJURIES"], -(2**31) - 1),
                        (seat0 + 3, len(c.character_names)), (seat0, -1), (level0 + 1, 5)):
        bad = rows.copy()
        bad[2, slot] = value
        with pytest.raises(OverflowError, match="game 2: a value out of the table's range"):
            kernel_frame(c, s, "heuristic", bad)


def test_summary_only_matches_the_table_and_holds_two_batches_at_a_time(monkeypatch):
    full = sim.simulate(players=4, games=3000, seed=12)
    seen, arrays = [], []
    real = batch.run_batch

    def spy(content, settings, strategy, seed, game0, n_games, threads=None, **kw):
        seen.append(n_games)
        rows = real(content, settings, strategy, seed, game0, n_games, threads, **kw)
        out = kw.get("out")
        arrays.append(id(rows) if out is None else id(out.base if out.base is not None else out))
        return rows

    monkeypatch.setattr(batch, "run_batch", spy)
    monkeypatch.setattr("sim.kernel.run_batch", spy)
    s = sim.simulate(players=4, games=3000, seed=12, summary_only=True, batch=700)
    assert seen == [700, 700, 700, 700, 200]
    # two arrays of rows in turn (one is tallied while the next batch plays into the other)
    assert arrays[0] != arrays[1] and arrays[2:] == [arrays[0], arrays[1], arrays[0]]
    assert s["games"] == 3000 and s["wins"] == int(full["win"].sum())
    assert s["outcomes"]["loss_lobo"] == int((full["outcome"] == "loss_lobo").sum())
    assert s["mean_turns"] == pytest.approx(full["turns"].mean(), rel=0, abs=1e-12)
    assert s["means"]["injuries"] == pytest.approx(full["injuries"].mean(), rel=0, abs=1e-12)
    hist = np.bincount(full["turns"].to_numpy(), minlength=len(s["turns_histogram"]))
    assert np.array_equal(hist, s["turns_histogram"])
    assert s["ci_low"] < s["win_rate"] < s["ci_high"]


def test_cli_says_when_the_kernel_is_compiling(monkeypatch, capsys, tmp_path):
    import sim._cache
    from sim import cli

    args = cli.build_parser().parse_args(["play", "--players", "2", "--games", "1"])
    monkeypatch.setattr(sim._cache, "is_compiled", lambda: False)
    cli._announce_compile(args)
    assert "compiling the simulation kernel" in capsys.readouterr().err
    monkeypatch.setattr(sim._cache, "is_compiled", lambda: True)
    cli._announce_compile(args)
    assert capsys.readouterr().err == ""
    ref = cli.build_parser().parse_args(["play", "--players", "2", "--games", "1", "--engine", "reference"])
    monkeypatch.setattr(sim._cache, "is_compiled", lambda: False)
    cli._announce_compile(ref)  # the readable engine compiles nothing
    assert capsys.readouterr().err == ""
    monkeypatch.undo()
    # what is_compiled looks for: numba's index file of the batch function in the cache folder
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert not sim._cache.is_compiled()
    (tmp_path / "kernel_x").mkdir()
    (tmp_path / "kernel_x" / "game.simulate_batch-196.py311.nbi").write_bytes(b"")
    assert sim._cache.is_compiled()
