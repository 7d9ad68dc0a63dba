"""Editing a spec between runs: batches are kept by what decides their games, not by the whole spec.

An edit that decides no game (targets, description, the compare baseline, the name, games_table_limit)
reuses every finished batch and the results are those of a fresh run of the edited spec; an edit that
decides games replays exactly the batches it decides, with a notice naming the setting; and `.state/`
keeps only batches the spec as it is now can use, saying what it removes.
"""

import json
import textwrap
from pathlib import Path

import pytest

import sim.study
from sim.experiments import ExperimentSection, SpecModel, load_spec
from sim.manifest import read_metadata
from sim.study import run_study

SPEC = """
[experiment]
name = "edits"
seed = 3
games = 32
batch = 16

[grid]
players = [2, 3]
strategies = ["heuristic", "early"]
setups = ["default", "lobo2"]

[strategy.early]
base = "heuristic"
params = { exchange_when = "early" }

[setup.lobo2]
overrides = { "lobo.track.start" = 2 }
"""

CELLS = [f"p{p}_{s}_standard_default_{u}" for p in (2, 3) for s in ("heuristic", "early") for u in ("default", "lobo2")]


def write(folder: Path, text: str, name: str = "edits.toml") -> Path:
    p = folder / name
    p.write_text(textwrap.dedent(text))
    return p


def run(spec_file: Path, out: Path, **kw):
    return run_study(load_spec(spec_file), out, progress=False, **kw)


def files_of(out: Path) -> dict[str, bytes]:
    """Every file a run leaves in its folder but provenance.json (git revision, versions) and the lock."""
    return {f.name: f.read_bytes() for f in sorted(out.iterdir())
            if f.is_file() and f.name not in ("provenance.json", ".lock")}


def assert_same_as_fresh(spec_file: Path, out: Path, tmp_path: Path, **kw) -> None:
    fresh = run(spec_file, tmp_path / "fresh", **kw)
    assert fresh.finished and fresh.skipped == [] and fresh.notices == []
    mine, theirs = files_of(out), files_of(tmp_path / "fresh")
    assert sorted(mine) == sorted(theirs)
    for name in theirs:
        assert mine[name] == theirs[name], name
    prov = [json.loads((d / "provenance.json").read_text()) for d in (out, tmp_path / "fresh")]
    assert prov[0]["resume_key"] == prov[1]["resume_key"]


def state_folders(out: Path) -> list[str]:
    return sorted(p.name for p in (out / ".state").iterdir())


def batches_in(out: Path, cell: str) -> list[str]:
    return sorted(f.name for f in (out / ".state" / cell).glob("batch_*.json"))


# ------------------------------------------------------------------ edits that decide no game
PRESENTATION_EDITS = {
    "targets": lambda t: t + '\n[targets]\nwin_rate = { "3" = [0.43, 0.47] }\n',
    "description": lambda t: t.replace('name = "edits"\n', 'name = "edits"\ndescription = "lobo at 2"\n'),
    "compare baseline": lambda t: t + '\n[compare]\nbaseline = { strategy = "heuristic" }\n',
    "name": lambda t: t.replace('name = "edits"\n', 'name = "renamed"\n'),
    "games_table_limit": lambda t: t.replace("batch = 16\n", "batch = 16\ngames_table_limit = 0\n"),
}


@pytest.mark.parametrize("edit", list(PRESENTATION_EDITS))
def test_an_edit_that_decides_no_game_reuses_every_batch_and_matches_a_fresh_run(tmp_path, edit, capsys):
    spec_file = write(tmp_path, SPEC)
    out = tmp_path / "out"
    partial = run(spec_file, out, max_batches=5)
    assert not partial.finished and len(partial.computed) == 5
    write(tmp_path, PRESENTATION_EDITS[edit](SPEC))
    capsys.readouterr()
    resumed = run(spec_file, out)
    assert resumed.finished and resumed.notices == [] and "notice" not in capsys.readouterr().err
    assert sorted(resumed.skipped) == sorted(partial.computed) and len(resumed.computed) == 16 - 5
    again = run(spec_file, out)
    assert again.computed == [] and len(again.skipped) == 16 and again.notices == []
    assert state_folders(out) == sorted(CELLS)  # one folder per cell, nothing left behind
    assert read_metadata(out)["spec"] == load_spec(spec_file).raw  # the spec as it is now
    assert_same_as_fresh(spec_file, out, tmp_path)


