"""smersh-sim sensitivity: one step down and up per knob, paired against the unchanged pack."""

import polars as pl
import pytest

from sim import sensitivity as S
from sim.content import DEFAULT_PACK, load_raw


def test_current_values_of_the_default_pack():
    raw = load_raw(DEFAULT_PACK)
    assert S.current_value(raw, "lobo.track.start") == 0
    assert S.current_value(raw, "setup.player_count[players=4].location_target") == 5
    assert S.current_value(raw, "villain.counts.minus_one") == raw["villain.toml"]["composition"]["minus_one"]
    with pytest.raises(S.SensitivityError, match="different values"):
        S.current_value(raw, "setup.player_count[*].location_target")
    with pytest.raises(S.SensitivityError, match="no kind"):
        S.current_value(raw, "villain.counts.minus_two")


def test_steps_are_paired_and_refusals_reported(tmp_path):
    knobs = ["lobo.track.start", "setup.player_count[players={players}].extra_un"]
    t = S.sensitivity([4], knobs, games=4000, seed=3)
    assert t.height == 4
    played = t.filter(pl.col("refused").is_null())
    # the paired difference is exactly the difference of the two win rates on the same games
    for r in played.iter_rows(named=True):
        assert r["diff"] == pytest.approx(r["win_rate"] - r["default_win_rate"], abs=1e-12)
        assert r["diff_low"] <= r["diff"] <= r["diff_high"]
    # extra_un is 0 at 4 players: a step down is refused by the pack, with the reason, and plays nothing
    down = t.filter((pl.col("knob") == "setup.player_count[players=4].extra_un") & (pl.col("step") == -1)).row(0, named=True)
    assert down["refused"] and "extra_un" in down["refused"] and down["win_rate"] is None
    # Dr. Lobo one step further along makes the game clearly harder (about 8 points here)
    up = t.filter((pl.col("knob") == "lobo.track.start") & (pl.col("step") == 1)).row(0, named=True)
    assert up["diff_high"] < 0
    files = S.write_outputs(t, tmp_path)
    assert (tmp_path / "tornado_4p.png") in files
    assert pl.read_parquet(tmp_path / "sensitivity.parquet").equals(t)


def test_a_refused_step_claims_no_games(tmp_path, capsys):
    """Dr. Lobo starts at 0: the step to -1 is refused and plays nothing, so its row says 0 games (the table,
    the CSV, the --json output), and the Parquet metadata and the chart give the games of the steps played."""
    import json

    from PIL import Image

    from sim.cli import main
    from sim.manifest import read_metadata

    knob = ["setup.player_count[players={players}].lobo_start"]
    t = S.sensitivity([2], knob, games=300, seed=4)
    down, up = t.sort("step").iter_rows(named=True)
    assert down["refused"] and (down["from"], down["to"], down["games"], down["win_rate"]) == (0, -1, 0, None)
    assert up["refused"] is None and up["games"] == 300
    assert S.games_per_setting(t) == [300]
    S.write_outputs(t, tmp_path)
    assert read_metadata(tmp_path / "sensitivity.parquet")["games"] == "300"
    assert pl.read_csv(tmp_path / "sensitivity.csv").sort("step")["games"].to_list() == [0, 300]
    assert json.loads(Image.open(tmp_path / "tornado_2p.png").text["Description"])["games"] == 300
    main(["sensitivity", "--players", "2", "--games", "300", "--seed", "4", "--knob", knob[0], "--json"])
    rows = sorted(json.loads(capsys.readouterr().out), key=lambda r: r["step"])
    assert [(r["games"], r["refused"] is None) for r in rows] == [(0, False), (300, True)]
    # what the seats played, as JSON (not a JSON string inside it): the table's text, read
    assert [r["plays"] for r in rows] == [json.loads(v) for v in t.sort("step")["plays"]]
    assert all(isinstance(r["plays"], dict) and r["plays"]["name"] == "heuristic" for r in rows), rows


def test_the_committed_table_claims_no_games_for_a_refused_step():
    from pathlib import Path

    folder = Path(__file__).resolve().parent.parent / "results" / "sensitivity"
    for t in (pl.read_parquet(folder / "sensitivity.parquet"), pl.read_csv(folder / "sensitivity.csv")):
        refused = t.filter(pl.col("refused").is_not_null())
        assert refused.height and refused["games"].to_list() == [0] * refused.height
        assert set(t.filter(pl.col("refused").is_null())["games"].to_list()) == {20_000}


