"""Experiment specs: a TOML grid of study cells, validated with clear errors.

A spec file (``experiments/<name>.toml``)::

    [experiment]
    name = "player_count"
    seed = 1
    games = 40000          # games per cell
    batch = 10000          # games per batch: the unit of progress, aggregation and resume
    skills = "pick"        # advanced skills: "pick" (default) or "fixed" (each character's own pair)

    [grid]                 # every combination is one cell
    players = [1, 2, 3, 4, 5, 6]
    strategies = ["heuristic", "cautious", "bold"]   # registered names or [strategy.X] below
    variants = ["standard"]                          # or "easier", "dirty-lobo", "fixed-skills", ...
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
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)

from sim.content.overrides import SetError
from sim.rules.reads import leaf
from sim.text import count
from sim.tomlfile import Number

DIMENSIONS = ("players", "strategy", "variant", "characters", "setup")
MAX_BATCH = 1_000_000  # games held in memory at once by one batch
MAX_BATCHES = 100_000  # batches of a whole study: each has its files in .state, and a job listed before play


class SpecError(ValueError):
    """A spec that cannot run: names the file, the key and the reason."""

    def __init__(self, file: str, key: str | None, reason: str):
        self.file, self.key, self.reason = file, key, reason
        super().__init__(f"{file}: {key}: {reason}" if key else f"{file}: {reason}")


class OptionError(SpecError, SetError):
    """A command-line option (``run --set``) that cannot apply to a spec: names the option, not the file."""

    def __init__(self, option: str, reason: str):
        self.file, self.key, self.reason = None, option, reason
        ValueError.__init__(self, f"{option}: {reason}")


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
    overrides: dict[str, Any] = {}  # applied to every cell's pack, under each setup's own (`run --set`)
    # advanced skills at set-up: "pick" (the players pick) or "fixed" (each character's own pair;
    # `run --skills`); the variant word "fixed-skills" sets it per cell
    skills: Literal["pick", "fixed"] = "pick"
    engine: Literal["kernel", "reference"] = "kernel"  # `run --engine` overrides it


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
    base: StrictStr | None = None  # a registered strategy ...
    module: StrictStr | None = None  # ... or "package.module:object" (strategies/modules.py)
    params: dict[str, Any] = {}

    @model_validator(mode="after")
    def _one_source(self):
        if (self.base is None) == (self.module is None):
            raise ValueError("give exactly one of base (a registered strategy) or module ('package.module:object')")
        return self


class SetupSection(_M):
    overrides: dict[str, Any] = {}


class CompareSection(_M):
    baseline: dict[str, Any] = {}


class TargetsSection(_M):
    # win-rate bands by player count ("4" = [0.43, 0.47]), drawn on the win-rate chart
    win_rate: dict[str, tuple[Number, Number]] = {}

    @field_validator("win_rate")
    @classmethod
    def _bands(cls, v):
        for k, (lo, hi) in v.items():
            if k not in {str(p) for p in range(1, 7)}:
                raise ValueError(f"player count {k!r}: use \"1\" .. \"6\"")
            if not (0.0 <= lo < hi <= 1.0):
                raise ValueError(f"{count(k, 'player')}: band [{lo}, {hi}] must satisfy 0 <= low < high <= 1")
        return v


class SpecModel(_M):
    experiment: ExperimentSection
    grid: GridSection
    strategy: dict[str, StrategySection] = {}
    setup: dict[str, SetupSection] = {}
    compare: CompareSection = CompareSection()
    targets: TargetsSection = TargetsSection()


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
        team = self.strategy.replace(" ", "").replace(",", "+")  # a per-seat team: heuristic+bold
        variant = self.variant.replace(",", "+")  # a variant of several words: easier+fixed-skills
        return f"p{self.players}_{team}_{variant}_{chars}_{self.setup}"

    def as_dict(self) -> dict:
        return {d: getattr(self, d) for d in DIMENSIONS}


@dataclass
class Spec:
    """A validated experiment spec."""

    path: Path
    model: SpecModel
    raw: dict = field(repr=False)
    # the [setup.X] table each setup comes from (a sweep's setups: the swept table), where it differs
    origins: dict = field(default_factory=dict, repr=False)
    cli_sets: frozenset = frozenset()  # paths of experiment.overrides given by `run --set`

    def _with_raw(self, raw: dict, cli_sets: frozenset | None = None) -> Spec:
        return Spec(self.path, SpecModel.model_validate(raw), raw, self.origins,
                    self.cli_sets if cli_sets is None else cli_sets)

    def __post_init__(self):
        g = self.model.grid
        cells = len(g.players) * len(g.strategies) * len(g.variants) * len(g.characters) * len(g.setups)
        per_cell = -(-self.games // self.batch)
        if cells * per_cell > MAX_BATCHES:
            least = -(-self.games * cells // MAX_BATCHES)
            raise SpecError(self.path.name, "experiment.batch",
                            f"{cells:,} cell(s) of {self.games:,} games in batches of {self.batch:,} make "
                            f"{cells * per_cell:,} batches, more than {MAX_BATCHES:,} (each batch is a unit of "
                            f"progress and resume with files of its own); raise batch to at least {least:,}"
                            + (f" (at most {MAX_BATCH:,}), or play fewer games" if least > MAX_BATCH else ""))

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
        return self._with_raw(raw)

    def canonical_json(self) -> str:
        return json.dumps(self.raw, sort_keys=True, separators=(",", ":"))

    @property
    def hash(self) -> str:
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()

    def variant_of(self, variant: str) -> str:
        """What a grid variant plays, as the per-game table labels it: the variant with the spec's
        ``experiment.skills`` folded in (``"standard"`` with skills "fixed" plays ``"fixed-skills"``),
        its words in canonical order (``"dirty"`` is ``"dirty-lobo,dirty-location"``)."""
        from sim.rules.state import Settings

        return Settings.label_of(variant, self.model.experiment.skills)

    def cells(self) -> list[Cell]:
        """The grid's cells; a cell's variant is what it plays (:meth:`variant_of`), so summary.parquet's
        ``variant`` and ``cell`` say the same as games.parquet's ``variant``."""
        g = self.model.grid
        return [
            Cell(p, s, self.variant_of(v), c, u)
            for p, s, v, c, u in itertools.product(g.players, g.strategies, g.variants, g.characters, g.setups)
        ]

    def content_path(self) -> Path | None:
        c = self.model.experiment.content
        return None if c is None else (self.path.parent / c).resolve()

    def strategy_of(self, name: str) -> tuple[str, dict]:
        """(registered base or 'package.module:object', params) of a grid strategy name."""
        if name in self.model.strategy:
            s = self.model.strategy[name]
            return s.base if s.module is None else s.module, dict(s.params)
        return name, {}

    def module_strategies(self) -> dict[str, str]:
        """Grid strategy name -> module path, for the ``[strategy.X] module = ...`` tables in the grid."""
        return {n: s.module for n, s in self.model.strategy.items()
                if s.module is not None and n in self.model.grid.strategies}

    def check_engine(self, engine: str) -> None:
        """Refuse a module strategy the engine cannot play exactly (SpecError naming the table)."""
        from strategies import modules

        for name, path in self.module_strategies().items():
            s = modules.load(path, self.model.strategy[name].params)
            kernel = modules.kernel_playable(s)
            if engine == "kernel" and not kernel:
                raise SpecError(self.path.name, f"strategy.{name}.module",
                                f"{path} is a Python strategy with no kernel twin: the kernel would not play it. "
                                "Set engine = \"reference\" in [experiment] (or run --engine reference), or make "
                                "the object a sim.kernel.custom.KernelStrategy")
            from sim.kernel.custom import KernelStrategy

            if engine == "reference" and isinstance(s, KernelStrategy):
                raise SpecError(self.path.name, f"strategy.{name}.module",
                                f"{path} is a KernelStrategy: it plays on the kernel only (engine = \"kernel\")")

    def targets(self) -> dict[int, tuple[float, float]]:
        """Target win-rate bands by player count (``[targets] win_rate``)."""
        return {int(k): v for k, v in self.model.targets.win_rate.items()}

    def overrides_of(self, setup: str) -> dict:
        """The overrides of a setup's pack: the experiment's own (``--set``), then the setup's."""
        own = {} if setup == "default" else dict(self.model.setup[setup].overrides)
        return {**self.model.experiment.overrides, **own}

    def with_skills(self, skills: str | None) -> Spec:
        """The same spec with every cell's advanced skills set up as ``skills`` (``run --skills``)."""
        if skills is None:
            return self
        raw = json.loads(json.dumps(self.raw))
        raw["experiment"]["skills"] = skills
        try:
            spec = self._with_raw(raw)
        except ValidationError:
            raise SpecError(self.path.name, "experiment.skills", f"must be 'pick' or 'fixed', got {skills!r}") from None
        _check_cross(spec)  # two grid variants may now play the same games
        return spec

    def with_overrides(self, overrides: dict) -> Spec:
        """The same spec with ``overrides`` applied to every cell's pack (``run --set``); validated."""
        if not overrides:
            return self
        raw = json.loads(json.dumps(self.raw))
        raw["experiment"]["overrides"] = {**raw["experiment"].get("overrides", {}), **overrides}
        spec = self._with_raw(raw, self.cli_sets | set(overrides))
        _check_cross(spec)
        return spec

    def table_of(self, setup: str) -> str:
        """The ``[setup.X]`` table a setup comes from (a sweep's setup: the swept table)."""
        return self.origins.get(setup, setup)


