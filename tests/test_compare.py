"""compare's --baseline: values with commas (mixed teams, combined variants), and what its rows say of the
games they pair (the same games, or other player counts paired by game index) and of degenerate rows."""

import json
import textwrap

import pytest

from sim.cli import main
from sim.compare import GAME_INDEX, SAME_GAMES, compare_run, parse_baseline
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
    """A --baseline value no cell has is the option's fault: exit 2, as for any option value refused before work."""
    code, _, err = compare(capsys, mixed, "strategy=heuristic,bold")
    assert code == 2
    assert err.startswith("error: --baseline strategy=heuristic,bold: baseline")
    assert f"baseline strategy='heuristic,bold' matches no cell; the cells' strategy values are 'heuristic', '{TEAM}'" \
        in err, err
    code, _, err = compare(capsys, mixed, "variant=dirty-lobo,easier")
    assert code == 2
    assert "the cells' variant values are 'dirty-lobo,dirty-location', 'standard'" in err, err


def test_compare_run_names_an_unknown_dimension_as_the_command_line_does(mixed):
    """A baseline key that is no dimension was a bare KeyError: 'strat'; it is refused in --baseline's words,
    and the command line's text given as the baseline is refused as no dict."""
    with pytest.raises(ValueError) as e:
        compare_run(mixed, {"strat": "heuristic"})
    assert str(e.value) == "compare_run baseline: unknown dimension 'strat'; use players, strategy, variant, characters, setup"
    with pytest.raises(ValueError, match=r"^--baseline: unknown dimension 'strat'; use players, strategy, variant, "):
        parse_baseline("strat=heuristic")
    with pytest.raises(TypeError) as e:
        compare_run(mixed, "strategy=heuristic")
    assert str(e.value) == ("compare_run: baseline must be a dict such as {'strategy': 'heuristic'}, or None for the "
                            "spec's [compare] baseline, got str 'strategy=heuristic' (sim.compare.parse_baseline reads "
                            "the command line's text)")


# ------------------------------------------------------------------ what the pairing is
def test_other_player_counts_are_paired_by_game_index_not_called_the_same_games(counts, capsys):
    code, out, err = compare(capsys, counts, "players=2")
    assert code == 0, err
    first = out.splitlines()[0]
    assert first.startswith("2 paired differences in win rate against baseline players=2 (paired by seed and game "
                            "index only: other player counts play other games; the width column shows what pairing gained)"), first
    assert "same games" not in out
    table, _ = compare_run(counts, {"players": 2})
    assert set(table["pairing"]) == {GAME_INDEX}
    # a strategy against another at one player count: the same games
    code, out, _ = compare(capsys, counts, "strategy=heuristic")
    assert code == 0 and out.splitlines()[0].endswith("against baseline strategy=heuristic (same games)")
    assert set(compare_run(counts, {"strategy": "heuristic"})[0]["pairing"]) == {SAME_GAMES}


def test_rows_of_both_pairings_are_marked(counts, capsys):
    code, out, err = compare(capsys, counts, "players=2,strategy=heuristic")
    assert code == 0, err
    assert ("(same games at the baseline's player count; rows marked ~ have another player count, which plays other "
            "games: paired by seed and game index only)") in out.splitlines()[0]
    rows = {line.split()[0]: line for line in out.splitlines() if line.startswith(("p2_", "p3_"))}
    assert set(rows) == {"p2_random_standard_default_default", "p3_heuristic_standard_default_default",
                         "p3_random_standard_default_default"}
    for cell, line in rows.items():
        assert line.endswith(" ~") == cell.startswith("p3"), line


def test_a_row_where_neither_cell_wins_prints_no_nan(counts, capsys):
    """random wins no game at 2 or 3 players: the unpaired interval is a point and has no width to compare."""
    code, out, err = compare(capsys, counts, "players=2")
    assert code == 0, err
    assert "nan" not in out.lower()
    (line,) = [x for x in out.splitlines() if x.startswith("p3_random_")]
    fields = line.split()
    assert fields[1:4] == ["0.00%", "0.00%", "+0.00"] and fields[-2:] == ["n/a", "-"], line
    assert "unpaired n/a, width -: in 1 row each cell won none or all of its games" in out
    # the JSON is JSON: null, not NaN
    main(["compare", str(counts), "--baseline", "players=2", "--json"])
    text = capsys.readouterr().out

    def refuse(name):
        raise AssertionError(f"{name} in --json output")

    rows = {r["cell"]: r for r in json.loads(text, parse_constant=refuse)}
    assert rows["p3_random_standard_default_default"]["width_ratio"] is None
    # the folder's summary.parquet names the folder, as read_summary takes it
    main(["compare", str(counts / "summary.parquet"), "--baseline", "players=2", "--json"])
    assert json.loads(capsys.readouterr().out) == json.loads(text)
    assert rows["p3_heuristic_standard_default_default"]["width_ratio"] > 0
    assert {r["pairing"] for r in rows.values()} == {GAME_INDEX}
