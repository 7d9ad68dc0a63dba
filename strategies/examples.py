"""A worked example: one strategy written against the player's view, in Python and on the kernel.

``Brave`` is the heuristic, except that it takes on every henchman it meets while
it has Resolve to spare and at most one injury. The rule is one plain function,
:func:`ready_to_fight`, written against the player's view: the readable engine
calls it as Python (``view`` a :class:`sim.rules.state.PlayerView`), the kernel
calls the same source compiled (``view`` a :mod:`sim.kernel.view` view, the same
attributes). ``sim.twin.check_twin(Brave(name="brave"), brave_kernel)`` shows
that the two play identical games; the README's walk-through builds it step by step.
"""

from __future__ import annotations

from numba import njit

from sim.content import constants as codes
from sim.kernel.custom import KernelStrategy
from sim.rules.choices import TokenChoice
from strategies.heuristic import HeuristicStrategy


def ready_to_fight(view) -> bool:
    """Resolve to spare, at most one injury: fight the henchman (the rule both twins share)."""
    me = view.seat
    return view.resolve(me) >= 2 and view.injuries(me) <= 1


class Brave(HeuristicStrategy):
    """The readable twin: the heuristic, but ready to fight every henchman it meets."""

    def token(self, view, choices):
        if TokenChoice.HENCHMAN in choices and ready_to_fight(view):
            return choices.index(TokenChoice.HENCHMAN)
        return super().token(view, choices)


ready_to_fight_nb = njit(ready_to_fight)  # the same rule, compiled


@njit
def brave_token(view, choices, n):
    """The kernel twin of ``Brave.token`` (choices: codes T_*; ``view.base_token`` is super().token)."""
    if ready_to_fight_nb(view):
        for i in range(n):
            if choices[i] == codes.T_HENCHMAN:
                return i
    return view.base_token(choices, n)


def brave(**params) -> Brave:
    """``[strategy.brave] module = "strategies.examples:brave"`` (the readable engine)."""
    return Brave(name="brave", **params)


brave_kernel = KernelStrategy("heuristic", token=brave_token, name="brave")
