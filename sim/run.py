"""Public entry: validate the request, build the content and strategies, play, return a table.

``sim.simulate(players=4, games=1000, strategy="heuristic", seed=1)`` returns a
polars DataFrame with one row per game (see :data:`GAME_COLUMNS`).
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import fields
from pathlib import Path

import numpy as np
import polars as pl

from sim.content import Content, load
from sim.jit import jit
from sim.rng import check_seed
from sim.rules.errors import is_integer
from sim.rules.game import GameRecord
from sim.rules.game import team_label as _seats_label
from sim.rules.state import Settings

ENGINES = ("kernel", "reference")
# a per-game table costs about 240 bytes a game at its peak while it is built (560 when the
# int64 rows of every game were kept first): beyond this, ask for a summary
# (summary_only=True keeps two batches' rows in memory at a time: one played, one tallied)
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


def games_digest(df: pl.DataFrame) -> str:
    """A digest of a per-game table (``simulate``'s), column by column in order: two runs of the same games
    (seed and game indices) with the same digest played the same games, record for record. ``tune`` and
    ``sensitivity`` compare settings by it, to tell a setting that changes nothing these games play."""
    import hashlib

    h = hashlib.sha256()
    for name in df.columns:
        col = df[name]
        h.update(f"{name}\0{col.dtype}\0{col.len()}\0".encode())
        if col.dtype.is_numeric() or col.dtype == pl.Boolean:
            h.update(np.ascontiguousarray(col.to_numpy()).tobytes())
        else:
            h.update("\x1f".join(map(str, col.to_list())).encode())
        h.update(b"\0")
    return h.hexdigest()


def resolve_content(content) -> Content:
    """A Content from None (default pack), a path, or a Content."""
    if content is None:
        return _default_content()
    if isinstance(content, Content):
        return content
    if isinstance(content, (str, Path)):
        return load(content)
    raise TypeError(f"content must be None, a pack folder or a Content, got {type(content).__name__}")


def seats_plays(team: list):
    """What a team's seats play, as results record it: one ``{"name", "params"}`` when every seat plays the same,
    else one per seat (``tuned``'s parameters as read from its file)."""
    seats = [{"name": s.name, "params": s.params()} for s in team]
    return seats[0] if all(x == seats[0] for x in seats) else seats


def plays_text(plays) -> str:
    """What :func:`seats_plays` gives, as JSON text (keys sorted): what a run records before its first game and each
    of its jobs checks its seats against (:func:`checked_team`)."""
    import json

    return json.dumps(plays, sort_keys=True)


class PlaysChanged(ValueError):
    """A job's seats would play other parameters than its run recorded before its first game."""


def checked_team(strategy, players: int, params: dict | None, recorded: str) -> list:
    """The seats of ``strategy`` at ``players`` built now, for a job to play (not the name, which a later build
    might read otherwise): a :class:`PlaysChanged` when they would play other parameters than ``recorded``, the
    run's :func:`plays_text` of them (an edited strategies/tuned.toml, here or on a cluster's worker), so that a run never
    mixes two sets."""
    team = make_team(strategy, players, params)
    if plays_text(seats_plays(team)) != recorded:
        raise PlaysChanged(f"strategy {strategy}'s seats at {players} players would play other parameters than when "
                           "the run began (an edited strategies/tuned.toml?): a run plays one set throughout, so it "
                           "stops here; run again")
    return team


def make_team(strategy, players: int, params: dict | None = None) -> list:
    """One strategy object per seat from a registered name (or a list of names/objects by seat)."""
    import strategies

    params = params or {}
    if isinstance(strategy, str) and "," in strategy:  # "heuristic,bold,...": one name per seat
        strategy = [x.strip() for x in strategy.split(",")]
    if isinstance(strategy, str):
        return [strategies.build(strategy, params, players=players) for _ in range(players)]
    if params:  # an object is built already: the params would be silently ignored
        objects = [s for s in (strategy if isinstance(strategy, (list, tuple)) else [strategy]) if not isinstance(s, str)]
        if objects:
            raise ValueError(f"params {sorted(params)} given with a strategy object "
                             f"({getattr(objects[0], 'name', type(objects[0]).__name__)!r}), which is built already "
                             "and would ignore them: pass params with strategy names only, or build the object "
                             "with them (strategies.make(name, **params))")
    if isinstance(strategy, (list, tuple)):
        if len(strategy) != players:
            raise ValueError(f"strategy: {len(strategy)} given for {players} seats")
        return [strategies.build(s, params, players=players) if isinstance(s, str) else s for s in strategy]
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
    Python subclass (or an instance with a method or other attribute of its own,
    or a family whose class or module code was patched after import) would be
    played as the plain built-in: a silent wrong answer this refuses.
    """
    from sim.kernel.custom import DECISIONS
    from strategies import HeuristicStrategy, RandomStrategy, builtin_changes

    family = type(strategy)
    own = {HeuristicStrategy: {"name", "p"}, RandomStrategy: {"name"}}
    extra = sorted(set(vars(strategy)) - own.get(family, set()))
    patched = builtin_changes()  # a helper method or module value replaced: every object of the family plays it
    if family in own and not extra and not patched:
        return strategy
    name = getattr(strategy, "name", family.__name__)
    parent = next((b for b in (HeuristicStrategy, RandomStrategy) if isinstance(strategy, b)), None)
    if parent is None:
        what = f"{family.__name__} is not a built-in strategy family"
    elif family is parent:
        what = "; ".join(
            ([f"the object has its own {', '.join(extra)}"] if extra else [])
            + ([f"the built-in code was changed after import: {', '.join(patched)}"] if patched else []))
    else:
        changed = sorted(d for d in DECISIONS if getattr(family, d) is not getattr(parent, d) or d in vars(strategy))
        what = (f"{family.__name__} changes {parent.__name__}"
                + (f" ({', '.join(changed)})" if changed else ""))
    raise ValueError(
        f"strategy {name!r} has no kernel twin ({what}); the kernel refuses rather than play another "
        "strategy in its place. Run it on the readable engine (engine='reference', or --engine reference), "
        "or write the changed decisions as @njit functions in a sim.kernel.custom.KernelStrategy"
    )


def check_labels(strategy, players: int) -> None:
    """Refuse strategy objects whose games the table's ``strategy`` column would name wrongly: an object named
    like a registered strategy of another kind (a subclass of the heuristic that keeps its name), the ``tuned``
    set of another player count, an object named like a registered strategy with other parameters (built as
    ``HeuristicStrategy(pool_target=5)``; :func:`strategies.build` labels its objects with their parameters,
    ``heuristic[pool_target=5]``), or two seats of one name that play differently (a mixed team's label names
    each seat's strategy)."""
    import strategies
    from sim.content.constants import MAX_PLAYERS
    from sim.text import count

    team = strategy if isinstance(strategy, (list, tuple)) else [strategy]
    objects = [s for s in team if not isinstance(s, str)]
    if not objects:  # names only: built from the registry, each seat's params alike
        return
    for s in objects:
        name = getattr(s, "name", None)
        if not isinstance(name, str) or not name.strip() or "," in name or name != name.strip():
            raise ValueError(f"strategy object {type(s).__name__} named {name!r}: a label is a non-empty string "
                             "without a comma (a comma separates a mixed team's seats in the strategy column) or "
                             "spaces around it (it would print as another name); give it a name of its own (name=...)")
        if name not in strategies.names():
            continue
        ref = strategies.make(name, players=players)
        why = (f"it is a {type(s).__name__}, not a {type(ref).__name__}" if type(s) is not type(ref)
               else f"it has its own {', '.join(sorted(set(vars(s)) - set(vars(ref))))}" if set(vars(s)) != set(vars(ref))
               else None)
        other = why is None and s.params() != ref.params()
        if other and strategies.per_player_count(name):
            built = [q for q in range(1, MAX_PLAYERS + 1)
                     if q != players and s.params() == strategies.make(name, players=q).params()]
            if built:
                held = count(built[0], "player") if len(built) == 1 else f"{' or '.join(map(str, built))} players"
                why, other = f"it holds the set of {held}", False
        if other:  # parameters of its own under the registered name (built without the registry's label)
            why = "it has other parameters: " + strategies.params_label(name, ref, s).partition("[")[2].rstrip("]")
        if why:
            raise ValueError(f"strategy object named {name!r} is not the registered strategy {name!r} at "
                             f"{count(players, 'player')} ({why}): its games would be labelled {name!r}; "
                             + (f"build it for these games (strategies.make({name!r}, players={players})), or "
                                if strategies.per_player_count(name) and type(s) is type(ref) and not other else "")
                             + (f"build it with strategies.make({name!r}, ...), which labels it with its parameters, or "
                                if other else "")
                             + "give it a name of its own (name=...)")
    by_name: dict = {}
    for seat, s in enumerate(team):
        obj = strategies.make(s, players=players) if isinstance(s, str) else s
        key = (type(obj), repr(sorted(obj.params().items())) if hasattr(obj, "params") else id(obj))
        first = by_name.setdefault(getattr(obj, "name", None), (seat, key))
        if first[1] != key:
            raise ValueError(f"seats {first[0]} and {seat} are both labelled {obj.name!r} but play differently "
                             "(other parameters or another kind of strategy): the team's label would not tell them "
                             "apart; give one a name of its own (name=...)")


def team_label(team) -> str:
    """The ``strategy`` column of a team's rows (as the reference engine's record writes it): the one name
    when every seat plays it, else every seat's name in seat order, comma-separated, so two seatings of the
    same strategies are told apart."""
    return _seats_label([s.name for s in team])


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
        return _exact_kernel_twin(strategies.build(strategy, params, players=players))
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


# set while a job of a run plays (a study's batch, a tune's or a sensitivity's games): the run's caller said
# warn_searched_elsewhere's warning before any job, and a cluster's worker would say it where no one reads it
_SAID_BY_CALLER = contextvars.ContextVar("smersh_searched_elsewhere_said_by_caller", default=False)


@contextlib.contextmanager
def searched_elsewhere_said_by_caller():
    """Within it (one thread's job), :func:`warn_searched_elsewhere` says nothing: the run said it already."""
    token = _SAID_BY_CALLER.set(True)
    try:
        yield
    finally:
        _SAID_BY_CALLER.reset(token)


def warn_searched_elsewhere(strategy, content, settings) -> None:
    """Warn, once per message, when a seat plays parameters that were searched for another game than this one:
    ``tuned`` (strategies/tuned.toml, whose sets ``tune-strategy`` searched on the default pack, under one rules
    version, in the standard game with the pack's default line-up) on another pack, rules version, variant or
    line-up. Its figures are then that set's in this game, not those of play searched for it."""
    import re
    import warnings

    import sim
    import strategies

    if _SAID_BY_CALLER.get():
        return
    team = strategy if isinstance(strategy, (list, tuple)) else [strategy]
    # each seat's registered name (a KernelStrategy's base's), before the parameters a label may add
    # (tuned[pool_target=5])
    labels = (getattr(getattr(s, "base", s), "name", "") for s in team)
    for name in dict.fromkeys(re.split(r"\[", label, maxsplit=1)[0] for label in labels):
        where = strategies.searched_on(name)
        if not where:
            continue
        unrecorded = [key for key in ("pack_hash", "rules_version") if where[key] is None]
        if unrecorded:  # a file not written by tune-strategy: where its sets were searched is not known
            warnings.warn(f"strategy {name!r} plays the parameters of {where['source']}, whose [meta] does not record "
                          f"the {' or the '.join(unrecorded)} they were searched under: its figures are that set's "
                          "here, not known to be those of play searched for this game", stacklevel=1)
            continue
        other = []
        if where["pack_hash"] != content.hash:
            other.append("another content pack")
        if where["rules_version"] != sim.RULES_VERSION:
            other.append(f"rules version {sim.RULES_VERSION} (searched under {where['rules_version']})")
        if settings != Settings.build(content, settings.players):
            other.append("a variant or line-up other than the standard game's default one")
        if other:
            warnings.warn(f"strategy {name!r} plays the parameters of {where['source']}, searched on the default pack "
                          f"in the standard game; this game has {' and '.join(other)}: its figures are that set's "
                          # from this line whoever calls (stacklevel 1): said once a process, not once a caller
                          "here, not those of play searched for this game", stacklevel=1)


def _strings_of_codes(name: str, code: np.ndarray, base: int, width: int, text) -> pl.Series:
    """``text(row)`` for every game's row of small ints, given as one int a game (the row's
    digits in ``base``, the first digit highest): each distinct row is formatted once."""
    if code.shape[0] == 0:
        return pl.Series(name, [], dtype=pl.Utf8)
    codes = pl.Series(name, code, dtype=pl.Int64)
    distinct = codes.unique()  # a hash table: no sort of the games
    digits = np.empty((len(distinct), width), dtype=np.int64)  # each distinct code's row again
    rest = distinct.to_numpy().astype(np.int64, copy=True)
    for j in range(width - 1, -1, -1):
        digits[:, j] = rest % base
        rest = rest // base
    labels = pl.Series(name, [text(row) for row in digits], dtype=pl.Utf8)
    return codes.replace_strict(distinct, labels, return_dtype=pl.Utf8)


@jit
def _table_rows(rows, lo, cols32, out32, cols64, out64, blocks, codes):
    """A chunk of rows into the table's columns at games ``lo ..``: ``out32[j] = rows[:, cols32[j]]``
    (each value checked to fit int32), ``out64[j] = rows[:, cols64[j]]``, and ``codes[k]`` block ``k``'s
    values as the digits of one int (``blocks[k]``: first slot, width, base; each digit checked to
    be in [0, base)). Returns -1, or the first row holding a value that does not fit."""
    for i in range(rows.shape[0]):
        for j in range(cols32.shape[0]):
            v = rows[i, cols32[j]]
            if v < -2147483648 or v > 2147483647:
                return i
            out32[j, lo + i] = v
        for j in range(cols64.shape[0]):
            out64[j, lo + i] = rows[i, cols64[j]]
        for k in range(blocks.shape[0]):
            c = 0
            for d in range(blocks[k, 1]):
                v = rows[i, blocks[k, 0] + d]
                if v < 0 or v >= blocks[k, 2]:
                    return i
                c = c * blocks[k, 2] + v
            codes[k, lo + i] = c
    return -1


class KernelTable:
    """The per-game table of kernel rows, filled chunk by chunk.

    :meth:`take` is ``run_batch``'s sink: it runs in the threads that play, so the columns
    are copied out while the games are played (the full int64 rows are never kept);
    :meth:`frame` gives the finished table.
    """

    _WIDE = ("seed", "game")  # int64 columns
    _BLOCKS = ("characters", "henchman_levels")  # row blocks, one int code a game each

    def __init__(self, content: Content, settings: Settings, n: int):
        from sim.content import constants as codes
        from sim.kernel.layout import OFFSETS, row_block_slots

        self.content, self.settings, self.n = content, settings, n
        # every other column, outcome and win as their codes, fits int32 (checked as it is copied)
        self.narrow = [name for name in GAME_COLUMNS
                       if name not in self._WIDE + self._BLOCKS + ("strategy", "variant")]
        self.cols32 = np.array([OFFSETS[f"R_{name.upper()}"] for name in self.narrow], dtype=np.int64)
        self.cols64 = np.array([OFFSETS[f"R_{name.upper()}"] for name in self._WIDE], dtype=np.int64)
        slots = row_block_slots(len(content.henchman_names))
        # (first slot, width, base) of each block: the seats' characters, the henchmen's levels
        self.blocks = np.array([[slots["characters"][0], settings.players, len(content.character_names)],
                                [*slots["henchman_levels"], codes.DEFEATED + 1]], dtype=np.int64)
        for name, (_, width, base) in zip(self._BLOCKS, self.blocks.tolist()):
            if base**width >= 2**62:
                raise ValueError(f"{name}: {width} values below {base} do not fit one int64 code")
        self.out32 = np.empty((len(self.narrow), n), dtype=np.int32)
        self.out64 = np.empty((len(self._WIDE), n), dtype=np.int64)
        self.codes = np.empty((len(self._BLOCKS), n), dtype=np.int64)

    def take(self, lo: int, hi: int, rows: np.ndarray) -> None:
        """Copy games ``lo .. hi - 1`` out of their int64 rows (``run_batch``'s sink)."""
        bad = _table_rows(rows, lo, self.cols32, self.out32, self.cols64, self.out64, self.blocks, self.codes)
        if bad >= 0:
            game = int(rows[bad, self.cols64[self._WIDE.index("game")]])
            raise OverflowError(f"game {game}: a value out of the table's range "
                                f"in its kernel row {rows[bad].tolist()}")

    def frame(self, strategy_name: str) -> pl.DataFrame:
        """The table, columns in :data:`GAME_COLUMNS` order, with the reference engine's dtypes."""
        from sim.rules.state import OUTCOME_NAMES

        n, settings = self.n, self.settings
        names = self.content.character_names
        row_of = {name: j for j, name in enumerate(self.narrow)}
        outcome_names = [OUTCOME_NAMES[k] for k in sorted(OUTCOME_NAMES)]
        text = {"characters": lambda r: ",".join(names[int(x)] for x in r),
                "henchman_levels": lambda r: "".join(str(int(x)) for x in r)}
        data = {}
        for name in GAME_COLUMNS:
            if name in self._BLOCKS:
                k = self._BLOCKS.index(name)
                _, width, base = self.blocks[k].tolist()
                data[name] = _strings_of_codes(name, self.codes[k], base, width, text[name])
            elif name in self._WIDE:
                data[name] = pl.Series(name, self.out64[self._WIDE.index(name)])
            elif name == "strategy":
                data[name] = pl.repeat(strategy_name, n, eager=True, dtype=pl.Utf8).alias(name)
            elif name == "variant":
                data[name] = pl.repeat(settings.variant_label, n, eager=True, dtype=pl.Utf8).alias(name)
            elif name == "outcome":
                data[name] = pl.Series(name, outcome_names, dtype=pl.Utf8).gather(self.out32[row_of[name]])
            elif name == "win":
                data[name] = pl.Series(name, self.out32[row_of[name]].astype(bool))
            else:
                data[name] = pl.Series(name, self.out32[row_of[name]])
        return pl.DataFrame(data)


def kernel_frame(content: Content, settings: Settings, strategy_name: str, rows: np.ndarray) -> pl.DataFrame:
    """The kernel's int64 rows as the same table the reference engine gives."""
    table = KernelTable(content, settings, rows.shape[0])
    table.take(0, rows.shape[0], np.ascontiguousarray(rows))
    return table.frame(strategy_name)



def _validate(players, games, seed, game0, threads, engine, summary_only=False, batch=1, params=None,
              characters=None, variant=None):
    """Type and range checks of simulate()'s arguments: a TypeError for a wrong type, a
    ValueError for a value out of range, each naming the argument."""
    if not isinstance(engine, str):
        raise TypeError(f"engine must be a string, one of {ENGINES}, got {engine!r}")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    for name, v in (("players", players), ("games", games), ("game0", game0), ("batch", batch)):
        if not is_integer(v):
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
    if not is_integer(seed):
        raise TypeError(f"seed must be an integer, got {type(seed).__name__} {seed!r}")
    check_seed(seed, game0 + max(int(games) - 1, 0))
    if threads is not None:
        if not is_integer(threads):
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
    if isinstance(characters, (list, tuple)) and not all(isinstance(c, str) or is_integer(c) for c in characters):
        raise TypeError(f"characters: give names or indices, got {characters!r}")
    if variant is not None and not isinstance(variant, (str, list, tuple)):
        raise TypeError(f"variant must be None, a string or a list of strings, got {variant!r}")
    if isinstance(variant, (list, tuple)) and not all(isinstance(w, str) for w in variant):
        raise TypeError(f"variant: give variant names as strings, got {variant!r}")


def _refuse_kernel_strategy(strategy) -> None:
    """A KernelStrategy given to the reference engine, alone or as a seat of a team: its decisions are compiled
    for the kernel, which alone plays them; the readable engine plays its Python twin."""
    from sim.kernel.custom import KernelStrategy

    team = strategy if isinstance(strategy, (list, tuple)) else [strategy]
    ks = next((s for s in team if isinstance(s, KernelStrategy)), None)
    if ks is not None:
        raise ValueError(f"strategy {ks.name!r} is a KernelStrategy: it plays on the kernel only (engine='kernel', "
                         "the default); the reference engine plays its readable twin, the strategies.Strategy "
                         "written with the same rule (sim.twin.check_twin checks that the two play alike)")


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
    if engine == "reference":
        _refuse_kernel_strategy(strategy)
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
        check_labels(strategy, players)  # the table's strategy column names each seat's strategy
        team = make_team(strategy, players, params)
        warn_searched_elsewhere(team, c, settings)
        from sim.rules import play_game

        records = [play_game(c, settings, team, seed, g)[0] for g in range(game0, game0 + games)]
        return records_frame(records)
    from sim.kernel import run_batch

    strat = _kernel_strategy(strategy, params, players)  # (refuses a strategy the kernel cannot play first)
    check_labels(strategy, players)
    warn_searched_elsewhere(strat, c, settings)
    table = KernelTable(c, settings, int(games))  # filled as the threads play
    run_batch(c, settings, strat, seed, game0, int(games), threads=threads, sink=table.take)
    return table.frame(team_label(strat if isinstance(strat, list) else [strat]))


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
    """The :class:`sim.tally.Tally` of the games ``simulate`` would play, two batches in memory at a time.

    ``simulate(summary_only=True)`` is ``simulate_tally(...).summary()``. With
    ``keep_bits`` the tally also keeps one win bit per game (memory grows by
    one byte per 8 games).
    """
    _validate(players, games, seed, game0, threads, engine, False, batch, params, characters, variant)
    if engine == "reference":
        _refuse_kernel_strategy(strategy)
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
    if engine != "kernel":
        for lo in range(0, games, int(batch)):
            size = min(int(batch), games - lo)
            df = simulate(settings.players, size, strategy, seed, characters, variant, c, threads, params, engine,
                          game0 + lo)
            tally = tally + Tally.of_frame(df, need, keep_bits)
        return tally
    from concurrent.futures import ThreadPoolExecutor

    from sim.kernel import ROW_FIELDS, run_batch

    strat = _kernel_strategy(strategy, params, settings.players)
    warn_searched_elsewhere(strat, c, settings)
    # two arrays of rows, used in turn (a new one each batch would have its pages cleared again): a batch
    # is tallied on a thread of its own while the next one plays into the other array, so the tally
    # (one thread) no longer holds up the threads that play
    bufs: list = [None, None]
    pending = None
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="smersh-tally") as tallier:
        for k, lo in enumerate(range(0, games, int(batch))):
            size = min(int(batch), games - lo)
            buf = bufs[k % 2]
            rows = run_batch(c, settings, strat, seed, game0 + lo, size, threads=threads,
                             out=None if buf is None else buf[:size])
            bufs[k % 2] = rows if buf is None else buf
            if pending is not None:  # the batch before, whose array the next batch plays into
                tally = tally + pending.result()
            pending = tallier.submit(Tally.of_rows, rows, ROW_FIELDS, need, keep_bits)
        if pending is not None:
            tally = tally + pending.result()
    return tally
