"""Your own @njit decisions in the kernel play the same games as their readable twin."""

import re
import textwrap

import numpy as np
import pytest
from numba import njit

import sim
from sim.kernel.custom import KernelStrategy
from sim.rules.errors import StrategyError
from strategies import HeuristicStrategy
from tests.kernel_support import NO_JIT, OPTIONLESS

# Compiling a pairing needs numba; under NUMBA_DISABLE_JIT=1 there is nothing to compile.
pytestmark = pytest.mark.skipif(NO_JIT, reason="custom decisions are compiled code")


@njit
def shy_token(view, choices, n):
    return 0  # choices[0] is always "ignore the tokens"


@njit
def coin_rest(view):
    return view.random_below(2) == 1


class ShyCoinRest(HeuristicStrategy):
    """The readable twin of the two kernel decisions above."""

    def token(self, view, choices):
        return 0

    def rest(self, view):
        return view.random_below(2) == 1


@pytest.mark.slow
def test_user_decisions_match_their_readable_twin():
    ks = KernelStrategy("cautious", token=shy_token, rest=coin_rest, name="shy")
    for players in (1, 4):
        got = sim.simulate(players=players, games=150, seed=8, strategy=ks)
        twin = [ShyCoinRest(name="shy", **ks.base.params()) for _ in range(players)]
        want = sim.simulate(players=players, games=150, seed=8, strategy=twin, engine="reference")
        assert got.equals(want)
        assert got["location_track"].max() == 0  # never fights a henchman
        assert not got.equals(sim.simulate(players=players, games=150, seed=8, strategy="cautious"))


def test_kernel_strategy_refuses_bad_decisions():
    with pytest.raises(ValueError, match="unknown decision"):
        KernelStrategy("heuristic", tokens=shy_token)
    with pytest.raises(ValueError, match="must be a numba @njit function"):
        KernelStrategy("heuristic", token=lambda *a: 0)
    with pytest.raises(ValueError, match="at least one decision"):
        KernelStrategy("heuristic")
    with pytest.raises(ValueError, match="unknown strategy"):
        KernelStrategy("nope", token=shy_token)


def test_the_reference_engine_says_a_kernel_strategy_plays_on_the_kernel_only():
    """It was "strategy must be a registered name, a Strategy or one per seat, got <...KernelStrategy object at
    0x...>" (and in a per-seat team an AttributeError in mid-game); it says where the strategy plays and
    points to its readable twin, before any game, in every reference entry point."""
    from sim.run import simulate_tally

    ks = KernelStrategy("heuristic", token=shy_token, name="shy")
    says = ("strategy 'shy' is a KernelStrategy: it plays on the kernel only (engine='kernel', the default); the "
            "reference engine plays its readable twin, the strategies.Strategy written with the same rule "
            "(sim.twin.check_twin checks that the two play alike)")
    for call in (lambda: sim.simulate(players=2, games=5, strategy=ks, engine="reference"),
                 lambda: sim.simulate(players=2, games=5, strategy=[ks, "heuristic"], engine="reference"),
                 lambda: sim.simulate(players=2, games=0, strategy=ks, engine="reference", summary_only=True),
                 lambda: simulate_tally(players=2, games=5, strategy=ks, engine="reference")):
        with pytest.raises(ValueError) as e:
            call()
        assert str(e.value) == says


def test_a_decision_must_take_the_view_and_the_options():
    @njit
    def old_style(ctx, seat, choices, n):
        return 0

    with pytest.raises(ValueError, match=r"decision 'token' takes 3 arguments \(view, choices, n\)"):
        KernelStrategy("heuristic", token=old_style)


CACHED = '''
from numba import njit
import sim
from sim.kernel.custom import KernelStrategy

LIMIT = {limit}

@njit
def rest(view):
    return view.injuries(view.seat) >= LIMIT

ks = KernelStrategy("heuristic", rest=rest, name="rester")
df = sim.simulate(players=2, games=300, seed=4, strategy=ks)
stats = ks.batch_function().stats
print(sum(stats.cache_hits.values()), sum(stats.cache_misses.values()), int(df["turns"].sum()))
'''


def _run_pairing(tmp_path, limit):
    import subprocess
    import sys
    from pathlib import Path

    script = tmp_path / f"pairing_{limit}.py"
    script.write_text(CACHED.format(limit=limit))
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, str(script)], cwd=root, capture_output=True, text=True, timeout=600,
                         env={**__import__("os").environ, "PYTHONPATH": str(root)})
    assert out.returncode == 0, out.stderr
    hits, misses, turns = map(int, out.stdout.split()[-3:])
    return hits, misses, turns


@pytest.mark.slow
def test_a_compiled_pairing_is_cached_on_disk(tmp_path):
    _run_pairing(tmp_path, 2)  # compiled (or already on disk)
    hits, misses, turns = _run_pairing(tmp_path, 2)  # a new process loads it
    assert (hits, misses) == (1, 0)
    # a global the decision reads is part of the key: another value is not served the old code
    hits3, misses3, turns3 = _run_pairing(tmp_path, 3)
    assert turns3 != turns


def test_the_pairing_key_covers_code_and_the_globals_it_reads():
    from sim.kernel.custom import pairing_key

    def make(limit, body="view.injuries(view.seat) >= LIMIT"):
        env = {"LIMIT": limit}
        exec(f"def rest(view):\n    return {body}\n", env)
        return njit(env["rest"])

    assert pairing_key({"rest": make(2)}) == pairing_key({"rest": make(2)})
    assert pairing_key({"rest": make(2)}) != pairing_key({"rest": make(3)})
    assert pairing_key({"rest": make(2)}) != pairing_key({"rest": make(2, "view.injuries(view.seat) > LIMIT")})
    assert pairing_key({"rest": make(2)}) != pairing_key({"use_watch": make(2)})


def test_the_pairing_key_covers_module_attributes_outside_the_hashed_sources():
    """``strategies.x.LIMIT`` read as a module attribute is part of the key (sim/kernel's own modules are
    covered by the kernel's source hash instead)."""
    import types

    from sim.kernel.custom import pairing_key

    mod = types.ModuleType("strategies.my_limits")

    def make(limit):
        mod.LIMIT = limit
        env = {"limits": mod}
        exec("def rest(view):\n    return view.injuries(view.seat) >= limits.LIMIT\n", env)
        return pairing_key({"rest": njit(env["rest"])})

    assert make(2) != make(3)


# --- an answer the readable engine refuses, the kernel refuses too ------------------------------
# Each decision's adapter is called on its own, on a real position (one small compile each); the
# user functions answer what the test puts in their options, so that one compile tries many answers.
def _position(resolve=None):
    """A kernel context of a 4-player game right after set-up (seat 0's Resolve set to ``resolve``)."""
    from tests.kernel_support import kernel_bundle, kernel_context, kernel_copy, reference_game

    g, _, cfg, sid, prm = reference_game(4, "heuristic", 3, 0)
    if resolve is not None:
        g.players[0].resolve = resolve
    assert g.players[0].resolve > 0 or resolve == 0
    st, rs = kernel_copy(g)
    return kernel_context(kernel_bundle(), cfg, st, rs, sid, prm)


@pytest.fixture(scope="module")
def ctx():
    return _position()


@njit
def first(view, options, n):
    return options[0]  # the answer the test put first in the options


@njit
def first_row(view, options, n):
    return options[0, 0]


INDEX_DECISIONS = {"setup_advanced_skill": first, "move": first_row, "token": first, "test_option": first_row,
                   "mission_reward": first_row, "skill_up": first, "advanced_skill": first, "skill_down": first}


@pytest.mark.parametrize("name", sorted(INDEX_DECISIONS))
def test_an_index_answer_must_name_one_of_the_options(ctx, name):
    from sim.kernel.custom import _adapter

    user = INDEX_DECISIONS[name]
    f = _adapter(name, user)
    options = np.zeros((4, 4) if user is first_row else 4, np.int64)
    for answer in (0, 2):
        options.flat[0] = answer
        assert f(ctx, 0, options, 3) == answer
    for answer in (-1, 3, 1 << 40):
        options.flat[0] = answer
        with pytest.raises(ValueError, match=rf"^KernelStrategy decision {name} answered {answer} \(legal: 0 to 2\)$"):
            f(ctx, 0, options, 3)


@njit
def one_and_a_half(view, choices, n):
    return 1.5


@njit
def more_than_one(view, choices, n):
    return n > 1  # True: the readable engine takes it as 1 (isinstance(True, int))


def test_an_index_answer_must_be_an_integer(ctx):
    from sim.kernel.custom import _adapter

    choices = np.zeros(4, np.int64)
    with pytest.raises(ValueError, match=r"decision token answered a value of type float64, not an integer"):
        _adapter("token", one_and_a_half)(ctx, 0, choices, 3)
    assert _adapter("token", more_than_one)(ctx, 0, choices, 3) == 1


@njit
def extras(view, n, max_un):
    return max_un - n


