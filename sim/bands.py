"""The CI gate: every gated cell's win rate is compared with a stored baseline, game for game.

A bands file (``experiments/bands.toml``)::

    [check]
    seed = 7
    games = 40000         # games per cell: indices 0 .. games-1 of the seed
    batch = 10000         # games per kernel call (memory only; the result does not depend on it)
    tolerance = 0.01      # a cell fails when its win rate moved more than this from its baseline

    [[cell]]
    name = "3p-heuristic"
    players = 3
    strategy = "heuristic"           # registered name
    params = {}                      # strategy parameters (optional)
    variant = "standard"             # optional
    skills = "pick"                  # optional: "fixed" = each character's own advanced skills
    overrides = {}                   # content overrides by path (optional)
    win_rate = [0.30, 0.45]          # the band designers agreed
    mean_turns = [20.0, 28.0]        # optional bands on other metrics:
    share_loss_lobo = [0.3, 0.6]     #   mean_turns or share_<outcome>
    baseline = { seed = 7, games = 40000, wins = 14930 }   # written by --update

Two checks per cell, and a notice:

*Drift against the baseline.* ``baseline`` records how many of the same games
(same seed, same game indices) the accepted version won. ``check`` plays those
games again and fails the cell when ``|drift| > tolerance``, where ``drift =
(wins - baseline wins) / games``. With the same seed every game is replayed
exactly, so the code and content the baseline was recorded with give drift 0
exactly: the gate never flakes.

The tolerance is the drift the designers agreed to let pass, and it is not
raised to the noise of a change that replays different games: a change with
no real effect that draws new random numbers (independent of the old ones)
drifts by noise of standard deviation ``sqrt(2 p (1 - p) / n)`` (``p`` the
baseline win rate, ``n`` games) and fails a cell near 50% about 0.5% of the
time with 40,000 games; over all the file's cells, :func:`false_alarm_rate`
(2.5% for the shipped ten). Such a change moves every cell off its baseline
anyway and needs ``--update`` either way, while a real drift let through
changes the game's balance unseen: the gate errs on the side of failing.

How big a drift it catches (:func:`detectable_drift`): drift is the mean over
games of ``won now - won then``; whatever the dependence between a game's two
outcomes, that difference has a standard deviation ``s <= sd(now) + sd(then)
<= 0.5 + sqrt(p (1 - p))``. So with a true drift ``d``, ``P(fail) >= P(drift >
tolerance) = Phi((d - tolerance) sqrt(n) / s)`` (normal approximation), which
is at least 0.95 once ``d >= tolerance + 1.645 s / sqrt(n)``: 1.82 points at
most with 40,000 games and a 1-point tolerance.

*Drifts inside the tolerance.* The tolerance is the pass/fail rule, but a
drift inside it can still be real: the same games replayed, a content change
that moves a 45% cell by half a point changes few games' results, and mostly
in one direction. ``check --update`` also records the baseline's win bit per
game beside the bands file (``bands.wins`` for ``bands.toml``,
:func:`wins_path`), and ``check`` pairs them with today's games: with ``a``
games won now and lost then and ``b`` the reverse, the exact two-sided sign
test (McNemar's exact test: with no real effect each changed game goes either
way with probability 1/2, so ``a`` is Binomial(a + b, 1/2)) tests whether the
drift is more than noise (:func:`sign_test_p`). A cell that passes with ``p`` at
most :func:`cell_level` (a family-wise ``FALSE_ALARM``, 0.5%, over the file's
cells: Bonferroni) gets a NOTICE naming the real drift; a cell that passes
with a drift not 0 whose baseline games are not recorded gets a NOTICE saying
its significance is not tested (:meth:`Drift.notice`). McNemar's ``z = (a - b)
/ sqrt(a + b)`` is printed beside ``p`` for reading only: its normal
approximation lets more than the level through when few games changed (15
against 1: z 3.50, beyond the 3.48 of 0.05% two-sided, but p 0.00052).

*Bands.* A metric fails when its 95% interval lies entirely outside its band;
an interval that straddles an edge passes with the verdict "edge".

Text output gives rates in percent and differences in points everywhere
(:func:`fmt_value`, :func:`fmt_diff`); ``--json`` gives fractions.
"""

from __future__ import annotations

import base64
import difflib
import json
import math
import tomllib
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from pathlib import Path
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator, model_validator

from sim.content import DEFAULT_PACK
from sim.content.overrides import SetError
from sim.results import Z95, wilson_interval
from sim.rules.state import OUTCOME_NAMES, Settings
from sim.tally import Tally, TallyError, pack_wins, unpack_wins
from sim.text import count
from sim.tomlfile import Number

METRICS = ("win_rate", "mean_turns") + tuple(f"share_{o}" for o in OUTCOME_NAMES.values())


class BandsError(ValueError):
    def __init__(self, file: str, key: str | None, reason: str):
        super().__init__(f"{file}: {key}: {reason}" if key else f"{file}: {reason}")


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


POWER = 0.95  # the probability with which the printed smallest detectable drift fails the gate
# The most often a change with no real effect gets a NOTICE, over all of a file's cells (see cell_level).
FALSE_ALARM = 0.005


class CheckSection(_M):
    seed: StrictInt = Field(ge=0, lt=2**63)
    games: StrictInt = Field(ge=1, lt=2**63)
    batch: StrictInt = Field(default=10_000, ge=1, le=1_000_000)
    tolerance: Number = Field(default=0.01, gt=0, lt=1, allow_inf_nan=False)
    content: str | None = None


class Baseline(_M):
    """The accepted version's result on the same games: written by ``check --update``."""

    seed: StrictInt = Field(ge=0, lt=2**63)
    games: StrictInt = Field(ge=1, lt=2**63)
    wins: StrictInt = Field(ge=0)

    @model_validator(mode="after")
    def _wins_fit(self):
        if self.wins > self.games:
            raise ValueError(f"wins ({self.wins}) exceed games ({self.games})")
        return self


