"""How much each setup value moves the win rate (``smersh-sim sensitivity``).

For every knob (a content-override path) and player count, the knob is moved
one step down and one step up from the pack's value, and the games are played
again with the same seeds (common random numbers). The paired difference in
win rate against the unchanged pack, with its 95% interval (Tango's score
interval, as in ``compare``), is the knob's effect per step. A step the pack
refuses (off the printed board or track) is reported as refused, with the
reason, and plays nothing (its row's ``games`` is 0, its win rate and difference empty).
A step whose games are the unchanged pack's, record for record (:func:`sim.run.games_digest`:
a value past where the rules stop reading it, such as a limit no game reaches), changed no game:
its row's ``same_games`` is true and its difference exactly 0 on these games, with no interval
(``diff_low`` and ``diff_high`` empty), where an estimate of +0.00 with an interval would
suggest a value the games read.

A step's ``from`` and ``to`` are the values a game of that player count plays,
which are not always the pack's: a player count's own ``lobo_start`` or
``villain_counts`` in ``setup.toml`` is played instead of ``lobo.track.start``
or ``villain.counts``. A step that changes nothing a game of that player count
plays (a global value the player count overrides, a row of ``setup.toml`` for
another player count) would show an effect of exactly zero, or a mere
reshuffle, for a value the games never moved: such a knob is refused, naming
the step, the player count and the reason, before any game is played.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl

from sim.text import count, counts

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
    "giver_extra_un",
    "giver_extra_top_secret",
    "extra_choice",
    "henchmen_level2",
    "remove_random_plus_one",
    "mission_resolve",
)


class SensitivityError(ValueError):
    """A knob that cannot be stepped."""


def default_knobs(players: int, content=None) -> list[str]:
    """The numeric setup values a designer tunes, for one player count: those of :data:`PER_PLAYER_KNOBS` that a
    seat of the pack's default line-up reads (``content``: a Content or a pack folder; None: the default pack).
    ``extra_un`` and ``extra_top_secret`` are read by characters without gives_un, ``giver_extra_un`` and
    ``giver_extra_top_secret`` by those with it (Calli Dagger), so the solo game (Calli alone) steps only hers."""
    from sim.rules.reads import seat_unread
    from sim.run import resolve_content

    pack = resolve_content(content).for_players(players)
    unread = seat_unread(pack, players)
    return [f"setup.player_count[players={players}].{k}" for k in PER_PLAYER_KNOBS if f"setup_{k}" not in unread]


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


def _row(raw: dict, players: int) -> dict | None:
    """``setup.toml``'s player_count entry for ``players`` (None when the pack has none)."""
    return next((r for r in raw["setup.toml"].get("player_count", []) if r.get("players") == players), None)


def _played_raw(raw: dict, players: int) -> dict:
    """The pack a ``players``-player game plays: the player count's own Dr. Lobo start and villain mix applied."""
    from sim.content.overrides import apply_overrides

    row = _row(raw, players) or {}
    ov: dict = {}
    if row.get("lobo_start") is not None:
        ov["lobo.track.start"] = row["lobo_start"]
    if row.get("villain_counts"):
        ov["villain.counts"] = dict(row["villain_counts"])
    return apply_overrides(raw, ov) if ov else raw


def _global_twin(path: str) -> str | None:
    """The pack-wide path a player count's own value stands for (``...lobo_start`` -> ``lobo.track.start``)."""
    table, _, kind = path.rpartition(".")
    if path == "lobo.track.start" or table == "villain.counts":
        return path
    if path.startswith("setup.player_count[") and path.endswith(".lobo_start"):
        return "lobo.track.start"
    if path.startswith("setup.player_count[") and table.endswith(".villain_counts"):
        return f"villain.counts.{kind}"
    return None


def played_value(raw: dict, path: str, players: int) -> int:
    """The value at ``path`` that a ``players``-player game plays.

    ``lobo.track.start`` and ``villain.counts.X`` give way to the player count's own ``lobo_start`` and
    ``villain_counts`` (``villain_counts.plus_one`` left out: the +1 cards that fill the deck); any other
    path is the pack's value.
    """
    twin = _global_twin(path)
    if twin is None:
        return current_value(raw, path)
    return current_value(_played_raw(raw, players), twin)