def test_setup_extras_takes_at_most_the_extras_and_the_un_cap(ctx):
    from sim.kernel.custom import _adapter

    f = _adapter("setup_extras", extras)
    assert f(ctx, 0, 2, 3) == 1
    assert f(ctx, 0, 3, 3) == 0
    for n, max_un, answer, hi in ((1, 8, 7, 1), (3, 1, -2, 1)):
        with pytest.raises(ValueError, match=rf"decision setup_extras answered {answer} \(legal: 0 to {hi}\)"):
            f(ctx, 0, n, max_un)


@njit
def extras_yes(view, n, max_un):
    return n > 0  # True


def test_setup_extras_takes_true_and_false_as_1_and_0_on_both_engines(ctx):
    """A count is read as an index is (README: True or False is 1 or 0), unlike reroll's die or a gamble's mask."""
    from sim.kernel.custom import _adapter
    from tests.rules_helpers import Scripted, new_game

    assert _adapter("setup_extras", extras_yes)(ctx, 0, 2, 3) == 1
    for answer, un in ((True, 1), (np.False_, 0)):
        p = new_game(1, [3], strategies=[Scripted().push("setup_extras", answer)]).players[0]  # Nika: 3 extras
        assert (p.un_tokens, len(p.top_secret)) == (un, 3 - un)


@njit
def reroll_first(view, successes, henchman, no_advance, dice, faces, n):
    return dice[0]


@njit
def reroll_yes(view, successes, henchman, no_advance, dice, faces, n):
    return n > 0


def test_reroll_answers_a_rolled_die_or_minus_one(ctx):
    from sim.kernel.custom import _adapter

    f = _adapter("reroll", reroll_first)
    dice, faces = np.zeros(8, np.int64), np.zeros(8, np.int64)
    for answer in (-1, 0, 2):
        dice[0] = answer
        assert f(ctx, 0, 1, -1, False, dice, faces, 3) == answer
    for answer in (-5, -2, 3):
        dice[0] = answer
        with pytest.raises(ValueError, match=rf"decision reroll answered {answer} \(legal: -1 to 2\)"):
            f(ctx, 0, 1, -1, False, dice, faces, 3)
    with pytest.raises(ValueError, match=r"decision reroll answered a value of type bool, not an integer"):
        _adapter("reroll", reroll_yes)(ctx, 0, 1, -1, False, dice, faces, 3)


@njit
def reroll_unsigned(view, successes, henchman, no_advance, dice, faces, n):
    return np.uint64(dice[0]) - np.uint64(dice[1])  # 0 - 1: 2**64 - 1, which as an int64 is -1 ("no reroll")


def test_an_unsigned_answer_is_checked_before_it_becomes_an_int64(ctx):
    """np.uint64(2**64 - 1) wrapped to -1 in the compiled check and played as "no reroll", where the readable
    engine and check_twin's replay refuse it."""
    from sim.kernel.custom import _adapter

    f = _adapter("reroll", reroll_unsigned)
    dice, faces = np.zeros(8, np.int64), np.zeros(8, np.int64)
    dice[:2] = 2, 0
    assert f(ctx, 0, 1, -1, False, dice, faces, 3) == 2
    dice[:2] = 0, 1
    with pytest.raises(ValueError, match=r"decision reroll answered 18446744073709551615 \(legal: -1 to 2\)"):
        f(ctx, 0, 1, -1, False, dice, faces, 3)


@njit
def auto_pass_number(view, skill, henchman, no_advance):
    return skill


@njit
def auto_pass_yes(view, skill, henchman, no_advance):
    return skill > 1


@njit
def top_secret_one(view):
    return 1


def test_yes_or_no_answers_the_readable_engine_checks_must_be_true_or_false(ctx):
    from sim.kernel.custom import _adapter

    with pytest.raises(ValueError, match=r"decision use_auto_pass answered 2, not true or false"):
        _adapter("use_auto_pass", auto_pass_number)(ctx, 0, 2, -1, False)
    f = _adapter("use_auto_pass", auto_pass_yes)
    assert f(ctx, 0, 2, -1, False) is True
    assert f(ctx, 0, 1, -1, False) is False
    with pytest.raises(ValueError, match=r"decision status_top_secret answered 1, not true or false"):
        _adapter("status_top_secret", top_secret_one)(ctx, 0)


@njit
def level2_first_twice(view, players, k, out):
    for i in range(k):
        out[i] = 0


@njit
def level2_past_the_last(view, players, k, out):
    for i in range(k):
        out[i] = view.n_henchmen + i


@njit
def level2_nothing(view, players, k, out):
    return


@njit
def level2_base(view, players, k, out):
    view.base_setup_level2_henchmen(players, k, out)


def test_setup_level2_henchmen_writes_k_different_henchmen(ctx):
    from sim.kernel.custom import _adapter

    out = np.zeros(2, np.int64)
    _adapter("setup_level2_henchmen", level2_base)(ctx, 1, 2, out)
    assert len(set(out)) == 2 and 0 <= out.min() and out.max() < 4
    cases = {level2_first_twice: r"out\[1\] = 0", level2_past_the_last: r"out\[0\] = 4", level2_nothing: r"out\[0\] = -1"}
    for user, wrote in cases.items():
        with pytest.raises(ValueError, match=rf"decision setup_level2_henchmen wrote {wrote} \(legal: 2 different "
                                             r"henchmen of 0 to 3 in out\[:k\]; -1: not written\)"):
            _adapter("setup_level2_henchmen", user)(ctx, 1, 2, out)


# out is an int64 array: numba stores a float written into it as its integer part and True as 1,
# so each of these would play a henchman it never wrote (the readable engine refuses 0.5 and True)
@njit
def level2_halves(view, players, k, out):
    for i in range(k):
        out[i] = (2 * i + 1) / 2  # 0.5, 1.5: henchmen 0 and 1 once stored


@njit
def level2_flags(view, players, k, out):
    out[0] = players > 0  # True: henchman 1 once stored
    out[1] = 0


@njit
def fill_with(a, x):
    a[:] = x


@njit
def level2_helper_fills(view, players, k, out):
    view.base_setup_level2_henchmen(players, k, out)
    fill_with(out[1:], 2.7)  # a slice of out, written by a helper


@njit
def level2_flat(view, players, k, out):
    view.base_setup_level2_henchmen(players, k, out)
    out.flat[0] = np.float32(3.0)


@njit
def level2_fill(view, players, k, out):
    out.reshape((k,)).fill(True)


@njit
def level2_integers(view, players, k, out):
    view.base_setup_level2_henchmen(players, k, out)
    out[0] = np.uint8(out[0])  # numpy integers of any width, literals, integer arithmetic: integers
    out[1] = np.int32(out[1]) + 0
    out[k - 1] += np.int64(0)
    out[0], out[1] = out[1] // 1, out[0] * 1  # the base's two henchmen, swapped


# user function -> (what it writes in compiled code, as plain Python)
NON_INTEGER_WRITES = {level2_halves: ("float64", "float"), level2_flags: ("bool", "bool"),
                      level2_helper_fills: ("float64", "float"), level2_flat: ("float32", "float32"),
                      level2_fill: ("bool", "bool")}


def test_a_float_or_a_bool_written_into_out_is_refused_before_any_game(ctx):
    """``out[i] = 2.7`` played henchman 2, ``out[i] = True`` henchman 1. The pairing refuses the decision
    when numba types it, before the decision is ever asked, naming the function and the line."""
    from sim.kernel.custom import _adapter

    out = np.zeros(2, np.int64)
    for user, (what, _) in NON_INTEGER_WRITES.items():
        writer = "fill_with" if user is level2_helper_fills else user.py_func.__name__
        with pytest.raises(ValueError, match=rf"^KernelStrategy decision setup_level2_henchmen wrote an? {what} into out "
                                             rf"\({writer} at test_kernel_custom\.py:\d+\), not an integer \(the "
                                             r"kernel would silently store it as int64\)$"):
            _adapter("setup_level2_henchmen", user)(ctx, 1, 2, out)
    _adapter("setup_level2_henchmen", level2_base)(ctx, 1, 2, out)
    base = out.copy()
    _adapter("setup_level2_henchmen", level2_integers)(ctx, 1, 2, out)
    assert out.tolist() == base[::-1].tolist()


@njit
def token_rewrites_choices(view, choices, n):
    choices[0] = choices[n - 1] + 0.5  # the kernel plays choices[i] after the answer
    return 0


@njit
def move_rewrites_moves(view, moves, n):
    moves[0, 0] = moves[0, 0] > 0
    return 0


@njit
def _swap(a, i, j):
    a[i], a[j] = a[j], a[i]


@njit
def token_swaps_choices(view, choices, n):
    _swap(choices, 0, n - 1)  # an integer write, in a helper: the game would play the swapped options
    return 0


@njit
def reroll_rewrites_dice(view, successes, henchman, no_advance, dice, faces, n):
    faces[:n] = 5  # "rolled" every die to its best face
    return -1


