"""A results folder is one complete run: manifest, lock, metadata for any reader, documented columns."""

import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import polars as pl
import pyarrow.parquet as pq
import pytest

import sim.study
from sim.compare import compare_run
from sim.experiments import load_spec
from sim.manifest import MANIFEST, ResultsError, check_folder, locked, read_metadata
from sim.study import read_summary, run_study

ROOT = Path(__file__).resolve().parent.parent

SPEC = """
[experiment]
name = "folder"
seed = 7
games = 48
batch = 16

[grid]
players = [2]
strategies = ["heuristic", "cautious"]

[compare]
baseline = { strategy = "heuristic" }
"""


@pytest.fixture
def spec(tmp_path):
    p = tmp_path / "folder.toml"
    p.write_text(textwrap.dedent(SPEC))
    return load_spec(p)


class Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs, no handler catches it."""


def test_rerun_with_other_games_killed_mid_assembly_is_refused(spec, tmp_path, monkeypatch):
    out = tmp_path / "out"
    assert run_study(spec, out, progress=False, charts=False).finished
    compare_run(out)  # complete and consistent

    # the repro: a rerun with other --games dies after summary.parquet, before games.parquet
    def die(*args, **kwargs):
        raise Killed

    with monkeypatch.context() as m:
        m.setattr(pq, "ParquetWriter", die)
        with pytest.raises(Killed):
            run_study(spec.with_games(96), out, progress=False, charts=False)
    assert pl.read_parquet(out / "summary.parquet")["games"].to_list() == [96, 96]
    assert pl.read_parquet(out / "games.parquet").height == 2 * 48  # the mixed state the issue saw
    for reader in (compare_run, read_summary, read_metadata, check_folder):
        with pytest.raises(ResultsError, match="no manifest.json") as e:
            reader(out)
        assert str(out) in str(e.value) and "run the study again" in str(e.value)
    # the CLI says so in one line
    cli = subprocess.run([sys.executable, "-m", "sim.cli", "compare", str(out)], capture_output=True, text=True)
    assert cli.returncode != 0 and "no manifest.json" in cli.stderr and "Traceback" not in cli.stderr

    # running again repairs the folder
    assert run_study(spec.with_games(96), out, progress=False, charts=False).finished
    assert compare_run(out)[0]["games"].to_list() == [96]
    assert pl.read_parquet(out / "games.parquet").height == 2 * 96


def test_file_from_another_run_is_refused(spec, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    run_study(spec, a, progress=False, charts=False)
    run_study(spec.with_games(32), b, progress=False, charts=False)
    shutil.copyfile(b / "games.parquet", a / "games.parquet")
    with pytest.raises(ResultsError, match=r"games\.parquet: does not match") as e:
        compare_run(a)
    assert "sha256" in str(e.value) or "bytes" in str(e.value)
    # an old manifest beside new files is refused just the same
    shutil.copyfile(b / MANIFEST, a / MANIFEST)
    with pytest.raises(ResultsError, match="does not match"):
        read_summary(a)


def test_manifest_names_every_file_of_the_run(spec, tmp_path):
    out = tmp_path / "out"
    report = run_study(spec, out, progress=False)
    manifest = json.loads((out / MANIFEST).read_text())
    assert set(manifest["files"]) == {"summary.parquet", "games.parquet", "metadata.json", "win_rate_by_players.png",
                                      "outcomes.png", "game_length.png"}
    assert manifest["files"]["summary.parquet"]["rows"] == 2 and manifest["files"]["games.parquet"]["rows"] == 96
    assert manifest["key"] == read_metadata(out)["key"]
    assert report.files[-1] == out / MANIFEST
    # a listed file that is absent only matters to a reader that needs it (games.parquet is not committed)
    (out / "games.parquet").unlink()
    check_folder(out)
    with pytest.raises(ResultsError, match=r"games\.parquet: the per-game table is not in this folder") as e:
        check_folder(out, need=("games.parquet",))
    assert "does not match" not in str(e.value) and "mixes files" not in str(e.value)


def test_a_per_game_table_not_kept_is_named_with_the_command_that_writes_it(spec, tmp_path, monkeypatch):
    """A clone of the repository has results/player_count without games.parquet (not committed, by design):
    read_games says the table is not there and how to write it, not that the folder mixes runs; a
    games.parquet of another run still is a mix."""
    clone = tmp_path / "results" / "player_count"
    shutil.copytree(ROOT / "results" / "player_count", clone, ignore=shutil.ignore_patterns("games.parquet", ".*"))
    monkeypatch.chdir(ROOT)
    with pytest.raises(ResultsError) as e:
        sim.study.read_games(clone)
    msg = str(e.value)
    assert msg.startswith(f"{clone / 'games.parquet'}: the per-game table is not in this folder"), msg
    assert "not committed" in msg and f"`smersh-sim run experiments/player_count.toml --out {clone}`" in msg
    assert "mixes files" not in msg
    read_summary(clone)  # the summary is there and checks
    # the advice works: the spec run again into the folder writes the table
    out = tmp_path / "out"
    run_study(spec, out, progress=False, charts=False)
    (out / "games.parquet").unlink()
    with pytest.raises(ResultsError, match=re.escape(f"`smersh-sim run SPEC (the spec file folder.toml) --out {out}`")):
        sim.study.read_games(out)
    run_study(spec, out, progress=False, charts=False)
    assert sim.study.read_games(out).height == 96
    # a real mismatch keeps its own words
    pl.read_parquet(out / "games.parquet").head(10).write_parquet(out / "games.parquet")
    with pytest.raises(ResultsError, match=r"games\.parquet: does not match .*mixes files of different runs"):
        sim.study.read_games(out)


def test_missing_folder_and_unreadable_manifest(tmp_path):
    with pytest.raises(ResultsError, match="no such results folder"):
        compare_run(tmp_path / "nowhere")
    (tmp_path / "x").mkdir()
    with pytest.raises(ResultsError, match="no results here"):
        compare_run(tmp_path / "x")
    (tmp_path / "x" / MANIFEST).write_text("{not json")
    with pytest.raises(ResultsError, match="unreadable manifest"):
        compare_run(tmp_path / "x")


# ------------------------------------------------------------------ the lock
HOLD_RUN = """
import sys
import sim.run, sim.study
from sim.experiments import load_spec

