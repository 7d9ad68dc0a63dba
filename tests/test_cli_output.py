"""What ``play`` and ``trace`` print: a header naming every setting played, the time of the games apart from
loading or compiling the kernel, and counts in the right number; what ``tune``, ``sensitivity``, ``luck``, ``run``
and ``check`` print of the settings given on their command line (the content pack, --set, --skills, --engine)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from sim.cli import main

ROOT = Path(__file__).resolve().parents[1]

SET_LOBO = "setup.player_count[players=4].lobo_start=1"
SET_VILLAIN = "setup.player_count[players=4].villain_counts={minus_one=5}"


def run(argv: list[str], capsys) -> str:
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return out


def header(out: str) -> list[str]:
    """The lines above the results (``wins:``)."""
    lines = out.splitlines()
    return lines[: next(i for i, x in enumerate(lines) if x.startswith("wins:"))]


@pytest.fixture
def pack(tmp_path) -> str:
    folder = tmp_path / "my-pack"
    shutil.copytree(ROOT / "sim" / "content" / "default", folder)
    return str(folder)


# (extra play options, what the header must name besides what --json records)
CASES = {
    "README --set": (["--set", SET_LOBO, "--set", SET_VILLAIN], [f"--set {SET_LOBO}", f"--set {SET_VILLAIN}"]),
    "--param": (["--param", "exchange_when=early"], ["strategy heuristic with --param exchange_when=early"]),
    "tuned --param": (["--strategy", "tuned", "--param", "pool_target=5"], ["strategy tuned with --param pool_target=5"]),
    "--content": (["--content", "{pack}"], ["content pack 'my-pack' at {pack}"]),
    "variant, skills, line-up": (["--variant", "dirty", "--skills", "fixed", "--characters", "random"],
                                 ["variant dirty-lobo,dirty-location,fixed-skills", "(random line-up)"]),
    "plain": ([], []),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_play_header_names_every_setting_json_records(case, pack, capsys):
    extra, named = CASES[case]
    extra = [a.replace("{pack}", pack) for a in extra]
    argv = ["play", "--players", "4", "--games", "20", *extra]
    rec = json.loads(run([*argv, "--json"], capsys))
    head = "\n".join(header(run(argv, capsys)))
    for text in named:
        assert text.replace("{pack}", pack) in head, head
    assert f"{rec['games']} games, 4 players (" in head
    if rec["characters"] != "random":
        assert ", ".join(rec["characters"].split(",")) in head
    assert f"strategy {rec['strategy']}" in head and f"variant {rec['variant']}" in head
    assert f"seed {rec['seed']}" in head and f"engine {rec['engine']}" in head
    for i, a in enumerate(extra):
        if a == "--param":
            assert f"--param {extra[i + 1]}" in head
    for path in rec["overrides"]:
        assert path in head
    changed = bool(rec["overrides"]) or "--content" in extra
    # the pack is named (with its hash) when it is not the built-in one as it ships, and only then
    assert (rec["content_hash"][:12] in head) == changed, head
    assert len(header(run(argv, capsys))) == (2 if changed else 1)


def test_trace_header_names_the_settings_too(pack, capsys):
    out = run(["trace", "--players", "2", "--seed", "7", "--param", "pool_target=5", "--content", pack,
               "--set", "lobo.track.start=1"], capsys)
    first, second, third = out.splitlines()[:3]
    assert first.startswith("trace of game 0: 2 players (") and "strategy heuristic with --param pool_target=5" in first
    assert "variant standard, seed 7, engine reference" in first
    assert second.startswith(f"content pack 'my-pack' at {pack} with --set lobo.track.start=1 (hash ")
    assert third.startswith("SETUP 2 player(s)")


def test_play_times_the_games_apart_from_compiling_the_kernel(capsys, monkeypatch):
    """The first call loads (here: 'compiles') the kernel; the games/s is the rate of the games alone. The clock
    is a fake one that the calls advance (30 s for the first, 0.5 s for the games), so nothing here depends on
    how fast the machine runs."""
    import types

    import sim._cache
    import sim.cli
    import sim.run

    real = sim.run.simulate_tally
    clock = [1000.0]
    calls = []

    def timed(*a, **k):
        clock[0] += 30.0 if not calls else 0.5  # a cold kernel's compile, then the games
        calls.append(k["games"])
        return real(*a, **k)

    monkeypatch.setattr(sim.run, "simulate_tally", timed)
    monkeypatch.setattr(sim.cli, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))
    monkeypatch.setattr(sim._cache, "is_compiled", lambda: False)
    out = run(["play", "--players", "2", "--games", "50"], capsys)
    assert "(played in 0.50 s, 100 games/s; compiling the kernel took 30.00 s before)" in out.splitlines(), out
    assert calls == [1, 50]  # one game first, then the games asked for
    calls.clear()
    summary = json.loads(run(["play", "--players", "2", "--games", "50", "--json"], capsys))
    assert (summary["seconds"], summary["setup_seconds"]) == (0.5, 30.0)


def test_one_player_and_one_game_are_singular(capsys):
    out = run(["play", "--players", "1", "--games", "1"], capsys)
    assert out.startswith("1 game, 1 player (")
    assert not re.search(r"\b1 (players|games)\b", out), out
    assert "trace of game 0: 1 player (" in run(["trace", "--players", "1"], capsys)


@pytest.fixture
def unprinted_pack(pack) -> str:
    """The built-in pack with one value the printed game does not have (5 tokens of each advanced skill)."""
    intel = Path(pack) / "intel.toml"
    text = intel.read_text(encoding="utf-8")
    assert "advanced_skill_tokens = 4\n" in text
    intel.write_text(text.replace("advanced_skill_tokens = 4\n", "advanced_skill_tokens = 5\n"), encoding="utf-8")
    return pack


STUDIES = {
    "tune": ["tune", "--players", "2", "--target", "0.3:0.6", "--knob", "lobo.track.start=0..1", "--budget", "400",
             "--confirm-games", "0"],
    "sensitivity": ["sensitivity", "--players", "2", "--games", "100", "--knob", "lobo.track.start"],
    "luck": ["luck", "--players", "2", "--games", "100", "--strategies", "heuristic"],
}


@pytest.mark.parametrize("study", STUDIES)
def test_study_commands_print_each_pack_warning_once(study, unprinted_pack, capsys):
    assert main([*STUDIES[study], "--content", unprinted_pack]) == 0
    err = capsys.readouterr().err
    assert err.count("warning: intel.toml: 5 tokens of each of the 11 advanced skills") == 1, err


@pytest.mark.parametrize("study", STUDIES)
def test_study_commands_name_the_content_pack(study, pack, capsys):
    out = run([*STUDIES[study], "--content", pack], capsys)
    lines = [x for x in out.splitlines() if "content pack" in x]
    assert len(lines) == 1 and lines[0].startswith(f"content pack 'my-pack' at {pack} (hash "), out
    assert "content pack" not in run(STUDIES[study], capsys)  # the built-in pack: no line


SPEC = """
[experiment]
name = "tiny"
seed = 3
games = 20
batch = 20