def test_per_player_knobs_read_the_pack_values_they_fall_back_to():
    raw = load_raw(DEFAULT_PACK)
    assert S.current_value(raw, "setup.player_count[players=4].lobo_start") == raw["lobo.toml"]["track"]["start"]
    assert S.current_value(raw, "setup.player_count[players=4].villain_counts.minus_one") == \
        raw["villain.toml"]["composition"]["minus_one"]
    assert all(k.startswith("setup.player_count[players=3].") for k in S.default_knobs(3))


def _pack_with_row_4(tmp_path, lines: str):
    """A copy of the default pack whose 4-player row of setup.toml gains ``lines``."""
    import shutil

    pack = tmp_path / "pack"
    shutil.copytree(DEFAULT_PACK, pack)
    setup = pack / "setup.toml"
    text = setup.read_text()
    row = text.index("players = 4\n") + len("players = 4\n")
    setup.write_text(text[:row] + lines + text[row:])
    return pack


def test_a_knob_the_player_count_overrides_is_refused_before_any_game(tmp_path, monkeypatch):
    """4-player games play the row's lobo_start and villain_counts, not lobo.track.start or villain.counts:
    stepping those would report +0.00 [+0.00, +0.00] (or the noise of other cards relabelled) for a value
    the games never moved."""
    pack = _pack_with_row_4(tmp_path, "lobo_start = 1\nvillain_counts = {minus_one = 4}\n")

    def played(*a, **k):
        raise AssertionError("games were played")

    monkeypatch.setattr(S, "play_win_vector", played)
    with pytest.raises(S.SensitivityError) as e:
        S.sensitivity([4], ["lobo.track.start", "villain.counts.minus_one"], games=200, content=pack)
    msg = str(e.value)
    assert "lobo.track.start 0 -> 1 at 4 players: setup.toml's player_count 4 sets lobo_start = 1" in msg
    assert "setup.player_count[players=4].lobo_start" in msg
    for step in ("2 -> 1", "2 -> 3"):  # 2 -> 1 relabels other cards as -1 but 4-player games still play four
        assert f"villain.counts.minus_one {step} at 4 players: setup.toml's player_count 4 sets " \
               "villain_counts.minus_one = 4" in msg
    # a row of another player count is refused the same way
    with pytest.raises(S.SensitivityError, match=r"location_target at 2 players: it sets setup.toml's row for 4 "
                                                 r"players, which a 2-player game does not read"):
        S.sensitivity([2], ["setup.player_count[players=4].location_target"], games=200)


def test_steps_are_labelled_with_the_value_the_player_count_plays(tmp_path):
    pack = _pack_with_row_4(tmp_path, "lobo_start = 1\nvillain_counts = {minus_one = 4}\n")
    raw = load_raw(pack)
    comp = raw["villain.toml"]["composition"]
    assert S.played_value(raw, "lobo.track.start", 4) == 1 and S.played_value(raw, "lobo.track.start", 2) == 0
    assert S.played_value(raw, "villain.counts.minus_one", 4) == 4
    assert S.played_value(raw, "villain.counts.minus_one", 2) == comp["minus_one"]
    # +1 cards fill the deck the row's four -1 cards leave
    deck = len(raw["villain.toml"]["card"])
    fill = deck - comp["plus_two"] - comp["injury"] - 4
    assert S.played_value(raw, "setup.player_count[players=4].villain_counts.plus_one", 4) == fill
    t = S.sensitivity([4], ["setup.player_count[players=4].lobo_start",
                            "setup.player_count[players=4].villain_counts.minus_one"], games=300, content=pack)
    steps = {(r["knob"].rsplit(".", 1)[1], r["from"], r["to"]) for r in t.iter_rows(named=True)}
    assert steps == {("lobo_start", 1, 0), ("lobo_start", 1, 2), ("minus_one", 4, 3), ("minus_one", 4, 5)}
    assert t["diff"].null_count() == 0
    # at 2 players the global knobs are what is played: stepped and measured
    two = S.sensitivity([2], ["lobo.track.start"], games=300, content=pack)
    assert two.filter(pl.col("step") == 1)["diff"][0] is not None


