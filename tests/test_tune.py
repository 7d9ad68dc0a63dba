"""smersh-sim tune: knob parsing, racing against a band on a synthetic win rate, reproducibility."""

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from sim import tune as T

U = np.random.default_rng(20261126).random(4_000_000)  # one uniform per game index: common random numbers


def true_rate(values):
    a, b = values
    return round(0.2 + 0.05 * a - 0.03 * b, 10)


def synthetic(values, players, game0, games):
    """Game g is won when U[g] < p: every candidate sees the same games (common random numbers)."""
    return int(np.count_nonzero(U[game0:game0 + games] < true_rate(values)))


KNOBS = [T.Knob("a", tuple(range(10))), T.Knob("b", tuple(range(5)))]
TARGET = [T.Target(4, 0.43, 0.47)]


def test_knob_parsing():
    assert T.Knob.parse("lobo.track.start=-2..3").values == (-2, -1, 0, 1, 2, 3)
    assert T.Knob.parse("villain.counts.minus_one=1,3,5") == T.Knob("villain.counts.minus_one", (1, 3, 5))
    assert T.Knob.parse("setup.player_count[players=4].lobo_start=0..2") == \
        T.Knob("setup.player_count[players=4].lobo_start", (0, 1, 2))
    for bad in ("lobo.track.start", "x=3..1", "x=a..b", "x=1,1", "=1..2", "x=0..500"):
        with pytest.raises(T.TuneError):
            T.Knob.parse(bad)
    with pytest.raises(T.TuneError):
        T.parse_target("0.47:0.43", 4)
    with pytest.raises(T.TuneError):
        T.parse_target("nan:0.4", 4)
    assert T.overrides_of([T.Knob("lobo.track.start", (1,)), T.Knob("villain.counts.minus_one", (4,))], (1, 4)) == {
        "lobo.track.start": 1, "villain.counts": {"minus_one": 4}}


def test_a_knob_path_given_twice_is_refused_before_any_game(monkeypatch):
    """The later override would win: candidates differing in the first knob would all play its last value."""
    twice = [T.Knob.parse("lobo.track.start=0,1"), T.Knob.parse("lobo.track.start=3")]

    def played(*a, **k):
        raise AssertionError("games were played")

    with pytest.raises(T.TuneError, match="lobo.track.start: given twice"):
        T.race(twice, TARGET, played, budget=4000)
    monkeypatch.setattr(T, "race", played)
    with pytest.raises(T.TuneError, match="given twice"):
        T.tune(twice, [T.Target(2, 0.05, 0.6)], budget=4000)


def _pack_with_4p_row(tmp_path, line: str):
    """A copy of the default pack whose 4-player row of setup.toml also holds ``line``."""
    import shutil

    from sim.content import DEFAULT_PACK

    pack = tmp_path / "pack"
    shutil.copytree(DEFAULT_PACK, pack)
    setup = pack / "setup.toml"
    text = setup.read_text()
    row = text.index("players = 4")
    setup.write_text(text[:row] + line + "\n" + text[row:])
    return pack


def _no_race(monkeypatch):
    """Any game played from here on fails the test with 'games were played'."""
    def played(*a, **k):
        raise AssertionError("games were played")

    monkeypatch.setattr(T, "race", played)


def test_settings_that_play_the_same_pack_at_the_target_counts_are_refused_before_any_game(tmp_path, monkeypatch):
    """A per-player-count value overrides the knob at that count: its settings would be raced as if
    they differed. At a count where the knob does apply they are told apart."""
    pack = _pack_with_4p_row(tmp_path, "lobo_start = 2")
    knob = [T.Knob.parse("lobo.track.start=0,1")]
    _no_race(monkeypatch)
    with pytest.raises(T.TuneError, match=r"lobo.track.start=0 and lobo.track.start=1 play the same games at 4 players"):
        T.tune(knob, [T.Target(4, 0.3, 0.5)], budget=4000, content=pack)
    with pytest.raises(AssertionError, match="games were played"):  # at 2 players the knob applies
        T.tune(knob, [T.Target(4, 0.3, 0.5), T.Target(2, 0.3, 0.5)], budget=4000, content=pack)


def test_settings_that_play_the_same_values_at_the_target_counts_are_refused_before_any_game(tmp_path, monkeypatch):
    """Packs that differ but play the same knob values there: a row of setup.toml for another player count,
    or villain.counts under the player count's own villain_counts (other cards relabelled, the same count)."""
    pack = _pack_with_4p_row(tmp_path, "villain_counts = { minus_one = 4 }")
    _no_race(monkeypatch)
    with pytest.raises(T.TuneError, match=r"players=4\].lobo_start=0 and .*lobo_start=1 play the same value of "
                                          r"every knob at 2 players"):
        T.tune([T.Knob.parse("setup.player_count[players=4].lobo_start=0..2")], [T.Target(2, 0.3, 0.5)],
               budget=4000)
    with pytest.raises(T.TuneError, match=r"minus_one=1 and villain.counts.minus_one=2 play the same value of "
                                          r"every knob at 4 players"):
        T.tune([T.Knob.parse("villain.counts.minus_one=1..3")], [T.Target(4, 0.3, 0.5)], budget=4000, content=pack)
    with pytest.raises(AssertionError, match="games were played"):  # at 2 players the pack's count is played
        T.tune([T.Knob.parse("villain.counts.minus_one=1..3")], [T.Target(2, 0.3, 0.5)], budget=4000, content=pack)