def test_any_write_into_the_options_is_refused(ctx):
    """The options (``choices``, ``moves``, ``faces``...) are the kernel's own int64 arrays, read again
    after the answer (the readable engine hands a copy): a decision that writes into one, an integer
    as much as a float, is refused as the pairing is typed, naming the function and the line."""
    from sim.kernel.custom import _adapter

    tail = r"\), which it may only read \(the kernel plays on from its options after the answer\)$"
    with pytest.raises(ValueError, match=r"^KernelStrategy decision token wrote into choices "
                                         r"\(token_rewrites_choices at test_kernel_custom\.py:\d+" + tail):
        _adapter("token", token_rewrites_choices)(ctx, 0, np.zeros(4, np.int64), 3)
    with pytest.raises(ValueError, match=r"^KernelStrategy decision move wrote into moves \(move_rewrites_moves"):
        _adapter("move", move_rewrites_moves)(ctx, 0, np.zeros((4, 3), np.int64), 3)
    with pytest.raises(ValueError, match=r"^KernelStrategy decision token wrote into choices \(_swap at " + "test_kernel_custom"):
        _adapter("token", token_swaps_choices)(ctx, 0, np.arange(4, dtype=np.int64), 3)
    with pytest.raises(ValueError, match=r"^KernelStrategy decision reroll wrote into faces \(reroll_rewrites_dice at"):
        _adapter("reroll", reroll_rewrites_dice)(ctx, 0, 2, -1, False, np.zeros(4, np.int64), np.zeros(4, np.int64), 2)


@pytest.mark.slow
def test_every_built_in_decision_reads_its_options_read_only():
    """Each decision handed options delegates them to its built-in (``view.base_<name>``), which now sees
    read-only arrays: every one still compiles and the games are the base strategy's, 1-6 players."""
    from sim.kernel.custom import SIGNATURES

    arrays = ("skills", "moves", "choices", "opts", "dice", "ranks")
    names = [n for n, args in SIGNATURES.items() if set(args) & set(arrays)]
    assert len(names) == 10
    src = "".join(f"@njit\ndef {n}(view, {', '.join(SIGNATURES[n])}):\n"
                  f"    return view.base_{n}({', '.join(SIGNATURES[n])})\n" for n in names)
    env = {"njit": njit}
    exec(src, env)  # noqa: S102
    ks = KernelStrategy("heuristic", name="delegate", **{n: env[n] for n in names})
    for players in range(1, 7):
        got = sim.simulate(players=players, games=300, seed=3, strategy=ks).drop("strategy")
        assert got.equals(sim.simulate(players=players, games=300, seed=3, strategy="heuristic").drop("strategy"))


def test_a_decision_is_compiled_once_for_the_check_and_the_call(ctx):
    """The write check types the decision for the adapter's own read-only arguments: one compiled version."""
    from sim.kernel.custom import _adapter

    @njit
    def token_reads(view, choices, n):
        return 0 if choices[0] >= 0 else n - 1

    assert _adapter("token", token_reads)(ctx, 0, np.zeros(4, np.int64), 3) == 0
    assert len(token_reads.signatures) == 1
    assert not token_reads.signatures[0][1].mutable  # choices: read only


def test_the_options_are_read_only_arrays_however_the_decision_reaches_them(ctx):
    """Behind the typed check, the adapter hands the options over as numba's read-only arrays: a write
    that the check cannot follow (here: through a tuple's star-args) still does not compile."""
    from numba.core.errors import TypingError

    from sim.kernel.custom import _adapter

    @njit
    def put(a, i):
        a[i] = 0

    @njit
    def token_star(view, choices, n):
        args = (choices, 0)
        put(*args)
        return 0

    with pytest.raises((TypingError, ValueError), match=r"readonly array|may only read"):
        _adapter("token", token_star)(ctx, 0, np.arange(4, dtype=np.int64), 3)


@njit
def gamble_as_told(view, ranks, suits, free):
    return ranks[0], suits[0] == 1  # (mask, spend): what the test put in the hand


@njit
def gamble_spend_number(view, ranks, suits, free):
    return ranks[0], suits[0]


@njit
def gamble_mask_bool(view, ranks, suits, free):
    return suits[0] == 1, False


@njit
def gamble_mask_only(view, ranks, suits, free):
    return ranks[0]


def test_a_gamble_answer_is_a_mask_and_true_or_false(ctx):
    from sim.kernel.custom import _adapter

    f = _adapter("gamble_exchange", gamble_as_told)
    ranks, suits = np.zeros(5, np.int64), np.zeros(5, np.int64)

    def answer(mask, spend, free=1):
        ranks[0], suits[0] = mask, int(spend)
        return f(ctx, 0, ranks, suits, free)

    assert answer(0, False) == (0, False)
    assert answer(8, False) == (8, False)
    assert answer(31, True) == (31, True)
    for mask in (-1, 32):
        with pytest.raises(ValueError, match=rf"decision gamble_exchange answered {mask} \(legal: 0 to 31\)"):
            answer(mask, False)
    with pytest.raises(ValueError, match=r"answered \(3, False\): exchanges 2 cards \(allowed 1\)"):
        answer(3, False)
    ranks[0], suits[0] = 1, 1
    with pytest.raises(ValueError, match=r"answered \(1, True\): spends Resolve it does not have"):
        f(_position(resolve=0), 0, ranks, suits, 1)
    ranks[0], suits[0] = 1, 2
    with pytest.raises(ValueError, match=r"decision gamble_exchange answered 2, not true or false"):
        _adapter("gamble_exchange", gamble_spend_number)(ctx, 0, ranks, suits, 1)
    with pytest.raises(ValueError, match=r"decision gamble_exchange answered a value of type bool, not an integer"):
        _adapter("gamble_exchange", gamble_mask_bool)(ctx, 0, ranks, suits, 1)
    with pytest.raises(ValueError, match=r"answered a value of type int64, not a pair \(mask, spend_resolve\)"):
        _adapter("gamble_exchange", gamble_mask_only)(ctx, 0, ranks, suits, 1)


@njit
def seven_extras(view, n, max_un):
    return 7  # 1 player: 3 extras, at most 1 (or 3) as UN Transports


@njit
def level2_past_the_last_at_two(view, players, k, out):
    if players == 2:
        out[0] = view.n_henchmen  # one past the henchmen's levels in the state
    else:
        view.base_setup_level2_henchmen(players, k, out)


@pytest.mark.slow
def test_the_kernel_stops_at_an_illegal_answer_and_plays_legal_ones_unchanged():
    ks = KernelStrategy("heuristic", setup_extras=seven_extras, setup_level2_henchmen=level2_past_the_last_at_two,
                        name="cheat")
    # the readable engine's error, naming the strategy (the compiled code that refused it knows no name)
    with pytest.raises(StrategyError, match=r"^strategy 'cheat': KernelStrategy decision setup_extras answered 7 "
                                            r"\(legal: 0 to [13]\)$"):
        sim.simulate(players=1, games=20, seed=1, strategy=ks)
    with pytest.raises(StrategyError, match=r"^strategy 'cheat': KernelStrategy decision setup_level2_henchmen "
                                            r"wrote out\[0\] = 4 "):
        sim.simulate(players=2, games=20, seed=1, strategy=ks, threads=2)
    # 4 players: no extras to choose, no henchman at level 2; the heuristic's own games
    got = sim.simulate(players=4, games=200, seed=1, strategy=ks).drop("strategy")
    assert got.equals(sim.simulate(players=4, games=200, seed=1, strategy="heuristic").drop("strategy"))


@njit
def first_as_numpy(view, options, n):
    return np.int32(options[0])


@njit
def np_token(view, choices, n):
    return np.int64(view.base_token(choices, n))


@njit
def np_move(view, moves, n):
    return np.int64(view.base_move(moves, n))


@njit
def np_setup_extras(view, n, max_un):
    return np.int64(view.base_setup_extras(n, max_un))


@njit
def np_reroll(view, successes, henchman, no_advance, dice, faces, n):
    return np.int32(view.base_reroll(successes, henchman, no_advance, dice, faces, n))


@njit
def np_gamble_exchange(view, ranks, suits, free):
    mask, spend = view.base_gamble_exchange(ranks, suits, free)
    return np.int64(mask), spend


def test_a_numpy_integer_answer_is_the_same_answer(ctx):
    """The readable engine takes a numpy integer as the Python int (tests/test_rules_endgame.py); so do
    the kernel's checks, compiled and plain."""
    from sim.kernel.custom import _adapter, _index_answer, _int_answer

    f = _adapter("token", first_as_numpy)
    options = np.zeros(4, np.int64)
    for answer in (0, 2):
        options[0] = answer
        assert f(ctx, 0, options, 3) == answer
    options[0] = 3
    with pytest.raises(ValueError, match=r"decision token answered 3 \(legal: 0 to 2\)"):
        f(ctx, 0, options, 3)
    assert _index_answer(4, np.int64(2), 0, 2) == 2 and _int_answer(10, np.int32(-1), -1, 2) == -1
    with pytest.raises(ValueError, match="decision reroll answered a value of type bool, not an integer"):
        _int_answer(10, np.True_, -1, 2)


@pytest.mark.slow
def test_numpy_integer_answers_play_the_same_games_on_both_engines():
    from tests.rules_helpers import NumpyAnswers

    ks = KernelStrategy("heuristic", token=np_token, move=np_move, setup_extras=np_setup_extras, reroll=np_reroll,
                        gamble_exchange=np_gamble_exchange, name="numpy")
    for players in (1, 2, 4):
        got = sim.simulate(players=players, games=60, seed=2, strategy=ks)
        team = [NumpyAnswers(np.int64, name="numpy") for _ in range(players)]
        assert got.equals(sim.simulate(players=players, games=60, seed=2, strategy=team, engine="reference"))
        assert got.drop("strategy").equals(sim.simulate(players=players, games=60, seed=2,
                                                        strategy="heuristic").drop("strategy"))


