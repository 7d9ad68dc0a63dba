"""Run an experiment spec: cells x batches, resumable, with atomic writes and flat memory.

Each (cell, batch) is played once and its aggregate saved under
``<out>/.state/<cell-id>/``; a run started again skips every finished batch
and produces byte-identical files. Final files (``summary.parquet``,
``games.parquet``, ``metadata.json``, charts) are assembled from the batch
aggregates only, each written under a temporary name, then renamed into place;
``manifest.json`` is written last (see :mod:`sim.manifest`).

Resume is safe against change. Each cell's ``key.json`` holds the resume key
of its batches (:func:`cell_keys`): everything that decides the cell's games
(the seed, the cell's players, strategy, variant, line-up and setup, its
``[strategy.X]`` table and what its seats play, its setup's overrides and
content hash, every other ``[experiment]`` field but those of
:data:`UNKEYED_EXPERIMENT`, ``RULES_VERSION``, a hash of the simulator's code:
every module of ``sim/`` and ``strategies/`` except those that only present
results, see :data:`PRESENTATION_MODULES`), and the batch layout (games and
batch size). An edit of the spec that decides no game (its name, description,
``[compare]``, ``[targets]``, the engine, ``games_table_limit``) keeps every
batch, and the result files are assembled anew from them. When a cell's key
differs, its old batches are discarded and replayed, with a notice that says
what changed; when the games or the batch size changed, only the batches whose
game range moved are; the folders of cells the spec no longer has are removed,
with a notice, so ``.state/`` holds only batches the spec can use. Beside
each batch a record (``batch_NNNNNN.json``, written last) names its cell, seed,
game range, key and the sha256 of its files; a batch whose record is missing
or does not match (copied from another cell or range, truncated, corrupt) is
replayed, with a notice naming the file.

The engine is not part of the key: the kernel and the reference engine play
the very same games, so their batches are interchangeable. Each record names
the engines that played its batch (``engines``: the first wrote its files,
each later one replayed it and got the same tally and per-game table). A run
on an engine its batch's record does not name replays the batch on that
engine and checks the result against the saved files (a cross-check, see
:func:`_cross_check`) before it uses them; ``provenance.json`` counts the
batches by the engines that played them (``batch_engines``).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

import sim
from sim.experiments import DIMENSIONS, Cell, Spec
from sim.manifest import (
    MANIFEST,
    METADATA,
    PROVENANCE,
    ResultsError,
    atomic_write_text,
    check_folder,
    dumps,
    file_sha256,
    locked,
    parquet_metadata,
    read_metadata,
    write_manifest,
)
from sim.tally import OUTCOMES, QUANTILES, SUM_COLUMNS, Tally, TallyError

MEAN_COLUMNS = SUM_COLUMNS[1:]  # summary.parquet has turns_mean, then mean_<name> for each of these


def atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def write_parquet_atomic(df: pl.DataFrame, path: Path, metadata: dict[str, str] | None = None) -> None:
    """Write a Parquet file with key-value metadata under a temporary name, then rename."""
    import pyarrow.parquet as pq

    table = df.to_arrow()
    if metadata:
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), **{k: v for k, v in metadata.items()}})
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp, compression="zstd")
    os.replace(tmp, path)


def git_revision() -> str:
    here = Path(__file__).resolve().parent.parent
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5)
        if rev.returncode != 0:
            return "unknown"
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here,
                               capture_output=True, text=True, timeout=5)
        return rev.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def package_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0]}
    for name in ("smersh-sim", "numpy", "numba", "llvmlite", "polars", "pyarrow"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


# ------------------------------------------------------------------ batch aggregates
def aggregate_batch(df: pl.DataFrame, need: np.ndarray) -> dict[str, np.ndarray]:
    """The sufficient statistics of one batch of games: its :class:`~sim.tally.Tally` as arrays.

    ``need`` is the pack's ``lobo_intel_required`` (which Intel a game lost on Intel was short of).
    """
    return Tally.of_frame(df, need).to_arrays()


def _npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


@dataclass
class RunReport:
    """What a run did (for tests and the terminal)."""

    out: Path
    computed: list[tuple[str, int]] = field(default_factory=list)
    skipped: list[tuple[str, int]] = field(default_factory=list)
    finished: bool = False
    files: list[Path] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    replayed: list[tuple[str, int]] = field(default_factory=list)
    # batches saved by another engine, replayed on this run's engine and found the same (also in computed)
    checked: list[tuple[str, int]] = field(default_factory=list)
    batch_engines: dict[str, int] = field(default_factory=dict)  # as provenance.json's batch_engines


class StudyError(RuntimeError):
    """A run that cannot go on (its state changed under it); the message says what to do."""


_EDITED_MID_RUN = ("every batch played before with the source as it was is kept under that source's hash; run the "
                   "same command again to replay its cells with the source as it is now")


def cell_summary(cell: Cell, parts: list[dict[str, np.ndarray]], n_games: int, turn_cap: int | None = None) -> dict:
    """One summary.parquet row: the merged tally of the cell's batches, in game order."""
    tally = Tally.merge(Tally.from_arrays(p) for p in parts)
    if tally.n != n_games:
        raise TallyError(f"cell {cell.id}: its batches hold {tally.n} games, the spec asks for {n_games}")
    return {**cell.as_dict(), "cell": cell.id, **tally.summary_row(turn_cap)}


# ------------------------------------------------------------------ resume key
# Top-level modules of sim/ that only present, compare or gate results: editing them changes no game,
# so they stay out of the code hash (every other module of sim/ and strategies/ is in it).
PRESENTATION_MODULES = frozenset({"bands.py", "bench.py", "charts.py", "cli.py", "compare.py", "golden.py",
                                  "manifest.py"})