def test_outputs_say_which_strategy_params_pack_and_rules_played(tmp_path):
    """A bold run with a parameter cannot be taken for a heuristic one: the table's columns, the Parquet
    file's metadata, the CSV and each chart's title and PNG metadata say what the games were played with."""
    import json

    from PIL import Image

    import sim
    from sim.content import load
    from sim.manifest import read_metadata

    knob = ["setup.player_count[players={players}].location_target"]
    t = S.sensitivity([2], knob, strategy="bold", params={"pool_target": 6}, games=300, seed=4)
    pack_hash = load(DEFAULT_PACK).hash
    want = {"strategy": "bold", "params": '{"pool_target": 6}', "seed": 4, "engine": "kernel",
            "content_hash": pack_hash, "rules_version": sim.RULES_VERSION}
    assert S.made_with(t) == want
    S.write_outputs(t, tmp_path)
    meta = read_metadata(tmp_path / "sensitivity.parquet")
    assert (meta["strategy"], json.loads(meta["strategy_params"]), meta["seed"]) == ("bold", {"pool_target": 6}, 4)
    assert (meta["content_hash"], meta["rules_version"], meta["games"]) == (pack_hash, sim.RULES_VERSION, "300")
    assert pl.read_csv(tmp_path / "sensitivity.csv")["strategy"].to_list() == ["bold", "bold"]
    png = json.loads(Image.open(tmp_path / "tornado_2p.png").text["Description"])
    assert png == {**want, "players": 2, "games": 300}
    heuristic = S.sensitivity([2], knob, games=300, seed=4)
    assert S.made_with(heuristic)["strategy"] == "heuristic" and S.made_with(heuristic)["params"] == "{}"
    assert S.who_played(S.made_with(t)) == "bold players (pool_target=6)"


def test_the_table_and_its_metadata_say_which_tuned_sets_played(tmp_path):
    """``tuned``'s parameters come from strategies/tuned.toml: each row says what its player count's seats played
    (its ``plays``, JSON), and so does the Parquet file's metadata, read before any game."""
    import json

    import strategies
    from sim.manifest import read_metadata

    t = S.sensitivity([2, 4], ["lobo.track.start"], strategy="tuned", games=100, seed=4)
    sets = {p: {"name": "tuned", "params": strategies.make("tuned", players=p).params()} for p in (2, 4)}
    assert sets[2] != sets[4]
    assert [json.loads(v) for v in t["plays"]] == [sets[p] for p in t["players"]]
    S.write_outputs(t, tmp_path)
    assert read_metadata(tmp_path)["plays"] == {str(p): sets[p] for p in (2, 4)}


@pytest.mark.parametrize("players", range(1, 7))
def test_the_default_knobs_are_values_the_default_line_up_reads(players):
    """Each default knob changes what a game of the default line-up plays: the solo game seats Calli Dagger alone,
    who takes giver_extra_un and giver_extra_top_secret, so those are its extras to step, not extra_un and
    extra_top_secret (which every other character takes, and a +0.00 bar would chart for a value no seat reads)."""
    from sim.content import ContentError, load
    from sim.content.overrides import load_with_overrides
    from sim.rules.reads import played_key
    from sim.rules.state import Settings
    from sim.tune import Knob, overrides_of

    knobs = S.default_knobs(players)
    names = {k.rsplit(".", 1)[1] for k in knobs}
    assert {"giver_extra_un", "giver_extra_top_secret"} <= names
    assert ({"extra_un", "extra_top_secret"} <= names) == (players > 1)
    base, raw = load(), load_raw(DEFAULT_PACK)
    s = Settings(players=players)
    for knob in knobs:
        value = S.played_value(raw, knob, players) + 1
        try:
            pack = load_with_overrides(DEFAULT_PACK, overrides_of([Knob(knob, (value,))], (value,)))
        except ContentError:
            continue
        assert played_key(pack, s) != played_key(base, s), knob


