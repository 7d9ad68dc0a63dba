"""Layer 3: dice tests, skill tests with Top Secret cards, and gambles equal the reference.

Each case starts from a reference position after set-up, perturbed by a script
(Resolve, injuries, the Watch, Top Secret cards in hand, Gambling/Luck), copied
into a kernel state; both engines then resolve the same test with the same
strategy, and the result, the whole state and the stream counters must agree.
"""

import random

import pytest

from sim.content import constants as K
from sim.kernel import gamble as KG
from sim.kernel import skill_tests as KT
from sim.rng import VILLAIN
from sim.rules import choices as RC
from sim.rules import decks as RD
from sim.rules import gamble as RG
from sim.rules import skill_tests as RT
from sim.rules.errors import GameOver
from tests.kernel_support import (
    STRATEGY_NAMES,
    assert_same,
    content_and_pack,
    kernel_bundle,
    kernel_context,
    kernel_copy,
    n_cases,
    reference_game,
)


def _perturb(g, script):
    """Shake a position so that every branch of a test is reached."""
    c, _ = content_and_pack()
    seat = script.randrange(len(g.players))
    g.active = seat
    p = g.players[seat]
    p.resolve = script.randrange(0, p.resolve_max + 1)
    p.injuries = script.randrange(0, p.life)
    g.dice_resolve_used = script.random() < 0.2
    if script.random() < 0.3:
        g.watched = RD.peek_card(g, g.villain, VILLAIN)
    else:
        g.watched = -1
    if script.random() < 0.3:
        p.advanced[K.GAMBLING_LUCK] = not p.advanced[K.GAMBLING_LUCK]
    # hand the player a Top Secret card from the pile now and then
    if g.top_secret.pile and script.random() < 0.4:
        card = g.top_secret.pile.pop(script.randrange(len(g.top_secret.pile)))
        p.top_secret.append(card)
    return seat


def _test(script):
    successes = script.choice((1, 1, 1, 2, 2, 3))
    henchman = script.randrange(4) if script.random() < 0.4 else -1
    level = script.randrange(1, 4) if henchman >= 0 else 0
    return successes, henchman, level, script.random() < 0.2


def _cases(players, n, fn):
    for case in range(n):
        name = STRATEGY_NAMES[case % len(STRATEGY_NAMES)]
        g, _s, _cfg, sid, prm = reference_game(players, name, 31, case)
        script = random.Random(case * 7 + players)
        seat = _perturb(g, script)
        st, rs = kernel_copy(g)
        assert_same(g, st, rs, f"copy, case {case}")
        fn(g, st, rs, sid, prm, seat, script, f"players {players}, {name}, case {case}")


@pytest.mark.parametrize("players", [1, 2, 3, 4, 5, 6])
def test_dice_test_matches_reference(players):
    _, pk = content_and_pack()
    kp = kernel_bundle()

    def one(g, st, rs, sid, prm, seat, script, where):
        successes, henchman, level, no_advance = _test(script)
        allowed = script.randrange(-1, 7)
        test = RC.Test(RC.TestOption(0, 0, successes), allowed, henchman, level, no_advance)
        got = KT.dice_test(kernel_context(pk=kp, st=st, rs=rs, sid=sid, prm=prm), seat, successes, allowed, henchman, no_advance)
        try:
            want = RT.dice_test(g, seat, test)
        except GameOver:
            want = None
        if want is not None:
            assert got == want, where
        assert_same(g, st, rs, where)

    _cases(players, n_cases(150, 3), one)


@pytest.mark.parametrize("players", [1, 2, 3, 4, 5, 6])
def test_run_test_matches_reference(players):
    _, pk = content_and_pack()
    kp = kernel_bundle()

    def one(g, st, rs, sid, prm, seat, script, where):
        successes, henchman, level, no_advance = _test(script)
        gamble = script.random() < 0.15
        option = RC.TestOption(script.randrange(5), script.randrange(-2, 2), successes, gamble)
        got = KT.run_test(kernel_context(pk=kp, st=st, rs=rs, sid=sid, prm=prm), seat, option.skill, option.modifier, successes, gamble, henchman, level, no_advance)
        try:
            want = RT.run_test(
                g, seat, option, henchman=henchman, level=level, no_advance=no_advance
            )
        except GameOver:
            want = None
        if want is not None:
            assert got == want, where
        assert_same(g, st, rs, where)

    _cases(players, n_cases(150, 3), one)


@pytest.mark.parametrize("players", [1, 4])
def test_gamble_matches_reference(players):
    _, pk = content_and_pack()
    kp = kernel_bundle()

    def one(g, st, rs, sid, prm, seat, script, where):
        for _ in range(3):
            got = KG.gamble(kernel_context(pk=kp, st=st, rs=rs, sid=sid, prm=prm), seat)
            assert got == RG.gamble(g, seat), where
            assert_same(g, st, rs, where)

    _cases(players, n_cases(200, 4), one)
