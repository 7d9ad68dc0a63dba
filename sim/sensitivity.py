"""How much each setup value moves the win rate (``smersh-sim sensitivity``).

For every knob (a content-override path) and player count, the knob is moved
one step down and one step up from the pack's value, and the games are played
again with the same seeds (common random numbers). The paired difference in
win rate against the unchanged pack, with its 95% interval (McNemar), is the
knob's effect per step. A step the pack refuses (off the printed board or
track) is reported as refused, with the reason, and plays nothing.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

PER_PLAYER_KNOBS = (
    "lobo_start",
    "villain_counts.minus_one",
    "villain_counts.plus_two",
    "villain_counts.injury",
    "location_target",
    "overflow_limit",
    "board_intel",
    "extra_un",
    "extra_top_secret",
    "extra_choice",
    "henchmen_level2",
    "remove_random_plus_one",
    "mission_resolve",
)


class SensitivityError(ValueError):
    """A knob that cannot be stepped."""


def default_knobs(players: int) -> list[str]:
    """The numeric setup values a designer tunes, for one player count."""
    return [f"setup.player_count[players={players}].{k}" for k in PER_PLAYER_KNOBS]


def knob_for(path: str, players: int) -> str:
    """A knob as given (``{players}`` in it is replaced by the player count)."""
    return path.replace("{players}", str(players))


def current_value(raw: dict, path: str) -> int:
    """The pack's value at an override path (``villain.counts.X``: the number of X cards)."""
    from sim.content.overrides import get_path

    table, _, kind = path.rpartition(".")
    if table == "villain.counts" or table.endswith(".villain_counts"):
        own = get_path(raw, table)[0] if table != "villain.counts" and _has(raw, table) else {}
        comp = raw["villain.toml"].get("composition", {})
        if kind not in comp:
            raise SensitivityError(f"{path}: the villain deck has no kind {kind!r} (kinds: {', '.join(comp)})")
        return int(own.get(kind, comp[kind]))
    if path.endswith(".lobo_start") and not _has(raw, path):
        return int(raw["lobo.toml"]["track"]["start"])  # this player count plays the pack's start
    values = get_path(raw, path)
    if len(set(map(repr, values))) != 1:
        raise SensitivityError(f"{path}: selects entries with different values {values}; name one entry")
    v = values[0]
    if isinstance(v, bool) or not isinstance(v, int):
        raise SensitivityError(f"{path}: {v!r} is not an integer, so it has no step")
    return v


def _has(raw: dict, path: str) -> bool:
    from sim.content.overrides import OverrideError, get_path

    try:
        return bool(get_path(raw, path))
    except OverrideError:
        return False


def play_win_vector(job: tuple, shared=None, threads: int | None = None):
    """The per-game wins of one (index, (pack, players, games, strategy, params, seed, engine)) job."""
    import sim

    _, (pack, players, games, strategy, params, seed, engine) = job
    return sim.simulate(players=players, games=games, strategy=strategy, params=dict(params), seed=seed,
                        content=pack, engine=engine, threads=threads)["win"].to_numpy()


def sensitivity(players: list[int], knobs: list[str] | None = None, *, strategy: str = "heuristic",
                params: dict | None = None, games: int = 20_000, seed: int = 1, content=None,
                engine: str = "kernel", progress=None, runner=None) -> pl.DataFrame:
    """One row per (knob, player count, step): the paired change in win rate against the unchanged pack.

    ``runner`` (:mod:`sim.distributed`) plays the settings: here by default, or on a Dask cluster.
    """
    from sim.compare import paired_stats
    from sim.content import DEFAULT_PACK, ContentError, load_raw
    from sim.content.overrides import OverrideError, load_with_overrides
    from sim.distributed import LocalRunner
    from sim.run import resolve_content
    from sim.tune import Knob, overrides_of

    if games < 1:
        raise SensitivityError(f"games must be positive, got {games}")
    runner = runner if runner is not None else LocalRunner()
    path = DEFAULT_PACK if content is None else content
    raw = load_raw(path)
    base = resolve_content(path)
    prm = tuple(sorted((params or {}).items()))
    rows, tasks = [], []  # tasks: (row index or -1 for a player count's unchanged pack, players)
    for p in players:
        tasks.append((("base", p), (base, p, games, strategy, prm, seed, engine)))
        for given in knobs or default_knobs(p):
            knob = knob_for(given, p)
            try:
                value = current_value(raw, knob)
            except (OverrideError, SensitivityError) as e:
                raise SensitivityError(f"knob {knob}: {e}") from None
            for step in (-1, 1):
                row = {"knob": knob, "players": p, "step": step, "from": value, "to": value + step, "games": games,
                       "default_win_rate": None, "win_rate": None, "diff": None,
                       "diff_low": None, "diff_high": None, "refused": None}
                try:
                    pack = load_with_overrides(path, overrides_of([Knob(knob, (value + step,))], (value + step,)),
                                               f"sensitivity {knob}={value + step}")
                    tasks.append((len(rows), (pack, p, games, strategy, prm, seed, engine)))
                except ContentError as e:
                    row["refused"] = str(e)
                rows.append(row)
    wins = {key: w for (key, _), w in runner.run(play_win_vector, tasks)}
    for i, row in enumerate(rows):
        base_wins = wins[("base", row["players"])]
        row["default_win_rate"] = float(base_wins.mean())
        if row["refused"]:
            continue
        st = paired_stats(base_wins, wins[i])
        row.update(win_rate=st["win_rate"], diff=st["diff"], diff_low=st["paired_low"], diff_high=st["paired_high"])
        if progress:
            progress(f"{row['players']} players, {row['knob']} {row['from']}->{row['to']}: "
                     f"{st['diff'] * 100:+.2f} points")
    schema = {"knob": pl.Utf8, "players": pl.Int64, "step": pl.Int64, "from": pl.Int64, "to": pl.Int64,
              "games": pl.Int64, "default_win_rate": pl.Float64, "win_rate": pl.Float64, "diff": pl.Float64,
              "diff_low": pl.Float64, "diff_high": pl.Float64, "refused": pl.Utf8}
    return pl.DataFrame(rows, schema=schema)


def short_name(knob: str) -> str:
    """``setup.player_count[players=4].location_target`` -> ``location_target``."""
    if knob.startswith("setup.player_count["):
        return knob.split("].", 1)[1]
    return knob


def write_outputs(table: pl.DataFrame, out: Path) -> list[Path]:
    """sensitivity.parquet, sensitivity.csv and one tornado chart per player count under ``out``."""
    from sim.charts import tornado

    out.mkdir(parents=True, exist_ok=True)
    files = [out / "sensitivity.parquet", out / "sensitivity.csv"]
    table.write_parquet(files[0])
    table.write_csv(files[1])
    for p in sorted(table["players"].unique().to_list()):
        files.append(tornado(table.filter(pl.col("players") == p), out / f"tornado_{p}p.png", p))
    return files


__all__ = ["SensitivityError", "default_knobs", "sensitivity", "short_name", "write_outputs"]
