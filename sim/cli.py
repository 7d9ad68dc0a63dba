"""The ``smersh-sim`` command line."""

from __future__ import annotations

import argparse
import errno
import json
import math
import os
import sys
import time
from pathlib import Path

from sim.text import count

MAX_SEED = 2**63 - 1
# one `play` keeps a summary, never a per-game table: games are played in batches of this
# size, small enough that Ctrl-C stops within a second and memory stays bounded
PLAY_BATCH = 8192
LONG_PLAY = 10_000_000  # games from which play says on stderr that it has begun (over a minute on 2 cores)
MAX_BENCH_GAMES = 5_000_000  # bench keeps the per-game table of one run in memory
MAX_SAMPLES = 1_000_000_000
MAX_THREADS = 256


class OptionError(SystemExit):
    """A value given on the command line that is refused before any work starts (an unknown name, a malformed
    or out-of-range value, options that do not go together): exit status 2, as argparse's own refusals.

    ``str()`` is the one line :func:`main` prints (``error: ...``) before it lets the exit go on; files that
    cannot be read or are refused, and faults while the work runs, exit 1 (a ``SystemExit`` with the text)."""

    def __init__(self, message: str):
        super().__init__(f"error: {message}")
        self.code = 2


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error: the command, the option and the reason."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _int_range(lo: int, hi: int, what: str = "an integer"):
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what} from {lo:,} to {hi:,}, got {text!r}") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"must be from {lo:,} to {hi:,}, got {v:,}")
        return v

    return parse


def _margin(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}") from None
    if not math.isfinite(v) or not 0.0 <= v <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a finite number from 0 to 1, got {text!r}")
    return v