def test_settings_one_knob_apart_that_play_the_same_games_are_refused_before_a_tpe_search(tmp_path, monkeypatch):
    """A grid too large to enumerate is searched, building packs as it goes: a knob the target player
    counts do not read is refused before any game all the same, as it is in a grid."""
    searched = []

    def race(*a, **k):
        searched.append(k["max_candidates"])
        raise AssertionError("games were played")

    monkeypatch.setattr(T, "race", race)
    knobs = [T.Knob.parse("lobo.track.start=0..2"), T.Knob.parse("villain.counts.minus_one=1..3")]  # 9 settings
    pack = _pack_with_4p_row(tmp_path / "start", "lobo_start = 2")
    with pytest.raises(T.TuneError, match=r"settings lobo.track.start=0, villain.counts.minus_one=1 and "
                                          r"lobo.track.start=1, villain.counts.minus_one=1 play the same games at 4"):
        T.tune(knobs, [T.Target(4, 0.3, 0.5)], budget=4000, content=pack, max_candidates=4)
    pack = _pack_with_4p_row(tmp_path / "counts", "villain_counts = { minus_one = 4 }")
    with pytest.raises(T.TuneError, match=r"villain.counts.minus_one=1 and lobo.track.start=0, villain.counts."
                                          r"minus_one=2 play the same value of every knob at 4 players"):
        T.tune(knobs, [T.Target(4, 0.3, 0.5)], budget=4000, content=pack, max_candidates=4)
    assert not searched
    with pytest.raises(AssertionError, match="games were played"):  # at 2 players both knobs apply
        T.tune(knobs, [T.Target(2, 0.3, 0.5)], budget=4000, content=pack, max_candidates=4)
    assert searched == [4]


def test_the_evaluator_tells_settings_that_play_the_same_games(tmp_path):
    """GameEvaluator.twin: the setting asked before whose pack the games play at every target count."""
    t4, t24 = [T.Target(4, 0.3, 0.5)], [T.Target(2, 0.3, 0.5), T.Target(4, 0.3, 0.5)]
    ev = T.GameEvaluator([T.Knob.parse("lobo.track.start=0..2")], _pack_with_4p_row(tmp_path / "start", "lobo_start = 2"),
                         "heuristic", None, 1)
    assert (ev.twin((0,), t4), ev.twin((1,), t4), ev.twin((2,), t4)) == (None, (0,), (0,))
    assert (ev.twin((0,), t24), ev.twin((1,), t24)) == (None, None)  # at 2 players the knob applies
    ev = T.GameEvaluator([T.Knob.parse("villain.counts.minus_one=1..3")],
                         _pack_with_4p_row(tmp_path / "counts", "villain_counts = { minus_one = 4 }"), "heuristic", None, 1)
    assert ev.twin((1,), t4) is None
    with pytest.raises(T.TuneError, match=r"minus_one=1 and villain.counts.minus_one=2 play the same value of every "
                                          r"knob at 4 players"):  # other cards relabelled: other games, the same count
        ev.twin((2,), t4)


class TwinGames:
    """Synthetic games in which b is not read when a is 0: every (0, b) plays the same games, inside the band."""

    def __init__(self):
        self.played = set()
        self.seen = {}

    def __call__(self, values, players, game0, games):
        self.played.add(values)
        p = 0.45 if values[0] == 0 else true_rate(values)
        return int(np.count_nonzero(U[game0:game0 + games] < p))

    def twin(self, values, targets):
        key = values if values[0] else (0,)
        if key in self.seen:
            return self.seen[key]
        self.seen[key] = values
        return None


def test_a_tpe_suggestion_that_plays_a_candidates_games_is_not_raced_again(monkeypatch, capsys):
    """Two knobs that cancel out cannot be refused before the search: the suggestion is scored with the
    games of the candidate it plays as, never raced (nor found) as a setting of its own, and is listed."""
    runs = [TwinGames(), TwinGames()]
    res, again = (T.race(KNOBS, TARGET, ev, budget=200_000, seed=7, max_candidates=20) for ev in runs)
    (zero,) = [c for c in res.candidates if c.values[0] == 0]  # without the twin check: several, told apart by noise
    assert zero.state == "found" and res.same_games and set(res.same_games.values()) == {zero.values}
    assert all(v[0] == 0 and v not in runs[0].played for v in res.same_games)  # no games of their own
    assert runs[0].played == {c.values for c in res.candidates}
    assert again.same_games == res.same_games and [c.values for c in again.candidates] == [c.values for c in res.candidates]
    rec = T.report(res, [])
    assert rec["same_games"] == [{"settings": {"a": 0, "b": v[1]}, "plays_as": {"a": 0, "b": zero.values[1]}}
                                 for v in sorted(res.same_games)]
    assert len({json.dumps(r["settings"]) for r in rec["raced"]}) == rec["candidates"] == 20
    assert "same_games" not in T.report(T.race(KNOBS, TARGET, synthetic, budget=20_000), [])  # a grid: none

    from sim.cli import main

    monkeypatch.setattr(T, "tune", lambda *a, **k: (res, []))
    main(["tune", "--target", "0.43:0.47", "--knob", "a=0..9", "--knob", "b=0..4"])
    out = capsys.readouterr().out
    (v, a), *_ = sorted(res.same_games.items())
    assert (f"{len(res.same_games)} settings the search suggested play the same games at every target player count as "
            f"one raced, and were not raced again") in out and f"a=0, b={v[1]} plays as a=0, b={a[1]}" in out


