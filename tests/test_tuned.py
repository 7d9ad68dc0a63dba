"""The tuned strategy: data in strategies/tuned.toml, fresh for the current rules, reproducible."""

import re
import tomllib
from pathlib import Path

import pytest

import sim
import strategies
from sim import tune_strategy as TS
from sim.content import load
from strategies.tuned import TUNED_PATH, TunedError, tuned_params


def _file():
    return tomllib.loads(TUNED_PATH.read_text(encoding="utf-8"))


def test_tuned_file_is_fresh_for_the_current_rules_and_pack():
    meta = _file()["meta"]
    again = f"re-run `smersh-sim tune-strategy --reproduce strategies/tuned.toml` ({TS.command_line(meta)})"
    assert meta["rules_version"] == sim.RULES_VERSION, (
        f"strategies/tuned.toml: rules_version {meta['rules_version']!r} but sim.RULES_VERSION is "
        f"{sim.RULES_VERSION!r}: the tuned parameters are stale; {again}")
    assert meta["pack_hash"] == load().hash, (
        f"strategies/tuned.toml: pack_hash {meta['pack_hash'][:12]}... differs from the default pack's "
        f"{load().hash[:12]}...: the tuned parameters are stale; {again}")


def test_tuned_file_covers_every_player_count_with_every_parameter():
    raw = _file()
    assert sorted(raw["players"]) == ["1", "2", "3", "4", "5", "6"]
    for n, entry in raw["players"].items():
        assert set(entry["params"]) == set(TS.SPACE), n
        assert entry["holdout"]["timeouts"] == 0


@pytest.mark.parametrize("players", [1, 4, 6])
def test_tuned_plays_its_player_counts_set_on_both_engines(players):
    k = sim.simulate(players=players, games=60, seed=5, strategy="tuned")
    r = sim.simulate(players=players, games=60, seed=5, strategy="tuned", engine="reference")
    assert k.equals(r)
    assert k["strategy"].unique().to_list() == ["tuned"]
    plain = sim.simulate(players=players, games=60, seed=5, strategy="heuristic", params=tuned_params(players))
    assert k.drop("strategy").equals(plain.drop("strategy"))  # the heuristic with the file's parameters
    assert strategies.make("tuned", players=players).params() == strategies.make(
        "heuristic", **tuned_params(players)).params()


def test_tuned_needs_the_player_count_and_no_kernel_strategy_base():
    with pytest.raises(ValueError, match="one parameter set per player count"):
        strategies.make("tuned")
    from numba import njit

    from sim.kernel.custom import KernelStrategy

    @njit
    def use_watch(view):
        return True

    with pytest.raises(ValueError, match="one parameter set per player count"):
        KernelStrategy("tuned", use_watch=use_watch)


@pytest.mark.parametrize("players,error,match", [
    (4.7, TypeError, "players must be an integer, got float 4.7"),
    ("4", TypeError, "players must be an integer, got str '4'"),
    (True, TypeError, "players must be an integer, got bool True"),
    (0, ValueError, "players must be an integer from 1 to 6, got 0"),
    (7, ValueError, "players must be an integer from 1 to 6, got 7"),
])
def test_a_player_count_that_is_not_one_is_refused_not_converted(players, error, match):
    """As sim.simulate refuses it: 4.7, "4" or True would otherwise play the set of 4 (or 1) players."""
    from strategies.tuned import make_tuned

    with pytest.raises(error, match=match):
        strategies.make("tuned", players=players)
    with pytest.raises(error, match=match):
        make_tuned(players)
    with pytest.raises(error, match=match):  # whichever strategy it is given to
        strategies.make("heuristic", players=players)


def test_missing_player_count_is_refused(tmp_path):
    p = tmp_path / "tuned.toml"
    p.write_text('[meta]\nseed = 1\n[players.4.params]\npool_target = 5\n', encoding="utf-8")
    assert tuned_params(4, p) == {"pool_target": 5}
    with pytest.raises(TunedError, match="players.3: no parameter set for 3 players.*tune-strategy"):
        tuned_params(3, p)


