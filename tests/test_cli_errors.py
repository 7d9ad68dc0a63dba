"""The command line ends every user mistake and ordinary fault in one clear line, never a traceback."""

from __future__ import annotations

import errno
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import sim.cli
from sim.cli import build_parser, main
from tests.kernel_support import NO_JIT

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "sim.cli"]

TINY_SPEC = """
[experiment]
name = "tiny"
seed = 3
games = 20
batch = 10

[grid]
players = [2]
strategies = ["heuristic"]
"""


def run_main(argv, capsys) -> tuple[int, str, str]:
    """main() in-process: (exit code, stdout, stderr), SystemExit included. The one-time notice that the
    kernel is being compiled (a command run before any test compiled it, on an empty cache) is left out of
    stderr: it is not an error line."""
    try:
        code = main(argv)
    except SystemExit as e:
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
            code = 1
        else:
            code = e.code
    out, err = capsys.readouterr()
    err = "".join(x for x in err.splitlines(True) if not x.startswith("compiling the simulation kernel"))
    return code, out, err


@pytest.fixture
def files(tmp_path):
    spec = tmp_path / "tiny.toml"
    spec.write_text(textwrap.dedent(TINY_SPEC))
    binary = tmp_path / "binary.toml"
    binary.write_bytes(bytes(range(256)) * 4)
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    return {"spec": str(spec), "binary": str(binary), "file": str(a_file), "dir": str(tmp_path),
            "missing": str(tmp_path / "missing")}


