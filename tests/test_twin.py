"""check_twin: a strategy written against the player's view plays identically on both engines.

The example strategy (``strategies/examples.py``) shares one rule, written against
the view's names, between its Python class and its kernel twin; a twin that reads
one more fact is caught, with the game and the decision where the two part ways.
"""

import re

import pytest
from numba import njit

from tests.kernel_support import NO_JIT, OPTIONLESS

if NO_JIT:
    pytest.skip("kernel strategies are compiled code", allow_module_level=True)

from sim.content import constants as codes  # noqa: E402
from sim.kernel.custom import KernelStrategy  # noqa: E402
from sim.rules.errors import StrategyError  # noqa: E402
from sim.twin import check_twin, kernel_decisions, python_decisions  # noqa: E402
from strategies import HeuristicStrategy  # noqa: E402
from strategies.examples import Brave, brave_kernel  # noqa: E402


@pytest.mark.slow
def test_the_example_twins_agree_on_2000_games():
    report = check_twin(Brave(name="brave"), brave_kernel, players=[1, 4], games=2000, seed=3)
    assert report.agree, str(report)
    assert str(report).startswith("agree: 2,000 games at 1, 4 players")


def test_every_decision_is_the_same_in_the_same_order():
    """The decision logs behind check_twin's diagnosis: identical for twins, call for call."""
    for players, game in ((1, 3), (4, 1), (6, 2)):
        a = python_decisions(Brave(name="brave"), players, 1, game)
        b = kernel_decisions(brave_kernel, players, 1, game)
        assert len(a) > 50
        assert [(d.name, d.seat, d.turn, d.answer) for d in a] == [(d.name, d.seat, d.turn, d.answer) for d in b]


@njit
def rash_token(view, choices, n):
    """Brave's rule with one more fact (Resolve > 2): not Brave's twin."""
    if view.resolve(view.seat) > 2 and view.injuries(view.seat) <= 1:
        for i in range(n):
            if choices[i] == codes.T_HENCHMAN:
                return i
    return view.base_token(choices, n)


def test_a_false_twin_is_caught_at_its_first_differing_decision():
    report = check_twin(Brave(name="brave"), KernelStrategy("heuristic", token=rash_token, name="rash"),
                        players=4, games=300, seed=1)
    assert not report.agree
    assert report.python.name == report.kernel.name == "token"
    assert report.python.seat == report.kernel.seat and report.python.answer != report.kernel.answer
    # everything before it agreed: the replay reached the same decision on both engines
    i = report.python.index
    a = python_decisions(Brave(name="brave"), 4, 1, report.game)
    b = kernel_decisions(KernelStrategy("heuristic", token=rash_token, name="rash"), 4, 1, report.game)
    assert [(d.name, d.answer) for d in a[:i]] == [(d.name, d.answer) for d in b[:i]]
    assert a[i] == report.python and b[i] == report.kernel
    text = str(report)
    assert f"game {report.game}" in text and "token(seat" in text and "differs in" in text


@njit
def past_the_last_token(view, choices, n):
    return n  # one past the last option


def test_the_replay_refuses_an_illegal_answer_naming_the_strategy():
    """The kernel's decisions replayed as plain Python refuse an illegal answer as the compiled kernel
    does: the readable engine's StrategyError, naming the strategy."""
    cheat = KernelStrategy("heuristic", token=past_the_last_token, name="cheat")
    with pytest.raises(StrategyError, match=r"^strategy 'cheat': KernelStrategy decision token answered (\d+) "
                                            r"\(legal: 0 to \d+\)$"):
        kernel_decisions(cheat, 4, 1, 0)


def test_check_twin_refuses_wrong_arguments():
    with pytest.raises(TypeError, match="KernelStrategy"):
        check_twin(Brave(name="brave"), "heuristic")
    with pytest.raises(TypeError, match="strategies.Strategy"):
        check_twin("heuristic", brave_kernel)


def test_check_twin_takes_player_counts_as_simulate_does():
    """A numpy integer (a count from an array) was iterated, 'numpy.int64' object is not iterable; True, a
    float, a string or an empty list are refused in one line, naming players."""
    import numpy as np

    report = check_twin(Brave(name="brave"), brave_kernel, players=np.int64(2), games=20)
    assert report.agree and report.players == (2,), str(report)
    assert check_twin(Brave(name="brave"), brave_kernel, players=np.array([1, 2]), games=20).players == (1, 2)
    for players, error, says in [
        (True, TypeError, "check_twin: players must be a player count or a list of them, got bool True"),
        (np.True_, TypeError, "check_twin: players must be a player count or a list of them, got bool np.True_"),
        ("4", TypeError, "check_twin: players must be a player count or a list of them, got str '4'"),
        ([2, 4.0], TypeError, "check_twin: players must be a player count or a list of them, got float 4.0 in [2, 4.0]"),
        ([], ValueError, "check_twin: players is empty: give a player count or a list of them"),
    ]:
        with pytest.raises(error) as e:
            check_twin(Brave(name="brave"), brave_kernel, players=players, games=20)
        assert str(e.value) == says
    # no game compared would report agreement
    for games in (0, -5, 2.5, True):
        with pytest.raises(ValueError, match=rf"^check_twin: games must be a whole number of at least 1, got {games!r}$"):
            check_twin(Brave(name="brave"), brave_kernel, players=2, games=games)