def test_search_space_is_every_heuristic_parameter():
    TS._check_space()


TINY = dict(players=[2], budget=300, trial_games=100, seed=3, holdout_games=200)


def test_tuning_reproduces_its_file_from_the_recorded_seed_and_budget(tmp_path):
    first = TS.to_toml(TS.tune(**TINY, threads=1))
    path = tmp_path / "tuned.toml"
    path.write_text(first, encoding="utf-8")
    again = TS.to_toml(TS.tune(**TS.reproduce_args(path), threads=2))
    assert again == first
    raw = tomllib.loads(first)
    assert raw["meta"]["budget"] == 300 and raw["meta"]["seed"] == 3 and raw["players"]["2"]["trials"] == 3
    other = TS.to_toml(TS.tune(**{**TINY, "seed": 4}, threads=1))
    assert other != first  # the seed matters: the test can fail


def test_reproduce_refuses_a_file_of_another_optuna_or_of_none_recorded(tmp_path):
    """The TPE search proposes by optuna's version: the committed 2-player set was not written again by the
    recorded command under another optuna, though --reproduce promised the same file."""
    import optuna

    meta = ('[meta]\nseed = 1\nbudget = 300\ntrial_games = 100\nholdout_games = 100\nholdout_seed = 2\n'
            'players = [2]\n')
    path = tmp_path / "tuned.toml"
    path.write_text(meta + f'optuna = "{optuna.__version__}"\n', encoding="utf-8")
    assert TS.reproduce_args(path)["budget"] == 300
    path.write_text(meta + 'optuna = "0.1"\n', encoding="utf-8")
    with pytest.raises(TS.TuneStrategyError, match=rf"^tuned.toml: meta.optuna: searched with optuna 0.1, this is "
                                                   rf"optuna {re.escape(optuna.__version__)}: the search's proposals"):
        TS.reproduce_args(path)
    path.write_text(meta, encoding="utf-8")
    with pytest.raises(TS.TuneStrategyError, match=r"^tuned.toml: meta.optuna: .*missing: the file does not say "
                                                   r"which optuna searched it"):
        TS.reproduce_args(path)