# (argv with {placeholders}, a fragment the one-line message must contain)
BAD = [
    ("trace --seed -1", "--seed"),
    ("trace --game -3", "--game"),
    ("trace --param pool_target=lots", "pool_target"),
    ("trace --param reroll=maybe", "reroll"),
    ("trace --param =3", "NAME=VALUE"),
    ("trace --param novalue", "NAME=VALUE"),
    ("play --param pool_target", "error: --param expects NAME=VALUE, got 'pool_target'"),
    # the variant fixes the skills: played, --skills pick would be silently ignored
    ("play --players 6 --games 2000 --variant fixed-skills --skills pick",
     "error: --skills pick contradicts --variant fixed-skills: the variant fixes each character's skills, so no "
     "player picks; leave out one of the two"),
    ("trace --variant easier,fixed-skills --skills pick", "--skills pick contradicts --variant fixed-skills"),
    ("odds gamble --samples 0", "--samples"),
    ("odds gamble --samples many", "--samples"),
    ("odds dice --content {missing}", "does not exist"),
    ("odds wheel", "invalid choice"),
    ("bench --games 0", "--games"),
    ("bench --reference-games 0", "--reference-games"),
    ("bench --strategy genius --skip-cold", "genius"),
    ("bench --players 9", "--players"),
    ("bench --repeats 0", "--repeats"),
    ("bench --games 100 --reference-games 300 --skip-cold", "--reference-games: at most --games"),
    ("play --param gamble_p=abc", "--param: gamble_p must be a finite number"),
    ("play --param gamble_p=nan", "gamble_p"),
    ("play --param gamble_p=2", "gamble_p must be a finite number from 0 to 1"),
    ("play --param auto_pass_below=-1", "--param: auto_pass_below must be a finite number from 0 to 1"),
    ("play --param auto_pass_below=5", "--param: auto_pass_below must be a finite number from 0 to 1"),
    ("play --param auto_pass_below=1.0001", "auto_pass_below"),
    ("play --param pool_target=1.5", "pool_target"),
    ("play --param bogus=1", "--param: unknown heuristic parameter(s): bogus"),
    # the label and the seat count are not parameters: refused as unknown ones, never a clash of arguments
    ("play --param name=foo --games 10", "--param: unknown heuristic parameter(s): name (name is the strategy's label"),
    ("play --strategy tuned --param players=2 --games 10", "--param: unknown heuristic parameter(s): players"),
    ("play --strategy tuned --param name=foo --games 10", "--param: unknown heuristic parameter(s): name"),
    ("play --param players=2 --games 10", "--param: unknown heuristic parameter(s): players"),
    ("play --strategy random --param name=foo --games 10", "--param: strategy 'random' takes no parameters, got name"),
    ("luck --players 2 --games 10 --param name=foo", "--param: unknown heuristic parameter(s): name"),
    ("sensitivity --players 2 --games 10 --param players=3", "--param: unknown heuristic parameter(s): players"),
    ("tune --players 2 --target 0.05:0.6 --knob lobo.track.start=0,1 --budget 4000 --param name=foo",
     "--param: unknown heuristic parameter(s): name"),
    ("play --param pool_target=1 --param pool_target=2", "twice"),
    ("play --games 0", "--games"),
    ("play --games 3.5", "--games"),
    ("play --players 7", "--players"),
    ("play --players True", "--players"),
    ("play --threads 0", "--threads"),
    ("play --seed 99999999999999999999", "--seed"),
    ("play --strategy genius", "--strategy: unknown strategy 'genius'"),
    ("play --variant harder", "harder"),
    ("play --variant dirty-lobbo", "error: --variant: unknown variant 'dirty-lobbo'"),
    ("play --characters Nobody,Else", "Nobody"),
    ("play --variant= --games 10", "--variant: empty"),
    ("play --variant=, --games 10", "--variant: empty"),
    ("play --characters= --games 10", "--characters: empty"),
    ("trace --variant=", "--variant: empty"),
    ("trace --characters=", "--characters: empty"),
    ("play --characters Calli_Dagger --players 1", "Calli_Dagger"),
    ("play --content {missing}", "does not exist"),
    ("play --content {file}", "is a file, not a content pack folder"),
    ("content --content {file}", "is a file, not a content pack folder"),
    ("play --engine gpu", "--engine"),
    ("content --content {dir}", "missing"),
    ("run {dir}", "folder"),
    ("run {binary}", "UTF-8"),
    ("run {missing}", "not found"),
    ("run {spec} --out {file}", "is a file"),
    ("run {spec} --out {file}/below", "is a file"),
    ("run {spec} --games 0", "--games"),
    ("run {spec} --max-batches 0", "--max-batches"),
    ("compare {missing}", "error"),
    ("check {missing}", "not found"),
    ("check {dir}", "folder"),
    ("check {binary}", "UTF-8"),
    ("check experiments/bands.toml --update --margin nan", "--margin"),
    ("check experiments/bands.toml --margin -0.1", "--margin"),
    ("check experiments/bands.toml --margin inf", "--margin"),
    ("check experiments/bands.toml --margin 0.05", "error: --margin sets the width of the bands --update writes, and "
                                                   "changes nothing without it; give it with --update"),
    ("check experiments/bands.toml --content {missing}", "does not exist"),
    ("tune --players 2 --target 0.05:0.6 --knob lobo.track.start=0,1 --knob lobo.track.start=3 --budget 4000",
     "--knob lobo.track.start: given twice"),
    ("tune --target 43:47 --knob lobo.track.start=0..1", "--target '43:47'"),
    ("tune --target 0.4:0.5 --knob lobo.track.start=0..1 --strategy heuristc", "--strategy: unknown strategy"),
    ("tune --target 0.4:0.5 --knob lobo.track.start=0..1 --param pool_target=x", "--param: pool_target"),
    ("sensitivity --players 2 --games 10 --strategy heuristc", "--strategy: unknown strategy"),
    ("sensitivity --players 2 --games 10 --param pool_target=x", "--param: pool_target"),
    ("sensitivity --players 2 --games 10 --knob lobo.track.strat", "--knob lobo.track.strat"),
    ("frobnicate", "invalid choice"),
    ("tune-strategy --players 4 --budget 100 --trial-games 1000 --out {dir}/t.toml",
     "error: --budget 100 is less than one trial of --trial-games 1,000: raise --budget or lower --trial-games"),
    ("tune-strategy --players 4 --budget 100 --out {dir}/t.toml", "--trial-games 5,000 (the default)"),
    ("tune-strategy --players 4 --seed 3 --holdout-seed 3 --out {dir}/t.toml",
     "error: --holdout-seed 3 is the search's --seed 3: the held-out games must be fresh"),
    ("tune-strategy --players 4 --holdout-seed 1 --out {dir}/t.toml", "--seed 1 (the default)"),
    # optuna's sampler takes seed + 1000 x players below 2**32 (a traceback from optuna had ended the run)
    ("tune-strategy --players 4 --seed 9223372036854775807 --out {dir}/t.toml", "--seed must be an integer from 0 to 4,294,961,295"),
    ("tune-strategy --players 4 --seed 4294967295 --out {dir}/t.toml", "--seed must be an integer from 0 to 4,294,961,295"),
    # a scheduler address without a port: refused before Dask is asked, by every command that takes one
    ("run {spec} --out {dir}/out --scheduler tcp://127.0.0.1", "needs a port"),
    ("sensitivity --players 2 --games 10 --scheduler tcp://127.0.0.1", "needs a port"),
    ("tune --players 2 --target 0.05:0.6 --knob lobo.track.start=0,1 --budget 4000 --scheduler tcp://127.0.0.1",
     "needs a port"),
    ("run {spec} --out {dir}/out --scheduler tcp://[::1]", "needs a port"),
    ("run {spec} --out {dir}/out --scheduler tcp://127.0.0.1:99999", "port"),
    # the readiness limit: a finite number of seconds above 0, and only with --scheduler (else it does nothing)
    ("run {spec} --out {dir}/out --scheduler local:2 --ready-timeout 0", "--ready-timeout: must be a finite number"),
    ("run {spec} --out {dir}/out --scheduler local:2 --ready-timeout -5", "--ready-timeout: must be a finite number"),
    ("sensitivity --players 2 --games 10 --scheduler local:2 --ready-timeout nan", "--ready-timeout: must be a finite"),
    ("tune --players 2 --target 0.05:0.6 --knob lobo.track.start=0,1 --scheduler local:2 --ready-timeout inf",
     "--ready-timeout: must be a finite number"),
    ("run {spec} --out {dir}/out --scheduler local:2 --ready-timeout soon", "--ready-timeout: expected a number"),
    ("run {spec} --out {dir}/out --ready-timeout 30", "--ready-timeout is how long a Dask run waits"),
    ("sensitivity --players 2 --games 10 --ready-timeout 30", "give it with --scheduler"),
    ("tune --players 2 --target 0.05:0.6 --knob lobo.track.start=0,1 --budget 4000 --ready-timeout 30",
     "give it with --scheduler"),
]