def value_played(raw: dict, path: str, players: int) -> int | None:
    """:func:`played_value`, or None where ``path`` names ``setup.toml``'s row for other player counts only
    (a ``players``-player game does not read it)."""
    if _other_rows(raw, path, players) is not None:
        return None
    return played_value(raw, path, players)


def _other_rows(raw: dict, path: str, players: int) -> list | None:
    """The player counts of the ``setup.toml`` rows ``path`` names, when none is ``players`` (else None)."""
    from sim.content.overrides import get_path

    m = re.match(r"setup\.player_count((?:\[[^\]]*\])+)\.", path)
    if not m:
        return None
    rows = get_path(raw, f"setup.player_count{m.group(1)}")
    counts = sorted(r.get("players") for r in rows)
    return None if players in counts else counts


def _why_idle(raw: dict, knob: str, players: int, played: int) -> str:
    """Why stepping ``knob`` leaves a ``players``-player game unchanged, in one clause."""
    row = _row(raw, players) or {}
    table, _, kind = knob.rpartition(".")
    own = None
    if knob == "lobo.track.start" and row.get("lobo_start") is not None:
        own = "lobo_start"
    elif table == "villain.counts" and kind in (row.get("villain_counts") or {}):
        own = f"villain_counts.{kind}"
    if own is not None:
        return (f"setup.toml's player_count {players} sets {own} = {played}, which {players}-player games play "
                f"instead (step setup.player_count[players={players}].{own})")
    return f"{players}-player games play {played} either way"


def _has(raw: dict, path: str) -> bool:
    from sim.content.overrides import OverrideError, get_path

    try:
        return bool(get_path(raw, path))
    except OverrideError:
        return False


def play_win_vector(job: tuple, shared=None, threads: int | None = None):
    """The per-game wins of one (index, (pack, players, games, strategy, params, seed, engine, recorded)) job, and the
    :func:`sim.run.games_digest` of its games (equal for two packs that play the same games, record for record);
    ``recorded`` is what the seats played when the run began (:func:`sim.run.checked_team`)."""
    import sim
    from sim.run import checked_team, games_digest, searched_elsewhere_said_by_caller

    _, (pack, players, games, strategy, params, seed, engine, recorded) = job
    team = checked_team(strategy, players, dict(params), recorded)
    with searched_elsewhere_said_by_caller():  # said by sensitivity() for the pack it steps from
        df = sim.simulate(players=players, games=games, strategy=team, seed=seed, content=pack, engine=engine,
                          threads=threads)
    return df["win"].to_numpy(), games_digest(df)