real = sim.run.simulate


def paced(*args, **kwargs):
    print("playing", flush=True)
    sys.stdin.readline()  # the test lets each batch go on
    return real(*args, **kwargs)


sim.run.simulate = paced
report = sim.study.run_study(load_spec(sys.argv[1]), sys.argv[2], progress=False, charts=False)
print("finished", report.finished, len(report.computed), flush=True)
"""


def test_two_concurrent_runs_into_one_folder(spec, tmp_path):
    out = tmp_path / "out"
    first = subprocess.Popen([sys.executable, "-c", HOLD_RUN, str(spec.path), str(out)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert first.stdout.readline() == "playing\n"  # the first run holds the folder, mid-batch
        with pytest.raises(ResultsError) as e:
            run_study(spec, out, progress=False, charts=False)
        msg = str(e.value)
        assert str(out) in msg and f"process {first.pid}" in msg and "another run is writing" in msg
        first.stdin.write("\n" * 6)
        first.stdin.close()
        assert first.stdout.read().split() == ["playing"] * 5 + ["finished", "True", "6"]
        assert first.wait(timeout=300) == 0
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    second = run_study(spec, out, progress=False, charts=False)  # free again: reuses the first run's batches
    assert second.finished and second.computed == [] and len(second.skipped) == 6
    check_folder(out)


HOLD_LOCK = """
import sys, time
from pathlib import Path
from sim.manifest import locked

with locked(Path(sys.argv[1])):
    print("locked", flush=True)
    time.sleep(600)