def test_racing_finds_exactly_the_settings_inside_the_band():
    res = T.race(KNOBS, TARGET, synthetic, budget=6_000_000, seed=1)
    assert res.games_played <= 6_000_000
    by_state = {c.values: c.state for c in res.candidates}
    for values, state in by_state.items():
        p = true_rate(values)
        if state == "found":
            assert 0.43 <= p <= 0.47, (values, p)
        if 0.435 <= p <= 0.465:
            assert state == "found", (values, p, state)
        if p <= 0.42 or p >= 0.48:
            assert state == "dropped", (values, p, state)
    # the best is chosen on the race's own games, so it is one near the band centre (0.45: a=5, b=0), not
    # necessarily that one: here 0.44 and 0.45 were found on the same 14,000 games, which ran high for
    # both, and 0.44 came out nearer (tune plays the chosen one again on fresh games)
    assert abs(true_rate(res.found()[0].values) - 0.45) <= 0.01 + 1e-9
    # the chosen one played again on games the race did not play: its figure is not the selected one's
    best = res.found()[0]
    (conf,) = T.confirm(synthetic, res, best, 50_000)
    assert conf["game0"] == max(c.games[4] for c in res.candidates) > best.games[4]
    assert conf["wins"] == synthetic(best.values, 4, conf["game0"], 50_000)
    assert conf["ci_low"] <= true_rate(best.values) <= conf["ci_high"]
    # adaptive: a clear miss stopped after the first round, a near miss played more
    games = {c.values: c.games[4] for c in res.candidates}
    assert games[(0, 4)] == T.FIRST_ROUND
    assert games[(5, 1)] > 4 * T.FIRST_ROUND  # p = 0.42, one point under the band


@pytest.mark.parametrize("p", [0.43, 0.47])
def test_a_setting_on_a_band_edge_is_found_at_most_one_time_in_40(p):
    """The race looks at a growing sample after every round and stops at the first look inside the band;
    the intervals must hold over all those looks. Bernoulli streams at a band edge, through the real
    race and its 2,000,000-game schedule (2k, 4k, 8k, ... games): found at most 2.5% of the time (with
    95% intervals at each look instead, 12.8% at 0.43), and dropped, being inside, at most 0.1%."""
    reps = 20_000
    found = dropped = looked = 0
    for s in np.random.SeedSequence(20261127).spawn(reps):
        rng = np.random.default_rng(s)
        calls = []

        def bernoulli(values, players, game0, games, rng=rng, calls=calls):
            calls.append(game0)
            return int(rng.binomial(games, p))

        res = T.race([T.Knob("x", (0,))], TARGET, bernoulli, budget=2_000_000)
        assert len(calls) <= res.levels.looks  # never more looks than the intervals allow for
        looked = max(looked, len(calls))
        found += res.candidates[0].state == "found"
        dropped += res.candidates[0].state == "dropped"
    assert res.levels.looks == T.max_looks(2_000_000, 1) == 10 and looked == 10
    nominal = 0.025
    assert found / reps <= nominal + 3 * math.sqrt(nominal * (1 - nominal) / reps), found / reps
    # on the edge is inside the band: dropped at most 0.1% of the time
    assert dropped / reps <= 0.001 + 3 * math.sqrt(0.001 * 0.999 / reps), dropped / reps


def _found_share(p: float, reps: int, seed: int) -> float:
    """The share of ``reps`` Bernoulli(p) streams that the race, on the README's schedule, calls found."""
    found = 0
    for s in np.random.SeedSequence(seed).spawn(reps):
        rng = np.random.default_rng(s)
        res = T.race([T.Knob("x", (0,))], TARGET, lambda v, n, g0, g, rng=rng: int(rng.binomial(g, p)),
                     budget=2_000_000)
        found += res.candidates[0].state == "found"
    return found / reps


def test_plain_95_intervals_at_each_look_find_an_edge_setting_too_often(monkeypatch):
    """What the simultaneous intervals repair, as the README quotes it: with a plain 95% interval at each
    look (and the 99.9% drop), a setting exactly on the band edge is found far more often than 2.5%."""
    from pathlib import Path

    monkeypatch.setattr(T.Levels, "of", staticmethod(lambda looks: T.Levels(looks, T.Z95, 3.2905267314919255)))
    share = _found_share(0.43, 20_000, 20261127)
    assert share > 0.025 + 10 * math.sqrt(0.025 * 0.975 / 20_000)
    readme = " ".join((Path(__file__).resolve().parent.parent / "README.md").read_text().split())
    assert f"a setting exactly on the band edge was found {100 * share:.1f}% of the time" in readme
    looks = T.max_looks(2_000_000, 1)
    assert (f"{looks} rounds for 2,000,000 games and one target, each round's intervals at "
            f"{100 * (1 - T.ALPHA_FOUND / looks):.1f}% for *found* and {100 * (1 - T.ALPHA_DROP / looks):.2f}% for "
            "*dropped*") in readme


