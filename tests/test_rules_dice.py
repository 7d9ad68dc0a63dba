"""Resolving tests: the dice bag, the Yellow die, Resolve, injuries and knockouts.

Field manual "Resolving Tests", "Six Custom Dice", "Injuries", FAQ 5; MODEL.md A 'Tests'.
"""

import pytest

from sim.content import constants as K
from sim.rules.choices import Means
from sim.rules.choices import Test as DiceTest
from sim.rules.choices import TestOption as Option
from sim.rules.errors import StrategyError
from sim.rules.movement import movement_phase
from sim.rules.skill_tests import dice_test, run_test
from tests.rules_helpers import (
    DICE,
    bag_picks,
    clear_table,
    content,
    face,
    give_top_secret,
    install_rng,
    new_game,
    put,
    script_dice,
    stack_villain,
    villain_cards,
)

SPY, PER, DEC, ATH, H2H = range(5)


def table():
    g = clear_table(new_game(4))  # seat 0: Calli Dagger (Spy 2, Per 2, Dec 2, Ath 1, H2H 1; life 4)
    rng = install_rng(g, strict=True)
    put(g, 0, "Paris")
    return g, rng, g.players[0], g.strategies[0]


def make_test(allowed, successes=1):
    return DiceTest(Option(SPY, 0, successes), allowed)


def names(dice):
    c = content()
    return [c.die_names[d] for d in dice]


def test_dice_faces_of_the_pack():
    c = content()
    assert c.die_names[c.always_die] == "yellow"
    assert names(c.bag_dice) == ["black", "red", "green", "blue", "brown"]
    assert [face("yellow", x) for x in ("S", "I", "H", "-")] == [0, 1, 2, 3]
    assert [face("black", x) for x in ("S", "II", "-")] == [0, 4, 5]


def test_blind_draws_without_replacement():
    g, rng, p, s = table()
    order = ["green", "black", "brown", "red", "blue"]
    script_dice(rng, order, ["-"] * 5, "S")
    assert [n for n, _ in bag_picks(order)] == [5, 4, 3, 2, 1]
    assert dice_test(g, 0, make_test(5)) is True
    drawn_seen = [names(d) for (_, d) in s.asked("draw_die")]
    assert drawn_seen == [[], ["green"], ["green", "black"], ["green", "black", "brown"],
                          ["green", "black", "brown", "red"]]
    assert [n for n, _ in rng.drawn(DICE)][:5] == [5, 4, 3, 2, 1]  # the bag shrinks: no replacement
    assert len(rng.drawn(DICE)) == 5 + 6  # five bag draws, five dice and Yellow rolled
    assert rng.left() == {}


def test_player_may_stop_drawing_early():
    g, rng, p, s = table()
    s.set_default("draw_die", lambda view, test, drawn: len(drawn) < 1)
    script_dice(rng, ["red"], ["S"], "-")
    assert dice_test(g, 0, make_test(3)) is True
    assert len(s.asked("draw_die")) == 2  # drew one, declined the second
    assert not s.asked("resolve_plus_one")  # stopping early ends the drawing
    assert rng.left() == {}


@pytest.mark.parametrize("yellow, passed", [("S", True), ("-", False), ("I", False), ("H", False)])
def test_yellow_is_always_rolled(yellow, passed):
    g, rng, p, s = table()
    rng.push(DICE, (6, face("yellow", yellow)))
    assert dice_test(g, 0, make_test(0)) is passed
    assert rng.drawn(DICE) == [(6, face("yellow", yellow))]
    assert not s.asked("draw_die")


def test_allowed_dice_are_skill_plus_modifier():
    g, rng, p, s = table()
    # Spycraft 2 + 1 = 3 dice
    script_dice(rng, ["black", "red", "green"], ["-", "-", "-"], "-")
    run_test(g, 0, Option(SPY, 1, 1))
    assert len(s.asked("draw_die")) == 3
    assert s.asked("draw_die")[0][0].dice_allowed == 3
    assert rng.left() == {}


def test_two_successes_needed():
    g, rng, p, s = table()
    script_dice(rng, ["red", "blue"], ["S", "-"], "-")
    assert dice_test(g, 0, make_test(2, successes=2)) is False
    script_dice(rng, ["red", "blue"], ["S", "-"], "S")
    assert dice_test(g, 0, make_test(2, successes=2)) is True


def test_negative_total_rolls_only_yellow():
    g, rng, p, s = table()
    assert p.resolve > 0
    rng.push(DICE, (6, face("yellow", "S")))
    # Athletics 1 - 2 = -1: Resolve alone cannot reach 1 die, so nothing is offered
    assert run_test(g, 0, Option(ATH, -2, 1)) is True
    assert not s.asked("draw_die") and not s.asked("resolve_plus_one")
    assert p.resolve == 3 and rng.left() == {}


def test_negative_total_raised_to_one_by_two_dice_card():
    g, rng, p, s = table()
    give_top_secret(g, 0, K.TS_TWO_DICE)
    s.push("play_two_dice", True)
    script_dice(rng, ["red"], ["S"], "-")
    assert run_test(g, 0, Option(ATH, -2, 1)) is True  # -1 + 2 = 1 die
    assert s.asked("draw_die")[0][0].dice_allowed == 1
    assert len(s.asked("draw_die")) == 1
    assert p.top_secret == []


def test_zero_total_raised_to_one_by_resolve():
    g, rng, p, s = table()
    s.push("resolve_plus_one", True)
    script_dice(rng, ["blue"], ["S"], "-")
    assert run_test(g, 0, Option(ATH, -1, 1)) is True  # 0 + 1 Resolve = 1 die
    assert p.resolve == 2 and g.dice_resolve_used
    assert rng.left() == {}