def _band(v):
    if v is None:
        return v
    if not isinstance(v, (list, tuple)) or len(v) != 2:
        raise ValueError(f"a band is [low, high], got {v!r}")
    if any(isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) for x in v):
        raise ValueError(f"a band's ends are finite numbers, got {v!r}")
    if not v[0] <= v[1]:
        raise ValueError(f"a band is [low, high] with low <= high, got {v}")
    return (float(v[0]), float(v[1]))


class CellSection(_M):
    name: str = Field(min_length=1, max_length=100, pattern=r"^[^\x00-\x1f\x7f]+$")
    players: StrictInt = Field(ge=1, le=6)
    strategy: str = Field(default="heuristic", min_length=1)  # registered, or "package.module:object"
    params: dict[str, Any] = {}
    engine: Literal["kernel", "reference"] = "kernel"  # a Python module strategy needs "reference"
    variant: str = Field(default="standard", pattern=r"\S")  # "" would silently mean standard
    skills: Literal["pick", "fixed"] = "pick"  # advanced skills at set-up (the players pick, or fixed pairs)
    characters: str = Field(default="default", pattern=r"\S")  # "" would silently mean default
    overrides: dict[str, Any] = {}
    win_rate: tuple[float, float]
    mean_turns: tuple[float, float] | None = None
    share_win_location: tuple[float, float] | None = None
    share_win_henchmen: tuple[float, float] | None = None
    share_loss_lobo: tuple[float, float] | None = None
    share_loss_intel: tuple[float, float] | None = None
    share_timeout: tuple[float, float] | None = None
    baseline: Baseline | None = None

    _check_bands = field_validator(
        "win_rate", "mean_turns", "share_win_location", "share_win_henchmen", "share_loss_lobo",
        "share_loss_intel", "share_timeout", mode="before",
    )(_band)

    def bands(self) -> dict[str, tuple[float, float]]:
        return {m: getattr(self, m) for m in METRICS if getattr(self, m) is not None}


class BandsModel(_M):
    check: CheckSection
    cell: list[CellSection] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self):
        names = [c.name for c in self.cell]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"duplicate cell names {dup}")
        return self


@dataclass
class Estimate:
    value: float
    low: float
    high: float


@dataclass
class Drift:
    """Today's win rate against the baseline's, on the same games."""

    baseline: float  # the baseline's win rate
    value: float  # today's
    tolerance: float  # the cell fails when the drift is beyond it
    detectable: float  # smallest true drift that fails with probability >= POWER
    cells: int  # how many cells the file gates: the family the significance test shares
    # (games won now and lost then, games lost now and won then), or None when the baseline's games are not recorded
    changed: tuple[int, int] | None = None
    unpaired: str | None = None  # why ``changed`` is None

    @property
    def drift(self) -> float:
        return self.value - self.baseline

    @property
    def failed(self) -> bool:
        # rounded: a drift of exactly the tolerance (400 of 40,000 games) passes, whatever the float error
        return round(abs(self.drift), 12) > self.tolerance

    @property
    def z(self) -> float | None:
        """McNemar's statistic of the paired games (0 when no game changed result), or None unpaired: printed
        for reading; the notice goes by the exact ``p``."""
        if self.changed is None:
            return None
        up, down = self.changed
        return (up - down) / math.sqrt(up + down) if up + down else 0.0

    @cached_property
    def p(self) -> float | None:
        """The exact two-sided sign test's p on the paired games (1 when none changed), or None unpaired."""
        return None if self.changed is None else sign_test_p(*self.changed)

    @cached_property
    def significant(self) -> bool | None:
        """Whether the drift is more than noise at the gate's family-wise FALSE_ALARM (None: not tested)."""
        return None if self.changed is None else sign_test_significant(*self.changed, cell_level(self.cells))

    @property
    def notice(self) -> Literal["significant", "untested"] | None:
        """What a passing cell's drift needs said: ``significant`` (a real drift inside the tolerance),
        ``untested`` (a drift not 0 whose baseline games are not recorded), or None."""
        if self.failed:
            return None
        if self.significant:
            return "significant"
        if self.changed is None and self.drift != 0:
            return "untested"
        return None


@dataclass
class CellResult:
    cell: CellSection
    games: int
    estimates: dict[str, Estimate]
    verdicts: dict[str, str]  # metric -> inside / edge / outside
    drift: dict[str, float]  # metric -> distance of the interval from the band (0 when touching)
    tally: Tally | None = None
    vs_baseline: Drift | None = None  # None while recording a baseline (--update)

    @property
    def failed(self) -> bool:
        return "outside" in self.verdicts.values() or (self.vs_baseline is not None and self.vs_baseline.failed)


def cell_level(cells: int, level: float = FALSE_ALARM) -> float:
    """The false-alarm rate one cell's test is held to when ``cells`` cells share the family-wise rate
    ``level`` (Bonferroni: ``level / cells``)."""
    if isinstance(cells, bool) or not isinstance(cells, int) or cells < 1:
        raise ValueError(f"cells must be a positive integer, got {cells!r}")
    return level / cells


def sign_test_exact_p(up: int, down: int) -> Fraction:
    """The exact two-sided p of the sign test on ``up`` games won now and lost then and ``down`` the reverse:
    ``min(1, 2 P(X <= min(up, down)))`` for ``X ~ Binomial(up + down, 1/2)``, as a fraction (integers
    throughout: slow for hundreds of thousands of changed games)."""
    n, k = up + down, min(up, down)
    term, tail = 1, 0
    for i in range(k + 1):  # C(n, i), i = 0 .. k
        tail += term
        term = term * (n - i) // (i + 1)
    return min(Fraction(1), Fraction(2 * tail, 2**n))


