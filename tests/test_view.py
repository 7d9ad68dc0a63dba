"""The player's view: one vocabulary for both engines, and nothing hidden behind it.

Every attribute of the kernel's view (``sim.kernel.view.VIEW_API``) exists on the
readable engine's ``PlayerView`` with the same value in the same position, and no
attribute of either changes when only hidden facts change: which face-down Intel
token is which, which henchman a face-down Location token belongs to, the order
of any deck.
"""

from __future__ import annotations

import copy
import random

import numba
import pytest

import sim.content.constants as K
from sim.kernel import layout
from sim.kernel.view import VIEW_API, KernelView, make_view
from sim.rules.game import play_turn
from tests.kernel_support import NO_JIT, content_and_pack, kernel_context, reference_game

N_SPACES = None


def _positions():
    """Reference games at set-up and after some turns, at 1, 4 and 6 players."""
    out = []
    for players, turns in ((1, 0), (1, 7), (4, 0), (4, 9), (4, 23), (6, 13)):
        g, s, cfg, sid, prm = reference_game(players, "heuristic", seed=5, game=players * 10 + turns)
        for _ in range(turns):
            if g.outcome is not None:
                break
            play_turn(g, g.active)
            g.active = (g.active + 1) % players
        out.append((g, cfg, sid, prm))
    return out


def _domains(g):
    """The arguments each VIEW_API attribute is asked with."""
    c = g.content
    seats = range(len(g.players))
    places = [*range(c.n_spaces), K.SUPPLY, K.POOL]
    return {
        "h": [(h,) for h in range(len(g.henchman_level))],
        "who": [(w,) for w in seats],
        "who,skill": [(w, k) for w in seats for k in range(len(K.BASIC_SKILLS))],
        "who,i": [(w, i) for w in seats for i in range(2)],
        "kind": [(k,) for k in range(len(K.INTEL_TYPES))],
        "where,kind": [(w, k) for w in places for k in range(len(K.INTEL_TYPES))],
        "where": [(w,) for w in places],
        "space": [(s,) for s in range(c.n_spaces)],
        "card": [(x,) for x in range(len(g.status_holder))],
        "skill": [(k,) for k in range(len(K.BASIC_SKILLS))],
    }


SKIP = {"random_below", "content"}  # a draw from the strategy stream; the static pack (no game state)
ADVANCED = {"has_advanced"}


def _args(name, args, g, domains):
    if name in ADVANCED:
        return [(w, a) for w in range(len(g.players)) for a in range(len(K.ADVANCED_SKILLS))]
    if name == "top_secret_effect":
        return [(w, i) for w in range(len(g.players)) for i in range(len(g.players[w].top_secret))]
    return domains[",".join(args)] if args else [()]


def _read(view, name, args):
    a = getattr(view, name)
    return a(*args) if args else a


def view_values(view, g) -> dict:
    """Every documented attribute of ``view`` at every argument."""
    domains = _domains(g)
    out = {}
    for name, (_, args) in VIEW_API.items():
        if name in SKIP:
            continue
        for a in _args(name, args, g, domains):
            v = _read(view, name, a)
            out[(name, a)] = None if v is None else int(v)
    return out


def _kernel_view(g, cfg, sid, prm, seat):
    _, pk = content_and_pack()
    st = layout.encode(pk, g)
    ctx = kernel_context(cfg=cfg, st=st, rs=g.rng.state(), sid=sid, prm=prm)
    return KernelView(ctx, seat)


@pytest.fixture(scope="module")
def positions():
    return _positions()


def test_both_engines_name_the_same_facts(positions):
    names = set(VIEW_API) - SKIP
    g = positions[0][0]
    pv = g.view(0)
    missing = [n for n in sorted(names) if not hasattr(pv, n)]
    assert not missing, f"PlayerView lacks {missing}"
    for g, cfg, sid, prm in positions:
        for seat in range(len(g.players)):
            want = view_values(g.view(seat), g)
            got = view_values(_kernel_view(g, cfg, sid, prm, seat), g)
            assert got == want


def _hide_differently(g, rnd: random.Random):
    """A copy of ``g`` that differs only in what no player may see."""
    h = copy.deepcopy(g)
    types = h.content.intel_token_type
    down = [t for t, (loc, up) in enumerate(zip(h.intel_loc, h.intel_face_up)) if not up and loc != K.REMOVED]
    swapped = 0
    for _ in range(200):  # swap places of face-down tokens of different types
        a, b = rnd.sample(down, 2)
        if types[a] != types[b] and h.intel_loc[a] != h.intel_loc[b]:
            h.intel_loc[a], h.intel_loc[b] = h.intel_loc[b], h.intel_loc[a]
            swapped += 1
    greens = [t for t, loc in enumerate(h.green_loc) if loc >= 0 or loc == K.SUPPLY]
    locs = [h.green_loc[t] for t in greens]
    rnd.shuffle(locs)  # which henchman each face-down Location token is
    for t, loc in zip(greens, locs):
        h.green_loc[t] = loc
    for deck in (h.villain, h.fate, h.top_secret, *h.encounters):
        if deck.top < 0:
            rnd.shuffle(deck.pile)
    return h, swapped