@pytest.mark.parametrize("argv,fragment", BAD, ids=[a for a, _ in BAD])
def test_bad_invocation_ends_in_one_clear_line(argv, fragment, files, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out, err = run_main(argv.format(**files).split(), capsys)
    assert code not in (0, None), (argv, out, err)
    assert "Traceback" not in err + out
    # the one-time compile notice of a fresh checkout is not an error line
    lines = [x for x in err.strip().splitlines() if not x.startswith("compiling the simulation kernel")]
    assert len(lines) == 1, err
    assert fragment in lines[0], lines[0]
    # every refusal says it is one, as argparse's own do
    assert lines[0].startswith(("error: ", "content error: ", "spec error: ", "bands error: ", "smersh-sim")), lines[0]


# (argv, exit status): the README's rule. 2: the command line alone is refused before any work starts (an
# unknown name, a malformed or out-of-range value, an unknown --set/--knob path, options that do not go
# together); 1: a file or folder it names cannot be read or written, or its contents are refused
EXIT_CODES = [
    ("play --players 7", 2),
    ("play --skills fixd", 2),
    ("play --variant fixed-skills --skills pick", 2),
    ("trace --variant dirty,fixed-skills --skills pick", 2),
    ("play --strategy heuristc", 2),
    ("play --strategy heuristic,bold --players 3", 2),
    ("play --variant dirty-lobbo", 2),
    ("play --param exchnage_when=early", 2),
    ("play --param name=foo", 2),
    ("play --strategy tuned --param players=2", 2),
    ("luck --players 2 --games 10 --param name=foo", 2),
    ("sensitivity --players 2 --games 10 --param name=foo", 2),
    ("tune --target 0.4:0.5 --knob lobo.track.start=0..1 --param players=3", 2),
    ("play --param pool_target", 2),
    ("play --param pool_target=1 --param pool_target=2", 2),
    ("play --param auto_pass_below=5", 2),
    ("play --characters Nobody,Else --players 2", 2),
    ("play --set lobo", 2),
    ("play --set lobo.track.strat=1", 2),
    ("trace --set lobo.track.start=abc", 2),
    ("run {spec} --out {dir}/out --ready-timeout 30", 2),
    ("run {spec} --out {dir}/out --scheduler local:0", 2),
    ("run {spec} --out {dir}/out --set lobo.track.strat=1", 2),
    ("tune --target 43:47 --knob lobo.track.start=0..1", 2),
    ("tune --target 0.4:0.5 --knob lobo.track.start=0..x", 2),
    ("tune --target 0.4:0.5 --knob lobo.track.strat=0..1 --budget 100", 2),
    ("tune --target 0.4:0.5 --target-file experiments/bands.toml --knob lobo.track.start=0..1", 2),
    ("tune --target 0.4:0.5 --knob lobo.track.start=0..1 --strategy heuristc", 2),
    ("sensitivity --players 2 --games 10 --knob lobo.track.strat", 2),
    ("sensitivity --players 2 --games 10 --param pool_target=x", 2),
    ("sensitivity --players 2 --games 10 --scheduler tcp://127.0.0.1", 2),
    ("luck --players 2 --games 10 --strategies heuristic,,bold", 2),
    ("luck --players 2 --games 10 --strategy heuristc", 2),
    ("compare {dir} --baseline nonsense", 2),
    ("check experiments/bands.toml --update --set lobo.track.start=1", 2),
    ("check experiments/bands.toml --margin 0.05", 2),
    ("bench --strategy genius --skip-cold", 2),
    ("tune-strategy --reproduce {spec} --players 4", 2),
    # tune-strategy options that do not go together, the defaults filled in
    ("tune-strategy --players 4 --budget 100 --trial-games 1000 --out {dir}/t.toml", 2),
    ("tune-strategy --players 4 --budget 100 --out {dir}/t.toml", 2),
    ("tune-strategy --players 4 --seed 3 --holdout-seed 3 --out {dir}/t.toml", 2),
    ("tune-strategy --players 4 --holdout-seed 1 --out {dir}/t.toml", 2),
    ("tune-strategy --players 4 --seed 9223372036854775807 --out {dir}/t.toml", 2),
    ("run {missing}", 1),
    ("run {binary}", 1),
    ("run {dir}", 1),
    ("run {spec} --out {file}", 1),
    ("check {missing}", 1),
    ("check {binary}", 1),
    ("compare {missing}", 1),
    ("play --content {missing}", 1),
    ("play --content {file}", 1),
    ("content --content {dir}", 1),
    ("tune --target-file {binary} --knob lobo.track.start=0..1", 1),
    ("sensitivity --players 2 --games 10 --out {file}", 1),
    ("tune-strategy --reproduce {binary}", 1),
]


@pytest.mark.parametrize("argv,code", EXIT_CODES, ids=[a for a, _ in EXIT_CODES])
def test_exit_status_is_2_for_a_bad_option_and_1_for_a_bad_file(argv, code, files, capsys, monkeypatch):
    def played(*a, **k):
        raise AssertionError("games were played before the command line was checked")

    for work in ("sim.run.simulate_tally", "sim.study.run_study", "sim.tune.race", "sim.sensitivity.play_win_vector",
                 "sim.luck.luck_table", "sim.tune_strategy.tune", "sim.bench.run_bench"):
        monkeypatch.setattr(work, played)
    monkeypatch.chdir(ROOT)
    got, out, err = run_main(argv.format(**files).split(), capsys)
    assert got == code, (argv, err)
    assert "Traceback" not in err + out
    lines = [x for x in err.strip().splitlines() if not x.startswith("compiling the simulation kernel")]
    assert len(lines) == 1, err


def test_a_rule_engine_that_stops_exits_1(capsys, monkeypatch):
    _short_fate_deck(monkeypatch)
    code, out, err = run_main(["trace", "--players", "6"], capsys)
    assert code == 1 and "the game engine stopped" in err


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc, where no folder or file can be made")
@pytest.mark.parametrize("argv,work,what", [
    ("run {spec} --out /proc/smersh-sim-out --quiet", "sim.study.run_study", "a folder"),
    ("sensitivity --players 2 --games 10 --out /proc/smersh-sim-out", "sim.sensitivity.sensitivity", "a folder"),
    ("tune-strategy --players 2 --out /proc/smersh-sim-tuned.toml", "sim.tune_strategy.tune", "a file"),
])
def test_an_out_that_cannot_be_created_is_named_before_any_game(argv, work, what, files, capsys, monkeypatch):
    """/proc's permission bits (and root) say writable, yet nothing can be made there: the folder is tried."""
    monkeypatch.setattr(work, lambda *a, **k: pytest.fail("games were played before --out was checked"))
    code, out, err = run_main(argv.format(**files).split(), capsys)
    assert code == 1 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert re.fullmatch(rf"error: --out '/proc/smersh-sim-\S+': cannot create {what} in '/proc' \(.+\)", err.strip()), err


def test_every_option_has_a_help_line():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.choices and isinstance(a.choices, dict))
    missing = []
    for name, p in sub.choices.items():
        for a in p._actions:
            if a.dest != "help" and not (a.help or "").strip():
                missing.append(f"{name} {'/'.join(a.option_strings) or a.dest}")
    assert missing == []


