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

ENGINES = ("reference",)

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
    engine: str = "reference",
    game0: int = 0,
) -> pl.DataFrame:
    """Play ``games`` games (indices game0 .. game0+games-1 of ``seed``); one row per game."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if not isinstance(games, (int, np.integer)) or games < 0:
        raise ValueError(f"games must be a non-negative integer, got {games!r}")
    check_seed(seed, game0 + max(games - 1, 0))
    if threads is not None and (not isinstance(threads, int) or threads < 1):
        raise ValueError(f"threads must be a positive integer or None, got {threads!r}")
    c = resolve_content(content)
    settings = Settings.build(c, players, characters, variant)
    team = make_team(strategy, players, params)
    from sim.rules import play_game

    records = [play_game(c, settings, team, seed, g)[0] for g in range(game0, game0 + games)]
    return records_frame(records)
