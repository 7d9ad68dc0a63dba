"""Win-rate bands: a deterministic CI gate that fails when the balance drifts.

A bands file (``experiments/bands.toml``)::

    [check]
    seed = 7
    games = 2000          # most games per cell
    batch = 500           # games between early-stop looks
    early_stop = true     # stop a cell once its interval is clearly inside or outside its band

    [[cell]]
    name = "3p-heuristic"
    players = 3
    strategy = "heuristic"           # registered name
    params = {}                      # strategy parameters (optional)
    variant = "standard"             # optional
    overrides = {}                   # content overrides by path (optional)
    win_rate = [0.30, 0.45]          # the accepted band
    mean_turns = [20.0, 28.0]        # optional bands on other metrics:
    share_loss_lobo = [0.3, 0.6]     #   mean_turns or share_<outcome>

A cell *fails* when the 95% interval of a banded metric lies entirely outside
its band; an interval that straddles an edge passes with the verdict "edge".
The seed is fixed, so the same code and content always give the same verdict.
Early stopping looks at the interval after every batch and stops a cell once
every banded metric is clearly inside (or one is clearly outside) its band.
"""

from __future__ import annotations

import difflib
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    field_validator,
    model_validator,
)

from sim.results import Z95, wilson_interval
from sim.rules.state import OUTCOME_NAMES

METRICS = ("win_rate", "mean_turns") + tuple(f"share_{o}" for o in OUTCOME_NAMES.values())


class BandsError(ValueError):
    def __init__(self, file: str, key: str | None, reason: str):
        super().__init__(f"{file}: {key}: {reason}" if key else f"{file}: {reason}")


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CheckSection(_M):
    seed: StrictInt = Field(ge=0, lt=2**63)
    games: StrictInt = Field(ge=1, lt=2**63)
    batch: StrictInt = Field(default=500, ge=1, le=1_000_000)
    early_stop: StrictBool = True
    content: str | None = None


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
    strategy: str = Field(default="heuristic", min_length=1)
    params: dict[str, Any] = {}
    variant: str = Field(default="standard", pattern=r"\S")  # "" would silently mean standard
    characters: str = Field(default="default", pattern=r"\S")  # "" would silently mean default
    overrides: dict[str, Any] = {}
    win_rate: tuple[float, float]
    mean_turns: tuple[float, float] | None = None
    share_win_location: tuple[float, float] | None = None
    share_win_henchmen: tuple[float, float] | None = None
    share_loss_lobo: tuple[float, float] | None = None
    share_loss_intel: tuple[float, float] | None = None
    share_timeout: tuple[float, float] | None = None

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
class CellResult:
    cell: CellSection
    games: int
    estimates: dict[str, Estimate]
    verdicts: dict[str, str]  # metric -> inside / edge / outside
    drift: dict[str, float]  # metric -> distance of the interval from the band (0 when touching)

    @property
    def failed(self) -> bool:
        return "outside" in self.verdicts.values()


def load_bands(path: str | Path) -> tuple[BandsModel, Path]:
    """Read and validate a bands file (raises BandsError naming file, key, reason)."""
    from sim.tomlfile import load_toml_model

    p, _raw, model = load_toml_model(path, BandsModel, BandsError, "bands", named_lists=("cell",))
    return model, p


def estimates_of(wins: np.ndarray, turns: np.ndarray, outcomes: list[str]) -> dict[str, Estimate]:
    n = len(wins)
    out = {}
    k = int(wins.sum())
    lo, hi = wilson_interval(k, n)
    out["win_rate"] = Estimate(k / n, lo, hi)
    m = float(turns.mean())
    sd = float(turns.std(ddof=1)) if n > 1 else 0.0
    out["mean_turns"] = Estimate(m, m - Z95 * sd / math.sqrt(n), m + Z95 * sd / math.sqrt(n))
    for o in OUTCOME_NAMES.values():
        k = sum(1 for x in outcomes if x == o)
        lo, hi = wilson_interval(k, n)
        out[f"share_{o}"] = Estimate(k / n, lo, hi)
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


def check_cell(cell: CellSection, check: CheckSection, content_path, source: str) -> CellResult:
    from sim.content import ContentError
    from sim.content.overrides import load_with_overrides
    from sim.run import simulate

    try:
        content = load_with_overrides(content_path, cell.overrides, f"{source} [{cell.name}]")
    except ContentError as e:
        raise BandsError(source, f"cell[{cell.name}].overrides", str(e)) from None
    wins, turns, outcomes = [], [], []
    bands = cell.bands()
    played = 0
    est, verdicts, drift = {}, {}, {}
    while played < check.games:
        size = min(check.batch, check.games - played)
        df = simulate(players=cell.players, games=size, strategy=cell.strategy, params=cell.params,
                      seed=check.seed, variant=cell.variant,
                      characters=None if cell.characters == "default" else cell.characters,
                      content=content, game0=played)
        played += size
        wins.append(df["win"].to_numpy())
        turns.append(df["turns"].to_numpy())
        outcomes.extend(df["outcome"].to_list())
        est = estimates_of(np.concatenate(wins), np.concatenate(turns).astype(float), outcomes)
        verdicts, drift = {}, {}
        for m, band in bands.items():
            verdicts[m], drift[m] = judge(est[m], band)
        if check.early_stop and played >= 2 * check.batch:
            if all(v == "inside" for v in verdicts.values()) or any(v == "outside" for v in verdicts.values()):
                break
    return CellResult(cell, played, est, verdicts, drift)


