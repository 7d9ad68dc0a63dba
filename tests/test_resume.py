"""Resuming a study is safe: stale, copied and corrupt batches are replayed, never used."""

import json
import shutil
import textwrap
from pathlib import Path

import polars as pl
import pytest

import sim
import sim.study
from sim.content import DEFAULT_PACK, load
from sim.experiments import load_spec
from sim.study import code_roots, run_study, source_hash

PACK_SPEC = """
[experiment]
name = "packed"
seed = 11
games = 64
batch = 16
content = "pack"

[grid]
players = [4]
"""

TWO_CELLS = """
[experiment]
name = "two"
seed = 3
games = 48
batch = 16

[grid]
players = [2, 3]
"""


def write(folder: Path, text: str, name: str = "spec.toml") -> Path:
    p = folder / name
    p.write_text(textwrap.dedent(text))
    return p


def packed(tmp_path: Path) -> Path:
    """A spec whose content is a copy of the default pack beside it."""
    shutil.copytree(DEFAULT_PACK, tmp_path / "pack")
    return write(tmp_path, PACK_SPEC)


def edit_lobo_start(pack: Path, start: int) -> None:
    f = pack / "lobo.toml"
    text = f.read_text()
    assert "start = 0\n" in text
    f.write_text(text.replace("start = 0\n", f"start = {start}\n", 1))


def win_rate(out: Path) -> float:
    return pl.read_parquet(out / "summary.parquet")["win_rate"][0]


def test_pack_edited_between_runs_replays_every_batch(tmp_path, capsys):
    spec_file = packed(tmp_path)
    first = run_study(load_spec(spec_file), tmp_path / "out", progress=False, charts=False)
    assert first.finished and len(first.computed) == 4
    before = win_rate(tmp_path / "out")

    edit_lobo_start(tmp_path / "pack", 4)
    second = run_study(load_spec(spec_file), tmp_path / "out", progress=False, charts=False)
    assert second.finished
    assert second.skipped == [] and len(second.computed) == 4  # nothing reused from the old pack
    assert any("another content pack for setup 'default'" in n for n in second.notices), second.notices
    assert "notice:" in capsys.readouterr().err

    # the same bytes as a fresh run on the edited pack, and labelled with its hash
    fresh = run_study(load_spec(spec_file), tmp_path / "fresh", progress=False, charts=False)
    assert fresh.skipped == []
    for name in ("summary.parquet", "games.parquet"):
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "fresh" / name).read_bytes(), name
    assert win_rate(tmp_path / "out") < before  # Dr. Lobo starting at 4 is much harder
    meta = sim.study.read_metadata(tmp_path / "out")
    assert meta["content_hash"] == {"default": load(tmp_path / "pack").hash}


def test_pack_edited_between_interrupted_and_resumed_run_does_not_blend(tmp_path):
    spec_file = packed(tmp_path)
    partial = run_study(load_spec(spec_file), tmp_path / "out", progress=False, charts=False, max_batches=2)
    assert not partial.finished and len(partial.computed) == 2
    edit_lobo_start(tmp_path / "pack", 4)
    resumed = run_study(load_spec(spec_file), tmp_path / "out", progress=False, charts=False)
    assert resumed.finished and resumed.skipped == [] and len(resumed.computed) == 4
    run_study(load_spec(spec_file), tmp_path / "fresh", progress=False, charts=False)
    assert (tmp_path / "out" / "summary.parquet").read_bytes() == (tmp_path / "fresh" / "summary.parquet").read_bytes()


def test_unchanged_inputs_reuse_every_batch(tmp_path):
    spec_file = packed(tmp_path)
    run_study(load_spec(spec_file), tmp_path / "out", progress=False, charts=False)
    again = run_study(load_spec(spec_file), tmp_path / "out", progress=False, charts=False)
    assert again.computed == [] and len(again.skipped) == 4 and again.notices == []


