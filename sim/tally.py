"""One mergeable tally of games: the only place where game rows become summary numbers.

A :class:`Tally` holds integers only: the number of games and wins, a count per
outcome, the sum of every per-game counter, exact histograms of turns and
rounds, and (optionally) one bit per game saying whether it was won, in game
order. Tallies of consecutive batches merge (``a + b``) into exactly the tally
of all their games, so a summary never depends on how the games were split.

Every summary the simulator reports comes from :meth:`Tally.summary`:
``smersh-sim play``, ``sim.simulate(summary_only=True)``, a study's
``summary.parquet`` (via :meth:`Tally.summary_row`), ``smersh-sim check`` and
the win bits ``smersh-sim compare`` pairs. Strings appear only at the edges:
:meth:`Tally.of_frame` maps outcome names to codes, :meth:`Tally.summary`
names the counts.

Quantiles are exact, read from the histogram with numpy's default (``linear``)
definition: the q-quantile of n sorted values ``x`` is ``x[floor(h)] + (h -
floor(h)) * (x[ceil(h)] - x[floor(h)])`` with ``h = q * (n - 1)``, the same
number ``numpy.quantile`` and ``polars``' ``median`` give on the per-game table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim.content import constants as K
from sim.jit import jit
from sim.rules.state import OUTCOME_NAMES

OUTCOMES = tuple(OUTCOME_NAMES[k] for k in sorted(OUTCOME_NAMES))
OUTCOME_CODE = {name: k for k, name in enumerate(OUTCOMES)}
WIN_OUTCOMES = ("win_location", "win_henchmen")
# Per-game counters whose sums the tally keeps (their means are reported as mean_<name>).
SUM_COLUMNS = (
    "turns", "lobo", "location_track", "henchmen_defeated", "pool_weapon", "pool_tech",
    "pool_double_agent", "pool_atomic", "tests_attempted", "tests_passed", "henchman_tests", "henchman_passed",
    "card_henchman_tests", "card_henchman_passed",
    "gambles_played", "gambles_won", "injuries", "knockouts", "resolve_spent", "un_used", "overflows",
    "airports_closed", "missions_completed", "villain_drawn", "top_secret_played", "rounds",
)
# The int columns a tally reads from a block of game rows.
TALLY_COLUMNS = ("outcome", "win") + SUM_COLUMNS
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
FORMAT = 3  # version of the arrays written by to_arrays (a study's batch files)
N_INTEL_TYPES = len(K.INTEL_TYPES)


INTEL_TYPE_NAMES = K.INTEL_TYPES
POOL_COLUMNS = tuple(f"pool_{t}" for t in INTEL_TYPE_NAMES)  # the per-game Pool by type


_TURNS, _ROUNDS, _LOBO, _TRACK = (SUM_COLUMNS.index(c) for c in ("turns", "rounds", "lobo", "location_track"))
_POOLS = np.array([SUM_COLUMNS.index(c) for c in POOL_COLUMNS], np.int64)
_WIN_CODES = tuple(OUTCOME_CODE[o] for o in WIN_OUTCOMES)


@jit
def _scan_rows(rows, cols, lobo_loss):
    """First pass of :meth:`Tally.of_rows` over the rows (compiled): the ranges it checks and sizes by.

    ``cols``: the row column of each TALLY_COLUMNS name. Returns the min and max outcome, turns and
    rounds, the first row whose win flag disagrees with a win outcome (-1: none), the max rounds of a
    won game and the min and max Location Track of a game lost to Dr. Lobo (a min of 2**62 and maxima
    of -2**62 where there is no such game).
    """
    n = rows.shape[0]
    oc, wc = cols[0], cols[1]
    tc, rc, kc = cols[2 + _TURNS], cols[2 + _ROUNDS], cols[2 + _TRACK]
    o_lo = t_lo = r_lo = k_lo = 1 << 62
    o_hi = t_hi = r_hi = k_hi = rw_hi = -(1 << 62)
    bad = -1
    for i in range(n):
        o, t, r = rows[i, oc], rows[i, tc], rows[i, rc]
        o_lo, o_hi, t_lo, t_hi, r_lo, r_hi = min(o_lo, o), max(o_hi, o), min(t_lo, t), max(t_hi, t), min(r_lo, r), max(r_hi, r)
        won = rows[i, wc] != 0
        if won != (o == _WIN_CODES[0] or o == _WIN_CODES[1]) and bad < 0:
            bad = i
        if won:
            rw_hi = max(rw_hi, r)
        if o == lobo_loss:
            k = rows[i, kc]
            k_lo, k_hi = min(k_lo, k), max(k_hi, k)
    return o_lo, o_hi, t_lo, t_hi, r_lo, r_hi, bad, rw_hi, k_lo, k_hi


@jit
def _sum_rows(rows, cols, need, lobo_loss, intel_loss, pools, outcomes, sums, turns_hist, rounds_hist,
              rounds_hist_win, track_hist_lobo, intel_short, won):
    """Second pass of :meth:`Tally.of_rows` (compiled): adds every row into the arrays given, sized by
    :func:`_scan_rows`, and sets ``won[i]`` for each won game."""
    n, m = rows.shape[0], sums.shape[0]
    oc, wc = cols[0], cols[1]
    tc, rc, kc, lc = cols[2 + _TURNS], cols[2 + _ROUNDS], cols[2 + _TRACK], cols[2 + _LOBO]
    top = need.shape[0] - 1
    for i in range(n):
        o = rows[i, oc]
        outcomes[o] += 1
        for j in range(m):
            sums[j] += rows[i, cols[2 + j]]
        turns_hist[rows[i, tc]] += 1
        r = rows[i, rc]
        rounds_hist[r] += 1
        if rows[i, wc] != 0:
            won[i] = 1
            rounds_hist_win[r] += 1
        if o == lobo_loss:
            track_hist_lobo[rows[i, kc]] += 1
        elif o == intel_loss:
            lobo = min(max(rows[i, lc], 0), top)
            for k in range(pools.shape[0]):
                if need[lobo, k] > rows[i, cols[2 + pools[k]]]:
                    intel_short[k] += 1


def _hist(values: np.ndarray) -> np.ndarray:
    return np.bincount(values).astype(np.int64) if values.size else np.zeros(0, np.int64)


class TallyError(ValueError):
    """Rows or stored arrays that cannot be tallied (names what is wrong)."""


def _pad_add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    n = max(a.size, b.size)
    out = np.zeros(n, np.int64)
    out[: a.size] += a
    out[: b.size] += b
    return out


def pack_wins(wins: np.ndarray) -> bytes:
    """One bit per game, in game order (numpy's big-endian bit order within a byte)."""
    return np.packbits(np.asarray(wins, dtype=bool)).tobytes()


def unpack_wins(bits: bytes, n: int) -> np.ndarray:
    """The first ``n`` win bits of :func:`pack_wins` as a bool array."""
    raw = np.frombuffer(bits, dtype=np.uint8)
    if raw.size != (n + 7) // 8:
        raise TallyError(f"win bits hold {raw.size} bytes, {n} games need {(n + 7) // 8}")
    return np.unpackbits(raw, count=n).astype(bool)


def hist_quantile(hist: np.ndarray, q: float) -> float:
    """The exact q-quantile (numpy 'linear') of the integers counted in ``hist``."""
    hist = np.asarray(hist, dtype=np.int64)
    total = int(hist.sum())
    if total == 0:
        return 0.0
    h = q * (total - 1)
    lo_i, hi_i = math.floor(h), math.ceil(h)
    cum = np.cumsum(hist)
    lo = int(np.searchsorted(cum, lo_i + 1, side="left"))  # the value of sorted element lo_i
    hi = int(np.searchsorted(cum, hi_i + 1, side="left"))
    t, d = h - lo_i, hi - lo
    # numpy's own arithmetic (its _lerp): from the far end where t >= 0.5, to the last bit
    return float(hi - d * (1 - t)) if t >= 0.5 else float(lo + d * t)


def hist_mean_sd(hist: np.ndarray) -> tuple[float, float]:
    """Mean and sample standard deviation (ddof=1) of the integers counted in ``hist``."""
    hist = np.asarray(hist, dtype=np.int64)
    n = int(hist.sum())
    if n == 0:
        return 0.0, 0.0
    values = np.arange(hist.size, dtype=np.int64)
    total = int((values * hist).sum())
    mean = total / n
    if n == 1:
        return mean, 0.0
    # exact integer sum of squared deviations, scaled by n: n*sum(x^2) - (sum x)^2
    ss = n * int((values * values * hist).sum()) - total * total
    return mean, math.sqrt(ss / (n * (n - 1)))


@dataclass(eq=False)
class Tally:
    """Integer sufficient statistics of a run of consecutive games (see the module docstring)."""

    n: int
    wins: int
    outcomes: np.ndarray  # int64, one count per OUTCOMES
    sums: np.ndarray  # int64, one sum per SUM_COLUMNS
    turns_hist: np.ndarray  # int64, turns_hist[t] = games that lasted t turns
    rounds_hist: np.ndarray  # int64
    win_bits: bytes | None  # pack_wins of the games in order, or None when not kept
    rounds_hist_win: np.ndarray  # int64, rounds of the games won
    track_hist_lobo: np.ndarray  # int64, Location Track reached in the games lost to Dr. Lobo at 9
    intel_short: np.ndarray  # int64 [4], games lost on Intel that were short of each type

    # ------------------------------------------------------------ building
    @classmethod
    def empty(cls, keep_bits: bool = True) -> Tally:
        z = np.zeros(0, np.int64)
        return cls(0, 0, np.zeros(len(OUTCOMES), np.int64), np.zeros(len(SUM_COLUMNS), np.int64), z, z,
                   b"" if keep_bits else None, z, z, np.zeros(N_INTEL_TYPES, np.int64))

    @classmethod
    def of_rows(cls, rows: np.ndarray, fields, need: np.ndarray, keep_bits: bool = True) -> Tally:
        """The tally of a block of int game rows whose columns are named by ``fields``.

        ``need[lobo, type]`` is the Intel Dr. Lobo's position asks for (the pack's
        ``lobo_intel_required``): it tells which types a game lost on Intel was short of.
        """
        rows = np.asarray(rows)
        index = {name: i for i, name in enumerate(fields)}
        missing = [c for c in TALLY_COLUMNS if c not in index]
        if missing:
            raise TallyError(f"game rows lack the column(s) {missing}")
        if rows.ndim != 2 or rows.shape[1] < len(fields):
            raise TallyError(f"game rows must be a 2-d block with {len(fields)} columns, got shape {rows.shape}")
        # two compiled passes along the rows (a numpy pass per column read the whole block for each)
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        cols = np.array([index[c] for c in TALLY_COLUMNS], np.int64)
        need = np.ascontiguousarray(need, dtype=np.int64)
        if need.ndim != 2 or need.shape[0] < 1 or need.shape[1] != N_INTEL_TYPES:  # (read unchecked below)
            raise TallyError(f"need must be a [Lobo position, {N_INTEL_TYPES} Intel types] table, got shape {need.shape}")
        n = rows.shape[0]
        lobo_loss, intel_loss = OUTCOME_CODE["loss_lobo"], OUTCOME_CODE["loss_intel"]
        o_lo, o_hi, t_lo, t_hi, r_lo, r_hi, bad, rw_hi, k_lo, k_hi = _scan_rows(rows, cols, lobo_loss)
        if n and (o_lo < 0 or o_hi >= len(OUTCOMES)):
            raise TallyError(f"outcome codes must be 0..{len(OUTCOMES) - 1}, got {o_lo}..{o_hi}")
        for c, low in (("turns", t_lo), ("rounds", r_lo)):  # histogram indices
            if n and low < 0:
                raise TallyError(f"column {c} holds a negative value ({low})")
        if bad >= 0:
            raise TallyError(f"row {bad}: win = {int(rows[bad, cols[1]])} disagrees with outcome "
                             f"{OUTCOMES[int(rows[bad, cols[0]])]}")
        if k_lo < 0:  # (2**62 when no game was lost to Dr. Lobo)
            raise TallyError(f"column location_track holds a negative value ({k_lo}) in a game lost to Dr. Lobo")

        def zeros(top):
            return np.zeros(top + 1 if top >= 0 else 0, np.int64)

        out = (np.zeros(len(OUTCOMES), np.int64), np.zeros(len(SUM_COLUMNS), np.int64), zeros(t_hi if n else -1),
               zeros(r_hi if n else -1), zeros(rw_hi), zeros(k_hi), np.zeros(N_INTEL_TYPES, np.int64))
        won = np.zeros(n, np.uint8)
        _sum_rows(rows, cols, need, lobo_loss, intel_loss, _POOLS, *out, won)
        outcomes, sums, turns_hist, rounds_hist, rounds_hist_win, track_hist_lobo, intel_short = out
        return cls(n=n, wins=int(outcomes[list(_WIN_CODES)].sum()), outcomes=outcomes, sums=sums,
                   turns_hist=turns_hist, rounds_hist=rounds_hist, win_bits=pack_wins(won) if keep_bits else None,
                   rounds_hist_win=rounds_hist_win, track_hist_lobo=track_hist_lobo, intel_short=intel_short)

    @classmethod
    def of_frame(cls, df, need: np.ndarray, keep_bits: bool = True) -> Tally:
        """The tally of a per-game table (``sim.simulate``'s columns); outcome names become codes here."""
        import polars as pl

        names = df["outcome"]
        unknown = sorted(set(names.unique().to_list()) - set(OUTCOMES))
        if unknown:
            raise TallyError(f"unknown outcome(s) {unknown}; known: {', '.join(OUTCOMES)}")
        codes = names.replace_strict(OUTCOME_CODE, return_dtype=pl.Int64).to_numpy()
        cols = [codes, df["win"].cast(pl.Int64).to_numpy()] + [df[c].cast(pl.Int64).to_numpy() for c in SUM_COLUMNS]
        rows = np.column_stack(cols) if df.height else np.zeros((0, len(TALLY_COLUMNS)), np.int64)
        return cls.of_rows(rows, TALLY_COLUMNS, need, keep_bits)

    # ------------------------------------------------------------ merging
    def __add__(self, other: Tally) -> Tally:
        """The tally of this tally's games followed by ``other``'s."""
        if not isinstance(other, Tally):
            return NotImplemented
        if (self.win_bits is None) != (other.win_bits is None):
            raise TallyError("cannot merge a tally that keeps win bits with one that does not")
        bits = None
        if self.win_bits is not None:
            if self.n % 8 == 0:
                bits = self.win_bits + other.win_bits
            else:
                bits = pack_wins(np.concatenate([unpack_wins(self.win_bits, self.n), unpack_wins(other.win_bits, other.n)]))
        return Tally(self.n + other.n, self.wins + other.wins, self.outcomes + other.outcomes, self.sums + other.sums,
                     _pad_add(self.turns_hist, other.turns_hist), _pad_add(self.rounds_hist, other.rounds_hist), bits,
                     _pad_add(self.rounds_hist_win, other.rounds_hist_win),
                     _pad_add(self.track_hist_lobo, other.track_hist_lobo), self.intel_short + other.intel_short)

    @classmethod
    def merge(cls, parts, keep_bits: bool = True) -> Tally:
        out = cls.empty(keep_bits)
        for p in parts:
            out = out + p
        return out

    def equals(self, other: Tally) -> bool:
        def trim(h):
            nz = np.flatnonzero(h)
            return h[: nz[-1] + 1] if nz.size else h[:0]

        return (self.n == other.n and self.wins == other.wins and np.array_equal(self.outcomes, other.outcomes)
                and np.array_equal(self.sums, other.sums)
                and np.array_equal(trim(self.turns_hist), trim(other.turns_hist))
                and np.array_equal(trim(self.rounds_hist), trim(other.rounds_hist))
                and np.array_equal(trim(self.rounds_hist_win), trim(other.rounds_hist_win))
                and np.array_equal(trim(self.track_hist_lobo), trim(other.track_hist_lobo))
                and np.array_equal(self.intel_short, other.intel_short)
                and self.win_bits == other.win_bits)

    # ------------------------------------------------------------ storage
    def to_arrays(self) -> dict[str, np.ndarray]:
        """Plain arrays for ``numpy.savez`` (a study's batch files)."""
        return {
            "format": np.array([FORMAT], np.int64),
            "n": np.array([self.n], np.int64),
            "wins": np.array([self.wins], np.int64),
            "outcomes": self.outcomes,
            "sums": self.sums,
            "turns_hist": self.turns_hist,
            "rounds_hist": self.rounds_hist,
            "win_bits": np.frombuffer(self.win_bits or b"", np.uint8),
            "has_bits": np.array([self.win_bits is not None], np.int64),
            "rounds_hist_win": self.rounds_hist_win,
            "track_hist_lobo": self.track_hist_lobo,
            "intel_short": self.intel_short,
        }

    @classmethod
    def from_arrays(cls, a) -> Tally:
        """The inverse of :meth:`to_arrays`; raises TallyError for another format."""
        try:
            fmt = int(a["format"][0])
        except (KeyError, IndexError):
            fmt = None
        if fmt != FORMAT:
            raise TallyError(f"tally format {fmt}, expected {FORMAT} (written by another version)")
        n = int(a["n"][0])
        bits = bytes(np.asarray(a["win_bits"], np.uint8)) if int(a["has_bits"][0]) else None
        t = cls(n, int(a["wins"][0]), np.asarray(a["outcomes"], np.int64), np.asarray(a["sums"], np.int64),
                np.asarray(a["turns_hist"], np.int64), np.asarray(a["rounds_hist"], np.int64), bits,
                np.asarray(a["rounds_hist_win"], np.int64), np.asarray(a["track_hist_lobo"], np.int64),
                np.asarray(a["intel_short"], np.int64))
        if (t.outcomes.shape != (len(OUTCOMES),) or t.sums.shape != (len(SUM_COLUMNS),)
                or int(t.outcomes.sum()) != n or int(t.turns_hist.sum()) != n or int(t.rounds_hist.sum()) != n
                or int(t.rounds_hist_win.sum()) != t.wins or t.intel_short.shape != (N_INTEL_TYPES,)
                or int(t.track_hist_lobo.sum()) != int(t.outcomes[OUTCOME_CODE["loss_lobo"]])
                or (bits is not None and len(bits) != (n + 7) // 8)):
            raise TallyError("inconsistent tally arrays (counts do not add up to the number of games)")
        return t

    # ------------------------------------------------------------ reading
    def win_vector(self) -> np.ndarray:
        if self.win_bits is None:
            raise TallyError("this tally did not keep its win bits")
        return unpack_wins(self.win_bits, self.n)

    def mean(self, column: str) -> float:
        return int(self.sums[SUM_COLUMNS.index(column)]) / self.n if self.n else 0.0

    def summary(self) -> dict:
        """Plain numbers: counts, win rate with its 95% Wilson interval, shares, means, exact quantiles."""
        from sim.results import wilson_interval

        n = self.n
        lo, hi = wilson_interval(self.wins, n)
        counts = {o: int(k) for o, k in zip(OUTCOMES, self.outcomes)}
        mean_turns, sd_turns = hist_mean_sd(self.turns_hist)
        return {
            "games": n,
            "wins": self.wins,
            "win_rate": self.wins / n if n else 0.0,
            "ci_low": lo,
            "ci_high": hi,
            "outcomes": counts,
            "shares": {o: k / n if n else 0.0 for o, k in counts.items()},
            "timeouts": counts["timeout"],
            "mean_turns": mean_turns,
            "sd_turns": sd_turns,
            "turn_quantiles": {f"q{round(q * 100):02d}": hist_quantile(self.turns_hist, q) for q in QUANTILES},
            "round_quantiles": {f"q{round(q * 100):02d}": hist_quantile(self.rounds_hist, q) for q in QUANTILES},
            "means": {c: self.mean(c) for c in SUM_COLUMNS},
            "turns_histogram": [int(x) for x in self.turns_hist],
            "rounds_histogram": [int(x) for x in self.rounds_hist],
            "rounds_histogram_win": [int(x) for x in self.rounds_hist_win],
            "track_histogram_loss_lobo": [int(x) for x in self.track_hist_lobo],
            "intel_short": {t: int(k) for t, k in zip(INTEL_TYPE_NAMES, self.intel_short)},
        }

    def summary_row(self, turn_cap: int | None = None) -> dict:
        """The columns of one ``summary.parquet`` row (after the cell's dimensions)."""
        s = self.summary()
        row = {"games": s["games"], "wins": s["wins"], "win_rate": s["win_rate"], "ci_low": s["ci_low"],
               "ci_high": s["ci_high"]}
        for o in OUTCOMES:
            row[f"share_{o}"] = s["shares"][o]
            row[f"n_{o}"] = s["outcomes"][o]
        row["turns_mean"] = s["mean_turns"]
        for k, v in s["turn_quantiles"].items():
            row[f"turns_{k}"] = v
        for c in SUM_COLUMNS[1:]:
            row[f"mean_{c}"] = s["means"][c]
        hist = s["turns_histogram"]
        if turn_cap is not None and len(hist) < turn_cap + 1:
            hist = hist + [0] * (turn_cap + 1 - len(hist))
        row["turns_histogram"] = hist
        row["rounds_histogram"] = s["rounds_histogram"]
        row["rounds_histogram_win"] = s["rounds_histogram_win"]
        row["track_histogram_loss_lobo"] = s["track_histogram_loss_lobo"]
        for t, k in s["intel_short"].items():
            row[f"n_loss_intel_short_{t}"] = k
        row["win_bits"] = self.win_bits
        return row
