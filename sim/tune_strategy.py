"""Tune the heuristic's parameters per player count for win rate (``smersh-sim tune-strategy``).

For each player count an optuna TPE search (seeded, one trial at a time, so the same
seed and budget give the same file) proposes parameter sets of
:class:`strategies.heuristic.HeuristicParams`; every trial plays the *same* games
(common random numbers: seed ``seed``, game indices SEARCH_GAME0 .. SEARCH_GAME0 +
trial_games - 1, far from the indices 0, 1, ... that a run plays by default, so no
default run replays the games the sets were selected on), so trials differ by the
strategy alone. The first trials are the built-in presets (heuristic, cautious,
bold). The budget is in games per player count: budget // trial_games trials.

A search can miss a region another player count's search found (a route to victory
that takes a particular combination of parameters), so with several player counts
each count's best set is then also played on every other count's search games, and
each count takes the set that won most of its own search games, wherever it was
found (``found_at``); these cross plays cost trial_games games per pair, beside the
budget.

A timeout counts as a loss, so a stall never pays. The chosen set is then played on
``holdout_games`` fresh games of another seed (``holdout_seed``), paired with the
built-in presets on the same games; a result with any timeout there is refused.
The result is ``strategies/tuned.toml`` (see :mod:`strategies.tuned`).
"""

from __future__ import annotations

import math
from dataclasses import fields
from pathlib import Path

import numpy as np

from sim.compare import paired_stats
from sim.text import count

# name -> ("int", lo, hi) | ("float", lo, hi, step) | ("cat", choices) | ("bool",)
SPACE = {
    "dice_stop_margin": ("int", 0, 3),
    "plus_one": ("cat", ("never", "henchman", "always")),
    "reroll": ("bool",),
    "resolve_reserve": ("int", 0, 3),
    "move_resolve": ("bool",),
    "pool_target": ("int", 2, 10),
    "final_pool_min": ("int", 2, 10),
    "release_at_pool_target": ("bool",),
    "exchange_when": ("cat", ("never", "late", "early")),
    "exchange_min_pool": ("int", 1, 8),
    "max_greens": ("int", 1, 4),
    "un_min_distance": ("int", 2, 7),
    "rest_margin": ("int", 0, 3),
    "mission_reward": ("cat", ("top_secret", "resolve", "un", "skill")),
    "gamble_resolve": ("bool",),
    "gamble_p": ("float", 0.4, 0.8, 0.01),
    "auto_pass_below": ("float", 0.5, 1.0, 0.01),
    "cancel_at": ("int", 1, 4),
    "watch_fail": ("bool",),
    "patience_rounds": ("int", 10, 60),
}
PRESETS = ("heuristic", "cautious", "bold")
MAX_SEED = 2**63 - 1
# optuna's TPE sampler takes a seed below 2**32, and each player count's search seeds it with seed + 1000 x players
MAX_SEARCH_SEED = 2**32 - 1 - 1000 * 6
SEARCH_GAME0 = 2**40  # the search's first game index: no run from game 0 reaches it
TUNED_FILE = Path(__file__).resolve().parent.parent / "strategies" / "tuned.toml"


class TuneStrategyError(ValueError):
    """A budget, seed or result the tuner refuses."""


def _check_space() -> None:
    from strategies.heuristic import HeuristicParams

    names = {f.name for f in fields(HeuristicParams)}
    if names != set(SPACE):
        raise TuneStrategyError(f"sim/tune_strategy.py SPACE: HeuristicParams has {sorted(names - set(SPACE))} "
                                f"not searched and SPACE has {sorted(set(SPACE) - names)} unknown")


def _suggest(trial, name: str, spec):
    kind = spec[0]
    if kind == "int":
        return trial.suggest_int(name, spec[1], spec[2])
    if kind == "float":
        return round(trial.suggest_float(name, spec[1], spec[2], step=spec[3]), 2)
    if kind == "cat":
        return trial.suggest_categorical(name, list(spec[1]))
    return trial.suggest_categorical(name, [False, True])