def sign_test_p(up: int, down: int) -> float:
    """:func:`sign_test_exact_p` in floating point (relative error far below 1e-6): the largest term
    ``C(n, k) / 2^n`` from log-gamma, the others by their ratios down to where they stop counting."""
    n, k = up + down, min(up, down)
    if 2 * k >= n:
        return 1.0
    log_top = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) - n * math.log(2)
    total, term = 1.0, 1.0
    for i in range(k, 0, -1):  # C(n, i - 1) = C(n, i) * i / (n - i + 1)
        term *= i / (n - i + 1)
        total += term
        if term < 1e-18 * total:
            break
    return min(1.0, 2 * math.exp(log_top) * total)


def sign_test_significant(up: int, down: int, level: float) -> bool:
    """Whether the exact two-sided sign test rejects at ``level`` (``p <= level``): from the floating-point p
    unless it lies within a millionth of the level, then from the exact fraction."""
    p = sign_test_p(up, down)
    if abs(p - level) > 1e-6 * level:
        return p <= level
    return sign_test_exact_p(up, down) <= Fraction(level)


def fmt_p(p: float) -> str:
    """A p-value in a few characters: ``1``, ``0.159``, ``5.2e-04``, ``<1e-300``."""
    return f"{p:.3g}" if p >= 0.001 else f"{p:.1e}" if p >= 1e-300 else "<1e-300"


def detectable_drift(baseline_rate: float, games: int, tolerance: float, power: float = POWER) -> float:
    """The smallest true drift of a win rate that fails the gate with probability >= ``power``.

    The gate fails when ``|mean(won now - won then)| > tolerance``
    over ``games`` replayed games. The standard deviation of one game's difference is at most
    ``0.5 + sqrt(p (1 - p))`` for any dependence between its two outcomes
    (``sd(X - Y) <= sd(X) + sd(Y)``, ``sd(X) <= 0.5``), so a true drift ``d``
    fails with probability at least ``Phi((d - tolerance) sqrt(games) / s)``.
    """
    p = min(max(baseline_rate, 0.0), 1.0)
    s = 0.5 + math.sqrt(p * (1 - p))
    return tolerance + NormalDist().inv_cdf(power) * s / math.sqrt(games)


def power_at(drift: float, baseline_rate: float, games: int, tolerance: float) -> float:
    """A lower bound on the probability that a true drift of ``drift`` fails the gate (see detectable_drift)."""
    p = min(max(baseline_rate, 0.0), 1.0)
    s = 0.5 + math.sqrt(p * (1 - p))
    return NormalDist().cdf((abs(drift) - tolerance) * math.sqrt(games) / s)


def false_alarm_rate(baseline_rates, games: int, tolerance: float) -> float:
    """The probability that a change with no real effect, replaying independent games, fails a gate whose
    cells have these baseline win rates: some cell's noise passes the tolerance (normal approximation)."""
    rates = list(baseline_rates)
    passes = 1.0
    for p in rates:
        sd = math.sqrt(2 * p * (1 - p) / games)
        if sd > 0:
            passes *= 1 - 2 * NormalDist().cdf(-tolerance / sd)
    return 1 - passes


def load_bands(path: str | Path) -> tuple[BandsModel, Path]:
    """Read and validate a bands file (raises BandsError naming file, key, reason)."""
    from sim.tomlfile import load_toml_model

    p, _raw, model = load_toml_model(path, BandsModel, BandsError, "bands", named_lists=("cell",))
    return model, p


def estimates_of(tally: Tally) -> dict[str, Estimate]:
    """Every bandable metric of a tally with its 95% interval."""
    summ = tally.summary()
    n = summ["games"]
    out = {"win_rate": Estimate(summ["win_rate"], summ["ci_low"], summ["ci_high"])}
    m, sd = summ["mean_turns"], summ["sd_turns"]
    half = Z95 * sd / math.sqrt(n) if n else 0.0
    out["mean_turns"] = Estimate(m, m - half, m + half)
    for o in OUTCOME_NAMES.values():
        k = summ["outcomes"][o]
        lo, hi = wilson_interval(k, n)
        out[f"share_{o}"] = Estimate(k / n if n else 0.0, lo, hi)
    return out


def judge(est: Estimate, band: tuple[float, float]) -> tuple[str, float]:
    lo, hi = band
    if est.low >= lo and est.high <= hi:
        return "inside", 0.0
    if est.high < lo:
        return "outside", lo - est.high
    if est.low > hi:
        return "outside", est.low - hi
    return "edge", 0.0


def check_cell(cell: CellSection, check: CheckSection, content_path, source: str, extra: dict | None = None,
               skills: str | None = None, *, cells: int, record: WinsRecord | str | None = None) -> CellResult:
    """Play one cell; ``cells`` is how many cells the file gates, which sets the significance test;
    ``record`` is the baseline's games (:func:`read_wins`), or why they are not recorded."""
    from sim.content import ContentError
    from sim.content.overrides import load_with_overrides
    from sim.run import simulate_tally

    try:
        content = load_with_overrides(content_path, {**(extra or {}), **cell.overrides}, None)
    except ContentError as e:
        raise BandsError(source, f"cell[{cell.name}].overrides", str(e)) from None
    from strategies import modules

    strategy, params = cell.strategy, cell.params
    if modules.is_module_path(strategy):
        strategy, params = modules.load(strategy, params), None
    tally = simulate_tally(players=cell.players, games=check.games, strategy=strategy, params=params,
                           seed=check.seed, variant=Settings.with_skills(cell.variant, skills or cell.skills),
                           engine=cell.engine,
                           characters=None if cell.characters == "default" else cell.characters,
                           content=content, batch=check.batch, keep_bits=True)
    est = estimates_of(tally)
    verdicts, drift = {}, {}
    for m, band in cell.bands().items():
        verdicts[m], drift[m] = judge(est[m], band)
    vs = None
    if cell.baseline is not None and (cell.baseline.seed, cell.baseline.games) == (check.seed, check.games):
        base = cell.baseline.wins / cell.baseline.games
        changed, unpaired = None, record if isinstance(record, str) else "no record of the baseline's games"
        if isinstance(record, WinsRecord):
            unpaired = record.mismatch(cell.baseline)
            if unpaired is None:
                then, now = record.bits, tally.win_vector()
                changed = (int(np.sum(now & ~then)), int(np.sum(then & ~now)))
        vs = Drift(base, est["win_rate"].value, check.tolerance,
                   detectable_drift(base, check.games, check.tolerance), cells, changed, unpaired)
    return CellResult(cell, tally.n, est, verdicts, drift, tally, vs)