def test_the_reported_targets_edit_through_the_command_line(tmp_path, capsys):
    """The run that played 24 batches and reused none after [targets] was added."""
    from sim.cli import main

    text = 'name="s"\nseed=11\ngames=40\nbatch=10\n'
    spec_file = tmp_path / "s3.toml"
    spec_file.write_text(f'[experiment]\n{text}[grid]\nplayers=[2,4]\nstrategies=["heuristic","bold"]\n')
    out = tmp_path / "r14"
    assert main(["run", str(spec_file), "--out", str(out), "--quiet", "--max-batches", "10"]) == 0
    with spec_file.open("a") as f:
        f.write('\n[targets]\nwin_rate = { "4" = [0.43, 0.47] }\n')
    capsys.readouterr()
    assert main(["run", str(spec_file), "--out", str(out), "--quiet"]) == 0
    cap = capsys.readouterr()
    assert f"s: 6 batch(es) played, 10 reused -> {out}" in cap.out
    assert "notice" not in cap.err
    assert len(state_folders(out)) == 4


# ------------------------------------------------------------------ edits that decide games
DECIDING_EDITS = {
    # edit, the cells it replays, what the notice names
    "seed": (lambda t: t.replace("seed = 3\n", "seed = 4\n"), CELLS, "experiment.seed 3 (today 4)"),
    "strategy params": (lambda t: t.replace('{ exchange_when = "early" }', '{ exchange_when = "early", pool_target = 6 }'),
                        [c for c in CELLS if "_early_" in c], "another [strategy.early] table"),
    "setup overrides": (lambda t: t.replace('"lobo.track.start" = 2', '"lobo.track.start" = 3'),
                        [c for c in CELLS if c.endswith("_lobo2")], "other overrides of setup 'lobo2'"),
    # the experiment's overrides, with setup lobo2 (which would replace them) dropped from the grid
    "experiment overrides": (lambda t: t.replace("batch = 16\n", 'batch = 16\noverrides = { "lobo.track.start" = 1 }\n')
               .replace('setups = ["default", "lobo2"]', 'setups = ["default"]')
               .replace('[setup.lobo2]\noverrides = { "lobo.track.start" = 2 }\n', ""),
               [c for c in CELLS if c.endswith("_default")], "experiment.overrides {} (today {\"lobo.track.start\": 1})"),
}


@pytest.mark.parametrize("edit", list(DECIDING_EDITS))
def test_an_edit_that_decides_games_names_it_and_replays_the_batches_it_decides(tmp_path, edit, capsys):
    change, replayed, says = DECIDING_EDITS[edit]
    spec_file = write(tmp_path, SPEC)
    out = tmp_path / "out"
    assert run(spec_file, out).finished
    edited = change(SPEC)
    assert edited != SPEC
    write(tmp_path, edited)
    cells = [c.id for c in load_spec(spec_file).cells()]
    capsys.readouterr()
    again = run(spec_file, out)
    assert again.finished
    assert sorted({c for c, _ in again.computed}) == sorted(replayed)
    assert len(again.computed) == 2 * len(replayed) and len(again.skipped) == 2 * (len(cells) - len(replayed))
    hit = [n for n in again.notices if says in n]
    assert hit and "discarding them and replaying every batch of" in hit[0], again.notices
    assert all(c in hit[0] for c in replayed[:4]), hit
    assert f"notice: {out / '.state'}: the {2 * len(replayed)} saved batch(es) of" in capsys.readouterr().err
    assert state_folders(out) == sorted(cells)
    for c in cells:
        assert len(batches_in(out, c)) == 2, c
    assert_same_as_fresh(spec_file, out, tmp_path)


def test_cells_the_spec_no_longer_has_are_removed_with_a_notice(tmp_path):
    spec_file = write(tmp_path, SPEC)
    out = tmp_path / "out"
    assert run(spec_file, out).finished
    write(tmp_path, SPEC.replace("players = [2, 3]", "players = [3]"))
    fewer = run(spec_file, out)
    assert fewer.computed == [] and len(fewer.skipped) == 8
    gone = [c for c in CELLS if c.startswith("p2_")]
    assert len(fewer.notices) == 1, fewer.notices
    assert fewer.notices[0].startswith(f"{out / '.state'}: removing the saved batches of 4 cells ({', '.join(sorted(gone))})")
    assert fewer.notices[0].endswith("which the spec no longer has")
    assert state_folders(out) == sorted(c for c in CELLS if c.startswith("p3_"))
    assert_same_as_fresh(spec_file, out, tmp_path)
    write(tmp_path, SPEC)  # back: the cells removed are played again, the others still reused
    back = run(spec_file, out)
    assert sorted({c for c, _ in back.computed}) == sorted(gone) and len(back.skipped) == 8 and back.notices == []