def test_racing_respects_a_small_budget_and_is_reproducible():
    a = T.race(KNOBS, TARGET, synthetic, budget=150_000, seed=3)
    b = T.race(KNOBS, TARGET, synthetic, budget=150_000, seed=3)
    assert a.games_played <= 150_000
    assert [(c.values, c.state, c.wins, c.games) for c in a.candidates] == \
        [(c.values, c.state, c.wins, c.games) for c in b.candidates]
    assert any(c.state == "unresolved" for c in a.candidates)


def test_refuses_a_zero_budget_and_no_knobs():
    with pytest.raises(T.TuneError):
        T.race(KNOBS, TARGET, synthetic, budget=0)
    with pytest.raises(T.TuneError):
        T.race([], TARGET, synthetic, budget=10)


def test_tune_on_the_game_is_reproducible_and_writes_a_usable_override(tmp_path):
    knobs = [T.Knob.parse("lobo.track.start=0..2")]
    target = [T.Target(2, 0.30, 0.60)]
    r1, side1 = T.tune(knobs, target, budget=12_000, seed=5, also_players=[1], confirm_games=3000)
    r2, side2 = T.tune(knobs, target, budget=12_000, seed=5, also_players=[1], confirm_games=3000)
    assert T.report(r1, side1) == T.report(r2, side2)
    files = T.write_outputs(r1, side1, tmp_path)
    rec = json.loads((tmp_path / "tune.json").read_text())
    assert rec["games_played"] <= 12_000
    assert rec["found"], rec  # 2-player heuristic games sit well inside [0.30, 0.60]
    # every setting raced is recorded; the best is played again on fresh games, after every raced one
    assert {tuple(r["settings"].values()) for r in rec["raced"]} == {(0,), (1,), (2,)}
    assert rec["intervals"]["looks"] == T.max_looks(12_000, 1) and rec["intervals"]["found"] == 0.95
    (conf,) = rec["best"]["confirmation"]
    assert rec["best"]["settings"] == rec["found"][0]["settings"]
    assert conf["game0"] == max(r["games"] for r in rec["raced"]) and conf["games"] == 3000
    assert rec["confirm_games_played"] == 3000
    assert "# fresh games: 2 players: " in (tmp_path / "tuned_setup.toml").read_text()
    import tomllib

    block = tomllib.loads((tmp_path / "tuned_setup.toml").read_text())
    assert block["setup"]["tuned"]["overrides"] == rec["found"][0]["settings"]
    assert {s["players"] for s in rec["found"][0]["side_effects"]} == {1}
    assert (tmp_path / "candidates.png") in files


def test_tune_outputs_say_which_strategy_params_pack_and_rules_played(tmp_path):
    """tune.json, the chart's PNG metadata and tuned_setup.toml say what the games were played with."""
    from PIL import Image

    import sim
    from sim.content import DEFAULT_PACK, load

    knobs = [T.Knob.parse("lobo.track.start=0..1")]
    res, side = T.tune(knobs, [T.Target(2, 0.05, 0.95)], strategy="bold", params={"pool_target": 6}, budget=4000,
                       seed=2, confirm_games=500)
    T.write_outputs(res, side, tmp_path)
    rec = json.loads((tmp_path / "tune.json").read_text())
    import strategies

    bold = strategies.make("bold", pool_target=6)
    made = {"strategy": "bold", "params": {"pool_target": 6}, "engine": "kernel",
            "content_hash": load(DEFAULT_PACK).hash, "rules_version": sim.RULES_VERSION,
            "plays": {"2": {"name": bold.name, "params": bold.params()}}}
    assert {k: rec[k] for k in made} == made and rec["seed"] == 2
    assert json.loads(Image.open(tmp_path / "candidates.png").text["Description"]) == {**made, "seed": 2}
    assert "# bold players (pool_target=6), seed 2, pack " in (tmp_path / "tuned_setup.toml").read_text()


def test_tune_json_records_the_tuned_sets_it_played_at_each_player_count():
    """``tuned``'s parameters come from strategies/tuned.toml: tune.json records the set of every player count it
    played (targets and --also-players), read before any game, not just the name."""
    import strategies

    res, _ = T.tune([T.Knob.parse("lobo.track.start=0..1")], [T.Target(2, 0.05, 0.95)], strategy="tuned", budget=400,
                    seed=2, confirm_games=0, also_players=[4, 2])
    assert res.made["plays"] == {str(p): {"name": "tuned", "params": strategies.make("tuned", players=p).params()}
                                 for p in (2, 4)}
    assert res.made["plays"]["2"] != res.made["plays"]["4"]  # (the sets differ: the record tells them apart)