def validate_bands(model: BandsModel, source: str, content_path, overrides: dict | None = None,
                   skills: str | None = None) -> None:
    """Check every cell of a bands file before any cell plays: its strategy and parameters,
    variant, line-up and content overrides (with ``overrides``, ``check --set``, under them), that
    each override changes what the cell's games read (:func:`_check_reads`), and that each band lies
    where its metric can (shares and win rates in [0, 1], mean turns at least 0). Raises BandsError
    naming the file, the cell and the field (a SetError naming ``--set`` where it is at fault)."""
    import strategies
    from sim.content import ContentError
    from sim.content.overrides import load_with_overrides

    try:
        base = load_with_overrides(content_path, {}, source)
    except ContentError as e:
        raise BandsError(source, "check.content", str(e)) from None
    if overrides:
        try:
            load_with_overrides(content_path, overrides, None)
        except ContentError as e:
            raise SetError(f"--set: {e}") from None
    from sim.kernel.custom import KernelStrategy
    from strategies import modules

    for cell in model.cell:
        key = f"cell[{cell.name}]"
        if modules.is_module_path(cell.strategy):
            try:
                s = modules.load(cell.strategy, cell.params)
            except (TypeError, ValueError) as e:
                raise BandsError(source, f"{key}.strategy", str(e)) from None
            if cell.engine == "kernel" and not modules.kernel_playable(s):
                raise BandsError(source, f"{key}.strategy",
                                 f"{cell.strategy} is a Python strategy with no kernel twin: set engine = "
                                 "\"reference\" in the cell, or make the object a sim.kernel.custom.KernelStrategy")
            if cell.engine == "reference" and isinstance(s, KernelStrategy):
                raise BandsError(source, f"{key}.strategy",
                                 f"{cell.strategy} is a KernelStrategy: it plays on the kernel only")
        elif cell.strategy not in strategies.names():
            raise BandsError(source, f"{key}.strategy",
                             f"unknown strategy {cell.strategy!r}; registered: {', '.join(strategies.names())}")
        else:
            from strategies.tuned import TunedError

            try:
                strategies.build(cell.strategy, cell.params, players=cell.players)
            except TunedError as e:  # the tuned file's fault, not the cell's params
                raise BandsError(source, f"{key}.strategy", str(e)) from None
            except (TypeError, ValueError) as e:
                raise BandsError(source, f"{key}.params", str(e)) from None
        try:
            Settings.build(base, cell.players, None, cell.variant)
        except ValueError as e:
            raise BandsError(source, f"{key}.variant", str(e)) from None
        if cell.characters != "default":
            try:
                Settings.build(base, cell.players, cell.characters, None)
            except ValueError as e:
                raise BandsError(source, f"{key}.characters", str(e)) from None
        if cell.overrides:
            try:
                load_with_overrides(content_path, cell.overrides, None)
            except ContentError as e:
                raise BandsError(source, f"{key}.overrides", str(e)) from None
        if overrides:
            try:
                load_with_overrides(content_path, {**overrides, **cell.overrides}, None)
            except ContentError as e:
                raise SetError(f"--set: with {key} of {source}: {e}") from None
        for m, (lo, hi) in cell.bands().items():
            top = math.inf if m == "mean_turns" else 1.0
            if lo < 0.0 or hi > top:
                where = "at least 0" if m == "mean_turns" else "within [0, 1] (a share, not a percentage)"
                raise BandsError(source, f"{key}.{m}", f"band [{lo}, {hi}] must lie {where}")
    _check_reads(model, source, content_path, overrides, skills)