def copy_py_tree(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, ignore=lambda d, names: [n for n in names if n == "__pycache__" or (
        (Path(d) / n).is_file() and not n.endswith(".py"))])
    return dst


def test_strategy_source_change_replays(tmp_path, monkeypatch):
    sim_root, strategies_root = code_roots()
    copy = copy_py_tree(strategies_root, tmp_path / "src" / "strategies")
    monkeypatch.setattr(sim.study, "code_roots", lambda: [sim_root, copy])
    spec_file = write(tmp_path, TWO_CELLS)
    run_study(load_spec(spec_file), tmp_path / "out", progress=False, charts=False)

    heuristic = copy / "heuristic.py"
    text = heuristic.read_text()
    assert "pool_target: int = 8" in text
    heuristic.write_text(text.replace("pool_target: int = 8", "pool_target: int = 9"))
    again = run_study(load_spec(spec_file), tmp_path / "out", progress=False, charts=False)
    assert again.skipped == [] and len(again.computed) == 6
    assert any("other simulator code" in n for n in again.notices), again.notices


def test_rules_version_change_replays(tmp_path, monkeypatch):
    spec_file = write(tmp_path, TWO_CELLS)
    run_study(load_spec(spec_file), tmp_path / "out", progress=False, charts=False)
    monkeypatch.setattr(sim, "RULES_VERSION", sim.RULES_VERSION + ".next")
    again = run_study(load_spec(spec_file), tmp_path / "out", progress=False, charts=False)
    assert again.skipped == [] and any("RULES_VERSION" in n for n in again.notices)
    assert sim.study.read_metadata(tmp_path / "out")["rules_version"] == sim.RULES_VERSION


def test_code_hash_covers_what_decides_a_game(tmp_path):
    import strategies

    assert code_roots() == [Path(sim.__file__).resolve().parent, Path(strategies.__file__).resolve().parent]
    roots = [copy_py_tree(r, tmp_path / r.name) for r in code_roots()]
    base = source_hash(roots)
    assert base == source_hash(roots)
    assert source_hash() == source_hash(code_roots())

    def edited(rel: str) -> str:
        f = tmp_path / rel
        text = f.read_text()
        f.write_text(text + "\n# edited\n")
        try:
            return source_hash(roots)
        finally:
            f.write_text(text)

    for rel in ("sim/rules/game.py", "sim/kernel/game.py", "sim/content/loader.py", "sim/rng.py",
                "sim/run.py", "sim/study.py", "strategies/heuristic.py", "strategies/base.py"):
        assert edited(rel) != base, rel
    for rel in ("sim/cli.py", "sim/charts.py", "sim/compare.py", "sim/bands.py"):
        assert edited(rel) == base, rel
    (tmp_path / "sim" / "kernel" / "new_module.py").write_text("X = 1\n")
    assert source_hash(roots) != base  # a new module counts too


# ------------------------------------------------------------------ copied and corrupt batches
@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("clean")
    spec_file = write(tmp, TWO_CELLS)
    report = run_study(load_spec(spec_file), tmp / "out", progress=False, charts=False)
    assert report.finished
    return spec_file, tmp / "out"


def rerun_into_copy(clean, tmp_path, damage):
    """Copy the clean run's folder, damage its state, run again; the result must equal the clean run."""
    spec_file, out = clean
    spec = load_spec(spec_file)
    work = tmp_path / "out"
    shutil.copytree(out, work)
    state = work / ".state"
    damaged = damage(state)
    report = run_study(spec, work, progress=False, charts=False)
    assert report.finished
    for name in ("summary.parquet", "games.parquet"):
        assert (work / name).read_bytes() == (out / name).read_bytes(), name
    return report, damaged