def _plain_position():
    """The position of :func:`_position` as the plain replay's context (``sim.twin``)."""
    from sim.content.constants import MAX_PLAYERS
    from sim.kernel.layout import Context
    from tests.kernel_support import content_and_pack, kernel_copy, reference_game

    g, _, cfg, sid, prm = reference_game(4, "heuristic", 3, 0)
    st, rs = kernel_copy(g)
    return Context(content_and_pack()[1], cfg, st, rs, np.full(MAX_PLAYERS, sid, np.int64),
                   np.ascontiguousarray(np.broadcast_to(prm, (MAX_PLAYERS, prm.shape[0]))))


def test_the_plain_python_adapters_refuse_the_same_answers():
    """``sim.twin`` replays a kernel strategy as plain Python: its adapters check the answers too."""
    from sim.kernel.custom import _adapter
    from sim.twin import _Plain

    plain_ctx = _plain_position()
    plain = _Plain()
    with pytest.raises(ValueError, match=r"decision token answered a value of type float, not an integer"):
        plain.value(_adapter("token", one_and_a_half))(plain_ctx, 0, np.zeros(4, np.int64), 3)
    with pytest.raises(ValueError, match=r"decision setup_level2_henchmen wrote out\[1\] = 0 "):
        plain.value(_adapter("setup_level2_henchmen", level2_first_twice))(plain_ctx, 1, 2, np.zeros(2, np.int64))
    with pytest.raises(ValueError, match=r"decision gamble_exchange answered 2, not true or false"):
        plain.value(_adapter("gamble_exchange", gamble_spend_number))(plain_ctx, 0, np.array([1, 0, 0, 0, 0]),
                                                                     np.array([2, 0, 0, 0, 0]), 1)
    assert plain.value(_adapter("reroll", reroll_first))(plain_ctx, 0, 1, -1, False, np.array([-1, 0]),
                                                         np.zeros(2, np.int64), 2) == -1


def token_copies_into_choices(view, choices, n):
    np.copyto(choices, 0)
    return 0


def test_the_plain_replay_refuses_the_same_writes():
    """``sim.twin`` replays your decisions as plain Python, where numpy too would store 2.7 as 2: the
    arrays it hands them refuse the same writes."""
    from sim.twin import _Plain

    plain_ctx = _plain_position()
    for user, (_, what) in NON_INTEGER_WRITES.items():
        with pytest.raises(ValueError, match=rf"^KernelStrategy decision setup_level2_henchmen wrote an? {what} into out "
                                             r"\(\w+ at test_kernel_custom\.py:\d+\), not an integer"):
            _Plain().decision("setup_level2_henchmen", user)(plain_ctx, 1, 2, np.zeros(2, np.int64))
    for user in (token_rewrites_choices, token_swaps_choices):  # any write into an option, as compiled
        choices = np.arange(4, dtype=np.int64)
        with pytest.raises(ValueError, match=r"^KernelStrategy decision token wrote into choices \(\w+ at "
                                             r"test_kernel_custom\.py:\d+\), which it may only read"):
            _Plain().decision("token", user)(plain_ctx, 0, choices, 3)
        assert choices.tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="read-only"):  # numpy's own writers too
        _Plain().decision("token", token_copies_into_choices)(plain_ctx, 0, np.arange(4, dtype=np.int64), 3)
    out = np.zeros(2, np.int64)
    _Plain().decision("setup_level2_henchmen", level2_base)(plain_ctx, 1, 2, out)
    base = out.copy()
    _Plain().decision("setup_level2_henchmen", level2_integers)(plain_ctx, 1, 2, out)
    assert out.tolist() == base[::-1].tolist()


class Flags(HeuristicStrategy):
    """The readable twin of ``level2_flags``."""

    def setup_level2_henchmen(self, view, k):
        return [view.n_players > 0, 0]


@pytest.mark.slow
def test_both_engines_refuse_a_bool_among_the_level_two_henchmen():
    """The readable engine read ``[True, 0]`` as henchmen 1 and 0 and the kernel stored ``out[0] = True``
    as 1: both refuse it now, the kernel whatever the player count (the pairing is refused, never cached)."""
    with pytest.raises(StrategyError, match=r"^strategy 'flags' chose henchmen \[True, 0\] for level 2 \(need 2\)$"):
        sim.simulate(players=1, games=5, seed=1, strategy=Flags(name="flags"), engine="reference")
    ks = KernelStrategy("heuristic", setup_level2_henchmen=level2_flags, name="flags")
    for players in (1, 4):  # 4 players: no henchman starts at level 2, the decision is never asked
        with pytest.raises(StrategyError, match=r"^strategy 'flags': KernelStrategy decision setup_level2_henchmen "
                                                r"wrote a bool into out \(level2_flags at "):
            sim.simulate(players=players, games=5, seed=1, strategy=ks)


# --- what the pairing key covers: each case is two versions of the user's modules, imported afresh -----
@pytest.fixture
def user_code(tmp_path, monkeypatch):
    """``load(files, main)``: write ``files`` into a new folder on ``sys.path`` and import ``main``.

    Each call starts from a new folder and drops the earlier versions of the modules it writes, as a
    new process would import them.
    """
    import importlib
    import sys
    import textwrap

    tops: set[str] = set()

    def forget():
        for name in [n for n in sys.modules if n.split(".")[0] in tops]:
            del sys.modules[name]

    def load(files: dict, main: str):
        folder = tmp_path / f"v{len(list(tmp_path.iterdir()))}"
        for rel, text in files.items():
            path = folder / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text))
            tops.add(rel.split("/")[0].removesuffix(".py"))
        forget()
        monkeypatch.syspath_prepend(str(folder))
        return importlib.import_module(main)

    yield load
    forget()


def _decision(imports: str, test: str, decorator: str = "@njit") -> str:
    return f"""
from numba import njit
{imports}

{decorator}
def tok(view, choices, n):
    if {test}:
        return 0
    return view.base_token(choices, n)
"""


KEY_CASES = {
    "a submodule's attribute": lambda v: {
        "ks_sub/__init__.py": "",
        "ks_sub/consts.py": f"import ks_sub  # ks_sub.consts.ks_sub: a cycle\n\nTHRESH = {v}\n",
        "ks_sub_tok.py": _decision("import ks_sub.consts", "ks_sub.consts.THRESH > 0"),
    },
    "an IntEnum member's value": lambda v: {
        "ks_enum_kinds.py": f"from enum import IntEnum\n\nclass Lim(IntEnum):\n    FIGHT_AT = {v}\n",
        "ks_enum_tok.py": _decision("from ks_enum_kinds import Lim", "Lim.FIGHT_AT > 0"),
    },
    "a helper's default argument": lambda v: {
        "ks_dflt_help.py": f"from numba import njit\n\n@njit\ndef pick(view, n, k={v}):\n    return k\n",
        "ks_dflt_tok.py": _decision("from ks_dflt_help import pick", "pick(view, n) > 0"),
    },
    "a helper's keyword-only default": lambda v: {
        "ks_kwd_help.py": f"from numba import njit\n\n@njit\ndef pick(view, n, *, k={v}):\n    return k\n",
        "ks_kwd_tok.py": _decision("from ks_kwd_help import pick", "pick(view, n) > 0"),
    },
    "a helper's @njit options": lambda v: {
        "ks_opts_help.py": f"from numba import njit\n\n@njit(error_model={v!r})\ndef ratio(a, b):\n    return a / b\n",
        "ks_opts_tok.py": _decision("from ks_opts_help import ratio", "ratio(view.rounds, view.rounds - view.rounds) > 0"),
    },
    "the decision's @njit options": lambda v: {
        "ks_dopt_tok.py": _decision("", "1.0 / (view.rounds - view.rounds) > 0", f"@njit(error_model={v!r})"),
    },
    "a namedtuple's field names": lambda v: {
        "ks_nt_limits.py": "from collections import namedtuple\n\n"
                           f"Limits = namedtuple('Limits', {['fight rest', 'rest fight'][v]!r})\nLIMITS = Limits(1, 0)\n",
        "ks_nt_tok.py": _decision("from ks_nt_limits import LIMITS", "LIMITS.fight > 0"),
    },
}
KEY_VALUES = {"a helper's @njit options": ("python", "numpy"), "the decision's @njit options": ("python", "numpy")}


@pytest.mark.parametrize("case", sorted(KEY_CASES))
def test_the_pairing_key_covers_what_compiled_code_freezes(user_code, case):
    """Two versions of the user's modules that compile to different code get different keys; the same
    version imported again (a new process) gets the same key, so its cached pairing is found."""
    from sim.kernel.custom import pairing_key

    old, new = KEY_VALUES.get(case, (0, 1))
    main = [f for f in KEY_CASES[case](old) if f.endswith("_tok.py")][0].removesuffix(".py")

    def key(value):
        return pairing_key({"token": user_code(KEY_CASES[case](value), main).tok})

    assert key(old) == key(old)
    assert key(old) != key(new)