def _check_reads(model: BandsModel, source: str, content_path, overrides: dict | None, skills: str | None) -> None:
    """Refuse an override that changes nothing a cell's games read (:func:`sim.rules.reads.first_unread`), such
    as Dr. Lobo's start in a ``dirty-lobo`` cell: the cell would play the games of the pack without it. A cell's
    own overrides are judged in that cell; ``overrides`` (``check --set``) in every cell."""
    import warnings

    from sim.content.loader import UnprintedValueWarning, load_raw
    from sim.content.overrides import pack_loader
    from sim.rules import reads

    pack = pack_loader(content_path)

    def cell_of(c: CellSection, own: bool = False) -> tuple:
        """The cell as :func:`sim.rules.reads.first_unread` judges it; ``own``: with its own overrides, applied
        after the ones judged (``check --set`` is judged by the pack the cell plays)."""
        s = Settings(players=c.players, **Settings._variant_flags(c.variant, skills or c.skills))
        lineup = "" if c.characters.strip() == "default" else f", characters {c.characters!r}"
        return (f"cell[{c.name}] ({count(c.players, 'player')}, variant {s.variant_label!r}{lineup})",
                s, c.characters) + ((dict(c.overrides),) if own else ())

    sets = dict(overrides or {})
    raw = load_raw(content_path)
    with warnings.catch_warnings():  # the packs without one override: their warnings are not the cells'
        warnings.simplefilter("ignore", UnprintedValueWarning)
        for c in model.cell:
            hit = reads.first_unread(pack, dict(c.overrides), [cell_of(c)], under=sets, raw=raw)
            if hit is not None:
                then = {"meta": ""}.get(hit.kind, "; the cell would play the games of its pack without it")
                raise BandsError(source, f"cell[{c.name}].overrides",
                                 f"{json.dumps(hit.path)} = {json.dumps(c.overrides[hit.path])} {hit.text}{then}")
        if sets:
            # a --set is a change tried on the whole gate: refused where no cell reads it; a cell that leaves it
            # unread (its variant replaces the value) truly replays its baseline's games, and is named in a warning
            # a cell's own overrides apply after --set: where they replace it, the cell replays its baseline
            mine = {c.name: reads.replaced_by(pack, sets, dict(c.overrides), [c.players]) if c.overrides else []
                    for c in model.cell}
            cells = [c for c in model.cell if set(mine[c.name]) != set(sets)]
            if not cells:
                path = next(iter(sets))
                raise SetError(f"--set {path}={json.dumps(sets[path])}: every cell of {source} sets it itself, "
                               "after --set, which replaces it; no cell would play it")
            for c in model.cell:
                for path in mine[c.name]:
                    warnings.warn(f"--set {path}={json.dumps(sets[path])} has no effect in cell[{c.name}]: its own "
                                  f"overrides replace it, and it replays its baseline's games",
                                  reads.UnreadOverrideWarning, stacklevel=2)
            hit = reads.first_unread(pack, sets, [cell_of(c, own=True) for c in cells], raw=raw)
            if hit is not None and hit.kind in ("meta", "rows", "scoped"):
                then = "" if hit.kind == "meta" else f"; no cell of {source} would play it"
                raise SetError(f"--set {hit.path}={json.dumps(sets[hit.path])}: {hit.text}{then}")
            if hit is not None:
                alone = [(c, reads.first_unread(pack, sets, [cell_of(c, own=True)], raw=raw)) for c in cells]
                unread = [(c, h) for c, h in alone if h is not None]
                if len(unread) == len(cells):
                    raise SetError(f"--set {hit.path}={json.dumps(sets[hit.path])}: {hit.text} ({source}); "
                                   f"no cell of {source} would play it")
                for c, h in unread:
                    warnings.warn(f"--set {h.path}={json.dumps(sets[h.path])} {h.text}: cell[{c.name}] replays "
                                  f"its baseline's games", reads.UnreadOverrideWarning, stacklevel=2)


def _check_skills(model: BandsModel, source: str, skills: str) -> None:
    """``check --skills``: a cell whose games it leaves as they are (its skills already so, or its variant word
    ``fixed-skills`` fixing them) replays its baseline's games, and a warning names it; refused where no cell
    plays other games."""
    import warnings

    from sim.rules import reads

    same = [c for c in model.cell
            if Settings._variant_flags(c.variant, skills) == Settings._variant_flags(c.variant, c.skills)]
    def why(c: CellSection) -> str:
        fixed = Settings._variant_flags(c.variant)["fixed_skills"]
        return "its variant 'fixed-skills' fixes them" if fixed else f"its skills are {c.skills!r} already"

    if len(same) == len(model.cell):
        raise SetError(f"--skills {skills} changes no cell of {source}: " + "; ".join(
            f"cell[{c.name}]: {why(c)}" for c in same))
    for c in same:
        warnings.warn(f"--skills {skills} has no effect in cell[{c.name}] ({why(c)}): it replays its baseline's "
                      "games", reads.UnreadOverrideWarning, stacklevel=2)


def check_baselines(model: BandsModel, file: str) -> None:
    """Refuse, before any game is played, a file whose cells cannot be compared with a baseline."""
    c = model.check
    for cell in model.cell:
        b = cell.baseline
        if b is None:
            raise BandsError(file, f"cell[{cell.name}].baseline",
                             f"missing: record one with `smersh-sim check {file} --update`")
        if (b.seed, b.games) != (c.seed, c.games):
            raise BandsError(file, f"cell[{cell.name}].baseline",
                             f"recorded with seed {b.seed} and {b.games} games, but [check] plays seed {c.seed} "
                             f"and {c.games} games; record a new one with `smersh-sim check {file} --update`")


# ------------------------------------------------------------------ the baseline's games (bands.wins)
WINS_HEADER = (
    "# The baselines' games for smersh-sim check: written by `check --update` beside the bands file; do not edit.\n"
    "# One line per cell: its name (a JSON string), seed, games, wins, then one win bit per game in game order\n"
    "# (numpy packbits) in base64, tab-separated. check pairs them with today's games to test whether a drift\n"
    "# inside the tolerance is real.\n"
)


@dataclass
class WinsRecord:
    """One cell's baseline games: which of them the accepted version won."""

    seed: int
    games: int
    wins: int
    bits: np.ndarray  # bool, one per game

    def mismatch(self, baseline: Baseline) -> str | None:
        """Why this record is not of ``baseline``'s games (None when it is)."""
        if (self.seed, self.games, self.wins) == (baseline.seed, baseline.games, baseline.wins):
            return None
        return (f"the recorded games (seed {self.seed}, {self.games} games, {self.wins} won) are not the "
                f"baseline's (seed {baseline.seed}, {baseline.games} games, {baseline.wins} won)")


def wins_path(bands: str | Path) -> Path:
    """Where a bands file's baseline games are recorded: ``bands.wins`` beside ``bands.toml``."""
    p = Path(bands)
    return p.with_name(p.name + ".wins") if p.suffix == ".wins" else p.with_suffix(".wins")


