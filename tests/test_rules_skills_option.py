"""``--skills fixed`` (and ``skills = "fixed"`` in specs and band cells) keeps the fixed advanced-skill
pairs of characters.toml, so designers can compare them with picked skills. It is the variant word
``fixed-skills`` underneath, so results label it in their variant column."""

import json
import textwrap

import polars as pl
import pytest

import sim
from sim.bands import run_check
from sim.cli import main
from sim.experiments import SpecError, load_spec
from sim.rules.state import Settings
from sim.study import run_study
from tests.rules_helpers import content


def _cli(argv, capsys):
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().out


def test_with_skills_folds_the_mode_into_the_variant():
    assert Settings.with_skills(None, None) is None
    assert Settings.with_skills("easier", "pick") == "easier"
    assert Settings.with_skills(None, "fixed") == "fixed-skills"
    assert Settings.with_skills("dirty", "fixed") == "dirty,fixed-skills"
    assert Settings.with_skills(["easier"], "fixed") == ["easier", "fixed-skills"]
    s = Settings.build(content(), 3, None, Settings.with_skills("dirty", "fixed"))
    assert s.fixed_skills and s.dirty_lobo and s.variant_label == "dirty-lobo,dirty-location,fixed-skills"
    with pytest.raises(ValueError, match="skills"):
        Settings.with_skills(None, "some")


def test_play_skills_fixed_plays_the_fixed_pairs(capsys):
    code, out = _cli(["play", "--players", "3", "--games", "300", "--skills", "fixed", "--json"], capsys)
    assert code == 0
    fixed = json.loads(out)
    assert fixed["variant"] == "fixed-skills"
    want = sim.simulate(players=3, games=300, seed=1, variant="fixed-skills")
    assert fixed["wins"] == int(want["win"].sum())
    picked = sim.simulate(players=3, games=300, seed=1)
    assert not picked.equals(want)  # picking changes the games


def test_trace_skills_fixed(capsys):
    code, out = _cli(["trace", "--players", "2", "--seed", "3", "--skills", "fixed"], capsys)
    assert code == 0
    assert "P1 Calli Dagger takes advanced skills: seduction, disguise" in out
    code, out = _cli(["trace", "--players", "2", "--seed", "3"], capsys)
    assert "P1 Calli Dagger picks advanced skills:" in out


SPEC = """
[experiment]
name = "skills"
seed = 5
games = 40
batch = 20
{skills}

[grid]
players = [2]
variants = {variants}
"""


