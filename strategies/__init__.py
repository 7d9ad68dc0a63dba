"""Strategy registry: ``strategies.make("heuristic", exchange_when="early")``."""

from __future__ import annotations

from collections.abc import Callable

from strategies.base import Strategy
from strategies.heuristic import BOLD, CAUTIOUS, HeuristicParams, HeuristicStrategy
from strategies.random_strategy import RandomStrategy

_REGISTRY: dict[str, Callable[..., Strategy]] = {}


def register(name: str, factory: Callable[..., Strategy]) -> None:
    """Register a strategy factory under a name (a factory takes keyword parameters)."""
    if name in _REGISTRY:
        raise ValueError(f"strategy {name!r} is already registered")
    _REGISTRY[name] = factory


def names() -> list[str]:
    """Registered strategy names."""
    return sorted(_REGISTRY)


def make(name: str, **params) -> Strategy:
    """Build a registered strategy with optional parameters."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown strategy {name!r}; registered: {', '.join(names())}")
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

BUILT_IN = ("random", "heuristic", "cautious", "bold")

__all__ = ["Strategy", "HeuristicStrategy", "HeuristicParams", "RandomStrategy", "make", "names", "register", "BUILT_IN"]
