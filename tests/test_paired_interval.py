"""The paired difference's interval (`compare`, `paired_stats`): Tango's score interval, checked
against a published example, its own defining equation, the normal interval at large counts, and
its coverage where only a few games differ (where the normal interval was overconfident); and the
family-wise intervals `compare` prints beside it (Bonferroni over the rows)."""

import math
from functools import lru_cache
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest

from sim.compare import compare_run, family_z, paired_stats, tango_interval
from sim.results import Z95

ROOT = Path(__file__).resolve().parent.parent

KEYS = {"games", "baseline_win_rate", "win_rate", "diff", "paired_se", "paired_low", "paired_high", "unpaired_se",
        "unpaired_low", "unpaired_high", "width_ratio", "n01", "n10"}


def _normal(n01, n10, n, z=Z95):
    d = (n01 - n10) / n
    se = math.sqrt(max(n01 + n10 - (n01 - n10) ** 2 / n, 0.0)) / n
    return d - z * se, d + z * se


def _vectors(n, n01, n10, both=0):
    """Aligned win vectors: n01 games won by the cell alone, n10 by the baseline alone, both by both."""
    base, new = np.zeros(n, bool), np.zeros(n, bool)
    new[:n01] = True
    base[n01:n01 + n10] = True
    base[n01 + n10:n01 + n10 + both] = new[n01 + n10:n01 + n10 + both] = True
    return base, new


def test_published_example():
    """Cavo et al. (2012), complete response before and after consolidation therapy: 161 pairs, 6 and 16
    discordant, as worked in Fagerland, Lydersen and Laake (2014), "Recommended tests and confidence
    intervals for paired binomial proportions", Statistics in Medicine 33: 2850-2875 (and their 2017
    book, Statistical Analysis of Contingency Tables, chapter 8): Tango's asymptotic score interval
    -0.1240 to -0.0054, the Wald interval -0.1184 to -0.0058 (difference -0.0621)."""
    low, high = tango_interval(6, 16, 161)
    assert (round(low, 4), round(high, 4)) == (-0.1240, -0.0054)
    assert tuple(round(x, 4) for x in _normal(6, 16, 161)) == (-0.1184, -0.0058)


@pytest.mark.parametrize("n01,n10,n", [(6, 16, 161), (1, 7, 21), (4, 0, 20000), (0, 0, 20000), (135, 123, 20000),
                                       (0, 21, 21), (3, 0, 3)])
def test_limits_solve_the_score_equation_with_a_brute_force_likelihood(n01, n10, n):
    """At each limit d (inside (-1, 1)) the score statistic is -/+ z, with the constrained maximum-likelihood
    probability q of a baseline-alone game found here by a plain search over the likelihood, not by the
    quadratic the function solves."""

    def q_search(d):
        lo, hi = max(0.0, -d), (1 - d) / 2

        def loglik(q):
            return sum(k * math.log(p) for k, p in ((n01, q + d), (n10, q), (n - n01 - n10, 1 - 2 * q - d)) if k)

        for _ in range(200):
            a, b = lo + (hi - lo) / 3, hi - (hi - lo) / 3
            lo, hi = (a, hi) if loglik(a) < loglik(b) else (lo, b)
        return (lo + hi) / 2

    low, high = tango_interval(n01, n10, n)
    assert low <= (n01 - n10) / n <= high
    for d, want in ((low, Z95), (high, -Z95)):
        if abs(d) == 1:
            continue
        q = q_search(d)
        score = (n01 - n10 - n * d) / math.sqrt(n * (2 * q + d * (1 - d)))
        assert score == pytest.approx(want, abs=1e-5), (d, score)