def _full(params: dict) -> dict:
    """Every HeuristicParams value (defaults filled in), floats rounded as the search steps them."""
    from strategies.heuristic import HeuristicParams

    d = {f.name: getattr(HeuristicParams(**params), f.name) for f in fields(HeuristicParams)}
    for k, spec in SPACE.items():
        if spec[0] == "float":
            d[k] = round(float(d[k]), 2)
    return d


def _wins(players: int, params: dict, seed: int, game0: int, games: int, content, threads) -> tuple[np.ndarray, int]:
    """(win per game, timeouts): a timeout is a loss."""
    import sim

    df = sim.simulate(players=players, games=games, seed=seed, game0=game0, strategy="heuristic",
                      params=params, content=content, threads=threads)
    return df["win"].to_numpy(), int((df["outcome"] == "timeout").sum())


def search_players(players: int, *, budget: int, trial_games: int, seed: int, content=None, threads=None,
                   progress=None) -> tuple[dict, float, int]:
    """One player count's search: (the best set, its win rate on the search games, trials)."""
    import optuna

    import strategies

    n_trials = budget // trial_games
    if n_trials < 1:
        raise TuneStrategyError(f"budget {budget:,} is less than one trial of {trial_games:,} games")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = optuna.samplers.TPESampler(seed=seed + 1000 * players, n_startup_trials=min(10, n_trials))
    study = optuna.create_study(direction="maximize", sampler=sampler)
    for name in PRESETS[: min(len(PRESETS), n_trials)]:
        study.enqueue_trial(_full(strategies.make(name).params()))

    def objective(trial) -> float:
        params = {k: _suggest(trial, k, spec) for k, spec in SPACE.items()}
        return search_rate(players, params, seed, trial_games, content, threads)

    for i in range(n_trials):
        study.optimize(objective, n_trials=1)
        if progress and (i + 1) % 10 == 0:
            progress(f"{count(players, 'player')}: {i + 1}/{n_trials} trials, best {100 * study.best_value:.2f}%")
    best = study.best_trial
    return _full({k: best.params[k] for k in SPACE}), float(best.value), n_trials


def search_rate(players: int, params: dict, seed: int, trial_games: int, content, threads) -> float:
    """The win rate of ``params`` on the search games of ``players`` (a timeout is a loss: a stall never pays)."""
    wins, _timeouts = _wins(players, params, seed, SEARCH_GAME0, trial_games, content, threads)
    return float(wins.mean())


def holdout(players: int, params: dict, *, holdout_games: int, holdout_seed: int, content=None,
            threads=None) -> dict:
    """The held-out figures of one player count's chosen set: fresh games, paired with the presets."""
    import strategies

    wins, timeouts = _wins(players, params, holdout_seed, 0, holdout_games, content, threads)
    if timeouts:
        raise TuneStrategyError(f"{count(players, 'player')}: the tuned set timed out in {timeouts} of {holdout_games:,} "
                                "held-out games (a stall); refused")
    out = {"games": holdout_games, "win_rate": round(float(wins.mean()), 6), "timeouts": 0}
    for name in PRESETS:
        base, _ = _wins(players, strategies.make(name).params(), holdout_seed, 0, holdout_games, content, threads)
        s = paired_stats(base, wins)
        out[f"vs_{name}"] = {k: round(float(s[k]), 6) for k in
                             ("baseline_win_rate", "diff", "paired_low", "paired_high")}
    return out


def choose(searched: dict[int, tuple[dict, float, int]], *, trial_games: int, seed: int, content=None,
           threads=None, progress=None) -> dict[int, dict]:
    """Each player count's set: the best on its own search games of its own best and every other count's
    best (a search can miss what another found). Entries: params, search_win_rate, found_at, trials, and
    ``cross`` (each other count's best on these search games) where there are several counts."""
    chosen = {}
    for n, (params, rate, trials) in searched.items():
        entry = {"params": params, "search_win_rate": round(rate, 6), "found_at": n, "trials": trials}
        cross = {}
        for m, (other, _r, _t) in searched.items():
            if m == n:
                continue
            cross[m] = search_rate(n, other, seed, trial_games, content, threads)
            if cross[m] > rate:  # strictly better: the count's own best wins a tie
                entry.update(params=other, search_win_rate=round(cross[m], 6), found_at=m)
                rate = cross[m]
        if cross:
            entry["cross"] = {f"from_{m}": round(r, 6) for m, r in cross.items()}
        if progress and entry["found_at"] != n:
            progress(f"{count(n, 'player')}: the set found at {count(entry['found_at'], 'player')} wins "
                     f"{100 * rate:.2f}% of the search games, against {100 * searched[n][1]:.2f}% for its own")
        chosen[n] = entry
    return chosen


