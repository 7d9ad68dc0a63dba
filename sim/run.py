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
from sim.jit import jit
from sim.rng import check_seed
from sim.rules.game import GameRecord
from sim.rules.state import Settings

ENGINES = ("kernel", "reference")
# a per-game table costs about 500 bytes a game while it is built: beyond this, ask for a
# summary (summary_only=True keeps one batch in memory at a time)
MAX_TABLE_GAMES = 10_000_000

GAME_COLUMNS = tuple(f.name for f in fields(GameRecord))
# games per batch when only a summary is kept: 100,000 game rows (about 40 MB) in memory at a time,
# so 10 million games stay far under 500 MB; the tally merges batches exactly, so the numbers do
# not depend on it
SUMMARY_BATCH = 100_000
STRING_COLUMNS = ("characters", "strategy", "variant", "outcome", "henchman_levels")


_DEFAULT_CONTENT: tuple = ((), None)  # (stamp of the default pack's files, the Content loaded from them)


def _default_content() -> Content:
    """The default pack, loaded once per process while its files stay the same.

    A load parses a dozen TOML files (about 75 ms, a twentieth of a 200,000-game call);
    the stamp (path, mtime, size of every file) loads it again after an edit.
    """
    global _DEFAULT_CONTENT
    from sim.content import DEFAULT_PACK

    stamp = tuple(sorted((str(f), f.stat().st_mtime_ns, f.stat().st_size)
                         for f in Path(DEFAULT_PACK).rglob("*") if f.is_file()))
    if _DEFAULT_CONTENT[1] is None or _DEFAULT_CONTENT[0] != stamp:
        _DEFAULT_CONTENT = (stamp, load())
    return _DEFAULT_CONTENT[1]


def resolve_content(content) -> Content:
    """A Content from None (default pack), a path, or a Content."""
    if content is None:
        return _default_content()
    if isinstance(content, Content):
        return content
    if isinstance(content, (str, Path)):
        return load(content)
    raise TypeError(f"content must be None, a pack folder or a Content, got {type(content).__name__}")


def make_team(strategy, players: int, params: dict | None = None) -> list:
    """One strategy object per seat from a registered name (or a list of names/objects by seat)."""
    import strategies

    params = params or {}
    if isinstance(strategy, str) and "," in strategy:  # "heuristic,bold,...": one name per seat
        strategy = [x.strip() for x in strategy.split(",")]
    if isinstance(strategy, str):
        return [strategies.make(strategy, players=players, **params) for _ in range(players)]
    if isinstance(strategy, (list, tuple)):
        if len(strategy) != players:
            raise ValueError(f"strategy: {len(strategy)} given for {players} seats")
        return [strategies.make(s, players=players, **params) if isinstance(s, str) else s for s in strategy]
    if isinstance(strategy, strategies.Strategy):
        return [strategy] * players
    raise TypeError(f"strategy must be a registered name, a Strategy or one per seat, got {strategy!r}")


def per_player_count(name: str) -> bool:
    """Whether the registered strategy ``name`` has one parameter set per player count (``tuned``)."""
    import strategies

    return strategies.per_player_count(name)


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


def _exact_kernel_twin(strategy):
    """``strategy`` itself if the kernel plays exactly it; otherwise a ValueError naming the ways forward.

    The kernel knows the built-in families by their parameter vectors only, so a
    Python subclass that overrides a decision (or an instance with a method patched
    in) would be played as its parent: a silent wrong answer this refuses.
    """
    from sim.kernel.custom import DECISIONS
    from strategies import HeuristicStrategy, RandomStrategy

    family = type(strategy)
    if family in (HeuristicStrategy, RandomStrategy) and not set(vars(strategy)) & set(DECISIONS):
        return strategy
    name = getattr(strategy, "name", family.__name__)
    parent = next((b for b in (HeuristicStrategy, RandomStrategy) if isinstance(strategy, b)), None)
    if parent is None:
        what = f"{family.__name__} is not a built-in strategy family"
    else:
        changed = sorted(d for d in DECISIONS if getattr(family, d) is not getattr(parent, d) or d in vars(strategy))
        what = (f"{family.__name__} changes {parent.__name__}"
                + (f" ({', '.join(changed)})" if changed else ""))
    raise ValueError(
        f"strategy {name!r} has no kernel twin ({what}); the kernel refuses rather than play another "
        "strategy in its place. Run it on the readable engine (engine='reference', or --engine reference), "
        "or write the changed decisions as @njit functions in a sim.kernel.custom.KernelStrategy"
    )


def team_label(team) -> str:
    """The ``strategy`` column of a team's rows: its distinct strategy names, sorted, comma-separated
    (as the reference engine's record writes it)."""
    return ",".join(sorted({s.name for s in team}))


