"""Run an experiment spec: cells x batches, resumable, with atomic writes and flat memory.

Each (cell, batch) is played once and its aggregate saved under
``<out>/.state/<spec-hash>/``; a run started again skips every finished batch
and produces byte-identical files. Final files (``summary.parquet``,
``games.parquet``, charts) are assembled from the batch aggregates only and
written under a temporary name, then renamed into place.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

import sim
from sim.experiments import DIMENSIONS, Cell, Spec
from sim.results import wilson_interval
from sim.rules.state import OUTCOME_NAMES

OUTCOMES = tuple(OUTCOME_NAMES.values())
MEAN_COLUMNS = (
    "lobo", "location_track", "henchmen_defeated", "pool_weapon", "pool_tech", "pool_double_agent",
    "pool_atomic", "tests_attempted", "tests_passed", "henchman_tests", "henchman_passed",
    "gambles_played", "gambles_won", "injuries", "knockouts", "resolve_spent", "un_used", "overflows",
    "airports_closed", "missions_completed", "villain_drawn", "top_secret_played", "rounds",
)
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


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
    for name in ("smersh-sim", "numpy", "numba", "polars", "pyarrow"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


# ------------------------------------------------------------------ batch aggregates
def aggregate_batch(df: pl.DataFrame, turn_cap: int) -> dict[str, np.ndarray]:
    """The sufficient statistics of one batch of games (what the summary needs)."""
    outcome = df["outcome"].to_list()
    wins = df["win"].to_numpy().astype(bool)
    turns = df["turns"].to_numpy().astype(np.int64)
    return {
        "n": np.array([len(df)], dtype=np.int64),
        "outcomes": np.array([outcome.count(o) for o in OUTCOMES], dtype=np.int64),
        "sums": np.array([int(df[c].sum()) for c in MEAN_COLUMNS], dtype=np.int64),
        "turns_hist": np.bincount(np.minimum(turns, turn_cap), minlength=turn_cap + 1).astype(np.int64),
        "win_bits": np.packbits(wins),
        "turns_sum": np.array([int(turns.sum())], dtype=np.int64),
    }


def _save_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, **arrays)
    os.replace(tmp, path)


@dataclass
class RunReport:
    """What a run did (for tests and the terminal)."""

    out: Path
    computed: list[tuple[str, int]] = field(default_factory=list)
    skipped: list[tuple[str, int]] = field(default_factory=list)
    finished: bool = False
    files: list[Path] = field(default_factory=list)


class StopRun(Exception):
    """Raised by ``max_batches`` to stop a run midway (the next run resumes)."""


def _quantile_from_hist(hist: np.ndarray, q: float) -> float:
    """The q-quantile of integer turns from their histogram (lower value, like numpy 'lower')."""
    total = hist.sum()
    if total == 0:
        return 0.0
    target = q * (total - 1)
    cum = np.cumsum(hist)
    return float(np.searchsorted(cum, target + 1, side="left"))


def cell_summary(cell: Cell, parts: list[dict[str, np.ndarray]], n_games: int) -> dict:
    n = int(sum(int(p["n"][0]) for p in parts))
    outcomes = sum(p["outcomes"] for p in parts)
    sums = sum(p["sums"] for p in parts)
    hist = sum(p["turns_hist"] for p in parts)
    wins_arr = np.concatenate([np.unpackbits(p["win_bits"])[: int(p["n"][0])] for p in parts]).astype(bool)
    wins = int(wins_arr.sum())
    lo, hi = wilson_interval(wins, n)
    row = {**cell.as_dict(), "cell": cell.id, "games": n, "wins": wins, "win_rate": wins / n, "ci_low": lo, "ci_high": hi}
    for name, k in zip(OUTCOMES, outcomes):
        row[f"share_{name}"] = float(k) / n
        row[f"n_{name}"] = int(k)
    row["turns_mean"] = float(sum(int(p["turns_sum"][0]) for p in parts)) / n
    for q in QUANTILES:
        row[f"turns_q{int(q * 100):02d}"] = _quantile_from_hist(hist, q)
    for name, s in zip(MEAN_COLUMNS, sums):
        row[f"mean_{name}"] = float(s) / n
    row["turns_histogram"] = [int(x) for x in hist]
    row["win_bits"] = np.packbits(wins_arr).tobytes()
    assert n == n_games
    return row


def run_study(
    spec: Spec,
    out: Path | str | None = None,
    *,
    engine: str = "kernel",
    progress: bool | None = None,
    max_batches: int | None = None,
    games_table: bool | None = None,
    charts: bool = True,
) -> RunReport:
    """Play every (cell, batch) not yet done, then assemble the result files."""
    from sim.content.overrides import load_with_overrides
    from sim.run import resolve_content, simulate

    out = Path(out) if out is not None else Path("results") / spec.name
    out.mkdir(parents=True, exist_ok=True)
    state = out / ".state" / spec.hash[:16]
    state.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(state / "spec.json", spec.canonical_json().encode())
    report = RunReport(out)
    cells = spec.cells()
    n_batches = -(-spec.games // spec.batch)
    total = len(cells) * n_batches
    show = sys.stderr.isatty() if progress is None else progress
    bar = None
    if show:
        from tqdm import tqdm

        bar = tqdm(total=total * spec.batch, unit="game", unit_scale=True, desc=spec.name, file=sys.stderr)
    contents = {}
    for setup in sorted({c.setup for c in cells}):
        contents[setup] = (
            resolve_content(spec.content_path())
            if setup == "default"
            else load_with_overrides(spec.content_path(), spec.overrides_of(setup), f"{spec.path.name} [setup.{setup}]")
        )
    write_games = games_table if games_table is not None else len(cells) * spec.games <= spec.model.experiment.games_table_limit
    done_now = 0
    try:
        for cell in cells:
            cdir = state / cell.id
            cdir.mkdir(exist_ok=True)
            content = contents[cell.setup]
            base, params = spec.strategy_of(cell.strategy)
            for b in range(n_batches):
                game0 = b * spec.batch
                size = min(spec.batch, spec.games - game0)
                agg_path = cdir / f"batch_{b:06d}.npz"
                games_path = cdir / f"games_{b:06d}.parquet"
                if agg_path.exists() and (not write_games or games_path.exists()):
                    report.skipped.append((cell.id, b))
                    if bar:
                        bar.update(size)
                    continue
                if max_batches is not None and done_now >= max_batches:
                    raise StopRun(f"stopped after {done_now} batches")
                df = simulate(
                    players=cell.players, games=size, strategy=base, params=params, seed=spec.seed,
                    characters=None if cell.characters == "default" else cell.characters,
                    variant=cell.variant, content=content, engine=engine, game0=game0,
                )
                df = df.with_columns(pl.lit(cell.id).alias("cell"), pl.lit(cell.strategy).alias("strategy"),
                                     pl.lit(cell.setup).alias("setup"))
                if write_games:
                    write_parquet_atomic(df, games_path)
                _save_npz(agg_path, aggregate_batch(df, int(content.turn_cap)))
                report.computed.append((cell.id, b))
                done_now += 1
                if bar:
                    bar.update(size)
    except StopRun:
        if bar:
            bar.close()
        return report
    if bar:
        bar.close()
    report.files = assemble(spec, out, state, cells, n_batches, contents, write_games, charts)
    report.finished = True
    return report


def result_metadata(spec: Spec, contents: dict) -> dict[str, str]:
    return {
        "smersh.spec": spec.canonical_json(),
        "smersh.spec_file": spec.path.name,
        "smersh.seed": str(spec.seed),
        "smersh.content_hash": json.dumps({k: v.hash for k, v in sorted(contents.items())}, sort_keys=True),
        "smersh.rules_version": sim.RULES_VERSION,
        "smersh.versions": json.dumps(package_versions(), sort_keys=True),
        "smersh.git_revision": git_revision(),
    }


def assemble(spec, out: Path, state: Path, cells, n_batches, contents, write_games, charts) -> list[Path]:
    """Build summary.parquet (and games.parquet, charts) from the batch aggregates."""
    rows = []
    for cell in cells:
        parts = [dict(np.load(state / cell.id / f"batch_{b:06d}.npz")) for b in range(n_batches)]
        rows.append(cell_summary(cell, parts, spec.games))
    summary = pl.DataFrame(rows)
    meta = result_metadata(spec, contents)
    files = [out / "summary.parquet"]
    write_parquet_atomic(summary, files[0], meta)
    games_file = out / "games.parquet"
    if write_games:
        import pyarrow as pa
        import pyarrow.parquet as pq

        tmp = games_file.with_name(games_file.name + ".tmp")
        writer = None
        try:
            for cell in cells:
                for b in range(n_batches):
                    t = pq.read_table(state / cell.id / f"games_{b:06d}.parquet")
                    if writer is None:
                        schema = t.schema.with_metadata({k.encode(): v.encode() for k, v in meta.items()})
                        writer = pq.ParquetWriter(tmp, schema, compression="zstd")
                    writer.write_table(pa.Table.from_batches(t.to_batches(), schema=writer.schema))
        finally:
            if writer is not None:
                writer.close()
        os.replace(tmp, games_file)
        files.append(games_file)
    elif games_file.exists():
        games_file.unlink()  # a stale per-game table from another spec would mislead
    if charts:
        from sim.charts import study_charts

        files.extend(study_charts(summary, out, spec))
    return files


def read_summary(run: Path | str) -> pl.DataFrame:
    path = Path(run) / "summary.parquet" if Path(run).is_dir() else Path(run)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no summary.parquet; run `smersh-sim run` first")
    return pl.read_parquet(path)


__all__ = ["run_study", "read_summary", "RunReport", "DIMENSIONS"]