[grid]
players = [2]
"""


def test_run_names_set_skills_and_engine(tmp_path, capsys):
    spec = tmp_path / "tiny.toml"
    spec.write_text(SPEC, encoding="utf-8")
    out = run(["run", str(spec), "--quiet", "--out", str(tmp_path / "given"), "--set", "lobo.track.start=1",
               "--skills", "fixed", "--engine", "reference"], capsys)
    assert ("\nplayed with: each cell's content pack with --set lobo.track.start=1; --skills fixed in every cell; "
            "--engine reference\n") in out, out
    out = run(["run", str(spec), "--quiet", "--out", str(tmp_path / "skills"), "--skills", "fixed"], capsys)
    assert "\nplayed with: --skills fixed in every cell\n" in out, out
    assert "played with" not in run(["run", str(spec), "--quiet", "--out", str(tmp_path / "plain")], capsys)


def test_run_skills_pick_says_which_cells_a_fixed_skills_variant_keeps_fixed(tmp_path, capsys):
    """A cell of variant fixed-skills plays fixed skills whatever --skills pick says: the line naming --skills
    once said "in every cell", and a grid of such cells only was played as if the option had been heeded."""
    spec = tmp_path / "tiny.toml"
    spec.write_text(SPEC + 'variants = ["standard", "fixed-skills"]\n', encoding="utf-8")
    out = run(["run", str(spec), "--quiet", "--out", str(tmp_path / "both"), "--skills", "pick"], capsys)
    assert "\nplayed with: --skills pick in every cell but those of variant 'fixed-skills' (it fixes them)\n" in out
    spec.write_text(SPEC + 'variants = ["fixed-skills"]\n', encoding="utf-8")
    with pytest.raises(SystemExit) as e:
        main(["run", str(spec), "--quiet", "--out", str(tmp_path / "fixed"), "--skills", "pick"])
    assert e.value.code == 2 and str(e.value) == (
        "error: --skills pick contradicts grid.variants of tiny.toml: 'fixed-skills' fixes each character's skills, "
        "so no player picks in any cell; leave out --skills pick")
    assert not (tmp_path / "fixed").exists()


BANDS = """
[check]
seed = 7
games = 100
batch = 100
tolerance = 0.5
{content}
[[cell]]
name = "3p-heuristic"
players = 3
strategy = "heuristic"
win_rate = [0.0, 1.0]
"""


@pytest.mark.parametrize("own_pack", [False, True], ids=["built-in", "the file's pack"])
def test_check_names_content_set_and_skills(own_pack, pack, tmp_path, capsys):
    bands = tmp_path / "bands.toml"
    if own_pack:
        shutil.copytree(pack, tmp_path / "its-pack")
    bands.write_text(BANDS.format(content='content = "its-pack"' if own_pack else ""), encoding="utf-8")
    run(["check", str(bands), "--update"], capsys)
    first = run(["check", str(bands)], capsys).splitlines()[0]
    assert "played with" not in first
    first = run(["check", str(bands), "--set", "lobo.track.start=1"], capsys).splitlines()[0]
    base = f"the bands file's content pack at {tmp_path / 'its-pack'}" if own_pack else "built-in content pack"
    assert first == f"played with: {base} with --set lobo.track.start=1 (under each cell's own overrides)"
    first = run(["check", str(bands), "--content", pack, "--set", "lobo.track.start=1", "--skills", "fixed"],
                capsys).splitlines()[0]
    assert first == (f"played with: content pack 'my-pack' at {pack} with --set lobo.track.start=1 (under each "
                     "cell's own overrides); --skills fixed")
    # --json says the same (it said nothing of them)
    from sim.content import load

    doc = json.loads(run(["check", str(bands), "--json"], capsys))
    assert doc["played_with"] == {"content": None, "set": {}, "skills": None}
    doc = json.loads(run(["check", str(bands), "--content", pack, "--set", "lobo.track.start=1", "--set",
                          "villain.counts={minus_one=4}", "--skills", "fixed", "--json"], capsys))
    assert list(doc) == ["passed", "played_with", "notices", "cells"]
    assert doc["played_with"] == {"content": {"folder": str(pack), "name": "my-pack", "hash": load(pack).hash},
                                  "set": {"lobo.track.start": 1, "villain.counts": {"minus_one": 4}},
                                  "skills": "fixed"}


def test_run_names_the_specs_own_content_pack(pack, tmp_path, capsys):
    """A spec's ``[experiment] content`` is said in the output, not only in metadata.json."""
    shutil.copytree(pack, tmp_path / "its-pack")
    spec = tmp_path / "tiny.toml"
    spec.write_text(SPEC.replace("batch = 20\n", 'batch = 20\ncontent = "its-pack"\n'), encoding="utf-8")
    out = run(["run", str(spec), "--quiet", "--out", str(tmp_path / "own")], capsys)
    assert f"\nplayed with: the spec's content pack at {tmp_path / 'its-pack'}\n" in out, out
    out = run(["run", str(spec), "--quiet", "--out", str(tmp_path / "set"), "--set", "lobo.track.start=1"], capsys)
    assert f"\nplayed with: the spec's content pack at {tmp_path / 'its-pack'} with --set lobo.track.start=1\n" in out


def test_a_long_play_says_on_stderr_that_its_games_have_begun(monkeypatch, capsys):
    """From LONG_PLAY games (minutes of play), after the kernel is loaded: one line on stderr, the
    printed results unchanged; below it, nothing."""
    import sim.cli

    for long_from, said in ((51, ""), (50, "playing 50 games (Ctrl-C stops)...\n")):
        monkeypatch.setattr(sim.cli, "LONG_PLAY", long_from)
        assert main(["play", "--players", "2", "--games", "50"]) == 0
        out, err = capsys.readouterr()
        assert out.startswith("50 games, 2 players (")
        assert [x for x in err.splitlines(True) if not x.startswith("compiling the simulation kernel")] == (
            [said] if said else []), err