def read_wins(path: str | Path) -> dict[str, WinsRecord]:
    """The records of a wins file, by cell name; a malformed file raises BandsError naming the line."""
    p = Path(path)
    out: dict[str, WinsRecord] = {}
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise BandsError(p.name, f"byte {e.start}", "not UTF-8 text: record the baselines' games again with "
                                                    "`check --update`") from None
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        where = f"line {i}"
        try:
            name, end = json.JSONDecoder().raw_decode(line)
            fields = line[end:].split("\t")
            if not isinstance(name, str) or len(fields) != 5 or fields[0] != "":
                raise ValueError
            seed, games, wins = (int(f) for f in fields[1:4])
            raw = base64.b64decode(fields[4], validate=True)
        except ValueError:
            raise BandsError(p.name, where, "not a record (a JSON name, then seed, games, wins and base64 win bits, "
                                            "tab-separated); record them again with `check --update`") from None
        if name in out:
            raise BandsError(p.name, where, f"a second record of {name!r}")
        try:
            if games < 1 or seed < 0:
                raise TallyError(f"seed {seed} and games {games}")
            bits = unpack_wins(raw, games)
        except TallyError as e:
            raise BandsError(p.name, where, f"{name!r}: {e}") from None
        if int(bits.sum()) != wins:
            raise BandsError(p.name, where, f"{name!r}: {int(bits.sum())} win bits set, but the record says {wins} wins")
        out[name] = WinsRecord(seed, games, wins, bits)
    return out


def wins_text(check: CheckSection, results: list[CellResult]) -> str:
    """The wins file of ``results`` (games played with ``check``'s seed and count)."""
    lines = [WINS_HEADER]
    for r in results:
        bits = base64.b64encode(pack_wins(r.tally.win_vector())).decode("ascii")
        lines.append(f"{json.dumps(r.cell.name)}\t{check.seed}\t{check.games}\t{r.tally.wins}\t{bits}\n")
    return "".join(lines)


def run_check(path: str | Path, content: str | Path | None = None, update: bool = False,
              overrides: dict | None = None, skills: str | None = None) -> list[CellResult]:
    """Play every cell; with ``update`` (recording new baselines) the stored baselines are not required.

    ``overrides`` (``check --set``) apply to every cell's pack, under the cell's own overrides;
    ``skills`` (``check --skills``) sets up every cell's advanced skills that way.
    """
    model, p = load_bands(path)
    own = None if model.check.content is None else (p.parent / model.check.content).resolve()
    if update and content is not None and Path(content).resolve() != (own or Path(DEFAULT_PACK).resolve()):
        raise SetError(f"--content with --update would record baselines of a pack {p.name} does not name, which "
                       f"every later check would compare with its own; set [check] content in {p.name} instead")
    content_path = content or own
    validate_bands(model, p.name, content_path, overrides, skills)
    if skills is not None:
        _check_skills(model, p.name, skills)
    records: dict[str, WinsRecord | str] = {}
    if not update:
        check_baselines(model, p.name)
        w = wins_path(p)
        if w.exists():
            found = read_wins(w)
            records = {c.name: found.get(c.name, f"{w.name} holds no record of this cell") for c in model.cell}
        else:
            records = {c.name: f"{w.name} does not exist" for c in model.cell}
    return [check_cell(c, model.check, content_path, p.name, overrides or {}, skills, cells=len(model.cell),
                       record=records.get(c.name)) for c in model.cell]


# ------------------------------------------------------------------ text: percent and points everywhere
def fmt_value(metric: str, x: float) -> str:
    """A metric's value: rates and shares in percent, mean_turns in turns."""
    return f"{x:.2f} turns" if metric == "mean_turns" else f"{100 * x:.2f}%"


def fmt_diff(metric: str, d: float, sign: bool = True) -> str:
    """A difference of a metric: rates and shares in points, mean_turns in turns (signed unless ``sign=False``)."""
    x = d if metric == "mean_turns" else 100 * d
    num = f"{x:+.2f}" if sign else f"{x:.2f}"
    return f"{num} turns" if metric == "mean_turns" else f"{num} points"


def _interval(metric: str, lo: float, hi: float) -> str:
    return f"[{fmt_value(metric, lo)}, {fmt_value(metric, hi)}]"


def drift_verdict(r: CellResult) -> str:
    v = r.vs_baseline
    if v.failed:
        return f"DRIFTED {fmt_diff('win_rate', v.drift)} (tolerance {fmt_diff('win_rate', v.tolerance, False)})"
    return "ok, NOTICE" if v.notice else "ok"


def band_verdict(r: CellResult, metric: str) -> str:
    v = r.verdicts[metric]
    if v == "outside":
        e, band = r.estimates[metric], r.cell.bands()[metric]
        side = "below" if e.high < band[0] else "above"
        return f"OUTSIDE: {fmt_diff(metric, r.drift[metric], False)} {side} the band"
    return {"inside": "ok", "edge": "ok (interval touches the band's edge)"}[v]


def report_table(results: list[CellResult]) -> str:
    lines = []
    with_base = [r for r in results if r.vs_baseline is not None]
    if with_base:
        r0 = with_base[0]
        lines.append(f"win rate against the stored baseline: the same {r0.games} games replayed; a cell fails when "
                     f"its win rate moved more than {fmt_diff('win_rate', r0.vs_baseline.tolerance, False)}")
        lines.append(f"{'cell':<26}{'baseline':>9}{'now':>9}{'drift':>15}{'z':>7}{'p':>10}   "
                     f"{'fails 95% from':<16}verdict")
        for r in with_base:
            v = r.vs_baseline
            z = "-" if v.z is None else f"{v.z:+.1f}"
            p = "-" if v.p is None else fmt_p(v.p)
            lines.append(f"{r.cell.name:<26}{fmt_value('win_rate', v.baseline):>9}{fmt_value('win_rate', v.value):>9}"
                         f"{fmt_diff('win_rate', v.drift):>15}{z:>7}{p:>10}   "
                         f"{fmt_diff('win_rate', v.detectable, False):<16}{drift_verdict(r)}")
        cells = r0.vs_baseline.cells
        lines.append(f"('z': the drift over its noise on the paired games; 'p': the exact two-sided sign test on "
                     f"them, a real drift at p <= {100 * cell_level(cells):.3g}% (the notices' family-wise "
                     f"{FALSE_ALARM:.1%} over {_cells(cells)}); 'fails 95% from': the smallest true drift that fails "
                     f"the gate with probability >= {POWER:.0%}, whatever the pairing of old and new games; "
                     "a drift inside the tolerance with p that small is named below as real)")
        lines.append("")
    lines.append("bands (a metric fails when its 95% interval lies entirely outside its band)")
    lines.append(f"{'cell':<26}{'metric':<18}{'band':<28}{'estimate':>12}  {'95% interval':<28}{'games':>6}  verdict")
    for r in results:
        for m, band in r.cell.bands().items():
            e = r.estimates[m]
            lines.append(f"{r.cell.name:<26}{m:<18}{_interval(m, *band):<28}{fmt_value(m, e.value):>12}  "
                         f"{_interval(m, e.low, e.high):<28}{r.games:>6}  {band_verdict(r, m)}")
    return "\n".join(lines)


