"""Strategy registry: ``strategies.make("heuristic", exchange_when="early")``."""

from __future__ import annotations

from collections.abc import Callable

from strategies.base import Strategy
from strategies.heuristic import (
    BOLD,
    CAUTIOUS,
    HeuristicParams,
    HeuristicStrategy,
    check_param_names,
)
from strategies.random_strategy import RandomStrategy
from strategies.tuned import check_players, make_tuned


class _Frozen:
    """A dict, list, tuple, set or numpy array as :func:`_snapshot` took it: its type, and its items (a dict's as
    (key, value) pairs), each value frozen the same way; a set's items as a copy; an array's (numpy scalar's) dtype,
    shape and values (:func:`_array_values`)."""

    __slots__ = ("kind", "items")

    def __init__(self, kind, items):
        self.kind, self.items = kind, items


def _is_array(v) -> bool:
    """A numpy array or scalar (numpy imported only where such a value can exist: numpy is already loaded)."""
    import sys

    np = sys.modules.get("numpy")
    return np is not None and isinstance(v, (np.ndarray, np.generic))


def _array_values(v, depth: int):
    """An array's values as they are now: a copy of its bytes (a masked array's mask too), or where it holds Python
    objects (an object array, a record with an object field) its items as nested lists, frozen."""
    import numpy as np

    if v.dtype.hasobject:
        return _frozen(v.tolist(), depth + 1)
    mask = np.ma.getmaskarray(v).tobytes() if isinstance(v, np.ma.MaskedArray) else b""
    return v.tobytes(), mask


def _frozen(v, depth: int = 0):
    """``v`` as it is now: a dict, list, tuple or set as a :class:`_Frozen` (to 20 levels), a numpy array or scalar
    as one holding its dtype, shape and values, anything else itself."""
    if depth < 20:
        if _is_array(v):
            return _Frozen(type(v), (v.dtype, v.shape, _array_values(v, depth)))
        if isinstance(v, dict):
            return _Frozen(type(v), [(k, _frozen(x, depth + 1)) for k, x in v.items()])
        if isinstance(v, (list, tuple)):
            return _Frozen(type(v), [_frozen(x, depth + 1) for x in v])
        if isinstance(v, (set, frozenset)):
            return _Frozen(type(v), set(v))
    return v


def _snapshot(namespace) -> dict:
    """What a namespace holds (dunder names and modules left out), to tell later whether anything in it
    was replaced, or (a dict, list, tuple, set or numpy array, at any depth) changed in place."""
    import types

    return {k: _frozen(v) for k, v in namespace.items() if not k.startswith("__") and not isinstance(v, types.ModuleType)}


_PLAIN = (int, float, complex, str, bytes, bool, type(None))


def _same(now, was) -> bool:
    """Whether a value is as :func:`_snapshot` took it: a container of the same type whose items are (a set's
    equal), an array of the same type, dtype and shape whose values are, a plain number or text equal to it,
    anything else the same object."""
    if isinstance(was, _Frozen):
        if type(now) is not was.kind:
            return False
        if _is_array(now):
            dtype, shape, values = was.items
            if now.dtype != dtype or now.shape != shape:
                return False
            return _same(now.tolist(), values) if now.dtype.hasobject else _array_values(now, 0) == values
        if len(now) != len(was.items):
            return False
        if isinstance(now, dict):
            return all(k in now and _same(now[k], x) for k, x in was.items)
        if isinstance(now, (list, tuple)):
            return all(_same(a, b) for a, b in zip(now, was.items))
        return now == was.items
    return now is was or (type(now) is type(was) and isinstance(now, _PLAIN) and now == was)


def _changed(namespace, snapshot: dict) -> list[str]:
    """Names of a namespace bound, rebound, removed or changed in place since its snapshot."""
    import types

    now = {k: v for k, v in namespace.items() if not k.startswith("__") and not isinstance(v, types.ModuleType)}
    return [k for k in sorted(set(snapshot) | set(now)) if k not in snapshot or k not in now or not _same(now[k], snapshot[k])]


# the built-in families as imported: the kernel plays their decisions as its own twin code, so a method
# or module value patched in later (the Python strategy then plays otherwise) must be refused there
_PRISTINE = None


def builtin_changes() -> list[str]:
    """What of the built-in strategy families (their classes and modules) differs from the code as
    imported: ``["HeuristicStrategy._ready_to_fight", ...]``; empty when nothing was patched."""
    import strategies.base as base_mod
    import strategies.heuristic as heuristic_mod
    import strategies.random_strategy as random_mod

    spaces = {"Strategy": vars(Strategy), "HeuristicStrategy": vars(HeuristicStrategy),
              "HeuristicParams": vars(HeuristicParams), "RandomStrategy": vars(RandomStrategy),
              "strategies.base": vars(base_mod), "strategies.heuristic": vars(heuristic_mod),
              "strategies.random_strategy": vars(random_mod)}
    global _PRISTINE
    if _PRISTINE is None:
        _PRISTINE = {name: _snapshot(ns) for name, ns in spaces.items()}
        return []
    return [f"{name}.{k}" for name, ns in spaces.items() for k in _changed(ns, _PRISTINE[name])]