def test_the_view_hides_token_identity_and_deck_order(positions):
    rnd = random.Random(3)
    total = greens = 0
    for g, cfg, sid, prm in positions:
        h, swapped = _hide_differently(g, rnd)
        total += swapped
        greens += h.green_loc != g.green_loc
        assert h.villain.pile != g.villain.pile  # the hidden facts changed...
        for seat in range(len(g.players)):
            # ...and neither engine's view shows it
            assert view_values(h.view(seat), h) == view_values(g.view(seat), g)
            assert view_values(_kernel_view(h, cfg, sid, prm, seat), h) == view_values(
                _kernel_view(g, cfg, sid, prm, seat), g)
            # the readable view's other public methods as well
            for name in ("face_up_intel", "yellow_spaces", "green_spaces", "pool_face_up", "mission_cities",
                         "top_secret_effects"):
                assert getattr(h.view(seat), name)() == getattr(g.view(seat), name)()
    assert greens > 0  # Location tokens on the map changed owners
    assert total > 0  # face-down Intel tokens did trade places (between spaces, the supply and the Pool)


def test_a_public_change_shows(positions):
    """The control: the comparison above can fail (a public fact does change the view)."""
    g, cfg, sid, prm = positions[3]
    h = copy.deepcopy(g)
    h.lobo_start += 1
    h.players[0].resolve += 1
    a, b = view_values(g.view(1), g), view_values(h.view(1), h)
    assert {k for k in a if a[k] != b[k]} == {("lobo", ()), ("resolve", (0,))}
    ka = view_values(_kernel_view(g, cfg, sid, prm, 1), g)
    kb = view_values(_kernel_view(h, cfg, sid, prm, 1), h)
    assert {k for k in ka if ka[k] != kb[k]} == {("lobo", ()), ("resolve", (0,))}


@pytest.mark.skipif(NO_JIT, reason="compiled code")
def test_compiled_view_has_no_other_attribute(positions):
    """In compiled code the view has only its documented attributes: the state is out of reach."""
    g, cfg, sid, prm = positions[1]
    _, pk = content_and_pack()
    ctx = kernel_context(cfg=cfg, st=layout.encode(pk, g), rs=g.rng.state(), sid=sid, prm=prm)

    @numba.njit
    def peek(ctx):
        return make_view(ctx, 0).st[0]

    with pytest.raises(numba.core.errors.TypingError, match="Unknown attribute 'st'"):
        peek(ctx)

    @numba.njit
    def fair(ctx):
        v = make_view(ctx, 0)
        w = v.watched_advance
        return v.lobo, v.resolve(v.seat), v.pool_size, -100 if w is None else w

    kv = KernelView(ctx, 0)
    want = kv.watched_advance
    assert fair(ctx) == (kv.lobo, kv.resolve(0), kv.pool_size, -100 if want is None else want)


# --- an index out of its range: refused by both engines, in the same words --------------------------
def _legal(g, kind, who):
    """The legal values of an argument of ``kind`` in position ``g`` (``who``: the call's first argument)."""
    c = g.content
    if kind == "top secret card":
        return 0, len(g.players[who].top_secret) - 1
    return {
        "seat": (0, len(g.players) - 1),
        "henchman": (0, len(g.henchman_level) - 1),
        "basic skill": (0, len(K.BASIC_SKILLS) - 1),
        "advanced skill": (0, len(K.ADVANCED_SKILLS) - 1),
        "mission card": (0, None),  # past the last: -1, as documented; no upper bound
        "intel type": (0, len(K.INTEL_TYPES) - 1),
        "place": (K.POOL, c.n_spaces - 1),
        "space": (0, c.n_spaces - 1),
        "status card": (0, len(g.status_holder) - 1),
        "outcomes": (1, 1 << 31),
    }[kind]


def _values(g, kind, who):
    """``(value, refused)``: an argument of ``kind`` at both ends of its range (every seat), and one past each."""
    lo, hi = _legal(g, kind, who)
    if kind == "seat":
        return [(w, False) for w in range(lo, hi + 1)] + [(lo - 1, True), (hi + 1, True)]
    if hi is None:  # no upper bound
        return [(lo, False), (lo + 5, False), (lo - 1, True)]
    if hi < lo:  # none legal: an empty hand
        return [(lo, True), (lo - 1, True)]
    return [(lo, False), (hi, False), (lo - 1, True), (hi + 1, True)]


