"""Exceptions of the rules engine."""


class GameOver(Exception):
    """Raised the moment a track change ends the game; the outcome is on the state."""


class RuleError(RuntimeError):
    """The engine reached a position the rules do not allow (a bug, never silenced)."""


class StrategyError(ValueError):
    """A strategy returned an illegal choice (a bug in the strategy, never silently fixed)."""
