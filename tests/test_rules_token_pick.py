"""A blind pick from a stack of face-down tokens (Field Manual, Additional Rules: Space with Multiple Tokens).

Tokens lie face down, so when a space holds several yellow Intel tokens (or several
green Location tokens) the token the player takes is a uniform draw among them
(TOKENS stream), never the lowest token id; a lone token is taken without a draw.
Both engines pick the same token and leave the streams in the same place.
"""

import math
import random

import pytest

from sim.kernel import decks as KD
from sim.kernel import encounters as KE
from sim.kernel import layout
from sim.rng import TOKENS, Streams
from sim.rules import decks as RD
from sim.rules import encounters as RE
from sim.rules.choices import TokenChoice
from sim.rules.errors import GameOver
from sim.rules.state import POOL
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
from tests.rules_helpers import clear_table, new_game, put, put_green, put_intel, sp

SPACE = "Paris"


def _stacked_game(seed, game):
    g = clear_table(new_game(4, seed=seed, game=game))
    put(g, 0, SPACE)
    yellow = [put_intel(g, SPACE, kind) for kind in ("weapon", "tech", "double_agent", "atomic")]
    green = [put_green(g, h, SPACE) for h in range(len(g.green_loc))]
    return g, yellow, green


def _counts_are_uniform(counts, n):
    """Each of k outcomes near n/k: within 4 standard errors of a binomial count."""
    k = len(counts)
    p = 1 / k
    se = math.sqrt(n * p * (1 - p))
    return all(abs(c - n * p) <= 4 * se for c in counts.values())


def test_pool_takes_any_of_the_stacked_intel_tokens():
    n = 400
    counts = {}
    for game in range(n):
        g, yellow, _ = _stacked_game(5, game)
        s = g.strategies[0]
        s.push("token", lambda view, choices: choices.index(TokenChoice.POOL))
        s.set_default("draw_die", False)
        try:
            RE.encounter_phase(g, 0)
        except GameOver:
            pass
        taken = [t for t in yellow if g.intel_loc[t] == POOL]
        assert len(taken) == 1
        counts[taken[0]] = counts.get(taken[0], 0) + 1
    assert set(counts) == set(yellow), f"never picked: {set(yellow) - set(counts)}"
    assert _counts_are_uniform(counts, n), counts


def test_henchman_met_is_any_of_the_stacked_location_tokens(monkeypatch):
    n = 400
    counts = {}
    met = []
    monkeypatch.setattr(RE, "henchman_encounter", lambda g_, seat, tok: met.append(tok))
    for game in range(n):
        g, _, green = _stacked_game(6, game)
        s = g.strategies[0]
        s.push("token", lambda view, choices: choices.index(TokenChoice.HENCHMAN))
        RE.encounter_phase(g, 0)
        assert len(met) == game + 1
        counts[met[-1]] = counts.get(met[-1], 0) + 1
    assert set(counts) == set(green), f"never met: {set(green) - set(counts)}"
    assert _counts_are_uniform(counts, n), counts


def test_lone_token_is_taken_without_a_draw():
    g = clear_table(new_game(4))
    t = put_intel(g, SPACE, "atomic")
    before = g.rng.counts[TOKENS]
    assert RD.pick_on_space(g, g.intel_loc, sp(SPACE)) == t
    assert g.rng.counts[TOKENS] == before
    assert RD.pick_on_space(g, g.green_loc, sp(SPACE)) == -1


def test_pick_is_uniform_from_the_tokens_stream():
    g = clear_table(new_game(4))
    tokens = [put_intel(g, SPACE, k) for k in ("weapon", "weapon", "atomic")]
    g.rng = Streams(11, 0)
    picks = [RD.pick_on_space(g, g.intel_loc, sp(SPACE)) for _ in range(600)]
    assert g.rng.counts[TOKENS] == 600
    counts = {t: picks.count(t) for t in tokens}
    assert _counts_are_uniform(counts, 600), counts


@pytest.mark.parametrize("players", [1, 4, 6])
def test_kernel_pick_on_space_matches_reference(players):
    _, pk = content_and_pack()
    kp = kernel_bundle()
    for case in range(n_cases(60, 3)):
        name = STRATEGY_NAMES[case % len(STRATEGY_NAMES)]
        g, _s, cfg, sid, prm = reference_game(players, name, 41, case)
        script = random.Random(case)
        space = g.players[0].space
        for t in script.sample(range(len(g.intel_loc)), script.randrange(0, 5)):
            g.intel_loc[t] = space
        for t in script.sample(range(len(g.green_loc)), script.randrange(0, 4)):
            g.green_loc[t] = space
        st, rs = kernel_copy(g)
        for _ in range(5):
            want = RD.pick_on_space(g, g.intel_loc, space)
            got = KD.pick_on_space(st, pk.lay[layout.L_INTEL], len(g.intel_loc), space, rs)
            assert got == want
            want = RD.pick_on_space(g, g.green_loc, space)
            got = KD.pick_on_space(st, pk.lay[layout.L_GREEN], len(g.green_loc), space, rs)
            assert got == want
        assert_same(g, st, rs, f"{players} players, case {case}")
        # and a whole encounter phase on the stacked space, strategy decisions included
        g.active = 0
        st[layout.S_ACTIVE] = 0
        KE.encounter_phase(kernel_context(pk=kp, cfg=cfg, st=st, rs=rs, sid=sid, prm=prm), 0)
        try:
            RE.encounter_phase(g, 0)
        except GameOver:
            pass
        assert_same(g, st, rs, f"{players} players, case {case}, encounter phase")
