"""Small helpers for the words a user reads (the command line's and the library's messages alike)."""

from __future__ import annotations


def count(n: int, word: str) -> str:
    """``'1 player'``, ``'4 players'``: ``n`` and ``word`` in the number it takes."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def counts(values, word: str) -> str:
    """``'1 player'``, ``'2, 4 players'``, ``'no players'``: a list of numbers and ``word`` in the number it takes."""
    values = list(values)
    if len(values) == 1:
        return count(values[0], word)
    return f"{', '.join(map(str, values)) or 'no'} {word}s"


def params_text(params: dict) -> str:
    """``pool_target=6, exchange_when=early``: a strategy's given parameters, in their order."""
    return ", ".join(f"{k}={v}" for k, v in params.items())
