"""Does a kernel strategy play exactly like its readable twin? ``check_twin`` says, or says where not.

A Python strategy (a :class:`strategies.Strategy`, run by the readable engine) and a
:class:`sim.kernel.custom.KernelStrategy` written against the same view are twins when
they play identical games. :func:`check_twin` plays ``games`` games of each seed on both
engines and compares the rows. Where they differ it replays the first differing game
on both engines with every decision logged (the kernel's own code run as plain Python)
and reports the first decision where the two answered differently::

    from sim.twin import check_twin
    report = check_twin(Brave(name="brave"), brave_kernel, players=4, games=2000)
    print(report)          # "agree: 2,000 games at 4 players ..." or the first difference
    assert report.agree
"""

from __future__ import annotations

import importlib
import types
from dataclasses import dataclass, field

import numpy as np

from sim.kernel.custom import (
    DECISIONS,
    KERNEL_MODULES,
    KernelStrategy,
    _adapter,
    _guard_writes,
    _read_only,
)
from sim.text import count

_IGNORED_COLUMNS = ("strategy",)  # the two twins may carry different names


@dataclass(frozen=True)
class Decision:
    """One decision as an engine logged it: what was asked, of whom, on which turn, and the answer."""

    index: int  # position in the game's sequence of decisions
    name: str
    seat: int
    turn: int
    answer: object


@dataclass
class TwinReport:
    """What :func:`check_twin` found; ``agree`` is the verdict, ``str(report)`` the explanation."""

    agree: bool
    players: int | tuple  # the count that differs, or every count checked
    games: int
    seed: int
    game: int | None = None  # the first game whose rows differ
    columns: list = field(default_factory=list)  # the row fields that differ in that game
    python: Decision | None = None  # the first differing decision, as each engine made it
    kernel: Decision | None = None
    decisions_compared: int = 0
    note: str = ""  # a caveat on the replayed decisions

    def __str__(self) -> str:
        if self.agree:
            counts = ", ".join(map(str, self.players)) if isinstance(self.players, tuple) else self.players
            return (f"agree: {self.games:,} games at {counts} players (seed {self.seed}) "
                    "gave identical rows on both engines")
        head = (f"differ: game {self.game} (seed {self.seed}, {count(self.players, 'player')}) first differs in "
                f"{', '.join(self.columns)}")
        tail = f" ({self.note})" if self.note else ""
        if self.python is None and self.kernel is None:
            return (head + f"; all {self.decisions_compared} decisions agreed, so the engines differ "
                    "elsewhere (report it)" + tail)
        p, k = self.python, self.kernel
        at = p or k
        return (head + f"; first differing decision #{at.index} on turn {at.turn}: "
                f"{_say(p, 'python')} vs {_say(k, 'kernel')}" + tail)


def _say(d: Decision | None, engine: str) -> str:
    if d is None:
        return f"{engine}: (no such decision)"
    return f"{engine} {d.name}(seat {d.seat}) -> {d.answer!r}"


def _norm(v):
    """A decision's answer in a form both engines share (ints, tuples of ints)."""
    if isinstance(v, (list, tuple, np.ndarray)):
        return tuple(_norm(x) for x in v)
    if v is None:
        return None
    return int(v)


