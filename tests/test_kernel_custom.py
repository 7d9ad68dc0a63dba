"""Your own @njit decisions in the kernel play the same games as their readable twin."""

import pytest
from numba import njit

import sim
from sim.kernel.custom import KernelStrategy
from sim.rng import STRATEGY, next_below_nb
from strategies import HeuristicStrategy
from tests.kernel_support import NO_JIT

# Compiling a pairing needs numba; under NUMBA_DISABLE_JIT=1 there is nothing to compile.
pytestmark = pytest.mark.skipif(NO_JIT, reason="custom decisions are compiled code")


@njit
def shy_token(ctx, seat, choices, n):
    return 0  # choices[0] is always "ignore the tokens"


@njit
def coin_rest(ctx, seat):
    return next_below_nb(ctx.rs, STRATEGY, 2) == 1


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