def _kernel_strategy(strategy, params: dict | None, players: int | None = None):
    """What the kernel plays: one strategy object for every seat, or a list of them, one per seat."""
    import strategies

    if isinstance(strategy, str) and "," in strategy or isinstance(strategy, (list, tuple)):
        team = make_team(strategy, players, params)
        from sim.kernel.custom import KernelStrategy

        if any(isinstance(s, KernelStrategy) for s in team):
            raise ValueError("a KernelStrategy plays every seat: give it alone, not in a per-seat team")
        return [_exact_kernel_twin(s) for s in team]
    if isinstance(strategy, str):
        return _exact_kernel_twin(strategies.make(strategy, players=players, **(params or {})))
    from sim.kernel.custom import KernelStrategy

    if isinstance(strategy, (strategies.Strategy, KernelStrategy)):
        if params:
            raise ValueError("pass params with a strategy name, not with a strategy object")
        if isinstance(strategy, KernelStrategy):
            _exact_kernel_twin(strategy.base)
            return strategy
        return _exact_kernel_twin(strategy)
    raise ValueError(
        "the kernel plays strategies with a kernel twin (a registered name, a built-in strategy object, "
        f"a KernelStrategy, or one of those per seat); use engine='reference' for custom Python strategies "
        f"(got {strategy!r})"
    )


def _strings_of_rows(name: str, block: np.ndarray, text) -> pl.Series:
    """``text(row)`` for every row of a small-valued int block, formatting each distinct row once."""
    import pandas as pd

    if block.shape[0] == 0:
        return pl.Series(name, [], dtype=pl.Utf8)
    base = int(block.max()) + 1  # the values are small and non-negative: one int per row
    code = np.zeros(block.shape[0], dtype=np.int64)
    for j in range(block.shape[1]):
        code = code * base + block[:, j]
    which, distinct = pd.factorize(code)  # a hash table: no sort of the games
    digits = np.empty((len(distinct), block.shape[1]), dtype=np.int64)  # each distinct code's row again
    rest = np.asarray(distinct, dtype=np.int64)
    for j in range(block.shape[1] - 1, -1, -1):
        digits[:, j] = rest % base
        rest = rest // base
    labels = pl.Series(name, [text(row) for row in digits], dtype=pl.Utf8)
    return labels.gather(which)


@jit
def _int32_columns(rows, cols, out):
    """``out[j] = rows[:, cols[j]]`` as int32, in one pass over the rows (a column of ``rows`` is strided)."""
    for i in range(rows.shape[0]):
        for j in range(cols.shape[0]):
            out[j, i] = rows[i, cols[j]]