def test_villain_count_knob_keeps_the_deck_size():
    from sim.content import DEFAULT_PACK, load
    from sim.content.overrides import load_with_overrides

    base = load(DEFAULT_PACK)
    c = load_with_overrides(DEFAULT_PACK, T.overrides_of([T.Knob("villain.counts.minus_one", (6,))], (6,)))
    adv = np.asarray(c.villain_advance)
    assert len(adv) == len(base.villain_advance)
    assert int(np.sum(adv == -1)) == 6


def test_large_grids_are_searched_with_tpe_and_still_find_the_band():
    knobs = [T.Knob("a", tuple(range(10))), T.Knob("b", tuple(range(5)))]
    a = T.race(knobs, TARGET, synthetic, budget=3_000_000, seed=7, max_candidates=20)
    b = T.race(knobs, TARGET, synthetic, budget=3_000_000, seed=7, max_candidates=20)
    assert len(a.candidates) == 20 and len({c.values for c in a.candidates}) == 20
    assert [c.values for c in a.candidates] == [c.values for c in b.candidates]
    found = a.found()
    assert found and all(0.43 <= true_rate(c.values) <= 0.47 for c in found)
    # TPE steers towards the band: more proposals near it than a uniform draw of 20 from 50 would give
    near = sum(abs(true_rate(c.values) - 0.45) <= 0.05 for c in a.candidates)
    uniform = sum(abs(true_rate((x, y)) - 0.45) <= 0.05 for x in range(10) for y in range(5)) * 20 / 50
    assert near > uniform


def test_a_setting_pinned_on_a_band_edge_stops_racing():
    knobs = [T.Knob("a", (5,)), T.Knob("b", (6,))]  # p = 0.2 + 0.25 - 0.18 = 0.27
    target = [T.Target(4, 0.27, 0.31)]
    res = T.race(knobs, target, synthetic, budget=3_000_000, seed=1)
    (c,) = res.candidates
    assert c.state == "edge"
    assert res.games_played < 3_000_000  # it stopped before the budget ran out
    lo, hi = res.interval(c, 4)
    assert lo < 0.27 < hi and hi - lo <= 0.04 / T.EDGE_RESOLUTION


def test_the_summary_says_why_the_race_stopped(monkeypatch, capsys):
    """'budget spent' only where it was: a race whose every setting was decided with games to spare says so
    (in the summary line and tune.json's record), and one that ran out of games says that."""
    from sim.cli import main

    knobs = [T.Knob("a", (0, 5, 9)), T.Knob("b", (0,))]  # 0.20 (dropped), 0.45 (found), 0.65 (dropped)
    decided = T.race(knobs, TARGET, synthetic, budget=200_000)
    assert {c.state for c in decided.candidates} == {"found", "dropped"} and decided.games_played < 200_000
    assert decided.stopped == "decided"
    assert T.report(decided, [])["stopped_because"] == "every setting decided (found, dropped or on an edge)"
    spent = T.race(KNOBS, TARGET, synthetic, budget=150_000, seed=3)
    assert any(c.state == "unresolved" for c in spent.candidates)
    assert spent.stopped == "budget" and T.report(spent, [])["stopped_because"] == "budget spent"
    for res, end in ((decided, "stopped: every setting decided (found, dropped or on an edge))"),
                     (spent, "stopped: budget spent)")):
        monkeypatch.setattr(T, "tune", lambda *a, res=res, **k: (res, []))
        main(["tune", "--target", "0.43:0.47", "--knob", "a=0,5,9", "--knob", "b=0", "--budget", str(res.budget)])
        (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("target:")]
        assert line.endswith(end), line
        assert (f"{res.games_played:,} of {res.budget:,} games" in line) and ("budget spent" in line) == (res is spent)


BANDS = """
[check]
seed = 1
games = 40

[[cell]]
name = "2p"
players = 2
win_rate = [0.3, 0.5]
"""


def _bands(tmp_path, extra=""):
    p = tmp_path / "bands.toml"
    p.write_text(BANDS + extra, encoding="utf-8")
    return p


@pytest.mark.parametrize("cell, why", [
    ('skills = "fixed"', "skills 'fixed'"),
    ('engine = "reference"', "engine 'reference'"),
    ('variant = "easier"', "variant 'easier'"),
])
def test_target_file_cells_of_other_games_are_skipped_saying_so(tmp_path, cell, why):
    p = _bands(tmp_path, f'\n[[cell]]\nname = "3p-other"\nplayers = 3\n{cell}\nwin_rate = [0.1, 0.2]\n')
    with pytest.warns(UserWarning, match=rf"bands.toml: not targets .*cell\[3p-other\] \(3 players\): {why}"):
        targets = T.targets_from_bands(p, "heuristic")
    assert targets == [T.Target(2, 0.3, 0.5)]  # the 3-player band is of other games: not a target
    # a file with only such cells for the strategy is refused, naming what it skipped
    only = tmp_path / "only.toml"
    only.write_text(p.read_text().replace('name = "2p"\nplayers = 2\n', f'name = "2p"\nplayers = 2\n{cell}\n'))
    with pytest.raises(T.TuneError, match=rf"only.toml: no plain cell .*skipped: cell\[2p\] \(2 players\): {why}"):
        T.targets_from_bands(only, "heuristic")


