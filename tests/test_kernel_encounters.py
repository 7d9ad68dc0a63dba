"""Henchman tests (Location tokens and encounter cards, FAQ 6 and 8) equal the reference.

Each case starts from a reference position after set-up, shaken by a script
(henchman levels, defeated henchmen, Location tokens on the board, Intel in the
Pool, the player's space), copied into a kernel state; both engines then play the
same rule, and the whole state and the stream counters must agree.
"""

import random

import pytest

from sim.content import constants as K
from sim.kernel import encounters as KE
from sim.rules import encounters as RE
from sim.rules.errors import GameOver
from sim.rules.invariants import check_invariants
from sim.rules.state import DEFEATED, POOL, REMOVED, SUPPLY
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
    """Levels 1-3 or defeated, Location tokens on random cities, a few Intel in the Pool."""
    c = g.content
    seat = script.randrange(len(g.players))
    g.active = seat
    n_cities = int(c.n_cities)
    for h in range(len(g.henchman_level)):
        r = script.random()
        if r < 0.15:
            g.henchman_level[h] = DEFEATED
            g.green_loc[h] = REMOVED
        else:
            g.henchman_level[h] = script.randrange(1, 4)
            g.green_loc[h] = script.randrange(n_cities) if script.random() < 0.6 else SUPPLY
    for t in range(len(g.intel_loc)):
        if g.intel_loc[t] == SUPPLY and script.random() < 0.2:
            g.intel_loc[t] = POOL
    g.location_track = script.randrange(g.location_target)
    g.players[seat].space = script.randrange(n_cities)
    return seat


def _cases(players, n, fn):
    kp = kernel_bundle()
    for case in range(n):
        name = STRATEGY_NAMES[case % len(STRATEGY_NAMES)]
        g, _s, cfg, sid, prm = reference_game(players, name, 41, case)
        script = random.Random(case * 11 + players)
        seat = _shake(g, script)
        check_invariants(g)
        st, rs = kernel_copy(g)
        assert_same(g, st, rs, f"copy, case {case}")
        ctx = kernel_context(pk=kp, cfg=cfg, st=st, rs=rs, sid=sid, prm=prm)
        fn(g, ctx, st, rs, seat, script, f"players {players}, {name}, case {case}")


def _undefeated(g, script):
    alive = [h for h, lv in enumerate(g.henchman_level) if lv != DEFEATED]
    return script.choice(alive) if alive else -1


@pytest.mark.parametrize("players", [1, 4, 6])
def test_reshuffle_locations_matches_reference(players):
    def one(g, ctx, st, rs, seat, script, where):
        h = _undefeated(g, script)
        if h < 0:
            return
        g.henchman_level[h] = DEFEATED
        st[content_and_pack()[1].lay[KE.L_HLEVEL] + h] = K.DEFEATED
        RE.reshuffle_locations(g, h)
        KE.reshuffle_locations(ctx, h)
        assert g.green_loc[h] == REMOVED, where
        assert_same(g, st, rs, where)
        check_invariants(g)

    _cases(players, n_cases(120, 3), one)


@pytest.mark.parametrize("players", [1, 4, 6])
def test_henchman_encounter_matches_reference(players):
    def one(g, ctx, st, rs, seat, script, where):
        on_board = [h for h, loc in enumerate(g.green_loc) if loc >= 0]
        if not on_board:
            return
        h = script.choice(on_board)
        g.players[seat].space = g.green_loc[h]
        _, pk = content_and_pack()
        st[KE.player_base(pk, seat) + KE.P_SPACE] = g.green_loc[h]
        KE.henchman_encounter(ctx, seat, h)
        try:
            RE.henchman_encounter(g, seat, h)
        except GameOver:
            pass
        assert_same(g, st, rs, where)

    _cases(players, n_cases(150, 3), one)


def _henchman_card(g, script, deck):
    c = g.content
    cards = [x for x in range(c.n_encounters) if c.encounter_deck[x] == deck
             and (c.encounter_henchman[x] >= 0).any()]
    return script.choice(cards) if cards else -1


@pytest.mark.parametrize("players", [1, 4, 6])
def test_encounter_card_with_a_henchman_test_matches_reference(players):
    def one(g, ctx, st, rs, seat, script, where):
        c, pk = content_and_pack()
        deck = int(c.space_deck[g.players[seat].space])
        card = _henchman_card(g, script, deck)
        assert card >= 0, "the default pack has henchman tests in every deck"
        d = g.encounters[deck]
        if card in d.pile:
            d.pile.remove(card)
        else:
            d.discard.remove(card)
        d.top = card  # the next card drawn
        st[:], rs[:] = kernel_copy(g)
        side = K.NO_INTEL if c.encounter_henchman[card, K.NO_INTEL] >= 0 else K.WITH_INTEL
        KE.encounter_card(ctx, seat, side)
        try:
            RE.encounter_card(g, seat, side)
        except GameOver:
            pass
        assert_same(g, st, rs, where)

    _cases(players, n_cases(200, 3), one)