_REGISTRY: dict[str, Callable[..., Strategy]] = {}
# strategies whose factory takes the player count (players=...): one parameter set per count
_PER_PLAYERS: set[str] = set()


def register(name: str, factory: Callable[..., Strategy], per_players: bool = False) -> None:
    """Register a strategy factory under a name (a factory takes keyword parameters).

    With ``per_players`` the factory also takes ``players=`` (the seat count) and
    :func:`make` passes it on; a ``players`` key among the parameters is then refused (by the
    factory's ``check_params(params)`` when it has one, the heuristic's names check for ``tuned``).
    """
    if name in _REGISTRY:
        raise ValueError(f"strategy {name!r} is already registered")
    _REGISTRY[name] = factory
    if per_players:
        _PER_PLAYERS.add(name)


def per_player_count(name: str) -> bool:
    """Whether ``name``'s factory takes the player count (one parameter set per count)."""
    return name in _PER_PLAYERS


def searched_on(name: str) -> dict | None:
    """What a registered strategy's parameters were searched for (``tuned``: the pack hash and rules version of
    strategies/tuned.toml, with ``source``, the file's name), or None for a strategy whose parameters were set by
    hand."""
    ask = getattr(_REGISTRY.get(name), "searched_on", None)
    return ask() if ask is not None else None


def names() -> list[str]:
    """Registered strategy names."""
    return sorted(_REGISTRY)


def make(name: str, /, players: int | None = None, **params) -> Strategy:
    """Build a registered strategy with optional parameters.

    ``players`` (the seat count) matters only to strategies with one parameter set per
    player count (``tuned``), which refuse to be built without it. Parameters held in a
    dict (a user's, which may name anything): :func:`build`.
    """
    return build(name, params, players)


def build(name: str, params: dict | None = None, players: int | None = None) -> Strategy:
    """:func:`make` with the parameters as one dict: a ``name`` or ``players`` key in it is a parameter
    like any other (refused by the built-in strategies, which take neither), never the label or the seat
    count. ``players``, when given, is an integer from 1 to 6, as ``sim.simulate`` takes it (a TypeError
    for another type, a bool included; a ValueError out of range)."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown strategy {name!r}; registered: {', '.join(names())}")
    params = dict(params or {})
    if players is not None:  # a seat count that is not one is refused, whichever strategy takes it
        check_players(players)
    factory = _REGISTRY[name]
    if name in _PER_PLAYERS:
        if "players" in params:  # the call would take it for the seat count
            check = getattr(factory, "check_params", None)
            if check is not None:
                check(params)
            raise ValueError(f"strategy {name!r}: players is the seat count, which the game gives, not a parameter")
        built = factory(players=players, **params)
        own = factory(players=players) if params else built
    else:
        built = factory(**params)
        own = factory() if params else built
    built.name = params_label(name, own, built)
    return built


def params_label(name: str, own: Strategy, built: Strategy) -> str:
    """The label of registered strategy ``name`` built with parameters (``built``; ``own``: as registered):
    the name alone where they are its own, else the name with each parameter that differs, sorted
    (``heuristic[exchange_when=early;pool_target=5]``), so a table never names games after a level of play
    that did not play them. No comma: a mixed team's label separates its seats by one."""
    if built is own or not hasattr(built, "params"):
        return name
    mine, theirs = built.params(), own.params()
    changed = [f"{k}={v}" for k, v in sorted(mine.items()) if theirs.get(k) != v]
    return f"{name}[{';'.join(changed)}]" if changed else name


def _preset(name: str, preset: dict) -> Callable[..., Strategy]:
    def factory(**params) -> Strategy:
        check_param_names(params)  # a "name" among them is refused, not taken for the label
        return HeuristicStrategy(name=name, **{**preset, **params})

    return factory


def _random(**params) -> Strategy:
    if params:
        raise ValueError(f"strategy 'random' takes no parameters, got {', '.join(sorted(params))}")
    return RandomStrategy()


register("random", _random)
register("heuristic", _preset("heuristic", {}))
register("cautious", _preset("cautious", CAUTIOUS))
register("bold", _preset("bold", BOLD))
register("tuned", make_tuned, per_players=True)

BUILT_IN = ("random", "heuristic", "cautious", "bold")

__all__ = ["Strategy", "HeuristicStrategy", "HeuristicParams", "RandomStrategy", "build", "make", "names", "params_label", "per_player_count", "register", "BUILT_IN"]

builtin_changes()  # the snapshot, taken as the families are imported
