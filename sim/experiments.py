"""Experiment specs: a TOML grid of study cells, validated with clear errors.

A spec file (``experiments/<name>.toml``)::

    [experiment]
    name = "player_count"
    seed = 1
    games = 40000          # games per cell
    batch = 10000          # games per batch: the unit of progress, aggregation and resume

    [grid]                 # every combination is one cell
    players = [1, 2, 3, 4, 5, 6]
    strategies = ["heuristic", "cautious", "bold"]   # registered names or [strategy.X] below
    variants = ["standard"]                          # or "easier", "dirty-lobo", ...
    characters = ["default"]                         # "default", "random" or "Calli Dagger,Rocko Jurgen"
    setups = ["default"]                             # "default" or names of [setup.X] below

    [strategy.early]       # a named strategy: a registered base with parameters
    base = "heuristic"
    params = { exchange_when = "early" }

    [setup.lobo_at_2]      # a named content change (paths: sim/content/overrides.py)
    overrides = { "lobo.track.start" = 2 }

    [compare]              # optional: the baseline for `smersh-sim compare`
    baseline = { strategy = "heuristic" }

Every cell plays game indices 0..games-1 of the same seed (common random
numbers): cells that differ only in strategy or setup play the same games.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, field_validator

DIMENSIONS = ("players", "strategy", "variant", "characters", "setup")
MAX_BATCH = 1_000_000  # games held in memory at once by one batch


class SpecError(ValueError):
    """A spec that cannot run: names the file, the key and the reason."""

    def __init__(self, file: str, key: str | None, reason: str):
        self.file, self.key, self.reason = file, key, reason
        super().__init__(f"{file}: {key}: {reason}" if key else f"{file}: {reason}")


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _no_duplicates(v: list) -> list:
    for x in v:
        if isinstance(x, str) and (not x.strip() or not x.isprintable()):
            raise ValueError(f"{x!r} is not a name (empty or with a control character)")
    dup = sorted({str(x) for x in v if v.count(x) > 1})
    if dup:
        raise ValueError(f"listed twice: {', '.join(dup)} (each would give the same cells twice)")
    return v


class ExperimentSection(_M):
    # the results folder's name under results/: no path separators, and no leading dot
    # (".", ".." or a hidden folder)
    name: StrictStr = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
    description: StrictStr = ""
    seed: StrictInt = Field(ge=0, lt=2**63)
    games: StrictInt = Field(ge=1, lt=2**63)
    batch: StrictInt = Field(default=10_000, ge=1, le=MAX_BATCH)
    games_table_limit: StrictInt = Field(default=5_000_000, ge=0)
    content: StrictStr | None = None  # pack folder, relative to the spec file


class GridSection(_M):
    players: list[StrictInt] = Field(min_length=1)
    strategies: list[StrictStr] = Field(default=["heuristic"], min_length=1)
    variants: list[StrictStr] = Field(default=["standard"], min_length=1)
    characters: list[StrictStr] = Field(default=["default"], min_length=1)
    setups: list[StrictStr] = Field(default=["default"], min_length=1)

    _unique = field_validator("strategies", "variants", "characters", "setups")(_no_duplicates)

    @field_validator("players")
    @classmethod
    def _players(cls, v):
        bad = [p for p in v if not 1 <= p <= 6]
        if bad:
            raise ValueError(f"player counts must be 1..6, got {bad}")
        if len(set(v)) != len(v):
            raise ValueError(f"duplicate player counts in {v}")
        return v


class StrategySection(_M):
    base: StrictStr
    params: dict[str, Any] = {}


class SetupSection(_M):
    overrides: dict[str, Any] = {}


class CompareSection(_M):
    baseline: dict[str, Any] = {}


class SpecModel(_M):
    experiment: ExperimentSection
    grid: GridSection
    strategy: dict[str, StrategySection] = {}
    setup: dict[str, SetupSection] = {}
    compare: CompareSection = CompareSection()


@dataclass(frozen=True)
class Cell:
    """One point of the grid."""

    players: int
    strategy: str
    variant: str
    characters: str
    setup: str

    @property
    def id(self) -> str:
        chars = self.characters.replace(" ", "").replace(",", "+")
        return f"p{self.players}_{self.strategy}_{self.variant}_{chars}_{self.setup}"

    def as_dict(self) -> dict:
        return {d: getattr(self, d) for d in DIMENSIONS}


@dataclass
class Spec:
    """A validated experiment spec."""

    path: Path
    model: SpecModel
    raw: dict = field(repr=False)

    @property
    def name(self) -> str:
        return self.model.experiment.name

    @property
    def seed(self) -> int:
        return self.model.experiment.seed

    @property
    def games(self) -> int:
        return self.model.experiment.games

    @property
    def batch(self) -> int:
        return self.model.experiment.batch

    def with_games(self, games: int) -> Spec:
        """The same spec with another number of games per cell (``--games``)."""
        if isinstance(games, bool) or not isinstance(games, int):
            raise SpecError(self.path.name, "experiment.games", f"must be an integer, got {games!r}")
        if games < 1:
            raise SpecError(self.path.name, "experiment.games", f"must be at least 1, got {games}")
        raw = json.loads(json.dumps(self.raw))
        raw["experiment"]["games"] = games
        return Spec(self.path, SpecModel.model_validate(raw), raw)

    def canonical_json(self) -> str:
        return json.dumps(self.raw, sort_keys=True, separators=(",", ":"))

    @property
    def hash(self) -> str:
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()

    def cells(self) -> list[Cell]:
        g = self.model.grid
        return [
            Cell(p, s, v, c, u)
            for p, s, v, c, u in itertools.product(g.players, g.strategies, g.variants, g.characters, g.setups)
        ]

    def content_path(self) -> Path | None:
        c = self.model.experiment.content
        return None if c is None else (self.path.parent / c).resolve()

    def strategy_of(self, name: str) -> tuple[str, dict]:
        """(registered base, params) of a grid strategy name."""
        if name in self.model.strategy:
            s = self.model.strategy[name]
            return s.base, dict(s.params)
        return name, {}

    def overrides_of(self, setup: str) -> dict:
        return {} if setup == "default" else dict(self.model.setup[setup].overrides)


def _check_cross(spec: Spec) -> None:
    """Checks that need the registry, the content pack and the named sections."""
    import strategies
    from sim.content import ContentError, load
    from sim.content.overrides import load_with_overrides
    from sim.rules.state import Settings

    f = spec.path.name
    m = spec.model
    known = set(strategies.names())
    for name, s in m.strategy.items():
        if name in known:
            raise SpecError(f, f"strategy.{name}", "shadows a registered strategy; pick another name")
        if s.base not in known:
            raise SpecError(f, f"strategy.{name}.base", f"unknown strategy {s.base!r} (registered: {', '.join(sorted(known))})")
        try:
            strategies.make(s.base, **s.params)
        except (TypeError, ValueError) as e:
            raise SpecError(f, f"strategy.{name}.params", str(e)) from None
    for s in m.grid.strategies:
        if s not in known and s not in m.strategy:
            raise SpecError(f, "grid.strategies", f"unknown strategy {s!r}: not registered and no [strategy.{s}] table")
    if "default" in m.setup:
        raise SpecError(f, "setup.default", "'default' is the unchanged pack; give the changed setup another name")
    for name, u in m.setup.items():
        if not u.overrides:
            raise SpecError(f, f"setup.{name}.overrides", "no overrides: this setup would be the default pack again")
    for u in m.grid.setups:
        if u != "default" and u not in m.setup:
            raise SpecError(f, "grid.setups", f"unknown setup {u!r}: add a [setup.{u}] table or use 'default'")
    try:
        base = load(spec.content_path())
    except ContentError as e:
        raise SpecError(f, "experiment.content", str(e)) from None
    for u in m.grid.setups:
        if u != "default":
            try:
                load_with_overrides(spec.content_path(), spec.overrides_of(u), f"{f} [setup.{u}]")
            except ContentError as e:
                raise SpecError(f, f"setup.{u}.overrides", str(e)) from None
    labels: dict[str, str] = {}
    for v in m.grid.variants:
        try:
            label = Settings.build(base, 4, None, v).variant_label
        except ValueError as e:
            raise SpecError(f, "grid.variants", str(e)) from None
        if label in labels:
            raise SpecError(f, "grid.variants", f"{v!r} and {labels[label]!r} are the same variant ({label}); list it once")
        labels[label] = v
    lineups: dict[tuple, str] = {}
    for ch in m.grid.characters:
        key = (ch.strip(),) if ch.strip() in ("default", "random") else tuple(x.strip() for x in ch.split(",") if x.strip())
        if key in lineups:
            raise SpecError(f, "grid.characters", f"{ch!r} and {lineups[key]!r} are the same line-up; list it once")
        lineups[key] = ch
    for ch in m.grid.characters:
        if ch in ("default", "random"):
            continue
        names = [x.strip() for x in ch.split(",") if x.strip()]
        for p in m.grid.players:
            if len(names) != p:
                raise SpecError(f, "grid.characters", f"line-up {ch!r} has {len(names)} characters but the grid has {p} players; give line-ups only with a single player count")
        try:
            Settings.build(base, len(names), names, None)
        except (ValueError, ContentError) as e:
            raise SpecError(f, "grid.characters", str(e)) from None
    if m.compare.baseline:
        bad = set(m.compare.baseline) - set(DIMENSIONS)
        if bad:
            raise SpecError(f, "compare.baseline", f"unknown dimension(s) {sorted(bad)}; use {DIMENSIONS}")
        grid = {"players": m.grid.players, "strategy": m.grid.strategies, "variant": m.grid.variants,
                "characters": m.grid.characters, "setup": m.grid.setups}
        for dim, value in m.compare.baseline.items():
            if isinstance(value, bool) or value not in grid[dim]:
                raise SpecError(f, f"compare.baseline.{dim}", f"{value!r} is not in the grid's {dim} values {grid[dim]}")


def load_spec(path: str | Path) -> Spec:
    """Read and validate an experiment spec (raises SpecError naming file, key, reason)."""
    from sim.tomlfile import load_toml_model

    p, raw, model = load_toml_model(path, SpecModel, SpecError, "spec")
    spec = Spec(p.resolve(), model, raw)
    _check_cross(spec)
    return spec
