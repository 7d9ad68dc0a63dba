"""The end of the game, the turn cap, determinism, and the engine's checks on strategy answers.

Field manual "Winning The Game", "Losing The Game"; MODEL.md A 'End of the game', B.
"""

import numpy as np
import pytest

import sim
import strategies
from sim.rules import Settings, play_game
from sim.rules.choices import Test as DiceTest
from sim.rules.choices import TestOption as Option
from sim.rules.choices import TokenChoice
from sim.rules.encounters import encounter_phase, henchman_encounter
from sim.rules.endgame import check_location, intel_required
from sim.rules.errors import GameOver, StrategyError
from sim.rules.gamble import gamble
from sim.rules.game import play_turn
from sim.rules.missions import mission_reward
from sim.rules.movement import movement_phase
from sim.rules.skill_tests import dice_test
from sim.rules.state import Outcome
from tests.rules_helpers import (
    DICE,
    NumpyAnswers,
    Scripted,
    clear_table,
    content,
    content_with,
    face,
    install_rng,
    new_game,
    next_to_lobo,
    pool,
    put,
    put_green,
    put_intel,
    villain_cards,
)


def table(players=4, variant=None):
    g = clear_table(new_game(players, variant=variant))
    rng = install_rng(g)
    return g, rng


def lobo_at(g, n):
    """Lay +2 / +1 cards next to Dr. Lobo to bring him to ``n`` (0..8)."""
    twos, ones = villain_cards(g, advance=2), villain_cards(g, advance=1)
    next_to_lobo(g, *twos[: n // 2], *ones[: n % 2])
    assert g.lobo == n


# ------------------------------------------------------------------ Location Track target
def test_intel_symbols_by_lobo_position():
    g, _ = table()
    expected = {0: [1, 0, 0, 0], 2: [1, 1, 0, 0], 4: [1, 1, 1, 0], 5: [2, 1, 1, 0], 8: [2, 2, 1, 1]}
    for pos, need in expected.items():
        g.next_to_lobo = []
        g.villain.pile = sorted(set(range(g.content.n_villain)) - set(g.villain_removed))
        lobo_at(g, pos)
        assert intel_required(g) == need


def test_negative_lobo_uses_the_first_position():
    g, _ = table()
    next_to_lobo(g, *villain_cards(g, advance=-1))
    assert g.lobo == -2
    assert intel_required(g) == [1, 0, 0, 0]


def test_target_reached_with_enough_intel_wins():
    g, _ = table()
    lobo_at(g, 4)  # W T D
    pool(g, "weapon", "tech", "double_agent")
    g.location_track = g.location_target
    with pytest.raises(GameOver):
        check_location(g)
    assert g.outcome == Outcome.WIN_LOCATION


def test_extra_intel_is_fine():
    g, _ = table()
    lobo_at(g, 2)  # W T
    pool(g, "weapon", "weapon", "tech", "atomic", "double_agent")
    g.location_track = g.location_target
    with pytest.raises(GameOver):
        check_location(g)
    assert g.outcome == Outcome.WIN_LOCATION


def test_target_reached_with_too_little_intel_loses():
    g, _ = table()
    lobo_at(g, 5)  # W W T D
    pool(g, "weapon", "tech", "double_agent", "atomic")
    g.location_track = g.location_target
    with pytest.raises(GameOver):
        check_location(g)
    assert g.outcome == Outcome.LOSS_INTEL


@pytest.mark.parametrize("lobo, outcome", [(3, Outcome.WIN_LOCATION), (4, Outcome.LOSS_INTEL)])
def test_intel_checked_against_lobos_current_position(lobo, outcome):
    g, _ = table()
    lobo_at(g, lobo)
    pool(g, "weapon", "tech")
    g.location_track = g.location_target
    with pytest.raises(GameOver):
        check_location(g)
    assert g.outcome == outcome


def test_below_target_the_game_goes_on():
    g, _ = table()
    g.location_track = g.location_target - 1
    check_location(g)
    assert g.outcome is None


@pytest.mark.parametrize("players, variant, target", [(1, None, 3), (2, None, 4), (4, None, 5), (3, "dirty-location", 6)])
def test_henchman_win_that_reaches_the_target_ends_the_game(players, variant, target):
    g, rng = table(players, variant)
    assert g.location_target == target
    pool(g, "weapon")
    g.location_track = target - 1
    put(g, 0, "Paris")
    h = put_green(g, "Pierre", "Paris")
    g.henchman_level[h] = 1
    g.strategies[0].set_default("draw_die", False)
    rng.push(DICE, (6, face("yellow", "S")))
    with pytest.raises(GameOver):
        henchman_encounter(g, 0, h)
    assert g.location_track == target
    assert g.outcome == Outcome.WIN_LOCATION


def test_one_short_of_the_dirty_target_goes_on():
    g, rng = table(3, "dirty-location")
    g.location_track = 4
    put(g, 0, "Paris")
    h = put_green(g, "Pierre", "Paris")
    g.strategies[0].set_default("draw_die", False)
    g.strategies[0].push("token", lambda view, choices: choices.index(TokenChoice.HENCHMAN))
    rng.push(DICE, (6, face("yellow", "S")))
    encounter_phase(g, 0)
    assert g.location_track == 5 and g.outcome is None
    assert g.henchman_level[h] == 2


# ------------------------------------------------------------------ turn cap
def test_turn_cap_ends_the_game_as_timeout():
    def patch(raw):
        raw["setup.toml"]["simulation"]["turn_cap"] = 3

    c = content_with(patch)
    assert c.turn_cap == 3
    settings = Settings.build(c, 4)
    team = [Scripted() for _ in range(4)]
    rec, g = play_game(c, settings, team, seed=4, game=0)
    assert g.outcome == Outcome.TIMEOUT
    assert rec.outcome == "timeout" and not rec.win
    assert rec.turns == 3 and g.turn == 3


def test_default_turn_cap_is_far_above_a_real_game():
    assert content().turn_cap >= 200


# ------------------------------------------------------------------ determinism
@pytest.mark.parametrize("name", ["random", "heuristic"])
@pytest.mark.parametrize("players", [1, 4])
def test_same_seed_plays_the_same_game(name, players):
    c = content()
    settings = Settings.build(c, players)
    runs = []
    for _ in range(2):
        team = [strategies.make(name) for _ in range(players)]
        rec, g = play_game(c, settings, team, seed=77, game=3, trace=True)
        runs.append((rec.as_dict(), list(g.trace)))
    assert runs[0] == runs[1]
    team = [strategies.make(name) for _ in range(players)]
    rec, g = play_game(c, settings, team, seed=77, game=4, trace=True)
    assert list(g.trace) != runs[0][1]


def test_tracing_does_not_change_the_game():
    c = content()
    settings = Settings.build(c, 3)
    a, _ = play_game(c, settings, [strategies.make("heuristic") for _ in range(3)], seed=5, game=1, trace=True)
    b, _ = play_game(c, settings, [strategies.make("heuristic") for _ in range(3)], seed=5, game=1, trace=False)
    assert a.as_dict() == b.as_dict()


def test_game_ends_with_an_outcome_and_a_record():
    c = content()
    rec, g = play_game(c, Settings.build(c, 2), [strategies.make("heuristic") for _ in range(2)], seed=1, game=0)
    assert g.outcome is not None and rec.outcome == g.outcome.label
    assert rec.win == g.outcome.is_win


# ------------------------------------------------------------------ strategy answers are validated
@pytest.mark.parametrize("answer", [-1, 10_000, "0", None, 1.0, np.int64(-1), np.int64(10_000), np.float64(0)])
def test_illegal_move_is_a_strategy_error(answer):
    g, _ = table()
    put(g, 0, "Paris")
    g.strategies[0].push("move", answer)
    with pytest.raises(StrategyError):
        movement_phase(g, 0)


@pytest.mark.parametrize("answer", [np.int64(1), np.uint8(1), True, np.True_])
def test_an_index_may_be_a_numpy_integer_and_true_counts_as_1(answer):
    """As the kernel takes them (it cannot tell numpy's scalars from Python's)."""
    def moved(i):
        g, _ = table()
        put(g, 0, "Paris")
        g.strategies[0].push("move", i)
        movement_phase(g, 0)
        return g.players[0].space, g.players[0].resolve

    assert moved(answer) == moved(1) != moved(0)


def test_illegal_token_choice_is_a_strategy_error():
    g, _ = table()
    put(g, 0, "Paris")
    put_intel(g, "Paris")
    g.strategies[0].push("token", 3)  # only NO_INTEL, POOL, EXCHANGE (0..2)
    with pytest.raises(StrategyError):
        encounter_phase(g, 0)


def test_illegal_mission_reward_is_a_strategy_error():
    g, _ = table()
    g.players[0].mission_flipped = [True, True]
    g.strategies[0].push("mission_reward", 99)
    with pytest.raises(StrategyError):
        mission_reward(g, 0)


def test_illegal_test_option_is_a_strategy_error():
    g, rng = table()
    put(g, 0, "Paris")
    h = put_green(g, "Pierre", "Paris")
    g.henchman_level[h] = 2  # two options
    g.strategies[0].push("test_option", 2)
    with pytest.raises(StrategyError):
        henchman_encounter(g, 0, h)


def test_a_whole_turn_with_an_illegal_answer_raises():
    g, _ = table()
    g.strategies[1].push("move", 500)  # Rocko in Siberia
    with pytest.raises(StrategyError):
        play_turn(g, 1)


@pytest.mark.parametrize("answer", [(-1, False), (32, False), (0b111, False), (0b111111, True), (np.int64(32), False)])
def test_illegal_gamble_exchange_is_a_strategy_error(answer):
    g, rng = table()
    g.strategies[0].push("gamble_exchange", answer)
    with pytest.raises(StrategyError):
        gamble(g, 0)


@pytest.mark.parametrize("answer", [1.5, 2, 7, np.int64(2), np.int64(-2)])
def test_illegal_reroll_is_a_strategy_error(answer):
    g, rng = table()
    g.strategies[0].set_default("draw_die", False)
    g.strategies[0].push("reroll", answer)
    with pytest.raises(StrategyError):
        dice_test(g, 0, DiceTest(Option(0, 0, 1), 0))


@pytest.mark.parametrize("answer", [[0], [0, 0], [0, 9], [-1, 2], [0, 1, 2]])
def test_illegal_level_two_henchmen_choice_is_a_strategy_error(answer):
    s = Scripted().push("setup_level2_henchmen", answer)
    with pytest.raises(StrategyError):
        new_game(1, strategies=[s])


@pytest.mark.parametrize("answer", [None, 3, (0.5, False), (1, "yes"), (True, False), (np.True_, False), (1, False, 0)])
def test_wrongly_typed_gamble_answer_is_a_strategy_error(answer):
    g, rng = table()
    g.strategies[0].push("gamble_exchange", answer)
    with pytest.raises(StrategyError):
        gamble(g, 0)


@pytest.mark.parametrize("answer", ["0", None, True, False, np.True_, np.False_])  # a die's index, not true or false
def test_wrongly_typed_reroll_is_a_strategy_error(answer):
    g, rng = table()
    g.strategies[0].set_default("draw_die", False)
    g.strategies[0].push("reroll", answer)
    with pytest.raises(StrategyError):
        dice_test(g, 0, DiceTest(Option(0, 0, 1), 0))


@pytest.mark.parametrize("answer", [None, 2, "01"])
def test_wrongly_typed_level_two_choice_is_a_strategy_error(answer):
    s = Scripted().push("setup_level2_henchmen", answer)
    with pytest.raises(StrategyError):
        new_game(1, strategies=[s])


@pytest.mark.parametrize("answer", [[True, 0], [0, np.True_], (False, 1), [1.0, 0], [0, np.float64(1)]])
def test_a_level_two_henchman_must_be_an_integer(answer):
    """True and False are no henchmen (``[True, 0]`` was read as henchmen 1 and 0), nor is a float."""
    s = Scripted().push("setup_level2_henchmen", answer)
    with pytest.raises(StrategyError, match=r"^strategy 'scripted' chose henchmen .* for level 2 \(need 2\)$"):
        new_game(1, strategies=[s])


@pytest.mark.parametrize("answer, shown", [
    (np.array([[0, 1]]), r"\[\[0, 1\]\] for level 2 as a 2-d int64 array"),
    (np.array([0.0, 1.0]), r"\[0.0, 1.0\] for level 2 as a 1-d float64 array"),
    (np.array([True, True]), r"\[True, True\] for level 2 as a 1-d bool array"),  # a mask, not henchmen
    (np.array([0, 0]), r"\[0, 0\] for level 2 \(need 2\)"),  # checked as the list is
    (np.array([0, 9]), r"\[0, 9\] for level 2 \(need 2\)"),
])
def test_an_illegal_array_of_level_two_henchmen_is_a_strategy_error(answer, shown):
    s = Scripted().push("setup_level2_henchmen", answer)
    with pytest.raises(StrategyError, match=rf"^strategy 'scripted' chose henchmen {shown}"):
        new_game(1, strategies=[s])


class ArrayHenchmen(strategies.HeuristicStrategy):
    """The heuristic, its level-2 henchmen answered as a 1-d numpy array of ``dtype``."""

    def __init__(self, dtype, **params):
        super().__init__(**params)
        self.dtype = dtype

    def setup_level2_henchmen(self, view, k):
        return np.array(super().setup_level2_henchmen(view, k), dtype=self.dtype)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8])