def test_no_discordant_game_gives_an_interval_not_a_point():
    """Two identical win vectors: the difference is 0 and its interval +/- z^2 / (n + z^2) (0.0192 points
    over 20,000 games), where the normal interval was [0, 0]."""
    n = 20_000
    half = Z95**2 / (n + Z95**2)
    assert tango_interval(0, 0, n) == pytest.approx((-half, half), rel=1e-12)
    base, new = _vectors(n, 0, 0, both=9000)
    s = paired_stats(base, new)
    assert set(s) == KEYS
    assert (s["diff"], s["n01"], s["n10"]) == (0.0, 0, 0)
    assert s["paired_low"] == pytest.approx(-half, rel=1e-12) and s["paired_high"] == pytest.approx(half, rel=1e-12)


def test_paired_stats_gives_the_score_interval():
    """The rule-readings row with 4 games won by the alternative alone and none the other way: the score
    interval, not the normal one ([+0.0004, +0.0396] points)."""
    base, new = _vectors(20_000, 4, 0, both=8900)
    s = paired_stats(base, new)
    assert set(s) == KEYS
    assert (s["paired_low"], s["paired_high"]) == tango_interval(4, 0, 20_000)
    assert (round(100 * s["paired_low"], 4), round(100 * s["paired_high"], 4)) == (0.0008, 0.0514)
    assert s["paired_se"] == pytest.approx(2 / 20_000 * math.sqrt(1 - 4 / 20_000))  # McNemar's, as before


def test_paired_stats_takes_win_columns_as_an_analyst_holds_them():
    """A polars or pandas win column (``df["win"]``), a list or a tuple, 0/1 integers or floats: the same
    numbers as the numpy bool arrays (a Series failed in numpy's sum, a list or float array on ``~``)."""
    import pandas as pd
    import polars as pl

    base, new = _vectors(200, 9, 4, both=70)
    want = paired_stats(base, new)
    for convert in (pl.Series, pd.Series, list, tuple, lambda v: v.astype(np.int64), lambda v: v.astype(np.uint8),
                    lambda v: v.astype(float), lambda v: [int(x) for x in v], lambda v: pl.Series(v).cast(pl.Int32)):
        assert paired_stats(convert(base), convert(new)) == want
    assert paired_stats(pl.DataFrame({"win": base})["win"], new) == want


@pytest.mark.parametrize("base, new, says", [
    (np.array([1.0, 0.5, 0.0]), np.ones(3, bool),
     "paired_stats: base_wins holds 0.5 at position 1, not a win flag: give each game's win as True/False or 1/0"),
    (np.ones(3, bool), np.array([0, 1, 2]),
     "paired_stats: wins holds 2 at position 2, not a win flag: give each game's win as True/False or 1/0"),
    (np.ones(3, bool), ["yes", "no", "no"],
     "paired_stats: wins holds 'yes' at position 0, not a win flag: give each game's win as True/False or 1/0"),
    (np.ones(3, bool), np.array([1.0, np.nan, 0.0]),
     "paired_stats: wins has no result at position 1 (nan): a game without a win flag cannot be paired"),
    ("polars-null", np.ones(3, bool),
     "paired_stats: base_wins has no result at position 2 (None): a game without a win flag cannot be paired"),
    ("frame", np.ones(3, bool),
     "paired_stats: base_wins must be one win flag per game (a 1-d array, list or Series, such as df['win']), "
     "got a DataFrame of shape (3, 1)"),
    (np.ones(4, bool), np.ones(3, bool),
     "paired_stats: base_wins has 4 games and wins 3; they are not paired (give both the same games, in the same "
     "order)"),
    (np.array([], bool), [], "paired_stats: base_wins and wins are empty: no games to compare"),
])
def test_paired_stats_refuses_what_is_no_win_vector_in_one_line(base, new, says):
    """A rate, a missing result, a whole table, unequal or empty vectors: a ValueError naming it (not numpy's
    TypeError, a ZeroDivisionError or a number)."""
    import polars as pl

    base = {"polars-null": pl.Series([True, False, None]), "frame": pl.DataFrame({"win": [True] * 3})}.get(
        base if isinstance(base, str) else "", base)
    with pytest.raises(ValueError) as e:
        paired_stats(base, new)
    assert str(e.value) == says