def test_the_pairing_key_covers_the_compilers_version(monkeypatch):
    import numba

    from sim.kernel.custom import pairing_key

    key = pairing_key({"token": shy_token})
    monkeypatch.setattr(numba, "__version__", "0.0.1")
    assert pairing_key({"token": shy_token}) != key


NUMBA_HELPERS = {
    "an @overload stub": """
        from numba.extending import overload

        def limit():
            pass

        @overload(limit)
        def _limit():
            def impl():
                return 0
            return impl
        """,
    "a @register_jitable function": """
        from numba.extending import register_jitable

        @register_jitable
        def limit():
            return 0
        """,
    "an @intrinsic": """
        from numba.core import cgutils, types
        from numba.extending import intrinsic

        @intrinsic
        def limit(typingctx):
            return types.int64(), lambda context, builder, sig, args: cgutils.intp_t(0)
        """,
    "a @vectorize function": """
        from numba import vectorize

        @vectorize(["int64(int64)"])
        def limit_of(x):
            return 0
        """,
    "a @jitclass": """
        from numba import int64
        from numba.experimental import jitclass

        @jitclass([("x", int64)])
        class Limit:
            def __init__(self):
                self.x = 0
        """,
    # found by the library's function, or by the type and the attribute's name: the globals the key
    # follows never lead to them
    "an @overload of numpy.busday_count": """
        import numpy as np
        from numba.extending import overload

        @overload(np.busday_count)
        def _limit(a, b):
            def impl(a, b):
                return 0
            return impl
        """,
    "an @overload_method": """
        from numba import types
        from numba.extending import overload_method

        @overload_method(types.Array, "ks_limit")
        def _limit(arr):
            def impl(arr):
                return 0
            return impl
        """,
    "an @overload_attribute": """
        from numba import types
        from numba.extending import overload_attribute

        @overload_attribute(types.Array, "ks_limit_attr")
        def _limit(arr):
            def get(arr):
                return 0
            return get
        """,
    "an @overload_classmethod": """
        from numba import types
        from numba.extending import overload_classmethod

        @overload_classmethod(types.Array, "ks_limit_of")
        def _limit(cls, n):
            def impl(cls, n):
                return 0
            return impl
        """,
}
# how the decision uses each: (its imports, the use, the name the refusal gives); default: limit()
NUMBA_USES = {
    "a @vectorize function": ("from ks_numba_help import limit_of", "limit_of(0)", "limit_of"),
    "a @jitclass": ("from ks_numba_help import Limit", "Limit().x", "Limit"),
    "an @overload of numpy.busday_count": ("import ks_numba_help  # noqa: F401\nimport numpy as np",
                                           "np.busday_count(n, n)", "_limit"),
    "an @overload_method": ("import ks_numba_help  # noqa: F401", "choices.ks_limit()", "_limit"),
    "an @overload_attribute": ("import ks_numba_help  # noqa: F401", "choices.ks_limit_attr", "_limit"),
    "an @overload_classmethod": ("import ks_numba_help  # noqa: F401\nfrom numba import types",
                                 "types.Array.ks_limit_of(n)", "_limit"),
}


@pytest.mark.parametrize("kind", sorted(NUMBA_HELPERS))
def test_code_numba_keeps_out_of_the_keys_reach_is_refused(user_code, kind):
    """An @overload's implementation (and an @intrinsic's, ...) lives in numba's registries, out of the
    fingerprint's reach: a changed implementation would be served the old cached pairing, so
    KernelStrategy refuses it and names it."""
    imports, use, name = NUMBA_USES.get(kind, ("from ks_numba_help import limit", "limit()", "limit"))
    files = {"ks_numba_help.py": NUMBA_HELPERS[kind], "ks_numba_tok.py": _decision(imports, f"{use} > 0")}
    m = user_code(files, "ks_numba_tok")
    with pytest.raises(ValueError, match=rf"ks_numba_help\.{name} is [^:]*{kind}.*pairing key cannot fingerprint it"):
        KernelStrategy("heuristic", token=m.tok)


# numba's lower-level extension API: each registers code found by a type, a function or an attribute's
# name in numba's registries. A helper module of the user's that the decision reads (its limit()) and
# that registers one (keyed on its own class and type, so that nothing else compiles with it)
LOW_LEVEL_HELPER = """
    from numba import njit, types
    from numba.core import cgutils
    from numba.core.imputils import lower_constant
    from numba.core.typing.templates import AbstractTemplate, AttributeTemplate, infer, infer_getattr, infer_global
    from numba.extending import (NativeValue, box, lower_builtin, lower_cast, lower_getattr, lower_getattr_generic,
                                 lower_setattr, make_attribute_wrapper, models, register_model, type_callable,
                                 typeof_impl, unbox)


    class Ks:
        pass


    class KsType(types.Type):
        def __init__(self):
            super().__init__(name="{module}.KsType")


    def ks_stub():
        pass


    @njit
    def limit():
        return 0
"""
LOW_LEVEL = {  # the registration, and the name its refusal gives
    "@infer": ("""
        @infer
        class _Template(AbstractTemplate):
            key = "{module}.op"

            def generic(self, args, kws):
                return None
        """, "_Template"),
    "@infer_global": ("""
        @infer_global(ks_stub)
        class _Template(AbstractTemplate):
            def generic(self, args, kws):
                return None
        """, "_Template"),
    "@infer_getattr": ("""
        @infer_getattr
        class _Attributes(AttributeTemplate):
            key = KsType

            def resolve_x(self, ty):
                return types.int64
        """, "_Attributes"),
    "@type_callable": ("""
        @type_callable(Ks)
        def _typer(context):
            def typer():
                return KsType()
            return typer
        """, "_typer"),
    "@lower_builtin": ("""
        @lower_builtin(Ks)
        def _make(context, builder, sig, args):
            return context.get_dummy_value()
        """, "_make"),
    "@lower_getattr": ("""
        @lower_getattr(KsType, "x")
        def _x(context, builder, typ, value):
            return context.get_constant(types.int64, 0)
        """, "_x"),
    "@lower_getattr_generic": ("""
        @lower_getattr_generic(KsType)
        def _attribute(context, builder, typ, value, attr):
            return context.get_constant(types.int64, 0)
        """, "_attribute"),
    "@lower_setattr": ("""
        @lower_setattr(KsType, "x")
        def _set_x(context, builder, sig, args):
            return context.get_dummy_value()
        """, "_set_x"),
    "@lower_cast": ("""
        @lower_cast(KsType, types.int64)
        def _cast(context, builder, fromty, toty, val):
            return context.get_constant(types.int64, 0)
        """, "_cast"),
    "@lower_constant": ("""
        @lower_constant(KsType)
        def _constant(context, builder, ty, pyval):
            return context.get_dummy_value()
        """, "_constant"),
    "typeof_impl.register": ("""
        @typeof_impl.register(Ks)
        def _typeof(val, c):
            return KsType()
        """, "_typeof"),
    "register_model": ("""
        @register_model(KsType)
        class _Model(models.OpaqueModel):
            pass
        """, "_Model"),
    "make_attribute_wrapper": ("""
        make_attribute_wrapper(KsType, "x", "y")
        """, "KsType"),
    "@unbox": ("""
        @unbox(KsType)
        def _unbox(typ, obj, c):
            return NativeValue(c.context.get_dummy_value())
        """, "_unbox"),
    "@box": ("""
        @box(KsType)
        def _box(typ, val, c):
            return c.pyapi.make_none()
        """, "_box"),
}


def _low_level(kind: str) -> tuple[str, str]:
    """The helper module's name (one of its own per kind: numba keeps every registration), and its source."""
    module = "ks_low_" + "".join(c if c.isalnum() else "_" for c in kind).strip("_")
    code, _ = LOW_LEVEL[kind]
    return module, (textwrap.dedent(LOW_LEVEL_HELPER) + textwrap.dedent(code)).replace("{module}", module)


@pytest.mark.parametrize("kind", sorted(LOW_LEVEL))
def test_a_registration_with_numba_by_the_users_code_is_refused(user_code, kind):
    """What a module of the user's registers with numba's typing, lowering, data models or boxing is
    found by a type, a function or a name, never through the globals the key follows: an edited
    implementation would keep the key, and the old cached pairing would play. It is refused, named."""
    module, source = _low_level(kind)
    if kind == "@infer_global":  # typing of the user's own function: it counts where the code calls it
        m = user_code({f"{module}.py": source,
                       "ks_low_tok.py": _decision(f"from {module} import limit", "limit() > 0")}, "ks_low_tok")
        KernelStrategy("heuristic", token=m.tok)  # never called: it cannot reach the pairing
        m = user_code({"ks_low_tok2.py": _decision(f"from {module} import ks_stub", "ks_stub() is None")},
                      "ks_low_tok2")
        with pytest.raises(ValueError, match=rf"{module}\.ks_stub is an @overload stub, a @register_jitable "
                                             "function or a function typed by @infer_global"):
            KernelStrategy("heuristic", token=m.tok)
        return
    m = user_code({f"{module}.py": source, "ks_low_tok.py": _decision(f"from {module} import limit", "limit() > 0")},
                  "ks_low_tok")
    name = LOW_LEVEL[kind][1]
    with pytest.raises(ValueError, match=rf"{module}\.{name} is registered with numba by {kind}: numba keeps its "
                                         "implementation where the pairing key cannot fingerprint it"):
        KernelStrategy("heuristic", token=m.tok)