@pytest.mark.parametrize("err,fragment", [
    (OSError(errno.ENOSPC, "No space left on device", "results/tiny/summary.parquet"), "no space left"),
    (PermissionError(errno.EACCES, "Permission denied", "results/tiny"), "permission denied"),
    (OSError(errno.EROFS, "Read-only file system", "/ro/results"), "permission denied"),
    (OSError(errno.ENOSPC, "No space left on device"), "no space left"),  # a writer that names no file
])
def test_os_errors_of_a_run_end_in_one_line(err, fragment, files, capsys, monkeypatch):
    def fail(*a, **k):
        raise err

    monkeypatch.setattr("sim.study.run_study", fail)
    out_dir = str(Path(files["dir"]) / "out")
    named = err.filename or out_dir  # without a file name, the message names the output folder
    code, out, text = run_main(["run", files["spec"], "--out", out_dir, "--quiet"], capsys)
    assert code == 1
    assert "Traceback" not in text
    assert len(text.strip().splitlines()) == 1
    assert fragment in text and named in text


@pytest.mark.parametrize("argv,target", [
    ("sensitivity --players 2 --games 10", "sim.sensitivity.sensitivity"),
    ("tune --players 2 --target 0.05:0.6 --knob lobo.track.start=0,1 --budget 4000", "sim.tune.tune"),
    ("run {spec} --out {dir}/out --quiet", "sim.study.run_study"),
])
def test_a_batch_failing_on_the_cluster_is_named_as_such(argv, target, files, capsys, monkeypatch):
    from sim.distributed import BatchFailed

    def fail(*a, **k):
        raise BatchFailed("batch 3 failed on the cluster after 3 tries (last on worker tcp://10.0.0.5:4000): "
                          "MemoryError: out of memory")

    monkeypatch.setattr(target, fail)
    code, out, err = run_main(argv.format(**files).split(), capsys)
    assert code == 1
    assert "Traceback" not in err + out
    assert len(err.strip().splitlines()) == 1, err
    assert "failed on the cluster" in err and "MemoryError: out of memory" in err and "tcp://10.0.0.5:4000" in err
    assert "engine stopped" not in err and "content pack" not in err


