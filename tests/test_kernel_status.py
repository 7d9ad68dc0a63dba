"""The kernel twins of the status-card rules equal the reference (docs/RULES.md "Status cards").

Each case starts from a reference position after set-up with status cards dealt at
random (often every copy of a kind, so the unavailable rule comes up), copied into a
kernel state; both engines then play the same rule, and the whole state and the
stream counters must agree.
"""

import random

import numpy as np
import pytest

from sim.content import constants as K
from sim.kernel import decks as KD
from sim.kernel import encounters as KE
from sim.kernel import game as KG
from sim.kernel import missions as KMI
from sim.kernel import movement as KM
from sim.kernel import skill_tests as KT
from sim.kernel import villain as KV
from sim.rules import encounters as RE
from sim.rules import game as RG
from sim.rules import missions as RMI
from sim.rules import movement as RM
from sim.rules import skill_tests as RT
from sim.rules import status as RS
from sim.rules import villain as RV
from sim.rules.choices import TestOption as Option
from sim.rules.errors import GameOver
from sim.rules.invariants import check_invariants
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


def _shake(g, script):
    """Status cards dealt at random (third persons once), skills, Resolve and injuries shaken."""
    c = g.content
    seat = script.randrange(len(g.players))
    g.active = seat
    n = len(g.players)
    share = script.choice((0.1, 0.5, 0.9))
    for card in range(c.n_status):
        if script.random() < share:
            h = script.randrange(n)
            kind = int(c.status_type[card])
            if c.status_polarity[kind] == K.THIRD_PERSON and RS.holds_kind(g, h, kind):
                continue
            g.status_holder[card] = h
        elif g.status_holder[card] >= 0 and script.random() < 0.5:
            g.status_holder[card] = -1
    for p in g.players:
        lo, hi = int(c.character_skill_min[p.character]), int(c.character_skill_max[p.character])
        p.skills = [script.randint(lo, min(hi, lo + 3)) if script.random() < 0.7 else lo for _ in p.skills]
        p.resolve = script.randint(0, p.resolve_max)
        p.injuries = script.randrange(p.life)
    return seat


def _cases(players, n, fn):
    kp = kernel_bundle()
    for case in range(n):
        name = STRATEGY_NAMES[case % len(STRATEGY_NAMES)]
        g, _s, cfg, sid, prm = reference_game(players, name, 43, case)
        script = random.Random(case * 13 + players)
        seat = _shake(g, script)
        check_invariants(g)
        st, rs = kernel_copy(g)
        assert_same(g, st, rs, f"copy, case {case}")
        ctx = kernel_context(pk=kp, cfg=cfg, st=st, rs=rs, sid=sid, prm=prm)
        fn(g, ctx, st, rs, seat, script, f"players {players}, {name}, case {case}")


PLAYERS = [1, 3, 6]


@pytest.mark.parametrize("players", PLAYERS)
def test_held_status_look_ups_match_reference(players):
    def one(g, ctx, st, rs, seat, script, where):
        pk = kernel_bundle()
        for s in range(players):
            for e in range(len(K.STATUS_EFFECTS)):
                assert KD.status_first_held(pk, st, s, e) == RS.first_held(g, s, e), where
            for skill in range(len(K.BASIC_SKILLS)):
                assert KD.status_bonus(pk, st, s, skill) == RS.skill_bonus(g, s, skill), where
            assert KD.extra_mp(pk, st, s) == RS.extra_mp(g, s), where
            for kind in range(len(g.content.status_ids)):
                assert KD.status_holds_kind(pk, st, s, kind) == RS.holds_kind(g, s, kind), where

    _cases(players, n_cases(40, 2), one)


@pytest.mark.parametrize("players", PLAYERS)
def test_gain_status_matches_reference(players):
    def one(g, ctx, st, rs, seat, script, where):
        for _ in range(4):
            kind = script.randrange(len(g.content.status_ids))
            KE.gain_status(ctx, seat, kind)
            RE.gain_status(g, seat, kind)
            assert_same(g, st, rs, f"{where}, kind {kind}")
        check_invariants(g)

    _cases(players, n_cases(150, 3), one)


@pytest.mark.parametrize("players", PLAYERS)
def test_random_status_matches_reference(players):
    def one(g, ctx, st, rs, seat, script, where):
        for _ in range(4):
            negative = script.random() < 0.5
            effect = K.E_RANDOM_NEGATIVE_STATUS if negative else K.E_RANDOM_STATUS
            KE.apply_effect(ctx, seat, effect, 1, -1)
            RE.apply_effect(g, seat, effect, 1, -1)
            assert_same(g, st, rs, f"{where}, negative {negative}")
        check_invariants(g)

    _cases(players, n_cases(150, 3), one)


@pytest.mark.parametrize("players", PLAYERS)
def test_unavailable_rule_and_lower_any_skill_match_reference(players):
    def one(g, ctx, st, rs, seat, script, where):
        for polarity in (K.POSITIVE, K.NEGATIVE, K.THIRD_PERSON):
            KE.status_unavailable(ctx, seat, polarity)
            RE.status_unavailable(g, seat, polarity)
            assert_same(g, st, rs, f"{where}, polarity {polarity}")
        KE.lower_any_skill(ctx, seat)
        RE.lower_any_skill(g, seat)
        assert_same(g, st, rs, f"{where}, lower any skill")

    _cases(players, n_cases(120, 3), one)


