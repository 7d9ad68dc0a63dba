"""Luck against skill: how much of a game's outcome each random source decides (``smersh-sim luck``).

Every random draw of a game comes from its own stream per source (dice, the
villain deck, the Fate deck, the encounter decks, tokens, gambles, ...), a pure
function of (seed, game index, source). A game can therefore be played with one
source's stream taken from game ``i`` and every other stream from game ``N + i``.

First-order shares (pick-freeze Sobol indices). For each source group ``k``,
play ``N`` games ``A_i`` (every stream from game ``i``) and ``N`` games ``B_i``
whose group-``k`` streams come from game ``i`` and all others from game ``N + i``.
The two games of a pair share only group ``k``'s draws, so the covariance of
their outcomes is the variance that group decides on its own::

    S_k = Cov(Y_A, Y_B) / Var(Y)

estimated with Janon et al.'s (2014) estimator, whose mean and variance terms
use both samples. ``1 - sum(S_k)`` is the share no single source decides: the
interplay of sources (a die roll that matters only after a given villain card).
The outcome ``Y`` is the win (0/1), so the estimator depends on the four counts
of (``Y_A``, ``Y_B``) pairs only, and a 95% interval comes from a parametric
bootstrap of those counts (each group's resampling seeded from the seed and the
group's name, so the intervals of two groups are not drawn alike).

Sources that were never drawn. A source the games never draw from (the set-up
stream when every game plays the default line-up, the strategy stream of a
strategy that decides without dice) decides nothing, but its ``B`` games are
still independent of the ``A`` games, so the estimator would return noise that
looks like a measured share near zero. So ``N`` games ``C_i`` are played with
every stream from game ``N + i``: ``B_i`` and ``C_i`` differ in group ``k``'s
draws only, and the number of games whose record (every field of the game's
row) differs is how many games re-drawing the group changed. A group that
changed none is reported as not measured (no share, no interval), and the rest
leaves it out: its true share is 0. Where every ``A`` game had the same outcome
(a win rate of 0% or 100%) there is no variance to share out: no other game is
played and no share is reported.

Skill: decisions are deterministic given the draws, so they do not appear as a
source. How much they matter shows as the spread of win rates across
strategies on the same games; :func:`skill_spread` reports each strategy's win
rate and the share of outcome variance between strategies.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from sim import rng as R
from sim.text import count

# source groups: a group's streams are held together (the six encounter decks are one group)
GROUPS: dict[str, tuple[int, ...]] = {
    "dice": (R.DICE,),
    "villain deck": (R.VILLAIN,),
    "Fate deck": (R.FATE,),
    "encounter decks": tuple(R.ENCOUNTER + d for d in range(6)),
    "tokens": (R.TOKENS,),
    "gambles": (R.GAMBLE,),
    "Top Secret deck": (R.TOP_SECRET,),
    "status deck": (R.STATUS,),
    "set-up": (R.SETUP,),
    "strategy": (R.STRATEGY,),
}
BOOTSTRAP = 2000


class LuckError(ValueError):
    """Bad arguments to the luck report."""


# play(n, offsets[N_SOURCES]) -> wins[n] (0/1), or (wins[n], records[n, ...]): games 0..n-1, source s of game g
# drawing from game g + offsets[s]. records (the kernel's rows) tell whether re-drawing a source changed a game;
# without them only the win is compared.
Play = Callable[[int, np.ndarray], "np.ndarray | tuple[np.ndarray, np.ndarray]"]


@dataclass(frozen=True)
class Share:
    """One group's first-order share of outcome variance, with its 95% bootstrap interval.

    ``changed``: how many of the ``pairs`` games re-drawing the group changed. Where it is 0
    nothing was measured, and ``share``, ``low`` and ``high`` are None; so they are where the
    outcome had no variance (``changed`` None: the games that would tell were not played).
    """

    group: str
    share: float | None
    low: float | None
    high: float | None
    pairs: int
    changed: int | None = None

    @property
    def measured(self) -> bool:
        return self.share is not None


def _janon(n11: np.ndarray, n10: np.ndarray, n01: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Janon's first-order estimator for 0/1 outcomes from the pair counts (vectorised over resamples)."""
    mean_a = (n11 + n10) / n
    mean_b = (n11 + n01) / n
    m = (mean_a + mean_b) / 2
    cross = n11 / n
    second = (mean_a + mean_b) / 2  # E[(Y_A^2 + Y_B^2) / 2] with Y^2 = Y
    var = second - m * m
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(var > 0, (cross - m * m) / var, np.nan)


def bootstrap_key(group: str) -> int:
    """A stable 64-bit key from a group's name: each group's bootstrap draws differ from every other's."""
    return int.from_bytes(hashlib.sha256(group.encode()).digest()[:8], "little")