def test_resolve_adds_one_die_and_forbids_the_reroll():
    g, rng, p, s = table()
    s.push("resolve_plus_one", True)
    script_dice(rng, ["black", "red"], ["-", "-"], "-")
    assert dice_test(g, 0, make_test(1)) is False
    assert len(s.asked("draw_die")) == 2
    assert s.asked("draw_die")[1][0].dice_allowed == 2
    assert p.resolve == 2 and g.dice_resolve_used and g.stats.resolve_spent == 1
    assert not s.asked("reroll")


def test_reroll_one_die_only_final_faces_count():
    g, rng, p, s = table()
    s.push("reroll", 0)
    script_dice(rng, ["red"], ["-"], "-", reroll="S", reroll_die="red")
    assert dice_test(g, 0, make_test(1)) is True
    assert s.asked("reroll")[0][1:] == ([content().die_index("red"), 0], [face("red", "-"), face("yellow", "-")])
    assert p.resolve == 2 and g.dice_resolve_used
    assert rng.left() == {}


def test_reroll_can_lose_a_success():
    g, rng, p, s = table()
    s.push("reroll", 0)
    script_dice(rng, ["red"], ["S"], "-", reroll="-", reroll_die="red")
    assert dice_test(g, 0, make_test(1)) is False


def test_reroll_of_the_yellow_die():
    g, rng, p, s = table()
    s.push("reroll", 1)
    script_dice(rng, ["brown"], ["-"], "I", reroll="S", reroll_die="yellow")
    assert dice_test(g, 0, make_test(1)) is True
    assert p.injuries == 0  # the rerolled injury face no longer counts


def test_at_most_one_resolve_on_dice_per_turn():
    g, rng, p, s = table()
    s.set_default("resolve_plus_one", True)
    s.set_default("reroll", 0)
    script_dice(rng, ["red", "blue"], ["-", "-"], "-")
    dice_test(g, 0, make_test(1))
    assert len(s.asked("resolve_plus_one")) == 1
    # a second test in the same turn: neither option is offered again
    script_dice(rng, ["red"], ["-"], "-")
    dice_test(g, 0, make_test(1))
    assert len(s.asked("resolve_plus_one")) == 1 and not s.asked("reroll")
    assert p.resolve == 2 and rng.left() == {}


def test_no_resolve_no_offer():
    g, rng, p, s = table()
    p.resolve = 0
    script_dice(rng, ["red"], ["-"], "-")
    dice_test(g, 0, make_test(1))
    assert not s.asked("resolve_plus_one") and not s.asked("reroll")


def test_dice_resolve_is_separate_from_movement_resolve():
    g, rng, p, s = table()
    s.push("move", lambda view, moves: next(i for i, m in enumerate(moves) if m.resolve and m.means == Means.WALK))
    movement_phase(g, 0)
    assert g.move_resolve_used and p.resolve == 2
    s.push("reroll", 0)
    script_dice(rng, ["red"], ["-"], "-", reroll="S", reroll_die="red")
    assert dice_test(g, 0, make_test(1)) is True
    assert p.resolve == 1


@pytest.mark.parametrize(
    "draw, faces, yellow, passed, injuries",
    [
        (["black", "red"], ["II", "S"], "H", True, 1),  # pass, 2 injuries - 1 heal
        (["green"], ["I"], "-", False, 1),  # fail, injured anyway
        (["green"], ["I"], "H", False, 0),  # injury and heal cancel
        (["black"], ["S"], "I", True, 1),  # pass with an injury from Yellow
        (["red"], ["S"], "H", True, 0),  # heal with nothing to heal
    ],
)
def test_injuries_and_heals_apply_pass_or_fail(draw, faces, yellow, passed, injuries):
    g, rng, p, s = table()
    script_dice(rng, draw, faces, yellow)
    assert dice_test(g, 0, make_test(len(draw))) is passed
    assert p.injuries == injuries


def test_heal_face_removes_an_injury():
    g, rng, p, s = table()
    p.injuries = 2
    script_dice(rng, ["brown"], ["-"], "H")
    dice_test(g, 0, make_test(1))
    assert p.injuries == 1


def test_knockout_discards_injuries_and_draws_an_advancement():
    g, rng, p, s = table()
    p.injuries = 3  # life 4
    plus1 = villain_cards(g, advance=1)[0]
    stack_villain(g, plus1)
    script_dice(rng, ["black"], ["II"], "S")
    assert dice_test(g, 0, make_test(1)) is True  # injury status does not affect the result
    assert p.injuries == 0
    assert g.stats.knockouts == 1
    assert g.next_to_lobo == [plus1] and g.lobo == 1


def test_injuries_below_life_do_not_knock_out():
    g, rng, p, s = table()
    p.injuries = 1
    script_dice(rng, ["black"], ["II"], "-")
    dice_test(g, 0, make_test(1))
    assert p.injuries == 3 and g.stats.knockouts == 0 and g.next_to_lobo == []


def test_illegal_reroll_index_is_a_strategy_error():
    g, rng, p, s = table()
    s.push("reroll", 5)
    script_dice(rng, ["red"], ["-"], "-")
    with pytest.raises(StrategyError):
        dice_test(g, 0, make_test(1))


def test_run_test_counts_attempts_and_passes():
    g, rng, p, s = table()
    script_dice(rng, ["red"], ["S"], "-")
    s.set_default("draw_die", lambda view, test, drawn: not drawn)
    run_test(g, 0, Option(SPY, 0, 1))
    rng.push(DICE, (6, face("yellow", "-")))
    s.set_default("draw_die", False)
    run_test(g, 0, Option(SPY, 0, 1))
    assert (g.stats.tests_attempted, g.stats.tests_passed) == (2, 1)
