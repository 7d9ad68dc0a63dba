"""Paired comparisons under common random numbers.

Every cell of a study plays the same game indices of the same seed, so two
cells that differ only in strategy, variant, line-up or setup play the same
games (the same random draws for dice, shuffles and tokens; they part only
where the difference makes them) and can be compared game for game. Cells of different
player counts play other games (other seats, another set-up); compare still
pairs them by seed and game index, which keeps the paired interval valid, but
says so (``pairing``).
With ``n01`` games lost by the baseline and won by the cell, and ``n10`` the
reverse, the paired difference in win rate is ``(n01 - n10) / n`` with
standard error ``sqrt(n01 + n10 - (n01 - n10)**2 / n) / n`` (McNemar); the
unpaired standard error ``sqrt(p1 (1 - p1) / n + p0 (1 - p0) / n)`` is shown
beside it. The paired interval is Tango's score interval (:func:`tango_interval`),
not the normal one ``diff +/- 1.96 se``: a reading that changes a handful of
games in 20,000 gives a few discordant games, where the normal interval is
overconfident (with none it has width 0).

Each such interval is 95% on its own. ``compare`` prints one per cell, often
dozens, and a few of them exclude the true difference by chance alone (about
1 in 20), so it also gives each row a *family-wise* interval: the same
interval at Bonferroni's level ``1 - 0.05 / rows`` (:func:`family_z`), which
holds for all the rows printed together with at least 95% confidence.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from statistics import NormalDist

import numpy as np
import polars as pl

from sim.experiments import DIMENSIONS
from sim.results import Z95
from sim.tally import unpack_wins

# a comma that starts the next DIMENSION=VALUE; any other comma is part of a value
_NEXT_PAIR = re.compile(r",(?=\s*[A-Za-z_][A-Za-z0-9_-]*\s*=)")


class BaselineError(ValueError):
    """A baseline (``--baseline``, or the spec's ``[compare] baseline``) that names no cell of the run, or
    that no cell pairs with."""


def check_dimension(name, where: str) -> None:
    """Refuse a baseline key that is no dimension of the cells, listing those there are (``where`` says whose)."""
    if name not in DIMENSIONS:
        raise ValueError(f"{where}: unknown dimension {name!r}; use {', '.join(DIMENSIONS)}")


def parse_baseline(text: str | None) -> dict:
    """``"strategy=heuristic,variant=standard"`` -> dict (player counts as ints).

    The text splits only at a comma followed by ``NAME=``, so a value may hold commas: a mixed team
    (``strategy=heuristic,bold,cautious``, its seats in order), a combined variant
    (``variant=dirty-lobo,dirty-location``) or a line-up (``characters=Calli Dagger,Nika Shizuka``).
    Spaces around a value's commas are dropped (the cells label such values without them).
    """
    out = {}
    for part in _NEXT_PAIR.split(text or ""):
        if not part.strip():
            continue
        if "=" not in part:
            raise ValueError(f"--baseline expects DIMENSION=VALUE[,...], got {part.strip()!r}")
        k, v = (x.strip() for x in part.split("=", 1))
        check_dimension(k, "--baseline")
        if k in out:
            raise ValueError(f"--baseline names {k} twice")
        v = ",".join(w.strip() for w in v.split(","))
        if not v or "" in v.split(","):
            raise ValueError(f"--baseline {k}: empty value in {part.strip()!r}")
        if k == "players":
            try:
                v = int(v)
            except ValueError:
                raise ValueError(f"--baseline players expects one player count, got {v!r}") from None
        out[k] = v
    return out


def spec_baseline(summary_path: Path) -> dict:
    """The spec's ``[compare] baseline``, its variant named as the cells label it (what it played: with
    the spec's ``experiment.skills`` folded in, e.g. ``standard`` with skills "fixed" is ``fixed-skills``)."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(summary_path).metadata or {}
    spec = json.loads(meta.get(b"smersh.spec", b"{}"))
    baseline = dict(spec.get("compare", {}).get("baseline", {}))
    if "variant" in baseline:
        baseline["variant"] = _variant_label(baseline["variant"], spec.get("experiment", {}).get("skills"))
    return baseline


def _as_the_cells_write_it(baseline: dict, rows: list[dict]) -> dict:
    """``baseline`` with each value as the cells (``rows`` of summary.parquet) write it; a BaselineError naming
    the cells' values where one matches no cell."""
    out = {}
    for k, v in baseline.items():
        values = sorted({r[k] for r in rows}, key=str)
        match = [x for x in values if _same_value(x, v)]
        if not match:
            raise BaselineError(f"baseline {k}={v!r} matches no cell; the cells' {k} values are "
                                f"{', '.join(repr(x) for x in values)}")
        out[k] = match[0]
    return out


def is_spec_baseline(folder: Path | str, baseline: dict) -> bool:
    """Whether ``baseline`` (as :func:`compare_run` returns it: the cells' values) is the spec's ``[compare]``
    baseline of the results folder ``compare_run`` read (False where the spec has none, or one matching no cell)."""
    path = Path(folder) / "summary.parquet"
    spec = spec_baseline(path)
    if not spec:
        return False
    try:
        return _as_the_cells_write_it(spec, list(pl.read_parquet(path).iter_rows(named=True))) == baseline
    except BaselineError:
        return False


def _variant_label(variant, skills=None):
    """A variant as summary.parquet labels it (``dirty`` is ``dirty-lobo,dirty-location``); as given if unknown."""
    from sim.rules.state import Settings

    try:
        return Settings.label_of(variant, skills) if isinstance(variant, str) else variant
    except ValueError:
        return variant


def tango_interval(n01: int, n10: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Tango's score interval for the paired difference in win rate ``(n01 - n10) / n``.

    Tango T. (1998), "Equivalence test and confidence interval for the difference in proportions
    for the paired-sample design", Statistics in Medicine 17: 891-908. It holds every difference d
    whose score statistic

        (n01 - n10 - n d) / sqrt(n (2 q + d (1 - d)))

    lies within +/- z, where q is the maximum-likelihood probability, given d, of a game won by
    the baseline alone: the root of ``2n q^2 + (2n d - n01 - n10 - (n01 - n10) d) q - n10 d (1 - d)
    = 0`` for which the cell-alone probability ``q + d`` is not negative. It needs only the
    discordant counts; at ``d = 0`` the statistic is McNemar's ``(n01 - n10) / sqrt(n01 + n10)``.
    The statistic falls as d grows, so each limit is found by bisection. With no discordant game
    the interval is ``+/- z^2 / (n + z^2)``, not a point; with many it nears the normal interval.
    Fagerland, Lydersen and Laake (2014, Statistics in Medicine 33: 2850-2875) recommend it.
    """
    if not (0 <= n01 and 0 <= n10 and n01 + n10 <= n):
        raise ValueError(f"tango_interval: need 0 <= n01, n10 and n01 + n10 <= n, got {n01}, {n10}, {n}")
    diff = (n01 - n10) / n

    def score(d: float) -> float:
        num = n01 - n10 - n * d
        if num == 0:
            return 0.0
        b = (2 * n - n01 + n10) * d - n01 - n10  # 2n q^2 + b q + c = 0
        c = -n10 * d * (1 - d)
        root = math.sqrt(max(b * b - 8 * n * c, 0.0))
        q = (root - b) / (4 * n) if b <= 0 else -2 * c / (b + root)  # the same root, without cancellation
        var = n * (2 * q + d * (1 - d))
        return num / math.sqrt(var) if var > 0 else math.copysign(math.inf, num)

    def limit(lo: float, hi: float, target: float) -> float:  # score(lo) >= target > score(hi)
        for _ in range(200):  # to the last bit: lo and hi adjacent doubles
            mid = 0.5 * (lo + hi)
            if mid in (lo, hi):
                break
            if score(mid) >= target:
                lo = mid
            else:
                hi = mid
        return 0.5 * (lo + hi)

    low = -1.0 if diff == -1 else limit(-1.0, diff, z)
    high = 1.0 if diff == 1 else limit(diff, 1.0, -z)
    return min(low, diff), max(high, diff)


def family_z(rows: int, level: float = 0.95) -> float:
    """The z of Bonferroni-widened intervals over ``rows`` intervals: each holds with probability
    ``1 - (1 - level) / rows``, so all of them hold together with probability at least ``level``,
    however they depend on each other (one row: the plain interval's z)."""
    if rows < 1:
        raise ValueError(f"family_z: need at least one row, got {rows}")
    if rows == 1 and level == 0.95:
        return Z95
    return NormalDist().inv_cdf(1 - (1 - level) / (2 * rows))


def _win_flags(x, name: str) -> np.ndarray:
    """``x``, one win flag per game (a numpy array, a polars or pandas Series, a list or a tuple of True and
    False, or of 0 and 1 as integers or floats), as a numpy bool array; a ValueError naming ``name`` for
    anything else (a rate such as 0.5, a missing value, a table of several columns)."""
    a = np.asarray(x)
    if a.ndim != 1:
        raise ValueError(f"paired_stats: {name} must be one win flag per game (a 1-d array, list or Series, such "
                         f"as df['win']), got a {type(x).__name__} of shape {a.shape}")
    if a.dtype == bool:
        return a
    if a.dtype.kind in "iuf" and ((a == 0) | (a == 1)).all():
        return a != 0
    for i, v in enumerate(a.tolist()):  # the first value that is no win flag, named
        v = v.item() if isinstance(v, np.generic) else v
        if v is None or (isinstance(v, float) and math.isnan(v)):
            raise ValueError(f"paired_stats: {name} has no result at position {i} ({v!r}): a game without a win "
                             "flag cannot be paired")
        if not (isinstance(v, (bool, int, float)) and v in (0, 1)):
            raise ValueError(f"paired_stats: {name} holds {v!r} at position {i}, not a win flag: give each game's "
                             "win as True/False or 1/0")
    return np.array([bool(v) for v in a.tolist()], dtype=bool)  # flags of several kinds (an object array)


def paired_stats(base_wins, wins) -> dict:
    """Paired and unpaired differences of two aligned win vectors.

    Each vector is one win flag per game, the same games in the same order: a numpy array, a polars or
    pandas Series (``df["win"]``), a list or a tuple, of True and False or of 0 and 1. Anything else
    (a rate such as 0.5, a missing value, vectors of different lengths or none at all) is refused with a
    ValueError that names it.

    ``paired_low``/``paired_high`` are Tango's 95% score interval (:func:`tango_interval`);
    ``paired_se`` is the paired difference's (McNemar) standard error, beside the unpaired one.
    ``width_ratio`` is ``paired_se / unpaired_se``, None where the unpaired standard error is 0 (each
    cell won none or all of its games: the unpaired normal interval is a point, ``[diff, diff]``, and
    there is no width to compare; the paired interval still has one).
    """
    base_wins, wins = _win_flags(base_wins, "base_wins"), _win_flags(wins, "wins")
    n = len(wins)
    if len(base_wins) != n:
        raise ValueError(f"paired_stats: base_wins has {len(base_wins)} games and wins {n}; they are not paired "
                         "(give both the same games, in the same order)")
    if n == 0:
        raise ValueError("paired_stats: base_wins and wins are empty: no games to compare")
    n01 = int(np.sum(~base_wins & wins))
    n10 = int(np.sum(base_wins & ~wins))
    p0, p1 = base_wins.mean(), wins.mean()
    diff = (n01 - n10) / n
    se_p = math.sqrt(max(n01 + n10 - (n01 - n10) ** 2 / n, 0.0)) / n
    se_u = math.sqrt(p1 * (1 - p1) / n + p0 * (1 - p0) / n)
    low, high = tango_interval(n01, n10, n)
    return {
        "games": n,
        "baseline_win_rate": float(p0),
        "win_rate": float(p1),
        "diff": diff,
        "paired_se": se_p,
        "paired_low": low,
        "paired_high": high,
        "unpaired_se": se_u,
        "unpaired_low": diff - Z95 * se_u,
        "unpaired_high": diff + Z95 * se_u,
        "width_ratio": se_p / se_u if se_u > 0 else None,  # no unpaired width to compare: both rates 0 or 1
        "n01": n01,
        "n10": n10,
    }


def _same_value(cell_value, given) -> bool:
    """A baseline value names a cell's value: the same, but for spaces around the commas of a value
    with several words (a mixed team, a combined variant, a line-up)."""
    if isinstance(cell_value, str) and isinstance(given, str):
        return ",".join(w.strip() for w in cell_value.split(",")) == ",".join(w.strip() for w in given.split(","))
    return cell_value == given


# How a row's cell and its baseline cell pair their games (``pairing`` in compare_run's table).
SAME_GAMES = "same games"  # the same seed, game index and player count: the same random draws
GAME_INDEX = "game index"  # other player counts: other seats and set-up, so other games, paired by seed and index


def pairing_note(pairings) -> str:
    """What compare's header says of how the rows pair their games (the set of ``pairing`` values)."""
    pairings = set(pairings)
    if pairings <= {SAME_GAMES}:
        return "same games"
    if pairings == {GAME_INDEX}:
        return ("paired by seed and game index only: other player counts play other games; the width column "
                "shows what pairing gained")
    return ("same games at the baseline's player count; rows marked ~ have another player count, which plays "
            "other games: paired by seed and game index only")


def _wins(row: dict) -> np.ndarray:
    return unpack_wins(row["win_bits"], row["games"])


def compare_run(run: Path | str, baseline: dict | None = None) -> tuple[pl.DataFrame, dict]:
    """Each cell's paired difference against its baseline partner (same other dimensions).

    Besides :func:`paired_stats`' columns, each row has ``familywise_low``/``familywise_high``: its
    paired interval at the Bonferroni level over all the rows (``family_size`` of them), which hold
    together with at least 95% confidence, and ``pairing``: :data:`SAME_GAMES` where the two cells have
    the same player count (the same deal of every random draw; they differ only where the cells' strategy,
    variant, line-up or setup makes them), :data:`GAME_INDEX` where they do not (other seats and set-up:
    other games, paired by seed and game index only; the paired interval still holds, but pairing narrows
    it less).

    A baseline value may be written with spaces around its commas (``strategy=heuristic, bold``); the
    returned baseline has each value as the cells write it.

    Refuses a baseline that is no dict or names no dimension of the cells (:data:`sim.experiments.DIMENSIONS`,
    as ``--baseline`` does), a folder without a complete run, or one played by other rules (see
    :func:`sim.study.check_current`).
    """
    from sim.study import _run_folder, check_current

    if baseline is not None and not isinstance(baseline, dict):
        raise TypeError(f"compare_run: baseline must be a dict such as {{'strategy': 'heuristic'}}, or None for the "
                        f"spec's [compare] baseline, got {type(baseline).__name__} {baseline!r}"
                        + (" (sim.compare.parse_baseline reads the command line's text)"
                           if isinstance(baseline, str) else ""))
    for k in baseline or {}:
        check_dimension(k, "compare_run baseline")
    run = _run_folder(run, "compare_run", "summary.parquet")  # a folder, or its summary.parquet
    check_current(run)  # a complete run whose files match its manifest, or a ResultsError (a ValueError)
    path = Path(run) / "summary.parquet"
    if baseline and "variant" in baseline:  # the words in the order the cells label them
        baseline = {**baseline, "variant": _variant_label(baseline["variant"])}
    baseline = dict(baseline or spec_baseline(path))
    if not baseline:
        raise ValueError("no baseline: pass --baseline DIMENSION=VALUE or add [compare] baseline to the spec")
    rows = list(pl.read_parquet(path).iter_rows(named=True))
    baseline = _as_the_cells_write_it(baseline, rows)
    others = [d for d in DIMENSIONS if d not in baseline]
    base_of = {tuple(r[d] for d in others): r for r in rows if all(r[k] == v for k, v in baseline.items())}
    out = []
    for r in rows:
        if all(r[k] == v for k, v in baseline.items()):
            continue
        b = base_of.get(tuple(r[d] for d in others))
        if b is None:
            continue
        out.append({"cell": r["cell"], "baseline_cell": b["cell"], **{d: r[d] for d in DIMENSIONS},
                    "pairing": SAME_GAMES if r["players"] == b["players"] else GAME_INDEX,
                    **paired_stats(_wins(b), _wins(r))})
    if not out:
        raise BaselineError(f"no cell pairs with the baseline {baseline}")
    z = family_z(len(out))
    for row in out:
        row["familywise_low"], row["familywise_high"] = tango_interval(row["n01"], row["n10"], row["games"], z)
        row["family_size"] = len(out)
    return pl.DataFrame(out), baseline