def _build_at_each_count(file: str, entry: str, names, players: list[int]) -> None:
    """Build the registered strategies ``names`` of the grid entry ``entry`` at every grid player count, so a
    per-player-count strategy (``tuned``) without a set, or with a bad value, for a count is refused now."""
    import strategies

    for p in players:
        for name in names:
            try:
                strategies.make(name, players=p)
            except (TypeError, ValueError) as e:
                what = repr(entry) if name == entry else f"{entry!r} (seat strategy {name!r})"
                raise SpecError(file, "grid.strategies", f"{what} at {count(p, 'player')}: {e}") from None


LABEL_SIGNS = "[]+,"  # what strategy labels are built with: parameters, replaced decisions, a team's seats


def _check_cross(spec: Spec) -> None:
    """Checks that need the registry, the content pack and the named sections."""
    import strategies
    from sim.content import ContentError, load, unprinted
    from sim.content.loader import collecting_unprinted, warn_unprinted_summary
    from sim.content.overrides import pack_loader
    from sim.rules.state import Settings

    f = spec.path.name
    m = spec.model
    known = set(strategies.names())
    for name, s in m.strategy.items():
        if name.strip() in known:
            raise SpecError(f, f"strategy.{name}", "shadows a registered strategy; pick another name")
        if name != name.strip() or not name:
            raise SpecError(f, f"strategy.{name}", "has spaces around it (or is empty), so it would print as another "
                                                   "name; pick one without")
        label = sorted(set(name) & set(LABEL_SIGNS))
        if label:
            raise SpecError(f, f"strategy.{name}", f"holds {' '.join(label)}, which the labels of strategies use "
                                                   "(heuristic[pool_target=5], heuristic+token, a team's commas), "
                                                   "so it would read as another strategy; pick a name without")
        if s.module is not None:
            from strategies import modules

            if not modules.is_module_path(s.module):
                raise SpecError(f, f"strategy.{name}.module", f"{s.module!r} is not a module path like 'package.module:object'")
            try:
                modules.load(s.module, s.params)
            except (TypeError, ValueError) as e:
                raise SpecError(f, f"strategy.{name}.module", str(e)) from None
            continue
        if s.base not in known:
            raise SpecError(f, f"strategy.{name}.base", f"unknown strategy {s.base!r} (registered: {', '.join(sorted(known))})")
        from strategies.tuned import TunedError

        for n in m.grid.players:  # a per-player-count base (tuned) is checked at every count
            try:
                strategies.build(s.base, s.params, players=n)
            except TunedError as e:  # the tuned file's fault, not the table's params
                raise SpecError(f, f"strategy.{name}.base", f"{s.base!r} at {count(n, 'player')}: {e}") from None
            except (TypeError, ValueError) as e:
                raise SpecError(f, f"strategy.{name}.params", str(e)) from None
    for s in m.grid.strategies:
        if "," in s:  # a mixed team: one registered strategy per seat
            names = [x.strip() for x in s.split(",")]
            for x in names:
                if x in m.strategy:
                    raise SpecError(f, "grid.strategies", f"{s!r}: a per-seat team takes registered strategies only; "
                                    f"[strategy.{x}] cannot sit in one yet")
                if x not in known:
                    raise SpecError(f, "grid.strategies", f"{s!r}: unknown strategy {x!r} (registered: {', '.join(sorted(known))})")
            for p in m.grid.players:
                if len(names) != p:
                    raise SpecError(f, "grid.strategies", f"team {s!r} has {len(names)} seats but the grid has {p} "
                                    "players; give per-seat teams only with a single player count")
            _build_at_each_count(f, s, dict.fromkeys(names), m.grid.players)
            continue
        if s not in known and s not in m.strategy:
            raise SpecError(f, "grid.strategies", f"unknown strategy {s!r}: not registered and no [strategy.{s}] table")
        if s in known:
            _build_at_each_count(f, s, [s], m.grid.players)
    for name in m.strategy:  # a table the grid does not list is config the user believes played
        if name not in m.grid.strategies:
            raise SpecError(f, f"strategy.{name}", "is defined but not listed in grid.strategies: no cell would play "
                            f"it; add {name!r} to grid.strategies, or remove the table")
    if "default" in m.setup:
        raise SpecError(f, "setup.default", "'default' is the unchanged pack; give the changed setup another name")
    for name in m.setup:
        if name not in m.grid.setups:
            table = spec.table_of(name)
            raise SpecError(f, f"setup.{table}", "is defined but not listed in grid.setups: no cell would play it; "
                            f"add {table!r} to grid.setups, or remove the table")
    for name, u in m.setup.items():
        if not u.overrides:
            raise SpecError(f, f"setup.{spec.table_of(name)}.overrides",
                            "no overrides: this setup would be the default pack again")
    for u in m.grid.setups:
        if u != "default" and u not in m.setup:
            raise SpecError(f, "grid.setups", f"unknown setup {u!r}: add a [setup.{u}] table or use 'default'")
    try:
        base = load(spec.content_path())
    except ContentError as e:
        raise SpecError(f, "experiment.content", str(e)) from None
    pack = pack_loader(spec.content_path(), {"{}": base})  # the content pack with some overrides, each set once

    exp = dict(m.experiment.overrides)
    unprinted_values: list = []
    with collecting_unprinted(unprinted_values):  # a sweep's values said together: one line a field
        try:
            pack(exp)
        except ContentError as e:
            if spec.cli_sets:  # the file's own were checked when it loaded: --set is at fault
                raise OptionError("--set", str(e)) from None
            raise SpecError(f, "experiment.overrides", str(e)) from None
        for u in m.grid.setups:
            if u == "default":
                continue
            try:
                pack(spec.overrides_of(u))
            except ContentError as e:
                table = spec.table_of(u)
                who = f"setup {u!r}: " if table != u else ""
                if spec.cli_sets:
                    try:  # the setup with the file's own overrides only
                        pack({**{k: v for k, v in exp.items() if k not in spec.cli_sets}, **m.setup[u].overrides})
                    except ContentError:
                        pass
                    else:
                        raise OptionError("--set", f"with [setup.{table}] of {f}: {who}{e}") from None
                raise SpecError(f, f"setup.{table}.overrides", f"{who}{e}") from None
    warn_unprinted_summary(unprinted_values, f"{f}'s setups", known=unprinted(base))
    labels: dict[str, str] = {}
    skills = m.experiment.skills
    for v in m.grid.variants:  # each cell's effective variant: the grid's with experiment.skills folded in
        try:
            label = Settings.build(base, 4, None, Settings.with_skills(v, skills)).variant_label
        except ValueError as e:
            raise SpecError(f, "grid.variants", str(e)) from None
        if label in labels:
            other = labels[label]
            if Settings.label_of(v) != Settings.label_of(other):  # told apart but for the skills
                raise SpecError(f, "grid.variants", f"{v!r} and {other!r} play the same games ({label}) with "
                                f"skills = \"{skills}\" (experiment.skills, or run --skills): each character "
                                "takes its fixed skills in both; list one of them, or set skills = \"pick\"")
            raise SpecError(f, "grid.variants", f"{v!r} and {other!r} are the same variant ({label}); list it once")
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
                raise SpecError(f, "grid.characters", f"line-up {ch!r} has {len(names)} characters but the grid has {count(p, 'player')}; give line-ups only with a single player count")
        try:
            Settings.build(base, len(names), names, None)
        except (ValueError, ContentError) as e:
            raise SpecError(f, "grid.characters", str(e)) from None
    _check_cell_ids(spec)
    _check_reads(spec, pack)
    _warn_alike(spec, pack)
    for k in m.targets.win_rate:
        if int(k) not in m.grid.players:
            raise SpecError(f, f"targets.win_rate.{k}", f"no cell plays {count(k, 'player')} (grid.players is "
                            f"{m.grid.players}): the band would be drawn nowhere; add {k} to the grid or remove it")
    if m.compare.baseline:
        bad = set(m.compare.baseline) - set(DIMENSIONS)
        if bad:
            raise SpecError(f, "compare.baseline", f"unknown dimension(s) {sorted(bad)}; use {DIMENSIONS}")
        grid = {"players": m.grid.players, "strategy": m.grid.strategies, "variant": m.grid.variants,
                "characters": m.grid.characters, "setup": m.grid.setups}
        for dim, value in m.compare.baseline.items():
            if isinstance(value, bool) or value not in grid[dim]:
                raise SpecError(f, f"compare.baseline.{dim}", f"{value!r} is not in the grid's {dim} values {grid[dim]}")