def test_a_registration_in_a_module_the_strategy_never_reads_is_not_refused(user_code):
    """Only what the strategy's code can reach counts: another module's extension (a library's) is not
    the strategy's."""
    module, source = _low_level("@lower_builtin")
    source = source.replace("_make", "_make_elsewhere")
    m = user_code({f"{module}_elsewhere.py": source,
                   "ks_low_tok.py": _decision(f"import {module}_elsewhere  # noqa: F401", "view.rounds < 0")},
                  "ks_low_tok")
    KernelStrategy("heuristic", token=m.tok)


INTERVAL = """
    from numba import types
    from numba.core import cgutils
    from numba.extending import (lower_builtin, make_attribute_wrapper, models, register_model, type_callable,
                                 typeof_impl)


    class Interval:
        def __init__(self, lo, hi):
            self.lo, self.hi = lo, hi


    class IntervalType(types.Type):
        def __init__(self):
            super().__init__(name="KsInterval")


    @typeof_impl.register(Interval)
    def _typeof(val, c):
        return IntervalType()


    @type_callable(Interval)
    def _typer(context):
        def typer(lo, hi):
            return IntervalType()
        return typer


    @register_model(IntervalType)
    class _Model(models.StructModel):
        def __init__(self, dmm, fe_type):
            super().__init__(dmm, fe_type, [("lo", types.float64), ("hi", types.float64)])


    make_attribute_wrapper(IntervalType, "lo", "lo")


    @lower_builtin(Interval, types.Float, types.Float)
    def _make(context, builder, sig, args):
        interval = cgutils.create_struct_proxy(sig.return_type)(context, builder)
        interval.lo, interval.hi = args
        return interval._getvalue()
"""


def test_a_type_of_the_users_that_the_decision_uses_is_refused(user_code):
    """numba's documented way to a type of one's own (a Python class, its typing, data model and
    lowering): editing _make or the model would keep the key, the class and the decision unchanged."""
    m = user_code({"ks_interval.py": INTERVAL,
                   "ks_interval_tok.py": _decision("from ks_interval import Interval", "Interval(1.0, 2.0).lo > 1.5")},
                  "ks_interval_tok")
    with pytest.raises(ValueError, match=r"ks_interval\._typer is registered with numba by @type_callable"):
        KernelStrategy("heuristic", token=m.tok)


# registered by a module the decision only imports: found by the attribute's or the library function's name
BY_NAME = {
    "@infer_getattr": ("""
        from numba import types
        from numba.core.typing.templates import AttributeTemplate, infer_getattr

        @infer_getattr
        class _ArrayWidth(AttributeTemplate):
            key = types.Array

            def resolve_ks_width(self, ary):
                return types.int64
        """, "choices.ks_width", "_ArrayWidth"),
    "@lower_getattr": ("""
        from numba import types
        from numba.extending import lower_getattr

        @lower_getattr(types.Array, "ks_height")
        def _height(context, builder, typ, value):
            return context.get_constant(types.int64, 0)
        """, "choices.ks_height", "_height"),
    "@infer_global": ("""
        import numpy as np
        from numba import types
        from numba.core.typing.templates import AbstractTemplate, infer_global, signature

        @infer_global(np.busday_offset)
        class _Offset(AbstractTemplate):
            def generic(self, args, kws):
                return signature(types.int64, *args)
        """, "np.busday_offset(n, n)", "_Offset"),
    "@lower_builtin": ("""
        import numpy as np
        from numba import types
        from numba.extending import lower_builtin

        @lower_builtin(np.is_busday, types.Integer)
        def _is_busday(context, builder, sig, args):
            return context.get_constant(types.int64, 0)
        """, "np.is_busday(n)", "_is_busday"),
}


@pytest.mark.parametrize("kind", sorted(BY_NAME))
def test_a_registration_found_by_a_name_the_decision_reads_is_refused(user_code, kind):
    """A module the decision only imports registers an attribute of numba's type, or a library's
    function: numba finds it by the name, which the decision reads."""
    code, use, name = BY_NAME[kind]
    module = "ks_name_" + "".join(c if c.isalnum() else "_" for c in kind).strip("_")
    files = {f"{module}.py": code,
             "ks_name_tok.py": _decision(f"import {module}  # noqa: F401\nimport numpy as np", f"{use} > 0")}
    m = user_code(files, "ks_name_tok")
    with pytest.raises(ValueError, match=rf"{module}\.{name} is registered with numba by {kind}"):
        KernelStrategy("heuristic", token=m.tok)


@njit
def late_token(view, choices, n):
    if view.rounds > 10:
        return 0
    return view.base_token(choices, n)


def test_the_views_own_attributes_are_not_refused():
    """The view's attributes are @overload_method and @overload_attribute too: the kernel's (in its
    sources' hash), not the user's."""
    import sim.kernel.view  # noqa: F401 - registers them

    KernelStrategy("heuristic", token=late_token)


FROZEN = """
from numba import njit

T = 0


@njit
def limit():
    return T


@njit
def tok(view, choices, n):
    if limit() > 0:
        return 0  # choices[0]: ignore the tokens
    return view.base_token(choices, n)
"""