def sensitivity(players: list[int], knobs: list[str] | None = None, *, strategy: str = "heuristic",
                params: dict | None = None, games: int = 20_000, seed: int = 1, content=None,
                engine: str = "kernel", progress=None, runner=None) -> pl.DataFrame:
    """One row per (knob, player count, step): the paired change in win rate against the unchanged pack.

    ``runner`` (:mod:`sim.distributed`) plays the settings: here by default, or on a Dask cluster.
    """
    from sim.compare import paired_stats
    from sim.content import DEFAULT_PACK, ContentError, load_raw, unprinted
    from sim.content.loader import collecting_unprinted, warn_unprinted_summary
    from sim.content.overrides import OverrideError, apply_overrides, load_with_overrides
    from sim.distributed import LocalRunner
    from sim.rules.reads import played_key, why_alike
    from sim.rules.state import Settings
    from sim.run import make_team, plays_text, resolve_content, seats_plays, warn_searched_elsewhere
    from sim.tune import Knob, overrides_of

    if games < 1:
        raise SensitivityError(f"games must be positive, got {games}")
    runner = runner if runner is not None else LocalRunner()
    path = DEFAULT_PACK if content is None else content
    raw = load_raw(path)
    base = resolve_content(path)
    prm = tuple(sorted((params or {}).items()))
    # what the seats play at each player count (tuned: its file's sets), built before any game
    teams = {p: make_team(strategy, p, params) for p in players}
    plays = {p: plays_text(seats_plays(team)) for p, team in teams.items()}
    for p, team in teams.items():  # judged by the pack the steps are taken from (each step is another pack by design)
        warn_searched_elsewhere(team, base, Settings.build(base, p))
    rows, tasks = [], []  # tasks: (row index or -1 for a player count's unchanged pack, players)
    idle = []  # steps that change nothing a game of their player count plays: refused before any game
    stepped = []  # the values of the steps' packs the printed game does not have: said once, below
    for p in players:
        tasks.append((("base", p), (base, p, games, strategy, prm, seed, engine, plays[p])))
        for given in knobs or default_knobs(p, base):
            knob = knob_for(given, p)
            try:
                other = _other_rows(raw, knob, p)
                value = current_value(raw, knob) if _global_twin(knob) == knob else played_value(raw, knob, p)
                played = played_value(raw, knob, p)
            except (OverrideError, SensitivityError) as e:
                raise SensitivityError(f"knob {knob}: {e}") from None
            if other is not None:
                idle.append(f"{knob} at {count(p, 'player')}: it sets setup.toml's row for {counts(other, 'player')}, which a "
                            f"{p}-player game does not read")
                continue
            for step in (-1, 1):
                row = {"knob": knob, "players": p, "step": step, "from": played, "to": played + step, "games": games,
                       "default_win_rate": None, "win_rate": None, "diff": None,
                       "diff_low": None, "diff_high": None, "same_games": None, "refused": None}
                overrides = overrides_of([Knob(knob, (value + step,))], (value + step,))
                try:
                    with collecting_unprinted(stepped):
                        pack = load_with_overrides(path, overrides, f"sensitivity {knob}={value + step}")
                except ContentError as e:  # played nothing: no games, no win rate
                    row["refused"] = str(e)
                    row["games"] = 0
                    rows.append(row)
                    continue
                row["to"] = played_value(apply_overrides(raw, overrides), knob, p)
                if row["to"] == played or pack.for_players(p).hash == base.for_players(p).hash:
                    idle.append(f"{knob} {value} -> {value + step} at {count(p, 'player')}: {_why_idle(raw, knob, p, played)}")
                elif played_key(pack, Settings(players=p)) == played_key(base, Settings(players=p)):
                    why = why_alike(base, pack, Settings(players=p)) or "its games read nothing it changes"
                    idle.append(f"{knob} {value} -> {value + step} at {count(p, 'player')}: {why} (sensitivity plays the "
                                "standard game)")
                rows.append(row)
                tasks.append((len(rows) - 1, (pack, p, games, strategy, prm, seed, engine, plays[p])))
    if idle:
        raise SensitivityError("these steps change nothing a game of their player count plays, so their effect "
                               "would read as zero, or as noise: " + "; ".join(idle)
                               + ". Step the value that player count plays, or leave it out (--players)")
    warn_unprinted_summary(stepped, "sensitivity's steps", known=unprinted(base))
    played = {key: w for (key, _), w in runner.run(play_win_vector, tasks)}
    for i, row in enumerate(rows):
        base_wins, base_games = played[("base", row["players"])]
        row["default_win_rate"] = float(base_wins.mean())
        if row["refused"]:
            continue
        wins, digest = played[i]
        row["same_games"] = digest == base_games
        if row["same_games"]:  # no game changed: an exact zero on these games, not an estimate with an interval
            row.update(win_rate=row["default_win_rate"], diff=0.0)
            if progress:
                progress(f"{count(row['players'], 'player')}, {row['knob']} {row['from']}->{row['to']}: the unchanged "
                         "pack's games, record for record")
            continue
        st = paired_stats(base_wins, wins)
        row.update(win_rate=st["win_rate"], diff=st["diff"], diff_low=st["paired_low"], diff_high=st["paired_high"])
        if progress:
            progress(f"{count(row['players'], 'player')}, {row['knob']} {row['from']}->{row['to']}: "
                     f"{st['diff'] * 100:+.2f} points")
    made = provenance(strategy, params, seed, engine, base.hash)
    for row in rows:
        row.update(made, plays=plays[row["players"]])
    schema = {"knob": pl.Utf8, "players": pl.Int64, "step": pl.Int64, "from": pl.Int64, "to": pl.Int64,
              "games": pl.Int64, "default_win_rate": pl.Float64, "win_rate": pl.Float64, "diff": pl.Float64,
              "diff_low": pl.Float64, "diff_high": pl.Float64, "same_games": pl.Boolean, "refused": pl.Utf8,
              **{k: (pl.Int64 if k == "seed" else pl.Utf8) for k in PROVENANCE}, "plays": pl.Utf8}
    return pl.DataFrame(rows, schema=schema)


