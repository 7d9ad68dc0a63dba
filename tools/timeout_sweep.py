"""Play N games for every player count 1-6 with every built-in strategy; report outcomes.

A timeout (the safety turn cap) is a bug. Usage:
    python tools/timeout_sweep.py [--games 10000] [--seed 1] [--jobs 2] [--out results/timeout_sweep.json]
Exits non-zero if any game timed out.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor


def run_cell(args):
    players, strategy, seed, start, stop = args
    import strategies
    from sim.content import load
    from sim.rules import Settings, play_game

    content = load()
    settings = Settings.build(content, players)
    team = [strategies.make(strategy) for _ in range(players)]
    outcomes: dict[str, int] = {}
    turns = 0
    max_turns = 0
    for game in range(start, stop):
        rec, _ = play_game(content, settings, team, seed, game)
        outcomes[rec.outcome] = outcomes.get(rec.outcome, 0) + 1
        turns += rec.turns
        max_turns = max(max_turns, rec.turns)
    return players, strategy, outcomes, turns, max_turns


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--games", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--chunk", type=int, default=1000)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    import strategies

    tasks = [
        (players, strategy, a.seed, lo, min(lo + a.chunk, a.games))
        for strategy in strategies.BUILT_IN
        for players in range(1, 7)
        for lo in range(0, a.games, a.chunk)
    ]
    t0 = time.time()
    cells: dict[tuple[int, str], dict] = {}
    with ProcessPoolExecutor(a.jobs) as pool:
        for players, strategy, outcomes, turns, max_turns in pool.map(run_cell, tasks):
            cell = cells.setdefault((players, strategy), {"outcomes": {}, "turns": 0, "max_turns": 0})
            for k, v in outcomes.items():
                cell["outcomes"][k] = cell["outcomes"].get(k, 0) + v
            cell["turns"] += turns
            cell["max_turns"] = max(cell["max_turns"], max_turns)
    names = ["win_location", "win_henchmen", "loss_lobo", "loss_intel", "timeout"]
    print(f"{a.games} games per cell, seed {a.seed}, {time.time() - t0:.0f} s")
    print(f"{'strategy':<10}{'players':>8}" + "".join(f"{n:>14}" for n in names) + f"{'mean turns':>12}{'max':>6}")
    rows = []
    timeouts = 0
    for strategy in strategies.BUILT_IN:
        for players in range(1, 7):
            cell = cells[(players, strategy)]
            o = cell["outcomes"]
            timeouts += o.get("timeout", 0)
            print(
                f"{strategy:<10}{players:>8}"
                + "".join(f"{o.get(n, 0):>14}" for n in names)
                + f"{cell['turns'] / a.games:>12.1f}{cell['max_turns']:>6}"
            )
            rows.append({"strategy": strategy, "players": players, "games": a.games, **{n: o.get(n, 0) for n in names},
                         "mean_turns": cell["turns"] / a.games, "max_turns": cell["max_turns"]})
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"seed": a.seed, "games_per_cell": a.games, "cells": rows}, f, indent=1)
    print(f"timeouts: {timeouts}")
    return 1 if timeouts else 0


if __name__ == "__main__":
    sys.exit(main())