@pytest.mark.parametrize("error,resume", [
    ("WorkersLost", True),  # the cluster lost its last worker in mid-run: the batches played are kept
    ("WorkerCodeMismatch", True),
    ("SchedulerError", False),  # e.g. the scheduler cannot be reached: nothing was played
])
def test_a_run_stopped_by_its_cluster_says_whether_it_resumes(error, resume, files, capsys, monkeypatch):
    import sim.distributed as D

    def fail(*a, **k):
        raise getattr(D, error)("--scheduler tcp://10.0.0.5:8786: no worker on the cluster for 60 s")

    monkeypatch.setattr("sim.study.run_study", fail)
    code, out, err = run_main(["run", files["spec"], "--out", f"{files['dir']}/out", "--quiet"], capsys)
    assert code == 1 and "Traceback" not in err + out and len(err.strip().splitlines()) == 1, err
    assert err.startswith("error: --scheduler tcp://10.0.0.5:8786: no worker on the cluster for 60 s")
    assert err.rstrip().endswith("every batch finished before it is kept: run the same command again to resume") \
        == resume


@pytest.mark.parametrize("argv", [
    "run {spec} --out {dir}/out --quiet --scheduler local:2",
    "sensitivity --players 2 --games 10 --scheduler local:2",
    "tune --players 2 --target 0.05:0.6 --knob lobo.track.start=0,1 --budget 4000 --scheduler local:2",
])
@pytest.mark.parametrize("given,passed", [("--ready-timeout 7.5", 7.5), ("", None)])
def test_ready_timeout_reaches_the_dask_runner(argv, given, passed, files, capsys, monkeypatch):
    import sim.distributed as D

    seen = []

    class NoCluster:  # records what the command asks for, and starts nothing
        def __init__(self, scheduler, *, threads_per_task=None, ready_timeout=None):
            seen.append((str(scheduler), ready_timeout))
            raise D.SchedulerError("no cluster in this test")

    monkeypatch.setattr(D, "DaskRunner", NoCluster)
    code, out, err = run_main(f"{argv} {given}".format(**files).split(), capsys)
    assert code == 1 and err.strip() == "error: no cluster in this test", err
    assert seen == [("local:2", passed)]  # None: the runner's own READY_TIMEOUT


def test_ctrl_c_is_one_line_and_exit_130(capsys, monkeypatch):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(sim.cli, "cmd_trace", interrupted)
    code, out, err = run_main(["trace"], capsys)
    assert code == 130
    assert err.strip() == "interrupted"


def _spawn(args, **kw):
    # SIGINT is ignored in background shells; give the child Python's normal handler back
    return subprocess.Popen(CLI + args, cwd=ROOT, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL), **kw)


