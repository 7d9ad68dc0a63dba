"""Find the setup values that bring a win rate into a target band (``smersh-sim tune``).

A *knob* is a content-override path with a list of integer values
(``lobo.track.start=-2..3``); a *candidate* is one value per knob. Every
candidate is played on the same games (common random numbers: the same seed
and game indices), in rounds of growing size, and raced against the band:

* after each round a candidate whose elimination interval (99.9%) lies wholly
  outside the band at any player count is dropped, since it clearly misses;
* a candidate whose 95% interval lies inside the band at every player count is
  *found* and plays no more games;
* the rest (intervals straddling a band edge) play the next round, twice as
  many games as the last, until none is left or the budget of games is spent;
* a candidate whose 95% interval is 20 times narrower than the band and still
  straddles an edge sits on the edge (``edge``): more games would not decide it,
  so it plays no more.

Repeated looks. Each round is a look at the same, growing, sample, and a
candidate stops at the first look that decides it, so an interval of 95% at
each look would be found inside the band far more often than one time in 40
when its true rate is on the band edge (about 13% of the time at the edge of
[0.43, 0.47] with the 2,000,000-game schedule). The intervals are therefore
simultaneous over every look the budget allows: the most rounds a candidate
can play, ``K`` (:func:`max_looks`: 10 for 2,000,000 games and one target),
and the race never plays more. Each look uses a Wilson interval of level
``1 - 0.05 / K`` for *found* and ``1 - 0.001 / K`` for *dropped*
(Bonferroni over the looks). The guarantee, for each candidate and target,
whatever the stopping (up to the Wilson interval's normal approximation,
which the tests check on simulated races): a candidate whose true win rate lies
outside a band is found with probability at most 2.5% (one band edge: the
95% interval's lower or upper tail), and one whose true rate lies inside a
band is dropped there with probability at most 0.1%. The guarantee is per candidate: among
many candidates near an edge, some may be found by chance.

Selection. The best found setting (nearest the band centre(s)) is chosen on
the race's games, so its race figure is the selected one's and leans towards
the centre; :func:`tune` plays it again on fresh games (game indices the race
did not use) and reports that rate with a plain 95% interval, one look at
games that chose nothing.

Where the product of the knobs' values is larger than ``max_candidates``, a
seeded optuna TPE search proposes that many candidates instead, each scored by
its first round's distance from the band centre(s); the race then goes on from
there (the search's round is the first look). The same seed gives the same
answer. Settings one knob apart are checked for playing the same games before
the search, as a whole grid is (:func:`check_distinct`); a proposal that plays
the same games as a candidate at every target (knobs that cancel out) is
scored with that candidate's games and not raced again (``same_games``).

Those checks compare what the games read of the packs. Packs that differ in
what they read can still play the same games (a limit no game reaches, a
choice no strategy makes), so the first round is played with a digest of each
job's per-game records (``GameEvaluator.with_digests``): settings whose first
round was the same games, record for record, at every target are raced as one,
the first in the grid's order (or the first the search played), the others
listed with it (``TuneResult.alike``); a knob whose every value played the
same games is refused then (:func:`_refuse_idle_knobs`). No game is played
for it that the race would not play.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist

from sim.results import wilson_interval
from sim.text import count, counts, params_text

Z95 = 1.959963984540054
ALPHA_FOUND = 0.05  # found: 95% over all looks, so an out-of-band rate is found with probability <= 2.5%
ALPHA_DROP = 0.001  # dropped: 99.9% over all looks, so a drop is a clear miss, not an accident
FIRST_ROUND = 2000
MAX_CANDIDATES = 400
CONFIRM_GAMES = 20_000


class TuneError(ValueError):
    """A knob, target or budget that cannot be tuned."""


@dataclass(frozen=True)
class Knob:
    """One setup value to vary: an override path and its candidate values."""

    path: str
    values: tuple

    @staticmethod
    def parse(text: str) -> Knob:
        """``'lobo.track.start=-2..3'`` or ``'path=1,3,5'`` -> Knob."""
        from sim.content.overrides import split_assignment

        path, spec = split_assignment(text)
        if spec is None:
            raise TuneError(f"--knob {text!r}: expected PATH=LO..HI or PATH=V1,V2,...")
        if not path:
            raise TuneError(f"--knob {text!r}: the path is empty")
        m = re.fullmatch(r"(-?\d+)\s*\.\.\s*(-?\d+)", spec)
        if m:
            lo, hi = int(m.group(1)), int(m.group(2))
            if lo > hi:
                raise TuneError(f"--knob {text!r}: range {lo}..{hi} is empty (low above high)")
            if hi - lo > 200:
                raise TuneError(f"--knob {text!r}: {hi - lo + 1} values; at most 201 per knob")
            return Knob(path, tuple(range(lo, hi + 1)))
        try:
            values = tuple(int(v) for v in spec.split(","))
        except ValueError:
            raise TuneError(f"--knob {text!r}: values must be integers (LO..HI or V1,V2,...)") from None
        if len(set(values)) != len(values):
            raise TuneError(f"--knob {text!r}: a value is listed twice")
        return Knob(path, values)


@dataclass(frozen=True)
class Target:
    """The band a win rate must reach at one player count."""

    players: int
    low: float
    high: float

    def __post_init__(self):
        if not (0.0 <= self.low < self.high <= 1.0) or any(math.isnan(x) for x in (self.low, self.high)):
            raise TuneError(f"target for {count(self.players, 'player')}: band [{self.low}, {self.high}] must satisfy 0 <= low < high <= 1")


def parse_target(text: str, players: int) -> Target:
    """``'0.43:0.47'`` -> Target."""
    try:
        lo, hi = (float(x) for x in text.split(":"))
    except ValueError:
        raise TuneError(f"--target {text!r}: expected LOW:HIGH as fractions, e.g. 0.43:0.47") from None
    return Target(players, lo, hi)


def _params_key(params: dict | None) -> tuple:
    """A strategy's parameters as the spec and bands code key their games (``tuple(sorted(params.items()))``),
    each value beside whether it is a true/false, which Python would otherwise take for 1/0."""
    return tuple(sorted((k, (isinstance(v, bool), v)) for k, v in (params or {}).items()))


def _params_label(params: dict | None) -> str:
    """``pool_target=6, reroll=False`` (sorted by name), or ``none``."""
    return params_text(dict(sorted((params or {}).items()))) or "none"


def targets_from_bands(path, strategy: str, engine: str = "kernel", params: dict | None = None,
                       content=None) -> list[Target]:
    """The win-rate bands of a bands file's plain cells for ``strategy``: ``params`` (none by default) and no
    variant, line-up or overrides, the players picking their advanced skills, on ``engine`` -- the games
    ``tune`` plays. ``content``: the pack ``tune`` plays (None: the default pack); a file whose ``[check]
    content`` names another pack is refused (its bands are of that pack's games).

    The strategy's other cells (other params included) are skipped with a warning naming each and why
    (their bands are of other games); a file with none plain is refused, naming what was skipped.
    """
    import warnings

    from sim.bands import load_bands

    model, p = load_bands(path)
    from sim.content import DEFAULT_PACK

    theirs = (p.parent / model.check.content).resolve() if model.check.content is not None else Path(DEFAULT_PACK).resolve()
    ours = Path(DEFAULT_PACK if content is None else content).resolve()
    if theirs != ours:
        raise TuneError(f"{p.name}: [check] content is {theirs}, but tune plays the pack {ours}: its bands are of "
                        f"that pack's games; give --content {theirs}")
    want = _params_key(params)
    what = f"params {_params_label(params)}" if params else "no params"
    out = []
    skipped = []
    for c in model.cell:
        if c.strategy != strategy:
            continue
        why = [w for w, differs in (
            (f"params {_params_label(c.params)} (tune plays with {_params_label(params)})", _params_key(c.params) != want),
            (f"overrides {sorted(c.overrides)}", bool(c.overrides)),
            (f"variant {c.variant!r}", c.variant != "standard"),
            (f"characters {c.characters!r}", c.characters != "default"),
            (f"skills {c.skills!r} (tune plays with the players picking their skills)", c.skills != "pick"),
            (f"engine {c.engine!r} (tune plays on the {engine})", c.engine != engine),
        ) if differs]
        if why:
            skipped.append(f"cell[{c.name}] ({count(c.players, 'player')}): {', '.join(why)}")
            continue
        if any(t.players == c.players for t in out):
            raise TuneError(f"{p.name}: two plain {strategy} cells ({what}) for {count(c.players, 'player')}; keep one per "
                            "player count")
        out.append(Target(c.players, float(c.win_rate[0]), float(c.win_rate[1])))
    if not out:
        also = f"; skipped: {'; '.join(skipped)}" if skipped else ""
        raise TuneError(f"{p.name}: no plain cell ({what}, no variant, line-up or overrides, skills 'pick', "
                        f"engine {engine!r}) for strategy {strategy!r}{also}")
    if skipped:
        warnings.warn(f"{p.name}: not targets (they play other games than tune's): {'; '.join(skipped)}",
                      stacklevel=2)
    return sorted(out, key=lambda t: t.players)


def overrides_of(knobs: list[Knob], values: tuple) -> dict:
    """The content overrides of one candidate (``villain.counts.X`` and ``...villain_counts.X`` knobs become one table)."""
    from sim.content.overrides import fold_counts

    return fold_counts({knob.path: v for knob, v in zip(knobs, values)})


@dataclass
class Candidate:
    """One setting under test: its wins and games per player count."""

    values: tuple
    wins: dict = field(default_factory=dict)
    games: dict = field(default_factory=dict)
    state: str = "racing"  # racing | found | dropped | edge | unresolved

    def rate(self, players: int) -> float:
        return self.wins[players] / self.games[players] if self.games.get(players) else float("nan")


def max_looks(budget: int, n_targets: int, first_round: int = FIRST_ROUND) -> int:
    """The most rounds (looks) any candidate can play within ``budget`` games: the doubling schedule of
    a candidate racing alone, whose last round takes what is left. The race stops at that many."""
    looks, left, size = 0, budget, first_round
    while left // n_targets >= 1:
        n = min(size, left // n_targets)
        left -= n * n_targets
        looks += 1
        size *= 2
    return max(1, looks)


@dataclass(frozen=True)
class Levels:
    """The interval levels of a race: simultaneous over ``looks`` looks (Bonferroni; see the module doc)."""

    looks: int
    z_found: float
    z_drop: float

    @staticmethod
    def of(looks: int) -> Levels:
        nd = NormalDist()
        return Levels(looks, nd.inv_cdf(1 - ALPHA_FOUND / (2 * looks)), nd.inv_cdf(1 - ALPHA_DROP / (2 * looks)))

    def record(self) -> dict:
        return {"looks": self.looks, "found": 1 - ALPHA_FOUND, "dropped": 1 - ALPHA_DROP,
                "found_per_look": 1 - ALPHA_FOUND / self.looks, "dropped_per_look": 1 - ALPHA_DROP / self.looks,
                "method": "Wilson intervals, Bonferroni over the looks the budget allows"}


# why a race stops (TuneResult.stopped): the words of the summary line
STOPPED = {
    "decided": "every setting decided (found, dropped or on an edge)",
    "budget": "budget spent",
    "looks": "the last of the {looks} looks the intervals allow for taken",
}


@dataclass
class TuneResult:
    knobs: list[Knob]
    targets: list[Target]
    candidates: list[Candidate]
    games_played: int
    budget: int
    seed: int
    levels: Levels = field(default_factory=lambda: Levels.of(1))
    confirmation: list[dict] = field(default_factory=list)  # the best setting on fresh games (see tune)
    made: dict = field(default_factory=dict)  # what the games were played with (see tune); empty for race alone
    # a setting the TPE search suggested -> the raced one whose games it plays (it is not raced again)
    same_games: dict = field(default_factory=dict)
    # why the race stopped (a key of STOPPED): every setting decided, the budget spent, or the last look taken
    stopped: str = "decided"
    # a setting whose first round (``alike_games`` games per target, game indices from 0) was the very games of one
    # raced, record for record at every target -> that setting: raced as it, not as a setting of its own
    alike: dict = field(default_factory=dict)
    alike_games: int = 0

    def stop_reason(self) -> str:
        """Why the race stopped, in words (the summary line's end)."""
        return STOPPED[self.stopped].format(looks=self.levels.looks)

    def who(self) -> str:
        """``heuristic players`` or ``bold players (pool_target=6)``: the level of play the figures describe."""
        if not self.made:
            return "players of an unnamed evaluator"
        params = self.made["params"]
        return f"{self.made['strategy']} players" + (
            f" ({', '.join(f'{k}={v}' for k, v in params.items())})" if params else "")

    def found(self) -> list[Candidate]:
        """Settings whose interval lies inside the band at every target, best (nearest band centres) first."""
        hits = [c for c in self.candidates if c.state == "found"]

        def distance(c):
            return sum(abs(c.rate(t.players) - (t.low + t.high) / 2) for t in self.targets)

        return sorted(hits, key=lambda c: (distance(c), c.values))

    def interval(self, c: Candidate, players: int) -> tuple[float, float]:
        """A candidate's interval at one target: simultaneous over the looks (the one its verdict used)."""
        return wilson_interval(c.wins[players], c.games[players], self.levels.z_found)

    def settings(self, c: Candidate) -> dict:
        return {k.path: v for k, v in zip(self.knobs, c.values)}


Evaluate = Callable[[tuple, int, int, int], int]  # (values, players, game0, games) -> wins


def check_knobs(knobs: list[Knob]) -> None:
    """Refuse no knob, and a path given twice: the later override would win, and candidates that
    differ only in the earlier knob's value would all play the same games under different labels."""
    if not knobs:
        raise TuneError("give at least one --knob")
    seen = set()
    for k in knobs:
        if k.path in seen:
            raise TuneError(f"--knob {k.path}: given twice; give the path once with all its values "
                            f"(e.g. {k.path}=0..3 or {k.path}=0,1,3)")
        seen.add(k.path)


class _Seen:
    """The settings met so far, by the games they play at the target player counts (see :func:`check_distinct`)."""

    def __init__(self, knobs: list[Knob], targets: list[Target]):
        self.knobs = knobs
        self.counts = sorted({t.players for t in targets})
        self.by_key: dict[tuple, tuple] = {}

    def twin(self, values: tuple, pack, raw: dict | None = None) -> tuple | None:
        """The setting met before that plays the same games as ``values`` at the target player counts, or
        None (``values`` is then recorded). With ``raw`` (its parsed pack), refuses one whose games differ
        but play the same value of every knob as an earlier setting's."""
        from sim.rules.reads import played_key
        from sim.rules.state import Settings
        from sim.sensitivity import value_played

        key = ("pack",) + tuple(pack.for_players(p).hash for p in self.counts)
        if key in self.by_key:
            return self.by_key[key]
        if raw is not None:
            played = ("played",) + tuple(value_played(raw, k.path, p) for p in self.counts for k in self.knobs)
            if played in self.by_key:
                raise self.refusal(self.by_key[played], values, "the same value of every knob")
            self.by_key[played] = values
        # packs that differ only in values the standard game does not read (a variant's own, dirty_lobo_start)
        reads = ("reads",) + tuple(played_key(pack, Settings(players=p)) for p in self.counts)
        twin = self.by_key.setdefault(reads, values)
        self.by_key[key] = twin
        return None if twin == values else twin

    def refusal(self, a: tuple, b: tuple, what: str, why: str | None = None) -> TuneError:
        a, b = (", ".join(f"{k.path}={v}" for k, v in zip(self.knobs, vs)) for vs in (a, b))
        return TuneError(f"--knob settings {a} and {b} play {what} at {counts(self.counts, 'player')}: the pack "
                         "sets what they change per player count there, or they change nothing those games "
                         "read (such as setup.toml's row for another player count, or a value only a variant "
                         "reads: tune plays the standard game)" + (f"; here: {why}" if why else "")
                         + "; tune the value those games play instead, or drop that knob")


def check_distinct(knobs: list[Knob], packs: dict, targets: list[Target], raws: dict | None = None) -> None:
    """Refuse two settings that play the same games at every target player count: a knob the pack
    overrides there (a per-player-count value, e.g. ``setup.player_count[players=4].lobo_start`` over
    ``lobo.track.start``), or one naming ``setup.toml``'s row for another player count, would be raced as
    if it mattered, its values told apart by noise alone.

    ``raws`` (each setting's parsed pack) also catches settings whose packs differ but whose games play
    the same values of every knob: ``villain.counts.minus_one`` under a player count's own
    ``villain_counts`` relabels other cards and leaves the count it plays unchanged.
    """
    from sim.rules.reads import why_alike
    from sim.rules.state import Settings

    seen = _Seen(knobs, targets)
    for values, pack in packs.items():
        twin = seen.twin(values, pack, None if raws is None else raws[values])
        if twin is not None:
            why = next(filter(None, (why_alike(packs[twin], pack, Settings(players=p)) for p in seen.counts)), None)
            raise seen.refusal(twin, values, "the same games", why)


def one_knob_apart(knobs: list[Knob]) -> list[tuple]:
    """Every knob's values, the other knobs at their first: the settings :func:`tune` checks for playing
    the same games before a TPE search (which meets the grid's other settings as it goes)."""
    base = [k.values[0] for k in knobs]
    return list(dict.fromkeys(tuple(base[:i] + [v] + base[i + 1:]) for i, k in enumerate(knobs) for v in k.values))


def race(
    knobs: list[Knob],
    targets: list[Target],
    evaluate: Evaluate,
    budget: int,
    *,
    seed: int = 1,
    first_round: int = FIRST_ROUND,
    max_candidates: int = MAX_CANDIDATES,
    progress: Callable[[str], None] | None = None,
) -> TuneResult:
    """Race every candidate against the targets within ``budget`` games (see the module doc)."""
    if budget < 1:
        raise TuneError(f"--budget {budget}: must be a positive number of games")
    check_knobs(knobs)
    if not targets:
        raise TuneError("give a --target (or --target-file)")
    levels = Levels.of(max_looks(budget, len(targets), first_round))
    grid = [k.values for k in knobs]
    size = math.prod(len(v) for v in grid)
    # ``evaluate.with_digests``, where the evaluator has it, plays a first round with a digest of its games per job, so
    # that settings whose games are the same, record for record, are raced as one (``alike``)
    digests = getattr(evaluate, "with_digests", None)
    alike: dict[tuple, tuple] = {}
    alike_games = 0
    if size <= max_candidates:
        cands = [Candidate(v) for v in itertools.product(*grid)]
        for c in cands:
            for t in targets:
                c.wins[t.players] = 0
                c.games[t.players] = 0
        played = done = looks = 0
        round_size = first_round
        same = {}
    else:
        cands, played, same, alike = _searched(knobs, targets, evaluate, max_candidates, first_round, seed, budget)
        alike_games = first_round if alike else 0
        _refuse_idle_knobs(knobs, targets, cands, same, alike, first_round)
        for c in cands:
            c.state = _verdict(c, targets, levels)
        done, round_size, looks = first_round, 2 * first_round, 1
        if progress:
            progress(f"searched {len(cands)} of {size:,} settings with TPE ({played:,} games)"
                     + (f"; {len(same)} more it suggested play the same games as one of them and are not raced "
                        "again" if same else "")
                     + (f"; {len(alike)} more played the very games of one of them and are raced as it" if alike else ""))
    # ``done``: games per player count every racing candidate has played (game indices 0..done-1)
    stopped = "looks"  # the loop's own end: no look left that the intervals allow for
    while looks < levels.looks:
        racing = [c for c in cands if c.state == "racing"]
        if not racing:
            stopped = "decided"
            break
        cost = len(racing) * len(targets)
        n = min(round_size, (budget - played) // cost)
        if n < 1:
            stopped = "budget"
            break
        jobs = [(c.values, t.players, done, n) for c in racing for t in targets]
        first = done == 0 and digests is not None
        outs = digests(jobs) if first else _evaluate_all(evaluate, jobs)
        games_of: dict[tuple, list] = {}
        for (values, players, _, _), out in zip(jobs, outs):
            wins, digest = out if first else (out, None)
            c = next(x for x in racing if x.values == values)
            c.wins[players] += int(wins)
            c.games[players] += n
            games_of.setdefault(values, []).append(digest)
        played += n * cost
        done += n
        looks += 1
        if first:
            cands, alike = _collapse(cands, games_of)
            alike_games = n if alike else 0
            _refuse_idle_knobs(knobs, targets, cands, same, alike, n)
            racing = [c for c in racing if c in cands]
        for c in racing:
            c.state = _verdict(c, targets, levels)
        if progress:
            states = [c.state for c in cands]
            progress(f"{done:,} games per racing setting: {states.count('found')} found, "
                     f"{states.count('racing')} racing, {states.count('dropped')} dropped, {states.count('edge')} on an "
                     f"edge ({played:,} of {budget:,} games)")
        round_size *= 2
    racing = [c for c in cands if c.state == "racing"]
    if not racing:  # the last round decided every setting left
        stopped = "decided"
    elif stopped == "looks" and (budget - played) // (len(racing) * len(targets)) < 1:
        stopped = "budget"  # the last look took the last games a round can have
    for c in racing:
        c.state = "unresolved"
    return TuneResult(knobs, targets, cands, played, budget, seed, levels, same_games=same, stopped=stopped,
                      alike=alike, alike_games=alike_games)


def _collapse(cands: list[Candidate], games_of: dict[tuple, list]) -> tuple[list[Candidate], dict]:
    """The candidates of a first round with one of each set whose games were the same, record for record, at every
    target (``games_of``: values -> the digest of each target's games): the first in the grid's order stays, and
    each other is mapped to it."""
    first: dict[tuple, tuple] = {}
    alike: dict[tuple, tuple] = {}
    for c in cands:
        key = tuple(games_of[c.values])
        if key in first:
            alike[c.values] = first[key]
        else:
            first[key] = c.values
    return [c for c in cands if c.values not in alike], alike


def _values_text(values: tuple) -> str:
    """A knob's values as given on the command line: ``3..6`` for a run of integers, else ``1,3,5``."""
    if len(values) > 2 and list(values) == list(range(values[0], values[0] + len(values))):
        return f"{values[0]}..{values[-1]}"
    return ",".join(map(str, values))


def _refuse_idle_knobs(knobs: list[Knob], targets: list[Target], cands: list[Candidate], same: dict, alike: dict,
                       games: int) -> None:
    """Refuse a knob whose every value played the same games as the others, record for record, on the first round,
    whatever the other knobs' values: it would be raced as one setting under several labels.

    Known for a knob where some setting of the other knobs was played with each of its values (every setting of a
    grid); a setting the search suggested with the games of one played (``same``) counts as that one."""
    played = {c.values: c.values for c in cands}
    played.update(alike)

    def plays_as(values: tuple) -> tuple:
        values = same.get(values, values)
        return played.get(values, values)

    group = {v: plays_as(v) for v in list(played) + list(same)}
    for i, k in enumerate(knobs):
        if len(k.values) < 2:
            continue
        rows: dict[tuple, dict] = {}
        for v, rep in group.items():
            rows.setdefault(v[:i] + v[i + 1:], {})[v[i]] = rep
        if all(len(set(r.values())) == 1 for r in rows.values()) and any(len(r) == len(k.values) for r in rows.values()):
            others = " whatever the other knobs' values" if len(knobs) > 1 else ""
            raise TuneError(f"--knob {k.path}={_values_text(k.values)}: every value played the same games, record for "
                            f"record, on the race's first {games:,} games at {counts(sorted({t.players for t in targets}), 'player')}"
                            f"{others}: those games never reach what its values change (a limit no game reaches, a "
                            "choice no strategy makes, a value past where the rules stop reading it), so its values "
                            f"would be raced as one setting under {len(k.values)} labels; tune values that change the "
                            "games, or drop that knob")


def _evaluate_all(evaluate: Evaluate, jobs: list[tuple]) -> list[int]:
    """Wins of every (values, players, game0, games) job: all at once where the evaluator can (a cluster)."""
    many = getattr(evaluate, "many", None)
    return list(many(jobs)) if many is not None else [evaluate(*job) for job in jobs]


EDGE_RESOLUTION = 20  # an interval this many times narrower than the band, still on its edge, stops racing


def _verdict(c: Candidate, targets: list[Target], levels: Levels) -> str:
    """found (inside every band), dropped (clearly outside one), edge (pinned on a band edge) or racing,
    by intervals simultaneous over every look of the race (``levels``)."""
    inside = True
    pinned = True
    for t in targets:
        w, n = c.wins[t.players], c.games[t.players]
        lo, hi = wilson_interval(w, n, levels.z_drop)
        if hi < t.low or lo > t.high:
            return "dropped"
        lo_f, hi_f = wilson_interval(w, n, levels.z_found)
        ok = t.low <= lo_f and hi_f <= t.high
        inside &= ok
        if not ok and hi_f - lo_f > (t.high - t.low) / EDGE_RESOLUTION:
            pinned = False
    if inside:
        return "found"
    return "edge" if pinned else "racing"


def _searched(knobs: list[Knob], targets: list[Target], evaluate: Evaluate, n: int, games: int, seed: int,
              budget: int) -> tuple[list[Candidate], int, dict]:
    """Up to ``n`` distinct candidates from a grid too large to enumerate, chosen by a seeded TPE search.

    Each proposal plays the first round (``games`` games per target, the same
    games for all) and scores its distance from the band centres; TPE proposes
    the next from those scores. A proposal that plays the same games as a
    candidate at every target (``evaluate.twin``, where the evaluator can tell)
    is no candidate of its own: it is scored with that candidate's games.
    Where the evaluator tells the games apart (``evaluate.with_digests``), a proposal
    whose first round was the very games of a candidate, record for record, is
    no candidate either: it is raced as that one. Returns the candidates with
    their first round played, the games spent, each proposal of the first kind
    with the candidate whose games it plays, and each of the second with the
    candidate whose games it played.
    """
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed, n_startup_trials=min(20, n)))
    twin = getattr(evaluate, "twin", None)  # (values, targets) -> a setting asked before playing the same games
    digests = getattr(evaluate, "with_digests", None)  # jobs -> (wins, digest of the games) each
    found: dict[tuple, Candidate] = {}
    same: dict[tuple, tuple] = {}
    alike: dict[tuple, tuple] = {}
    by_games: dict[tuple, tuple] = {}
    spent = 0
    tries = 0
    while len(found) < n and tries < 5 * n and spent + games * len(targets) <= budget:
        trial = study.ask()
        values = tuple(trial.suggest_categorical(f"k{i}", list(k.values)) for i, k in enumerate(knobs))
        tries += 1
        if values not in found and values not in same and values not in alike and twin is not None:
            earlier = twin(values, targets)
            if earlier is not None:
                same[values] = earlier
        if values not in found and values not in same and values not in alike:
            jobs = [(values, t.players, 0, games) for t in targets]
            outs = digests(jobs) if digests is not None else [(evaluate(*job), None) for job in jobs]
            spent += games * len(targets)
            key = tuple(d for _, d in outs) if digests is not None else None
            if key is not None and key in by_games:  # the very games of a candidate: raced as it
                alike[values] = by_games[key]
            else:
                c = Candidate(values)
                for t, (wins, _) in zip(targets, outs):
                    c.wins[t.players] = int(wins)
                    c.games[t.players] = games
                found[values] = c
                if key is not None:
                    by_games[key] = values
        rep = same.get(values, values)
        c = found[alike.get(rep, rep)]
        study.tell(trial, sum(abs(c.rate(t.players) - (t.low + t.high) / 2) for t in targets))
    return list(found.values()), spent, same, alike


def play_games(job: tuple, shared=None, threads: int | None = None) -> tuple[int, str]:
    """:func:`play_wins` and the :func:`sim.run.games_digest` of the job's per-game table (a first round's games)."""
    import sim
    from sim.run import checked_team, games_digest, searched_elsewhere_said_by_caller

    _, (pack, players, game0, games, strategy, params, seed, engine, recorded) = job
    team = checked_team(strategy, players, dict(params), recorded)
    with searched_elsewhere_said_by_caller():  # said by tune() for the pack it steps from
        df = sim.simulate(players=players, games=games, strategy=team, seed=seed, content=pack, engine=engine,
                          game0=game0, threads=threads)
    return int(df["win"].sum()), games_digest(df)


def play_wins(job: tuple, shared=None, threads: int | None = None) -> int:
    """Wins of one (index, (pack, players, game0, games, strategy, params, seed, engine, recorded)) job, here or on a
    worker: ``recorded`` is what the seats played when the run began (:func:`sim.run.checked_team`)."""
    import sim
    from sim.run import checked_team, searched_elsewhere_said_by_caller

    _, (pack, players, game0, games, strategy, params, seed, engine, recorded) = job
    team = checked_team(strategy, players, dict(params), recorded)
    with searched_elsewhere_said_by_caller():  # said by tune() for the pack it steps from
        tally = sim.run.simulate_tally(players=players, games=games, strategy=team, seed=seed, content=pack,
                                       engine=engine, game0=game0, threads=threads)
    return tally.wins


class GameEvaluator:
    """Plays real games for :func:`race`: each candidate's pack is built and validated once, before any game."""

    def __init__(self, knobs: list[Knob], content_path, strategy: str, params: dict | None, seed: int,
                 engine: str = "kernel", runner=None):
        from sim.distributed import LocalRunner

        self.knobs, self.content_path = list(knobs), content_path
        self.strategy, self.params, self.seed, self.engine = strategy, params, seed, engine
        self.runner = runner if runner is not None else LocalRunner()
        self.packs: dict = {}
        self.raws: dict = {}
        self.unprinted: list = []  # the values of the settings' packs the printed game does not have
        self.seen: dict[tuple, _Seen] = {}  # by the target player counts: the settings twin was asked about
        self.plays: dict[int, str] = {}  # by player count: what the seats play, as built before its first game

    def pack(self, values: tuple):
        """The content of one candidate (a TuneError naming the knob values if the pack refuses them)."""
        if values not in self.packs:
            from sim.content import ContentError
            from sim.content.loader import collecting_unprinted
            from sim.content.overrides import load_with_overrides

            label = ", ".join(f"{k.path}={v}" for k, v in zip(self.knobs, values))
            try:
                with collecting_unprinted(self.unprinted):  # said once for all the settings: tune()
                    self.packs[values] = load_with_overrides(self.content_path, overrides_of(self.knobs, values), None)
            except ContentError as e:
                raise TuneError(f"--knob {label}: the pack refuses this setting: {e}") from None
        return self.packs[values]

    def raw(self, values: tuple) -> dict:
        """The parsed pack of one candidate (its overrides applied), to read the values its games play."""
        if values not in self.raws:
            from sim.content import load_raw
            from sim.content.overrides import apply_overrides

            self.pack(values)  # refused with the knob values named, if the pack refuses them
            self.raws[values] = apply_overrides(load_raw(self.content_path), overrides_of(self.knobs, values))
        return self.raws[values]

    def twin(self, values: tuple, targets: list[Target]) -> tuple | None:
        """A setting asked about before that plays the same games as ``values`` at every target player count
        (the same pack there; strategy, params, seed and engine are the evaluator's), or None (``values``
        is then recorded). Refuses one whose games differ but play the same value of every knob."""
        counts = tuple(sorted({t.players for t in targets}))
        seen = self.seen.setdefault(counts, _Seen(self.knobs, targets))
        return seen.twin(values, self.pack(values), self.raw(values))

    def __call__(self, values: tuple, players: int, game0: int, games: int) -> int:
        return self.many([(values, players, game0, games)])[0]

    def many(self, jobs: list[tuple]) -> list[int]:
        """Wins of each (values, players, game0, games) job, played by the runner (here, or on a cluster)."""
        return self._run(play_wins, jobs)

    def with_digests(self, jobs: list[tuple]) -> list[tuple[int, str]]:
        """Wins and the :func:`sim.run.games_digest` of each (values, players, game0, games) job: the race's first
        round, where two settings whose games are the same, record for record, are told (see :func:`race`)."""
        return self._run(play_games, jobs)

    def plays_at(self, players: int) -> str:
        """What the seats play at ``players`` (:func:`sim.run.plays_text`), as built when first asked: every job at
        that count plays these parameters or stops the run (an edited strategies/tuned.toml)."""
        if players not in self.plays:
            from sim.run import make_team, plays_text, seats_plays

            self.plays[players] = plays_text(seats_plays(make_team(self.strategy, players, self.params)))
        return self.plays[players]

    def _run(self, play, jobs: list[tuple]) -> list:
        tasks = [(self.pack(values), players, game0, games, self.strategy, tuple(sorted((self.params or {}).items())),
                  self.seed, self.engine, self.plays_at(players)) for values, players, game0, games in jobs]
        out = {job[0]: w for job, w in self.runner.run(play, list(enumerate(tasks)))}
        return [out[i] for i in range(len(tasks))]


SIDE_GAMES = 20_000
SIDE_SETTINGS = 5


def side_effects(evaluator: GameEvaluator, default_pack, settings: list[Candidate], also_players: list[int],
                 games: int = SIDE_GAMES) -> list[dict]:
    """Each setting's paired change in win rate against the unchanged pack at other player counts.

    The games are played by the evaluator's runner (here, or on the cluster of ``--scheduler``).
    """
    from sim.compare import paired_stats
    from sim.sensitivity import play_win_vector

    prm = tuple(sorted((evaluator.params or {}).items()))

    def task(pack, players):
        return (pack, players, games, evaluator.strategy, prm, evaluator.seed, evaluator.engine,
                evaluator.plays_at(players))

    tasks = [(("base", p), task(default_pack, p)) for p in also_players]
    tasks += [((c.values, p), task(evaluator.pack(c.values), p)) for c in settings for p in also_players]
    played = {key: w for (key, _), w in evaluator.runner.run(play_win_vector, tasks)}
    rows = []
    for c in settings:
        for players in also_players:
            (base, base_games), (wins, digest) = played[("base", players)], played[(c.values, players)]
            if digest == base_games:  # no game changed (a knob of another count's set-up): exactly 0, no interval
                rate = float(base.mean())
                rows.append({"values": c.values, "players": players, "games": games, "default_win_rate": rate,
                             "win_rate": rate, "diff": 0.0, "diff_low": None, "diff_high": None, "same_games": True})
                continue
            st = paired_stats(base, wins)
            rows.append({"values": c.values, "players": players, "games": games,
                         "default_win_rate": st["baseline_win_rate"], "win_rate": st["win_rate"],
                         "diff": st["diff"], "diff_low": st["paired_low"], "diff_high": st["paired_high"],
                         "same_games": False})
    return rows


def side_games(side: list[dict]) -> int:
    """Games the side effects played: each setting's, plus the unchanged pack's once per player count."""
    return sum(r["games"] for r in side) + sum({r["players"]: r["games"] for r in side}.values())


def made_with(strategy: str, params: dict | None, engine: str, content_hash: str, plays: dict | None = None) -> dict:
    """What a tune's games were played with (``tune.json`` records it; the seed is recorded beside it): with
    ``plays`` (player count -> :func:`sim.run.plays_text`, as every job checked its seats against it), what the
    seats played at each player count, so a set read from a file (``tuned``'s) is in it."""
    import json

    import sim

    return {"strategy": strategy, "params": dict(sorted((params or {}).items())), "engine": engine,
            "content_hash": content_hash, "rules_version": sim.RULES_VERSION,
            "plays": {str(p): json.loads(text) for p, text in sorted((plays or {}).items())}}


def confirm(evaluate: Evaluate, result: TuneResult, c: Candidate, games: int = CONFIRM_GAMES) -> list[dict]:
    """One setting played again on fresh games: at each target, ``games`` games from the first index no
    candidate played (the race's games chose it; these did not), with a plain 95% interval (one look)."""
    jobs = [(c.values, t.players, max(x.games[t.players] for x in result.candidates), games)
            for t in result.targets]
    rows = []
    for (_, players, game0, n), wins, t in zip(jobs, _evaluate_all(evaluate, jobs), result.targets):
        lo, hi = wilson_interval(int(wins), n, Z95)
        rows.append({"players": players, "game0": game0, "games": n, "wins": int(wins), "win_rate": int(wins) / n,
                     "ci_low": lo, "ci_high": hi, "interval_inside_band": t.low <= lo and hi <= t.high})
    return rows


def tune(knobs: list[Knob], targets: list[Target], *, strategy: str = "heuristic", params: dict | None = None,
         budget: int = 2_000_000, seed: int = 1, content=None, also_players: list[int] | None = None,
         engine: str = "kernel", confirm_games: int = CONFIRM_GAMES, progress=None,
         runner=None, max_candidates: int = MAX_CANDIDATES) -> tuple[TuneResult, list[dict]]:
    """Race the knobs' settings against the targets; play the best again on ``confirm_games`` fresh games
    per target (0: not at all); then play the best few at ``also_players``.

    Settings whose packs play the same games at every target (by what those games read of them) are refused
    before any game (:func:`check_distinct`):
    all of a grid of up to ``max_candidates`` settings; before a TPE search of a larger one, the settings one
    knob apart (:func:`one_knob_apart`: a knob the games do not read), and a setting the search suggests
    that plays the same games as one it played is not raced again (``TuneResult.same_games``). Settings whose
    first round turns out to be the same games, record for record, are raced as one (``TuneResult.alike``), and
    a knob whose every value did so is refused (see :func:`race`).

    ``runner`` (:mod:`sim.distributed`) plays each round's games: here by default, or on a Dask cluster.
    """
    from sim.content import DEFAULT_PACK, unprinted
    from sim.content.loader import warn_unprinted_summary
    from sim.rules.state import Settings
    from sim.run import make_team, plays_text, resolve_content, seats_plays, warn_searched_elsewhere

    check_knobs(knobs)
    if confirm_games < 0:
        raise TuneError(f"--confirm-games {confirm_games}: must be 0 (no confirmation) or a number of games")
    path = DEFAULT_PACK if content is None else content
    evaluator = GameEvaluator(knobs, path, strategy, params, seed, engine, runner)
    grid_size = math.prod(len(k.values) for k in knobs)
    if grid_size <= max_candidates:  # refuse an off-board value before a single game is played
        settings = list(itertools.product(*(k.values for k in knobs)))
    else:  # the search meets the rest as it goes
        settings = one_knob_apart(knobs)
    for values in settings:
        evaluator.raw(values)
    check_distinct(knobs, evaluator.packs, targets, evaluator.raws)
    # every knob's values are among these settings: each field a knob sweeps off the printed game is
    # said in one warning, not one per setting (the unchanged pack says its own)
    base = resolve_content(path)  # the unchanged pack, loaded once
    known = unprinted(base)
    warn_unprinted_summary(evaluator.unprinted, "tune's settings", known)
    known += [u.text for u in evaluator.unprinted]
    # what the seats play, recorded before any game (tuned: its file as the run began)
    counts = sorted({t.players for t in targets} | set(also_players or []))
    teams = {p: make_team(strategy, p, params) for p in counts}
    evaluator.plays.update({p: plays_text(seats_plays(team)) for p, team in teams.items()})  # every job checks these
    made = made_with(strategy, params, engine, base.hash, {p: evaluator.plays[p] for p in counts})
    for p, team in teams.items():  # judged by the pack the settings are taken from (each is another pack by design)
        warn_searched_elsewhere(team, base, Settings.build(base, p))
    result = race(knobs, targets, evaluator, budget, seed=seed, max_candidates=max_candidates, progress=progress)
    result.made = made
    best = result.found()
    if best and confirm_games:
        result.confirmation = confirm(evaluator, result, best[0], confirm_games)
        if progress:
            progress("best setting on fresh games: " + "; ".join(
                f"{count(r['players'], 'player')} {100 * r['win_rate']:.2f}% [{100 * r['ci_low']:.2f}, "
                f"{100 * r['ci_high']:.2f}] over {r['games']:,}" for r in result.confirmation))
    side = []
    if also_players:
        side = side_effects(evaluator, base, best[:SIDE_SETTINGS], also_players)
    warn_unprinted_summary(evaluator.unprinted, "tune's settings", known)  # any the search met that the above did not
    return result, side


def report(result: TuneResult, side: list[dict]) -> dict:
    """The ``--json`` record: found settings (best first), the best on fresh games, every setting raced,
    games played, side effects, and (where the TPE search met any) ``same_games``: each setting it suggested
    that plays the same games as one raced (``plays_as``), not raced again; and (where any) ``played_alike``:
    each setting whose first round (``games`` per target) was the very games of one raced, raced as it."""
    found = []
    for c in result.found():
        for t in result.targets:
            lo, hi = result.interval(c, t.players)
            found.append({"settings": result.settings(c), "players": t.players, "win_rate": c.rate(t.players),
                          "ci_low": lo, "ci_high": hi, "games": c.games[t.players],
                          "side_effects": [
                              {k: r[k] for k in ("players", "games", "default_win_rate", "win_rate", "diff",
                                                  "diff_low", "diff_high", "same_games")}
                              for r in side if r["values"] == c.values]})
    raced = []
    for c in sorted(result.candidates, key=lambda c: c.values):
        for t in result.targets:
            lo, hi = result.interval(c, t.players) if c.games[t.players] else (None, None)
            raced.append({"settings": result.settings(c), "state": c.state, "players": t.players,
                          "games": c.games[t.players], "wins": c.wins[t.players],
                          "win_rate": c.rate(t.players) if c.games[t.players] else None,
                          "ci_low": lo, "ci_high": hi})
    best = result.found()
    states = [c.state for c in result.candidates]
    paths = [k.path for k in result.knobs]
    same = {"same_games": [{"settings": dict(zip(paths, v)), "plays_as": dict(zip(paths, a))}
                           for v, a in sorted(result.same_games.items())]} if result.same_games else {}
    if result.alike:
        same["played_alike"] = [{"settings": dict(zip(paths, v)), "plays_as": dict(zip(paths, a)),
                                 "games": result.alike_games} for v, a in sorted(result.alike.items())]
    return {
        **result.made,
        "found": found,
        "best": ({"settings": result.settings(best[0]), "selected_from": len(best),
                  "confirmation": result.confirmation} if best else None),
        "games_played": result.games_played,
        "confirm_games_played": sum(r["games"] for r in result.confirmation),
        "side_effect_games_played": side_games(side),
        "budget": result.budget,
        "seed": result.seed,
        "intervals": result.levels.record(),
        "targets": [{"players": t.players, "low": t.low, "high": t.high} for t in result.targets],
        "knobs": {k.path: list(k.values) for k in result.knobs},
        "candidates": len(states),
        "dropped": states.count("dropped"),
        "on_edge": states.count("edge"),
        "unresolved": states.count("unresolved"),
        "stopped": result.stopped,
        "stopped_because": result.stop_reason(),
        "raced": raced,
        **same,
    }


def override_toml(result: TuneResult, c: Candidate) -> str:
    """The best setting as a spec block ready to paste (``[setup.tuned]``)."""
    lines = ["# Written by `smersh-sim tune`: the setting nearest the band centre(s) on the race's games.",
             f"# {result.who()}, seed {result.seed}"
             + (f", pack {result.made['content_hash'][:12]}, rules version {result.made['rules_version']}, "
                f"{result.made['engine']}" if result.made else ""),
             "# race: " + "; ".join(
                 f"{count(t.players, 'player')}: {c.rate(t.players):.4f} over {c.games[t.players]} games, "
                 f"band [{t.low}, {t.high}]" for t in result.targets)]
    if result.confirmation:
        lines.append("# fresh games: " + "; ".join(
            f"{count(r['players'], 'player')}: {r['win_rate']:.4f} [{r['ci_low']:.4f}, {r['ci_high']:.4f}] over "
            f"{r['games']} games" for r in result.confirmation))
    lines += ["# Paste into an experiment spec and add \"tuned\" to [grid] setups.",
              "[setup.tuned.overrides]"]
    for path, value in overrides_of(result.knobs, c.values).items():
        if isinstance(value, dict):
            inner = ", ".join(f"{k} = {v}" for k, v in value.items())
            lines.append(f'"{path}" = {{ {inner} }}')
        else:
            lines.append(f'"{path}" = {value}')
    return "\n".join(lines) + "\n"


def write_outputs(result: TuneResult, side: list[dict], out: Path) -> list[Path]:
    """tune.json, tuned_setup.toml (when something was found) and candidates.png under ``out``."""
    import json

    from sim.charts import tune_candidates

    out.mkdir(parents=True, exist_ok=True)
    files = [out / "tune.json"]
    files[0].write_text(json.dumps(report(result, side), indent=2) + "\n")
    best = result.found()
    if best:
        files.append(out / "tuned_setup.toml")
        files[-1].write_text(override_toml(result, best[0]))
    files.append(tune_candidates(result, out / "candidates.png"))
    return files


__all__ = ["Candidate", "GameEvaluator", "Knob", "Levels", "Target", "TuneError", "TuneResult", "check_distinct",
           "check_knobs", "confirm", "made_with", "max_looks", "one_knob_apart", "overrides_of", "parse_target", "race",
           "targets_from_bands", "tune", "write_outputs"]