def test_the_committed_tuned_file_was_searched_with_the_pinned_optuna():
    """pyproject.toml pins the optuna that wrote strategies/tuned.toml, so that --reproduce writes it again."""
    import optuna

    pinned = re.search(r'"optuna==([^"]+)"', (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())
    pinned = pinned.group(1)
    assert tomllib.loads(TUNED_PATH.read_text())["meta"]["optuna"] == pinned == optuna.__version__


def test_a_held_out_timeout_refuses_the_result(monkeypatch):
    import numpy as np

    real = TS._wins

    def with_a_stall(players, params, seed, game0, games, content, threads):
        wins, timeouts = real(players, params, seed, game0, games, content, threads)
        return wins, timeouts + (1 if seed == TINY["seed"] + 1 else 0)  # one stall in the held-out games

    monkeypatch.setattr(TS, "_wins", with_a_stall)
    with pytest.raises(TS.TuneStrategyError, match="timed out in 1 of 200 held-out games"):
        TS.tune(**TINY, threads=1)
    assert np.isfinite(real(2, {}, 1, 0, 10, load(), 1)[0].mean())


def test_the_objective_counts_a_timeout_as_a_loss():
    # a turn cap of 3 ends every game in a timeout: none of them may count as a win
    from sim.content import DEFAULT_PACK
    from sim.content.overrides import load_with_overrides

    short = load_with_overrides(DEFAULT_PACK, {"setup.simulation.turn_cap": 3})
    wins, timeouts = TS._wins(4, {}, 1, 0, 20, short, 1)
    assert timeouts == 20 and not wins.any()
    wins, timeouts = TS._wins(4, {}, 1, 0, 20, load(), 1)
    assert timeouts == 0 and wins.any()  # the same games with the pack's turn cap: some are won


# ------------------------------------------------------------------ a tuned file that cannot serve a grid
SPEC = """
[experiment]
name = "t"
seed = 1
games = 4
batch = 4

[grid]
players = [{players}]
strategies = ["tuned"]
"""


@pytest.fixture
def tuned_file(tmp_path, monkeypatch):
    """Point the tuned strategy at a test file holding ``text``."""
    import strategies.tuned

    def write(text):
        p = tmp_path / "tuned.toml"
        p.write_text("[meta]\nseed = 1\n" + text, encoding="utf-8")
        monkeypatch.setattr(strategies.tuned, "TUNED_PATH", p)
        return p

    return write


def _spec(tmp_path, players="2"):
    p = tmp_path / "t.toml"
    p.write_text(SPEC.format(players=players), encoding="utf-8")
    return p


def _full_set(**values) -> str:
    """A tuned file's params table body: every heuristic parameter, at its default unless given."""
    from dataclasses import asdict

    from sim.tune_strategy import _value
    from strategies.heuristic import HeuristicParams

    return "".join(f"{k} = {_value(v)}\n" for k, v in {**asdict(HeuristicParams()), **values}.items())


def test_a_grid_player_count_the_tuned_file_lacks_is_refused_before_any_game(tmp_path, tuned_file):
    from sim.experiments import SpecError, load_spec

    tuned_file("[players.2.params]\n" + _full_set(pool_target=5))
    assert load_spec(_spec(tmp_path, "2")).cells()  # the file serves 2 players
    with pytest.raises(SpecError) as e:
        load_spec(_spec(tmp_path, "1, 2"))
    msg = str(e.value)
    assert msg.startswith("t.toml: grid.strategies: 'tuned' at 1 player: tuned.toml: players.1: "
                          "no parameter set for 1 player"), msg


def test_a_bad_value_in_the_tuned_file_is_named_by_its_key(tmp_path, tuned_file):
    from sim.bands import BandsError, run_check
    from sim.cli import main
    from sim.experiments import SpecError, load_spec

    tuned_file("[players.2.params]\npool_target = 2.5\n")
    where = "tuned.toml: players.2.params.pool_target: pool_target must be an integer"
    with pytest.raises(TunedError, match=where):
        strategies.make("tuned", players=2)
    with pytest.raises(SpecError, match=f"grid.strategies: 'tuned' at 2 players: {where}"):
        load_spec(_spec(tmp_path))
    table = '\n[strategy.mine]\nbase = "tuned"\nparams = { cancel_at = 1 }\n'
    with pytest.raises(SpecError, match=f"strategy.mine.base: 'tuned' at 2 players: {where}"):
        _load_with_table(tmp_path, table)
    with pytest.raises(SystemExit) as e:
        main(["play", "--players", "2", "--games", "2", "--strategy", "tuned"])
    assert where in str(e.value.code) and "--param" not in str(e.value.code), e.value.code
    bands = tmp_path / "bands.toml"
    bands.write_text('[check]\nseed = 1\ngames = 4\n[[cell]]\nname = "t"\nplayers = 2\nstrategy = "tuned"\n'
                     "win_rate = [0.0, 1.0]\n", encoding="utf-8")
    with pytest.raises(BandsError, match=rf"cell\[t\].strategy: {where}"):
        run_check(bands)
    with pytest.raises(SystemExit) as e:  # a bad --param value is still --param's
        main(["play", "--players", "2", "--games", "2", "--strategy", "heuristic", "--param", "pool_target=2.5"])
    assert e.value.code == 2 and "--param" in str(e.value)  # a bad option: exit status 2


def test_a_tuned_set_missing_a_parameter_is_refused_not_filled_with_the_default(tuned_file):
    """A set without patience_rounds played the heuristic's 40 under the tuned label."""
    body = _full_set(patience_rounds=24)
    tuned_file("[players.4.params]\n" + body)
    assert strategies.make("tuned", players=4).params()["patience_rounds"] == 24
    tuned_file("[players.4.params]\n" + body.replace("patience_rounds = 24\n", ""))
    with pytest.raises(TunedError, match=r"^tuned.toml: players.4.params: patience_rounds missing \(a tuned set gives "
                                         r"every parameter; the heuristic's default would play in its place\)"):
        strategies.make("tuned", players=4)


def _load_with_table(tmp_path, table):
    from sim.experiments import load_spec

    p = tmp_path / "t.toml"
    p.write_text(SPEC.format(players="2").replace('strategies = ["tuned"]', 'strategies = ["mine"]') + table,
                 encoding="utf-8")
    return load_spec(p)


def test_the_search_plays_games_no_default_run_replays(monkeypatch):
    """The sets are selected on games far from index 0: a run from game 0 (the default) of the search's seed
    replayed them and showed the selected set's flattering search win rate (2-3 points high)."""
    calls = []
    real = TS._wins

    def spy(players, params, seed, game0, games, content, threads):
        calls.append((seed, game0, games))
        return real(players, params, seed, game0, games, content, threads)

    monkeypatch.setattr(TS, "_wins", spy)
    TS.tune(**TINY, threads=1)
    search = [c for c in calls if c[0] == TINY["seed"]]
    held = [c for c in calls if c[0] == TINY["seed"] + 1]
    assert search and all(g0 == TS.SEARCH_GAME0 and g0 >= 2**40 for _s, g0, _n in search)
    assert held and all(g0 == 0 for _s, g0, _n in held)  # the held-out games: fresh games of another seed
    assert len(search) + len(held) == len(calls)


def test_each_count_takes_the_best_set_found_at_any_count(monkeypatch):
    """A search can miss what another count's search found: a count takes another's set when it wins more of
    its own search games (its own best on a tie)."""
    sets = {n: {"pool_target": n} for n in (2, 3, 4)}
    rates = {(2, 2): 0.50, (2, 3): 0.40, (2, 4): 0.50,  # a tie: 2 keeps its own
             (3, 3): 0.55, (3, 2): 0.52, (3, 4): 0.87,  # 4's set wins 3's search games
             (4, 4): 0.86, (4, 2): 0.70, (4, 3): 0.60}
    monkeypatch.setattr(TS, "search_rate", lambda n, params, *a: rates[(n, params["pool_target"])])
    chosen = TS.choose({n: (sets[n], rates[(n, n)], 7) for n in sets}, trial_games=10, seed=1)
    assert {n: (e["found_at"], e["params"], e["search_win_rate"]) for n, e in chosen.items()} == {
        2: (2, sets[2], 0.5), 3: (4, sets[4], 0.87), 4: (4, sets[4], 0.86)}
    assert chosen[3]["cross"] == {"from_2": 0.52, "from_4": 0.87}
    assert all(e["trials"] == 7 for e in chosen.values())
    # one player count: nothing to cross, and the file says where each set was found
    alone = TS.choose({3: (sets[3], 0.55, 7)}, trial_games=10, seed=1)
    assert alone == {3: {"params": sets[3], "search_win_rate": 0.55, "found_at": 3, "trials": 7}}


SEARCHED_ELSEWHERE = "strategy 'tuned' plays the parameters of strategies/tuned.toml, searched on the default pack in "


def test_tuned_in_another_game_than_its_search_warns_naming_what_differs(monkeypatch):
    """The tuned sets were searched on the default pack, under this rules version, in the standard game with the
    default line-up: played in another game, a warning says its figures are that set's there, not those of play
    searched for that game; nothing is said in the game it was searched for, nor for a hand-set strategy."""
    import warnings

    import sim
    from sim.content import DEFAULT_PACK
    from sim.content.overrides import load_with_overrides

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the value the printed game does not have
        other_pack = load_with_overrides(DEFAULT_PACK, {"lobo.track.start": 1})

    def said(**kwargs) -> list[str]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sim.simulate(players=2, games=3, **kwargs)
            sim.simulate(players=2, games=3, summary_only=True, **kwargs)
        return [str(w.message) for w in caught if "searched on" in str(w.message)]

    assert said(strategy="tuned") == []
    assert said(strategy="heuristic", variant="dirty-lobo", content=other_pack) == []
    for kwargs, what in (
        ({"content": other_pack}, "another content pack"),
        ({"variant": "dirty-lobo"}, "a variant or line-up other than the standard game's default one"),
        ({"characters": "random"}, "a variant or line-up other than the standard game's default one"),
        ({"params": {"pool_target": 5}, "content": other_pack}, "another content pack"),
    ):
        got = said(strategy="tuned", **kwargs)
        assert got == [f"{SEARCHED_ELSEWHERE}the standard game; this game has {what}: its figures are that set's here, "
                       "not those of play searched for this game"] * 2, (kwargs, got)
    got = said(strategy="tuned", engine="reference", content=other_pack)
    assert len(got) == 2 and "this game has another content pack:" in got[0], got
    monkeypatch.setattr(sim, "RULES_VERSION", "99")
    assert "this game has rules version 99 (searched under 3):" in said(strategy=["tuned", "bold"])[0]


def test_tuned_from_a_file_that_does_not_record_its_search_warns_so(tuned_file):
    """A tuned file whose [meta] lacks the pack's hash or the rules version (not written by tune-strategy) is not
    said to be from "another content pack" or "searched under None": the warning says what the file does not
    record, in every game, the standard one included."""
    import warnings

    import sim
    from sim.content import load

    for meta, missing in (("", "pack_hash or the rules_version"),
                          (f'rules_version = "{sim.RULES_VERSION}"\n', "pack_hash"),
                          (f'pack_hash = "{load().hash}"\n', "rules_version")):
        path = tuned_file(meta + "[players.2.params]\n" + _full_set())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sim.simulate(players=2, games=3, strategy="tuned")
        said = [str(w.message) for w in caught if "tuned.toml" in str(w.message)]
        assert said == [f"strategy 'tuned' plays the parameters of {path}, whose [meta] does not record "
                        f"the {missing} they were searched under: its figures are that set's here, not known to be "
                        "those of play searched for this game"], said


def test_play_says_once_that_tuned_plays_on_another_pack(capsys):
    import warnings

    from sim.cli import main

    for command in (["play", "--games", "20"], ["trace"]):
        with warnings.catch_warnings():  # a fresh registry, as in a process of its own: said once in each
            assert main([*command, "--players", "2", "--strategy", "tuned", "--set", "lobo.track.start=1"]) == 0
        err = capsys.readouterr().err
        assert err.count(SEARCHED_ELSEWHERE) == 1 and "this game has another content pack:" in err, (command, err)


def test_a_study_says_once_before_any_batch_that_tuned_plays_on_another_pack(tmp_path, capsys):
    """Said by the process that runs the study, before any batch (a cluster's workers would say it where no one
    reads it), once for all its cells and batches; a setup of the default pack says nothing."""
    from sim.cli import main

    spec = tmp_path / "spec.toml"
    spec.write_text('[experiment]\nname = "tw"\nseed = 3\ngames = 40\nbatch = 20\n\n[grid]\nplayers = [2, 4]\n'
                    'strategies = ["tuned", "heuristic"]\nsetups = ["lobo1"]\n\n[setup.lobo1]\n'
                    'overrides = { "lobo.track.start" = 1 }\n', encoding="utf-8")
    for played in ("8 batch(es) played, 0 reused", "0 batch(es) played, 8 reused"):  # the second run plays none
        assert main(["run", str(spec), "--out", str(tmp_path / "out"), "--quiet"]) == 0
        out, err = capsys.readouterr()
        assert played in out, out
        assert err.count(SEARCHED_ELSEWHERE) == 1 and "this game has another content pack:" in err, err
    spec.write_text(spec.read_text(encoding="utf-8").replace('setups = ["lobo1"]\n', "").split("[setup.")[0],
                    encoding="utf-8")
    assert main(["run", str(spec), "--out", str(tmp_path / "plain"), "--quiet"]) == 0
    assert SEARCHED_ELSEWHERE not in capsys.readouterr().err