def test_target_file_plain_cells_give_targets_without_a_warning(tmp_path, recwarn):
    p = _bands(tmp_path, '\n[[cell]]\nname = "3p-bold"\nplayers = 3\nstrategy = "bold"\nskills = "fixed"\n'
                         "win_rate = [0.1, 0.2]\n")
    assert T.targets_from_bands(p, "heuristic") == [T.Target(2, 0.3, 0.5)]  # another strategy's cell: no notice
    assert not recwarn.list


def test_target_file_of_another_pack_is_refused(tmp_path):
    """A bands file's [check] content names the pack its cells play: tune on another pack would race a setting
    against bands of other games (it read the cells and ignored the pack)."""
    import shutil

    from sim.content import DEFAULT_PACK

    shutil.copytree(DEFAULT_PACK, tmp_path / "mypack")
    p = _bands(tmp_path)
    p.write_text(p.read_text().replace("[check]\n", '[check]\ncontent = "mypack"\n'))
    mine = (tmp_path / "mypack").resolve()
    with pytest.raises(T.TuneError, match=rf"bands.toml: \[check\] content is {re.escape(str(mine))}, but tune plays "
                                          rf"the pack {re.escape(str(Path(DEFAULT_PACK).resolve()))}"):
        T.targets_from_bands(p, "heuristic")
    assert T.targets_from_bands(p, "heuristic", content=tmp_path / "mypack") == [T.Target(2, 0.3, 0.5)]
    with pytest.raises(T.TuneError, match=r"\[check\] content is .*default.*, but tune plays the pack .*mypack"):
        T.targets_from_bands(_bands(tmp_path / "mypack"), "heuristic", content=tmp_path / "mypack")


def test_target_file_cells_are_those_with_tunes_params(tmp_path):
    """tune --param plays a differently parameterised player: its targets are the cells with those params,
    never the default player's band; params no cell has are refused, naming what was skipped."""
    p = _bands(tmp_path, '\n[[cell]]\nname = "2p-pool6"\nplayers = 2\nparams = { pool_target = 6, reroll = false }\n'
                         "win_rate = [0.1, 0.2]\n")
    with pytest.warns(UserWarning, match=r"cell\[2p\] \(2 players\): params none \(tune plays with pool_target=6, "
                                         r"reroll=False\)"):
        assert T.targets_from_bands(p, "heuristic", params={"reroll": False, "pool_target": 6}) == \
            [T.Target(2, 0.1, 0.2)]
    with pytest.warns(UserWarning, match=r"cell\[2p-pool6\] \(2 players\): params pool_target=6, reroll=False "
                                         r"\(tune plays with none\)"):
        assert T.targets_from_bands(p, "heuristic") == [T.Target(2, 0.3, 0.5)]
    for other in ({"pool_target": 5}, {"pool_target": 6}, {"pool_target": 6, "reroll": 0}):
        with pytest.raises(T.TuneError, match=r"bands.toml: no plain cell \(params .*skipped: cell\[2p\] .*"
                                              r"cell\[2p-pool6\] \(2 players\): params pool_target=6, reroll=False"):
            T.targets_from_bands(p, "heuristic", params=other)


def test_tune_cli_takes_the_target_file_cells_of_its_params(tmp_path, monkeypatch, capsys):
    """The CLI hands --param to the target file's reading as well as to the games."""
    from sim.cli import main

    p = _bands(tmp_path, '\n[[cell]]\nname = "2p-pool6"\nplayers = 2\nparams = { pool_target = 6 }\n'
                         "win_rate = [0.1, 0.2]\n")
    seen = []

    def tune(knobs, targets, **kw):
        seen.append(targets)
        raise T.TuneError("stop")

    monkeypatch.setattr(T, "tune", tune)
    argv = ["tune", "--target-file", str(p), "--knob", "lobo.track.start=0..1"]
    for param, want, skipped in ((["--param", "pool_target=6"], [T.Target(2, 0.1, 0.2)], "2p"),
                                 ([], [T.Target(2, 0.3, 0.5)], "2p-pool6")):
        with pytest.raises(SystemExit, match="error: stop"):
            main(argv + param)
        assert seen.pop() == want
        assert f"not targets (they play other games than tune's): cell[{skipped}] (2 players)" in capsys.readouterr().err
    with pytest.raises(SystemExit, match=r"error: bands.toml: no plain cell \(params pool_target=5, "):
        main(argv + ["--param", "pool_target=5"])


