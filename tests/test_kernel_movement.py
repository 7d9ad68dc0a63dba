"""Layer 4: legal moves (canonical order), moving, resting and the strategies' move choices.

Positions come from reference games: after every turn each seat's legal moves
and the heuristic presets' choices are compared; every few turns a copy of the
position plays one movement phase on both engines with the game's strategy.
"""

import copy

import numpy as np
import pytest

import strategies
from sim.kernel import layout
from sim.kernel import movement as KM
from sim.kernel import strategy as KS
from sim.kernel.decks import player_base
from sim.rules import Settings, play_game
from sim.rules import movement as RM
from sim.rules.errors import GameOver
from tests.kernel_support import (
    STRATEGY_NAMES,
    assert_same,
    content_and_pack,
    kernel_bundle,
    kernel_context,
    kernel_copy,
    n_cases,
)


def _moves_of(moves, n):
    return [
        (int(moves[i, 0]), int(moves[i, 1]), int(moves[i, 2]), int(moves[i, 3])) for i in range(n)
    ]


@pytest.mark.parametrize("players", [1, 2, 3, 4, 5, 6])
def test_movement_matches_reference(players):
    c, pk = content_and_pack()
    kp = kernel_bundle()
    s = Settings.build(c, players)
    cfg = layout.settings_vector(c, s)
    moves = np.zeros((KM.move_capacity(pk), 4), dtype=np.int64)
    presets = [(name, strategies.make(name)) for name in ("heuristic", "cautious", "bold")]
    vectors = [layout.strategy_vector(st) for _, st in presets]
    checked = {"moves": 0, "phases": 0, "direct": 0}
    rnd = layout.strategy_vector(strategies.make("random"))

    def gift(st, seat):
        return st[player_base(kp, seat) + layout.P_UN] == 0 and KM.un_giver(kernel_context(pk=kp, cfg=cfg, st=st), seat) >= 0

    def after_turn(g):
        if g.outcome is not None:
            return
        st, rs = kernel_copy(g)
        for seat in range(players):
            ref = RM.legal_moves(g, seat)
            n = KM.legal_moves(kernel_context(pk=kp, cfg=cfg, st=st), seat, moves)
            assert _moves_of(moves, n) == [
                (m.dest, int(m.means), int(m.resolve), m.steps) for m in ref
            ]
            assert KM.can_rest(kp, st, seat) == RM.can_rest(g, seat)
            # the random strategy always picks from the list
            assert KS.direct_move(kernel_context(pk=kp, cfg=cfg, st=st, rs=rs, sid=rnd[0], prm=rnd[1]), seat, gift(st, seat))[1] == -1
            for (name, strat), (sid, prm) in zip(presets, vectors):
                view = g.view(seat)
                i = KS.move(kernel_context(pk=kp, cfg=cfg, st=st, rs=rs, sid=sid, prm=prm), seat, moves, n)
                assert i == strat.move(view, ref), name
                assert KS.rest(kernel_context(pk=kp, cfg=cfg, st=st, rs=rs, sid=sid, prm=prm), seat) == strat.rest(view), name
                # the move rule without the list picks the Python heuristic's move
                dest, means, res = KS.direct_move(kernel_context(pk=kp, cfg=cfg, st=st, rs=rs, sid=sid, prm=prm), seat, gift(st, seat))
                if means >= 0:
                    m = ref[strat.move(view, ref)]
                    assert (dest, means, res) == (m.dest, int(m.means), int(m.resolve)), name
                    checked["direct"] += 1
                was = st[layout.S_MOVE_RES]
                for s_ in (1, 0):  # also with and without Resolve to spend this turn
                    st[layout.S_MOVE_RES] = s_
                    n2 = KM.legal_moves(kernel_context(pk=kp, cfg=cfg, st=st), seat, moves)
                    i2 = KS.move(kernel_context(pk=kp, cfg=cfg, st=st, rs=rs, sid=sid, prm=prm), seat, moves, n2)
                    dest, means, res = KS.direct_move(kernel_context(pk=kp, cfg=cfg, st=st, rs=rs, sid=sid, prm=prm), seat, gift(st, seat))
                    if means >= 0:
                        assert (dest, means, res) == tuple(int(x) for x in moves[i2, :3]), name
                st[layout.S_MOVE_RES] = was
                n = KM.legal_moves(kernel_context(pk=kp, cfg=cfg, st=st), seat, moves)
            checked["moves"] += 1
        if g.turn % 3 == 0:
            # one movement phase of the next seat on a copy, with the game's own strategy
            h = copy.deepcopy(g, {id(g.content): g.content})
            seat = g.turn % players
            h.active = seat
            h.move_resolve_used = bool(g.turn % 2)
            st, rs = kernel_copy(h)
            st[layout.S_ACTIVE] = seat
            sid, prm = layout.strategy_vector(h.strategies[seat])
            got = KM.movement_phase(kernel_context(pk=kp, cfg=cfg, st=st, rs=rs, sid=sid, prm=prm), seat, moves)
            try:
                want = RM.movement_phase(h, seat)
            except GameOver:
                want = None
            if want is not None:
                assert got == want
            assert_same(h, st, rs, f"movement phase after turn {g.turn}")
            checked["phases"] += 1

    for game in range(n_cases(12, 1)):
        name = STRATEGY_NAMES[game % len(STRATEGY_NAMES)]
        play_game(
            c, s, [strategies.make(name) for _ in range(players)], 41, game, after_turn=after_turn
        )
    assert checked["moves"] > 0 and checked["phases"] > 0 and checked["direct"] > 0
