"""Strategy registry: ``strategies.make("heuristic", exchange_when="early")``."""

from __future__ import annotations

from collections.abc import Callable

from strategies.base import Strategy
from strategies.heuristic import BOLD, CAUTIOUS, HeuristicParams, HeuristicStrategy
from strategies.random_strategy import RandomStrategy
from strategies.tuned import make_tuned

_REGISTRY: dict[str, Callable[..., Strategy]] = {}
# strategies whose factory takes the player count (players=...): one parameter set per count
_PER_PLAYERS: set[str] = set()


def register(name: str, factory: Callable[..., Strategy], per_players: bool = False) -> None:
    """Register a strategy factory under a name (a factory takes keyword parameters).

    With ``per_players`` the factory also takes ``players=`` (the seat count) and
    :func:`make` passes it on.
    """
    if name in _REGISTRY:
        raise ValueError(f"strategy {name!r} is already registered")
    _REGISTRY[name] = factory
    if per_players:
        _PER_PLAYERS.add(name)


def per_player_count(name: str) -> bool:
    """Whether ``name``'s factory takes the player count (one parameter set per count)."""
    return name in _PER_PLAYERS


def names() -> list[str]:
    """Registered strategy names."""
    return sorted(_REGISTRY)


def make(name: str, players: int | None = None, **params) -> Strategy:
    """Build a registered strategy with optional parameters.

    ``players`` (the seat count) matters only to strategies with one parameter set per
    player count (``tuned``), which refuse to be built without it.
    """
    if name not in _REGISTRY:
        raise ValueError(f"unknown strategy {name!r}; registered: {', '.join(names())}")
    if name in _PER_PLAYERS:
        return _REGISTRY[name](players=players, **params)
    return _REGISTRY[name](**params)


def _preset(name: str, preset: dict) -> Callable[..., Strategy]:
    def factory(**params) -> Strategy:
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

__all__ = ["Strategy", "HeuristicStrategy", "HeuristicParams", "RandomStrategy", "make", "names", "per_player_count", "register", "BUILT_IN"]