@pytest.mark.parametrize("old, new, kept", [
    # (games, batch) before and after, the batch indices whose games did not move
    ((32, 16), (24, 16), [0]),   # the last batch shrinks: 16..31 is now 16..23
    ((32, 16), (48, 16), [0, 1]),  # more games: every saved batch is still one of the spec's
    ((32, 16), (32, 8), []),     # another batch size: every range moves
])
def test_games_and_batch_size_edits_keep_the_batches_whose_games_did_not_move(tmp_path, old, new, kept):
    def spec(games, batch):
        return SPEC.replace("games = 32\nbatch = 16", f"games = {games}\nbatch = {batch}")

    spec_file = write(tmp_path, spec(*old))
    out = tmp_path / "out"
    assert run(spec_file, out, charts=False).finished
    write(tmp_path, spec(*new))
    again = run(spec_file, out, charts=False)
    n_new = -(-new[0] // new[1])
    assert sorted(again.skipped) == sorted((c, b) for c in CELLS for b in kept)
    assert len(again.computed) == 8 * (n_new - len(kept))
    moved = -(-old[0] // old[1]) - len(kept)
    if moved:
        changed = "; ".join(f"experiment.{k} {a} (today {b})" for k, a, b in zip(("games", "batch"), old, new) if a != b)
        assert again.notices == [f"{out / '.state'}: {changed}: discarding the {8 * moved} saved batch(es) of 8 cells "
                                 f"({', '.join(CELLS[:4])} and 4 more) whose game range is no longer one of the "
                                 "spec's batches; every other saved batch is reused"]
    else:
        assert again.notices == []
    for c in CELLS:
        assert len(batches_in(out, c)) == n_new
    assert_same_as_fresh(spec_file, out, tmp_path, charts=False)


def test_an_earlier_layout_of_the_state_folder_is_removed_with_a_notice(tmp_path):
    """State format 3 kept one folder per spec hash, with cell folders inside: none is reused, all go."""
    spec_file = write(tmp_path, SPEC)
    out = tmp_path / "out"
    old = out / ".state" / "0c7d822621345da6"
    (old / CELLS[0]).mkdir(parents=True)
    (old / "key.json").write_text(json.dumps({"spec": "0" * 64, "state_format": 3, "key": "1" * 64}))
    (old / CELLS[0] / "batch_000000.json").write_text("{}")
    report = run(spec_file, out, charts=False)
    assert report.finished and report.skipped == [] and len(report.computed) == 16
    assert report.notices == [f"{out / '.state'}: removing 0c7d822621345da6: not a cell's folder (an earlier layout "
                              "of .state/, one folder per spec, or a file put there by hand)"]
    assert state_folders(out) == sorted(CELLS)


# ------------------------------------------------------------------ what the key holds
def test_only_the_listed_fields_stay_out_of_a_cells_key(tmp_path):
    """Every field of the spec is in the key of the cells it concerns but those listed as deciding no game;
    a field added to [experiment] (or a new section) is in it unless listed, so it is replayed, not reused."""
    from sim.study import UNKEYED_EXPERIMENT, UNKEYED_SECTIONS, cell_keys

    assert UNKEYED_EXPERIMENT == {"name", "description", "engine", "games", "batch", "games_table_limit"}
    assert UNKEYED_EXPERIMENT < set(ExperimentSection.model_fields)
    assert UNKEYED_SECTIONS == {"compare", "targets"}
    assert set(SpecModel.model_fields) == {"experiment", "grid", "strategy", "setup", "compare", "targets"}

    def keys(text: str) -> dict[str, str]:
        spec = load_spec(write(tmp_path, text, "k.toml"))
        return {cid: k["key"] for cid, k in cell_keys(spec, _contents(spec), source="s").items()}

    base = keys(SPEC)
    assert sorted(base) == sorted(CELLS) and len(set(base.values())) == len(CELLS)
    for edit in PRESENTATION_EDITS.values():
        assert keys(edit(SPEC)) == base
    spelled = SPEC.replace("batch = 16\n", 'batch = 16\nskills = "pick"\nengine = "reference"\n')
    assert keys(spelled) == base  # a default spelled out, and the engine
    for name, (change, replayed, _) in DECIDING_EDITS.items():
        edited = keys(change(SPEC))
        assert sorted(c for c in edited if edited[c] != base.get(c)) == sorted(replayed), name
    fixed = keys(SPEC.replace("batch = 16\n", 'batch = 16\nskills = "fixed"\n'))
    assert sorted(fixed) == sorted(c.replace("_standard_", "_fixed-skills_") for c in CELLS)


def _contents(spec) -> dict:
    from sim.content.overrides import load_with_overrides
    from sim.run import resolve_content

    return {u: load_with_overrides(spec.content_path(), spec.overrides_of(u), u) if spec.overrides_of(u)
            else resolve_content(spec.content_path()) for u in spec.model.grid.setups}


def test_the_key_is_the_digest_of_the_rest_and_names_no_engine(tmp_path):
    from sim.study import cell_keys

    spec = load_spec(write(tmp_path, SPEC))
    for k in cell_keys(spec, _contents(spec), source="s").values():
        rest = {f: v for f, v in k.items() if f != "key"}
        assert k["key"] == sim.study._digest(rest)
        assert "engine" not in json.dumps(rest)


def test_the_fields_of_a_cells_key_json_are_those_docs_results_md_lists(tmp_path):
    import re

    spec_file = write(tmp_path, SPEC.replace("players = [2, 3]", "players = [2]").replace(
        'setups = ["default", "lobo2"]', 'setups = ["lobo2"]').replace('"heuristic", "early"', '"early"'))
    out = tmp_path / "out"
    assert run(spec_file, out, charts=False).finished
    key = json.loads((out / ".state" / "p2_early_standard_default_lobo2" / "key.json").read_text())
    text = (Path(__file__).resolve().parent.parent / "docs" / "results.md").read_text()
    section = text[text.index("## Resuming"):]
    section = section[: section.index("\n## ")]
    rows = re.findall(r"^\| (`[^|]+`) \|", section, flags=re.M)
    assert set(key) == {name for row in rows for name in re.findall(r"`([^`]+)`", row)}


TUNED_SPEC = """
[experiment]
name = "tuned"
seed = 3
games = 48
batch = 16

[grid]
players = [4]
strategies = ["tuned"]
"""


def test_tuned_toml_edited_while_a_run_plays_stops_it_and_the_kept_batches_are_the_files(tmp_path, monkeypatch):
    """The run's key records what the tuned file said when it began: a batch that would play another set (the file
    edited meanwhile) stops the run instead of playing under that key, and the batches kept are those of the
    file as it was, so running again once it is restored equals a fresh run (a batch had been played with the
    new set and reused under the old set's key)."""
    import shutil

    from strategies import tuned

    path = tmp_path / "tuned.toml"
    shutil.copy(tuned.TUNED_PATH, path)
    monkeypatch.setattr(tuned, "TUNED_PATH", path)
    original = path.read_text()
    assert _with_pool_target(original, 6) != original
    spec_file = write(tmp_path, TUNED_SPEC)
    save = sim.study._save_batch

    def save_then_edit(*args, **kw):
        save(*args, **kw)
        path.write_text(_with_pool_target(original, 6))

    monkeypatch.setattr(sim.study, "_save_batch", save_then_edit)
    with pytest.raises(sim.study.StudyError, match="would play other parameters than when the run began"):
        run(spec_file, tmp_path / "out", charts=False)
    assert batches_in(tmp_path / "out", "p4_tuned_standard_default_default") == ["batch_000000.json"]
    monkeypatch.setattr(sim.study, "_save_batch", save)
    path.write_text(original)
    again = run(spec_file, tmp_path / "out", charts=False)
    assert again.finished and len(again.skipped) == 1
    assert_same_as_fresh(spec_file, tmp_path / "out", tmp_path, charts=False)


def _with_pool_target(text: str, value: int) -> str:
    """The tuned file with players.4's pool_target set to ``value``."""
    import re

    head, rest = text.split("[players.4.params]", 1)
    body, sep, tail = rest.partition("\n[")
    body = re.sub(r"(?m)^pool_target = .*$", f"pool_target = {value}", body)
    return head + "[players.4.params]" + body + sep + tail