COPIES = {
    # a whole batch (aggregate, per-game table and record) of another cell
    "other cell, with its record": (("p2_heuristic_standard_default_default", 1),
                                    ("p3_heuristic_standard_default_default", 1), ("npz", "parquet", "json"), "another cell"),
    # only the aggregate of another cell: it no longer matches this batch's checksum
    "other cell, aggregate only": (("p2_heuristic_standard_default_default", 1),
                                   ("p3_heuristic_standard_default_default", 1), ("npz",), "sha256 differs"),
    # another game range of the same cell
    "other range, with its record": (("p3_heuristic_standard_default_default", 0),
                                     ("p3_heuristic_standard_default_default", 2), ("npz", "parquet", "json"), "another batch"),
}


@pytest.mark.parametrize("kind", list(COPIES))
def test_copied_batch_is_detected_and_replayed(clean, tmp_path, kind, capsys):
    (src_cell, src_b), (dst_cell, dst_b), exts, reason = COPIES[kind]

    def damage(state):
        for ext in exts:
            stem = "games" if ext == "parquet" else "batch"
            name = f"{stem}_{{:06d}}.{ext}"
            shutil.copyfile(state / src_cell / name.format(src_b), state / dst_cell / name.format(dst_b))
        return state / dst_cell

    report, where = rerun_into_copy(clean, tmp_path, damage)
    assert report.replayed == [(dst_cell, dst_b)]
    assert len(report.notices) == 1 and str(where) in report.notices[0] and reason in report.notices[0], report.notices
    assert str(where) in capsys.readouterr().err


def _flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x5A
    path.write_bytes(bytes(data))


def _npz_data_offset(path: Path) -> int:
    """The last byte of the first array's stored data (so the zip's CRC check fails, not its directory)."""
    import struct
    import zipfile

    with zipfile.ZipFile(path) as z:
        info = z.infolist()[0]
    header = path.read_bytes()[info.header_offset: info.header_offset + 30]
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    return info.header_offset + 30 + name_len + extra_len + info.compress_size - 1