"""


def test_lock_of_a_killed_run_does_not_block(spec, tmp_path):
    out = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(out)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert holder.stdout.readline() == "locked\n"
        with pytest.raises(ResultsError, match=f"process {holder.pid}"):
            with locked(out):
                pass
    finally:
        holder.kill()  # SIGKILL: no cleanup runs in the holder
        holder.wait()
    assert (out / ".lock").exists()
    assert run_study(spec, out, progress=False, charts=False).finished


def test_cli_refuses_a_locked_folder_in_one_line(spec, tmp_path):
    out = tmp_path / "out"
    with locked(out):
        r = subprocess.run([sys.executable, "-m", "sim.cli", "run", str(spec.path), "--out", str(out), "--quiet"],
                           capture_output=True, text=True, cwd=ROOT)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert f"error: {out}: another run is writing into this folder (process " in r.stderr


AS_ON_WINDOWS = """
import errno, json, os, sys, types
from pathlib import Path

sys.modules["fcntl"] = None  # as on Windows: no fcntl, no os.pwrite
del os.pwrite
calls, busy = [], []


def locking(fd, mode, nbytes):
    calls.append([mode, nbytes, os.lseek(fd, 0, os.SEEK_CUR)])
    if busy:
        raise PermissionError(errno.EACCES, "Permission denied")


sys.modules["msvcrt"] = types.SimpleNamespace(LK_UNLCK=0, LK_NBLCK=2, locking=locking)
from sim.manifest import _LOCK_OFFSET, ResultsError, locked

out = Path(sys.argv[1])
with locked(out):
    record = json.loads((out / ".lock").read_text())
busy.append(True)
(out / ".lock").write_text(json.dumps({"pid": 4242, "host": "far", "command": "smersh-sim run x"}))
try:
    with locked(out):
        refused = None
except ResultsError as e:
    refused = str(e)
