"""The heuristic's stall guard: waiting for the Pool never makes an endless game.

Issue 13's "best parameters" (pool_target=4 with final_pool_min=8, cancel_at=1) held
back the game-ending henchman until the Pool held 8 Intel, which the team never
collects (it stops pooling at 4), and cancelled every advancement of Dr. Lobo: under
the rules before RULES_VERSION 2, game 1657 of seed 1 with 4 players ran into the
safety turn cap, and game 13972 stalled the other way (exchange_min_pool=6 above
pool_target=4: the team never exchanged Intel and the Location Track stayed at 1).
Under the current rules (henchman tests inside encounter cards, henchman cards'
consequences) those games end, but nothing in the rules forbids such a stall. From
round ``patience_rounds`` (default 40) the heuristic stops waiting; with
``release_at_pool_target`` it also stops holding once the Pool holds ``pool_target``.
"""

import sim
import strategies
from sim.content import load
from sim.rules import Settings, play_game

STALL = dict(move_resolve=False, exchange_min_pool=6, plus_one="never", final_pool_min=8, resolve_reserve=0,
             cancel_at=1, max_greens=1, rest_margin=2, gamble_resolve=True, pool_target=4, un_min_distance=5,
             auto_pass_below=0.85)


def _play(game: int, **params):
    c = load()
    team = [strategies.make("heuristic", **{**STALL, **params}) for _ in range(4)]
    rec, _ = play_game(c, Settings.build(c, 4), team, 1, game)
    return rec


class _View:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def test_final_hold_is_released_when_the_pool_stops_at_pool_target():
    h = strategies.make("heuristic", **STALL, release_at_pool_target=True)
    at_end = dict(location_track=4, location_target=5, rounds=3)
    assert not h._ready_to_fight(_View(pool_size=3, **at_end))  # still pooling: worth waiting
    assert h._ready_to_fight(_View(pool_size=4, **at_end))  # no more pooling: waiting cannot help
    assert not strategies.make("heuristic", **STALL)._ready_to_fight(_View(pool_size=4, **at_end))  # off by default
    assert not strategies.make("heuristic")._ready_to_fight(_View(pool_size=4, **at_end))  # 4 < 7


def test_patience_releases_the_hold_and_the_exchange_threshold():
    h = strategies.make("heuristic", **STALL, patience_rounds=20)
    end = dict(location_track=4, location_target=5, pool_size=3)
    assert not h._ready_to_fight(_View(rounds=19, **end))
    assert h._ready_to_fight(_View(rounds=20, **end))


def test_zero_timeouts_on_40000_kernel_games_with_the_issue_parameters():
    for extra in ({}, {"release_at_pool_target": True}):
        s = sim.simulate(players=4, games=40_000, seed=1, params={**STALL, **extra}, summary_only=True)
        assert s["games"] == 40_000 and s["timeouts"] == 0, extra


def test_engines_agree_with_the_issue_parameters():
    for games in ((1650, 10), (13968, 8)):
        k = sim.simulate(players=4, games=games[1], game0=games[0], seed=1, params=STALL)
        r = sim.simulate(players=4, games=games[1], game0=games[0], seed=1, params=STALL, engine="reference")
        assert k.equals(r)