def _cells(n: int) -> str:
    return "1 cell" if n == 1 else f"{n} cells"


def notice_text(r: CellResult) -> str | None:
    """The NOTICE of a cell that passed with a drift that is real, or not tested (see Drift.notice)."""
    v = r.vs_baseline
    kind = None if v is None else v.notice
    if kind is None:
        return None
    inside = f"inside the {fmt_diff('win_rate', v.tolerance, False).replace(' points', '-point')} tolerance"
    if kind == "significant":
        a, b = v.changed
        return (f"NOTICE {r.cell.name}: real drift {fmt_diff('win_rate', v.drift)} (z {v.z:+.1f}, exact p "
                f"{fmt_p(v.p)}, on the same {r.games} games: {a} won now and lost then, {b} the reverse; "
                f"significant at the notices' family-wise {FALSE_ALARM:.1%} level over {_cells(v.cells)}), {inside}: "
                "it passes, but it is real")
    return (f"NOTICE {r.cell.name}: drift {fmt_diff('win_rate', v.drift)}, {inside}, is not tested for "
            f"significance: {v.unpaired} (record the baseline's games with `check --update`)")


def notice_lines(results: list[CellResult]) -> list[str]:
    """One line per cell that passed with a real drift, or a drift whose significance is not tested."""
    return [t for t in map(notice_text, results) if t is not None]


def failure_lines(results: list[CellResult]) -> list[str]:
    """One line per failed check, naming the cell, the metric and how far it moved."""
    out = []
    for r in results:
        v = r.vs_baseline
        if v is not None and v.failed:
            out.append(f"FAIL {r.cell.name}: win_rate {fmt_value('win_rate', v.value)} drifted "
                       f"{fmt_diff('win_rate', v.drift)} from the baseline {fmt_value('win_rate', v.baseline)} "
                       f"on the same {r.games} games (tolerance {fmt_diff('win_rate', v.tolerance, False)})")
        for m, verdict in r.verdicts.items():
            if verdict == "outside":
                e, band = r.estimates[m], r.cell.bands()[m]
                side = "below" if e.high < band[0] else "above"
                out.append(f"FAIL {r.cell.name}: {m} {fmt_value(m, e.value)} (95% interval "
                           f"{_interval(m, e.low, e.high)}) lies {fmt_diff(m, r.drift[m], False)} {side} "
                           f"its band {_interval(m, *band)}")
    return out


def as_json(results: list[CellResult]) -> list[dict]:
    """Fractions (not percent) throughout: one record per band and one per baseline comparison."""
    out = []
    for r in results:
        v = r.vs_baseline
        if v is not None:
            out.append({"cell": r.cell.name, "check": "baseline", "metric": "win_rate", "baseline": v.baseline,
                        "estimate": v.value, "drift": v.drift, "tolerance": v.tolerance,
                        "detectable_drift": v.detectable, "games": r.games,
                        "won_now_lost_then": None if v.changed is None else v.changed[0],
                        "lost_now_won_then": None if v.changed is None else v.changed[1],
                        "z": v.z, "p": v.p, "level": cell_level(v.cells), "significant": v.significant,
                        "unpaired": v.unpaired, "verdict": "drifted" if v.failed else "ok",
                        "notice": notice_text(r)})
        for m, band in r.cell.bands().items():
            e = r.estimates[m]
            out.append({"cell": r.cell.name, "check": "band", "metric": m, "band": list(band), "estimate": e.value,
                        "ci_low": e.low, "ci_high": e.high, "games": r.games, "verdict": r.verdicts[m],
                        "distance": r.drift[m]})
    return out


def _grid(x: float, digits: int, up: bool) -> float:
    """``x`` rounded outward to ``digits`` decimals: the largest value of that grid ``<= x`` (``up``: the
    smallest ``>= x``), compared as the floats the bands file will read back."""
    step = 10**digits
    k = math.floor(x * step)
    while k / step > x:  # the product's float error
        k -= 1
    while (k + 1) / step <= x:
        k += 1
    if up and k / step < x:
        k += 1
    return k / step


def _round_band(metric: str, est: Estimate, width: float) -> tuple[float, float]:
    """The band ``--update`` writes: ``est.value +/- width``, widened to cover the interval ``[est.low, est.high]``,
    each end rounded outward (low down, high up), so that the interval lies inside the band as written. The
    ``+/- width`` ends are rounded after float noise is taken off (0.45 + 0.03 writes 0.48, not 0.481)."""
    digits = 1 if metric == "mean_turns" else 3

    def margin_end(x: float, up: bool) -> float:
        if not math.isfinite(x):  # refused when the file is read back (update_bands)
            return x
        return _grid(round(x, digits + 6), digits, up)

    lo = min(margin_end(est.value - width, up=False), _grid(est.low, digits, up=False))
    hi = max(margin_end(est.value + width, up=True), _grid(est.high, digits, up=True))
    if metric == "mean_turns":
        return (max(lo, 0.0), hi)
    return (max(lo, 0.0), min(hi, 1.0))


def _blocks(lines: list[str]) -> list[tuple[int, int]]:
    """(start, end) line ranges of the file's tables: each starts at a header line ``[...]``."""
    starts = [i for i, line in enumerate(lines) if line.lstrip().startswith("[")]
    return list(zip(starts, starts[1:] + [len(lines)]))


