"""Your own ``@njit`` decision functions in the kernel.

A :class:`KernelStrategy` starts from a built-in strategy (its id and parameter
vector) and replaces some of its decisions with numba functions you write. Each
replacement has the signature of the built-in decision of the same name in
:mod:`sim.kernel.strategy` (for example ``token(ctx, seat, choices, n) -> int``)
and reads the game through the same context ``ctx``
(:class:`sim.kernel.layout.Context`: ``ctx.pk`` the content, ``ctx.st`` the
state, ``ctx.rs`` the random streams, ...). The kernel functions that
reach a replaced decision are compiled again for that pairing (not cached: it
takes a while); everything else is the cached kernel. Example::

    from numba import njit
    import sim
    from sim.kernel.custom import KernelStrategy

    @njit
    def token(ctx, seat, choices, n):
        return 0  # choices[0] is always "ignore the tokens": never pool, exchange or fight

    shy = KernelStrategy("heuristic", token=token, name="token_shy")
    games = sim.simulate(players=4, games=100_000, strategy=shy)

Randomness must come from the game's streams (``sim.rng.next_below_nb(ctx.rs,
sim.rng.STRATEGY, n)``) so that games stay reproducible.
"""

from __future__ import annotations

import importlib
import types

from numba.core.registry import CPUDispatcher

from sim.jit import njit

KERNEL_MODULES = ("decks", "villain", "endgame", "setup", "skill_tests", "gamble", "movement", "missions",
                  "encounters", "game")
DECISIONS = (
    "setup_level2_henchmen", "setup_extras", "setup_advanced_skill", "rest", "move", "token", "use_auto_pass", "test_option", "draw_die",
    "resolve_plus_one", "reroll", "gamble_exchange", "mission_reward", "skill_up", "advanced_skill",
    "play_auto_pass", "play_two_dice", "cancel_advance", "heal_all", "intel_to_pool", "use_watch",
    "skill_down", "status_top_secret",
)


def _names(code) -> set[str]:
    """Global names a code object (and the functions nested in it) refers to."""
    out = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            out |= _names(const)
    return out


def compile_batch_function(decisions: dict):
    """The kernel's batch function with ``decisions`` replaced (compiled for this pairing)."""
    strategy_module = importlib.import_module("sim.kernel.strategy")
    modules = [importlib.import_module(f"sim.kernel.{m}") for m in KERNEL_MODULES]
    owner = {}  # id(dispatcher) -> (module, name)
    for m in modules:
        for name, obj in vars(m).items():
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == m.__name__:
                owner[id(obj)] = (m, name)
    # the functions that reach a replaced decision, directly or through other kernel functions
    marked: set[tuple] = set()
    for m in modules:
        for name, obj in vars(m).items():
            if id(obj) in owner and owner[id(obj)] == (m, name):
                used = _names(obj.py_func.__code__)
                if "decide" in used and used & set(decisions):
                    marked.add((m.__name__, name))
    changed = True
    while changed:
        changed = False
        for key in list(owner.values()):
            m, name = key
            if (m.__name__, name) in marked:
                continue
            for ref in _names(getattr(m, name).py_func.__code__):
                target = vars(m).get(ref)
                if id(target) in owner and (owner[id(target)][0].__name__, owner[id(target)][1]) in marked:
                    marked.add((m.__name__, name))
                    changed = True
                    break
    substitute = types.ModuleType(f"{strategy_module.__name__}_custom")
    substitute.__dict__.update(vars(strategy_module))
    substitute.__dict__.update(decisions)
    if "move" in decisions:  # always list the legal moves for the user's choice
        substitute.direct_move = strategy_module.list_the_moves
    envs = {m.__name__: {**vars(m), "decide": substitute} for m in modules}
    clones = {}
    for m in modules:
        for name in [n for (mod, n) in marked if mod == m.__name__]:
            f = getattr(m, name).py_func
            clone = types.FunctionType(f.__code__, envs[m.__name__], f.__name__, f.__defaults__, f.__closure__)
            options = {k: v for k, v in getattr(m, name).targetoptions.items() if k != "nopython"}
            options["cache"] = False  # the original's flags (no runtime), not cached
            clones[(m.__name__, name)] = njit(**options)(clone)
    for m in modules:
        env = envs[m.__name__]
        for k, v in list(env.items()):
            if id(v) in owner:
                om, on = owner[id(v)]
                if (om.__name__, on) in clones:
                    env[k] = clones[(om.__name__, on)]
    return clones[("sim.kernel.game", "simulate_batch")]


class KernelStrategy:
    """A built-in strategy with some decisions replaced by your ``@njit`` functions (kernel only)."""

    def __init__(self, base: str = "heuristic", *, name: str | None = None, params: dict | None = None, **decisions):
        """Check the decisions and resolve the base strategy."""
        unknown = set(decisions) - set(DECISIONS)
        if unknown:
            raise ValueError(f"unknown decision(s) {sorted(unknown)}; replaceable: {', '.join(DECISIONS)}")
        if not decisions:
            raise ValueError("give at least one decision function, e.g. token=my_token")
        for k, f in decisions.items():
            if not isinstance(f, CPUDispatcher):
                raise ValueError(f"decision {k!r} must be a numba @njit function, got {type(f).__name__}")
        from sim.run import make_team, per_player_count  # a registered name -> its strategy object

        if isinstance(base, str) and per_player_count(base):
            raise ValueError(f"KernelStrategy: base {base!r} has one parameter set per player count; "
                             f"use base='heuristic' with params=strategies.tuned.tuned_params(players)")

        self.base = make_team(base, 1, params)[0]
        self.decisions = dict(decisions)
        self.name = name or f"{base}+" + "+".join(sorted(decisions))
        self._batch = None

    def batch_function(self):
        """The compiled batch function for this pairing (compiled on first use)."""
        if self._batch is None:
            self._batch = compile_batch_function(self.decisions)
        return self._batch

    def params(self) -> dict:
        """The base strategy's parameters and the replaced decisions (recorded with results)."""
        return {"base": self.base.name, **self.base.params(), "decisions": sorted(self.decisions)}
