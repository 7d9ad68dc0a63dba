"""compare's --baseline: values with commas (mixed teams, combined variants)."""

import textwrap

import pytest

from sim.cli import main
from sim.compare import compare_run, parse_baseline
from sim.experiments import load_spec
from sim.study import run_study

MIXED = """
[experiment]
name = "mixed_variants"
seed = 5
games = 40
batch = 40

[grid]
players = [3]
strategies = ["heuristic", "heuristic,bold,cautious"]
variants = ["standard", "dirty"]
"""

COUNTS = """
[experiment]
name = "counts"
seed = 5
games = 40
batch = 40

[grid]
players = [2, 3]
strategies = ["heuristic", "random"]
"""

TEAM = "heuristic,bold,cautious"


def _run(tmp_path_factory, name: str, text: str):
    tmp = tmp_path_factory.mktemp(name)
    p = tmp / f"{name}.toml"
    p.write_text(textwrap.dedent(text))
    report = run_study(load_spec(p), tmp / "out", progress=False, charts=False)
    assert report.finished
    return tmp / "out"


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    return _run(tmp_path_factory, "mixed", MIXED)


@pytest.fixture(scope="module")
def counts(tmp_path_factory):
    return _run(tmp_path_factory, "counts", COUNTS)


def compare(capsys, out, *baseline: str) -> tuple[int, str, str]:
    argv = ["compare", str(out)] + [a for b in baseline for a in ("--baseline", b)]
    try:
        code, said = main(argv), ""
    except SystemExit as e:  # an error: its message is the exit code
        code, said = (1, e.code) if isinstance(e.code, str) else (e.code, "")
    cap = capsys.readouterr()
    return code, cap.out, cap.err + said


# ------------------------------------------------------------------ values with commas
def test_the_baseline_splits_only_at_a_comma_before_a_dimension():
    assert parse_baseline(f"strategy={TEAM}") == {"strategy": TEAM}
    assert parse_baseline("variant=dirty-lobo,dirty-location") == {"variant": "dirty-lobo,dirty-location"}
    assert parse_baseline("strategy=heuristic, bold , cautious,variant=dirty-lobo,dirty-location,players=3") == {
        "strategy": TEAM, "variant": "dirty-lobo,dirty-location", "players": 3}
    assert parse_baseline("characters=Calli Dagger,Nika Shizuka,setup=default") == {
        "characters": "Calli Dagger,Nika Shizuka", "setup": "default"}
    for text, says in [("heuristic", "expects DIMENSION=VALUE"), ("strategy=a,bogus=1", "unknown dimension 'bogus'"),
                       ("strategy=a,strategy=b", "names strategy twice"), ("players=4,5", "one player count"),
                       ("strategy=a,,b", "empty value"), ("strategy=", "empty value")]:
        with pytest.raises(ValueError, match=says):
            parse_baseline(text)


def test_a_mixed_team_is_a_baseline(mixed, capsys):
    code, out, err = compare(capsys, mixed, f"strategy={TEAM}")
    assert code == 0, err
    assert out.startswith(f"2 paired differences in win rate against baseline strategy={TEAM} (same games)")
    table, baseline = compare_run(mixed, parse_baseline(f"strategy={TEAM}"))
    assert baseline == {"strategy": TEAM}
    assert sorted(table["cell"]) == ["p3_heuristic_dirty-lobo+dirty-location_default_default",
                                     "p3_heuristic_standard_default_default"]
    assert all(b.startswith("p3_heuristic+bold+cautious_") for b in table["baseline_cell"])
    # spaces after the commas name the same team
    assert compare_run(mixed, parse_baseline("strategy=heuristic, bold, cautious"))[0].equals(table)


def test_a_combined_variant_is_a_baseline(mixed, capsys):
    code, out, err = compare(capsys, mixed, "variant=dirty-lobo,dirty-location")
    assert code == 0, err
    assert out.startswith("2 paired differences in win rate against baseline variant=dirty-lobo,dirty-location")
    table, _ = compare_run(mixed, parse_baseline("variant=dirty-lobo,dirty-location"))
    assert set(table["variant"]) == {"standard"}
    assert compare_run(mixed, parse_baseline("variant=dirty"))[0].equals(table)  # the grid's word for it
    # both at once: the mixed team on the dirty variant against the other three cells
    code, out, err = compare(capsys, mixed, f"strategy={TEAM},variant=dirty-lobo,dirty-location")
    assert code == 0, err
    assert out.startswith(f"3 paired differences in win rate against baseline strategy={TEAM},"
                          "variant=dirty-lobo,dirty-location (same games)")


def test_a_baseline_that_matches_no_cell_lists_the_values_there_are(mixed, capsys):
    code, _, err = compare(capsys, mixed, "strategy=heuristic,bold")
    assert code != 0
    assert f"baseline strategy='heuristic,bold' matches no cell; the cells' strategy values are 'heuristic', '{TEAM}'" \
        in err, err
    code, _, err = compare(capsys, mixed, "variant=dirty-lobo,easier")
    assert code != 0
    assert "the cells' variant values are 'dirty-lobo,dirty-location', 'standard'" in err, err