def _seconds(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, got {text!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds above 0, got {text!r}")
    return v


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
        if "=" not in item or not item.split("=", 1)[0].strip():
            raise OptionError(f"--param expects NAME=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        if k.strip() in out:
            raise OptionError(f"--param {k.strip()} given twice")
        out[k.strip()] = _parse_value(v.strip())
    return out


def _check_content_folder(path) -> None:
    """Refuse a ``--content`` that is not a folder, naming the option (a missing folder or a file: exit 1)."""
    if path is None:
        return
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise SystemExit(f"error: --content {str(path)!r} is a file, not a content pack folder")
    if not p.exists():
        raise SystemExit(f"error: --content {str(path)!r}: the content pack folder does not exist")


def _load_content(path, sets: list[str] | None = None, quiet: bool = False):
    """The pack at ``path`` (default: built-in) with the ``--set`` overrides applied.

    A pack that cannot be read or is refused ends with exit status 1; a ``--set`` the pack itself
    accepts without it but refuses with it is a bad option value (exit status 2). ``quiet``: no warning
    of values the printed game does not have (a check before a command whose own loading warns).
    """
    import warnings

    if quiet:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _load_content(path, sets)

    from sim.content import ContentError, load
    from sim.content.overrides import load_with_overrides

    _check_content_folder(path)
    overrides = _sets(sets)
    try:
        return load_with_overrides(path, overrides, "--set") if overrides else load(path)
    except ContentError as e:
        if not overrides:
            raise SystemExit(f"content error: {e}") from None
        try:  # the pack alone: its own fault, or the overrides'?
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                load(path)
        except ContentError as own:
            raise SystemExit(f"content error: {own}") from None
        text = str(e)
        raise OptionError(text if text.startswith("--set") else f"--set: {text}") from None


def _sets(items: list[str] | None) -> dict:
    from sim.content.overrides import OverrideError, parse_set

    try:
        return parse_set(items)
    except OverrideError as e:
        raise OptionError(str(e)) from None


def cmd_odds(args) -> int:
    from sim import odds

    content = _load_content(args.content) if args.content is not None else None
    if not args.json:
        _print_pack(args, content)  # the numbers are that pack's dice or Fate deck (the JSON names its hash)
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
    from sim.rules.state import Settings

    # an empty value would silently mean the standard game or the default line-up (bands and specs refuse "" too)
    if args.variant is not None and not args.variant.replace(",", "").strip():
        raise OptionError(f"--variant: empty ({args.variant!r}); leave the option out for the standard game or "
                          f"name the variants: {', '.join(Settings.VARIANTS)}")
    if args.characters is not None and not args.characters.replace(",", "").strip():
        raise OptionError(f"--characters: empty ({args.characters!r}); leave the option out for the default "
                          "line-up, or give one character name per seat (comma-separated) or 'random'")
    try:
        Settings.label_of(args.variant)
    except ValueError as e:
        raise OptionError(f"--variant: {str(e).removeprefix('variant: ')}") from None
    if args.skills == "pick" and Settings._variant_flags(args.variant)["fixed_skills"]:
        # played as asked it would be silently ignored (check refuses --skills pick on such cells alike)
        raise OptionError("--skills pick contradicts --variant fixed-skills: the variant fixes each character's "
                          "skills, so no player picks; leave out one of the two")
    args.variant = Settings.with_skills(args.variant, args.skills)  # --skills fixed = variant word fixed-skills
    try:
        settings = Settings.build(content, args.players, args.characters, args.variant)
    except ValueError as e:
        if args.characters is None:  # the pack's own default line-up: the pack's fault
            raise SystemExit(f"error: {e}") from None
        raise OptionError(f"--characters: {str(e).removeprefix('characters: ')}") from None
    _check_sets_read(args, settings)
    names = [x.strip() for x in args.strategy.split(",")]
    if len(names) not in (1, args.players):
        raise OptionError(f"--strategy: {len(names)} strategies for {args.players} seats; give one name "
                          "for every seat or one per seat, comma-separated")
    made = _strategies(names, parse_params(args.param), [args.players], args.strategy)
    return settings, [made[args.players][name] for name in (names * args.players if len(names) == 1 else names)]


def _strategies(names: list[str], params: dict, players: list[int], flag: str) -> dict:
    """``{players: {name: strategy}}``: each named strategy built with ``params`` at each player count, before
    any game. An unknown name or a refused --param is a bad option (exit 2); a tuned file without a set for a
    count, or with a bad value, is the file's fault (exit 1)."""
    import strategies
    from strategies.tuned import TunedError

    for name in names:
        if name not in strategies.names():
            raise OptionError(f"--strategy: unknown strategy {name!r}; registered: {', '.join(strategies.names())}")
    out: dict = {}
    for p in players:
        try:
            out[p] = {name: strategies.build(name, params, players=p) for name in dict.fromkeys(names)}
        except TunedError as e:  # the tuned file's fault (it names its key), not --param's
            raise SystemExit(f"error: --strategy {flag}: {e}") from None
        except ValueError as e:
            if not params:
                raise SystemExit(f"error: --strategy {flag}: {e}") from None
            raise OptionError(f"--param: {e}") from None
    return out


def _pack_line(path, sets: list[str] | None, content=None, base: str = "built-in content pack",
               hashed: bool = True) -> str | None:
    """``content pack 'my-pack' at my-pack with --set A=1 --set B=2 (hash 0123456789ab)``: the pack played when it
    is not the built-in one (``path``, a --content folder) or --set changed it; None when neither.

    ``content``: the pack played (its name, and its hash unless ``hashed`` is false: ``check``, whose cells add
    overrides of their own); ``base``: what the pack is called when no folder is given (``built-in content pack``;
    ``run`` and ``check`` name the packs of their cells)."""
    if path is None and not sets:
        return None
    pack = base if path is None else f"content pack {content.name!r} at {path}"
    given = "".join(f" --set {item.strip()}" for item in sets or [])
    return f"{pack}{' with' + given if given else ''}" + ("" if content is None or not hashed else f" (hash {content.hash[:12]})")


def _print_pack(args, content) -> None:
    """The pack line of ``tune``, ``sensitivity``, ``luck`` and ``odds`` (which take --content, not --set): printed
    when --content names a pack other than the built-in one."""
    line = _pack_line(args.content, None, content)
    if line is not None:
        print(line)


def _played_with(args, content, settings) -> list[str]:
    """The header of ``play`` and ``trace``: every setting the games are played with, as ``--json`` records them
    (the line-up, the strategy with its --param values, the variant with --skills folded in, the seed, the engine),
    and a second line naming the content pack when it is not the built-in one, or when --set changed it."""
    lineup = "random line-up" if settings.random_lineup else ", ".join(
        content.character_names[c] for c in settings.characters)
    params = parse_params(args.param)
    strategy = args.strategy + (f" with --param {' '.join(f'{k}={v}' for k, v in params.items())}" if params else "")
    lines = [f"{count(args.players, 'player')} ({lineup}), strategy {strategy}, variant {settings.variant_label}, "
             f"seed {args.seed}"]
    pack = _pack_line(args.content, args.set, content)
    return lines if pack is None else [*lines, pack]


def _check_sets_read(args, settings) -> None:
    """Refuse a --set the game does not read (its variant or line-up replaces the value, ...): the games
    would be the unchanged pack's."""
    if not args.set:
        return
    from sim.content.loader import load_raw
    from sim.content.overrides import load_with_overrides
    from sim.rules.reads import first_unread, lineup_label

    sets = _sets(args.set)
    lineup = lineup_label(args.characters)
    where = f"this game ({count(args.players, 'player')}, variant {settings.variant_label!r}" + (
        ")" if lineup == "default" else f", characters {lineup!r})")
    hit = first_unread(lambda over: load_with_overrides(args.content, over, None), sets, [(where, settings, lineup)],
                       raw=load_raw(args.content))
    if hit is not None:
        then = "" if hit.kind == "meta" else "; the games would be those of the pack without it"
        raise OptionError(f"--set {hit.path}={json.dumps(sets[hit.path])}: {hit.text}{then}")


def cmd_play(args) -> int:
    from sim._cache import is_compiled
    from sim.run import simulate_tally

    content = _load_content(args.content, args.set)
    settings, team = _settings_and_strategies(args, content)
    strategy = team[0] if len(set(map(id, team))) == 1 else team
    play = dict(players=args.players, strategy=strategy, seed=args.seed, characters=args.characters,
                variant=args.variant, content=content, engine=args.engine)
    compiling = args.engine == "kernel" and not is_compiled()
    t0 = time.perf_counter()
    try:
        # one game first, untimed as play: the kernel loaded (or compiled, on a fresh checkout) and the pack
        # packed, so games/s is the rate of the games alone
        simulate_tally(**play, games=1, threads=1, batch=1)
        t1 = time.perf_counter()
        if args.games >= LONG_PLAY:  # minutes of play: say it has begun, and how to stop it
            print(f"playing {args.games:,} games (Ctrl-C stops)...", file=sys.stderr, flush=True)
        # a tally batch by batch: memory does not grow with --games, and Ctrl-C lands between batches
        full = simulate_tally(**play, games=args.games, threads=args.threads, batch=PLAY_BATCH).summary()
    except ValueError as e:
        raise SystemExit(f"error: {e}") from None
    elapsed, setup = time.perf_counter() - t1, t1 - t0
    keys = ("games", "wins", "win_rate", "ci_low", "ci_high", "outcomes", "mean_turns", "turn_quantiles", "timeouts")
    summary = {k: full[k] for k in keys}
    lineup = "random" if settings.random_lineup else ",".join(content.character_names[c] for c in settings.characters)
    summary.update(
        {
            "players": args.players,
            "characters": lineup,
            "strategy": args.strategy,
            "params": team[0].params() if len(set(map(id, team))) == 1 else [s.params() for s in team],
            "variant": settings.variant_label,
            "seed": args.seed,
            "engine": args.engine,
            "content_hash": content.hash,
            "overrides": _sets(args.set),
            "seconds": round(elapsed, 3),  # the games alone
            "setup_seconds": round(setup, 3),  # loading (or compiling) the kernel, and the first game
        }
    )
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    header = _played_with(args, content, settings)
    print(f"{count(summary['games'], 'game')}, {header[0]}, engine {args.engine}")
    for line in header[1:]:
        print(line)
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
    timing = f"played in {elapsed:.2f} s, {summary['games'] / max(elapsed, 1e-9):,.0f} games/s"
    if args.engine == "kernel":  # the one game before the timing: the kernel compiled or loaded, the pack packed
        timing += f"; {'compiling' if compiling else 'loading'} the kernel took {setup:.2f} s before"
    print(f"({timing})")
    return 0


def cmd_trace(args) -> int:
    from sim.rules import play_game
    from sim.run import warn_searched_elsewhere

    content = _load_content(args.content, args.set)
    settings, team = _settings_and_strategies(args, content)
    warn_searched_elsewhere(team, content, settings)
    try:
        rec, g = play_game(content, settings, team, args.seed, args.game, trace=True)
    except ValueError as e:
        raise SystemExit(f"error: {e}") from None
    header = _played_with(args, content, settings)
    print(f"trace of game {args.game}: {header[0]}, engine reference")
    for line in header[1:]:
        print(line)
    print("\n".join(g.trace))
    print(
        f"RESULT: {rec.outcome} after {rec.turns} turns ({rec.rounds} rounds); "
        f"Dr. Lobo {rec.lobo}, Location Track {rec.location_track}"
    )
    return 0


def cmd_run(args) -> int:
    from sim.experiments import OptionError as SpecOptionError
    from sim.experiments import SpecError, load_spec
    from sim.study import run_study

    try:  # --skills first: the spec is checked as its cells will play
        spec = load_spec(args.spec, skills=args.skills)
        if args.games is not None:
            spec = spec.with_games(args.games)
    except SpecOptionError as e:
        raise OptionError(str(e)) from None
    except SpecError as e:
        raise SystemExit(f"spec error: {e}") from None
    # the spec alone is valid: a refusal now is the options' (the spec's cells with them changed)
    overrides = _sets(args.set)
    try:
        spec = spec.with_overrides(overrides)
    except SpecError as e:  # (an OptionError of sim.experiments names --set itself)
        raise OptionError(str(e) if str(e).startswith("--set") else f"--set: {e}") from None
    from sim.rules.state import Settings

    # grid variants whose word fixed-skills fixes the skills whatever --skills pick says
    fixed = [v for v in spec.model.grid.variants if Settings._variant_flags(v)["fixed_skills"]]
    if args.skills == "pick" and fixed and len(fixed) == len(spec.model.grid.variants):
        raise OptionError(f"--skills pick contradicts grid.variants of {spec.path.name}: "
                          f"{', '.join(repr(v) for v in fixed)} {'fixes' if len(fixed) == 1 else 'fix'} each character's skills, so "
                          "no player picks in "
                          "any cell; leave out --skills pick")
    from sim.distributed import BatchFailed, SchedulerError, WorkerCodeMismatch, WorkersLost
    from sim.manifest import ResultsError
    from sim.study import StudyError

    if args.out is not None:
        _check_out_folder(args.out)
    try:
        report = run_study(spec, args.out, engine=args.engine, progress=None if not args.quiet else False,
                           max_batches=args.max_batches, scheduler=args.scheduler,
                           ready_timeout=args.ready_timeout)
    except SpecError as e:
        raise SystemExit(f"spec error: {e}") from None
    except (BatchFailed, WorkersLost, WorkerCodeMismatch) as e:  # stopped in mid-run: what was played is kept
        raise SystemExit(f"error: {e}; every batch finished before it is kept: run the same command again "
                         "to resume") from None
    except (ResultsError, StudyError, SchedulerError) as e:
        raise SystemExit(f"error: {e}") from None
    except OSError as e:
        if not e.filename:  # e.g. a full disk inside a Parquet or zip writer: name the output folder
            e.filename = args.out or f"results/{spec.name}"
        raise
    if not report.finished:
        print(f"stopped after {len(report.computed)} new batch(es); run the same command again to resume")
        return 0
    print(f"{spec.name}: {len(report.computed)} batch(es) played, {len(report.skipped)} reused -> {report.out}")
    engine = args.engine or spec.model.experiment.engine
    own = spec.content_path()  # the spec's [experiment] content: a pack other than the built-in one
    base = "each cell's content pack" if own is None else f"the spec's content pack at {own}"
    given = [_pack_line(None, args.set, base=base) or (None if own is None else base),
             None if args.skills is None else f"--skills {args.skills} in every cell" + (
                 f" but those of variant {', '.join(repr(v) for v in fixed)} (it fixes them)" if args.skills == "pick" and fixed
                 else ""),
             None if args.engine is None else f"--engine {args.engine}"]
    if any(given):  # what the command line changed from the spec, and a pack other than the built-in one
        print(f"played with: {'; '.join(x for x in given if x)}")
    if report.checked:
        print(f"cross-check: {len(report.checked)} of them had been saved by another engine; replayed on the {engine} "
              "engine, each gave the same results game for game")
    if set(report.batch_engines) - {engine}:
        print("batches by the engines that played them (the first saved the files, any later one replayed and "
              "matched them): " + "; ".join(f"{label} {n}" for label, n in sorted(report.batch_engines.items())))
    for f in report.files:
        print(f"  {f}")
    from sim.study import read_summary

    summary = read_summary(report.out)
    print(_summary_table(summary))
    return 0


def _check_out_folder(out: str) -> None:
    """Refuse an --out that is a file or cannot be written, before any game is played."""
    p = Path(out)
    if p.exists() and not p.is_dir():
        raise SystemExit(f"error: --out {out!r} is a file, not a folder")
    parent = p if p.exists() else next((a for a in p.parents if a.exists()), Path("."))
    if not parent.is_dir():
        raise SystemExit(f"error: --out {out!r}: {str(parent)!r} is a file, not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise SystemExit(f"error: --out {out!r}: folder {str(parent)!r} is not writable")
    _probe(out, parent, folder=True)


def _probe(out: str, parent: Path, folder: bool, flag: str = "--out") -> None:
    """Create (and remove) a folder or file in ``parent``: a folder the permission bits call writable may
    still refuse it (a read-only or virtual file system such as /proc, or running as root)."""
    import tempfile

    try:
        if folder:
            os.rmdir(tempfile.mkdtemp(prefix=".smersh-sim-probe-", dir=parent))
        else:
            fd, name = tempfile.mkstemp(prefix=".smersh-sim-probe-", dir=parent)
            os.close(fd)
            os.unlink(name)
    except OSError as e:
        what = "a folder" if folder else "a file"
        raise SystemExit(f"error: {flag} {out!r}: cannot create {what} in {str(parent)!r} "
                         f"({e.strerror or e})") from None


def _check_out_file(out: str, flag: str = "--out") -> None:
    """Refuse an output file that cannot be written (a folder, a missing or unwritable folder), before any game is played."""
    p = Path(out)
    if p.is_dir():
        raise SystemExit(f"error: {flag} {out!r} is a folder; give a file name")
    parent = p.parent
    if not parent.exists():
        raise SystemExit(f"error: {flag} {out!r}: folder {str(parent)!r} does not exist")
    if not parent.is_dir():
        raise SystemExit(f"error: {flag} {out!r}: {str(parent)!r} is a file, not a folder")
    if p.exists() and not os.access(p, os.W_OK):
        raise SystemExit(f"error: {flag} {out!r}: the file is not writable")
    if not p.exists() and not os.access(parent, os.W_OK | os.X_OK):
        raise SystemExit(f"error: {flag} {out!r}: folder {str(parent)!r} is not writable")
    if not p.exists():
        _probe(out, parent, folder=False, flag=flag)


def _summary_table(summary) -> str:
    dims = [d for d in ("strategy", "variant", "characters", "setup") if summary[d].n_unique() > 1] or ["strategy"]
    rows = list(summary.sort(dims + ["players"]).iter_rows(named=True))
    labels = [" / ".join(str(r[d]) for d in dims) for r in rows]
    head = " / ".join(dims)
    width = max([len(head), *map(len, labels)]) + 2  # the widest label sets the column, as long as it is
    games = max([len("games"), *(len(str(r["games"])) for r in rows)]) + 2
    lines = [f"{'players':>7}  {head:<{width}}{'games':>{games}}{'win rate':>10}  95% interval"]
    for r, label in zip(rows, labels):
        lines.append(
            f"{r['players']:>7}  {label:<{width}}{r['games']:>{games}}{100 * r['win_rate']:>9.2f}%  "
            f"[{100 * r['ci_low']:.2f}%, {100 * r['ci_high']:.2f}%]"
        )
    return "\n".join(lines)


def cmd_compare(args) -> int:
    from pathlib import Path

    from sim.charts import compare_chart, paired_differences
    from sim.compare import (
        GAME_INDEX,
        BaselineError,
        compare_run,
        is_spec_baseline,
        pairing_note,
        parse_baseline,
    )

    try:
        wanted = parse_baseline(args.baseline)
    except ValueError as e:
        raise OptionError(str(e)) from None
    try:
        table, baseline = compare_run(args.run, wanted)
    except BaselineError as e:  # --baseline's value fits no cell: the option's fault (exit 2), else the spec's
        if wanted:
            raise OptionError(f"--baseline {args.baseline}: {e}") from None
        raise SystemExit(f"error: {e}") from None
    except (ValueError, FileNotFoundError) as e:
        raise SystemExit(f"error: {e}") from None
    from sim.manifest import METADATA
    from sim.study import read_summary

    label = ",".join(f"{k}={v}" for k, v in baseline.items())
    run = Path(args.run)  # compare_run checked it: a complete run, by these rules (a folder, or its summary)
    if run.name == "summary.parquet" and not run.is_dir():
        run = run.parent
    if args.json:  # the numbers only: no chart written
        print(json.dumps(table.to_dicts(), indent=2))
        return 0
    own = label if wanted and not is_spec_baseline(run, baseline) else None  # the chart's name: see compare_chart
    chart = paired_differences(table, run / compare_chart(own), label, json.loads((run / METADATA).read_text()),
                               read_summary(run))
    rows = table.height
    pairings = set(table["pairing"])
    print(f"{rows} paired difference{'s' if rows > 1 else ''} in win rate against baseline {label} "
          f"({pairing_note(pairings)})")
    if rows > 1:
        print(f"paired 95%: each row's interval on its own; of {rows} such intervals about {0.05 * rows:.1f} "
              "exclude the true difference by chance alone")
        print(f"family-wise: Bonferroni-widened ({100 - 5 / rows:.4g}% each), all {rows} hold together with at least "
              "95% confidence: call a cell changed only where its family-wise interval excludes 0")
    width = max(44, *(len(c) + 2 for c in table["cell"]))
    print(f"{'cell':<{width}}{'baseline':>9}{'cell':>8}{'diff':>8}  {'paired 95%':<18}{'family-wise':<18}"
          f"{'unpaired 95%':<18}{'width':>6}")
    pointless = 0
    for r in table.iter_rows(named=True):
        paired, family, unpaired = (f"[{100 * r[k + '_low']:+.2f}, {100 * r[k + '_high']:+.2f}]"
                                    for k in ("paired", "familywise", "unpaired"))
        if r["width_ratio"] is None:  # both rates 0 or 1: the unpaired interval is a point
            unpaired, ratio = "n/a", "-"
            pointless += 1
        else:
            ratio = f"{r['width_ratio']:.2f}"
        mark = " ~" if len(pairings) > 1 and r["pairing"] == GAME_INDEX else ""
        print(f"{r['cell']:<{width}}{100 * r['baseline_win_rate']:>8.2f}%{100 * r['win_rate']:>7.2f}%"
              f"{100 * r['diff']:>+8.2f}  {paired:<18}{family:<18}{unpaired:<18}{ratio:>6}{mark}")
    print("baseline, cell: win rates (%); diff and intervals in points; width = paired / unpaired standard error "
          "(below 1: pairing narrowed the interval)")
    if pointless:
        print(f"unpaired n/a, width -: in {pointless} row{'s' if pointless > 1 else ''} each cell won none or all of "
              "its games, so the unpaired normal interval has no width to compare (the paired one still has)")
    excludes = {k: sum(r[k + "_low"] > 0 or r[k + "_high"] < 0 for r in table.iter_rows(named=True))
                for k in ("paired", "familywise")}
    print(f"intervals excluding 0: {excludes['paired']} of {rows} paired 95%, {excludes['familywise']} of {rows} "
          "family-wise")
    print(f"chart: {chart}")
    return 0


def cmd_check(args) -> int:
    from sim.bands import (
        BandsError,
        as_json,
        failure_lines,
        notice_lines,
        report_table,
        run_check,
        update_bands,
    )
    from sim.content.overrides import SetError

    content = None if args.content is None else _load_content(args.content)
    sets = _sets(args.set)
    if sets and args.update:
        raise OptionError("--set with --update would record baselines of a changed pack; "
                          "change the pack (or the cells' overrides) instead")
    if args.skills is not None and args.update:
        raise OptionError("--skills with --update would record baselines of other games; "
                          "set the cells' skills instead")
    if args.margin is not None and not args.update:
        raise OptionError("--margin sets the width of the bands --update writes, and changes nothing without it; "
                          "give it with --update")
    try:
        results = run_check(args.bands, content=args.content, update=args.update, overrides=sets,
                            skills=args.skills)
        if args.update:
            update = update_bands(args.bands, results, 0.03 if args.margin is None else args.margin)
            print(json.dumps(update.as_json(), indent=2) if args.json else update.text())
            return 0
    except BandsError as e:
        raise SystemExit(f"bands error: {e}") from None
    except SetError as e:  # --set, not the bands file, is at fault (refused before any game)
        raise OptionError(str(e)) from None
    failed = [r for r in results if r.failed]
    notices = notice_lines(results)
    if args.json:
        print(json.dumps({"passed": not failed, "played_with": _check_played_with(args, content, sets),
                          "notices": notices, "cells": as_json(results)}, indent=2))
    else:
        given = [_check_pack_line(args, content),
                 None if args.skills is None else f"--skills {args.skills}"]
        if any(given):  # what the command line changed from the bands file
            print(f"played with: {'; '.join(x for x in given if x)}")
        print(report_table(results))
        print()
        for line in notices + failure_lines(results):
            print(line)
        if not failed:
            who = "the 1 cell" if len(results) == 1 else f"all {len(results)} cells"
            print(f"{who} passed: no drift beyond the tolerance, every metric inside its band"
                  + (f" ({len(notices)} NOTICE{'S' if len(notices) > 1 else ''} above)" if notices else ""))
    return 1 if failed else 0


def _check_played_with(args, content, sets: dict) -> dict:
    """What ``check --json`` says the command line changed from the bands file (the text's ``played with:``
    line): ``content``, the ``--content`` pack (folder as given, name, hash; None: the file's own or the built-in
    one); ``set``, the ``--set`` values (applied under each cell's own overrides); ``skills``, ``--skills``."""
    pack = None if content is None else {"folder": str(args.content), "name": content.name, "hash": content.hash}
    return {"content": pack, "set": sets, "skills": args.skills}


def _check_pack_line(args, content) -> str | None:
    """``check``'s pack line: the --content pack, or the bands file's own (or the built-in one) changed by --set,
    under each cell's own overrides."""
    if args.content is None and not args.set:
        return None
    base = "built-in content pack"
    if args.content is None:
        from sim.bands import load_bands

        model, path = load_bands(args.bands)
        if model.check.content is not None:
            base = f"the bands file's content pack at {path.parent / model.check.content}"
    return _pack_line(args.content, args.set, content, base=base, hashed=False) + (" (under each cell's own overrides)" if args.set else "")


def cmd_bench(args) -> int:
    import strategies
    from sim.bench import format_bench, run_bench

    if args.strategy not in strategies.names():
        raise OptionError(f"--strategy: unknown strategy {args.strategy!r}; registered: {', '.join(strategies.names())}")
    if args.reference_games > args.games:  # the reference's games are compared with the kernel's first ones
        raise OptionError(f"--reference-games: at most --games ({args.games:,}), got {args.reference_games:,}")
    r = run_bench(games=args.games, reference_games=args.reference_games, players=args.players,
                  strategy=args.strategy, seed=args.seed, cold=not args.skip_cold, repeats=args.repeats)
    print(json.dumps(r, indent=2) if args.json else format_bench(r))
    return 0 if r["sample_identical"] else 1


def _players_list(text: str) -> list[int]:
    """``'1..6'`` or ``'2,4'`` -> player counts."""
    text = text.strip()
    try:
        if ".." in text:
            lo, hi = (int(x) for x in text.split(".."))
            values = list(range(lo, hi + 1))
        else:
            values = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected player counts like 1..6 or 2,4, got {text!r}") from None
    if not values or any(not 1 <= v <= 6 for v in values) or len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(f"player counts must be distinct, from 1 to 6, got {text!r}")
    return values


class _Watched:
    """A runner that notes whether it was asked to play: a refusal from before any game is the options'."""

    def __init__(self, runner):
        self._runner, self.played = runner, False

    def run(self, *args, **kwargs):
        self.played = True
        return self._runner.run(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._runner, name)


def _runner(args):
    """The runner of ``--scheduler`` and ``--ready-timeout`` (here when no scheduler); a bad value or missing
    Dask ends in one line."""
    from sim.distributed import SchedulerError, runner

    try:
        return runner(args.scheduler, args.ready_timeout)
    except SchedulerError as e:
        raise SystemExit(f"error: {e}") from None


def cmd_tune(args) -> int:
    from pathlib import Path

    from sim import tune as T
    from sim.bands import BandsError

    params = parse_params(args.param)
    if args.out is not None:
        _check_out_folder(args.out)
    content = _load_content(args.content, quiet=True)  # the pack on its own (its fault: exit 1) before the knobs
    try:  # the command line on its own
        knobs = [T.Knob.parse(k) for k in args.knob or []]
        T.check_knobs(knobs)
        if args.target_file:
            if args.target:
                raise T.TuneError("give --target or --target-file, not both")
            if args.players is not None:
                raise T.TuneError("--players is the player count of --target; with --target-file the targets are "
                                  "the file's cells, at their own player counts: drop --players (or use "
                                  "--also-players to report more counts)")
        else:
            if not args.target:
                raise T.TuneError("give --target LOW:HIGH (with --players) or --target-file bands.toml")
            try:
                targets = [T.parse_target(args.target, 4 if args.players is None else args.players)]
            except T.TuneError as e:  # e.g. a band in percentages: name the option
                text = str(e)
                if not text.startswith("--target"):
                    text = f"--target {args.target!r}: {text}"
                    if any(abs(float(x)) > 1 for x in args.target.split(":")):
                        text += " (fractions, e.g. 0.43:0.47 for 43% to 47%)"
                raise T.TuneError(text) from None
    except T.TuneError as e:
        raise OptionError(str(e)) from None
    if args.target_file:
        try:
            targets = T.targets_from_bands(args.target_file, args.strategy, params=params, content=args.content)
        except (T.TuneError, BandsError, ValueError) as e:
            raise SystemExit(f"error: {e}") from None
    _strategies([args.strategy], params, sorted({t.players for t in targets} | set(args.also_players or [])),
                args.strategy)
    progress = None if args.json else (lambda m: print(m, file=sys.stderr, flush=True))
    watched = None
    try:
        with _runner(args) as r:
            watched = _Watched(r)
            result, side = T.tune(knobs, targets, strategy=args.strategy, params=params, budget=args.budget,
                                  seed=args.seed, content=args.content, also_players=args.also_players,
                                  confirm_games=args.confirm_games, progress=progress, runner=watched)
    except (T.TuneError, ValueError) as e:
        if isinstance(e, T.TuneError) and watched is not None and not watched.played:
            raise OptionError(str(e)) from None  # e.g. a --knob value the pack refuses, before any game
        raise SystemExit(f"error: {e}") from None
    rec = T.report(result, side)
    files = T.write_outputs(result, side, Path(args.out)) if args.out else []
    if args.json:
        print(json.dumps(rec, indent=2))
        return 0
    band = "; ".join(f"{count(t.players, 'player')} [{100 * t.low:.1f}%, {100 * t.high:.1f}%]" for t in targets)
    print(f"target: {band}; {result.who()}, seed {args.seed}; {rec['candidates']} settings raced, {rec['games_played']:,} of {rec['budget']:,} games "
          f"({rec['dropped']} dropped, {rec['on_edge']} on a band edge, {rec['unresolved']} unresolved; stopped: {result.stop_reason()})")
    _print_pack(args, content)
    def label(values):
        return ", ".join(f"{k.path}={v}" for k, v in zip(result.knobs, values))

    if result.alike:
        alike = sorted(result.alike.items())
        more = f"; {len(alike) - 5} more in tune.json's played_alike" if len(alike) > 5 else ""
        print(f"{len(alike)} settings played the very games of another on the race's first {result.alike_games:,} games "
              "at every target player count (record for record, the same seeds), so each was raced as that one, not "
              "as a setting of its own: " + "; ".join(f"{label(v)} played as {label(a)}" for v, a in alike[:5]) + more)
    if result.same_games:
        same = sorted(result.same_games.items())
        more = f"; {len(same) - 5} more in tune.json's same_games" if len(same) > 5 else ""
        print(f"{len(same)} settings the search suggested play the same games at every target player count as one "
              "raced, and were not raced again (the pack sets what they change per player count there, or they "
              "change nothing those games read): " + "; ".join(f"{label(v)} plays as {label(a)}" for v, a in same[:5])
              + more)
    found = result.found()
    looks = result.levels.looks
    if not found:
        print(f"no setting has its 95% interval (over {looks} looks) inside the band (unresolved ones may with a "
              "larger --budget)")
    else:
        print(f"inside the band, 95% intervals over the race's {looks} looks (nearest the centre first):")
    for c in found:
        cells = ", ".join(f"{t.players}p {100 * c.rate(t.players):.2f}% [{100 * result.interval(c, t.players)[0]:.2f}, "
                          f"{100 * result.interval(c, t.players)[1]:.2f}]" for t in targets)
        print(f"  {', '.join(f'{k}={v}' for k, v in result.settings(c).items())}: {cells} "
              f"over {min(c.games.values()):,} games")
    if result.confirmation:
        cells = "; ".join(f"{r['players']}p {100 * r['win_rate']:.2f}% [{100 * r['ci_low']:.2f}, "
                          f"{100 * r['ci_high']:.2f}] over {r['games']:,} games"
                          + ("" if r["interval_inside_band"] else " (interval not inside the band)")
                          for r in result.confirmation)
        print(f"the best, chosen on the race's games, played again on fresh ones (95%): {cells}")
    if side:
        print("side effects of the best settings at other player counts (paired, 95% intervals):")
        for r in side:
            label = ", ".join(f"{k.path}={v}" for k, v in zip(result.knobs, r["values"]))
            if r["same_games"]:
                print(f"  {label} at {r['players']}p: {100 * r['default_win_rate']:.2f}%, no game changed: the "
                      "unchanged pack's games, record for record")
                continue
            print(f"  {label} at {r['players']}p: {100 * r['default_win_rate']:.2f}% -> {100 * r['win_rate']:.2f}% "
                  f"({100 * r['diff']:+.2f} points [{100 * r['diff_low']:+.2f}, {100 * r['diff_high']:+.2f}])")
    for f in files:
        print(f"  wrote {f}")
    return 0


def _check_tune_strategy_options(args, kw: dict) -> None:
    """Refuse tune-strategy options that do not go together (the values ``kw`` with the defaults filled in),
    naming them, before the out file is checked or any game is played."""

    def flag(key: str) -> str:  # "--trial-games 5,000 (the default)"
        return f"--{key.replace('_', '-')} {kw[key]:,}" + (" (the default)" if getattr(args, key) is None else "")

    if kw["budget"] < kw["trial_games"]:
        raise OptionError(f"{flag('budget')} is less than one trial of {flag('trial_games')}: raise --budget "
                          "or lower --trial-games")
    from sim import tune_strategy as TS

    if kw["seed"] > TS.MAX_SEARCH_SEED:
        raise OptionError(TS.search_seed_text("--seed", kw["seed"]))
    if kw["holdout_seed"] == kw["seed"]:
        raise OptionError(f"--holdout-seed {kw['holdout_seed']} is the search's {flag('seed')}: the held-out games "
                          "must be fresh; give another --holdout-seed")


def cmd_tune_strategy(args) -> int:
    from pathlib import Path

    from sim import tune_strategy as TS

    progress = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    recorded = {"players": "--players", "budget": "--budget", "trial_games": "--trial-games", "seed": "--seed",
                "holdout_games": "--holdout-games", "holdout_seed": "--holdout-seed"}
    if args.reproduce:
        given = [flag for key, flag in recorded.items() if getattr(args, key) is not None]
        if given:
            raise OptionError(f"--reproduce takes players, budget, seeds and game counts from the file; "
                              f"drop {', '.join(given)} (or drop --reproduce)")
    if not args.reproduce:
        defaults = {"players": [1, 2, 3, 4, 5, 6], "budget": 400_000, "trial_games": 5_000, "seed": 1,
                    "holdout_games": 100_000, "holdout_seed": None}
        kw = {k: v if getattr(args, k) is None else getattr(args, k) for k, v in defaults.items()}
        _check_tune_strategy_options(args, kw)
    _check_out_file(args.out)
    try:
        if args.reproduce:
            kw = TS.reproduce_args(args.reproduce)
        result = TS.tune(**kw, threads=args.threads, progress=progress)
    except TS.TuneStrategyError as e:
        raise SystemExit(f"error: {e}") from None
    out = Path(args.out)
    out.write_text(TS.to_toml(result), encoding="utf-8")
    for n, entry in result["players"].items():
        h = entry["holdout"]
        vs = "; ".join(f"vs {b} {100 * h['vs_' + b]['diff']:+.2f} points [{100 * h['vs_' + b]['paired_low']:+.2f}, "
                       f"{100 * h['vs_' + b]['paired_high']:+.2f}]" for b in TS.PRESETS)
        print(f"{count(int(n), 'player')}: held-out win rate {100 * h['win_rate']:.2f}% on {h['games']:,} games; {vs}")
    print(f"wrote {out}")
    return 0


def cmd_sensitivity(args) -> int:
    from pathlib import Path

    from sim import sensitivity as S
    from sim.content import ContentError

    params = parse_params(args.param)
    if args.out is not None:
        _check_out_folder(args.out)
    content = _load_content(args.content, quiet=True)  # the pack on its own (its fault: exit 1) before the knobs
    _strategies([args.strategy], params, args.players, args.strategy)
    progress = None if args.json else (lambda m: print(m, file=sys.stderr, flush=True))
    watched = None
    try:
        with _runner(args) as r:
            watched = _Watched(r)
            table = S.sensitivity(args.players, args.knob or None, strategy=args.strategy, params=params,
                                  games=args.games, seed=args.seed, content=args.content, progress=progress,
                                  runner=watched)
    except (S.SensitivityError, ContentError, ValueError) as e:
        if isinstance(e, S.SensitivityError) and watched is not None and not watched.played:
            # a --knob the pack has no such value for, or steps no game of --players reads: before any game
            text = str(e)
            raise OptionError(f"--{text}" if text.startswith("knob ") else text) from None
        raise SystemExit(f"error: {e}") from None
    files = S.write_outputs(table, Path(args.out)) if args.out else []
    if args.json:  # each row's plays (JSON text in the table's files) as JSON itself, not a string of it
        print(json.dumps([{**r, "plays": json.loads(r["plays"])} if isinstance(r.get("plays"), str) else r
                          for r in table.to_dicts()], indent=2))
        return 0
    _print_pack(args, content)
    for p in args.players:
        rows = [r for r in table.iter_rows(named=True) if r["players"] == p]
        print(f"{count(p, 'player')}, {S.who_played(rows[0])}: win rate {100 * rows[0]['default_win_rate']:.2f}% on the "
              f"unchanged pack ({args.games:,} games, seed {args.seed}; change per step, paired 95% interval)")
        for r in rows:
            if r["refused"]:
                print(f"  {S.short_name(r['knob']):<28} {r['from']:>4} -> {r['to']:<4} refused: {r['refused']}")
            elif r["same_games"]:
                print(f"  {S.short_name(r['knob']):<28} {r['from']:>4} -> {r['to']:<4} no game changed: the unchanged "
                      "pack's games, record for record")
            else:
                print(f"  {S.short_name(r['knob']):<28} {r['from']:>4} -> {r['to']:<4} {100 * r['diff']:+6.2f} points "
                      f"[{100 * r['diff_low']:+.2f}, {100 * r['diff_high']:+.2f}]")
    for f in files:
        print(f"wrote {f}")
    return 0


def _params_label(params: dict) -> str:
    from sim.text import params_text

    return f" ({params_text(params)})" if params else ""


def cmd_luck(args) -> int:
    from pathlib import Path

    import strategies
    from sim import luck as L

    params = parse_params(args.param)
    if args.out is not None:
        _check_out_folder(args.out)
    content = _load_content(args.content, quiet=True)  # the pack on its own: its fault, exit 1
    registered = ", ".join(strategies.names())
    strategies_ = [x.strip() for x in args.strategies.split(",")]
    if not any(strategies_):
        raise OptionError("--strategies: no strategy given; name one or more, comma-separated")
    for name in strategies_:
        if not name:
            raise OptionError(f"--strategies {args.strategies!r}: an empty name (two commas, or one at an end)")
        if name not in strategies.names():
            raise OptionError(f"--strategies: unknown strategy {name!r}; registered: {registered}")
        if strategies_.count(name) > 1:
            raise OptionError(f"--strategies: {name!r} given twice")
    # the studied strategy with its --param at every player count, before any game
    _strategies([args.strategy], params, args.players, args.strategy)
    progress = None if args.json else (lambda m: print(m, file=sys.stderr, flush=True))
    try:
        table = L.luck_table(args.players, strategy=args.strategy, params=params, games=args.games, seed=args.seed,
                             content=args.content, ladder=strategies_, progress=progress)
    except (L.LuckError, ValueError) as e:
        raise SystemExit(f"error: {e}") from None
    files = L.write_outputs(table, Path(args.out)) if args.out else []
    if args.json:
        print(json.dumps(table, indent=2, allow_nan=False))  # a share that was not measured is null, never NaN
        return 0
    _print_pack(args, content)
    for rec in table["players"]:
        print(f"{count(rec['players'], 'player')}, {args.strategy}{_params_label(params)}: win rate "
              f"{100 * rec['win_rate']:.2f}% " + (f"({rec['pairs']:,} games)" if rec["not_measured"] else
                                                  f"({rec['pairs']:,} pairs of games per source; share of the "
                                                  "outcome's variance, 95% interval)"))
        if rec["not_measured"]:  # a win rate of 0% or 100%: no shares at all
            print(f"  no shares: {rec['not_measured']}")
        for sh in [] if rec["not_measured"] else rec["shares"]:
            if sh["share"] is None:
                print(f"  {sh['group']:<18}{'-':>7}   {sh['not_measured']}")
            elif sh["low"] is None:
                print(f"  {sh['group']:<18}{100 * sh['share']:>7.2f}%  (no interval: no resample varies)")
            else:
                print(f"  {sh['group']:<18}{100 * sh['share']:>7.2f}%  [{100 * sh['low']:.2f}%, {100 * sh['high']:.2f}%]")
        if rec["rest"] is not None:
            print(f"  {'no single source':<18}{100 * rec['rest']:>7.2f}%  (sources together)")
        sk = rec["skill"]
        rates = ", ".join(f"{k}{_params_label(v['params'])} {100 * v['win_rate']:.1f}%"
                          for k, v in sk["strategies"].items())
        print(f"  strategies on the same games: {rates}; between-strategy share {100 * sk['between_share']:.1f}%")
    for f in files:
        print(f"wrote {f}")
    return 0


def _ready_timeout_arg(q) -> None:
    from sim.distributed import READY_TIMEOUT

    q.add_argument("--ready-timeout", type=_seconds, default=None, metavar="SECONDS",
                   help="with --scheduler: stop when no worker is ready for this long, at the start or later "
                        f"(default {READY_TIMEOUT:g})")


def _check_ready_timeout(args) -> None:
    """``--ready-timeout`` without ``--scheduler`` would change nothing: refuse it."""
    if getattr(args, "ready_timeout", None) is not None and args.scheduler is None:
        raise OptionError("--ready-timeout is how long a Dask run waits for a ready worker: give it with "
                          "--scheduler, or drop it (without --scheduler the games are played here)")


def _check_scheduler(args) -> None:
    """A ``--scheduler`` of the wrong form is a bad option value, refused before any work."""
    if getattr(args, "scheduler", None) is None:
        return
    from sim.distributed import SchedulerError, parse_scheduler

    try:
        parse_scheduler(args.scheduler)
    except SchedulerError as e:
        raise OptionError(str(e)) from None


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="smersh-sim", description="Monte Carlo balance simulator for Agents of SMERSH")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    seed = _int_range(0, MAX_SEED)
    threads = _int_range(1, MAX_THREADS)

    o = sub.add_parser("odds", help="odds tables of dice tests and gambles (exact; the gamble exchange policies sampled)")
    o.add_argument("what", choices=["dice", "gamble"], help="dice: dice-test odds; gamble: poker odds vs the House")
    o.add_argument("--json", action="store_true", help="machine-readable records of everything the text prints")
    o.add_argument("--samples", type=_int_range(1, MAX_SAMPLES), default=1_000_000,
                   help="samples for the sampled gamble policies (default 1,000,000)")
    o.add_argument("--seed", type=seed, default=1, help="seed of the sampled gamble policies (default 1)")
    o.add_argument("--content", default=None, help="content pack folder whose dice / Fate deck to use (default: printed)")
    o.set_defaults(func=cmd_odds)

    c = sub.add_parser("content", help="load and validate a content pack; print its hash")
    c.add_argument("--content", default=None, help="content pack folder (default: the built-in pack)")
    c.add_argument("--json", action="store_true", help="machine-readable output")
    c.set_defaults(func=cmd_content)

    def game_args(q, games: bool):
        q.add_argument("--players", type=_int_range(1, 6), default=4, help="player count, 1 to 6 (default 4)")
        q.add_argument("--strategy", default="heuristic", help="registered strategy of every seat, or one per seat, comma-separated: heuristic,bold,cautious,heuristic (default heuristic)")
        q.add_argument("--param", action="append", metavar="NAME=VALUE", help="strategy parameter (repeatable)")
        q.add_argument("--seed", type=seed, default=1, help="seed, 0 to 2**63-1 (default 1)")
        q.add_argument("--characters", default=None, help="comma-separated character names, one per seat, or 'random'")
        q.add_argument("--variant", default=None,
                       help="easier, dirty-lobo, dirty-location, dirty, fixed-skills (comma-separated)")
        q.add_argument("--skills", choices=["pick", "fixed"], default=None,
                       help="advanced skills at set-up: pick (the players pick, default) or fixed (each character's own)")
        q.add_argument("--content", default=None, help="content pack folder (default: the built-in pack)")
        q.add_argument("--set", action="append", metavar="PATH=VALUE",
                       help="override a content value, e.g. lobo.track.start=1 or 'villain.counts={minus_one=4}' (repeatable)")
        if games:
            q.add_argument("--games", type=_int_range(1, MAX_SEED), default=1000,
                           help="games to play (default 1000); summarised batch by batch in bounded memory")
            q.add_argument("--engine", choices=["kernel", "reference"], default="kernel",
                           help="kernel (numba, default) or reference (the readable rulebook); same games")
            q.add_argument("--threads", type=threads, default=None, help="numba threads (default: all)")
            q.add_argument("--json", action="store_true", help="machine-readable output")
        else:
            q.add_argument("--game", type=_int_range(0, MAX_SEED), default=0, help="game index within the seed (default 0)")

    pl = sub.add_parser("play", help="play games and print a summary")
    game_args(pl, True)
    pl.set_defaults(func=cmd_play)

    ru = sub.add_parser("run", help="run an experiment spec into results/<name>/ (resumable)")
    ru.add_argument("spec", help="experiments/<name>.toml")
    ru.add_argument("--out", default=None, help="output folder (default results/<name>)")
    ru.add_argument("--games", type=_int_range(1, MAX_SEED), default=None, help="games per cell, overriding the spec")
    ru.add_argument("--engine", choices=["kernel", "reference"], default=None,
                    help="kernel (numba) or reference (the readable rulebook); same games (default: the spec's "
                         "[experiment] engine, kernel unless it says otherwise)")
    ru.add_argument("--max-batches", type=_int_range(1, MAX_SEED), default=None,
                    help="stop after N new batches (resume later)")
    ru.add_argument("--quiet", action="store_true", help="no progress bar")
    ru.add_argument("--set", action="append", metavar="PATH=VALUE",
                    help="override a content value in every cell's pack (repeatable; part of the spec's hash)")
    ru.add_argument("--skills", choices=["pick", "fixed"], default=None,
                    help="advanced skills at set-up in every cell, overriding the spec's experiment.skills "
                         "(part of the spec's hash)")
    ru.add_argument("--scheduler", default=None, metavar="local:N|tcp://HOST:PORT",
                    help="play the batches on a Dask cluster: N local worker processes (at most one per core), or an "
                         "existing scheduler (needs pip install 'smersh-sim[distributed]'); the results are the same")
    _ready_timeout_arg(ru)
    ru.set_defaults(func=cmd_run)

    co = sub.add_parser("compare", help="paired win-rate differences of a run's cells against a baseline")
    co.add_argument("run", help="results/<name> folder of a finished run")
    co.add_argument("--baseline", default=None,
                    help="e.g. strategy=heuristic (default: the spec's [compare]); its chart is "
                         "paired_differences.<baseline>.png, the spec's baseline's paired_differences.png")
    co.add_argument("--json", action="store_true", help="machine-readable output (no chart written)")
    co.set_defaults(func=cmd_compare)

    ch = sub.add_parser("check", help="check win rates against agreed bands (CI gate)")
    ch.add_argument("bands", help="experiments/bands.toml")
    ch.add_argument("--content", default=None, help="content pack folder to check (default: the file's or built-in)")
    ch.add_argument("--set", action="append", metavar="PATH=VALUE",
                    help="override a content value in every cell's pack (repeatable): does the change stay in the bands?")
    ch.add_argument("--skills", choices=["pick", "fixed"], default=None,
                    help="advanced skills at set-up in every cell, overriding the cells' skills")
    ch.add_argument("--update", action="store_true",
                    help="record today's results as the baselines and re-centre the bands on them; prints the diff")
    ch.add_argument("--margin", type=_margin, default=None,
                    help="with --update: each band is re-centred on today's estimate +/- MARGIN, then widened to "
                         "cover the estimate's 95%% interval, its ends rounded outward to 0.001 (0.1 turn), so "
                         "the interval lies inside it (0 gives the interval itself, not a point). A "
                         "fraction from 0 to 1: for a win rate or outcome share 0.03 is +/- 3 points (0.45 -> "
                         "[0.42, 0.48]); for mean_turns it is +/- 3%% of the mean (default 0.03)")
    ch.add_argument("--json", action="store_true",
                    help="machine-readable output (with --update: each cell's baseline and bands before and after)")
    ch.set_defaults(func=cmd_check)

    be = sub.add_parser("bench", help="games per second of the kernel (1 and all threads) and the reference, compile times")
    be.add_argument("--games", type=_int_range(1, MAX_BENCH_GAMES), default=200_000,
                    help="kernel games per timing (default 200,000)")
    be.add_argument("--reference-games", type=_int_range(1, MAX_BENCH_GAMES), default=300,
                    help="reference-engine games, also compared game for game with the kernel (default 300)")
    be.add_argument("--players", type=_int_range(1, 6), default=4, help="player count, 1 to 6 (default 4)")
    be.add_argument("--strategy", default="heuristic", help="registered strategy (default heuristic)")
    be.add_argument("--seed", type=seed, default=1, help="seed (default 1)")
    be.add_argument("--repeats", type=_int_range(1, 99), default=3,
                    help="timings of each rate, taken in turns; the median is reported (default 3)")
    be.add_argument("--skip-cold", action="store_true", help="skip the cold-compile measurement (minutes)")
    be.add_argument("--json", action="store_true", help="machine-readable output")
    be.set_defaults(func=cmd_bench)

    def study_args(q, players_default: list[int] | None, out_help: str):
        """The options tune, sensitivity and luck share."""
        if players_default is not None:
            q.add_argument("--players", type=_players_list, default=players_default, metavar="1..6",
                           help=f"player counts (default {','.join(map(str, players_default))})")
        q.add_argument("--strategy", default="heuristic", help="registered strategy of every seat (default heuristic)")
        q.add_argument("--param", action="append", metavar="NAME=VALUE", help="strategy parameter (repeatable)")
        q.add_argument("--seed", type=seed, default=1, help="seed (default 1); the same seed gives the same answer")
        q.add_argument("--content", default=None, help="content pack folder (default: the built-in pack)")
        q.add_argument("--out", default=None, help=out_help)
        q.add_argument("--json", action="store_true", help="machine-readable output")

    def scheduler_arg(q):
        q.add_argument("--scheduler", default=None, metavar="local:N|tcp://HOST:PORT",
                       help="play the games on a Dask cluster (needs pip install 'smersh-sim[distributed]'); same answer")
        _ready_timeout_arg(q)

    tu = sub.add_parser("tune", help="find setup values that bring the win rate into a target band")
    tu.add_argument("--players", type=_int_range(1, 6), default=None,
                    help="player count of --target (default 4); not with --target-file, whose cells name theirs")
    study_args(tu, None, "folder for tune.json, tuned_setup.toml and candidates.png")
    tu.add_argument("--target", default=None, metavar="LOW:HIGH", help="win-rate band as fractions, e.g. 0.43:0.47")
    tu.add_argument("--target-file", default=None, metavar="BANDS.toml",
                    help="targets for several player counts: the strategy's plain cells of a bands file")
    tu.add_argument("--knob", action="append", metavar="PATH=LO..HI",
                    help="a content value to vary, e.g. lobo.track.start=0..3 or villain.counts.minus_one=0..8 (repeatable)")
    tu.add_argument("--budget", type=_int_range(1, MAX_SEED), default=2_000_000, help="games the race may play (default 2,000,000)")
    tu.add_argument("--also-players", type=_players_list, default=None, metavar="1..6",
                    help="also show the best settings' paired effect at these player counts")
    tu.add_argument("--confirm-games", type=_int_range(0, MAX_SEED), default=20_000,
                    help="fresh games per target to play the best setting again on (default 20,000; 0: none)")
    scheduler_arg(tu)
    tu.set_defaults(func=cmd_tune)

    ts = sub.add_parser("tune-strategy", help="tune the heuristic's parameters per player count for win rate (writes strategies/tuned.toml)")
    # None: not given (--reproduce refuses them); cmd_tune_strategy fills in the defaults named here
    ts.add_argument("--players", type=_players_list, default=None, metavar="1..6",
                    help="player counts to tune (default 1..6)")
    ts.add_argument("--budget", type=_int_range(1, MAX_SEED), default=None,
                    help="games the search may play per player count (default 400,000)")
    ts.add_argument("--trial-games", type=_int_range(1, MAX_SEED), default=None,
                    help="paired games per trial (the same games for every trial; default 5,000)")
    ts.add_argument("--holdout-games", type=_int_range(1, MAX_SEED), default=None,
                    help="fresh games for the final figures (default 100,000)")
    ts.add_argument("--seed", type=seed, default=None, help="seed of the search (default 1)")
    ts.add_argument("--holdout-seed", type=seed, default=None, help="seed of the held-out games (default seed + 1)")
    ts.add_argument("--threads", type=_int_range(1, 1024), default=None, help="worker threads (default: all)")
    ts.add_argument("--reproduce", default=None, metavar="TUNED.toml",
                    help="take players, budget, seeds and game counts from a tuned file (write it again)")
    ts.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "strategies" / "tuned.toml"),
                    help="where to write (default strategies/tuned.toml)")
    ts.set_defaults(func=cmd_tune_strategy)

    se = sub.add_parser("sensitivity", help="paired change in win rate per step of each setup value (tornado chart)")
    study_args(se, [2, 4], "folder for sensitivity.parquet/.csv and tornado charts")
    se.add_argument("--knob", action="append", metavar="PATH",
                    help="a content value to step ({players} stands for the player count; default: the setup values a "
                         "seat of the default line-up reads)")
    se.add_argument("--games", type=_int_range(1, MAX_SEED), default=20_000, help="games per setting (default 20,000)")
    scheduler_arg(se)
    se.set_defaults(func=cmd_sensitivity)

    lu = sub.add_parser("luck", help="how much of the outcome each random source decides, and the spread across strategies")
    study_args(lu, [2, 4], "folder for luck.json and one chart per player count")
    lu.add_argument("--strategies", default="random,bold,heuristic,cautious,tuned",
                    help="strategies whose win rates show the spread due to decisions (comma-separated)")
    lu.add_argument("--games", type=_int_range(2, 10_000_000), default=100_000,
                    help="pairs of games per source group (default 100,000)")
    lu.set_defaults(func=cmd_luck)

    tr = sub.add_parser("trace", help="print one game turn by turn")
    game_args(tr, False)
    tr.set_defaults(func=cmd_trace)
    return p


def _announce_compile(args) -> None:
    """Say why the first kernel command on a fresh checkout takes a minute before any output."""
    if args.func not in (cmd_play, cmd_run, cmd_check, cmd_compare, cmd_tune, cmd_tune_strategy, cmd_sensitivity,
                         cmd_luck) or (getattr(args, "engine", None) or "kernel") != "kernel":
        return
    from sim._cache import is_compiled

    if not is_compiled():
        print("compiling the simulation kernel (once per checkout; under a minute on 2 cores)...",
              file=sys.stderr, flush=True)


def _os_message(e: OSError) -> str:
    where = f" {str(e.filename)!r}" if e.filename else ""
    if e.errno == errno.ENOSPC:
        return (f"no space left on the device{' (writing' + where + ')' if where else ''}; free some space and "
                "run the same command again (a run resumes from its finished batches)")
    if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"permission denied:{where} cannot be written or read ({e.strerror})"
    return f"{e.strerror or e}:{where}" if e.strerror else str(e)


def _engine_message(e: BaseException) -> str:
    """``'RuleError: villain deck and discard pile are both empty'``: the type and the text, on one line."""
    text = " ".join(str(e).split()) or "(no message)"
    return f"{type(e).__name__}: {text}"


def _detach_stdout() -> None:
    """After the reader of a pipe went away: send what is still buffered to /dev/null."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


_WARNED: set[str] = set()  # the warnings this command has printed (main() empties it)


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings (e.g. a pack value the printed game does not have) as one line each on stderr, each once: a
    command that loads its pack more than once (tune, sensitivity, luck) says the same thing once."""
    text = str(message)
    if text in _WARNED:
        return
    _WARNED.add(text)
    print(f"warning: {text}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """The command line; user mistakes and ordinary faults end in one line on stderr, never a traceback."""
    import warnings

    from sim.distributed import BatchFailed
    from sim.rules.errors import StrategyError

    warnings.showwarning = _one_line_warning
    _WARNED.clear()
    args = None
    try:
        args = build_parser().parse_args(argv)
        _check_ready_timeout(args)
        _check_scheduler(args)
        _check_content_folder(getattr(args, "content", None))
        _announce_compile(args)
        code = args.func(args)
        sys.stdout.flush()
        return code
    except OptionError as e:  # a bad option value, refused before any work: printed, then exit 2 (as argparse)
        print(e, file=sys.stderr)
        raise
    except KeyboardInterrupt:
        hint = "; run the same command again to resume" if args is not None and args.func is cmd_run else ""
        print(f"interrupted{hint}", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader (e.g. `| head`) closed the pipe: stop quietly
        _detach_stdout()
        return 141
    except BatchFailed as e:  # a job failed on a Dask cluster (tune, sensitivity): its own error, not the engine's
        print(f"error: {e}", file=sys.stderr)
        return 1
    except StrategyError as e:  # a strategy of the user's (a spec's module path) answered illegally: its words
        print(f"error: {e}", file=sys.stderr)
        return 1
    except RuntimeError as e:
        # a rule engine stopped where the rules cannot go on (e.g. a deck and its discard pile both
        # empty): content the loader let through, or a bug. One line with the engine's own words;
        # SMERSH_SIM_TRACEBACK=1 shows the traceback.
        if os.environ.get("SMERSH_SIM_TRACEBACK"):
            raise
        print(f"error: the game engine stopped: {_engine_message(e)} (a content pack it cannot play, or a bug to "
              "report with this command line; SMERSH_SIM_TRACEBACK=1 shows the traceback)", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"error: {_os_message(e)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