GRID_KEYS = {"players": "grid.players", "strategy": "grid.strategies", "variant": "grid.variants",
             "characters": "grid.characters", "setup": "grid.setups"}


def _check_cell_ids(spec: Spec) -> None:
    """Refuse two cells with one id, or an id that is not one folder name: a cell's id names its row of
    summary.parquet and its folder of batches under .state/, so such cells would mix their games or
    put them elsewhere."""
    f = spec.path.name
    seen: dict[str, Cell] = {}
    for cell in spec.cells():
        cid = cell.id
        for d in DIMENSIONS:
            value = str(getattr(cell, d))
            if any(c in value for c in "/\\\0"):
                raise SpecError(f, GRID_KEYS[d], f"{value!r} gives the cell id {cid!r}, which is not one folder "
                                "name (it holds a slash or a backslash); rename it")
        if cid in seen:
            other = seen[cid]
            d = next(d for d in DIMENSIONS if getattr(cell, d) != getattr(other, d))
            raise SpecError(f, GRID_KEYS[d], f"{getattr(other, d)!r} and {getattr(cell, d)!r} give the same cell id "
                            f"{cid!r} (an id drops spaces and writes commas as +): their rows of summary.parquet "
                            "and their batches would be one; rename one of them")
        seen[cid] = cell