def _line_or_none(stream, guard_s):
    """The stream's next line, or None if none came within ``guard_s`` (a hang)."""
    import threading

    got = []
    reader = threading.Thread(target=lambda: got.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(guard_s)
    return got[0] if got else None


def test_ctrl_c_stops_a_long_play_between_batches():
    # 10**9 games would take hours (and the old per-game table hundreds of GiB): the
    # interrupt must stop it between two small batches, with one line and exit 130
    p = _spawn(["play", "--games", str(10**9), "--players", "4"])
    try:
        # the interrupt once the games have begun (play says so on stderr), however long the start took
        lines = []  # after "compiling the simulation kernel..." where the cache does not hold it
        while not lines or lines[-1] not in ("", None, "playing 1,000,000,000 games (Ctrl-C stops)...\n"):
            lines.append(_line_or_none(p.stderr, 600))  # a guard against a hang, not a timing
        assert lines[-1] == "playing 1,000,000,000 games (Ctrl-C stops)...\n", (lines, p.poll())
        assert p.poll() is None
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)  # a guard against a hang, not a timing: the games would take hours
        assert p.returncode == 130, err
        assert err.strip().splitlines()[-1] == "interrupted"
        assert "Traceback" not in err
        assert all(line.startswith("compiling the simulation kernel") for line in lines[:-1]), lines
    finally:  # a failed check never leaves hours of games running
        if p.poll() is None:
            p.kill()
            p.communicate()