def test_tune_cli_refuses_players_with_a_target_file(tmp_path, monkeypatch):
    """--players sets --target's player count; with --target-file it was ignored without a word."""
    from sim.cli import main

    p = _bands(tmp_path, "")
    played = []
    monkeypatch.setattr(T, "tune", lambda *a, **kw: played.append(a))
    with pytest.raises(SystemExit, match=r"error: --players is the player count of --target; with --target-file"):
        main(["tune", "--target-file", str(p), "--players", "3", "--knob", "lobo.track.start=0..1"])
    assert played == []
    seen = []

    def tune(knobs, targets, **kw):
        seen.append(targets)
        raise T.TuneError("stop")

    monkeypatch.setattr(T, "tune", tune)
    for extra, players in (([], 4), (["--players", "3"], 3)):
        with pytest.raises(SystemExit, match="error: stop"):
            main(["tune", "--target", "0.4:0.5", "--knob", "lobo.track.start=0..1"] + extra)
        assert seen.pop() == [T.Target(players, 0.4, 0.5)]


class Saturated:
    """Synthetic games in which a limit of 5 is never reached: every a >= 5 plays the games of a = 5, record for
    record (``with_digests`` gives each first-round job's wins and a digest of its games, as GameEvaluator's)."""

    def __init__(self):
        self.digested = []

    def __call__(self, values, players, game0, games):
        return int(np.count_nonzero(U[game0:game0 + games] < true_rate((min(values[0], 5), *values[1:2], 0)[:2])))

    def with_digests(self, jobs):
        self.digested += jobs
        return [(self(*job), repr((min(job[0][0], 5), job[0][1:], job[1:]))) for job in jobs]


def test_settings_whose_first_round_was_the_same_games_are_raced_as_one(monkeypatch, capsys):
    """The packs differ and are read, so no check before the games tells them; their first round's games do,
    record for record: a = 6..9 are raced as a = 5 (the first in the grid's order), listed as such, and never
    reported found under labels of their own."""
    from sim.cli import main

    ev = Saturated()
    knobs = [T.Knob("a", tuple(range(10))), T.Knob("b", (0, 1))]
    res = T.race(knobs, [T.Target(4, 0.40, 0.50)], ev, budget=400_000)
    assert {j[2] for j in ev.digested} == {0}  # only the first round is digested
    assert res.alike == {(a, b): (5, b) for a in range(6, 10) for b in (0, 1)} and res.alike_games == 2000
    assert sorted(c.values for c in res.candidates) == [(a, b) for a in range(6) for b in (0, 1)]
    assert all(c.values[0] <= 5 for c in res.found()) and (5, 0) in [c.values for c in res.found()]
    assert res.games_played % 2000 == 0 and res.games_played >= 20 * 2000  # every setting played its first round
    rec = T.report(res, [])
    assert rec["played_alike"][0] == {"settings": {"a": 6, "b": 0}, "plays_as": {"a": 5, "b": 0}, "games": 2000}
    assert rec["candidates"] == 12 and "played_alike" not in T.report(T.race(knobs, TARGET, synthetic, budget=20_000), [])
    monkeypatch.setattr(T, "tune", lambda *a, **k: (res, []))
    main(["tune", "--target", "0.40:0.50", "--knob", "a=0..9", "--knob", "b=0,1"])
    out = capsys.readouterr().out
    assert ("8 settings played the very games of another on the race's first 2,000 games at every target player "
            "count (record for record, the same seeds), so each was raced as that one, not as a setting of its own: "
            "a=6, b=0 played as a=5, b=0; ") in out and "3 more in tune.json's played_alike" in out


def test_a_knob_whose_every_value_played_the_same_games_is_refused():
    with pytest.raises(T.TuneError, match=r"^--knob a=5\.\.9: every value played the same games, record for record, "
                                          r"on the race's first 2,000 games at 4 players whatever the other knobs' "
                                          r"values: .* raced as one setting under 5 labels"):
        T.race([T.Knob("a", (5, 6, 7, 8, 9)), T.Knob("b", (0, 1))], TARGET, Saturated(), budget=400_000)
    # the same in a TPE search, where a setting was played with each of the knob's values
    with pytest.raises(T.TuneError, match=r"^--knob a=5,7,9: every value played the same games"):
        T.race([T.Knob("a", (5, 7, 9)), T.Knob("b", tuple(range(40)))], TARGET, Saturated(), budget=4_000_000,
               max_candidates=100)
    # a knob with a value that plays other games is raced, its saturated values as one
    res = T.race([T.Knob("a", (4, 5, 6))], [T.Target(4, 0.2, 0.6)], Saturated(), budget=400_000)
    assert res.alike == {(6,): (5,)} and [c.values for c in res.candidates] == [(4,), (5,)]


def test_tune_on_the_game_races_an_unreached_limit_as_one_setting_and_refuses_a_knob_of_such_values(capsys):
    """overflow_limit at or above the pack's 20 Intel tokens: no game has more on the board, so 21..23 play the
    games of 20 (they are read, and differ, so only the games tell)."""
    from sim.cli import main

    path = "setup.player_count[players=4].overflow_limit"
    res, _ = T.tune([T.Knob.parse(f"{path}=19..21")], [T.Target(4, 0.2, 0.6)], budget=6000, confirm_games=0)
    assert res.alike == {(21,): (20,)} and [c.values for c in res.candidates] == [(19,), (20,)]
    with pytest.raises(SystemExit) as e:
        main(["tune", "--players", "4", "--target", "0.20:0.60", "--knob", f"{path}=20..23", "--budget", "20000",
              "--confirm-games", "0"])
    assert str(e.value).startswith(f"error: --knob {path}=20..23: every value played the same games, record for "
                                   "record, on the race's first 2,000 games at 4 players: ")
    assert "\n" not in str(e.value) and "found" not in capsys.readouterr().out