def test_swapping_the_cells_mirrors_the_interval():
    for n01, n10, n in ((4, 0, 20_000), (6, 16, 161), (1, 7, 21), (603, 417, 20_000), (0, 21, 21)):
        low, high = tango_interval(n01, n10, n)
        assert tango_interval(n10, n01, n) == pytest.approx((-high, -low), abs=1e-15)


def test_excludes_zero_exactly_when_mcnemars_score_test_rejects():
    """At d = 0 the statistic is McNemar's (n01 - n10) / sqrt(n01 + n10): the interval leaves 0 out exactly
    when that (uncorrected) test rejects at 5%. So 4 games to none (z = 2) is still called a difference at
    95% alone (p = 0.046; the exact binomial test's p is 0.125)."""
    for n01 in range(0, 30):
        for n10 in range(0, 30):
            low, high = tango_interval(n01, n10, 20_000)
            rejects = n01 + n10 > 0 and abs(n01 - n10) / math.sqrt(n01 + n10) > Z95
            assert (low > 0 or high < 0) == rejects, (n01, n10, low, high)


def test_agrees_with_the_normal_interval_at_large_counts():
    """Many discordant games: the two intervals agree, more closely the more games (the difference is of
    order 1/n beside a half-width of order 1/sqrt(n))."""
    for scale, tol in ((1, 0.01), (100, 0.001)):
        n01, n10, n = 603 * scale, 417 * scale, 20_000 * scale  # the 1-player consequences row
        score, normal = tango_interval(n01, n10, n), _normal(n01, n10, n)
        half = (normal[1] - normal[0]) / 2
        assert abs(score[0] - normal[0]) < tol * half and abs(score[1] - normal[1]) < tol * half, (scale, score, normal)


def _coverage(interval, n, m01, m10, reps, rng):
    """Share of `reps` simulated comparisons of n games (m01 and m10 games expected to be won by one cell
    alone) whose interval holds the true difference, and its standard error."""
    p01, p10 = m01 / n, m10 / n
    counts = rng.multinomial(n, [p01, p10, 1 - p01 - p10], size=reps)
    cached = lru_cache(maxsize=None)(interval)
    true = p01 - p10
    hits = sum(lo <= true <= hi for lo, hi in (cached(int(a), int(b), n) for a, b, _ in counts))
    return hits / reps


@pytest.mark.parametrize("m01,m10", [(4, 0), (1, 0), (0.25, 0), (2, 2), (20, 10)])
def test_coverage_where_few_games_differ(m01, m10):
    """20,000 games per comparison and a handful of games expected to differ: Tango's 95% interval holds
    the true difference in at least 93% of replicates (the least over such comparisons, by enumeration, is
    about 93%: counts are discrete), less 3 standard errors of the replicate share. The normal interval held
    it in 90.6% with 4 games expected one way (the rule-readings row) and 63% with 1."""
    rng = np.random.default_rng(20261126)
    n, reps = 20_000, 20_000
    floor = 0.93 - 3 * math.sqrt(0.93 * 0.07 / reps)
    assert _coverage(tango_interval, n, m01, m10, reps, rng) >= floor
    if (m01, m10) == (1, 0):  # the check has teeth: the normal interval fails it
        assert _coverage(_normal, n, m01, m10, reps, np.random.default_rng(20261126)) < floor


def test_average_coverage_where_few_games_differ_is_not_below_95_percent():
    """Over comparisons whose expected discordant games are drawn at random from 0-20 each way (20,000 games),
    the 95% interval's coverage averages at least 95%, less 3 standard errors of the replicate share."""
    rng = np.random.default_rng(7)
    n, reps = 20_000, 20_000
    cached = lru_cache(maxsize=None)(tango_interval)
    m = rng.uniform(0, 20, size=(reps, 2))
    hits = 0
    for m01, m10 in m:
        p01, p10 = m01 / n, m10 / n
        a, b, _ = rng.multinomial(n, [p01, p10, 1 - p01 - p10])
        lo, hi = cached(int(a), int(b), n)
        hits += lo <= p01 - p10 <= hi
    assert hits / reps >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps)