CORRUPTIONS = {
    "truncated npz": ("batch_000001.npz", lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])),
    "empty npz": ("batch_000001.npz", lambda p: p.write_bytes(b"")),
    "npz with a bad CRC": ("batch_000001.npz", lambda p: _flip(p, _npz_data_offset(p))),
    "flipped byte in games parquet": ("games_000001.parquet", lambda p: _flip(p, p.stat().st_size // 2)),
    "truncated games parquet": ("games_000001.parquet", lambda p: p.write_bytes(p.read_bytes()[:100])),
    "missing npz": ("batch_000001.npz", lambda p: p.unlink()),
    "truncated record": ("batch_000001.json", lambda p: p.write_bytes(p.read_bytes()[:10])),
}


@pytest.mark.parametrize("kind", list(CORRUPTIONS))
def test_corrupt_batch_file_is_replayed_and_named(clean, tmp_path, kind, capsys):
    name, corrupt = CORRUPTIONS[kind]
    cell = "p3_heuristic_standard_default_default"

    def damage(state):
        corrupt(state / cell / name)
        return state / cell / name

    report, path = rerun_into_copy(clean, tmp_path, damage)
    assert report.replayed == [(cell, 1)]
    assert len(report.skipped) == 5
    assert len(report.notices) == 1 and str(path) in report.notices[0], report.notices
    assert f"notice: {path}" in capsys.readouterr().err


def test_npz_with_bad_crc_really_fails_to_load(clean, tmp_path):
    """The CRC case above damages the array data itself, not only the checksum's input."""
    import zipfile

    import numpy as np

    spec_file, out = clean
    src = next((out / ".state").glob("p3_heuristic_standard_default_default/batch_000001.npz"))
    bad = tmp_path / "bad.npz"
    shutil.copyfile(src, bad)
    _flip(bad, _npz_data_offset(bad))
    with pytest.raises(zipfile.BadZipFile, match="CRC"):
        dict(np.load(bad))


def test_batch_record_names_cell_seed_and_game_range(clean):
    spec_file, out = clean
    rec = json.loads((out / ".state" / "p3_heuristic_standard_default_default" / "batch_000002.json").read_text())
    assert rec["cell"] == "p3_heuristic_standard_default_default"
    assert (rec["seed"], rec["game0"], rec["games"]) == (3, 32, 16)
    assert set(rec["files"]) == {"batch_000002.npz", "games_000002.parquet"}


# ------------------------------------------------------------------ another engine
def _records(state: Path) -> dict[str, dict]:
    return {f"{r.parent.name}/{r.name}": json.loads(r.read_text()) for r in sorted(state.glob("*/batch_*.json"))}


def test_a_run_on_another_engine_replays_and_checks_the_saved_batches(clean, tmp_path, capsys):
    """The engine is not in the resume key (both engines play the same games), so a run with
    --engine reference into a folder of kernel batches neither reuses them unchecked (and records
    "reference") nor discards them: it replays each on the reference engine, checks it against the
    saved files, and the records and provenance.json name both engines."""
    from sim.cli import main

    spec_file, out = clean
    spec = load_spec(spec_file)
    work = tmp_path / "out"
    shutil.copytree(out, work)
    state = work / ".state"
    assert {r["engines"][0] for r in _records(state).values()} == {"kernel"}
    assert main(["run", str(spec_file), "--out", str(work), "--engine", "reference", "--quiet"]) == 0
    cap = capsys.readouterr()
    assert "6 saved batch(es) were played by the kernel engine, not the reference; replaying them" in cap.err
    assert f"two: 6 batch(es) played, 0 reused -> {work}" in cap.out
    assert "cross-check: 6 of them had been saved by another engine; replayed on the reference engine, each gave " \
           "the same results game for game" in cap.out
    assert "kernel,reference 6" in cap.out
    records = _records(state)
    assert len(records) == 6 and all(r["engines"] == ["kernel", "reference"] for r in records.values())
    prov = json.loads((work / "provenance.json").read_text())
    assert prov["engine"] == "reference" and prov["batch_engines"] == {"kernel,reference": 6}
    for name in ("summary.parquet", "games.parquet"):  # the saved files, as the kernel wrote them
        assert (work / name).read_bytes() == (out / name).read_bytes(), name
    # checked by both: reused by either from now on
    for engine in ("reference", "kernel"):
        again = run_study(spec, work, engine=engine, progress=False, charts=False)
        assert again.computed == [] and again.checked == [] and len(again.skipped) == 6 and again.notices == []
        assert json.loads((work / "provenance.json").read_text())["engine"] == engine
    # a fresh folder records the one engine that played it
    fresh = run_study(spec, tmp_path / "fresh", engine="reference", progress=False, charts=False)
    assert fresh.checked == [] and fresh.batch_engines == {"reference": 6}
    assert {tuple(r["engines"]) for r in _records(tmp_path / "fresh" / ".state").values()} \
        == {("reference",)}


def _rewrite_consistently(state: Path, cell: str, b: int, change) -> None:
    """Change a saved batch and its record's checksums together: files as a wrong engine would have saved them."""
    from sim.manifest import dumps, file_sha256

    rec_path = state / cell / f"batch_{b:06d}.json"
    rec = json.loads(rec_path.read_text())
    change(state / cell)
    rec["files"] = {name: file_sha256(state / cell / name) for name in rec["files"]}
    rec_path.write_text(dumps(rec))


def _more_injuries(cdir: Path) -> None:
    import numpy as np

    from sim.tally import SUM_COLUMNS

    arrays = dict(np.load(cdir / "batch_000001.npz"))
    arrays["sums"][SUM_COLUMNS.index("injuries")] += 1
    np.savez(cdir / "batch_000001.npz", **arrays)


def _longer_game(cdir: Path) -> None:
    path = cdir / "games_000001.parquet"
    df = pl.read_parquet(path)
    df = df.with_columns(pl.when(pl.col("game") == 20).then(pl.col("turns") + 1).otherwise(pl.col("turns"))
                         .alias("turns"))
    df.write_parquet(path)


@pytest.mark.parametrize("change, says", [
    (_more_injuries, "saved and replayed differ in the tally's sums)"),
    (_longer_game, "saved and replayed differ in the per-game table, first at game 20 in turns)"),
])
def test_a_batch_another_engine_plays_differently_is_refused_and_left_as_saved(clean, tmp_path, change, says):
    spec_file, out = clean
    spec = load_spec(spec_file)
    work = tmp_path / "out"
    shutil.copytree(out, work)
    state = work / ".state"
    cell = "p3_heuristic_standard_default_default"
    _rewrite_consistently(state, cell, 1, change)
    saved = {f.name: f.read_bytes() for f in (state / cell).glob("*_000001.*")}
    assert run_study(spec, work, progress=False, charts=False).skipped  # the kernel takes them as its own
    with pytest.raises(sim.study.StudyError) as e:
        run_study(spec, work, engine="reference", progress=False, charts=False)
    msg = str(e.value)
    assert msg.startswith(f"the reference engine played batch 1 of cell {cell} (games 16..31) differently from the "
                          f"kernel engine that saved it in {state / cell} "), msg
    assert says in msg and "this is a bug to report" in msg and "--engine kernel" in msg, msg
    assert {f.name: f.read_bytes() for f in (state / cell).glob("*_000001.*")} == saved  # record included
    assert (work / "manifest.json").exists()  # the complete run before it is still the folder's


def test_edited_tuned_parameters_replay_the_tuned_cells_and_are_recorded(tmp_path, monkeypatch):
    """``tuned`` reads its parameters from strategies/tuned.toml: an edit of that file changes the
    games, so the batches must replay, and the metadata must say which parameters played."""
    import strategies.tuned as tuned

    tuned_file = tmp_path / "tuned.toml"
    shutil.copy(tuned.TUNED_PATH, tuned_file)
    monkeypatch.setattr(tuned, "TUNED_PATH", tuned_file)
    spec_file = write(tmp_path, TWO_CELLS.replace("[grid]\nplayers = [2, 3]", '[grid]\nplayers = [2]\nstrategies = ["tuned"]'))
    first = run_study(load_spec(spec_file), tmp_path / "out", progress=False, charts=False)
    assert first.finished and len(first.computed) == 3
    meta = sim.study.read_metadata(tmp_path / "out")
    assert meta["strategy_params"] == {"tuned": {"2": {"name": "tuned", "params": tuned.make_tuned(2).params()}}}
    old_target = tuned.tuned_params(2)["pool_target"]

    text = tuned_file.read_text()
    section = text.index("[players.2.params]")
    line = text.index("pool_target = ", section)
    end = text.index("\n", line)
    tuned_file.write_text(text[:line] + f"pool_target = {old_target + 3}" + text[end:])
    assert tuned.tuned_params(2)["pool_target"] == old_target + 3  # read again, not a cached parse

    again = run_study(load_spec(spec_file), tmp_path / "out", progress=False, charts=False)
    assert again.finished and again.skipped == [] and len(again.computed) == 3
    assert any("other parameters of strategy tuned" in n for n in again.notices), again.notices
    meta = sim.study.read_metadata(tmp_path / "out")
    assert meta["strategy_params"]["tuned"]["2"]["params"]["pool_target"] == old_target + 3
    fresh = run_study(load_spec(spec_file), tmp_path / "fresh", progress=False, charts=False)
    assert fresh.skipped == []
    for name in ("summary.parquet", "games.parquet"):
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "fresh" / name).read_bytes(), name
    want = sim.simulate(players=2, games=48, seed=3, strategy="heuristic", params=tuned.tuned_params(2))
    assert pl.read_parquet(tmp_path / "out" / "games.parquet")["win"].to_list() == want["win"].to_list()