def check_twin(python_strategy, kernel_strategy: KernelStrategy, players=4, games: int = 2000,
               seed: int = 1) -> TwinReport:
    """Compare a Python strategy with its kernel twin on ``games`` games per player count.

    ``players`` is a count or a list of counts (Python or numpy integers, not True or False,
    as :func:`sim.simulate` takes them); the first count where they differ is
    reported. Returns a :class:`TwinReport` (``report.agree``).
    """
    import sim
    import strategies
    from sim.rules.errors import is_integer

    if not isinstance(kernel_strategy, KernelStrategy):
        raise TypeError(f"kernel_strategy must be a sim.kernel.custom.KernelStrategy, got "
                        f"{type(kernel_strategy).__name__}")
    if not isinstance(python_strategy, strategies.Strategy):
        raise TypeError(f"python_strategy must be a strategies.Strategy, got {type(python_strategy).__name__}")
    if is_integer(players):
        counts = [int(players)]
    elif isinstance(players, (list, tuple, range)) or (isinstance(players, np.ndarray) and players.ndim == 1):
        bad = [p for p in players if not is_integer(p)]
        if bad:
            raise TypeError(f"check_twin: players must be a player count or a list of them, got "
                            f"{type(bad[0]).__name__} {bad[0]!r} in {players!r}")
        if len(players) == 0:
            raise ValueError("check_twin: players is empty: give a player count or a list of them")
        counts = [int(p) for p in players]
    else:
        raise TypeError(f"check_twin: players must be a player count or a list of them, got "
                        f"{type(players).__name__} {players!r}")
    if not is_integer(games) or games < 1:  # no game compared would report agreement
        raise ValueError(f"check_twin: games must be a whole number of at least 1, got {games!r}")
    for p in counts:
        fast = sim.simulate(players=p, games=games, seed=seed, strategy=kernel_strategy)
        before = _copy_or_none(python_strategy)  # its state as this count's games start (it may keep state)
        slow = sim.simulate(players=p, games=games, seed=seed, strategy=python_strategy, engine="reference")
        cols = [c for c in fast.columns if c not in _IGNORED_COLUMNS]
        a, b = fast.select(cols).to_numpy(), slow.select(cols).to_numpy()
        rows = np.flatnonzero((a != b).any(axis=1))
        if rows.size == 0:
            continue
        i = int(rows[0])
        game = int(fast["game"][i])
        differ = [c for j, c in enumerate(cols) if a[i, j] != b[i, j]]
        if before is not None:  # replay the games before it too: a strategy that keeps state decides as it did
            py_log = python_decisions(before, p, seed, game, first=0)
            note = ""
        else:
            py_log = python_decisions(python_strategy, p, seed, game)
            note = (f"{type(python_strategy).__name__} cannot be copied, so game {game} was replayed with the object "
                    "as the run left it; if it keeps state between games, its decisions may not be those played")
        k_log = kernel_decisions(kernel_strategy, p, seed, game)
        out = TwinReport(False, p, games, seed, game, differ, decisions_compared=min(len(py_log), len(k_log)),
                         note=note)
        for x in range(max(len(py_log), len(k_log))):
            pd = py_log[x] if x < len(py_log) else None
            kd = k_log[x] if x < len(k_log) else None
            if pd is None or kd is None or (pd.name, pd.seat, pd.answer) != (kd.name, kd.seat, kd.answer):
                out.python, out.kernel = pd, kd
                break
        return out
    return TwinReport(True, tuple(counts), games, seed)


# --- the readable engine, decisions logged ---------------------------------------------------
class _LoggedStrategy:
    """Wraps a Python strategy: every decision's answer goes to ``log``."""

    def __init__(self, inner, log: list):
        self._inner, self._log = inner, log

    def __getattr__(self, name):
        attr = getattr(self._inner, name)
        if name not in DECISIONS:
            return attr

        def logged(view, *args):
            answer = attr(view, *args)
            self._log.append(Decision(len(self._log), name, int(view.seat), int(view._g.turn), _norm(answer)))
            return answer

        return logged


def python_decisions(strategy, players: int, seed: int, game: int, first: int | None = None) -> list[Decision]:
    """Every decision of game ``game`` of ``seed`` played by ``strategy`` on the readable engine.

    With ``first``, games ``first`` .. ``game - 1`` are played before it with the same object (not
    logged), as a run from game ``first`` plays them: what a strategy that keeps state between games
    decides in ``game`` depends on them.
    """
    from sim.rules import Settings, play_game
    from sim.run import resolve_content

    c = resolve_content(None)
    settings = Settings.build(c, players)
    for g in range(game if first is None else first, game):
        play_game(c, settings, [strategy] * players, seed, g)
    log: list[Decision] = []
    play_game(c, settings, [_LoggedStrategy(strategy, log)] * players, seed, game)
    return log


def _copy_or_none(strategy):
    import copy

    try:
        return copy.deepcopy(strategy)
    except Exception:  # an object that cannot be copied (a lock, a file): said in the report
        return None