def share_of(ya: np.ndarray, yb: np.ndarray, group: str, seed: int, changed: int | None = None) -> Share:
    """The first-order share from paired outcomes, with a 95% interval from resampling the pair counts.

    Never NaN: where the outcomes have no variance (all wins or all losses) the share and its
    interval are None, and so is the interval where no resample has variance.
    """
    ya, yb = np.asarray(ya, bool), np.asarray(yb, bool)
    n = ya.size
    counts = np.array([np.sum(ya & yb), np.sum(ya & ~yb), np.sum(~ya & yb), np.sum(~ya & ~yb)], dtype=np.int64)
    est = float(_janon(counts[0], counts[1], counts[2], n))
    gen = np.random.default_rng([seed, bootstrap_key(group)])
    boot = gen.multinomial(n, counts / n, size=BOOTSTRAP)
    vals = _janon(boot[:, 0], boot[:, 1], boot[:, 2], n)
    vals = vals[np.isfinite(vals)]
    if not np.isfinite(est):
        return Share(group, None, None, None, n, changed)
    if not vals.size:
        return Share(group, est, None, None, n, changed)
    lo, hi = np.quantile(vals, [0.025, 0.975])
    return Share(group, est, float(lo), float(hi), n, changed)


def _played(play: Play, n: int, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(wins, records) of ``n`` games; a play that returns the wins alone is its own record."""
    got = play(n, offsets)
    wins, records = got if isinstance(got, tuple) else (got, got)
    wins, records = np.asarray(wins, bool), np.asarray(records)
    if wins.shape != (n,) or records.shape[:1] != (n,):
        raise ValueError(f"play returned {wins.shape} wins and {records.shape} records for {n} games")
    return wins, records.reshape(n, -1)


def offsets_for(n: int, group: tuple[int, ...] | None) -> np.ndarray:
    """Per-source game offsets: the A games (``group=None``) draw every source from game ``i``;
    the B games of ``group`` draw its sources from game ``i`` and every other from game ``n + i``."""
    out = np.zeros(R.N_SOURCES, np.int64)
    if group is not None:
        out[[s for s in range(R.N_SOURCES) if s not in group]] = n
    return out


def first_order_shares(play: Play, n: int, groups: dict[str, tuple[int, ...]] | None = None,
                       seed: int = 1) -> tuple[list[Share], float]:
    """Each group's first-order share over ``n`` pairs of games, and the win rate of the A games.

    A group whose re-drawing changed none of the ``n`` games (its ``B`` games are the ``C``
    games, every stream from game ``n + i``) is not measured: its share is None and ``changed`` 0.
    Where the A games all won or all lost, no other game is played and no share is measured.
    """
    if n < 2:
        raise LuckError(f"need at least 2 pairs of games, got {n}")
    groups = GROUPS if groups is None else groups
    ya, _ = _played(play, n, offsets_for(n, None))
    if ya.all() or not ya.any():  # no variance to share out
        return [Share(name, None, None, None, n) for name in groups], float(ya.mean())
    _, rc = _played(play, n, np.full(R.N_SOURCES, n, np.int64))
    out = []
    for name, group in groups.items():
        yb, rb = _played(play, n, offsets_for(n, group))
        changed = int(np.any(rb != rc, axis=1).sum())
        out.append(share_of(ya, yb, name, seed, changed) if changed else Share(name, None, None, None, n, 0))
    return out, float(ya.mean())


def kernel_play(players: int, strategy: str = "heuristic", params: dict | None = None, seed: int = 1,
                content=None, threads: int | None = None) -> Play:
    """A :data:`Play` on the kernel: the wins and rows of games whose sources draw from the given game indices."""
    from sim.kernel import ROW_FIELDS, run_batch
    from sim.rules.state import Settings
    from sim.run import _kernel_strategy, resolve_content, warn_searched_elsewhere

    c = resolve_content(content)
    settings = Settings.build(c, players)
    strat = _kernel_strategy(strategy, params, players)  # tuned: the parameter set of this player count
    warn_searched_elsewhere(strat, c, settings)
    win = ROW_FIELDS.index("win")

    def play(n: int, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rows = run_batch(c, settings, strat, seed, 0, n, threads=threads, source_offsets=offsets)
        return rows[:, win] != 0, rows

    return play


def skill_spread(players: int, strategies: list[str], games: int, seed: int = 1, content=None,
                 studied: str | None = None, params: dict | None = None) -> dict:
    """Win rate per strategy on the same games, and the share of outcome variance between strategies.

    The ``studied`` strategy plays with ``params`` (the strategy under study, so that its entry is
    the same games and decisions as the luck shares'); every other strategy plays its defaults.
    Each entry records the parameters it played with.
    """
    import sim
    from sim.results import wilson_interval

    rates = {}
    for s in strategies:
        given = dict(params or {}) if s == studied else {}
        t = sim.run.simulate_tally(players=players, games=games, strategy=s, seed=seed, content=content,
                                   params=given or None)
        lo, hi = wilson_interval(t.wins, t.n)
        rates[s] = {"win_rate": t.wins / t.n, "ci_low": lo, "ci_high": hi, "games": t.n, "params": given}
    p = np.array([r["win_rate"] for r in rates.values()])
    between = float(p.var())  # variance of the strategy's mean outcome, strategies equally weighted
    within = float(np.mean(p * (1 - p)))  # luck: the outcome's variance given the strategy
    return {"strategies": rates, "between_share": between / (between + within) if between + within > 0 else 0.0}


def _check_ladder(ladder: list[str]) -> None:
    import strategies

    if not ladder:
        raise LuckError("give at least one strategy for the spread across strategies")
    for name in ladder:
        if not isinstance(name, str) or name not in strategies.names():
            raise LuckError(f"strategies: unknown strategy {name!r}; registered: {', '.join(strategies.names())}")
        if ladder.count(name) > 1:
            raise LuckError(f"strategies: {name!r} given twice")


def luck_table(players: list[int], *, strategy: str = "heuristic", params: dict | None = None, games: int = 100_000,
               seed: int = 1, content=None, ladder: list[str] | None = None, progress=None) -> dict:
    """The luck report for each player count: source shares, the rest, and the spread across ``ladder``.

    Every strategy of every player count is built before the first game is played, so a
    name, parameter or player count that cannot be played is refused before any work.
    The studied ``strategy`` plays with ``params`` in the ladder too (see :func:`skill_spread`).
    """
    from sim.run import _kernel_strategy, resolve_content

    if isinstance(games, bool) or not isinstance(games, (int, np.integer)) or games < 2:
        raise LuckError(f"games must be an integer of at least 2, got {games!r}")
    ladder = list(ladder) if ladder else [strategy]
    _check_ladder(ladder)
    c = resolve_content(content)
    plays = {}
    for p in players:
        plays[p] = kernel_play(p, strategy, params, seed, c)
        for s in ladder:
            if s != strategy:
                _kernel_strategy(s, None, p)
    out = []
    for p in players:
        shares, rate = first_order_shares(plays[p], games, seed=seed)
        flat = no_variance_note(rate, games) if rate in (0.0, 1.0) else None
        if progress:
            progress(f"{count(p, 'player')}: " + (flat or ", ".join(
                f"{s.group} {100 * s.share:.1f}%" if s.measured else f"{s.group} not drawn" for s in shares)))
        skill = skill_spread(p, ladder, games, seed=seed, content=c, studied=strategy, params=params)
        out.append({
            "players": p, "strategy": strategy, "params": dict(params or {}), "pairs": games, "win_rate": rate,
            "not_measured": flat,
            "shares": [_share_record(s, flat) for s in shares],
            "rest": None if flat else 1.0 - sum(s.share for s in shares if s.measured),
            "skill": skill,
        })
    import sim

    return {"seed": seed, "method": "first-order pick-freeze shares (Janon), 95% bootstrap intervals; a source group "
                                    "whose re-drawing changed none of the games is not measured (share null)",
            "content_hash": c.hash, "rules_version": sim.RULES_VERSION, "players": out}


def not_drawn_note(games: int) -> str:
    """Why a group that changed no game has no share."""
    return f"not drawn in these games: re-drawing it changed none of the {games:,} games"


def no_variance_note(rate: float, games: int) -> str:
    """Why a player count with a win rate of 0% or 100% has no shares."""
    return (f"the win rate is {100 * rate:.0f}% (all {games:,} games {'won' if rate else 'lost'}): there is no "
            "variance in the outcome to share out among the sources")


def _share_record(s: Share, flat: str | None = None) -> dict:
    """One group's entry in the report: ``not_measured`` says why its share is null, and is null where measured."""
    why = flat or (not_drawn_note(s.pairs) if s.changed == 0 else "no variance in the outcomes of these pairs")
    return {"group": s.group, "share": s.share, "low": s.low, "high": s.high, "games_changed": s.changed,
            "not_measured": None if s.measured else why}


def write_outputs(table: dict, out) -> list:
    """luck.json and one chart per player count under ``out``."""
    import json
    from pathlib import Path

    from sim.charts import luck_shares

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files = [out / "luck.json"]
    files[0].write_text(json.dumps(table, indent=2, allow_nan=False) + "\n")  # null, never NaN
    for rec in table["players"]:
        files.append(luck_shares(rec, out / f"luck_{rec['players']}p.png"))
    return files


__all__ = ["GROUPS", "LuckError", "Share", "bootstrap_key", "first_order_shares", "kernel_play", "luck_table",
           "no_variance_note", "not_drawn_note", "offsets_for", "share_of", "skill_spread", "write_outputs"]