def validate_bands(model: BandsModel, source: str, content_path) -> None:
    """Check every cell of a bands file before any cell plays: its strategy and parameters,
    variant, line-up and content overrides, and that each band lies where its metric can
    (shares and win rates in [0, 1], mean turns at least 0). Raises BandsError naming the
    file, the cell and the field."""
    import strategies
    from sim.content import ContentError
    from sim.content.overrides import load_with_overrides
    from sim.rules.state import Settings

    try:
        base = load_with_overrides(content_path, {}, source)
    except ContentError as e:
        raise BandsError(source, "check.content", str(e)) from None
    for cell in model.cell:
        key = f"cell[{cell.name}]"
        if cell.strategy not in strategies.names():
            raise BandsError(source, f"{key}.strategy",
                             f"unknown strategy {cell.strategy!r}; registered: {', '.join(strategies.names())}")
        try:
            strategies.make(cell.strategy, **cell.params)
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
                load_with_overrides(content_path, cell.overrides, f"{source} [{cell.name}]")
            except ContentError as e:
                raise BandsError(source, f"{key}.overrides", str(e)) from None
        for m, (lo, hi) in cell.bands().items():
            top = math.inf if m == "mean_turns" else 1.0
            if lo < 0.0 or hi > top:
                where = "at least 0" if m == "mean_turns" else "within [0, 1] (a share, not a percentage)"
                raise BandsError(source, f"{key}.{m}", f"band [{lo}, {hi}] must lie {where}")


def run_check(path: str | Path, content: str | Path | None = None) -> list[CellResult]:
    model, p = load_bands(path)
    content_path = content or (None if model.check.content is None else (p.parent / model.check.content).resolve())
    validate_bands(model, p.name, content_path)
    return [check_cell(c, model.check, content_path, p.name) for c in model.cell]


def _fmt(metric: str, x: float) -> str:
    return f"{x:.1f}" if metric == "mean_turns" else f"{100 * x:.1f}%"


def report_table(results: list[CellResult]) -> str:
    lines = [f"{'cell':<26}{'metric':<18}{'band':<18}{'estimate':>9}  {'95% interval':<18}{'games':>6}  verdict"]
    for r in results:
        for m, band in r.cell.bands().items():
            e = r.estimates[m]
            v = r.verdicts[m]
            text = {"inside": "ok", "edge": "ok (interval touches the band's edge)", "outside": "DRIFTED"}[v]
            if v == "outside":
                side = "below" if e.high < band[0] else "above"
                text += f": {_fmt(m, r.drift[m])} {side} the band"
            lines.append(
                f"{r.cell.name:<26}{m:<18}{'[' + _fmt(m, band[0]) + ', ' + _fmt(m, band[1]) + ']':<18}"
                f"{_fmt(m, e.value):>9}  {'[' + _fmt(m, e.low) + ', ' + _fmt(m, e.high) + ']':<18}{r.games:>6}  {text}"
            )
    return "\n".join(lines)


def as_json(results: list[CellResult]) -> list[dict]:
    out = []
    for r in results:
        for m, band in r.cell.bands().items():
            e = r.estimates[m]
            out.append({"cell": r.cell.name, "metric": m, "band": list(band), "estimate": e.value,
                        "ci_low": e.low, "ci_high": e.high, "games": r.games, "verdict": r.verdicts[m],
                        "drift": r.drift[m]})
    return out


def _round_band(metric: str, lo: float, hi: float) -> tuple[float, float]:
    if metric == "mean_turns":
        return (round(max(lo, 0.0), 1), round(hi, 1))
    return (round(max(lo, 0.0), 3), round(min(hi, 1.0), 3))


def updated_text(path: Path, results: list[CellResult], margin: float) -> str:
    """The bands file with every band re-centred on today's estimate +/- margin (and the interval)."""
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    by_name = {r.cell.name: r for r in results}
    current = None
    out = []
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("name") and "=" in stripped:
            current = tomllib.loads(stripped)["name"] if stripped.split("=", 1)[0].strip() == "name" else current
        key = stripped.split("=", 1)[0].strip() if "=" in stripped else None
        if current in by_name and key in METRICS and key in by_name[current].estimates:
            r = by_name[current]
            e = r.estimates[key]
            width = margin * (e.value if key == "mean_turns" else 1.0)
            lo, hi = _round_band(key, min(e.value - width, e.low), max(e.value + width, e.high))
            indent = line[: len(line) - len(line.lstrip())]
            line = f"{indent}{key} = [{lo}, {hi}]\n"
        out.append(line)
    return "".join(out)


def update_bands(path: str | Path, results: list[CellResult], margin: float) -> str:
    """Rewrite the bands file around today's estimates; returns the unified diff shown to the user."""
    p = Path(path)
    old = p.read_text()
    new = updated_text(p, results, margin)
    diff = "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"{p.name} (before)", f"{p.name} (after)"))
    if new != old:
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text(new)
        tmp.replace(p)
    return diff
