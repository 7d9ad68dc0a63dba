"""Honest uncertainty: the Wilson interval of a win rate (summaries themselves: sim/tally.py)."""

from __future__ import annotations

import math

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