def kernel_frame(content: Content, settings: Settings, strategy_name: str, rows: np.ndarray) -> pl.DataFrame:
    """The kernel's int64 rows as the same table the reference engine gives."""
    from sim.kernel import row_columns
    from sim.kernel.layout import OFFSETS
    from sim.rules.state import OUTCOME_NAMES

    n = rows.shape[0]
    cols = row_columns(rows, len(content.henchman_names))
    narrow = [name for name in GAME_COLUMNS if name not in STRING_COLUMNS + ("win", "seed", "game")]
    where = np.array([OFFSETS[f"R_{name.upper()}"] for name in narrow], dtype=np.int64)  # their row slots
    int32 = np.empty((len(narrow), n), dtype=np.int32)
    row_of = {name: j for j, name in enumerate(narrow)}
    if n:
        _int32_columns(np.ascontiguousarray(rows), where, int32)
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
            data[name] = pl.Series(name, int32[row_of[name]])
    return pl.DataFrame(data)


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _validate(players, games, seed, game0, threads, engine, summary_only=False, batch=1, params=None,
              characters=None, variant=None):
    """Type and range checks of simulate()'s arguments: a TypeError for a wrong type, a
    ValueError for a value out of range, each naming the argument."""
    if not isinstance(engine, str):
        raise TypeError(f"engine must be a string, one of {ENGINES}, got {engine!r}")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    for name, v in (("players", players), ("games", games), ("game0", game0), ("batch", batch)):
        if not _is_int(v):
            raise TypeError(f"{name} must be an integer, got {type(v).__name__} {v!r}")
    if not 1 <= players <= 6:
        raise ValueError(f"players must be an integer from 1 to 6, got {players}")
    if games < 0:
        raise ValueError(f"games must be a non-negative integer, got {games!r}")
    if game0 < 0:
        raise ValueError(f"game0 must be a non-negative integer, got {game0!r}")
    if batch < 1:
        raise ValueError(f"batch must be positive, got {batch}")
    if batch > MAX_TABLE_GAMES:
        raise ValueError(f"batch: at most {MAX_TABLE_GAMES:,} games are held in memory at once, got {batch:,}")
    if not _is_int(seed):
        raise TypeError(f"seed must be an integer, got {type(seed).__name__} {seed!r}")
    check_seed(seed, game0 + max(int(games) - 1, 0))
    if threads is not None:
        if not _is_int(threads):
            raise TypeError(f"threads must be a positive integer or None, got {threads!r}")
        if threads < 1:
            raise ValueError(f"threads must be a positive integer or None, got {threads!r}")
    if not isinstance(summary_only, (bool, np.bool_)):
        raise TypeError(f"summary_only must be True or False, got {type(summary_only).__name__} {summary_only!r}")
    if params is not None and not isinstance(params, dict):
        raise TypeError(f"params must be a dict of strategy parameters or None, got {type(params).__name__}")
    if params and any(not isinstance(k, str) for k in params):
        raise TypeError(f"params: parameter names must be strings, got {sorted(map(repr, params))}")
    if characters is not None and not isinstance(characters, (str, list, tuple)):
        raise TypeError(f"characters must be None, 'random', a comma-separated string or a list, got {characters!r}")
    if isinstance(characters, (list, tuple)) and not all(isinstance(c, str) or _is_int(c) for c in characters):
        raise TypeError(f"characters: give names or indices, got {characters!r}")
    if variant is not None and not isinstance(variant, (str, list, tuple)):
        raise TypeError(f"variant must be None, a string or a list of strings, got {variant!r}")
    if isinstance(variant, (list, tuple)) and not all(isinstance(w, str) for w in variant):
        raise TypeError(f"variant: give variant names as strings, got {variant!r}")


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
    batch: int = SUMMARY_BATCH,
):
    """Play ``games`` games (indices game0 .. game0+games-1 of ``seed``).

    Returns a polars DataFrame with one row per game (columns :data:`GAME_COLUMNS`),
    or with ``summary_only=True`` a dict of counts and means aggregated batch by
    batch, so memory does not grow with the number of games.
    The kernel (default) and the reference engine give identical rows.
    """
    _validate(players, games, seed, game0, threads, engine, summary_only, batch, params, characters, variant)
    players, games, seed, game0, batch = int(players), int(games), int(seed), int(game0), int(batch)
    if not summary_only and games > MAX_TABLE_GAMES:
        raise ValueError(f"games: a per-game table of {games:,} games would not fit in memory (limit "
                         f"{MAX_TABLE_GAMES:,}); pass summary_only=True to aggregate batch by batch")
    c = resolve_content(content)
    settings = Settings.build(c, players, characters, variant)
    if summary_only:
        return _tally(c, settings, strategy, params, seed, game0, int(games), engine, threads, batch,
                      characters, variant, keep_bits=False).summary()
    if engine == "reference":
        team = make_team(strategy, players, params)
        from sim.rules import play_game

        records = [play_game(c, settings, team, seed, g)[0] for g in range(game0, game0 + games)]
        return records_frame(records)
    from sim.kernel import run_batch

    strat = _kernel_strategy(strategy, params, players)
    rows = run_batch(c, settings, strat, seed, game0, int(games), threads=threads)
    return kernel_frame(c, settings, team_label(strat if isinstance(strat, list) else [strat]), rows)


def simulate_tally(
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
    batch: int = SUMMARY_BATCH,
    keep_bits: bool = False,
):
    """The :class:`sim.tally.Tally` of the games ``simulate`` would play, one batch in memory at a time.

    ``simulate(summary_only=True)`` is ``simulate_tally(...).summary()``. With
    ``keep_bits`` the tally also keeps one win bit per game (memory grows by
    one byte per 8 games).
    """
    _validate(players, games, seed, game0, threads, engine, False, batch, params, characters, variant)
    if not isinstance(keep_bits, (bool, np.bool_)):
        raise TypeError(f"keep_bits must be True or False, got {type(keep_bits).__name__} {keep_bits!r}")
    players, games, seed, game0, batch = int(players), int(games), int(seed), int(game0), int(batch)
    c = resolve_content(content)
    settings = Settings.build(c, players, characters, variant)
    return _tally(c, settings, strategy, params, seed, game0, int(games), engine, threads, batch,
                  characters, variant, keep_bits)


def _tally(c, settings, strategy, params, seed, game0, games, engine, threads, batch,
           characters, variant, keep_bits):
    from sim.tally import Tally

    if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 1:
        raise ValueError(f"batch must be a positive integer, got {batch!r}")
    tally = Tally.empty(keep_bits)
    need = c.for_players(settings.players).lobo_intel_required
    done = 0
    while done < games:
        size = min(int(batch), games - done)
        if engine == "kernel":
            from sim.kernel import ROW_FIELDS, run_batch

            strat = _kernel_strategy(strategy, params, settings.players)
            rows = run_batch(c, settings, strat, seed, game0 + done, size, threads=threads)
            tally = tally + Tally.of_rows(rows, ROW_FIELDS, need, keep_bits)
        else:
            df = simulate(settings.players, size, strategy, seed, characters, variant, c, threads, params, engine,
                          game0 + done)
            tally = tally + Tally.of_frame(df, need, keep_bits)
        done += size
    return tally