def _warn_alike(spec: Spec, pack) -> None:
    """Warn of setups that play the same games in every cell though their packs differ (:func:`sim.rules.reads.played_key`):
    a sweep of a Resolve cut past every reader's starting Resolve, say. Their rows would differ in label only."""
    import warnings

    from sim.content.loader import UnprintedValueWarning
    from sim.rules import reads
    from sim.rules.state import Settings

    m = spec.model
    if len(m.grid.setups) < 2:
        return
    cells = [(Settings(players=p, **Settings._variant_flags(v, m.experiment.skills)), ch)
             for p in m.grid.players for v in m.grid.variants for ch in m.grid.characters]
    groups: dict[tuple, list[str]] = {}
    with warnings.catch_warnings():  # each setup's pack was loaded, and its warnings said, before
        warnings.simplefilter("ignore", UnprintedValueWarning)
        packs = {u: pack({} if u == "default" else spec.overrides_of(u)) for u in m.grid.setups}
    for u in m.grid.setups:
        key = tuple(reads.played_key(packs[u], s, ch) for s, ch in cells)
        groups.setdefault(key, []).append(u)
    for names in groups.values():
        distinct = [names[0]] + [u for u in names[1:] if any(reads.changed(packs[names[0]], packs[u], p)
                                                               for p in m.grid.players)]
        if len(distinct) < 2:  # the same pack where the games look (a sweep's value that is the default's)
            continue
        s, ch = cells[0]
        why = reads.why_alike(packs[distinct[0]], packs[distinct[1]], s, ch) or "the games read nothing that tells them apart"
        listed = ", ".join(repr(u) for u in names[:-1]) + f" and {names[-1]!r}"
        warnings.warn(f"{spec.path.name}: setups {listed} play the same games in every cell ({why}): their rows "
                      "will differ in label only", reads.UnreadOverrideWarning, stacklevel=2)