@pytest.mark.parametrize("cmd", [
    "{cli} trace --players 3 --seed 7 | head -1",
    "{cli} run {spec} --out {dir}/out --quiet | head -2",
])
def test_output_piped_to_head_prints_no_traceback(cmd, files):
    cli = " ".join(CLI)
    r = subprocess.run(["bash", "-c", cmd.format(cli=cli, **files)], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr, r.stderr
    assert 1 <= len(r.stdout.splitlines()) <= 2


@pytest.mark.parametrize("args", [["trace", "--players", "3", "--seed", "7"], ["run", "{spec}", "--out", "{dir}/out2", "--quiet"]])
def test_a_pipe_closed_before_any_output_is_handled(args, files):
    p = _spawn([a.format(**files) for a in args])
    p.stdout.close()  # the reader is gone before the first line is written
    err = p.stderr.read()
    p.wait(timeout=300)
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert p.returncode == 141


# (argv, the function that plays the games, a fragment of the one-line message)
BAD_OUT = [
    ("tune --players 2 --target 0.05:0.6 --knob lobo.track.start=0..1 --budget 4000 --out {file}",
     "sim.tune.tune", "is a file"),
    ("tune --players 2 --target 0.05:0.6 --knob lobo.track.start=0..1 --budget 4000 --out {file}/below",
     "sim.tune.tune", "is a file"),
    ("sensitivity --players 2 --games 100 --out {file}", "sim.sensitivity.sensitivity", "is a file"),
    ("luck --players 2 --games 100 --out {file}", "sim.luck.luck_table", "is a file"),
    ("tune-strategy --players 2 --budget 100 --trial-games 100 --holdout-games 100 --out {missing}/x.toml",
     "sim.tune_strategy.tune", "does not exist"),
    ("tune-strategy --players 2 --budget 100 --trial-games 100 --holdout-games 100 --out {file}/x.toml",
     "sim.tune_strategy.tune", "is a file"),
    ("tune-strategy --players 2 --budget 100 --trial-games 100 --holdout-games 100 --out {dir}",
     "sim.tune_strategy.tune", "is a folder"),
]


@pytest.mark.parametrize("argv,work,fragment", BAD_OUT, ids=[a for a, _, _ in BAD_OUT])
def test_an_unwritable_out_is_refused_before_any_game(argv, work, fragment, files, capsys, monkeypatch):
    def played(*a, **k):
        raise AssertionError("games were played before --out was checked")

    monkeypatch.setattr(work, played)
    code, out, err = run_main(argv.format(**files).split(), capsys)
    assert code == 1, (argv, out, err)
    assert "Traceback" not in err + out
    assert len(err.strip().splitlines()) == 1, err
    assert "--out" in err and fragment in err, err


def _optuna_version() -> str:
    import optuna

    return optuna.__version__


META = {"players": "[2]", "budget": "300", "trial_games": "100", "seed": "3", "holdout_games": "200",
        "holdout_seed": "4", "optuna": f'"{_optuna_version()}"'}


def _tuned_file(tmp_path, **changes) -> str:
    """A tuned file's [meta] with some values changed (None: the key left out)."""
    meta = {**META, **changes}
    p = tmp_path / "tuned.toml"
    p.write_text("[meta]\n" + "".join(f"{k} = {v}\n" for k, v in meta.items() if v is not None), encoding="utf-8")
    return str(p)


@pytest.mark.parametrize("changes,fragment", [
    ({"players": "[7]"}, "meta.players: player counts must be integers from 1 to 6, got 7"),
    ({"players": "[1, 1]"}, "meta.players: player count 1 is listed twice"),
    ({"players": "[]"}, "meta.players: players is empty"),
    ({"players": "2"}, "meta.players"),
    ({"players": '["2"]'}, "meta.players"),
    ({"seed": "-1"}, "meta.seed"),
    ({"seed": "true"}, "meta.seed"),
    ({"budget": "0"}, "meta.budget"),
    ({"trial_games": "1.5"}, "meta.trial_games"),
    ({"holdout_seed": None}, "meta.holdout_seed: Field required"),
    ({"holdout_seed": "3"}, "holdout_seed must differ from seed"),
    ({"optuna": '"0.1"'}, "meta.optuna: searched with optuna 0.1"),
    ({"optuna": None}, "meta.optuna: missing: the file does not say which optuna searched it"),
])
def test_a_bad_tuned_file_to_reproduce_names_the_file_and_key(changes, fragment, tmp_path, capsys, monkeypatch):
    def played(*a, **k):
        raise AssertionError("games were played")

    monkeypatch.setattr("sim.tune_strategy.tune", played)
    path = _tuned_file(tmp_path, **changes)
    code, out, err = run_main(["tune-strategy", "--reproduce", path, "--out", str(tmp_path / "out.toml")], capsys)
    assert code == 1, (out, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "tuned.toml" in err and fragment in err, err


@pytest.mark.parametrize("what,fragment", [
    ("binary", "not a UTF-8 text file"),
    ("malformed", "malformed TOML"),
    ("missing", "tuned file not found"),
    ("dir", "folder"),
    ("no meta", "meta: Field required"),
])
def test_an_unreadable_tuned_file_to_reproduce_is_one_line(what, fragment, files, tmp_path, capsys, monkeypatch):
    def played(*a, **k):
        raise AssertionError("games were played")

    monkeypatch.setattr("sim.tune_strategy.tune", played)
    malformed = tmp_path / "malformed.toml"
    malformed.write_text("[meta\nseed = 1\n", encoding="utf-8")
    no_meta = tmp_path / "no_meta.toml"
    no_meta.write_text("[players.2]\ntrials = 3\n", encoding="utf-8")
    path = {"binary": files["binary"], "malformed": str(malformed), "missing": files["missing"], "dir": files["dir"],
            "no meta": str(no_meta)}[what]
    code, out, err = run_main(["tune-strategy", "--reproduce", path, "--out", str(tmp_path / "out.toml")], capsys)
    assert code == 1, (out, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert fragment in err, err


def test_reproduce_refuses_the_settings_it_takes_from_the_file(tmp_path, capsys, monkeypatch):
    """--players or --seed with --reproduce would be ignored silently: refused instead."""
    monkeypatch.setattr("sim.tune_strategy.tune", lambda *a, **k: pytest.fail("games were played"))
    path = _tuned_file(tmp_path)
    code, out, err = run_main(["tune-strategy", "--reproduce", path, "--players", "4", "--seed", "9"], capsys)
    assert code == 2
    assert "--reproduce" in err and "--players, --seed" in err, err


def test_tune_refuses_bad_player_counts_and_seeds():
    from sim import tune_strategy as TS

    good = dict(players=[2], budget=300, trial_games=100, seed=3, holdout_games=200)
    for bad, fragment in (({"players": 2}, "list"), ({"players": [1, 1]}, "twice"), ({"players": [7]}, "7"),
                          ({"seed": -1}, "seed"), ({"holdout_seed": 2**63}, "holdout_seed")):
        with pytest.raises(TS.TuneStrategyError, match=fragment):
            TS.tune(**{**good, **bad})


# ------------------------------------------------------------------ a rule engine that stops
def _short_fate_deck(monkeypatch, n=9):
    """Every command loads a pack whose Fate deck (9 cards) cannot deal 6 players' secret missions,
    as if the loader had let it through."""
    import dataclasses

    from sim.content import load

    c = load()
    short = dataclasses.replace(c, fate_city=c.fate_city[:n], fate_rank=c.fate_rank[:n], fate_suit=c.fate_suit[:n])
    monkeypatch.setattr(sim.cli, "_load_content", lambda *a, **k: short)


@pytest.mark.parametrize("argv,error", [
    ("play --players 6 --games 10", "RuntimeError: Fate deck exhausted while dealing secret missions"),
    ("play --players 6 --games 10 --engine reference", "RuleError: Fate deck exhausted while dealing secret missions"),
    ("trace --players 6", "RuleError: Fate deck exhausted while dealing secret missions"),
])
def test_a_rule_engine_that_stops_ends_in_one_line_with_its_words(argv, error, capsys, monkeypatch):
    _short_fate_deck(monkeypatch)
    code, out, err = run_main(argv.split(), capsys)
    assert code == 1, err
    assert "Traceback" not in err + out
    lines = [x for x in err.strip().splitlines() if not x.startswith("compiling the simulation kernel")]
    assert len(lines) == 1, err
    assert lines[0].startswith(f"error: the game engine stopped: {error} ("), lines[0]


@pytest.mark.parametrize("argv,target", [
    ("run {spec} --out {dir}/out --quiet", "sim.study.run_study"),
    ("tune --target 0.4:0.5 --knob lobo.track.start=0..1", "sim.tune.tune"),
    ("check experiments/bands.toml", "sim.bands.run_check"),
])
def test_a_rule_engine_error_in_run_tune_or_check_ends_in_one_line(argv, target, files, capsys, monkeypatch):
    from sim.rules.errors import RuleError

    def stop(*a, **k):
        raise RuleError("villain deck and discard pile are both empty")

    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(target, stop)
    code, out, err = run_main(argv.format(**files).split(), capsys)
    assert code == 1 and "Traceback" not in err + out
    assert err.strip() == ("error: the game engine stopped: RuleError: villain deck and discard pile are both empty "
                           "(a content pack it cannot play, or a bug to report with this command line; "
                           "SMERSH_SIM_TRACEBACK=1 shows the traceback)")


ILLEGAL_MODULES = {
    "reference": """
from strategies import HeuristicStrategy


class Greedy(HeuristicStrategy):
    def token(self, view, choices):
        return 99  # no such option


greedy = Greedy(name="greedy")
""",
    "kernel": """
from numba import njit

from sim.kernel.custom import KernelStrategy


@njit
def token(view, choices, n):
    return 99  # no such option


greedy = KernelStrategy("heuristic", token=token, name="greedy")
""",
    "uncompilable": """
from numba import njit

from sim.kernel.custom import KernelStrategy


@njit
def token(view, choices, n):
    return view.no_such_thing


greedy = KernelStrategy("heuristic", token=token, name="greedy")
"""}

ILLEGAL_SPEC = """
[experiment]
name = "illegal"
seed = 3
games = 10
batch = 10
engine = "{engine}"

[grid]
players = [2]
strategies = ["greedy"]

[strategy.greedy]
module = "cli_illegal_{kind}:greedy"
"""


@pytest.mark.parametrize("kind,error", [
    ("reference", r"error: strategy 'greedy' chose token option 99 of \d+"),
    # compiled code refuses it, knowing no name: the KernelStrategy's run names it
    pytest.param("kernel", r"error: strategy 'greedy': KernelStrategy decision token answered 99 \(legal: 0 to \d+\)",
                 marks=[pytest.mark.slow, pytest.mark.skipif(NO_JIT, reason="a pairing is compiled code")]),
    # numba's pages of why a decision does not compile, said in one line naming the user's code
    pytest.param("uncompilable", r"error: strategy 'greedy': KernelStrategy decisions \(token\) do not compile at "
                 r".*cli_illegal_uncompilable\.py, line 9 \(return view\.no_such_thing\): Unknown attribute "
                 r"'no_such_thing' of type PlayerView",
                 marks=pytest.mark.skipif(NO_JIT, reason="a pairing is compiled code")),
])
def test_a_strategys_illegal_answer_in_a_run_ends_in_one_line_naming_it(kind, error, tmp_path, capsys, monkeypatch):
    """A spec's own strategy (a module path) that answers illegally, or does not compile: one line."""
    from strategies import modules

    engine = "reference" if kind == "reference" else "kernel"
    (tmp_path / f"cli_illegal_{kind}.py").write_text(ILLEGAL_MODULES[kind])
    (tmp_path / "illegal.toml").write_text(ILLEGAL_SPEC.format(engine=engine, kind=kind))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, f"cli_illegal_{kind}", raising=False)
    monkeypatch.delitem(modules._IMPORTED, f"cli_illegal_{kind}", raising=False)
    code, out, err = run_main(["run", str(tmp_path / "illegal.toml"), "--out", str(tmp_path / "out"), "--quiet"],
                              capsys)
    assert code == 1 and "Traceback" not in err + out
    lines = [x for x in err.strip().splitlines() if not x.startswith("compiling the simulation kernel")]
    assert len(lines) == 1, err
    assert re.fullmatch(error, lines[0]), lines[0]


def test_the_engine_traceback_on_request(capsys, monkeypatch):
    from sim.rules.errors import RuleError

    _short_fate_deck(monkeypatch)
    monkeypatch.setenv("SMERSH_SIM_TRACEBACK", "1")
    with pytest.raises(RuleError, match="Fate deck exhausted"):
        main(["trace", "--players", "6"])
