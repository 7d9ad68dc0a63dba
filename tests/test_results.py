"""Wilson intervals at the ends, and charts of cells with no (or only) wins."""

from __future__ import annotations

import math

import polars as pl
import pytest

from sim.charts import win_rate_by_players
from sim.results import wilson_interval

N_MAX = 5000


def test_wilson_ends_are_exact_for_every_n():
    bad = [n for n in range(1, N_MAX + 1) if wilson_interval(0, n)[0] != 0.0 or wilson_interval(n, n)[1] != 1.0]
    assert bad == []


@pytest.mark.parametrize("n", [1, 2, 3, 7, 10, 33, 100, 997, 1000, 4999, 5000])
def test_wilson_contains_the_estimate_for_every_count(n):
    for k in range(n + 1):
        lo, hi = wilson_interval(k, n)
        assert 0.0 <= lo <= k / n <= hi <= 1.0, (k, n, lo, hi)
        assert math.isfinite(lo) and math.isfinite(hi)


def test_wilson_property_over_all_n_at_the_edges():
    # the counts next to the ends, where rounding matters most
    for n in range(1, N_MAX + 1):
        for k in {0, 1, n // 2, n - 1, n}:
            if 0 <= k <= n:
                lo, hi = wilson_interval(k, n)
                assert 0.0 <= lo <= k / n <= hi <= 1.0, (k, n, lo, hi)


def test_wilson_matches_the_textbook_formula_inside():
    z = 1.959963984540054
    n, k = 400, 130
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert wilson_interval(k, n) == pytest.approx((centre - half, centre + half), abs=1e-15)


def test_wilson_refuses_impossible_counts():
    with pytest.raises(ValueError, match="wins"):
        wilson_interval(5, 4)


def _summary(rows):
    return pl.DataFrame(rows)


def test_chart_draws_cells_with_zero_and_all_wins(tmp_path):
    # 1000 games: the textbook formula's lower bound for 0 wins is about 1.7e-18 there,
    # which made the error bar negative and matplotlib refuse the chart
    rows = []
    for players, (wins, n) in zip(range(1, 7), [(0, 1000), (0, 3), (0, 4999), (7, 7), (500, 1000), (0, 1)]):
        lo, hi = wilson_interval(wins, n)
        rows.append({"players": players, "strategy": "random", "variant": "standard", "characters": "default",
                     "setup": "default", "games": n, "wins": wins, "win_rate": wins / n, "ci_low": lo, "ci_high": hi})
    path = win_rate_by_players(_summary(rows), tmp_path / "w.png")
    assert path.stat().st_size > 0


def test_chart_tolerates_rounding_noise_in_stored_intervals(tmp_path):
    # summaries written before the fix carry a lower bound a hair above 0 for 0 wins
    rows = [{"players": 2, "strategy": "random", "variant": "standard", "characters": "default",
             "setup": "default", "games": 1000, "wins": 0, "win_rate": 0.0, "ci_low": 1.7e-18, "ci_high": 0.0038}]
    assert win_rate_by_players(_summary(rows), tmp_path / "w.png").stat().st_size > 0