@pytest.mark.slow
def test_a_pairing_compiles_the_users_functions_afresh(user_code, tmp_path, monkeypatch):
    """numba freezes the globals a function reads when it first compiles it: a pairing compiled after
    a change must not play that old code under the new key, nor cache it on disk."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))  # this test's pairings only
    m = user_code({"ks_frozen.py": FROZEN}, "ks_frozen")
    assert m.limit() == 0  # compiled now, T = 0 frozen in
    m.T = 1
    shy = KernelStrategy("heuristic", token=m.tok, name="shy")
    got = sim.simulate(players=4, games=60, seed=1, strategy=shy)
    assert got["location_track"].max() == 0  # limit() is 1: never fights a henchman
    assert m.limit() == 0  # the user's own function is left as it was
    # the same strategy again plays the same pairing; another base with the same decisions shares it
    batch = shy.batch_function()
    assert sim.simulate(players=4, games=60, seed=1, strategy=shy).equals(got)
    assert shy.batch_function() is batch
    cautious = sim.simulate(players=4, games=60, seed=1, strategy=KernelStrategy("cautious", token=m.tok))
    assert cautious["location_track"].max() == 0 and not cautious.equals(got)
    # a value read by the decisions changed since: the strategy compiles another pairing
    m.T = 0
    assert shy.batch_function() is not batch


def test_the_pairing_key_names_the_kernel_sources_this_process_imported(monkeypatch):
    """A kernel file edited while a session runs changes the sources on disk, not the kernel functions
    already imported, which a pairing compiles: its key must name the imported sources, else code
    compiled from the old ones would be cached for the processes that read the new ones."""
    from sim import _cache
    from sim.kernel.custom import pairing_key

    key = pairing_key({"token": shy_token})
    monkeypatch.setattr(_cache, "sources_hash", lambda: "an edited kernel")
    assert pairing_key({"token": shy_token}) == key


FROZEN_PATHS = {
    "ks_paths/__init__.py": "",
    "ks_paths/consts.py": "T = 0\n",
    "ks_paths/helpers.py": """
        from numba import njit

        import ks_paths.consts


        @njit
        def limit():
            return ks_paths.consts.T


        @njit
        def countdown(n):  # calls itself
            return 0 if n == 0 else limit() + countdown(n - 1)
        """,
    "ks_paths_main.py": """
        from numba import njit

        import ks_paths.helpers
        from ks_paths.helpers import countdown, limit

        PAIR = (limit, countdown)


        def make():
            @njit
            def closed():
                return limit()
            return closed


        closed = make()


        @njit
        def reads():  # through a module attribute, a closure, a tuple, a recursive helper
            return (ks_paths.helpers.limit(), closed(), PAIR[0](), countdown(2))
        """,
}


@pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaExperimentalFeatureWarning")  # PAIR[0]()
def test_the_fresh_copies_reach_every_path_to_a_helper(user_code):
    """The copies a pairing compiles reach a helper however a decision calls it, so no path serves code
    compiled before a change."""
    from sim.kernel.custom import _Fresh

    m = user_code(FROZEN_PATHS, "ks_paths_main")
    assert m.reads() == (0, 0, 0, 0)  # compiled now: T = 0 frozen in
    import ks_paths.consts

    ks_paths.consts.T = 1
    assert m.reads() == (0, 0, 0, 0)  # numba's dispatchers keep their code
    assert _Fresh().value(m.reads)() == (1, 1, 1, 2)


def test_a_strategy_on_an_object_base_is_named_by_the_object_s_name():
    """The default label is the base's own name, the same in every process (an object's repr holds its
    memory address)."""
    from sim.kernel.custom import decisions_digest

    code = decisions_digest({"token": shy_token})[:6]
    s = KernelStrategy(HeuristicStrategy(name="steady", pool_target=3), token=shy_token)
    assert s.name == f"steady+token=shy_token@{code}"
    assert KernelStrategy("bold", token=shy_token).name == f"bold+token=shy_token@{code}"


FALSE_REFUSALS = r'''
import sys
from numba import njit
from numba.extending import register_jitable
from sim.kernel.custom import KernelStrategy, pairing_key

@njit
def tok(view, choices, n):
    if max(view.resolve(view.seat), 0) >= 2:  # reads the builtin max
        return view.base_token(choices, n)
    return view.base_token(choices, n)

before = pairing_key({"token": tok})
import pandas.core._numba.extensions  # noqa: E402,F401  pandas' @overload_method(SeriesType, "max"), ...
KernelStrategy("heuristic", token=tok)
with_pandas = pairing_key({"token": tok})

@register_jitable  # a notebook cell's helper (this script is __main__, as a notebook is), never called by tok
def clamp(x, lo, hi):
    return min(max(x, lo), hi)

KernelStrategy("heuristic", token=tok, name="again")
import pandas
print(before != with_pandas, pandas.__version__)
'''


def test_an_installed_package_s_or_an_unused_helper_s_registration_is_not_refused(tmp_path):
    """pandas' numba extension registers an @overload_method named max (on its Series type): a decision that
    calls the builtin max was refused, blaming pandas; and a @register_jitable helper the decision never
    calls, in the same __main__ module, refused every KernelStrategy of a notebook. An installed package's
    registration that a name the code reads finds is not refused but enters the key, with its version."""
    import subprocess
    import sys
    from pathlib import Path

    script = tmp_path / "false_refusals.py"
    script.write_text(FALSE_REFUSALS)
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, str(script)], cwd=root, capture_output=True, text=True, timeout=600,
                         env={**__import__("os").environ, "PYTHONPATH": str(root)})
    assert out.returncode == 0, out.stderr[-2000:]
    import pandas

    assert out.stdout.split() == ["True", pandas.__version__]


# numba's refusal to compile a pairing, as the user sees it: each case's decision module and the
# words the one-line error must hold (the decision's body is line 8 of the module below)
COMPILE_FAILURES = {
    "attribute": ("return view.no_such_thing", r"line 8 \(return view\.no_such_thing\): Unknown attribute "
                  r"'no_such_thing' of type PlayerView$", False),
    "slice": ("return first(choices)[0] * 0", r"line 8 \(return first\(choices\)\[0\] \* 0\): Only accept "
              r"returning of array passed into the function as argument", True),
    "new array": ("return np.zeros(3, np.int64)[0]", r"line 8 \(return np\.zeros\(3, np\.int64\)\[0\]\): No "
                  r"implementation of function .*zeros.* found for signature zeros\(", True),
    "list": ("return [n, 1][1]", r"line 8: NRT required but not enabled", True),
}


@pytest.mark.parametrize("case", sorted(COMPILE_FAILURES))
def test_a_decision_that_does_not_compile_is_one_line_naming_it(user_code, case):
    """numba's pages (a chain of 'Failed in nopython mode' through the kernel's own functions) become
    one line: the strategy, the decisions, your file, line and code, numba's reason, and where the
    code needs numba's runtime, why the kernel has none; numba's own error stays chained."""
    import re

    from numba.core.errors import NumbaError

    body, words, runtime = COMPILE_FAILURES[case]
    mod = user_code({"broken_decision.py": f"""\
        import numpy as np
        from numba import njit
        @njit
        def first(c):
            return c[:1]
        @njit
        def token(view, choices, n):
            {body}
        """}, "broken_decision")
    with pytest.raises(StrategyError) as info:
        sim.simulate(players=2, games=3, seed=1, strategy=KernelStrategy("heuristic", token=mod.token, name="broken"))
    text = str(info.value)
    assert "\n" not in text and "Failed in" not in text, text
    assert text.startswith("strategy 'broken': KernelStrategy decisions (token) do not compile at "), text
    assert re.search(re.escape(mod.__file__) + ", " + words, text), text
    assert ("the kernel runs without numba's runtime" in text) is runtime, text
    assert isinstance(info.value.__cause__, NumbaError)


DEFAULTS = """
    from numba import njit

    T = 0


    @njit
    def limit():
        return T


    @njit
    def scaled(x, k=2, pair=(1, limit), f=limit):  # defaults: a number, a tuple holding a helper, a helper
        return x * k + pair[1]() + f()


    @njit
    def omitted(x):
        return scaled(x)


    @njit
    def explicit(x):
        return scaled(x, 2, (1, limit), limit)
    """


def test_a_helpers_default_arguments_compile_in_its_fresh_copy(user_code):
    """numba reads a function's defaults when its dispatcher is made: a copy made before its defaults were set
    could not be called without them (``missing a required argument``). A copy takes them, the helpers among
    them copied too (compiled with the values of the moment), and answers as the argument passed explicitly."""
    from sim.kernel.custom import _Fresh

    m = user_code({"ks_defaults.py": DEFAULTS}, "ks_defaults")
    assert m.omitted(1) == m.explicit(1) == 2  # compiled now: T = 0 frozen in
    m.T = 1
    fresh = _Fresh()
    omitted, explicit = fresh.value(m.omitted), fresh.value(m.explicit)
    assert omitted(1) == explicit(1) == 4 and m.omitted(1) == 2
    scaled = omitted.py_func.__globals__["scaled"]
    _, (_, pair_limit), f = scaled.py_func.__defaults__
    assert pair_limit is f is fresh.value(m.limit) is not m.limit  # the helpers in the defaults are copies
    exec(textwrap.dedent("""
        @njit
        def scaled(x, k=5, pair=(1, limit), f=limit):  # a notebook cell defines the helper again
            return x * k + pair[1]() + f()
        """), vars(m))
    assert _Fresh().value(m.omitted)(1) == 7


def test_a_default_argument_reaching_its_own_function_is_refused_in_words():
    from sim.kernel.custom import _Fresh

    @njit
    def loop(x, f=None):
        return x

    loop.py_func.__defaults__ = (loop,)
    with pytest.raises(TypeError, match=r"default arguments of .*loop reach .*loop itself"):
        _Fresh().value(loop)


READY = """
    from numba import njit

    from sim.content import constants as codes


    @njit
    def ready(view, th=2):
        return view.resolve(view.seat) >= th


    @njit
    def tok(view, choices, n):
        if ready(view):
            for i in range(n):
                if choices[i] == codes.T_HENCHMAN:
                    return i
        return view.base_token(choices, n)
    """


class ReadyAt(HeuristicStrategy):
    """The readable twin of READY's decision, ``th`` passed explicitly."""

    def __init__(self, th, **kw):
        super().__init__(**kw)
        self.th = th

    def token(self, view, choices):
        from sim.rules.choices import TokenChoice

        if TokenChoice.HENCHMAN in choices and view.resolve(view.seat) >= self.th:
            return choices.index(TokenChoice.HENCHMAN)
        return super().token(view, choices)


@pytest.mark.slow
def test_a_decision_calling_a_helper_with_a_default_argument_plays_its_twin(user_code):
    """A helper's default argument left out by the decision compiles in the pairing and plays the games of the
    value passed explicitly; the helper defined again with another default (a notebook cell) is another pairing
    and plays the new value."""
    from sim.kernel.custom import pairing_key

    m = user_code({"ks_ready.py": READY}, "ks_ready")
    games = {}
    for th in (2, 0):
        if th == 0:
            key = pairing_key({"token": m.tok})
            exec(textwrap.dedent(READY).replace("th=2", "th=0"), vars(m))
            assert pairing_key({"token": m.tok}) != key
        got = sim.simulate(players=2, games=60, seed=3, strategy=KernelStrategy("heuristic", token=m.tok, name="r"))
        want = sim.simulate(players=2, games=60, seed=3, strategy=ReadyAt(th, name="r"), engine="reference")
        assert got.equals(want), th
        games[th] = got
    assert not games[0].equals(games[2])


def test_a_pairing_compiles_its_copies_under_names_of_their_own():
    """numba names a compiled function by its module, its name and a count of the functions the process compiled;
    a pairing's copy of a kernel function (or of a decision, or an adapter) that kept the original's name could take
    the symbol of the kernel's own code loaded from the cache, compiled by another process, and be linked to it: a
    pairing then played the base strategy's games, its decisions never asked, after a plain run in the process.
    Every function a pairing compiles is named after the pairing's key."""
    from numba.core.registry import CPUDispatcher

    from sim.kernel.custom import compile_batch_function, pairing_key

    decisions = {"token": shy_token, "rest": coin_rest}
    key = pairing_key(decisions)
    batch = compile_batch_function(decisions, key)
    seen, todo, kernel = set(), [batch], []
    while todo:  # every dispatcher the pairing's code reaches through its globals
        d = todo.pop()
        if id(d) in seen:
            continue
        seen.add(id(d))
        kernel.append(d)
        todo += [v for v in vars(d.py_func.__globals__.get("decide", object())).values()
                 if isinstance(v, CPUDispatcher)] if "decide" in d.py_func.__globals__ else []
        todo += [v for v in d.py_func.__globals__.values() if isinstance(v, CPUDispatcher)]
    own = [d for d in kernel if d.py_func.__qualname__.endswith(f"__pairing_{key[:32]}")]
    names = {d.py_func.__qualname__.split("__pairing_")[0] for d in own}
    assert {"simulate_batch", "play_game", "encounter_phase", "token", "rest", "shy_token", "coin_rest"} <= names, names
    for d in kernel:  # a function of the kernel's own name is the kernel's own, shared, not a copy
        if d not in own and d.py_func.__module__.startswith("sim.kernel"):
            m = __import__(d.py_func.__module__, fromlist=["_"])
            assert any(v is d for v in vars(m).values()), d.py_func.__qualname__