@njit
def readme_rash_token(view, choices, n):
    """The README's false twin: Brave's rule with ``> 2`` for ``>= 2``."""
    me = view.seat
    if view.resolve(me) > 2 and view.injuries(me) <= 1:
        for i in range(n):
            if choices[i] == codes.T_HENCHMAN:
                return i
    return view.base_token(choices, n)


@pytest.mark.slow
def test_the_readme_shows_what_check_twin_prints():
    import re
    from pathlib import Path

    readme = " ".join((Path(__file__).resolve().parent.parent / "README.md").read_text().split())
    got = str(check_twin(Brave(name="brave"), KernelStrategy("heuristic", token=readme_rash_token, name="rash"),
                         players=4, games=2000))
    head, tail = got.split(" first differs in ")
    assert f"`{head} first differs in " in readme
    assert re.search(re.escape(tail.split("; ", 1)[1]) + "`", readme), tail


class Warm(Brave):
    """Brave once warmed up: the heuristic's token rule for its first 3,000 token decisions (a strategy
    that keeps state between games)."""

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.seen = 0

    def token(self, view, choices):
        self.seen += 1
        if self.seen <= 3000:
            from strategies import HeuristicStrategy

            return HeuristicStrategy.token(self, view, choices)
        return super().token(view, choices)


def test_a_strategy_that_keeps_state_is_replayed_as_it_played():
    """The differing game is replayed after the games before it, from the object as the run found it:
    the replay's first differing decision is the heuristic's token rule against Brave's, not a claim
    that every decision agreed (the object, left after the run, decided otherwise)."""
    report = check_twin(Warm(name="warm"), brave_kernel, players=4, games=300, seed=1)
    assert not report.agree
    assert report.python is not None and report.python.name == report.kernel.name == "token", str(report)
    assert report.python.answer != report.kernel.answer
    assert "cannot be copied" not in str(report)


def test_the_plain_clones_keep_their_functions_so_no_id_is_answered_twice():
    """The plain replay memoizes clones by the compiled function's id. Each decision's adapter is made
    afresh; had a freed one's id been reused by the next, the replay would have run the wrong decision
    (seen: setup_level2_henchmen answered by token's adapter)."""
    import gc
    import weakref

    from sim.kernel.custom import _adapter
    from sim.twin import _Plain

    plain = _Plain()
    made = _adapter("token", rash_token)
    ref = weakref.ref(made)
    clone = plain.value(made)
    del made
    gc.collect()
    assert ref() is not None and plain.value(ref()) is clone
    for _ in range(50):  # fresh adapters, each dropped at once: every one gets its own clone
        assert plain.value(_adapter("token", rash_token)) is not clone


# --- the view's indices: legal ones play identical games, one out of range is refused by both ---------
@njit
def prev_rest(view):
    """At 2 players, the user report's rule: seat 0 asks view.resolve(-1). At 1 and 4: the seat after, a legal
    index, and the base strategy's answer (a call, like the other decisions without options)."""
    if view.n_players == 2:
        return view.resolve(view.seat - 1) > 2
    if view.resolve((view.seat + 1) % view.n_players) > 4:
        return False
    return view.base_rest()


class PrevRest(HeuristicStrategy):
    """The readable twin of ``prev_rest`` (and of the base calls, ``super()``'s answers)."""

    def rest(self, view):
        if view.n_players == 2:
            return view.resolve(view.seat - 1) > 2
        if view.resolve((view.seat + 1) % view.n_players) > 4:
            return False
        return super().rest(view)


PREV_RULE = "decision rest asked view.resolve(-1): who must be 0 to 1 (a seat)"  # at 2 players


@pytest.mark.slow
def test_both_engines_refuse_an_index_out_of_range_and_agree_on_legal_ones():
    """The user report: ``view.resolve(view.seat - 1)`` at seat 0 read the last seat's Resolve in the readable
    engine and another block's number in the kernel, which played on without a word. Both refuse it now in the
    same words, and a rule that asks legal indices plays the same games on both."""
    import sim

    ks = KernelStrategy("heuristic", rest=prev_rest, heal_all=OPTIONLESS["heal_all"],
                        intel_to_pool=OPTIONLESS["intel_to_pool"], use_watch=OPTIONLESS["use_watch"],
                        status_top_secret=OPTIONLESS["status_top_secret"], name="prev")
    want = f"strategy 'prev': {PREV_RULE}"
    with pytest.raises(StrategyError) as kernel:
        sim.simulate(players=2, games=300, seed=1, strategy=ks)
    with pytest.raises(StrategyError) as python:
        sim.simulate(players=2, games=300, seed=1, strategy=PrevRest(name="prev"), engine="reference")
    assert str(kernel.value) == str(python.value) == want
    with pytest.raises(StrategyError, match=re.escape(want)):
        check_twin(PrevRest(name="prev"), ks, players=2, games=300)
    report = check_twin(PrevRest(name="prev"), ks, players=[1, 4], games=300, seed=1)
    assert report.agree, str(report)
    got = sim.simulate(players=4, games=300, seed=1, strategy=ks).drop("strategy")
    assert not got.equals(sim.simulate(players=4, games=300, seed=1, strategy="heuristic").drop("strategy"))