def test_some_cases_reach_each_branch():
    """The samples above defeat henchmen inside encounter cards and win by all four."""
    seen = {"level_up": 0, "defeat": 0, "win": 0, "fallback": 0}
    c, _ = content_and_pack()
    for case in range(300):
        g, _s, _cfg, _sid, _prm = reference_game(4, "heuristic", 41, case)
        script = random.Random(case)
        seat = _shake(g, script)
        deck = int(c.space_deck[g.players[seat].space])
        card = _henchman_card(g, script, deck)
        h = int(c.encounter_henchman[card, K.NO_INTEL])
        before = g.henchman_level[h]
        if script.random() < 0.5:  # three defeated, the fourth at level 3: one pass wins
            for o in range(4):
                g.henchman_level[o] = 3 if o == h else DEFEATED
                g.green_loc[o] = REMOVED if o != h else g.green_loc[o]
            before = 3
        d = g.encounters[deck]
        (d.pile if card in d.pile else d.discard).remove(card)
        d.top = card
        try:
            RE.encounter_card(g, seat, K.NO_INTEL)
        except GameOver:
            pass
        if before == DEFEATED:
            seen["fallback"] += 1
        elif g.henchman_level[h] == DEFEATED:
            seen["defeat"] += 1
            seen["win"] += g.outcome is not None and g.outcome.label == "win_henchmen"
        elif g.henchman_level[h] == before + 1:
            seen["level_up"] += 1
    assert all(v > 0 for v in seen.values()), seen


def test_encounter_henchman_tests_with_his_card_consequences_match_reference():
    """The reading consequences_in_encounters = true (and other consequences) in both engines."""
    import strategies
    from sim.content import build, load_raw
    from sim.kernel import layout
    from sim.kernel.packref import kernel_pack
    from sim.rules import Settings
    from sim.rules.setup import setup_game

    raw = load_raw()
    raw["henchmen.toml"]["readings"]["consequences_in_encounters"] = True
    for hm in raw["henchmen.toml"]["henchman"]:
        hm["level"][0]["reward"] = {"effect": "top_secret"}
        hm["level"][1]["penalty"] = {"effect": "injuries", "amount": 2}
        hm["level"][2]["penalty"] = {"effect": "lose_intel", "amount": 2}
    c = build(raw)
    kp = kernel_pack(layout.pack(c))
    for case in range(n_cases(200, 3)):
        name = STRATEGY_NAMES[case % len(STRATEGY_NAMES)]
        s = Settings.build(c, 4, None, None)
        g = setup_game(c, s, [strategies.make(name) for _ in range(4)], 43, case)
        sid, prm = layout.strategy_vector(strategies.make(name))
        script = random.Random(case)
        seat = _shake(g, script)
        deck = int(c.space_deck[g.players[seat].space])
        card = _henchman_card(g, script, deck)
        d = g.encounters[deck]
        (d.pile if card in d.pile else d.discard).remove(card)
        d.top = card
        st, rs = kernel_copy(g)
        ctx = kernel_context(pk=kp, cfg=layout.settings_vector(c, s), st=st, rs=rs, sid=sid, prm=prm)
        KE.encounter_card(ctx, seat, K.NO_INTEL)
        try:
            RE.encounter_card(g, seat, K.NO_INTEL)
        except GameOver:
            pass
        assert_same(g, st, rs, f"{name}, case {case}")


@pytest.mark.parametrize("reading", ["pool", "board"])
def test_flip_up_matches_reference(reading):
    import strategies
    from sim.content import build, load_raw
    from sim.kernel import layout
    from sim.kernel.packref import kernel_pack
    from sim.rules import Settings
    from sim.rules.setup import setup_game

    raw = load_raw()
    raw["encounters.toml"]["readings"]["flip_anywhere"] = reading
    c = build(raw)
    kp = kernel_pack(layout.pack(c))
    for case in range(n_cases(100, 3)):
        s = Settings.build(c, 4, None, None)
        g = setup_game(c, s, [strategies.make("heuristic") for _ in range(4)], 47, case)
        script = random.Random(case)
        _shake(g, script)
        for t in range(len(g.intel_loc)):
            if g.intel_loc[t] == SUPPLY and script.random() < 0.15:
                g.intel_loc[t] = script.randrange(int(c.n_cities))
            g.intel_face_up[t] = script.random() < 0.3
        st, rs = kernel_copy(g)
        ctx = kernel_context(pk=kp, st=st, rs=rs)
        for _ in range(3):
            effect = script.choice((K.E_FLIP_POOL, K.E_FLIP_ANYWHERE))
            amount = script.choice((1, 2))
            KE.apply_effect(ctx, 0, effect, amount, -1)
            RE.apply_effect(g, 0, effect, amount, -1)
            assert_same(g, st, rs, f"{reading}, case {case}")
