"""Resolving tests: blind dice draws from the bag, the Yellow die, Resolve, injuries.

Field manual "Resolving Tests" and "Injuries"; docs/RULES.md "Tests and dice". The dice
protocol (the odds module and the kernel follow the same one):

* the bag starts as the pack's ``bag_dice`` in file order; a draw takes
  ``j = below(n_left)`` from the DICE stream, swaps bag[j] with the last die
  left and shrinks the bag;
* the roll draws one face ``below(6)`` per drawn die in draw order, then one
  for the always-rolled Yellow die; a reroll draws one more face.
"""

from __future__ import annotations

import functools

from sim.content import constants as K
from sim.rng import DICE
from sim.rules.choices import Test, TestOption
from sim.rules.errors import StrategyError, is_index, is_integer
from sim.rules.state import GameState
from sim.rules.status import skill_bonus
from sim.rules.villain import _play_top_secret, _top_secret_card, heal, name, take_injuries

FACE_TEXT = {(1, 0, 0): "success", (0, 1, 0): "injury", (0, 2, 0): "2 injuries", (0, 0, 1): "heal"}


def face_text(g: GameState, die: int, face: int) -> str:
    c = g.content
    key = (int(c.die_success[die, face]), int(c.die_injury[die, face]), int(c.die_heal[die, face]))
    return FACE_TEXT.get(key, "blank")


def dice_test(g: GameState, seat: int, test: Test) -> bool:
    """Draw dice one at a time (the player may stop), roll them with Yellow, maybe reroll.

    Resolve: at most once a turn on dice, either +1 die (after the allowed dice are
    drawn, before rolling) or the reroll of one die after the roll.
    """
    c = g.content
    p = g.players[seat]
    strat = g.strategy(seat)
    allowed = test.dice_allowed
    bag = [int(d) for d in c.bag_dice]
    base_allowed = max(allowed, 0)
    drawn: list[int] = []
    story: list[str] = []  # what the table sees, in order, for the trace
    while True:
        if len(drawn) < allowed and bag:
            if not strat.draw_die(g.view(seat, "draw_die"), test, list(drawn)):
                break
            j = g.rng.below(len(bag), DICE)
            drawn.append(bag[j])
            story.append(c.die_names[bag[j]])
            bag[j] = bag[-1]
            bag.pop()
            continue
        if (
            bag
            and allowed >= len(drawn)
            and allowed >= 0
            and p.resolve > 0
            and not g.dice_resolve_used
            and strat.resolve_plus_one(g.view(seat, "resolve_plus_one"), test, list(drawn))
        ):
            p.resolve -= 1
            g.dice_resolve_used = True
            g.stats.resolve_spent += 1
            allowed += 1
            test = Test(test.option, allowed, test.henchman, test.level, test.no_advance)
            story.append("+1 die for 1 Resolve:")
            continue
        break
    dice = drawn + [int(c.always_die)]
    faces = [g.rng.below(6, DICE) for _ in dice]
    g.say(
        f"  {base_allowed} dice allowed; draws "
        + (" ".join(x if x.endswith(":") else x + "," for x in story).rstrip(",") if story else "no die")
        + "; rolls "
        + ", ".join(f"{c.die_names[d]}={face_text(g, d, f)}" for d, f in zip(dice, faces))
    )
    if p.resolve > 0 and not g.dice_resolve_used:
        k = strat.reroll(g.view(seat, "reroll"), test, list(dice), list(faces))
        if not is_integer(k) or not -1 <= k < len(dice):
            raise StrategyError(f"strategy {strat.name!r} chose to reroll die {k!r} of {len(dice)} (-1: none)")
        k = int(k)
        if k >= 0:
            p.resolve -= 1
            g.dice_resolve_used = True
            g.stats.resolve_spent += 1
            faces[k] = g.rng.below(6, DICE)
            g.say(f"  spends 1 Resolve to reroll the {c.die_names[dice[k]]} die: {face_text(g, dice[k], faces[k])}")
    successes = sum(int(c.die_success[d, f]) for d, f in zip(dice, faces))
    hurt = sum(int(c.die_injury[d, f]) for d, f in zip(dice, faces)) - sum(
        int(c.die_heal[d, f]) for d, f in zip(dice, faces)
    )
    passed = successes >= test.option.successes
    g.say(f"  {successes} success(es), needed {test.option.successes}: {'PASS' if passed else 'FAIL'}")
    # injuries and heals apply whether the test passes or fails (they cancel each other)
    if hurt > 0:
        g.say(f"  takes {hurt} injur{'y' if hurt == 1 else 'ies'}")
        take_injuries(g, seat, hurt)
    elif hurt < 0:
        heal(g, seat, -hurt)
    return passed