def test_a_resolve_cut_past_every_readers_starting_resolve_is_refused_before_any_game(monkeypatch):
    """At 4 players resolve_cut applies to Calli, Dexter and Nika (Rocko takes resolve_cut_reduced), who start at
    Resolve 3: a cut of 3 or more leaves each at 0, so 3..6 are one setting, told before any game."""
    _no_race(monkeypatch)
    with pytest.raises(T.TuneError, match=r"resolve_cut=3 and .*resolve_cut=4 play the same games at 4 players: .*"
                                          r"here: every character that may sit starts with the same Resolve either "
                                          r"way \('Calli Dagger' 0, 'Rocko Jurgen' 2, 'Dexter Kane' 0, 'Nika "
                                          r"Shizuka' 0\)"):
        T.tune([T.Knob.parse("setup.player_count[players=4].resolve_cut=3..6")], [T.Target(4, 0.2, 0.6)], budget=8000)
    with pytest.raises(AssertionError, match="games were played"):
        T.tune([T.Knob.parse("setup.player_count[players=4].resolve_cut=0..3")], [T.Target(4, 0.2, 0.6)], budget=8000)


def test_a_side_effect_where_no_game_changed_is_an_exact_zero_not_an_interval(tmp_path, capsys):
    """A 2-player knob at 1 player plays the unchanged pack's games: ``--also-players`` said '+0.00 points
    [-0.02, +0.02]', an interval around an estimate; the games are the same, record for record."""
    from sim import cli

    knobs = [T.Knob.parse("setup.player_count[players=2].lobo_start=0..1")]
    result, side = T.tune(knobs, [T.Target(2, 0.30, 0.60)], budget=8_000, seed=5, also_players=[1, 2],
                          confirm_games=0)
    at = {(r["values"], r["players"]): r for r in side}
    for (values, players), r in at.items():
        if players == 1 or values == (0,):  # another count's set-up, or the unchanged pack itself
            assert r["same_games"] and r["diff"] == 0.0 and r["diff_low"] is None and r["diff_high"] is None
            assert r["win_rate"] == r["default_win_rate"]
        else:
            assert not r["same_games"] and r["diff_low"] <= r["diff"] <= r["diff_high"]
    rec = T.report(result, side)
    assert all("same_games" in s for f in rec["found"] for s in f["side_effects"])
    code = cli.main(["tune", "--players", "2", "--target", "0.30:0.60", "--knob",
                     "setup.player_count[players=2].lobo_start=0..1", "--budget", "8000", "--seed", "5",
                     "--also-players", "1", "--confirm-games", "0"])
    out = capsys.readouterr().out
    assert code == 0
    assert re.search(r"lobo_start=\d at 1p: \d+\.\d\d%, no game changed: the unchanged pack's games, record for "
                     r"record\n", out), out
    assert not [line for line in out.splitlines() if " at 1p: " in line and "points [" in line], out


def test_read_metadata_of_a_tune_folder_gives_what_the_seats_played(tmp_path):
    from sim.manifest import read_metadata

    knobs = [T.Knob.parse("lobo.track.start=0..1")]
    res, side = T.tune(knobs, [T.Target(2, 0.05, 0.95)], strategy="tuned", budget=2000, seed=2, confirm_games=0)
    T.write_outputs(res, side, tmp_path)
    import strategies

    assert read_metadata(tmp_path)["plays"] == {"2": {"name": "tuned",
                                                      "params": strategies.make("tuned", players=2).params()}}


def test_a_tuned_file_edited_during_the_run_is_refused_not_reported(tmp_path, monkeypatch):
    from tests.test_sensitivity import _tuned_edited_by_the_first_job

    _tuned_edited_by_the_first_job(monkeypatch, tmp_path, T, "play_games")
    from sim.run import PlaysChanged

    with pytest.raises(PlaysChanged, match=r"^strategy tuned's seats at 4 players would play other parameters than "
                                           r"when the run began \(an edited strategies/tuned.toml\?\): a run plays one "
                                           "set throughout, so it stops here; run again$"):
        T.tune([T.Knob.parse("lobo.track.start=0..1")], [T.Target(4, 0.05, 0.95)], strategy="tuned", budget=400,
               seed=2, confirm_games=0)


def test_tuned_is_judged_by_the_pack_tune_steps_from_and_said_once_not_by_each_job(tmp_path):
    from tests.test_sensitivity import lobo_one_pack, searched_elsewhere_said

    def said(content) -> list[str]:
        return searched_elsewhere_said(lambda: T.tune(
            [T.Knob.parse("lobo.track.start=0..1")], [T.Target(2, 0.05, 0.95)], strategy="tuned", budget=400, seed=2,
            confirm_games=100, content=content, also_players=[4]))

    assert said(None) == []
    got = said(lobo_one_pack(tmp_path))
    assert len(got) == 2 and all("this game has another content pack:" in m for m in got), got  # at 2 and at 4