def tune(players: list[int], *, budget: int, trial_games: int, seed: int, holdout_games: int,
         holdout_seed: int | None = None, threads=None, progress=None) -> dict:
    """The whole tuned file as a dict (default content pack only: the file records its hash)."""
    import sim
    from sim.content import load

    _check_space()
    try:
        players = _check_players(players)
    except ValueError as e:
        raise TuneStrategyError(str(e)) from None
    for name, v in (("budget", budget), ("trial_games", trial_games), ("holdout_games", holdout_games)):
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_SEED:
            raise TuneStrategyError(f"{name} must be a positive integer, got {v!r}")
    for name, v in (("seed", seed), ("holdout_seed", holdout_seed)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_SEED):
            raise TuneStrategyError(f"{name} must be an integer from 0 to 2**63-1, got {v!r}")
    if seed is None:
        raise TuneStrategyError("seed must be an integer from 0 to 2**63-1, got None")
    if seed > MAX_SEARCH_SEED:
        raise TuneStrategyError(search_seed_text("seed", seed))
    if holdout_seed is None:
        holdout_seed = seed + 1  # seed is at most MAX_SEARCH_SEED: seed + 1 is a seed
    if holdout_seed == seed:
        raise TuneStrategyError("holdout_seed must differ from seed: the held-out games must be fresh")
    import optuna

    content = load()
    # optuna's version too: the TPE sampler's proposals (so the file) depend on it, whatever the seed
    meta = {"rules_version": sim.RULES_VERSION, "pack_hash": content.hash, "optuna": optuna.__version__, "seed": seed,
            "budget": budget, "trial_games": trial_games, "holdout_games": holdout_games, "holdout_seed": holdout_seed,
            "players": list(players)}
    searched = {n: search_players(n, budget=budget, trial_games=trial_games, seed=seed, content=content,
                                  threads=threads, progress=progress) for n in players}
    chosen = choose(searched, trial_games=trial_games, seed=seed, content=content, threads=threads,
                    progress=progress)
    out = {"meta": meta, "players": {}}
    for n in players:
        entry = chosen[n]
        entry["holdout"] = holdout(n, entry["params"], holdout_games=holdout_games, holdout_seed=holdout_seed,
                                   content=content, threads=threads)
        out["players"][str(n)] = entry
    return out


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, float):
        if not math.isfinite(v):
            raise TuneStrategyError(f"cannot write {v!r} to TOML")
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return str(int(v))


def search_seed_text(name: str, seed: int) -> str:
    """Why ``seed`` cannot seed the search (``name``: how the caller calls it)."""
    return (f"{name} must be an integer from 0 to {MAX_SEARCH_SEED:,} for the search (each player count's seeds "
            f"optuna's sampler with seed + 1000 x players, which must stay below 2**32), got {seed:,}")


def command_line(meta: dict) -> str:
    """The command that writes the file again from its recorded settings."""
    return (f"smersh-sim tune-strategy --players {','.join(str(n) for n in meta['players'])} "
            f"--budget {meta['budget']} --trial-games {meta['trial_games']} --holdout-games "
            f"{meta['holdout_games']} --seed {meta['seed']} --holdout-seed {meta['holdout_seed']}")