def test_spec_skills_fixed_applies_to_every_cell(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(textwrap.dedent(SPEC.format(skills='skills = "fixed"', variants='["standard", "easier"]')))
    spec = load_spec(p)
    assert spec.model.experiment.skills == "fixed"
    run_study(spec, tmp_path / "out", progress=False, charts=False)
    s = pl.read_parquet(tmp_path / "out" / "summary.parquet")
    assert s["games"].to_list() == [40, 40]
    # both cells play the fixed pairs, and say so
    assert s["variant"].to_list() == ["fixed-skills", "easier,fixed-skills"]
    for row in s.iter_rows(named=True):
        assert row["wins"] == int(sim.simulate(players=2, games=40, seed=5, variant=row["variant"])["win"].sum())
    # a grid of both readings would play the same games twice with the key: refused
    p.write_text(textwrap.dedent(SPEC.format(skills='skills = "fixed"', variants='["standard", "fixed-skills"]')))
    with pytest.raises(SpecError, match="grid.variants: 'fixed-skills' and 'standard' play the same games"):
        load_spec(p)
    # without the key, the standard cell picks: a grid compares the two readings
    p.write_text(textwrap.dedent(SPEC.format(skills="", variants='["standard", "fixed-skills"]')))
    spec = load_spec(p)
    assert spec.model.experiment.skills == "pick"
    assert [c.variant for c in spec.cells()] == ["standard", "fixed-skills"]
    with pytest.raises(SpecError, match="play the same games"):
        spec.with_skills("fixed")
    p.write_text(textwrap.dedent(SPEC.format(skills="", variants='["standard", "easier"]')))
    spec = load_spec(p)
    assert spec.with_skills("fixed").hash != spec.hash
    assert [c.variant for c in spec.with_skills("fixed").cells()] == ["fixed-skills", "easier,fixed-skills"]
    with pytest.raises(SpecError, match="experiment.skills"):
        spec.with_skills("sometimes")
    p.write_text(textwrap.dedent(SPEC.format(skills='skills = "sometimes"', variants='["standard"]')))
    with pytest.raises(SpecError, match="skills"):
        load_spec(p)


def test_band_cells_take_skills(tmp_path):
    p = tmp_path / "bands.toml"
    p.write_text(textwrap.dedent("""
        [check]
        seed = 7
        games = 300
        batch = 100
        tolerance = 0.01

        [[cell]]
        name = "fixed"
        players = 3
        skills = "fixed"
        win_rate = [0.0, 1.0]

        [[cell]]
        name = "pick"
        players = 3
        win_rate = [0.0, 1.0]
    """))
    fixed, picked = run_check(p, update=True)
    want_fixed = int(sim.simulate(players=3, games=300, seed=7, variant="fixed-skills")["win"].sum())
    want_pick = int(sim.simulate(players=3, games=300, seed=7)["win"].sum())
    assert fixed.tally.wins == want_fixed and picked.tally.wins == want_pick
    both = run_check(p, update=True, skills="fixed")
    assert [r.tally.wins for r in both] == [want_fixed, want_fixed]
    p.write_text(p.read_text().replace('skills = "fixed"', 'skills = "fix"'))
    from sim.bands import BandsError

    with pytest.raises(BandsError, match="skills"):
        run_check(p, update=True)


def test_check_skills_names_each_cell_it_leaves_as_it_is_and_refuses_one_that_changes_none(tmp_path, capsys):
    """``check --skills`` on a cell whose skills are so already, or whose variant word fixes them, replays that
    cell's baseline: a warning names it; where no cell plays other games, the option is refused (exit 2)."""
    from sim.cli import main

    p = tmp_path / "b.toml"
    p.write_text(textwrap.dedent("""
        [check]
        seed = 7
        games = 100
        batch = 100
        tolerance = 0.5

        [[cell]]
        name = "variant"
        players = 3
        variant = "fixed-skills"
        win_rate = [0.0, 1.0]

        [[cell]]
        name = "fixed"
        players = 3
        skills = "fixed"
        win_rate = [0.0, 1.0]
    """))
    assert main(["check", str(p), "--update"]) == 0
    capsys.readouterr()
    main(["check", str(p), "--skills", "pick"])
    err = capsys.readouterr().err
    assert err.splitlines() == ["warning: --skills pick has no effect in cell[variant] (its variant 'fixed-skills' "
                                "fixes them): it replays its baseline's games"], err
    with pytest.raises(SystemExit) as e:
        main(["check", str(p), "--skills", "fixed"])
    assert e.value.code == 2 and str(e.value) == (
        "error: --skills fixed changes no cell of b.toml: cell[variant]: its variant 'fixed-skills' fixes them; "
        "cell[fixed]: its skills are 'fixed' already")


def test_check_update_with_another_content_pack_is_refused(tmp_path):
    """Baselines recorded from a pack the bands file does not name would fail every later check."""
    import shutil

    from sim.cli import main
    from sim.content import DEFAULT_PACK

    p = tmp_path / "b.toml"
    p.write_text("[check]\nseed = 7\ngames = 50\nbatch = 50\n\n[[cell]]\nname = \"c\"\nplayers = 2\n"
                 "win_rate = [0.0, 1.0]\n")
    shutil.copytree(DEFAULT_PACK, tmp_path / "pack")
    with pytest.raises(SystemExit) as e:
        main(["check", str(p), "--update", "--content", str(tmp_path / "pack")])
    assert e.value.code == 2 and str(e.value) == (
        "error: --content with --update would record baselines of a pack b.toml does not name, which every later "
        "check would compare with its own; set [check] content in b.toml instead")
    assert main(["check", str(p), "--update", "--content", str(DEFAULT_PACK)]) == 0  # the pack it plays anyway
