"""Mixed teams (a strategy per seat) on the kernel: the same games as the readable engine."""

import json
import subprocess
import sys
import textwrap

import pytest

import sim
from sim.compare import compare_run
from sim.experiments import SpecError, load_spec
from sim.study import run_study

TEAMS = [
    (2, "heuristic,random", 150),
    (4, "heuristic,bold,cautious,heuristic", 300),
    (5, "random,cautious,bold,heuristic,tuned", 150),
    (6, "tuned,bold,cautious,heuristic,random,tuned", 100),
]


@pytest.mark.parametrize("players,team,games", TEAMS)
def test_engines_play_identical_games_with_mixed_teams(players, team, games):
    k = sim.simulate(players=players, games=games, seed=17, strategy=team)
    r = sim.simulate(players=players, games=games, seed=17, strategy=team, engine="reference")
    assert k.equals(r)
    assert k["strategy"][0] == team  # every seat, in seat order


def test_every_seat_plays_its_own_strategy():
    # the seats matter (the test fails if the kernel played one strategy for all)
    mixed = sim.simulate(players=4, games=400, seed=3, strategy="heuristic,bold,bold,heuristic")
    swapped = sim.simulate(players=4, games=400, seed=3, strategy="bold,heuristic,heuristic,bold")
    plain = sim.simulate(players=4, games=400, seed=3, strategy="heuristic")
    bold = sim.simulate(players=4, games=400, seed=3, strategy="bold")
    cols = ["win", "turns", "lobo", "location_track", "top_secret_played"]
    for other in (swapped, plain, bold):
        assert not mixed.select(cols).equals(other.select(cols))
    ref = sim.simulate(players=4, games=400, seed=3, strategy="bold,heuristic,heuristic,bold", engine="reference")
    assert swapped.equals(ref)
    # two seatings of the same strategies are told apart by their label (they were both "bold,heuristic")
    assert (mixed["strategy"][0], swapped["strategy"][0]) == ("heuristic,bold,bold,heuristic", "bold,heuristic,heuristic,bold")
    assert (plain["strategy"][0], bold["strategy"][0]) == ("heuristic", "bold")


def test_mixed_rows_do_not_depend_on_threads_or_batch():
    team = "heuristic,bold,cautious,heuristic"
    one = sim.simulate(players=4, games=600, seed=9, strategy=team, threads=1)
    two = sim.simulate(players=4, games=600, seed=9, strategy=team, threads=2)
    assert one.equals(two)
    tally = sim.run.simulate_tally(players=4, games=600, seed=9, strategy=team, batch=128)
    assert tally.summary()["wins"] == int(one["win"].sum())


def test_wrong_seat_counts_and_custom_pairings_are_refused():
    with pytest.raises(ValueError, match="3 given for 4 seats"):
        sim.simulate(players=4, games=5, strategy="heuristic,bold,cautious")
    from numba import njit

    from sim.kernel.custom import KernelStrategy

    @njit
    def use_watch(view):
        return True

    ks = KernelStrategy("heuristic", use_watch=use_watch)
    with pytest.raises(ValueError, match="KernelStrategy plays every seat"):
        sim.simulate(players=2, games=5, strategy=[ks, "heuristic"])


def _play_json(engine: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "sim.cli", "play", "--players", "4", "--strategy", "heuristic,bold,cautious,heuristic",
         "--games", "1000", "--json", "--engine", engine],
        capture_output=True, text=True, check=True)
    d = json.loads(out.stdout)
    d.pop("seconds"), d.pop("setup_seconds")  # timings
    assert d.pop("engine") == engine  # the echo of the option itself
    return d


def test_play_json_is_the_same_on_both_engines_for_a_mixed_team():
    k, r = _play_json("kernel"), _play_json("reference")
    assert k == r
    assert k["games"] == 1000 and k["strategy"] == "heuristic,bold,cautious,heuristic"
    assert [p["pool_target"] for p in k["params"]] == [8, 5, 8, 8]


def test_play_refuses_a_team_of_the_wrong_size():
    out = subprocess.run([sys.executable, "-m", "sim.cli", "play", "--players", "3", "--strategy", "heuristic,bold",
                          "--games", "10"], capture_output=True, text=True)
    assert out.returncode != 0 and "2 strategies for 3 seats" in out.stderr


SPEC = """
[experiment]
name = "mixed"
seed = 5
games = 40
batch = 20

[grid]
players = [3]
strategies = ["heuristic", "heuristic,bold,cautious"]

[compare]
baseline = { strategy = "heuristic" }
"""


def test_a_spec_runs_and_compares_a_mixed_team(tmp_path):
    p = tmp_path / "mixed.toml"
    p.write_text(textwrap.dedent(SPEC))
    spec = load_spec(p)
    report = run_study(spec, tmp_path / "out", progress=False)
    assert report.finished
    table, _ = compare_run(tmp_path / "out")
    assert "heuristic,bold,cautious" in table["strategy"].to_list()
    want = sim.simulate(players=3, games=40, seed=5, strategy="heuristic,bold,cautious")
    row = table.filter(table["strategy"] == "heuristic,bold,cautious").row(0, named=True)
    assert row["win_rate"] == pytest.approx(want["win"].mean())
    bad = tmp_path / "bad.toml"
    bad.write_text(textwrap.dedent(SPEC).replace("players = [3]", "players = [3, 4]"))
    with pytest.raises(SpecError, match="has 3 seats but the grid has 4"):
        load_spec(bad)