def to_toml(result: dict) -> str:
    """The tuned file's text (stable: the same result gives the same bytes)."""
    meta = result["meta"]
    lines = ["# The heuristic's parameters tuned per player count for win rate. Written by:",
             f"#   {command_line(meta)}",
             "# Stale when rules_version or pack_hash differ from the current ones (tests/test_tuned.py):",
             "# re-run that command then. Held-out figures: fresh games of holdout_seed, paired.",
             "", "[meta]"]
    lines += [f"{k} = {_value(v)}" for k, v in meta.items()]
    for n, entry in result["players"].items():
        lines += ["", f"[players.{n}]"]
        lines += [f"{k} = {_value(entry[k])}" for k in ("search_win_rate", "found_at", "trials")]
        if entry.get("cross"):
            lines += ["", f"[players.{n}.cross]"]
            lines += [f"{k} = {_value(v)}" for k, v in entry["cross"].items()]
        lines += ["", f"[players.{n}.params]"]
        lines += [f"{k} = {_value(v)}" for k, v in entry["params"].items()]
        hold = entry["holdout"]
        lines += ["", f"[players.{n}.holdout]"]
        lines += [f"{k} = {_value(v)}" for k, v in hold.items() if not isinstance(v, dict)]
        for k, v in hold.items():
            if isinstance(v, dict):
                lines += ["", f"[players.{n}.holdout.{k}]"]
                lines += [f"{kk} = {_value(vv)}" for kk, vv in v.items()]
    return "\n".join(lines) + "\n"


def _check_players(players) -> list[int]:
    """Distinct player counts from 1 to 6 (a non-empty list); raises ValueError naming the bad one."""
    if isinstance(players, (str, bytes)) or not hasattr(players, "__iter__"):
        raise ValueError(f"players must be a list of player counts, got {players!r}")
    players = list(players)
    if not players:
        raise ValueError("players is empty: give at least one player count")
    for n in players:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= 6:
            raise ValueError(f"player counts must be integers from 1 to 6, got {n!r}")
        if players.count(n) > 1:
            raise ValueError(f"player count {n} is listed twice")
    return [int(n) for n in players]


def _reproduce_model():
    from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator, model_validator

    def count():
        return Field(ge=1, le=MAX_SEED)

    def a_seed():
        return Field(ge=0, le=MAX_SEED)

    class Meta(BaseModel):
        model_config = ConfigDict(extra="ignore")
        players: list[StrictInt]
        budget: StrictInt = count()
        trial_games: StrictInt = count()
        holdout_games: StrictInt = count()
        seed: StrictInt = a_seed()
        holdout_seed: StrictInt = a_seed()
        optuna: str | None = Field(default=None, validate_default=True)

        @field_validator("optuna")
        @classmethod
        def _same_optuna(cls, v):
            import optuna

            if v is None:
                raise ValueError("missing: the file does not say which optuna searched it, and the search's proposals "
                                 "(TPE) depend on its version, so its file cannot be promised again; run its recorded "
                                 "command without --reproduce to search afresh")
            if v != optuna.__version__:
                raise ValueError(f"searched with optuna {v}, this is optuna {optuna.__version__}: the search's "
                                 f"proposals (TPE) depend on its version, so it would not write the same file; "
                                 f"install optuna=={v} (pyproject.toml pins the version the committed file used)")
            return v

        _players = field_validator("players")(lambda cls, v: _check_players(v))

        @model_validator(mode="after")
        def _fresh(self):
            if self.holdout_seed == self.seed:
                raise ValueError("holdout_seed must differ from seed: the held-out games must be fresh")
            return self

    class TunedFile(BaseModel):
        model_config = ConfigDict(extra="ignore")
        meta: Meta

    return TunedFile


def reproduce_args(path: str | Path) -> dict:
    """The keyword arguments of :func:`tune` recorded in a tuned file's ``[meta]``.

    A missing, unreadable or malformed file, or a missing or bad value, raises
    :class:`TuneStrategyError` naming the file, the key and the reason.
    """
    from sim.tomlfile import load_toml_model

    def error(file, key, reason):
        return TuneStrategyError(f"{file}: {key}: {reason}" if key else f"{file}: {reason}")

    _p, _raw, model = load_toml_model(path, _reproduce_model(), error, "tuned")
    meta = model.meta
    return {k: getattr(meta, k) for k in ("players", "budget", "trial_games", "seed", "holdout_games", "holdout_seed")}