def _show(path: str, value) -> str:
    return f"{json.dumps(path)} = {json.dumps(value)}"


def _check_reads(spec: Spec, pack) -> None:
    """Refuse an override that changes nothing the games of a cell read (:func:`sim.rules.reads.first_unread`):
    such a cell would play the games of the pack without it under a label that says otherwise, e.g.
    Dr. Lobo's start under the variant ``dirty-lobo``, which starts him at its own value."""
    import warnings

    from sim.content.loader import UnprintedValueWarning, load_raw
    from sim.rules import reads
    from sim.rules.state import Settings

    f = spec.path.name
    m = spec.model
    cells = []
    for p in m.grid.players:
        for v in m.grid.variants:
            s = Settings(players=p, **Settings._variant_flags(v, m.experiment.skills))
            for ch in m.grid.characters:
                where = f"the cells of {count(p, 'player')}, variant {s.variant_label!r}" + (
                    "" if ch.strip() == "default" else f", characters {ch!r}")
                cells.append((where, s, ch))
    # the experiment's overrides (and run --set) are judged in each cell by the pack it plays: its setup's own
    # overrides applied after them (a setup's line-up seats the characters whose values it reads)
    named = m.grid.setups != ["default"]
    played = [(where + (f", setup {u!r}" if named else ""), s, ch,
               {} if u == "default" else dict(m.setup[u].overrides))
              for u in m.grid.setups for where, s, ch in cells]
    exp = dict(m.experiment.overrides)
    raw = load_raw(spec.content_path())
    with warnings.catch_warnings():  # the packs without one override: their warnings are not the cells'
        warnings.simplefilter("ignore", UnprintedValueWarning)
        hit = reads.first_unread(pack, exp, played, raw=raw)
        if hit is not None:
            if hit.path in spec.cli_sets:
                then = {"rows": f"; no cell of {f} would play it", "scoped": f"; no cell of {f} would play it",
                        "meta": ""}.get(
                    hit.kind, f"; those cells of {f} would play as if it were not given")
                raise OptionError(f"--set {hit.path}={json.dumps(exp[hit.path])}", f"{hit.text}{then}")
            then = {"rows": "; no cell would play it", "scoped": "; no cell would play it", "meta": ""}.get(
                hit.kind, "; those cells would play as if it were not set")
            raise SpecError(f, "experiment.overrides", f"{_show(hit.path, exp[hit.path])} {hit.text}{then}")
        for u in m.grid.setups:
            if u == "default":
                continue
            own = dict(m.setup[u].overrides)
            for path in reads.replaced_by(pack, exp, own, m.grid.players):  # the experiment's, which own replaces
                mine = ", ".join(_show(k, v) for k, v in own.items())
                text = (f"has no effect in the cells of setup {u!r}: [setup.{spec.table_of(u)}] sets {mine} after "
                        f"it, which replaces it")
                if path in spec.cli_sets:
                    raise OptionError(f"--set {path}={json.dumps(exp[path])}",
                                      f"{text}; those cells of {f} would play as if it were not given")
                raise SpecError(f, "experiment.overrides",
                                f"{_show(path, exp[path])} {text}; those cells would play as if it were not set")
            hit = reads.first_unread(pack, own, cells, under=exp, raw=raw)
            if hit is None:
                continue
            then = {"rows": "no cell would play it", "scoped": "no cell would play it"}.get(hit.kind, "")
            if hit.cell is not None:
                s, ch = hit.cell[1], hit.cell[2]
                before, after = pack(exp), pack({**exp, **own})  # both loaded (cached) by the check above
                alike = not reads.changed(before, after, s.players) or reads.why_unread(before, after, s, ch) is not None
                then = ("those cells would play the default's games under the setup's label" if alike
                        else "those cells would play as if it were not set, under the setup's label")
            table = spec.table_of(u)
            who = f"setup {u!r}: " if table != u else ""
            raise SpecError(f, f"setup.{table}.overrides",
                            f"{who}{_show(hit.path, own[hit.path])} {hit.text}" + (f"; {then}" if then else ""))