def _calls(g):
    """``(method, args, refused)`` for every view method with arguments: each argument at both ends of its
    range and one past each end (the first argument legal where the second is tried)."""
    from sim.rules.state import VIEW_INDEXES

    out = []
    for name, (_, params) in VIEW_API.items():
        kinds = VIEW_INDEXES.get(name, ()) if params else ()
        assert len(kinds) == len(params), name
        if not params:
            continue
        for a0, bad0 in _values(g, kinds[0], None):
            if len(kinds) == 1 or bad0:
                out.append((name, (a0, 0)[: len(kinds)], bad0))
                continue
            out += [(name, (a0, a1), bad1) for a1, bad1 in _values(g, kinds[1], a0)]
    return out


def _readable_answer(g, name, args):
    """The readable engine's answer to ``view.<name>(*args)`` asked by seat 1's ``rest``, or its refusal's text."""
    from sim.rules.errors import StrategyError

    try:
        v = getattr(copy.deepcopy(g).view(1, "rest"), name)(*args)
    except StrategyError as e:
        return str(e)
    return None if v is None else int(v)


def _kernel_answer(ask, name, args):
    """The kernel view's answer (``ask(name, args)``), or its refusal's text with the strategy named as
    KernelStrategy.refusal names it."""
    from sim.kernel.custom import VIEW_REFUSED

    try:
        v = ask(name, args)
    except ValueError as e:
        assert str(e).startswith(VIEW_REFUSED), e
        return "strategy 'heuristic': " + str(e)[len(VIEW_REFUSED):]
    return None if v is None else int(v)


def _check_calls(g, ask):
    calls = _calls(g)
    refused = 0
    for name, args, out_of_range in calls:
        want, got = _readable_answer(g, name, args), _kernel_answer(ask, name, args)
        assert got == want, (name, args)
        assert isinstance(want, str) == out_of_range, (name, args, want)
        refused += out_of_range
    assert refused > 40
    return calls


def test_an_index_out_of_range_is_refused_in_the_same_words(positions):
    """``view.resolve(view.seat - 1)`` at seat 0 read the last seat's Resolve (Python wraps a negative index),
    ``view.resolve(view.n_players)`` whatever lies in the kernel's state past the players: both views refuse
    each index outside its range, naming the strategy, the decision, the call and the legal range."""
    from sim.kernel.custom import DECISIONS
    from sim.rules.errors import StrategyError

    g, cfg, sid, prm = positions[3]
    code = DECISIONS.index("rest")

    def ask(name, args):
        ctx = _kernel_view(g, cfg, sid, prm, 1)._ctx
        return getattr(KernelView(ctx, 1, code), name)(*args)

    _check_calls(g, ask)
    with pytest.raises(StrategyError, match=r"^strategy 'heuristic': decision rest asked view\.resolve\(-1\): "
                                            r"who must be 0 to 3 \(a seat\)$"):
        g.view(0, "rest").resolve(-1)
    with pytest.raises(StrategyError, match=r"^strategy 'heuristic': decision token asked view\.henchman\(4\): "
                                            r"h must be 0 to 3 \(a henchman\)$"):
        g.view(2, "token").henchman(g.view(2).n_henchmen)
    with pytest.raises(StrategyError, match=r"^strategy 'heuristic': decision move asked view\.random_below\(0\): "
                                            r"n must be 1 to 2147483648 \(the number of outcomes\)$"):
        g.view(0, "move").random_below(0)
    with pytest.raises(StrategyError, match=r"^view\.skill\(0, -1\): skill must be 0 to 4 \(a basic skill\)$"):
        PlayerView_without_strategy(g).skill(0, -1)
    # the readable engine's own methods that take a seat
    for name in ("mission_cities", "status_cards", "status_effects"):
        assert getattr(g.view(1), name)(None) == getattr(g.view(1), name)(1)
        with pytest.raises(StrategyError, match=rf"decision rest asked view\.{name}\(4\): seat must be 0 to 3"):
            getattr(g.view(1, "rest"), name)(4)
    assert g.view(1).pool_face_up(None) == [g.view(1).pool_face_up(k) for k in range(len(K.INTEL_TYPES))]
    with pytest.raises(StrategyError, match=r"view\.pool_face_up\(-1\): kind must be 0 to 3 \(an Intel type\)$"):
        g.view(1).pool_face_up(-1)