# --- the view's index arguments: an index out of its range is refused, naming the decision -----------
@njit
def rest_reads_the_seat_before(view):
    return view.resolve(view.seat - 1) > 2  # at seat 0: view.resolve(-1)


@njit
def level2_reads_past_the_henchmen(view, players, k, out):
    for i in range(k):
        out[i] = i
    if view.henchman(view.n_henchmen) > 0:  # one past the last henchman
        out[0] = 1


def test_an_index_out_of_range_is_refused_naming_the_decision(ctx):
    """The kernel read ``st[player_base(pk, -1) + P_RESOLVE]`` (another block's number) and played on; the
    adapter's view now refuses it, naming the decision, in the readable engine's words."""
    from sim.kernel.custom import VIEW_REFUSED, _adapter
    from tests.kernel_support import reference_game

    g = reference_game(4, "heuristic", 3, 0)[0]  # the position of ``ctx``
    f = _adapter("rest", rest_reads_the_seat_before)
    for seat in (1, 2, 3):  # the seat before: legal
        assert f(ctx, seat) == (g.players[seat - 1].resolve > 2)
    with pytest.raises(ValueError) as info:
        f(ctx, 0)
    assert str(info.value) == (VIEW_REFUSED + "decision rest asked view.resolve(-1): who must be 0 to 3 (a seat)")
    ks = KernelStrategy("heuristic", rest=rest_reads_the_seat_before, name="prev")
    named = ks.refusal(info.value)
    assert isinstance(named, StrategyError)
    assert str(named) == "strategy 'prev': decision rest asked view.resolve(-1): who must be 0 to 3 (a seat)"
    with pytest.raises(ValueError, match=r"decision setup_level2_henchmen asked view\.henchman\(4\): h must be 0 to "
                                         r"3 \(a henchman\)$"):
        _adapter("setup_level2_henchmen", level2_reads_past_the_henchmen)(ctx, 1, 2, np.zeros(2, np.int64))


def test_the_plain_replay_refuses_an_index_out_of_range_in_the_same_words():
    from sim.twin import _Plain

    with pytest.raises(ValueError, match=r"^KernelStrategy view: decision rest asked view\.resolve\(-1\): who must "
                                         r"be 0 to 3 \(a seat\)$"):
        _Plain().decision("rest", rest_reads_the_seat_before)(_plain_position(), 0)


# --- the base strategy's answer to a decision without options: view.base_rest() ----------------------


def test_every_decision_without_options_has_a_base_call():
    from sim.kernel.custom import SIGNATURES

    assert sorted(OPTIONLESS) == sorted(name for name, args in SIGNATURES.items() if not args)


def test_the_base_answer_to_a_decision_without_options_is_a_call(ctx):
    """``view.base_rest()`` is the base strategy's own answer, as ``view.base_token(choices, n)`` is (it was a
    property, and the call a numba TypingError of 84 lines); compiled and replayed as plain Python."""
    import sim.kernel.strategy as builtin
    from sim.kernel.custom import _adapter
    from sim.twin import _Plain

    plain_ctx = _plain_position()
    for name, user in OPTIONLESS.items():
        for seat in range(4):
            want = bool(getattr(builtin, name)(ctx, seat))
            assert bool(_adapter(name, user)(ctx, seat)) == want, (name, seat)
            assert bool(_Plain().decision(name, user)(plain_ctx, seat)) == want, (name, seat)


@njit
def rest_if_base(view):
    if view.base_rest:  # the call forgotten: a bound method, which would always be true
        return True
    return False


@njit
def rest_not_base(view):
    return not view.base_rest


@njit
def status_base_uncalled(view):
    return view.base_status_top_secret


@njit
def token_base_uncalled(view, choices, n):
    return view.base_token


UNCALLED = (("rest", rest_if_base), ("rest", rest_not_base), ("status_top_secret", status_base_uncalled),
            ("token", token_base_uncalled))


def test_the_base_method_without_the_call_is_refused_in_one_line(ctx):
    """``if view.base_rest:`` would read the method itself, always true: numba refuses to type it, and the
    strategy's error says what to write; the plain replay refuses it with the same line."""
    from sim.kernel.custom import _adapter
    from sim.twin import _Plain

    for name, user in UNCALLED:
        method = f"base_{name}"
        call = "view.base_token(choices, n)" if name == "token" else f"view.{method}()"
        line = f"view.{method} is a method, not a value: call it, {call}"
        args = (np.zeros(4, np.int64), 3) if name == "token" else ()
        with pytest.raises(Exception) as info:
            _adapter(name, user)(ctx, 0, *args)
        named = KernelStrategy("heuristic", **{name: user}, name="forgot").refusal(info.value)
        assert str(named).startswith("strategy 'forgot': KernelStrategy decisions"), named
        assert str(named).endswith(": " + line), named
        with pytest.raises(TypeError, match=rf"^{re.escape(line)}$"):
            _Plain().decision(name, user)(_plain_position(), 0, *args)


# --- the options a decision is handed: exactly the count, and a base call may not read past them ------


@njit
def token_sees_only_its_options(view, choices, n):
    if len(choices) != n:
        raise ValueError("choices is not n long")
    best = 0
    for i, c in enumerate(choices):  # every option is one (nothing stale after them)
        best = i if c > choices[best] else best
    return best


@njit
def move_sees_only_its_options(view, moves, n):
    if moves.shape[0] != n:
        raise ValueError("moves is not n long")
    return view.base_move(moves, n)


@njit
def reroll_sees_only_its_dice(view, successes, henchman, no_advance, dice, faces, n):
    if len(dice) != n or len(faces) != n:
        raise ValueError("dice or faces not n long")
    return view.base_reroll(successes, henchman, no_advance, dice, faces, n)


@njit
def skill_up_sees_only_its_options(view, skills, n):
    if len(skills) != n:
        raise ValueError("skills is not n long")
    return view.base_skill_up(skills, n)


@njit
def level2_writes_its_k(view, players, k, out):
    if len(out) != k:
        raise ValueError("out is not k long")
    view.base_setup_level2_henchmen(players, k, out)


def test_a_decision_is_handed_exactly_its_options():
    """The kernel keeps options in scratch regions longer than the count: ``moves`` was handed 200 rows
    for 3 moves, so ``len(moves)`` or ``for m in moves`` read stale rows of earlier turns (the readable
    engine hands exactly the options). Each array is now cut to its count."""
    ks = KernelStrategy("heuristic", token=token_sees_only_its_options, move=move_sees_only_its_options,
                        reroll=reroll_sees_only_its_dice, skill_up=skill_up_sees_only_its_options,
                        setup_level2_henchmen=level2_writes_its_k, name="exact")
    for players in (1, 4):
        assert sim.simulate(players, 300, ks, seed=5).height == 300


@njit
def token_past_its_options(view, choices, n):
    return view.base_token(choices, n + 5)


@njit
def reroll_past_its_dice(view, successes, henchman, no_advance, dice, faces, n):
    return view.base_reroll(successes, henchman, no_advance, dice, faces, n + 1)


@njit
def token_negative_count(view, choices, n):
    return view.base_token(choices, -1)


@pytest.mark.parametrize("user, name, text", [
    (token_past_its_options, "token",
     r"decision token asked view\.base_token\(choices, (\d+)\): n must be 0 to (\d+) \(the options in choices\)$"),
    (token_negative_count, "token",
     r"decision token asked view\.base_token\(choices, (-1)\): n must be 0 to (\d+) \(the options in choices\)$"),
    (reroll_past_its_dice, "reroll",
     r"decision reroll asked view\.base_reroll\(successes, henchman, no_advance, dice, faces, (\d+)\): n must be "
     r"0 to (\d+) \(the options in dice and faces\)$"),
])
def test_a_base_call_counting_past_its_options_is_refused(user, name, text):
    """``view.base_token(choices, n + 5)`` had the built-in decision read past the options; it is refused,
    compiled and replayed as plain Python, in one line naming the decision and the legal counts."""
    from sim.twin import _Plain

    ks = KernelStrategy("heuristic", name="past", **{name: user})
    with pytest.raises(StrategyError, match=r"^strategy 'past': " + text) as info:
        sim.simulate(4, 50, ks, seed=2)
    asked, most = (int(x) for x in re.search(text, str(info.value)).groups())
    assert asked != most and (asked < 0 or asked > most)
    arrays = {"token": (np.array([0, 1, 2], np.int64), 3),
              "reroll": (2, -1, False, np.array([0, 1], np.int64), np.array([3, 4], np.int64), 2)}[name]
    with pytest.raises(ValueError, match=r"^KernelStrategy view: " + text):
        _Plain().decision(name, user)(_plain_position(), 0, *arrays)