def test_a_step_that_changes_no_game_is_reported_as_the_unchanged_packs_games(tmp_path, capsys):
    """mission_resolve is read (a value of the pack the games play) but the built-in strategies never take that
    reward, so its steps replay the unchanged pack's games record for record: an exact zero on these games, not
    a +0.00 estimate with a paired interval around it."""
    from sim.cli import main

    knobs = ["setup.player_count[players={players}].mission_resolve", "setup.player_count[players={players}].location_target"]
    t = S.sensitivity([2], knobs, games=400, seed=2)
    same = t.filter(pl.col("knob").str.ends_with("mission_resolve"))
    assert same["same_games"].to_list() == [True, True] and same["diff"].to_list() == [0.0, 0.0]
    assert same["diff_low"].null_count() == 2 and same["diff_high"].null_count() == 2
    assert same["win_rate"].to_list() == same["default_win_rate"].to_list()
    moved = t.filter(pl.col("knob").str.ends_with("location_target"))
    assert moved["same_games"].to_list() == [False, False] and moved["diff_low"].null_count() == 0
    S.write_outputs(t, tmp_path)  # the chart draws no bar for it and says why in the label
    assert pl.read_parquet(tmp_path / "sensitivity.parquet")["same_games"].to_list() == t["same_games"].to_list()
    main(["sensitivity", "--players", "2", "--games", "400", "--seed", "2", "--knob", knobs[0]])
    out = capsys.readouterr().out
    assert out.count("no game changed: the unchanged pack's games, record for record") == 2 and "[" not in out.split("\n", 1)[1]


def _tuned_edited_by_the_first_job(monkeypatch, tmp_path, module, job_function: str):
    """strategies/tuned.toml pointed at a copy that the run's first job edits (players.4's pool_target) before it
    plays: the jobs after it build another set."""
    import strategies.tuned as tuned
    from tests.test_resume_edits import _with_pool_target

    path = tmp_path / "tuned.toml"
    path.write_text(tuned.TUNED_PATH.read_text(encoding="utf-8"), encoding="utf-8")
    other = tuned.tuned_params(4)["pool_target"] % 5 + 1
    monkeypatch.setattr(tuned, "TUNED_PATH", path)
    real = getattr(module, job_function)

    def edit_then_play(*args, **kwargs):
        path.write_text(_with_pool_target(path.read_text(encoding="utf-8"), other), encoding="utf-8")
        return real(*args, **kwargs)

    monkeypatch.setattr(module, job_function, edit_then_play)


def test_a_tuned_file_edited_during_the_run_is_refused_not_reported(tmp_path, monkeypatch):
    _tuned_edited_by_the_first_job(monkeypatch, tmp_path, S, "play_win_vector")
    from sim.run import PlaysChanged

    with pytest.raises(PlaysChanged, match=r"^strategy tuned's seats at 4 players would play other parameters than "
                                           r"when the run began \(an edited strategies/tuned.toml\?\): a run plays one "
                                           "set throughout, so it stops here; run again$"):
        S.sensitivity([4], ["lobo.track.start"], strategy="tuned", games=50, seed=4)


def lobo_one_pack(tmp_path):
    """A copy of the default pack where Dr. Lobo starts at 1: another pack than ``tuned`` was searched on."""
    import shutil

    pack = tmp_path / "pack"
    shutil.copytree(DEFAULT_PACK, pack)
    lobo = pack / "lobo.toml"
    lobo.write_text(lobo.read_text(encoding="utf-8").replace("start = 0\n", "start = 1\n", 1), encoding="utf-8")
    return pack


def searched_elsewhere_said(run) -> list[str]:
    """The searched-elsewhere warnings ``run()`` gives, every one (none deduplicated)."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run()
    return [str(w.message) for w in caught if "searched on the default pack" in str(w.message)]


def test_tuned_is_judged_by_the_pack_the_steps_are_taken_from_and_said_once_not_by_each_job(tmp_path):
    """Each step is another pack by design: sensitivity says that ``tuned`` plays outside its search only when the
    pack it steps from is another pack, and says it itself, once per player count, before any game; its jobs
    (which a cluster's workers play, where no one reads them) say nothing."""

    def said(content) -> list[str]:
        return searched_elsewhere_said(lambda: S.sensitivity([2, 4], ["lobo.track.start"], strategy="tuned",
                                                             games=30, seed=4, content=content))

    assert said(None) == []
    got = said(lobo_one_pack(tmp_path))
    assert len(got) == 2 and all("this game has another content pack:" in m for m in got), got
