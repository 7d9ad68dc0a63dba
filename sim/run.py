"""Public entry: validate the request, build the content and strategies, play, return a table.

``sim.simulate(players=4, games=1000, strategy="heuristic", seed=1)`` returns a
polars DataFrame with one row per game (see :data:`GAME_COLUMNS`).
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import numpy as np
import polars as pl

from sim.content import Content, load
from sim.rng import check_seed
from sim.rules.game import GameRecord
from sim.rules.state import Settings

ENGINES = ("kernel", "reference")

GAME_COLUMNS = tuple(f.name for f in fields(GameRecord))
STRING_COLUMNS = ("characters", "strategy", "variant", "outcome", "henchman_levels")


def resolve_content(content) -> Content:
    """A Content from None (default pack), a path, or a Content."""
    if content is None:
        return load()
    if isinstance(content, Content):
        return content
    if isinstance(content, (str, Path)):
        return load(content)
    raise TypeError(f"content must be None, a pack folder or a Content, got {type(content).__name__}")


def make_team(strategy, players: int, params: dict | None = None) -> list:
    """One strategy object per seat from a registered name (or a list of names/objects by seat)."""
    import strategies

    params = params or {}
    if isinstance(strategy, str):
        return [strategies.make(strategy, **params) for _ in range(players)]
    if isinstance(strategy, (list, tuple)):
        if len(strategy) != players:
            raise ValueError(f"strategy: {len(strategy)} given for {players} seats")
        return [strategies.make(s, **params) if isinstance(s, str) else s for s in strategy]
    if isinstance(strategy, strategies.Strategy):
        return [strategy] * players
    raise TypeError(f"strategy must be a registered name, a Strategy or one per seat, got {strategy!r}")


def records_frame(records: list[GameRecord]) -> pl.DataFrame:
    """One row per game, columns in :data:`GAME_COLUMNS` order with stable dtypes."""
    cols = {name: [getattr(r, name) for r in records] for name in GAME_COLUMNS}
    schema = {}
    for name in GAME_COLUMNS:
        if name in STRING_COLUMNS:
            schema[name] = pl.Utf8
        elif name == "win":
            schema[name] = pl.Boolean
        elif name in ("seed", "game"):
            schema[name] = pl.Int64
        else:
            schema[name] = pl.Int32
    return pl.DataFrame(cols, schema=schema)


def _kernel_strategy(strategy, params: dict | None):
    """One built-in strategy object for the kernel (all seats play it)."""
    import strategies

    if isinstance(strategy, str):
        return strategies.make(strategy, **(params or {}))
    from sim.kernel.custom import KernelStrategy

    if isinstance(strategy, (strategies.Strategy, KernelStrategy)):
        if params:
            raise ValueError("pass params with a strategy name, not with a strategy object")
        return strategy
    raise ValueError(
        "the kernel plays one built-in strategy for every seat; use engine='reference' "
        f"for per-seat or custom Python strategies (got {strategy!r})"
    )


def _strings_of_rows(name: str, block: np.ndarray, text) -> pl.Series:
    """``text(row)`` for every row of a small-valued int block, formatting each distinct row once."""
    if block.shape[0] == 0:
        return pl.Series(name, [], dtype=pl.Utf8)
    base = int(block.max()) + 1  # the values are small and non-negative: one int per row
    code = np.zeros(block.shape[0], dtype=np.int64)
    for j in range(block.shape[1]):
        code = code * base + block[:, j]
    _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    labels = pl.Series(name, [text(block[i]) for i in first], dtype=pl.Utf8)
    return labels.gather(inverse.reshape(-1))


def kernel_frame(content: Content, settings: Settings, strategy_name: str, rows: np.ndarray) -> pl.DataFrame:
    """The kernel's int64 rows as the same table the reference engine gives."""
    from sim.kernel import row_columns
    from sim.rules.state import OUTCOME_NAMES

    n = rows.shape[0]
    cols = row_columns(rows, len(content.henchman_names))
    seats = cols["characters"][:, : settings.players]
    levels = cols["henchman_levels"]
    outcome_names = [OUTCOME_NAMES[k] for k in sorted(OUTCOME_NAMES)]
    data = {}
    for name in GAME_COLUMNS:
        if name == "characters":
            names = content.character_names
            data[name] = _strings_of_rows(name, seats, lambda r, names=names: ",".join(names[int(x)] for x in r))
        elif name == "strategy":
            data[name] = pl.repeat(strategy_name, n, eager=True, dtype=pl.Utf8).alias(name)
        elif name == "variant":
            data[name] = pl.repeat(settings.variant_label, n, eager=True, dtype=pl.Utf8).alias(name)
        elif name == "outcome":
            data[name] = pl.Series(name, outcome_names, dtype=pl.Utf8).gather(cols["outcome"])
        elif name == "henchman_levels":
            data[name] = _strings_of_rows(name, levels, lambda r: "".join(str(int(x)) for x in r))
        elif name == "win":
            data[name] = pl.Series(name, cols["win"].astype(bool))
        elif name in ("seed", "game"):
            data[name] = pl.Series(name, cols[name].astype(np.int64))
        else:
            data[name] = pl.Series(name, cols[name].astype(np.int32))
    return pl.DataFrame(data)