_RANGE = re.compile(r"^\s*(-?\d+)\s*\.\.\s*(-?\d+)\s*$")
MAX_SWEEP = 1000  # setups one sweep may expand into


def _sweep_values(value, kinds: set | None, file: str, key: str) -> list | None:
    """The values of a sweep (a list, or "LO..HI", on a field that holds one integer/number), else None.

    ``kinds``: the types the field holds (those of its values in the pack, or those the content
    schema gives a key the pack leaves out), None when the path is unknown (its load names it).
    """
    is_range = isinstance(value, str) and _RANGE.match(value) is not None
    kinds = set(kinds) if kinds is not None else None
    if kinds and kinds & {list, tuple, dict, bool}:  # a list or table field takes the list as its value
        if is_range:
            what = "true or false" if kinds == {bool} else "a list or a table"
            raise SpecError(file, key, f"{value!r}: a LO..HI range sweeps a field that holds one integer; "
                            f"this one holds {what}")
        return None
    if isinstance(value, list):
        values = value
    elif is_range:
        if kinds is None or str in kinds:
            return None  # an unknown path (the load names it) or a text field: the text is the value
        if kinds != {int}:
            raise SpecError(file, key, f"{value!r}: a LO..HI range sweeps integers; this field holds "
                            f"{' or '.join(sorted(k.__name__ for k in kinds))}: list the values instead, e.g. "
                            "[0.5, 1.0]")
        lo, hi = (int(x) for x in _RANGE.match(value).groups())
        if lo > hi:
            raise SpecError(file, key, f"range {value!r} is empty (low above high)")
        values = list(range(lo, hi + 1))
    else:
        return None
    if not values:
        raise SpecError(file, key, "an empty list of values sweeps nothing")
    if len(values) > MAX_SWEEP:
        raise SpecError(file, key, f"{len(values)} values; a sweep may have at most {MAX_SWEEP}")
    if len({json.dumps(v) for v in values}) != len(values):
        raise SpecError(file, key, f"a value is listed twice in {values}")
    return values