def test_an_integer_array_of_level_two_henchmen_plays_as_the_list_on_both_engines(dtype):
    """A 1-d integer array (as a kernel decision writes the henchmen to ``out``) is the list of its
    values: the readable engine plays the heuristic's games, which the kernel plays too."""
    for players in (1, 2):  # the counts with henchmen at level 2
        got = sim.simulate(players=players, games=40, seed=2, strategy=ArrayHenchmen(dtype, name="array"),
                           engine="reference")
        assert got["strategy"].unique().to_list() == ["array"]
        got = got.drop("strategy")  # the games themselves: those of the heuristic, on both engines
        ref = sim.simulate(players=players, games=40, seed=2, strategy="heuristic", engine="reference")
        assert got.equals(ref.drop("strategy"))
        assert got.equals(sim.simulate(players=players, games=40, seed=2, strategy="heuristic").drop("strategy"))


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_numpy_integer_answers_play_the_same_games_as_python_ints(dtype):
    """A rule written with numpy answers numpy integers: the same value, so the same games (and
    the kernel, where a KernelStrategy's decisions run, cannot tell them from Python ints)."""
    asked = set()
    for players in range(1, 7):
        team = [NumpyAnswers(dtype, name="numpy") for _ in range(players)]
        got = sim.simulate(players=players, games=40, seed=2, strategy=team, engine="reference").drop("strategy")
        assert got.equals(sim.simulate(players=players, games=40, seed=2, strategy="heuristic",
                                       engine="reference").drop("strategy"))
        asked |= set().union(*(s.asked for s in team))
    # every integer decision but skill_down (a status card with no copy left: tests/test_rules_status.py)
    assert asked == {"setup_level2_henchmen", "setup_extras", "setup_advanced_skill", "move", "token", "test_option",
                     "reroll", "gamble_exchange", "mission_reward", "skill_up", "advanced_skill"}