def test_refuses_impossible_counts():
    for args in ((-1, 0, 10), (0, -1, 10), (6, 5, 10)):
        with pytest.raises(ValueError, match="tango_interval"):
            tango_interval(*args)


def test_readme_coverage_figures():
    """The README's coverage figures, by exact enumeration: a switch that makes the cell win g games in
    20,000 the baseline loses, none the other way (the alone-wins count is binomial)."""
    text = " ".join((ROOT / "README.md").read_text().split())
    n = 20_000

    def coverage(interval, games):
        p = games / n
        return sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(80)
                   if interval(k, 0, n)[0] <= p <= interval(k, 0, n)[1])

    four = f"{100 * coverage(tango_interval, 4):.1f}% of such comparisons, the normal interval in " \
           f"{100 * coverage(_normal, 4):.1f}%"
    one = f"at 1 game in 20,000, {100 * coverage(tango_interval, 1):.1f}% against {100 * coverage(_normal, 1):.1f}%"
    assert four in text and one in text, (four, one)
    half = Z95**2 / (n + Z95**2)
    assert f"(±{100 * half:.2f} points over 20,000 games), not [0, 0]" in text


def test_family_z_is_bonferronis():
    assert family_z(1) == Z95
    assert family_z(72) == pytest.approx(NormalDist().inv_cdf(1 - 0.05 / 144), rel=1e-15)
    assert family_z(72) == pytest.approx(3.3918, abs=1e-4)
    assert family_z(10, level=0.9) == pytest.approx(NormalDist().inv_cdf(1 - 0.1 / 20), rel=1e-15)
    with pytest.raises(ValueError, match="family_z"):
        family_z(0)


def test_family_wise_intervals_hold_together():
    """Families of 72 comparisons (as many as `compare results/rule_readings` prints), each with 0-20 games
    expected to differ each way over 20,000: all 72 family-wise intervals hold their true differences in at
    least 95% of families, less 3 standard errors of the share. The plain 95% intervals all hold in few."""
    rng = np.random.default_rng(20261127)
    n, rows, families = 20_000, 72, 2000
    z = family_z(rows)
    plain, wide = lru_cache(maxsize=None)(tango_interval), lru_cache(maxsize=None)(lambda a, b: tango_interval(a, b, n, z))
    all_wide = all_plain = 0
    for _ in range(families):
        m = rng.uniform(0, 20, size=(rows, 2))
        p = m / n
        counts = [rng.multinomial(n, [p01, p10, 1 - p01 - p10]) for p01, p10 in p]
        true = p[:, 0] - p[:, 1]
        all_wide += all(lo <= t <= hi for t, (lo, hi) in zip(true, (wide(int(a), int(b)) for a, b, _ in counts)))
        all_plain += all(lo <= t <= hi for t, (lo, hi) in zip(true, (plain(int(a), int(b), n) for a, b, _ in counts)))
    assert all_wide / families >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / families)
    assert all_plain / families < 0.25  # about 0.95 ** 72 = 2.5%: one row in 20 misses by chance


def test_compare_gives_every_row_its_family_wise_interval():
    """On the committed rule readings: 72 rows, each with its paired interval at Bonferroni's level over 72."""
    table, _ = compare_run(ROOT / "results" / "rule_readings", {"setup": "default"})
    assert table.height == 72 and (table["family_size"] == 72).all()
    z = family_z(72)
    for r in table.iter_rows(named=True):
        low, high = tango_interval(r["n01"], r["n10"], r["games"], z)
        assert (r["familywise_low"], r["familywise_high"]) == (low, high)
        assert low < r["paired_low"] <= r["diff"] <= r["paired_high"] < high