print(json.dumps({"offset": _LOCK_OFFSET, "calls": calls, "pid": record["pid"], "refused": refused}))
"""


def test_lock_without_fcntl_uses_the_windows_primitive(tmp_path):
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-c", AS_ON_WINDOWS, str(out)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    at = got["offset"]
    assert at > 4096  # past the holder record: Windows locks are mandatory, a refused run must still read it
    assert got["calls"] == [[2, 1, at], [0, 1, at], [2, 1, at]]  # lock, unlock; the refused second holder
    assert got["pid"] > 0 and got["pid"] != 4242
    assert got["refused"] == (f"{out}: another run is writing into this folder (process 4242 on far: "
                              "smersh-sim run x); wait for it to finish, or write elsewhere with --out")


# ------------------------------------------------------------------ metadata and committed files
def test_metadata_readable_without_polars_or_pyarrow_metadata(spec, tmp_path):
    out = tmp_path / "out"
    run_study(spec, out, progress=False, charts=False)
    plain = json.loads((out / "metadata.json").read_text())
    assert plain["spec"]["experiment"]["name"] == "folder" and plain["seed"] == 7
    assert set(plain) == {"spec", "spec_file", "seed", "content_hash", "rules_version", "strategy_params", "key"}
    # the same from the helper, from each Parquet file, and beside a pandas frame
    meta = read_metadata(out)
    assert {k: v for k, v in meta.items() if k != "provenance"} == plain
    assert set(meta["provenance"]) == {"git_revision", "versions", "source_hash", "resume_key", "engine",
                                       "batch_engines"}
    assert meta["provenance"]["engine"] == "kernel" and meta["provenance"]["batch_engines"] == {"kernel": 6}
    # the packages that compile the kernel (numba, llvmlite) and run it, as a Dask worker compares them
    import llvmlite
    import numba

    versions = meta["provenance"]["versions"]
    assert (versions["numba"], versions["llvmlite"]) == (numba.__version__, llvmlite.__version__)
    for name in ("summary.parquet", "games.parquet"):
        assert read_metadata(out / name) == plain
    df = pd.read_parquet(out / "summary.parquet")
    df.attrs.update(read_metadata(out))
    assert df.attrs["seed"] == 7 and len(df) == 2


def test_metadata_of_a_sensitivity_or_tune_output_folder(tmp_path):
    """`sensitivity --out` and `tune --out` write no manifest: read_metadata takes their folders (the
    committed results/sensitivity and results/tune_4p) and says which files it reads when it finds none."""
    folder = ROOT / "results" / "sensitivity"
    meta = read_metadata(folder)
    assert meta == read_metadata(folder / "sensitivity.parquet")
    assert meta["strategy"] == "heuristic" and meta["engine"] == "kernel" and isinstance(meta["seed"], int)
    tune = json.loads((ROOT / "results" / "tune_4p" / "tune.json").read_text())
    meta = read_metadata(ROOT / "results" / "tune_4p")
    assert meta == read_metadata(ROOT / "results" / "tune_4p" / "tune.json")
    assert meta == {k: tune[k] for k in ("strategy", "params", "engine", "content_hash", "rules_version", "seed",
                                         "budget", "plays")}
    # both say what the seats played at each player count: the heuristic as shipped, by name and parameters
    sens = read_metadata(folder)["plays"]
    assert set(sens) == {"2", "4"} and set(meta["plays"]) == {str(n) for n in range(1, 7)}
    from strategies import make

    assert all(p == {"name": "heuristic", "params": make("heuristic").params()}
               for p in [*sens.values(), *meta["plays"].values()])
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "other.json").write_text('{"seed": 1}')
    for where in (tmp_path / "other", ROOT / "results"):  # results of neither kind
        with pytest.raises(ResultsError, match="no results here that read_metadata knows; it reads a `smersh-sim "
                                               r"run` folder \(with its manifest.json\), a `sensitivity --out` folder "
                                               r"\(sensitivity.parquet\), a `tune --out` folder \(tune.json\)"):
            read_metadata(where)
    with pytest.raises(ResultsError, match="not a tune.json of `smersh-sim tune --out`"):
        read_metadata(tmp_path / "other" / "other.json")


def test_results_bytes_do_not_depend_on_revision_versions_or_code(spec, tmp_path, monkeypatch):
    """`make run` rewrites no committed file when the numbers did not change."""
    out = tmp_path / "out"
    run_study(spec, out, progress=False)
    files = sorted(p.name for p in out.iterdir() if p.is_file() and p.name not in ("provenance.json", ".lock"))
    assert "summary.parquet" in files and MANIFEST in files and "metadata.json" in files
    before = {f: (out / f).read_bytes() for f in files}
    prov = (out / "provenance.json").read_bytes()

    monkeypatch.setattr(sim.study, "git_revision", lambda: "0123456789abcdef0123456789abcdef01234567+dirty")
    monkeypatch.setattr(sim.study, "package_versions", lambda: {"python": "3.99", "numba": "9.9"})
    monkeypatch.setattr(sim.study, "source_hash", lambda roots=None: "f" * 64)  # other code: every batch replays
    again = run_study(spec, out, progress=False)
    assert again.skipped == [] and again.computed
    for f in files:
        assert (out / f).read_bytes() == before[f], f
    assert (out / "provenance.json").read_bytes() != prov
    assert read_metadata(out)["provenance"]["git_revision"].startswith("0123456789abcdef")


def test_volatile_files_are_not_committed():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    for rel in ("results/player_count/provenance.json", "results/player_count/.lock",
                "results/player_count/.state/x/key.json", "results/player_count/games.parquet"):
        r = subprocess.run(["git", "check-ignore", "-q", rel], cwd=ROOT)
        assert r.returncode == 0, f"{rel} is not ignored by .gitignore"
    for rel in ("results/player_count/manifest.json", "results/player_count/metadata.json",
                "results/player_count/summary.parquet"):
        r = subprocess.run(["git", "check-ignore", "-q", rel], cwd=ROOT)
        assert r.returncode == 1, f"{rel} should be committed"


def test_committed_results_match_their_manifest():
    folder = ROOT / "results" / "player_count"
    manifest = check_folder(folder)
    meta = read_metadata(folder)
    assert manifest["key"] == meta["key"]
    assert meta["spec"] == load_spec(ROOT / "experiments" / "player_count.toml").raw


# ------------------------------------------------------------------ the data dictionary
def documented_columns(section: str) -> list[str]:
    text = (ROOT / "docs" / "results.md").read_text()
    m = re.search(rf"^## `{re.escape(section)}`\n(.*?)(?=^## |\Z)", text, flags=re.S | re.M)
    assert m, f"docs/results.md has no section ## `{section}`"
    cols = []
    for line in m.group(1).splitlines():
        cell = re.match(r"^\| `([^`]+)` \|", line)
        if cell:
            cols.append(cell.group(1))
    return cols


def expand(names: list[str]) -> list[str]:
    """Documented rows may stand for a family: `share_<outcome>` / `n_<outcome>` / `mean_<counter>`."""
    from sim.study import MEAN_COLUMNS, OUTCOMES, QUANTILES

    out = []
    for n in names:
        if n == "share_<outcome>, n_<outcome>":
            for o in OUTCOMES:
                out += [f"share_{o}", f"n_{o}"]
        elif n == "turns_q<NN>":
            out += [f"turns_q{int(q * 100):02d}" for q in QUANTILES]
        elif n == "mean_<counter>":
            out += [f"mean_{c}" for c in MEAN_COLUMNS]
        elif n == "n_loss_intel_short_<type>":
            from sim.tally import INTEL_TYPE_NAMES

            out += [f"n_loss_intel_short_{t}" for t in INTEL_TYPE_NAMES]
        else:
            out.append(n)
    return out


def test_data_dictionary_lists_every_column(spec, tmp_path):
    out = tmp_path / "out"
    run_study(spec, out, progress=False, charts=False)
    for name in ("summary.parquet", "games.parquet"):
        actual = pq.read_schema(out / name).names
        assert expand(documented_columns(name)) == actual, name
    # each mean_<counter> is the mean of a documented per-game column
    from sim.study import MEAN_COLUMNS

    assert set(MEAN_COLUMNS) <= set(documented_columns("games.parquet"))


def test_rerun_leaves_no_chart_of_an_earlier_run(spec, tmp_path):
    """Charts drawn from an earlier run of the folder go when the folder is run again: the study's
    charts when the new run draws none, and compare's paired-differences charts always (the one against another
    baseline, in a file of its own, too)."""
    out = tmp_path / "out"
    assert run_study(spec, out, progress=False, charts=True).finished
    charts = ["win_rate_by_players.png", "outcomes.png", "game_length.png"]
    assert all((out / c).is_file() for c in charts)
    cli = subprocess.run([sys.executable, "-m", "sim.cli", "compare", str(out)], capture_output=True, text=True,
                         cwd=ROOT)
    assert cli.returncode == 0, cli.stderr
    assert (out / "paired_differences.png").is_file()
    # against another baseline: a chart of its own, the spec's baseline's left as it was; --json writes none
    from sim.cli import main

    shown = (out / "paired_differences.png").read_bytes()
    before = sorted(p.name for p in out.iterdir())
    assert main(["compare", str(out), "--baseline", "strategy=cautious", "--json"]) == 0
    assert sorted(p.name for p in out.iterdir()) == before
    assert main(["compare", str(out), "--baseline", "strategy=cautious"]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(before + ["paired_differences.strategy=cautious.png"])
    assert (out / "paired_differences.png").read_bytes() == shown
    (out / "paired_differences.png").unlink()  # the spec's own baseline given by name: the folder's chart again
    assert main(["compare", str(out), "--baseline", "strategy=heuristic"]) == 0
    assert (out / "paired_differences.png").is_file() and not list(out.glob("*heuristic*"))
    (out / "paired_differences_notes.png").write_bytes(b"a file of the user's")  # not compare's: left alone
    assert run_study(spec.with_games(96), out, progress=False, charts=False).finished
    assert not any((out / c).exists() for c in charts + ["paired_differences.png"])
    assert [p.name for p in out.glob("paired_differences*")] == ["paired_differences_notes.png"]
    check_folder(out)


def test_games_table_failing_midway_leaves_no_temporary_file(spec, tmp_path, monkeypatch):
    """A games.parquet that cannot be finished (a full disk, say) leaves no games.parquet.tmp behind."""
    out = tmp_path / "out"

    class Full:
        def __init__(self, path, schema, **kwargs):
            Path(path).write_bytes(b"partial")
            self.schema = schema

        def write_table(self, *args, **kwargs):
            raise OSError(28, "No space left on device")

        def close(self):
            pass

    monkeypatch.setattr(pq, "ParquetWriter", Full)
    with pytest.raises(OSError, match="No space left"):
        run_study(spec, out, progress=False, charts=False)
    assert not (out / "games.parquet.tmp").exists()


def test_each_reader_takes_its_own_file_and_names_another(spec, tmp_path):
    """read_summary of games.parquet returned the per-game table as the summary, and of metadata.json said
    "no such results folder" beside the folder; each reader takes a folder or its own file, and refuses
    another, naming the file and the reader that reads it."""
    from sim.study import read_games

    out = tmp_path / "out"
    run_study(spec, out, progress=False, charts=False)
    for read, file, says in [
        (read_summary, "games.parquet", f"read_summary reads a results folder or its summary.parquet, not games.parquet "
                                        f"(the per-game table); read it with sim.study.read_games({str(out)!r})"),
        (read_summary, "metadata.json", f"read_summary reads a results folder or its summary.parquet, not metadata.json "
                                        f"(the run's metadata); read it with sim.study.read_metadata({str(out)!r})"),
        (read_summary, "manifest.json", "read_summary reads a results folder or its summary.parquet, not manifest.json "
                                        "(the run's manifest)"),
        (read_games, "summary.parquet", f"read_games reads a results folder or its games.parquet, not summary.parquet "
                                        f"(the summary); read it with sim.study.read_summary({str(out)!r})"),
    ]:
        with pytest.raises(ResultsError) as e:
            read(out / file)
        assert str(e.value) == f"{out / file}: {says}"
    assert read_summary(out / "summary.parquet").equals(read_summary(out))
    assert read_games(out / "games.parquet").equals(read_games(out))
    # compare too ("no such results folder" had been said of an existing summary.parquet)
    from sim.compare import compare_run

    assert compare_run(out / "summary.parquet")[0].equals(compare_run(out)[0])
    with pytest.raises(ResultsError, match=r"games\.parquet: compare_run reads a results folder or its summary\.parquet"):
        compare_run(out / "games.parquet")
    # a path that is no file of the run is still taken for a folder
    with pytest.raises(ResultsError, match=r"nope\.json: no such results folder"):
        read_summary(out / "nope.json")


def test_readers_refuse_a_run_of_other_rules(spec, tmp_path, monkeypatch):
    """summary, per-game table and compare describe the rules they were played by: after a RULES_VERSION
    change they are refused, naming both versions, until the study runs again."""
    import sim
    from sim.compare import compare_run
    from sim.study import read_games, read_summary

    out = tmp_path / "out"
    run_study(spec, out, progress=False, charts=False)
    assert read_summary(out).height == read_summary(out / "summary.parquet").height > 0
    assert read_games(out, columns=["win"]).height > 0
    monkeypatch.setattr(sim, "RULES_VERSION", sim.RULES_VERSION + ".next")
    for read in (read_summary, read_games, compare_run):
        with pytest.raises(ResultsError, match=r"played by RULES_VERSION '\w+', but this code plays '\w+\.next'"):
            read(out)
    assert run_study(spec, out, progress=False, charts=False).finished  # played again: readable
    assert read_summary(out).height > 0
