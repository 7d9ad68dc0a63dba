"""Summaries with honest uncertainty: win rates with Wilson intervals, outcome shares."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

import numpy as np

from sim.rules.state import OUTCOME_NAMES

Z95 = 1.959963984540054


def wilson_interval(wins: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default).

    The bounds are exact at the ends: 0 wins give a lower bound of exactly 0 and
    n wins an upper bound of exactly 1 (the textbook formula leaves rounding
    noise such as 1.7e-18 there), and always ``lo <= wins / n <= hi``.
    """
    if n <= 0:
        return (0.0, 1.0)
    if not 0 <= wins <= n:
        raise ValueError(f"wilson_interval: wins must be in 0..n ({n}), got {wins}")
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if wins == 0 else min(max(0.0, centre - half), p)
    hi = 1.0 if wins == n else max(min(1.0, centre + half), p)
    return (lo, hi)


def summarize_records(records: Iterable) -> dict:
    """Summary of game records (objects with ``outcome``, ``win`` and ``turns``)."""
    outcomes: Counter = Counter()
    turns = []
    wins = 0
    for r in records:
        outcomes[r.outcome] += 1
        turns.append(r.turns)
        wins += bool(r.win)
    n = len(turns)
    lo, hi = wilson_interval(wins, n)
    t = np.array(turns, dtype=float) if turns else np.zeros(1)
    q = np.quantile(t, [0.05, 0.25, 0.5, 0.75, 0.95]) if n else [0.0] * 5
    return {
        "games": n,
        "wins": wins,
        "win_rate": wins / n if n else 0.0,
        "ci_low": lo,
        "ci_high": hi,
        "outcomes": {name: int(outcomes.get(name, 0)) for name in OUTCOME_NAMES.values()},
        "mean_turns": float(t.mean()) if n else 0.0,
        "turn_quantiles": {f"q{int(p * 100):02d}": float(v) for p, v in zip([0.05, 0.25, 0.5, 0.75, 0.95], q)},
        "timeouts": int(outcomes.get("timeout", 0)),
    }