def _base_types(annotation) -> set:
    """The value types of a schema annotation: ``int | None`` -> {int}, ``list[str]`` -> {list}, a model -> {dict}."""
    import types
    import typing

    from pydantic import BaseModel

    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _base_types(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return set().union(*(_base_types(a) for a in typing.get_args(annotation) if a is not type(None)))
    if origin is typing.Literal:
        return {type(a) for a in typing.get_args(annotation)}
    if origin is not None:
        return {origin}
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return {dict}
    return {annotation} if isinstance(annotation, type) else {object}


def _schema_kinds(key: str) -> set | None:
    """The types the content schema gives ``key`` (over every model with such a field), None if none has it."""
    import inspect

    from pydantic import BaseModel

    from sim.content import schema

    kinds: set = set()
    for _, cls in inspect.getmembers(schema, inspect.isclass):
        if issubclass(cls, BaseModel) and cls.__module__ == schema.__name__ and key in cls.model_fields:
            kinds |= _base_types(cls.model_fields[key].annotation)
    return kinds or None




def expand_sweeps(raw: dict, spec_path: Path) -> tuple[dict, dict]:
    """``raw`` with every swept setup replaced by one setup per value (the grid and baseline follow), and
    the table each new setup comes from (``{"lobo-start=0": "lobo", ...}``).

    ``[setup.lobo] overrides = { "lobo.track.start" = [0, 1, 2] }`` becomes the setups
    ``lobo-start=0``, ``lobo-start=1`` and ``lobo-start=2``; two sweeps in one setup
    give every combination. ``"villain.counts" = { minus_one = "2..6" }`` sweeps one kind.
    """
    from sim.content import ContentError, load_raw
    from sim.content.overrides import OverrideError, get_path

    setups = raw.get("setup") or {}
    if not isinstance(setups, dict) or not setups:
        return raw, {}
    f = spec_path.name
    content = (raw.get("experiment") or {}).get("content")
    try:
        pack = load_raw(None if content is None else (spec_path.parent / content).resolve())
    except ContentError as e:
        raise SpecError(f, "experiment.content", str(e)) from None
    expanded: dict[str, list[str]] = {}
    new_setups: dict = {}
    origins: dict[str, str] = {}
    for name, section in setups.items():
        overrides = section.get("overrides", {}) if isinstance(section, dict) else {}
        axes = []  # (label, [(override path, value-or-table)...])
        fixed = {}
        for path, value in overrides.items():
            if path == "villain.counts" and isinstance(value, dict):
                comp = pack["villain.toml"].get("composition", {})
                table_axes = []
                for kind, v in value.items():
                    vals = _sweep_values(v, {type(comp.get(kind, 0))}, f,
                                         f"setup.{name}.overrides.villain.counts.{kind}")
                    table_axes.append((kind, vals if vals is not None else [v], vals is not None))
                if any(swept for _, _, swept in table_axes):
                    axes.append(("villain.counts", table_axes))
                else:
                    fixed[path] = value
                continue
            try:
                kinds = {type(v) for v in get_path(pack, path)} or None  # one value per selected entry
            except OverrideError:  # a key the pack leaves out (its schema type), or a bad path (the load names it)
                kinds = _schema_kinds(leaf(path))
            vals = _sweep_values(value, kinds, f, f"setup.{name}.overrides.{path}")
            if vals is None:
                fixed[path] = value
            else:
                axes.append((path, vals))
        if not axes:
            new_setups[name] = section
            continue
        choices = []  # per axis: [(label, {path: value})]
        for path, vals in axes:
            if path == "villain.counts":  # vals: (kind, values, swept) per kind of the table
                opts = []
                table = vals
                kinds = [k for k, _, _ in table]
                for combo in itertools.product(*(v for _, v, _ in table)):
                    label = "-".join(f"{k}={c}" for (k, _, swept), c in zip(table, combo) if swept)
                    opts.append((label, {"villain.counts": dict(zip(kinds, combo))}))
                choices.append(opts)
            else:
                choices.append([(f"{leaf(path)}={v}", {path: v}) for v in vals])
        names = []
        for combo in itertools.product(*choices):
            label = "-".join(lab for lab, _ in combo)
            sub = f"{name}-{label}"
            over = dict(fixed)
            for _, o in combo:
                over.update(o)
            if sub in setups or sub in new_setups:
                raise SpecError(f, f"setup.{name}", f"the sweep's setup {sub!r} clashes with another setup's name")
            new_setups[sub] = {**section, "overrides": over}
            origins[sub] = name
            names.append(sub)
        if len(names) > MAX_SWEEP:
            raise SpecError(f, f"setup.{name}", f"the sweep expands into {len(names)} setups; at most {MAX_SWEEP}")
        expanded[name] = names
    if not expanded:
        return raw, {}
    out = json.loads(json.dumps(raw))
    out["setup"] = new_setups
    grid = out.get("grid") or {}
    if isinstance(grid.get("setups"), list):
        grid["setups"] = [x for u in grid["setups"] for x in expanded.get(u, [u])]
    base = ((out.get("compare") or {}).get("baseline") or {})
    if base.get("setup") in expanded:
        raise SpecError(f, "compare.baseline.setup", f"{base['setup']!r} is a sweep; name one of its setups "
                        f"({', '.join(expanded[base['setup']][:4])}, ...) or 'default'")
    return out, origins


def load_spec(path: str | Path, skills: str | None = None) -> Spec:
    """Read and validate an experiment spec (raises SpecError naming file, key, reason).

    ``skills``: ``run --skills``, set before the checks, so that they judge the cells as they will play (an
    override read only where players pick their skills is read under ``--skills pick`` whatever the file says).
    A refusal the file passes without it is the option's: an OptionError naming ``--skills``."""
    from sim.tomlfile import load_toml_model

    p, raw, model = load_toml_model(path, SpecModel, SpecError, "spec")
    swept, origins = expand_sweeps(raw, p.resolve())
    if swept is not raw:
        raw, model = swept, SpecModel.model_validate(swept)
    spec = Spec(p.resolve(), model, raw, origins)
    if skills is None or skills == model.experiment.skills:
        _check_cross(spec)
        return spec
    try:
        return spec.with_skills(skills)  # checked as it will play
    except SpecError as e:
        _check_cross(spec)  # the file's own fault is the file's
        raise OptionError(f"--skills {skills}", str(e)) from None