def _key_of(line: str) -> str | None:
    stripped = line.strip()
    if stripped.startswith("#") or "=" not in stripped:
        return None
    return stripped.split("=", 1)[0].strip()


def _baseline_line(check: CheckSection, r: CellResult) -> str:
    return f"baseline = {{ seed = {check.seed}, games = {check.games}, wins = {r.tally.wins} }}\n"


def updated_text(path: Path, results: list[CellResult], margin: float) -> str:
    """The bands file with every band re-centred on today's estimate +/- margin (widened to the interval)
    and every baseline recorded again from today's games."""
    model, _ = load_bands(path)
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    by_name = {r.cell.name: r for r in results}
    out = list(lines[: _blocks(lines)[0][0]]) if _blocks(lines) else list(lines)
    for start, end in _blocks(lines):
        block = lines[start:end]
        if block[0].strip() != "[[cell]]":
            out.extend(block)
            continue
        try:
            name = tomllib.loads("".join(block[1:])).get("name")
        except tomllib.TOMLDecodeError:
            raise BandsError(path.name, None, f"cannot rewrite the [[cell]] at line {start + 1} line by line; "
                                              "edit it by hand") from None
        r = by_name.get(name)
        if r is None:
            out.extend(block)
            continue
        new, has_baseline = [], False
        for line in block:
            key = _key_of(line)
            indent = line[: len(line) - len(line.lstrip())]
            if key in METRICS and key in r.cell.bands():
                e = r.estimates[key]
                lo, hi = _round_band(key, e, margin * (e.value if key == "mean_turns" else 1.0))
                line = f"{indent}{key} = [{lo}, {hi}]\n"
            elif key == "baseline":
                line, has_baseline = indent + _baseline_line(model.check, r), True
            new.append(line)
        if not has_baseline:
            last = max(i for i, line in enumerate(new) if line.strip() and not line.strip().startswith("#"))
            new.insert(last + 1, _baseline_line(model.check, r))
        out.extend(new)
    return "".join(out)


@dataclass
class BandsUpdate:
    """What ``check --update`` changed: :meth:`text` for the terminal, :meth:`as_json` for ``--json``."""

    file: str  # the bands file's name
    diff: str  # its unified diff ("" when unchanged)
    wins_file: str
    wins_changed: bool  # whether the wins file was (re)written
    margin: float
    before: BandsModel
    after: BandsModel
    results: list[CellResult]

    def text(self) -> str:
        """The diff to review, and a line naming the wins file when it changed."""
        out = self.diff
        if self.wins_changed:
            out += (f"recorded the baselines' games of {_cells(len(self.results))} in {self.wins_file} (commit it "
                    f"with {self.file})\n")
        return out or "bands and baselines unchanged"

    def as_json(self) -> dict:
        """Fractions throughout: per cell, its baseline and each band before and after, and today's estimates."""
        old = {c.name: c for c in self.before.cell}
        new = {c.name: c for c in self.after.cell}

        def base(b: Baseline | None) -> dict | None:
            return None if b is None else {"seed": b.seed, "games": b.games, "wins": b.wins}

        cells = []
        for r in self.results:
            was, now = old[r.cell.name], new[r.cell.name]
            bands = {m: {"before": list(was.bands()[m]), "after": list(band), "estimate": r.estimates[m].value,
                         "ci_low": r.estimates[m].low, "ci_high": r.estimates[m].high}
                     for m, band in now.bands().items()}
            changed = was.baseline != now.baseline or any(b["before"] != b["after"] for b in bands.values())
            cells.append({"cell": r.cell.name, "changed": changed, "games": r.games,
                          "baseline": {"before": base(was.baseline), "after": base(now.baseline)}, "bands": bands})
        return {"updated": bool(self.diff) or self.wins_changed, "margin": self.margin,
                "bands_file": {"name": self.file, "changed": bool(self.diff)},
                "wins_file": {"name": self.wins_file, "changed": self.wins_changed}, "cells": cells}


def update_bands(path: str | Path, results: list[CellResult], margin: float) -> BandsUpdate:
    """Rewrite the bands file around today's estimates and baselines, and record today's games as the
    baselines' in the wins file beside it (:func:`wins_path`); returns what changed (the unified diff shown
    to the user, the wins file, each cell before and after).

    The new text is read back and checked before it replaces the file: every
    cell must hold today's baseline, or nothing is written.
    """
    p = Path(path)
    before, _ = load_bands(p)
    old = p.read_text()
    new = updated_text(p, results, margin)
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(new)
    try:
        try:
            model, _ = load_bands(tmp)
        except BandsError as e:
            reason = str(e).removeprefix(f"{tmp.name}: ")
            raise BandsError(p.name, None, f"--update would write an invalid file, left unchanged: {reason}") from None
        got = {c.name: c.baseline for c in model.cell}
        for r in results:
            b = got.get(r.cell.name)
            if b is None or (b.seed, b.games, b.wins) != (model.check.seed, model.check.games, r.tally.wins):
                raise BandsError(p.name, f"cell[{r.cell.name}]",
                                 "could not rewrite this cell's baseline (a value spanning several lines?); "
                                 "edit it by hand")
    except BandsError:
        tmp.unlink()
        raise
    diff = "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"{p.name} (before)", f"{p.name} (after)"))
    w = wins_path(p)
    wins_new = wins_text(model.check, results)
    wins_changed = not w.exists() or w.read_text() != wins_new
    if wins_changed:
        wtmp = w.with_name(w.name + ".tmp")
        wtmp.write_text(wins_new)
    if new != old:
        tmp.replace(p)
    else:
        tmp.unlink()
    if wins_changed:
        wtmp.replace(w)
    return BandsUpdate(p.name, diff, w.name, wins_changed, margin, before, model, results)
