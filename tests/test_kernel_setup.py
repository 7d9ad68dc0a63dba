"""Layer 1: the kernel's set-up equals ``sim.rules.setup.setup_game`` field for field."""

import pytest

import strategies
from sim.kernel import layout
from sim.kernel.setup import setup_game as k_setup_game
from tests.kernel_support import (
    STRATEGY_NAMES,
    VARIANTS,
    assert_same,
    content_and_pack,
    kernel_bundle,
    kernel_context,
    n_cases,
    new_rng_state,
    reference_game,
)


@pytest.mark.parametrize("players", [1, 2, 3, 4, 5, 6])
def test_setup_matches_reference(players):
    _, pk = content_and_pack()
    kp = kernel_bundle()
    st = layout.new_state(pk)
    rs = new_rng_state()
    n = n_cases(200, 4)
    for game in range(n):
        name = STRATEGY_NAMES[game % len(STRATEGY_NAMES)]
        variant = VARIANTS[(game // len(STRATEGY_NAMES)) % len(VARIANTS)]
        seed = 1000 + game % 7
        g, _s, cfg, sid, prm = reference_game(players, name, seed, game, variant)
        k_setup_game(kernel_context(pk=kp, cfg=cfg, st=st, rs=rs, sid=sid, prm=prm), seed, game)  # st reused: stale values must not leak
        assert_same(g, st, rs, f"players {players}, {name}, {variant}, seed {seed}, game {game}")


def test_custom_lineup_and_encode_roundtrip():
    c, pk = content_and_pack()
    kp = kernel_bundle()
    from sim.rules import Settings
    from sim.rules.setup import setup_game

    s = Settings.build(c, 3, [4, 4, 1], "dirty-location")
    cfg = layout.settings_vector(c, s)
    sid, prm = layout.strategy_vector(strategies.make("bold"))
    st, rs = layout.new_state(pk), new_rng_state()
    for game in range(n_cases(20, 2)):
        g = setup_game(c, s, [strategies.make("bold") for _ in range(3)], 9, game)
        k_setup_game(kernel_context(pk=kp, cfg=cfg, st=st, rs=rs, sid=sid, prm=prm), 9, game)
        assert_same(g, st, rs, f"game {game}")
        assert layout.snapshot_state(pk, layout.encode(pk, g), 3) == layout.snapshot(g)


def test_strategy_vector_rejects_unknown_strategies():
    with pytest.raises(ValueError):
        layout.strategy_vector(object())


def test_packref_fields_mirror_the_pack():
    from sim.kernel.packref import FIELDS

    _, pk = content_and_pack()
    assert tuple(name for name, _t in FIELDS) == pk._fields
    for name, typ in FIELDS:
        a = getattr(pk, name)
        assert (a.ndim, str(a.dtype), a.flags.c_contiguous) == (typ.ndim, str(typ.dtype), True), (
            name
        )