def _validate(players, games, seed, game0, threads, engine):
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if isinstance(games, bool) or not isinstance(games, (int, np.integer)) or games < 0:
        raise ValueError(f"games must be a non-negative integer, got {games!r}")
    if isinstance(game0, bool) or not isinstance(game0, (int, np.integer)) or game0 < 0:
        raise ValueError(f"game0 must be a non-negative integer, got {game0!r}")
    check_seed(seed, game0 + max(int(games) - 1, 0))
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise ValueError(f"threads must be a positive integer or None, got {threads!r}")


def simulate(
    players: int = 4,
    games: int = 1000,
    strategy="heuristic",
    seed: int = 1,
    characters=None,
    variant=None,
    content=None,
    threads: int | None = None,
    params: dict | None = None,
    engine: str = "kernel",
    game0: int = 0,
    summary_only: bool = False,
    batch: int = 1_000_000,
):
    """Play ``games`` games (indices game0 .. game0+games-1 of ``seed``).

    Returns a polars DataFrame with one row per game (columns :data:`GAME_COLUMNS`),
    or with ``summary_only=True`` a dict of counts and means aggregated batch by
    batch, so memory does not grow with the number of games.
    The kernel (default) and the reference engine give identical rows.
    """
    _validate(players, games, seed, game0, threads, engine)
    c = resolve_content(content)
    settings = Settings.build(c, players, characters, variant)
    if summary_only:
        return _summary_only(c, settings, strategy, params, seed, game0, int(games), engine, threads, batch)
    if engine == "reference":
        team = make_team(strategy, players, params)
        from sim.rules import play_game

        records = [play_game(c, settings, team, seed, g)[0] for g in range(game0, game0 + games)]
        return records_frame(records)
    from sim.kernel import run_batch

    strat = _kernel_strategy(strategy, params)
    rows = run_batch(c, settings, strat, seed, game0, int(games), threads=threads)
    return kernel_frame(c, settings, strat.name, rows)


def _summary_only(c, settings, strategy, params, seed, game0, games, engine, threads, batch) -> dict:
    """Counts and means over all games, one batch in memory at a time."""
    from sim.results import wilson_interval
    from sim.rules.state import OUTCOME_NAMES

    if batch < 1:
        raise ValueError(f"batch must be positive, got {batch}")
    outcomes = np.zeros(len(OUTCOME_NAMES), np.int64)
    turns_hist = np.zeros(int(c.turn_cap) + 1, np.int64)
    sums: dict[str, int] = {}
    numeric = [n for n in GAME_COLUMNS if n not in STRING_COLUMNS and n not in ("seed", "game", "win", "players")]
    done = 0
    while done < games:
        size = min(batch, games - done)
        if engine == "kernel":
            from sim.kernel import row_columns, run_batch

            strat = _kernel_strategy(strategy, params)
            rows = run_batch(c, settings, strat, seed, game0 + done, size, threads=threads)
            col = row_columns(rows, len(c.henchman_names))
            outcomes += np.bincount(col["outcome"], minlength=len(outcomes))
            turns_hist += np.bincount(np.minimum(col["turns"], c.turn_cap), minlength=turns_hist.size)
            for name in numeric:
                sums[name] = sums.get(name, 0) + int(col[name].sum())
        else:
            df = simulate(settings.players, size, strategy, seed, None, None, c, threads, params, engine, game0 + done)
            for k, name in enumerate(OUTCOME_NAMES.values()):
                outcomes[k] += int((df["outcome"] == name).sum())
            turns_hist += np.bincount(np.minimum(df["turns"].to_numpy(), c.turn_cap), minlength=turns_hist.size)
            for name in numeric:
                sums[name] = sums.get(name, 0) + int(df[name].sum())
        done += size
    wins = int(outcomes[0] + outcomes[1])
    lo, hi = wilson_interval(wins, games)
    return {
        "games": games,
        "wins": wins,
        "win_rate": wins / games if games else 0.0,
        "ci_low": lo,
        "ci_high": hi,
        "outcomes": {name: int(outcomes[k]) for k, name in enumerate(OUTCOME_NAMES.values())},
        "timeouts": int(outcomes[4]),
        "mean_turns": sums.get("turns", 0) / games if games else 0.0,
        "turns_histogram": turns_hist,
        "means": {name: v / games for name, v in sums.items()} if games else {},
    }