@pytest.mark.parametrize("players", PLAYERS)
def test_take_status_matches_reference(players):
    def one(g, ctx, st, rs, seat, script, where):
        free = [x for x, h in enumerate(g.status_holder) if h == -1]
        if not free:
            return
        card = script.choice(free)
        KE.take_status(kernel_bundle(), st, seat, card)
        RE.take_status(g, seat, card)
        assert_same(g, st, rs, where)

    _cases(players, n_cases(80, 3), one)


@pytest.mark.parametrize("players", PLAYERS)
def test_injuries_with_protection_match_reference(players):
    def one(g, ctx, st, rs, seat, script, where):
        n = script.randint(1, 3)
        KV.take_injuries(ctx, seat, n)
        try:
            RV.take_injuries(g, seat, n)
        except GameOver:
            pass
        assert_same(g, st, rs, where)

    _cases(players, n_cases(120, 3), one)


@pytest.mark.parametrize("players", PLAYERS)
def test_legal_moves_with_extra_move_match_reference(players):
    def one(g, ctx, st, rs, seat, script, where):
        c, pk = content_and_pack()
        moves = np.zeros((KM.move_capacity(pk), 4), dtype=np.int64)
        for s in range(players):
            n = KM.legal_moves(ctx, s, moves)
            got = [tuple(int(x) for x in moves[i]) for i in range(n)]
            assert got == [(m.dest, int(m.means), int(m.resolve), m.steps) for m in RM.legal_moves(g, s)], where

    _cases(players, n_cases(60, 2), one)


@pytest.mark.parametrize("players", PLAYERS)
def test_a_turn_with_status_cards_matches_reference(players):
    def one(g, ctx, st, rs, seat, script, where):
        c, pk = content_and_pack()
        moves = np.zeros((KM.move_capacity(pk), 4), dtype=np.int64)
        if script.random() < 0.5:  # a lost turn now and then
            lose = [x for x in range(c.n_status) if c.status_effect[c.status_type[x]] == K.SE_LOSE_TURN]
            g.status_holder[script.choice(lose)] = seat
            st[:], rs[:] = kernel_copy(g)
        if script.random() < 0.5:  # a mission reward to claim
            g.players[seat].mission_flipped = [True, True]
            st[:], rs[:] = kernel_copy(g)
        KG.play_turn(ctx, seat, moves)
        try:
            RG.play_turn(g, seat)
        except GameOver:
            pass
        assert_same(g, st, rs, where)

    _cases(players, n_cases(150, 3), one)


@pytest.mark.parametrize("players", PLAYERS)
def test_mission_reward_with_negative_cards_matches_reference(players):
    def one(g, ctx, st, rs, seat, script, where):
        g.players[seat].mission_flipped = [True, True]
        st[:], rs[:] = kernel_copy(g)
        KMI.mission_reward(ctx, seat)
        RMI.mission_reward(g, seat)
        assert_same(g, st, rs, where)
        check_invariants(g)

    _cases(players, n_cases(150, 3), one)


@pytest.mark.parametrize("players", PLAYERS)
def test_a_test_with_skill_modifiers_matches_reference(players):
    def one(g, ctx, st, rs, seat, script, where):
        skill = script.randrange(len(K.BASIC_SKILLS))
        modifier = script.randint(-2, 2)
        successes = script.randint(1, 2)
        got = KT.run_test(ctx, seat, skill, modifier, successes, False, -1, 0, False)
        try:
            want = RT.run_test(g, seat, Option(skill, modifier, successes))
        except GameOver:
            want = None
        if want is not None:
            assert got == want, where
        assert_same(g, st, rs, where)

    _cases(players, n_cases(150, 3), one)


@pytest.mark.parametrize("reading", [("unavailable_negative", "top_secret_or_resolve"), ("discarded", "removed")])
def test_the_status_readings_match_reference(reading):
    """Both engines follow status.toml [readings] (a whole game each, every strategy)."""
    import strategies
    from sim.content import build, load_raw
    from sim.kernel import layout
    from sim.kernel.game import play_game as k_play_game
    from sim.kernel.packref import kernel_pack
    from sim.rules.game import play_game
    from sim.rules.state import Settings
    from tests.kernel_support import new_rng_state

    raw = load_raw()
    raw["status.toml"]["readings"][reading[0]] = reading[1]
    c = build(raw)
    pk = layout.pack(c)
    kp = kernel_pack(pk)
    st, rs = layout.new_state(pk), new_rng_state()
    moves = np.zeros((KM.move_capacity(pk), 4), dtype=np.int64)
    for game in range(n_cases(20, 1)):
        name = STRATEGY_NAMES[game % len(STRATEGY_NAMES)]
        s = Settings.build(c, 1 + game % 6)
        sid, prm = layout.strategy_vector(strategies.make(name))
        _rec, g = play_game(c, s, [strategies.make(name) for _ in range(s.players)], 77, game)
        k_play_game(kernel_context(pk=kp, cfg=layout.settings_vector(c, s), st=st, rs=rs, sid=sid, prm=prm), 77, game, moves)
        a, b = layout.snapshot(g), layout.snapshot_state(pk, st, s.players)
        assert a == b, f"{reading}, {name}, game {game}"