# --- the kernel as plain Python, decisions logged ---------------------------------------------
def kernel_decisions(kernel_strategy: KernelStrategy, players: int, seed: int, game: int) -> list[Decision]:
    """Every decision of game ``game`` of ``seed`` as the kernel plays it with ``kernel_strategy``.

    The kernel's functions (and your decisions) run as plain Python here, from the
    same source as the compiled kernel, so that each answer can be logged. An illegal
    answer stops it as it stops the kernel: a ``StrategyError`` naming the strategy (a
    float or a bool written into ``out`` or into the options too, as the array is written).
    """
    from sim.content.constants import MAX_PLAYERS
    from sim.kernel import layout
    from sim.kernel.batch import _naming_refusals, bundle
    from sim.kernel.game import work_arrays
    from sim.kernel.layout import S_TURN
    from sim.rng import N_SOURCES
    from sim.rules import Settings
    from sim.run import resolve_content

    c = resolve_content(None)
    settings = Settings.build(c, players)
    c = c.for_players(players)
    plain = _Plain()
    builtin = importlib.import_module("sim.kernel.strategy")
    log: list[Decision] = []

    def logger(name, fn):
        def logged(ctx, *args):
            seat = 0 if name == "setup_level2_henchmen" else int(args[0])
            answer = fn(ctx, *args)
            shown = _norm(args[2][: args[1]]) if name == "setup_level2_henchmen" else _norm(answer)
            log.append(Decision(len(log), name, seat, int(ctx.st[S_TURN]), shown))
            return answer

        return logged

    decide = types.SimpleNamespace(**{k: plain.value(v) for k, v in vars(builtin).items()})
    for name in DECISIONS:
        user = kernel_strategy.decisions.get(name)
        fn = plain.decision(name, user) if user is not None else getattr(decide, name)
        setattr(decide, name, logger(name, fn))
    decide.direct_move = decide.list_the_moves  # list the moves and ask ``move``, as the readable engine does
    plain.replace_module(builtin, decide)
    batch = _naming_refusals(kernel_strategy, plain.value(importlib.import_module("sim.kernel.game").simulate_batch))
    team = [kernel_strategy.base] * players
    sid, prm = layout.team_vectors(team)
    pk, _ = bundle(c)
    cfg = layout.settings_vector(c, settings)
    out = np.zeros((1, layout.row_width(pk)), dtype=np.int64)
    batch(pk, cfg, sid, prm, seed, game, 1, out, np.zeros(N_SOURCES, np.int64), *work_arrays(pk))
    assert sid.shape[0] == MAX_PLAYERS
    return log


def _same(value):
    """Plain twin of the adapter's ``_read_only``: the value itself (``decision`` guards the arrays)."""
    return value


class _Plain:
    """Plain-Python clones of compiled functions, calling each other as plain Python."""

    def __init__(self):
        from sim import rng
        from sim.kernel import decks, layout, missions, packref, view

        self._memo: dict[int, tuple] = {}  # id -> (dispatcher, its plain clone)
        self._modules: dict[int, object] = {}
        self._kernel_modules = {f"sim.kernel.{m}" for m in KERNEL_MODULES} | {"sim.kernel.strategy", "sim.kernel.view"}
        # compiled-only constructs and their plain twins (set first: the view's attributes below clone kernel code)
        self._special: dict[int, object] = {id(packref.new_context): layout.Context,
                                            id(missions.as_view): np.lib.stride_tricks.as_strided,
                                            id(rng.fill_ahead_nb): rng.fill_ahead,
                                            id(decks.popcount): decks.popcount_plain,
                                            id(decks.nth_bit): decks.nth_bit_plain,
                                            id(_read_only): _same}
        plain_view = type("PlainView", (view.KernelView,), view.python_attributes(self.value))
        self._special[id(view.make_view)] = self._special[id(view.decision_view)] = plain_view

    def decision(self, name: str, user):
        """Your decision ``name``'s adapter, calling ``user`` with its integer array options guarded: a
        float, complex or bool written into one is refused, as the compiled pairing refuses it."""
        adapter = self.value(_adapter(name, user))
        adapter.__globals__["_user"] = _guard_writes(name, adapter.__globals__["_user"])
        return adapter

    def replace_module(self, module, namespace) -> None:
        self._modules[id(module)] = namespace

    def value(self, v):
        from numba.core.registry import CPUDispatcher

        if id(v) in self._special:
            return self._special[id(v)]
        if isinstance(v, CPUDispatcher):
            return self._function(v)
        if isinstance(v, types.ModuleType):
            if id(v) in self._modules:
                return self._modules[id(v)]
            if v.__name__ in self._kernel_modules:
                ns = types.SimpleNamespace()
                self._modules[id(v)] = ns
                for k, x in vars(v).items():
                    setattr(ns, k, self.value(x))
                return ns
        return v

    def _function(self, dispatcher):
        hit = self._memo.get(id(dispatcher))
        if hit is not None:
            return hit[1]
        f = dispatcher.py_func
        env: dict = {}
        clone = types.FunctionType(f.__code__, env, f.__name__, f.__defaults__, f.__closure__)
        # the dispatcher is kept with its clone: keyed by id, a freed one's id could be reused by the next
        # (each decision's adapter is made afresh) and be answered with the wrong clone
        self._memo[id(dispatcher)] = (dispatcher, clone)
        for k, x in f.__globals__.items():
            env[k] = self.value(x)
        return clone