def test_an_index_that_is_no_integer_is_refused(positions):
    """``view.yellow_at(1.5)`` counted the tokens lying at 1.5 (none) and ``view.resolve(1.5)`` raised a bare
    TypeError from a list: a non-integer index is refused like one out of range. numpy integers and True /
    False (read as 1 / 0, as everywhere an index is taken) still answer."""
    import numpy as np

    from sim.rules.errors import StrategyError

    g = positions[3][0]
    v = g.view(1, "rest")
    refused = {
        "resolve": (1.5,), "henchman": (0.5,), "pool_face_up": (1.0,), "status_holder": ("a",),
        "status_modifier": (None,), "random_below": (2.5,), "yellow_at": (1.5,), "green_at": (2.0,),
        "face_up_count": (1.5, 0), "skill": (0, 1.5), "has_advanced": (0.0, 1), "airport_open": (3.0,),
        "mission_city": (1, 0.5), "top_secret_effect": (1.0, 0),
    }
    for name, args in refused.items():
        with pytest.raises(StrategyError, match=rf"^strategy 'heuristic': decision rest asked view\.{name}\("):
            getattr(v, name)(*args)
    assert v.resolve(np.int64(2)) == v.resolve(2) and v.resolve(True) == v.resolve(1)
    assert v.yellow_at(np.int32(3)) == v.yellow_at(3) and v.skill(np.int8(0), 1) == v.skill(0, 1)


def PlayerView_without_strategy(g):  # noqa: N802 - reads as the class it makes
    """A view of a game without strategies (a test's position): the refusal names no strategy."""
    h = copy.deepcopy(g)
    h.strategies = []
    return h.view(0)


@pytest.mark.skipif(NO_JIT, reason="compiled code")
def test_compiled_view_refuses_an_index_out_of_range_in_the_same_words(positions):
    """The compiled view checks each index as the plain one does (the kernel reads without bounds checks)."""
    import numpy as np

    from sim.kernel.custom import DECISIONS
    from sim.kernel.view import decision_view

    g, cfg, sid, prm = positions[3]
    methods = [(name, len(params)) for name, (_, params) in VIEW_API.items() if params]
    src = "def ask(ctx, seat, code, which, a0, a1):\n    v = decision_view(ctx, seat, code)\n"
    for k, (name, n) in enumerate(methods):
        src += f"    if which == {k}:\n        return np.int64(v.{name}({'a0' if n == 1 else 'a0, a1'}))\n"
    src += "    return np.int64(-1)\n"
    env = {"decision_view": decision_view, "np": np}
    exec(src, env)  # noqa: S102 - one compiled function asking every method
    ask_nb = numba.njit(env["ask"])
    which = {name: k for k, (name, _) in enumerate(methods)}
    code = DECISIONS.index("rest")

    def ask(name, args):
        ctx = _kernel_view(g, cfg, sid, prm, 1)._ctx  # a fresh state each call (random_below draws)
        return ask_nb(ctx, 1, code, which[name], args[0], args[1] if len(args) > 1 else 0)

    _check_calls(g, ask)


def test_the_readable_engine_names_the_decision_it_asks():
    """Each call of a strategy's decision hands it a view naming that decision (which a refusal names)."""
    from sim.content import load
    from sim.kernel.custom import DECISIONS
    from sim.rules import Settings, play_game
    from strategies import HeuristicStrategy

    asked: list = []

    def asking(name):
        def decide(self, view, *args):
            asked.append((name, view._decision))
            return getattr(HeuristicStrategy, name)(self, view, *args)

        return decide

    labelled = type("Labelled", (HeuristicStrategy,), {name: asking(name) for name in DECISIONS})
    c = load()
    for players in (1, 2, 4):
        for game in range(12):
            play_game(c, Settings.build(c, players), [labelled(name="labelled")] * players, 7, game)
    assert all(name == decision for name, decision in asked), {p for p in asked if p[0] != p[1]}
    assert len({name for name, _ in asked}) >= 21, sorted(set(DECISIONS) - {name for name, _ in asked})


VIEW_IN_NRT_CODE = r"""
import numba
from sim.kernel.view import make_view
from tests.test_kernel_custom import _position

ctx = _position()


@numba.njit  # numba's runtime on, as in a user's own @njit code
def players(ctx):
    return make_view(ctx, 1).n_players


print(sum(players(ctx) for _ in range(50)))
"""


@pytest.mark.skipif(NO_JIT, reason="compiled code")
def test_a_view_made_in_code_with_numba_s_runtime_keeps_its_references_counted():
    """A view made in code compiled with numba's runtime released the context's arrays it only borrowed:
    the process freed them twice (glibc: "corrupted double-linked list", or an abort at exit)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root), "MALLOC_CHECK_": "3"}
    done = subprocess.run([sys.executable, "-c", VIEW_IN_NRT_CODE], cwd=root, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0 and "corrupted" not in done.stderr, done.stderr[-2000:]
    assert int(done.stdout.split()[-1]) == 50 * 4