PROVENANCE = ("strategy", "params", "seed", "engine", "content_hash", "rules_version")


def provenance(strategy: str, params: dict | None, seed: int, engine: str, content_hash: str) -> dict:
    """What the games of a sensitivity table were played with: a column each, the same in every row
    (``params`` as JSON: ``{}`` for the strategy's defaults)."""
    import sim

    return {"strategy": strategy, "params": json.dumps(dict(params or {}), sort_keys=True), "seed": seed,
            "engine": engine, "content_hash": content_hash, "rules_version": sim.RULES_VERSION}


def made_with(table: pl.DataFrame) -> dict:
    """A sensitivity table's provenance columns as one dict (each holds one value)."""
    out = {}
    for k in PROVENANCE:
        values = table[k].unique().to_list()
        if len(values) != 1:
            raise SensitivityError(f"the table mixes {k} values {values}: write one run's table")
        out[k] = values[0]
    return out


def who_played(made: dict) -> str:
    """``heuristic players`` or ``bold players (pool_target=6)``: the level of play a figure describes."""
    params = json.loads(made["params"])
    return f"{made['strategy']} players" + (f" ({', '.join(f'{k}={v}' for k, v in params.items())})" if params else "")


def games_per_setting(table: pl.DataFrame) -> list[int]:
    """The games each played setting of a sensitivity table had (sorted, distinct): a refused step played
    none (its ``games`` is 0) and is left out, so the unchanged pack's count is never understated."""
    return sorted(table.filter(pl.col("refused").is_null())["games"].unique().to_list())


def short_name(knob: str) -> str:
    """``setup.player_count[players=4].location_target`` -> ``location_target``."""
    if knob.startswith("setup.player_count["):
        return knob.split("].", 1)[1]
    return knob


def write_outputs(table: pl.DataFrame, out: Path) -> list[Path]:
    """sensitivity.parquet, sensitivity.csv and one tornado chart per player count under ``out``.

    Every file says what the games were played with: the provenance columns (also the Parquet file's
    key-value metadata, read by ``sim.manifest.read_metadata``) and each chart's title and PNG metadata.
    """
    from sim.charts import tornado
    from sim.manifest import parquet_metadata
    from sim.study import write_parquet_atomic

    made = made_with(table)
    meta = {"strategy": made["strategy"], "strategy_params": made["params"], "seed": made["seed"],
            "games": ",".join(map(str, games_per_setting(table))), "engine": made["engine"],
            "content_hash": made["content_hash"], "rules_version": made["rules_version"]}
    if "plays" in table.columns:  # what the seats played at each player count (JSON a row)
        meta["plays"] = {str(p): json.loads(v) for p, v in sorted(table.select("players", "plays").unique().iter_rows())}
    out.mkdir(parents=True, exist_ok=True)
    files = [out / "sensitivity.parquet", out / "sensitivity.csv"]
    write_parquet_atomic(table, files[0], parquet_metadata(meta))
    table.write_csv(files[1])
    for p in sorted(table["players"].unique().to_list()):
        files.append(tornado(table.filter(pl.col("players") == p), out / f"tornado_{p}p.png", p))
    return files


__all__ = ["SensitivityError", "default_knobs", "games_per_setting", "made_with", "played_value", "provenance", "sensitivity", "short_name",
           "value_played", "who_played", "write_outputs"]
