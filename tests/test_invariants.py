"""Conservation invariants after every turn, 1,000 games per player count."""

import pytest

import strategies
from sim.content import load
from sim.rules import Settings, play_game
from sim.rules.invariants import check_invariants


@pytest.fixture(scope="module")
def content():
    return load()


@pytest.mark.slow
@pytest.mark.parametrize("players", [1, 2, 3, 4, 5, 6])
def test_invariants_hold_after_every_turn(content, players):
    settings = Settings.build(content, players)
    outcomes = set()
    # the four built-in strategies share the 1,000 games of each player count
    names = list(strategies.BUILT_IN)
    for game in range(1000):
        name = names[game % len(names)]
        team = [strategies.make(name) for _ in range(players)]
        rec, g = play_game(content, settings, team, seed=11, game=game, after_turn=check_invariants)
        assert rec.outcome != "timeout", f"game {game} ({name}) hit the turn cap"
        outcomes.add(rec.outcome)
    assert "loss_lobo" in outcomes