# layout of .state/: bump when a batch file changes shape (3: the tally of sim/tally.py; 4: a folder per cell,
# keyed by what decides its games, in place of a folder per spec)
STATE_FORMAT = 4


def code_roots() -> list[Path]:
    """The packages whose code decides a game: ``sim`` and ``strategies``, wherever they are installed."""
    import strategies

    return [Path(sim.__file__).resolve().parent, Path(strategies.__file__).resolve().parent]


def source_hash(roots: list[Path] | None = None) -> str:
    """sha256 over the Python source of ``roots`` (default :func:`code_roots`), minus presentation modules."""
    h = hashlib.sha256()
    for root in code_roots() if roots is None else roots:
        for f in sorted(root.rglob("*.py"), key=lambda f: f.relative_to(root).as_posix()):
            rel = f.relative_to(root)
            if "__pycache__" in rel.parts or (len(rel.parts) == 1 and rel.name in PRESENTATION_MODULES):
                continue
            h.update(f"{root.name}/{rel.as_posix()}\0".encode())
            h.update(f.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


def _digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def module_hashes(spec: Spec) -> dict[str, dict]:
    """Grid strategy -> {module, source_hash} of the spec's module strategies (empty if none)."""
    from strategies import modules

    return {name: {"module": path, "source_hash": modules.source_hash(path)}
            for name, path in sorted(spec.module_strategies().items())}


def _module_plays(module: dict) -> dict:
    """What a module strategy's cell plays, for its resume key: its source, and ``strategies/tuned.toml``, from which
    the module may build ``tuned`` (its source hash alone would not tell an edited tuned file)."""
    from strategies import tuned

    return {**module, "tuned_toml": tuned.file_digest()}


def strategy_params(spec: Spec) -> dict:
    """Grid strategy -> player count -> the parameters its seats play with, for the registered strategies
    (module strategies have their source hash instead): as built, so what a strategy reads from a file
    (``tuned``: ``strategies/tuned.toml``) is in it. One ``{"name", "params"}`` when every seat plays the
    same, else one per seat."""
    from sim.run import make_team, seats_plays
    from strategies import modules

    out = {}
    for name in spec.model.grid.strategies:
        base, params = spec.strategy_of(name)
        if modules.is_module_path(base):
            continue
        out[name] = {str(p): seats_plays(make_team(base, p, params)) for p in spec.model.grid.players}
    return out


def results_key(spec: Spec, contents: dict) -> dict:
    """What decides the numbers of the result files: the spec, each setup's content hash, the rules version,
    the parameters of each registered grid strategy by player count, and the source hash of each module
    strategy (only when the spec names one)."""
    key = {"spec": spec.hash, "content": {k: v.hash for k, v in sorted(contents.items())},
           "rules_version": sim.RULES_VERSION, "strategy_params": strategy_params(spec)}
    mods = module_hashes(spec)
    if mods:
        key["strategy_modules"] = mods
    return key


# Fields of a spec that decide no game of a batch, so that editing them keeps the batches. Everything else a
# spec holds is in the key of the cells it concerns, a field added to the spec later included.
#   name, description: labels; compare, targets: read by `compare` and the charts from the summary;
#   engine: both engines play the same games (each record names the engines that played its batch);
#   games, batch: where a batch starts and ends (kept by each record's game range and key.json's layout);
#   games_table_limit: whether the per-game tables are kept (a record names the files its batch has).
UNKEYED_EXPERIMENT = frozenset({"name", "description", "engine", "games", "batch", "games_table_limit"})
UNKEYED_SECTIONS = frozenset({"compare", "targets"})
# sections read per cell: the grid by the cell's coordinates, [strategy.X] and [setup.X] by the cell's own
CELL_SECTIONS = frozenset({"experiment", "grid", "strategy", "setup"})
GRID_DIMENSIONS = {"players": "players", "strategies": "strategy", "variants": "variant",
                   "characters": "characters", "setups": "setup"}


def cell_keys(spec: Spec, contents: dict, source: str | None = None,
              modules: dict[str, dict] | None = None) -> dict[str, dict]:
    """Cell id -> the resume key of its batches: everything that decides the cell's games but where a batch
    starts and ends (the seed, the cell's players, strategy, variant as played, line-up and setup, its
    ``[strategy.X]`` table and what its seats play, its setup's overrides and content hash, every other field
    of ``[experiment]`` but :data:`UNKEYED_EXPERIMENT`, ``RULES_VERSION``, the code hash and the state format).
    ``key`` is the digest of the rest; the engine is not in it. ``modules``: :func:`module_hashes` of the spec,
    where the caller has them. What a cell's seats play is :func:`strategy_params`' entry for its strategy and
    player count, or its module strategy's path and source hash."""
    m = spec.model
    source = source_hash() if source is None else source
    modules_of = module_hashes(spec) if modules is None else modules
    params_of = strategy_params(spec)
    experiment = {k: v for k, v in m.experiment.model_dump(mode="json").items() if k not in UNKEYED_EXPERIMENT}
    grid_other = {f: v for f, v in m.grid.model_dump(mode="json").items() if f not in GRID_DIMENSIONS}
    other = {s: getattr(m, s).model_dump(mode="json") for s in type(m).model_fields
             if s not in CELL_SECTIONS | UNKEYED_SECTIONS}
    keys = {}
    for cell in spec.cells():
        table = m.strategy.get(cell.strategy)
        setup = m.setup.get(cell.setup)
        k = {
            "state_format": STATE_FORMAT,
            "rules_version": sim.RULES_VERSION,
            "source": source,
            "experiment": experiment,
            "cell": cell.as_dict(),
            "strategy": {"table": None if table is None else table.model_dump(mode="json"),
                         "plays": params_of[cell.strategy][str(cell.players)] if cell.strategy in params_of
                         else _module_plays(modules_of[cell.strategy])},
            "setup": {"overrides": None if setup is None else setup.model_dump(mode="json")["overrides"],
                      "content": contents[cell.setup].hash},
        }
        if grid_other:
            k["grid"] = grid_other
        if other:
            k["other"] = other
        keys[cell.id] = {**k, "key": _digest(k)}
    return keys


def resume_digest(keys: dict[str, dict]) -> str:
    """One digest of a run's cell keys (``provenance.json``'s ``resume_key``)."""
    return _digest({cid: k["key"] for cid, k in sorted(keys.items())})


def _short(value, width: int = 60) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= width else text[: width - 3] + "..."


def _key_change(old: dict | None, new: dict) -> str:
    """What differs between the key a cell's batches were played with and today's, in words."""
    if old is None:
        return "no resume key (an older version wrote them)"
    if not isinstance(old, dict) or "key" not in old:
        return "an unreadable key.json"
    why = []
    if old.get("state_format") != new["state_format"]:
        why.append(f"state format {old.get('state_format')} (today {new['state_format']})")
    old_exp = old.get("experiment") if isinstance(old.get("experiment"), dict) else {}
    for k in sorted(set(old_exp) | set(new["experiment"])):
        if old_exp.get(k) != new["experiment"].get(k):
            why.append(f"experiment.{k} {_short(old_exp.get(k))} (today {_short(new['experiment'].get(k))})")
    if old.get("cell") != new["cell"]:
        why.append(f"another cell saved under the same folder name ({_short(old.get('cell'))})")
    cell = new["cell"]
    old_strategy = old.get("strategy") if isinstance(old.get("strategy"), dict) else {}
    name = cell["strategy"]
    if old_strategy.get("table") != new["strategy"]["table"]:
        why.append(f"another [strategy.{name}] table")
    elif old_strategy.get("plays") != new["strategy"]["plays"]:
        plays = new["strategy"]["plays"]
        was = old_strategy.get("plays") if isinstance(old_strategy.get("plays"), dict) else {}
        if isinstance(plays, dict) and "source_hash" in plays and was.get("source_hash") == plays["source_hash"]:
            why.append(f"an edited strategies/tuned.toml, from which the module strategy {name} may build tuned"
                       if "tuned_toml" in was else
                       f"a key that did not record strategies/tuned.toml for the module strategy {name} (an older "
                       "version wrote it)")
        elif isinstance(plays, dict) and "source_hash" in plays:
            why.append(f"another source of the module strategy {name} ([strategy.{name}] module, hash "
                       f"{str(was.get('source_hash'))[:12]} -> {plays['source_hash'][:12]})")
        else:
            why.append(f"other parameters of strategy {name} (e.g. an edited strategies/tuned.toml)")
    old_setup = old.get("setup") if isinstance(old.get("setup"), dict) else {}
    setup = cell["setup"]
    if old_setup.get("overrides") != new["setup"]["overrides"]:
        why.append(f"other overrides of setup {setup!r}")
    if old_setup.get("content") != new["setup"]["content"]:
        was = str(old_setup.get("content") or "none")[:12]
        why.append(f"another content pack for setup {setup!r} (hash {was} -> {new['setup']['content'][:12]})")
    for section in ("grid", "other"):
        if old.get(section) != new.get(section):
            why.append(f"another {section} section {_short(old.get(section))} (today {_short(new.get(section))})")
    if old.get("rules_version") != new["rules_version"]:
        why.append(f"RULES_VERSION {old.get('rules_version')!r} (today {new['rules_version']!r})")
    if old.get("source") != new["source"]:
        why.append("other simulator code in sim/ or strategies/ (source hash "
                   f"{str(old.get('source'))[:12]} -> {new['source'][:12]})")
    return "; ".join(why) or "another resume key"


def _notice(report: RunReport, message: str) -> None:
    report.notices.append(message)
    print(f"notice: {message}", file=sys.stderr, flush=True)


def _cells_label(ids: list[str]) -> str:
    shown = ", ".join(ids[:4]) + (f" and {len(ids) - 4} more" if len(ids) > 4 else "")
    return f"cell {shown}" if len(ids) == 1 else f"{len(ids)} cells ({shown})"


_BATCH_FILE = re.compile(r"^(?:batch|games)_(\d{6})\.(?:npz|parquet|json)(?:\.tmp)?$")


def _batch_index(f: Path) -> int | None:
    hit = _BATCH_FILE.match(f.name)
    return int(hit.group(1)) if hit else None


def _batch_range(layout: dict, b: int) -> tuple[int, int] | None:
    """(first game, games) of batch ``b`` under ``layout`` (``{"games", "batch"}``), None past its end."""
    game0 = b * layout["batch"]
    return (game0, min(layout["batch"], layout["games"] - game0)) if game0 < layout["games"] else None


def _layout_change(old: dict, new: dict) -> str:
    return "; ".join(f"experiment.{k} {old[k]} (today {new[k]})" for k in ("games", "batch") if old[k] != new[k])


def _valid_layout(layout) -> bool:
    return (isinstance(layout, dict) and set(layout) == {"games", "batch"}
            and all(type(v) is int and v >= 1 for v in layout.values()))


def _is_cell_folder(p: Path) -> bool:
    """A cell's folder as :func:`_open_state` writes it (its key.json names a cell)."""
    try:
        return p.is_dir() and isinstance(json.loads((p / "key.json").read_text()).get("cell"), dict)
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        return False


def _open_state(state: Path, keys: dict[str, dict], layout: dict, report: RunReport) -> None:
    """Keep in ``state`` only the batches this spec can use, saying what else goes and why; record each cell's
    key and the batch layout.

    A folder that is no cell of the spec (a cell the grid no longer has, or an earlier layout of ``.state/``)
    is removed; so are a cell's batches played under another key (with what changed, :func:`_key_change`)
    and, when ``experiment.games`` or ``experiment.batch`` changed, the batches whose game range is no
    longer one of the spec's. Batches of other cells and other ranges are reused as they are."""
    import shutil

    state.mkdir(parents=True, exist_ok=True)
    strays = sorted(p for p in state.iterdir() if p.name not in keys)
    cells = [p.name for p in strays if _is_cell_folder(p)]
    if cells:
        _notice(report, f"{state}: removing the saved batches of {_cells_label(cells)}, which the spec no "
                        "longer has")
    others = [p.name for p in strays if p.name not in cells]
    if others:
        _notice(report, f"{state}: removing {', '.join(others[:4])}{' ...' if len(others) > 4 else ''}: "
                        "not a cell's folder (an earlier layout of .state/, one folder per spec, or a file put "
                        "there by hand)")
    for p in strays:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()
    discarded: dict[str, list[tuple[str, int]]] = {}  # why -> [(cell, batches)]
    moved: dict[str, list[tuple[str, int]]] = {}
    for cid, key in keys.items():
        cdir = state / cid
        cdir.mkdir(exist_ok=True)
        kpath = cdir / "key.json"
        old: dict | None = None
        if kpath.exists():
            try:
                old = json.loads(kpath.read_text())
            except (OSError, UnicodeDecodeError, ValueError):
                old = {}
        want = {**key, "layout": layout}
        if old == want:
            continue
        files = [f for f in cdir.iterdir() if f.name != "key.json"]
        same_key = isinstance(old, dict) and old.get("key") == key["key"]
        if same_key and _valid_layout(old.get("layout")):  # another layout: the batches whose games moved go
            gone = [f for f in files if _batch_index(f) is not None
                    and _batch_range(old["layout"], _batch_index(f)) != _batch_range(layout, _batch_index(f))]
            why, into = _layout_change(old["layout"], layout), moved
        else:
            gone = files
            why = "an unreadable key.json (its batch layout)" if same_key else _key_change(old, key)
            into = discarded
        if gone:  # counted in batches (a batch's files share its number)
            into.setdefault(why, []).append((cid, len({_batch_index(f) if _batch_index(f) is not None else f.name
                                                       for f in gone})))
        for f in gone:
            if f.is_dir() and not f.is_symlink():
                shutil.rmtree(f)
            else:
                f.unlink()
        atomic_write_text(kpath, dumps(want))
    for why, hit in discarded.items():
        _notice(report, f"{state}: the {sum(n for _, n in hit)} saved batch(es) of {_cells_label([c for c, _ in hit])} "
                        f"were played with {why}; discarding them and replaying every batch of "
                        f"{'that cell' if len(hit) == 1 else 'those cells'}")
    for why, hit in moved.items():
        _notice(report, f"{state}: {why}: discarding the {sum(n for _, n in hit)} saved batch(es) of "
                        f"{_cells_label([c for c, _ in hit])} whose game range is no longer one of the spec's "
                        "batches; every other saved batch is reused")


# ------------------------------------------------------------------ batch files
IDENTITY = ("cell", "seed", "game0", "games")


def _batch_paths(cdir: Path, b: int) -> tuple[Path, Path, Path]:
    """(aggregate, per-game table, record) of batch ``b``; the record is written last."""
    return cdir / f"batch_{b:06d}.npz", cdir / f"games_{b:06d}.parquet", cdir / f"batch_{b:06d}.json"


def _batch_state(paths: tuple[Path, Path, Path], expect: dict, write_games: bool) -> tuple[bool, str | None]:
    """(usable, why not): a batch is usable when its record is this batch's and its files match their sha256.

    ``why`` is None for a batch never started (nothing to say), else names the file and the fault.
    """
    npz, games, rec = paths
    if not rec.exists():
        present = [p for p in (npz, games) if p.exists()]
        return False, (f"{present[0]}: no batch record beside it (the batch was interrupted, or the file was "
                       "copied in)" if present else None)
    try:
        record = json.loads(rec.read_text())
        if not isinstance(record, dict):
            raise ValueError("not a JSON object")
    except (OSError, UnicodeDecodeError, ValueError) as e:
        return False, f"{rec}: unreadable batch record ({e})"
    if record.get("cell") != expect["cell"]:
        return False, f"{rec}: a batch of cell {record.get('cell')!r}, not {expect['cell']!r} (copied from another cell?)"
    if (record.get("game0"), record.get("games")) != (expect["game0"], expect["games"]):
        return False, (f"{rec}: records games {record.get('game0')}+{record.get('games')}, this batch is games "
                       f"{expect['game0']}+{expect['games']} (copied from another batch?)")
    for k in ("seed", "key", "content_hash"):
        if record.get(k) != expect[k]:
            return False, f"{rec}: records {k} {record.get(k)!r}, this run has {expect[k]!r} (copied from another run?)"
    files = record.get("files") if isinstance(record.get("files"), dict) else {}
    for f in (npz, games) if write_games else (npz,):
        if f.name not in files:
            return False, f"{rec}: names no {f.name} (this run needs it)"
        if not f.is_file():
            return False, f"{f}: missing"
        if file_sha256(f) != files[f.name]:
            return False, f"{f}: its sha256 differs from the one in {rec.name} (truncated or corrupt)"
    return True, None


def _record_engines(rec: Path) -> list[str]:
    """The engines a usable batch's record names (the first wrote its files); empty when it names none."""
    try:
        engines = json.loads(rec.read_text()).get("engines")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        return []
    return [e for e in engines if isinstance(e, str)] if isinstance(engines, list) else []


def _engines_label(engines) -> str:
    """``['kernel']`` -> ``the kernel engine``; ``['kernel', 'reference']`` -> ``the kernel and reference engines``."""
    engines = list(engines)
    if not engines:
        return "an engine their record does not name (an older version saved them)"
    return f"the {' and '.join(engines)} engine{'s' if len(engines) > 1 else ''}"


def _verified_bytes(path: Path, rec: Path) -> bytes:
    """A batch file's bytes, checked again against its record as the run assembles (under the lock)."""
    try:
        want = json.loads(rec.read_text())["files"][path.name]
        data = path.read_bytes()
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as e:
        raise StudyError(f"{path}: unreadable while assembling ({e}); run the same command again") from None
    if hashlib.sha256(data).hexdigest() != want:
        raise StudyError(f"{path}: changed while this run was assembling; run the same command again")
    return data


def _load_aggregate(paths: tuple[Path, Path, Path], expect: dict) -> dict[str, np.ndarray]:
    npz, _, rec = paths
    arrays = dict(np.load(io.BytesIO(_verified_bytes(npz, rec))))
    ident = json.loads(arrays.pop("batch").tobytes())
    if ident != {k: expect[k] for k in IDENTITY}:
        raise StudyError(f"{npz}: holds batch {ident}, not {({k: expect[k] for k in IDENTITY})}; "
                         "run the same command again")
    return arrays


# ------------------------------------------------------------------ the run
def run_study(
    spec: Spec,
    out: Path | str | None = None,
    *,
    engine: str | None = None,
    progress: bool | None = None,
    max_batches: int | None = None,
    games_table: bool | None = None,
    charts: bool = True,
    scheduler: str | None = None,
    ready_timeout: float | None = None,
) -> RunReport:
    """Play every (cell, batch) not yet done, then assemble the result files.

    Holds the lock on ``out`` throughout (a second run into it raises
    :class:`sim.manifest.ResultsError`). ``scheduler`` plays the batches on a
    Dask cluster (``'local:N'`` or ``'tcp://HOST:PORT'``, see
    :mod:`sim.distributed`; ``ready_timeout``: how long it waits for a ready
    worker, see :class:`~sim.distributed.DaskRunner`); the files are the same
    as a run here.
    """
    out = Path(out) if out is not None else Path("results") / spec.name
    engine = spec.model.experiment.engine if engine is None else engine
    spec.check_engine(engine)
    if scheduler is not None:
        from sim.distributed import DaskRunner, parse_scheduler

        scheduler = parse_scheduler(scheduler)  # a bad value is refused before the output folder is touched
    with locked(out):
        runner = DaskRunner(scheduler, ready_timeout=ready_timeout) if scheduler is not None else None
        # closed also when the run stops before it plays (e.g. a refused .state); at once after a Ctrl-C
        with runner if runner is not None else contextlib.nullcontext():
            return _run_locked(spec, out, engine, progress, max_batches, games_table, charts, runner)


@dataclass(frozen=True)
class BatchJob:
    """One batch of one cell: games ``game0 .. game0 + size - 1`` of ``seed``."""

    cell: Cell
    b: int
    game0: int
    size: int
    strategy: str
    params: tuple
    seed: int
    engine: str
    skills: str = "pick"  # the spec's advanced-skill set-up (experiment.skills)
    source_hash: str | None = None  # a module strategy's: the source the batch's key records
    plays: str | None = None  # a registered strategy's: what its seats play by the batch's key (sim.run.plays_text)

    def __str__(self) -> str:
        return f"batch {self.b} of cell {self.cell.id} (games {self.game0}..{self.game0 + self.size - 1})"


def play_batch(job: BatchJob, contents: dict, threads: int | None = None) -> pl.DataFrame:
    """The games of one batch as the per-game table (labelled with the cell); runs here or on a worker."""
    from sim.rules.state import Settings
    from sim.run import searched_elsewhere_said_by_caller, simulate
    from strategies import modules

    cell = job.cell
    strategy, params = job.strategy, dict(job.params)
    if modules.is_module_path(strategy):  # [strategy.X] module = "package.module:object"
        try:  # the source the batch's key records, never one edited since
            strategy, params = modules.load(strategy, params, job.source_hash), None
        except modules.SourceChanged as e:
            raise StudyError(f"{e}: {_EDITED_MID_RUN}") from None
    elif job.plays is not None:  # the seats as the batch's key records them, never as a file edited since says
        from sim.run import PlaysChanged, checked_team

        try:
            strategy, params = checked_team(strategy, cell.players, params, job.plays), None
        except PlaysChanged:
            raise StudyError(f"strategy {cell.strategy} would play other parameters than when the run began (an "
                             f"edited strategies/tuned.toml?): {_EDITED_MID_RUN}") from None
    with searched_elsewhere_said_by_caller():  # the run said it before any batch (_warn_searched_elsewhere)
        df = simulate(
            players=cell.players, games=job.size, strategy=strategy, params=params, seed=job.seed,
            characters=None if cell.characters == "default" else cell.characters,
            variant=Settings.with_skills(cell.variant, job.skills), content=contents[cell.setup], engine=job.engine,
            game0=job.game0, threads=threads,
        )
    return df.with_columns(pl.lit(cell.id).alias("cell"), pl.lit(cell.strategy).alias("strategy"),
                           pl.lit(cell.setup).alias("setup"))


def _save_batch(df: pl.DataFrame, paths: tuple[Path, Path, Path], expect: dict, write_games: bool,
                need: np.ndarray, engine: str) -> None:
    """Write one played batch: its games table (if kept), its tally, and last its record with checksums
    and the engine that played it."""
    npz_path, games_path, rec_path = paths
    files = {}
    if write_games:
        write_parquet_atomic(df, games_path)
        files[games_path.name] = file_sha256(games_path)
    ident = np.frombuffer(json.dumps({k: expect[k] for k in IDENTITY}, sort_keys=True).encode(), np.uint8)
    data = _npz_bytes({**aggregate_batch(df, need), "batch": ident})
    atomic_write_bytes(npz_path, data)
    files[npz_path.name] = hashlib.sha256(data).hexdigest()
    atomic_write_text(rec_path, dumps({**expect, "engines": [engine], "files": files}))


def _cross_check(df: pl.DataFrame, job: BatchJob, paths: tuple[Path, Path, Path], write_games: bool,
                 need: np.ndarray, played_by: list[str]) -> None:
    """Check a batch just replayed on ``job.engine`` against the files another engine saved for it.

    The same tally (every count, histogram and win bit) and, when the run keeps one, the same per-game
    table: then ``job.engine`` joins the record's ``engines`` and the saved files stay as they are.
    Otherwise a StudyError names what differs (and the first game that differs): the engines are meant
    to play the very same games, so that is a bug; the saved files and their record are left untouched.
    """
    npz, games, rec = paths
    old = dict(np.load(io.BytesIO(_verified_bytes(npz, rec))))
    old.pop("batch", None)
    new = aggregate_batch(df, need)
    differ = []
    arrays = sorted(k for k in set(old) | set(new)
                    if k not in old or k not in new or old[k].dtype != new[k].dtype
                    or not np.array_equal(old[k], new[k]))
    if arrays:
        differ.append(f"the tally's {', '.join(arrays)}")
    if write_games:
        saved = pl.read_parquet(io.BytesIO(_verified_bytes(games, rec)))
        if not saved.equals(df):
            differ.append(f"the per-game table{_first_difference(saved, df)}")
    if differ:
        raise StudyError(
            f"the {job.engine} engine played {job} differently from {_engines_label(played_by)} that saved it in "
            f"{rec.parent} (saved and replayed differ in {'; '.join(differ)}). Both engines are meant to play the very "
            "same games, so this is a bug to report; the saved batch is left as it was (run with --engine "
            f"{played_by[0] if played_by else 'kernel'} to use it, or give a new --out to keep both runs apart)")
    record = json.loads(rec.read_text())
    record["engines"] = played_by + [job.engine]
    atomic_write_text(rec, dumps(record))


def _first_difference(saved: pl.DataFrame, played: pl.DataFrame) -> str:
    """``, first at game 7 in outcome, turns``: where two per-game tables first differ."""
    if saved.schema != played.schema:
        return f", its columns ({dict(saved.schema)} saved, {dict(played.schema)} played)"
    for a, b in zip(saved.iter_rows(named=True), played.iter_rows(named=True)):
        if a != b:
            return f", first at game {b['game']} in {', '.join(c for c in a if a[c] != b[c])}"
    return f", its length ({saved.height} games saved, {played.height} played)"


def _warn_searched_elsewhere(spec, cells, contents) -> None:
    """Before any batch, here (a cluster's workers would say it where no one reads it): a warning for each
    strategy whose parameters were searched for another game than its cell's (``tuned`` on another pack)."""
    from sim.rules.state import Settings
    from sim.run import make_team, warn_searched_elsewhere
    from strategies import modules

    for cell in cells:
        base, params = spec.strategy_of(cell.strategy)
        # a module strategy: its object (a KernelStrategy on tuned, say), as each batch loads it
        team = [modules.load(base, params)] if modules.is_module_path(base) else make_team(base, cell.players, params)
        content = contents[cell.setup]
        settings = Settings.build(content, cell.players, None if cell.characters == "default" else cell.characters,
                                  Settings.with_skills(cell.variant, spec.model.experiment.skills))
        warn_searched_elsewhere(team, content, settings)


def _run_locked(spec, out: Path, engine, progress, max_batches, games_table, charts, runner=None) -> RunReport:
    from sim.content import unprinted as unprinted_of
    from sim.content.loader import collecting_unprinted, warn_unprinted_summary
    from sim.content.overrides import load_with_overrides
    from sim.distributed import LocalRunner
    from sim.run import plays_text, resolve_content

    report = RunReport(out)
    cells = spec.cells()
    contents = {}
    base_pack = resolve_content(spec.content_path())  # loaded once: it says its own unprinted values
    unprinted: list = []
    with collecting_unprinted(unprinted):  # a sweep's values said together: one line a field, not one a value
        for setup in sorted({c.setup for c in cells}):
            contents[setup] = (
                load_with_overrides(spec.content_path(), spec.overrides_of(setup), f"{spec.path.name} [setup.{setup}]")
                if spec.overrides_of(setup)
                else base_pack
            )
    warn_unprinted_summary(unprinted, f"{spec.path.name}'s setups", known=unprinted_of(base_pack))
    _warn_searched_elsewhere(spec, cells, contents)
    modules_at_start = module_hashes(spec)
    keys = cell_keys(spec, contents, modules=modules_at_start)
    state = out / ".state"
    _open_state(state, keys, {"games": spec.games, "batch": spec.batch}, report)
    n_batches = -(-spec.games // spec.batch)
    total = len(cells) * n_batches
    show = sys.stderr.isatty() if progress is None else progress
    bar = None
    if show:
        from tqdm import tqdm

        bar = tqdm(total=total * spec.batch, unit="game", unit_scale=True, desc=spec.name, file=sys.stderr)
    write_games = games_table if games_table is not None else len(cells) * spec.games <= spec.model.experiment.games_table_limit
    todo: list[tuple[BatchJob, tuple[Path, Path, Path], dict]] = []
    for cell in cells:
        cdir = state / cell.id
        cdir.mkdir(exist_ok=True)
        content = contents[cell.setup]
        base, params = spec.strategy_of(cell.strategy)
        for b in range(n_batches):
            game0 = b * spec.batch
            size = min(spec.batch, spec.games - game0)
            paths = _batch_paths(cdir, b)
            expect = {"cell": cell.id, "seed": spec.seed, "game0": game0, "games": size, "key": keys[cell.id]["key"],
                      "content_hash": content.hash}
            usable, why = _batch_state(paths, expect, write_games)
            played_by = _record_engines(paths[2]) if usable else None
            if usable and engine in played_by:
                report.skipped.append((cell.id, b))
                if bar:
                    bar.update(size)
                continue
            if max_batches is not None and len(todo) >= max_batches:
                continue
            if why:
                _notice(report, f"{why}; replaying batch {b} of {cell.id}")
                report.replayed.append((cell.id, b))
            if played_by is None:
                paths[2].unlink(missing_ok=True)
            plays = keys[cell.id]["strategy"]["plays"]
            module = isinstance(plays, dict) and "source_hash" in plays
            job = BatchJob(cell, b, game0, size, base, tuple(sorted(params.items())), spec.seed, engine,
                           spec.model.experiment.skills, plays["source_hash"] if module else None,
                           None if module else plays_text(plays))
            todo.append((job, paths, expect, played_by))
    stopped = max_batches is not None and len(todo) + len(report.skipped) < total
    saving = {job: (paths, expect, played_by) for job, paths, expect, played_by in todo}
    checks = [played_by for _, _, _, played_by in todo if played_by is not None]
    if checks:
        others = sorted({e for p in checks for e in p})
        _notice(report, f"{out}: {len(checks)} saved batch(es) were played by {_engines_label(others)}, "
                        f"not the {engine}; replaying them on the {engine} engine to check that it plays the same "
                        "games (give a new --out to play afresh instead)")
    try:
        with (runner if runner is not None else LocalRunner()) as r:
            if todo and runner is not None:
                _notice(report, f"playing {len(todo)} batch(es) on {r.description}")
            for job, df in r.run(play_batch, [job for job, _, _, _ in todo], shared=contents,
                                 modules=spec.module_strategies().values()):
                paths, expect, played_by = saving[job]
                need = contents[job.cell.setup].for_players(job.cell.players).lobo_intel_required
                if played_by is None:
                    _save_batch(df, paths, expect, write_games, need, engine)
                else:
                    _cross_check(df, job, paths, write_games, need, played_by)
                    report.checked.append((job.cell.id, job.b))
                report.computed.append((job.cell.id, job.b))
                if bar:
                    bar.update(job.size)
    finally:
        if bar:
            bar.close()
    if stopped:
        return report
    modules_now = module_hashes(spec)
    if modules_now != modules_at_start:  # the files' metadata must name the source the batches played
        edited = sorted(n for n, m in modules_now.items() if m != modules_at_start.get(n))
        raise StudyError(f"the source of module strategy {', '.join(edited)} was edited since the run began: "
                         f"{_EDITED_MID_RUN}")
    if cell_keys(spec, contents, modules=modules_now) != keys:  # nor what the seats play (an edited tuned.toml)
        raise StudyError("what decides a cell's games changed since the run began (an edited strategies/tuned.toml, "
                         f"or the simulator's own source): {_EDITED_MID_RUN}")
    for cell in cells:
        for b in range(n_batches):
            label = ",".join(_record_engines(_batch_paths(state / cell.id, b)[2])) or "unrecorded"
            report.batch_engines[label] = report.batch_engines.get(label, 0) + 1
    report.files = assemble(spec, out, state, cells, n_batches, contents, write_games, charts, keys, engine,
                            report.batch_engines)
    report.finished = True
    return report


def result_metadata(spec: Spec, contents: dict) -> dict:
    """What every result file carries: only what decides its numbers (no revision, no versions, no time)."""
    rk = results_key(spec, contents)
    return {
        "spec": spec.raw,
        "spec_file": spec.path.name,
        "seed": spec.seed,
        "content_hash": rk["content"],
        "rules_version": rk["rules_version"],
        "strategy_params": rk["strategy_params"],
        **({"strategy_modules": rk["strategy_modules"]} if "strategy_modules" in rk else {}),
        "key": _digest(rk),
    }


def provenance(keys: dict[str, dict], engine: str, batch_engines: dict[str, int] | None = None) -> dict:
    """What produced a run without deciding its numbers; kept out of the committed files.

    ``engine`` is the engine of the run that assembled the files (every batch was played by it, then or
    before); ``batch_engines`` counts the batches by the engines that played them, in the order they did
    (``{"kernel,reference": 4}``: the kernel saved them, the reference engine replayed them and matched).
    """
    source = next(iter(keys.values()))["source"]
    return {"git_revision": git_revision(), "versions": package_versions(), "source_hash": source,
            "resume_key": resume_digest(keys), "engine": engine,
            "batch_engines": dict(sorted((batch_engines or {}).items()))}


def assemble(spec, out: Path, state: Path, cells, n_batches, contents, write_games, charts, keys, engine,
             batch_engines: dict[str, int] | None = None) -> list[Path]:
    """Build summary.parquet (and games.parquet, metadata.json, charts) from the batch files; the manifest last."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    (out / MANIFEST).unlink(missing_ok=True)  # until the new one is written, the folder holds no complete run
    rows = []
    for cell in cells:
        parts = []
        for b in range(n_batches):
            game0 = b * spec.batch
            expect = {"cell": cell.id, "seed": spec.seed, "game0": game0, "games": min(spec.batch, spec.games - game0)}
            parts.append(_load_aggregate(_batch_paths(state / cell.id, b), expect))
        rows.append(cell_summary(cell, parts, spec.games, int(contents[cell.setup].turn_cap)))
    summary = pl.DataFrame(rows)
    meta = result_metadata(spec, contents)
    pmeta = parquet_metadata(meta)
    files = [out / "summary.parquet"]
    write_parquet_atomic(summary, files[0], pmeta)
    games_file = out / "games.parquet"
    if write_games:
        tmp = games_file.with_name(games_file.name + ".tmp")
        writer = None
        try:
            for cell in cells:
                for b in range(n_batches):
                    _, gpath, rec = _batch_paths(state / cell.id, b)
                    t = pq.read_table(pa.BufferReader(_verified_bytes(gpath, rec)))
                    if writer is None:
                        schema = t.schema.with_metadata({k.encode(): v.encode() for k, v in pmeta.items()})
                        writer = pq.ParquetWriter(tmp, schema, compression="zstd")
                    writer.write_table(pa.Table.from_batches(t.to_batches(), schema=writer.schema))
        except Exception:  # a full disk, say: leave no half-written table behind (the batches are kept)
            if writer is not None:
                writer.close()
                writer = None
            tmp.unlink(missing_ok=True)
            raise
        finally:
            if writer is not None:
                writer.close()
        os.replace(tmp, games_file)
        files.append(games_file)
    elif games_file.exists():
        games_file.unlink()  # a stale per-game table from another spec would mislead
    files.append(out / METADATA)
    atomic_write_text(files[-1], dumps(meta))
    from sim.charts import COMPARE_CHARTS, STUDY_CHARTS, study_charts

    # charts drawn from an earlier run of this folder would show other numbers than these results
    compare_charts = [chart for pattern in COMPARE_CHARTS for chart in out.glob(pattern)]
    for chart in [*compare_charts, *(() if charts else (out / name for name in STUDY_CHARTS))]:
        chart.unlink(missing_ok=True)
    if charts:
        files.extend(study_charts(summary, out, spec))
    prov = out / PROVENANCE
    atomic_write_text(prov, dumps(provenance(keys, engine, batch_engines)))
    manifest = write_manifest(out, files, meta["key"])
    return files + [prov, manifest]


def check_current(folder: Path | str, need: tuple = ("summary.parquet",)) -> dict:
    """The manifest of a complete run (:func:`sim.manifest.check_folder`) played by the rules this code plays:
    a run of another ``RULES_VERSION`` is refused (its numbers describe other rules), naming both versions."""
    folder = Path(folder)
    manifest = check_folder(folder, need=tuple(need) + (METADATA,))
    try:
        version = json.loads((folder / METADATA).read_text()).get("rules_version")
    except (OSError, ValueError, AttributeError) as e:
        raise ResultsError(f"{folder / METADATA}: unreadable ({e}); run the study again into this folder") from None
    if version != sim.RULES_VERSION:
        raise ResultsError(f"{folder}: played by RULES_VERSION {version!r}, but this code plays {sim.RULES_VERSION!r}: "
                           "its numbers describe other rules; run the study again into this folder")
    return manifest


# a run's own files, named by the reader that reads each (a path to one of them given to another reader is
# refused by name, not taken for a folder)
_READERS = {"summary.parquet": ("read_summary", "the summary"), "games.parquet": ("read_games", "the per-game table"),
            METADATA: ("read_metadata", "the run's metadata"), MANIFEST: (None, "the run's manifest"),
            PROVENANCE: (None, "where the run's code came from")}


def _run_folder(run: Path | str, reader: str, name: str) -> Path:
    """The results folder ``reader`` reads ``name`` from: ``run`` itself, or the folder of ``run`` where it names
    that file. Another file (one of the run's, or any that exists) is refused, naming it and the reader that reads it
    where there is one; a path that is neither is taken for a folder (:func:`check_current` says it is none)."""
    path = Path(run)
    if path.is_dir():
        return path
    if path.name == name:
        return path.parent
    if path.name in _READERS or path.is_file():
        other, what = _READERS.get(path.name, (None, None))
        hint = f" ({what})" if what else ""
        if other:
            hint += f"; read it with sim.study.{other}({str(path.parent)!r})"
        raise ResultsError(f"{path}: {reader} reads a results folder or its {name}, not {path.name}{hint}")
    return path


def read_summary(run: Path | str) -> pl.DataFrame:
    """The summary of a complete run (a results folder or its summary.parquet), checked against its manifest
    and the rules version (:func:`check_current`). Any other file is refused, naming it (``games.parquet``
    is :func:`read_games`')."""
    folder = _run_folder(run, "read_summary", "summary.parquet")
    check_current(folder, need=("summary.parquet",))
    return pl.read_parquet(folder / "summary.parquet")


def read_games(run: Path | str, columns: list[str] | None = None) -> pl.DataFrame:
    """The per-game table of a complete run (a results folder or its games.parquet), checked as
    :func:`read_summary` checks the summary: from the same run as the summary beside it, by the rules this
    code plays. Any other file is refused, naming it."""
    folder = _run_folder(run, "read_games", "games.parquet")
    check_current(folder, need=("games.parquet",))
    return pl.read_parquet(folder / "games.parquet", columns=columns)


__all__ = ["run_study", "read_summary", "read_games", "check_current", "read_metadata", "RunReport", "StudyError", "ResultsError", "DIMENSIONS",
           "MEAN_COLUMNS", "OUTCOMES", "QUANTILES"]
