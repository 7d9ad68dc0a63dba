"""A player may decline an automatic pass (Additional Rules: Villain Advancement: "it may be to
that character's advantage to fail the encounter"): the strategy decision ``use_auto_pass``."""

import random

import pytest

import strategies
from sim.content import constants as K
from sim.kernel import layout
from sim.kernel import strategy as KS
from sim.rules.encounters import encounter_card, henchman_encounter
from sim.rules.errors import StrategyError
from tests.kernel_support import (
    STRATEGY_NAMES,
    assert_same,
    kernel_bundle,
    kernel_context,
    kernel_copy,
    n_cases,
    reference_game,
)
from tests.rules_helpers import (
    DICE,
    clear_table,
    content,
    install_rng,
    new_game,
    put,
    put_green,
    stack_encounter,
    villain_cards,
)

SPEED = K.ADVANCED_SKILLS.index("speed")
SEDUCTION = K.ADVANCED_SKILLS.index("seduction")


def table():
    g = clear_table(new_game(4, variant="fixed-skills"))  # Calli: Seduction; Nika: Speed
    return g, install_rng(g)


def seduction_card(c):
    """An encounter card whose No Intel side Seduction passes automatically, and the space of its deck."""
    card = next(x for x in range(c.n_encounters) if c.encounter_autopass[x, 0] == SEDUCTION)
    space = next(s for s in range(c.n_spaces) if c.space_deck[s] == c.encounter_deck[card])
    return card, space


def test_henchman_auto_pass_may_be_declined():
    g, rng = table()
    put(g, 3, "Paris")
    h = put_green(g, "Fedor", "Paris")  # Fedor's level-1 auto-pass skill is Speed
    nika = g.strategies[3]
    nika.push("use_auto_pass", False)
    nika.set_default("draw_die", False)
    henchman_encounter(g, 3, h)
    assert nika.asked("use_auto_pass") == [(SPEED, h, False)]
    assert rng.drawn(DICE), "declined: the test is rolled"
    assert g.stats.tests_attempted == 1
    assert "declines the automatic pass with speed" in "\n".join(g.trace)


def test_henchman_auto_pass_used_when_accepted():
    g, rng = table()
    put(g, 3, "Paris")
    h = put_green(g, "Fedor", "Paris")
    henchman_encounter(g, 3, h)
    assert g.strategies[3].asked("use_auto_pass") == [(SPEED, h, False)]
    assert rng.drawn(DICE) == [] and g.henchman_level[h] == 2


def test_encounter_auto_pass_may_be_declined():
    c = content()
    card, space = seduction_card(c)
    g, rng = table()
    put(g, 0, space)
    stack_encounter(g, card)
    calli = g.strategies[0]
    calli.push("use_auto_pass", False)
    calli.set_default("draw_die", False)
    encounter_card(g, 0, K.NO_INTEL)
    no_advance = bool(c.encounter_no_advance[card, 0])
    assert calli.asked("use_auto_pass") == [(SEDUCTION, -1, no_advance)]
    assert rng.drawn(DICE)  # the Yellow die at least


def test_not_asked_without_the_skill():
    c = content()
    card, space = seduction_card(c)
    g, rng = table()
    put(g, 1, space)  # Rocko has no Seduction
    stack_encounter(g, card)
    g.strategies[1].set_default("draw_die", False)
    encounter_card(g, 1, K.NO_INTEL)
    assert g.strategies[1].asked("use_auto_pass") == []


def test_answer_must_be_true_or_false():
    g, _ = table()
    put(g, 3, "Paris")
    h = put_green(g, "Fedor", "Paris")
    g.strategies[3].push("use_auto_pass", 1)
    with pytest.raises(StrategyError, match="use_auto_pass"):
        henchman_encounter(g, 3, h)


def test_heuristic_declines_only_where_the_watch_shows_a_minus_one_card():
    g = new_game(4, strategies=[strategies.make("heuristic") for _ in range(4)])
    s = g.strategies[0]
    view = g.view(0)
    assert s.use_auto_pass(view, SEDUCTION, -1, False)
    g.watched = villain_cards(g, advance=-1, where="any")[0]
    assert not s.use_auto_pass(g.view(0), SEDUCTION, -1, False)  # fail on purpose: V-1 comes next
    assert s.use_auto_pass(g.view(0), SPEED, 2, False)  # never against a henchman
    assert s.use_auto_pass(g.view(0), SEDUCTION, -1, True)  # a failure would not draw the card
    g.watched = villain_cards(g, advance=2, where="any")[0]
    assert s.use_auto_pass(g.view(0), SEDUCTION, -1, False)
    g.watched = villain_cards(g, advance=-1, where="any")[0]
    assert strategies.make("heuristic", watch_fail=False).use_auto_pass(g.view(0), SEDUCTION, -1, False)


@pytest.mark.parametrize("players", [1, 4])
def test_kernel_decision_matches_reference(players):
    kp = kernel_bundle()
    c = content()
    minus = [x for x in range(c.n_villain) if c.villain_advance[x] == -1 and not c.villain_injury[x]]
    plus = [x for x in range(c.n_villain) if c.villain_advance[x] == 2]
    for case in range(n_cases(80, 4)):
        name = STRATEGY_NAMES[case % len(STRATEGY_NAMES)]
        g, _s, cfg, sid, prm = reference_game(players, name, 71, case)
        script = random.Random(case)
        g.watched = script.choice([-1, minus[0], plus[0]])
        st, rs = kernel_copy(g)
        assert st[layout.S_WATCHED] == g.watched
        for _ in range(4):
            seat = script.randrange(players)
            skill = script.randrange(len(K.ADVANCED_SKILLS))
            henchman = script.choice([-1, 0, 2])
            no_advance = script.random() < 0.3
            want = g.strategy(seat).use_auto_pass(g.view(seat), skill, henchman, no_advance)
            got = KS.use_auto_pass(kernel_context(pk=kp, cfg=cfg, st=st, rs=rs, sid=sid, prm=prm),
                                   seat, skill, henchman, no_advance)
            assert bool(got) == bool(want), (name, case)
        assert_same(g, st, rs, f"{players} players, {name}, case {case}")
