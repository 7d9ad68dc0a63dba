"""Layer 2: decks, tokens and the villain in the kernel equal the reference on scripted sequences.

A script (its own ``random.Random``, not the game's streams) picks operations:
villain phases, villain advancements, V-1, injuries, deck draws and discards,
the Watch's peek, Intel into the Pool. Both engines apply each one to the same
position; after every step the whole state and the stream counters must agree.
"""

import random

import pytest

from sim.kernel import decks as KD
from sim.kernel import encounters as KE
from sim.kernel import layout
from sim.kernel import villain as KV
from sim.rng import ENCOUNTER, FATE, VILLAIN
from sim.rules import decks as RD
from sim.rules import encounters as RE
from sim.rules import villain as RV
from sim.rules.errors import GameOver
from sim.rules.state import POOL, SUPPLY
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

OPS = (
    "phase1",
    "phase2",
    "advance",
    "v_minus_1",
    "injure",
    "fate",
    "encounter",
    "top_secret",
    "peek",
    "to_pool",
    "overflow",
)


def _step(op, g, pk, kp, st, rs, sid, prm, script):
    """Apply one scripted operation to both engines (the reference may raise GameOver)."""
    n = len(g.players)
    lay = pk.lay
    if op in ("advance", "injure", "peek"):
        seat = script.randrange(n)
        g.active = seat
        st[layout.S_ACTIVE] = seat
    if op == "phase1" or op == "phase2":
        cards = 1 if op == "phase1" else 2
        KV.villain_phase(kernel_context(pk=kp, st=st, rs=rs), cards)
        RV.villain_phase(g, cards)
    elif op == "advance":
        KV.villain_advancement(kernel_context(pk=kp, st=st, rs=rs, sid=sid, prm=prm))
        RV.villain_advancement(g)
    elif op == "v_minus_1":
        KV.v_minus_1(kernel_context(pk=kp, st=st, rs=rs))
        RV.v_minus_1(g)
    elif op == "injure":
        k = script.randrange(0, 4)
        KV.take_injuries(kernel_context(pk=kp, st=st, rs=rs, sid=sid, prm=prm), g.active, k)
        RV.take_injuries(g, g.active, k)
    elif op == "fate":
        card = KD.draw_card(st, lay[layout.L_FATE], lay[layout.L_FCAP], rs, FATE)
        assert card == RD.draw_card(g, g.fate, FATE)
        if card >= 0:
            KD.discard(st, lay[layout.L_FATE], lay[layout.L_FCAP], card)
            g.fate.discard.append(card)
    elif op == "encounter":
        d = script.randrange(6)
        card = KD.draw_card(st, pk.deck_base[d], lay[layout.L_ECAP], rs, ENCOUNTER + d)
        assert card == RD.draw_card(g, g.encounters[d], ENCOUNTER + d)
        if card >= 0 and script.random() < 0.8:
            KD.discard(st, pk.deck_base[d], lay[layout.L_ECAP], card)
            g.encounters[d].discard.append(card)
    elif op == "top_secret":
        seat = script.randrange(n)
        KE.draw_top_secret(kernel_context(pk=kp, st=st, rs=rs), seat)
        RE.draw_top_secret(g, seat)
    elif op == "peek":
        w = KD.peek_card(st, lay[layout.L_VILLAIN], lay[layout.L_VCAP], rs, VILLAIN)
        assert w == RD.peek_card(g, g.villain, VILLAIN)
        g.watched = w
        st[layout.S_WATCHED] = w
    elif op == "to_pool":
        where = SUPPLY if script.random() < 0.7 else script.randrange(pk.space_kind.shape[0])
        t = KD.draw_token(st, lay[layout.L_INTEL], pk.intel_token_type.shape[0], where, rs)
        assert t == RD.draw_token(g, g.intel_loc, where)
        if t >= 0:
            g.intel_loc[t] = POOL
            st[lay[layout.L_INTEL] + t] = POOL
    elif op == "overflow":
        KV.intel_overflow(kernel_context(pk=kp, st=st, rs=rs))
        RV.intel_overflow(g)


@pytest.mark.parametrize("players", [1, 2, 3, 4, 5, 6])
def test_villain_sequences_match_reference(players):
    _, pk = content_and_pack()
    kp = kernel_bundle()
    games = n_cases(40, 2)
    steps = n_cases(120, 25)
    ended = 0
    for game in range(games):
        name = STRATEGY_NAMES[game % len(STRATEGY_NAMES)]
        g, _s, _cfg, sid, prm = reference_game(players, name, 77, game)
        st, rs = kernel_copy(g)
        script = random.Random(game * 10 + players)
        weights = [3, 1, 2, 1, 2, 2, 3, 1, 1, 2, 1]
        for i in range(steps):
            op = script.choices(OPS, weights)[0]
            try:
                _step(op, g, pk, kp, st, rs, sid, prm, script)
            except GameOver:
                pass
            assert_same(g, st, rs, f"players {players}, game {game}, step {i} ({op})")
            if g.outcome is not None:
                ended += 1
                break
    if games >= 10:
        assert ended > 0  # the script reaches the end of a game through the villain


def test_space_in_region_table_is_the_rulebook_in_region():
    """The kernel's End of Turn region table equals ``sim.rules.villain.in_region`` for every space."""
    from types import SimpleNamespace

    from sim.content import constants as K

    c, pk = content_and_pack()
    view = SimpleNamespace(content=c)
    for region in range(len(K.REGIONS)):
        for space in range(c.n_spaces):
            assert bool(pk.space_in_region[region, space]) == RV.in_region(view, space, region), (region, space)


def test_token_draw_by_bit_set_is_the_jth_token_at_the_place_for_any_count():
    """draw_token picks through a bit set for up to 62 tokens and by scanning beyond: both give the
    j-th token (id order) lying at the place, j drawn from the TOKENS stream."""
    import numpy as np

    from sim.rng import TOKENS, new_state, next_below_nb

    script = random.Random(5)
    for n in (1, 4, 20, 62, 63, 90):
        for trial in range(40):
            st = np.array([script.choice((-3, -2, 0, 7)) for _ in range(n + 5)], dtype=np.int64)
            where = script.choice((-3, -2, 7))
            rs = new_state(9, trial)
            at = [t for t in range(n) if st[2 + t] == where]
            want = -1
            if at:
                want = at[next_below_nb(new_state(9, trial), TOKENS, len(at))]
            assert KD.draw_token(st, 2, n, where, rs) == want, (n, trial)


def test_nth_bit_and_popcount():
    """The kernel's j-th set bit (BMI2 pdep where the CPU has a fast one), the search that stands in
    elsewhere, and its plain twin: the same bit."""
    script = random.Random(3)
    for _ in range(500):
        m = script.getrandbits(script.choice((1, 8, 30, 62)))
        assert KD.popcount(m) == KD.popcount_plain(m) == bin(m).count("1")
        bits = [i for i in range(62) if m >> i & 1]
        for j, pos in enumerate(bits):
            assert KD.nth_bit(m, j) == KD.nth_bit_search(m, j) == KD.nth_bit_plain(m, j) == pos
