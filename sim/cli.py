"""The ``smersh-sim`` command line."""

from __future__ import annotations

import argparse
import json
import sys
import time


def _parse_value(text: str):
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def parse_params(items: list[str] | None) -> dict:
    """``["exchange_when=early", "pool_target=5"]`` -> dict with ints/floats/bools parsed."""
    out = {}
    for item in items or []:
        if "=" not in item:
            raise SystemExit(f"--param expects NAME=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = _parse_value(v.strip())
    return out


def _load_content(path):
    from sim.content import ContentError, load

    try:
        return load(path)
    except ContentError as e:
        raise SystemExit(f"content error: {e}") from None


def cmd_odds(args) -> int:
    from sim import odds

    content = _load_content(args.content) if args.content else None
    if args.what == "dice":
        print(odds.cli_dice(args.json, content))
    else:
        print(odds.cli_gamble(args.json, samples=args.samples, seed=args.seed, content=content))
    return 0


def cmd_content(args) -> int:
    c = _load_content(args.content)
    info = {
        "name": c.name,
        "path": str(c.path),
        "hash": c.hash,
        "spaces": int(c.n_spaces),
        "cities": int(c.n_cities),
        "villain_cards": int(len(c.villain_advance)),
        "encounter_cards": int(len(c.encounter_deck)),
        "fate_cards": int(len(c.fate_city)),
        "characters": list(c.character_names),
        "assumed_entries": len(c.assumed),
    }
    if args.json:
        print(json.dumps(info, indent=2))
    else:
        print(f"content pack '{c.name}' at {c.path}")
        print(f"  hash {c.hash}")
        for k in ("spaces", "cities", "villain_cards", "encounter_cards", "fate_cards", "assumed_entries"):
            print(f"  {k.replace('_', ' ')}: {info[k]}")
        print(f"  characters: {', '.join(c.character_names)}")
    return 0


def _settings_and_strategies(args, content):
    import strategies
    from sim.rules.state import Settings

    try:
        settings = Settings.build(content, args.players, args.characters, args.variant)
        params = parse_params(args.param)
        team = [strategies.make(args.strategy, **params) for _ in range(args.players)]
    except ValueError as e:
        raise SystemExit(f"error: {e}") from None
    return settings, team


def cmd_play(args) -> int:
    import sim
    from sim.tally import Tally

    content = _load_content(args.content)
    settings, team = _settings_and_strategies(args, content)
    if args.games < 1:
        raise SystemExit("--games must be at least 1")
    t0 = time.perf_counter()
    try:
        df = sim.simulate(players=args.players, games=args.games, strategy=team[0] if args.engine == "kernel" else team,
                          seed=args.seed, characters=args.characters, variant=args.variant, content=content,
                          engine=args.engine, threads=args.threads)
    except ValueError as e:
        raise SystemExit(f"error: {e}") from None
    elapsed = time.perf_counter() - t0

    full = Tally.of_frame(df).summary()
    keys = ("games", "wins", "win_rate", "ci_low", "ci_high", "outcomes", "mean_turns", "turn_quantiles", "timeouts")
    summary = {k: full[k] for k in keys}
    first_lineup = df["characters"][0]
    summary.update(
        {
            "players": args.players,
            "characters": first_lineup if not settings.random_lineup else "random",
            "strategy": args.strategy,
            "params": team[0].params(),
            "variant": settings.variant_label,
            "seed": args.seed,
            "engine": args.engine,
            "content_hash": content.hash,
            "seconds": round(elapsed, 3),
        }
    )
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(
        f"{summary['games']} games, {args.players} players ({summary['characters']}), "
        f"strategy {args.strategy}, variant {summary['variant']}, seed {args.seed}, engine {args.engine}"
    )
    print(
        f"wins: {summary['wins']}  win rate {100 * summary['win_rate']:.2f}%  "
        f"95% Wilson interval [{100 * summary['ci_low']:.2f}%, {100 * summary['ci_high']:.2f}%]"
    )
    print("outcomes:")
    labels = {
        "win_location": "win by Location Track (Intel matched)",
        "win_henchmen": "win by defeating all henchmen",
        "loss_lobo": "loss: Dr. Lobo reached 9",
        "loss_intel": "loss: Intel Pool short at the end",
        "timeout": "timeout (turn cap: a bug to report)",
    }
    for k, v in summary["outcomes"].items():
        print(f"  {labels[k]:<40} {v:>8}  {100 * v / summary['games']:6.2f}%")
    q = summary["turn_quantiles"]
    print(
        f"turns: mean {summary['mean_turns']:.1f}, 5% {q['q05']:g}, 25% {q['q25']:g}, "
        f"median {q['q50']:g}, 75% {q['q75']:g}, 95% {q['q95']:g}"
    )
    print(f"({elapsed:.1f} s, {summary['games'] / max(elapsed, 1e-9):.0f} games/s)")
    return 0


def cmd_trace(args) -> int:
    from sim.rules import play_game

    content = _load_content(args.content)
    settings, team = _settings_and_strategies(args, content)
    rec, g = play_game(content, settings, team, args.seed, args.game, trace=True)
    print("\n".join(g.trace))
    print(
        f"RESULT: {rec.outcome} after {rec.turns} turns ({rec.rounds} rounds); "
        f"Dr. Lobo {rec.lobo}, Location Track {rec.location_track}"
    )
    return 0


def cmd_run(args) -> int:
    from sim.experiments import SpecError, load_spec
    from sim.study import run_study

    try:
        spec = load_spec(args.spec)
        if args.games is not None:
            spec = spec.with_games(args.games)
    except SpecError as e:
        raise SystemExit(f"spec error: {e}") from None
    from sim.distributed import BatchFailed, SchedulerError
    from sim.manifest import ResultsError
    from sim.study import StudyError

    try:
        report = run_study(spec, args.out, engine=args.engine, progress=None if not args.quiet else False,
                           max_batches=args.max_batches, scheduler=args.scheduler)
    except (ResultsError, StudyError, SchedulerError) as e:
        raise SystemExit(f"error: {e}") from None
    except BatchFailed as e:
        raise SystemExit(f"error: {e}; every batch finished before it is kept: run the same command again "
                         "to resume") from None
    if not report.finished:
        print(f"stopped after {len(report.computed)} new batch(es); run the same command again to resume")
        return 0
    print(f"{spec.name}: {len(report.computed)} batch(es) played, {len(report.skipped)} reused -> {report.out}")
    for f in report.files:
        print(f"  {f}")
    from sim.study import read_summary

    summary = read_summary(report.out)
    print(_summary_table(summary))
    return 0


def _summary_table(summary) -> str:
    dims = [d for d in ("strategy", "variant", "characters", "setup") if summary[d].n_unique() > 1] or ["strategy"]
    lines = [f"{'players':>7}  {' / '.join(dims):<28}{'games':>9}{'win rate':>10}  95% interval"]
    for r in summary.sort(dims + ["players"]).iter_rows(named=True):
        label = " / ".join(str(r[d]) for d in dims)
        lines.append(
            f"{r['players']:>7}  {label:<28}{r['games']:>9}{100 * r['win_rate']:>9.2f}%  "
            f"[{100 * r['ci_low']:.2f}%, {100 * r['ci_high']:.2f}%]"
        )
    return "\n".join(lines)


def cmd_compare(args) -> int:
    from pathlib import Path

    from sim.charts import paired_differences
    from sim.compare import compare_run, parse_baseline

    try:
        table, baseline = compare_run(args.run, parse_baseline(args.baseline))
    except (ValueError, FileNotFoundError) as e:
        raise SystemExit(f"error: {e}") from None
    label = ",".join(f"{k}={v}" for k, v in baseline.items())
    chart = paired_differences(table, Path(args.run) / "paired_differences.png", label)
    if args.json:
        print(json.dumps(table.to_dicts(), indent=2))
        return 0
    print(f"paired differences in win rate against baseline {label} (same games, 95% intervals)")
    print(f"{'cell':<44}{'diff':>8}  {'paired interval':<20}{'unpaired interval':<20}{'width':>6}")
    for r in table.iter_rows(named=True):
        paired = f"[{100 * r['paired_low']:+.2f}, {100 * r['paired_high']:+.2f}]"
        unpaired = f"[{100 * r['unpaired_low']:+.2f}, {100 * r['unpaired_high']:+.2f}]"
        print(f"{r['cell']:<44}{100 * r['diff']:>+7.2f}  {paired:<20}{unpaired:<20}{r['width_ratio']:>6.2f}")
    print("width = paired / unpaired standard error (below 1: pairing narrowed the interval)")
    print(f"chart: {chart}")
    return 0


def cmd_check(args) -> int:
    from sim.bands import BandsError, as_json, failure_lines, report_table, run_check, update_bands

    try:
        results = run_check(args.bands, content=args.content, update=args.update)
        if args.update:
            diff = update_bands(args.bands, results, args.margin)
            print(diff or "bands and baselines unchanged")
            return 0
    except BandsError as e:
        raise SystemExit(f"bands error: {e}") from None
    failed = [r for r in results if r.failed]
    if args.json:
        print(json.dumps({"passed": not failed, "cells": as_json(results)}, indent=2))
    else:
        print(report_table(results))
        print()
        for line in failure_lines(results):
            print(line)
        if not failed:
            print(f"all {len(results)} cells passed: no drift beyond the tolerance, every metric inside its band")
    return 1 if failed else 0


def cmd_bench(args) -> int:
    from sim.bench import format_bench, run_bench

    r = run_bench(games=args.games, reference_games=args.reference_games, players=args.players,
                  strategy=args.strategy, seed=args.seed, cold=not args.skip_cold)
    print(json.dumps(r, indent=2) if args.json else format_bench(r))
    return 0 if r["sample_identical"] else 1


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="smersh-sim", description="Monte Carlo balance simulator for Agents of SMERSH")
    sub = p.add_subparsers(dest="command", required=True)

    o = sub.add_parser("odds", help="exact odds tables of dice tests and gambles")
    o.add_argument("what", choices=["dice", "gamble"])
    o.add_argument("--json", action="store_true", help="machine-readable output")
    o.add_argument("--samples", type=int, default=1_000_000, help="samples for the sampled gamble policies")
    o.add_argument("--seed", type=int, default=1)
    o.add_argument("--content", default=None, help="content pack folder whose dice / Fate deck to use (default: printed)")
    o.set_defaults(func=cmd_odds)

    c = sub.add_parser("content", help="load and validate a content pack; print its hash")
    c.add_argument("--content", default=None, help="content pack folder (default: the built-in pack)")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_content)

    def game_args(q, games: bool):
        q.add_argument("--players", type=int, default=4)
        q.add_argument("--strategy", default="heuristic")
        q.add_argument("--param", action="append", metavar="NAME=VALUE", help="strategy parameter (repeatable)")
        q.add_argument("--seed", type=int, default=1)
        q.add_argument("--characters", default=None, help="comma-separated character names, one per seat")
        q.add_argument("--variant", default=None, help="easier, dirty-lobo, dirty-location, dirty (comma-separated)")
        q.add_argument("--content", default=None, help="content pack folder")
        if games:
            q.add_argument("--games", type=int, default=1000)
            q.add_argument("--engine", choices=["kernel", "reference"], default="kernel",
                           help="kernel (numba, default) or reference (the readable rulebook); same games")
            q.add_argument("--threads", type=int, default=None, help="numba threads (default: all)")
            q.add_argument("--json", action="store_true")
        else:
            q.add_argument("--game", type=int, default=0, help="game index within the seed")

    pl = sub.add_parser("play", help="play games and print a summary")
    game_args(pl, True)
    pl.set_defaults(func=cmd_play)

    ru = sub.add_parser("run", help="run an experiment spec into results/<name>/ (resumable)")
    ru.add_argument("spec", help="experiments/<name>.toml")
    ru.add_argument("--out", default=None, help="output folder (default results/<name>)")
    ru.add_argument("--games", type=int, default=None, help="games per cell, overriding the spec")
    ru.add_argument("--engine", choices=["kernel", "reference"], default="kernel")
    ru.add_argument("--max-batches", type=int, default=None, help="stop after N new batches (resume later)")
    ru.add_argument("--quiet", action="store_true", help="no progress bar")
    ru.add_argument("--scheduler", default=None, metavar="local:N|tcp://HOST:PORT",
                    help="play the batches on a Dask cluster: N local worker processes, or an existing scheduler "
                         "(needs pip install 'smersh-sim[distributed]'); the results are the same")
    ru.set_defaults(func=cmd_run)

    co = sub.add_parser("compare", help="paired win-rate differences of a run's cells against a baseline")
    co.add_argument("run", help="results/<name> folder of a finished run")
    co.add_argument("--baseline", default=None, help="e.g. strategy=heuristic (default: the spec's [compare])")
    co.add_argument("--json", action="store_true")
    co.set_defaults(func=cmd_compare)

    ch = sub.add_parser("check", help="check win rates against agreed bands (CI gate)")
    ch.add_argument("bands", help="experiments/bands.toml")
    ch.add_argument("--content", default=None, help="content pack folder to check (default: the file's or built-in)")
    ch.add_argument("--update", action="store_true",
                    help="record today's results as the baselines and re-centre the bands on them; prints the diff")
    ch.add_argument("--margin", type=float, default=0.03, help="half-width of updated bands (win rate points / turn fraction)")
    ch.add_argument("--json", action="store_true")
    ch.set_defaults(func=cmd_check)

    be = sub.add_parser("bench", help="games per second of the kernel (1 and all threads) and the reference, compile times")
    be.add_argument("--games", type=int, default=200_000)
    be.add_argument("--reference-games", type=int, default=300)
    be.add_argument("--players", type=int, default=4)
    be.add_argument("--strategy", default="heuristic")
    be.add_argument("--seed", type=int, default=1)
    be.add_argument("--skip-cold", action="store_true", help="skip the cold-compile measurement (minutes)")
    be.add_argument("--json", action="store_true")
    be.set_defaults(func=cmd_bench)

    tr = sub.add_parser("trace", help="print one game turn by turn")
    game_args(tr, False)
    tr.set_defaults(func=cmd_trace)
    return p


def _announce_compile(args) -> None:
    """Say why the first kernel command on a fresh checkout takes a minute before any output."""
    if args.func not in (cmd_play, cmd_run, cmd_check, cmd_compare) or getattr(args, "engine", "kernel") != "kernel":
        return
    from sim._cache import is_compiled

    if not is_compiled():
        print("compiling the simulation kernel (once per checkout; about a minute on 2 cores)...",
              file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _announce_compile(args)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