def run_test(g: GameState, seat: int, option: TestOption, *, henchman: int = -1, level: int = 0,
             no_advance: bool = False) -> bool:
    """Resolve one skill-test option, offering the Top Secret cards that apply to tests."""
    from sim.rules.gamble import gamble

    p = g.players[seat]
    strat = g.strategy(seat)
    g.stats.tests_attempted += 1
    if option.gamble:
        passed = gamble(g, seat)
    else:
        allowed = p.skills[option.skill] + option.modifier + skill_bonus(g, seat, option.skill)
        test = Test(option, allowed, henchman, level, no_advance)
        ts = _top_secret_card(g, p, K.TS_AUTO_PASS)
        if ts >= 0 and level != 3 and strat.play_auto_pass(g.view(seat, "play_auto_pass"), test):
            _play_top_secret(g, p, ts)
            g.say("  plays a Top Secret card: passes automatically")
            passed = True
        else:
            ts = _top_secret_card(g, p, K.TS_TWO_DICE)
            if ts >= 0 and strat.play_two_dice(g.view(seat, "play_two_dice"), test):
                _play_top_secret(g, p, ts)
                test = Test(option, allowed + 2, henchman, level, no_advance)
                g.say("  plays a Top Secret card: two more dice")
            passed = dice_test(g, seat, test)
    if passed:
        g.stats.tests_passed += 1
    return passed


def describe_option(g: GameState, option: TestOption) -> str:
    if option.gamble:
        return "Gamble"
    return (
        f"{K.BASIC_SKILLS[option.skill].replace('_', '-').title()} {option.modifier:+d}"
        + (f" [{option.successes}]" if option.successes > 1 else "")
    )


def choose_option(g: GameState, seat: int, options: list[TestOption]) -> TestOption:
    strat = g.strategy(seat)
    if len(options) == 1:
        return options[0]
    i = strat.test_option(g.view(seat, "test_option"), list(options))
    if not is_index(i) or not 0 <= i < len(options):
        raise StrategyError(f"strategy {strat.name!r} chose test option {i!r} of {len(options)}")
    return options[int(i)]


__all__ = ["dice_test", "run_test", "choose_option", "describe_option", "name"]


@functools.lru_cache(maxsize=8)
def _autopass_counts(content_hash: str, autos: tuple) -> tuple:
    counts = [0] * len(K.ADVANCED_SKILLS)
    for a in autos:
        if a >= 0:
            counts[a] += 1
    return tuple(counts)


@functools.lru_cache(maxsize=8)
def autopass_counts(content) -> tuple:
    """How often each advanced skill passes a henchman level or an encounter side automatically."""
    autos = tuple(int(x) for x in content.henchman_autopass.ravel()) + tuple(int(x) for x in content.encounter_autopass.ravel())
    return _autopass_counts(content.hash, autos)


@functools.lru_cache(maxsize=8)
def autopass_level1_counts(content) -> tuple:
    """How many henchmen each advanced skill passes automatically at level 1."""
    return _autopass_counts(content.hash + ":level1", tuple(int(x) for x in content.henchman_autopass[:, 0]))


@functools.lru_cache(maxsize=8)
def autopass_encounter_counts(content) -> tuple:
    """How many encounter sides each advanced skill passes automatically."""
    return _autopass_counts(content.hash + ":encounters", tuple(int(x) for x in content.encounter_autopass.ravel()))
