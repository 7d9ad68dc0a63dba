"""Sweeps in specs and --set on the command line."""

import json
import textwrap

import pytest

from sim.cli import main
from sim.content.overrides import OverrideError, parse_set
from sim.experiments import OptionError, SpecError, load_spec

SWEEP = """
[experiment]
name = "sweep"
seed = 3
games = 400
batch = 200

[grid]
players = [4]
setups = ["default", "lobo", "mix"]

[setup.lobo]
overrides = { "lobo.track.start" = [0, 1, 2] }

[setup.mix]
overrides = { "villain.counts" = { minus_one = "2..4" }, "setup.player_count[players=4].location_target" = 4 }

[compare]
baseline = { setup = "default" }
"""


def only(setups: str, tables: str) -> str:
    """SWEEP with grid.setups ``setups`` and the setup tables ``tables`` instead of its own (a table the grid
    does not list is refused)."""
    head = SWEEP.split("[setup.lobo]")[0].replace('setups = ["default", "lobo", "mix"]', f"setups = {setups}")
    return head + textwrap.dedent(tables) + '\n[compare]\nbaseline = { setup = "default" }\n'


def spec_file(tmp_path, text=SWEEP):
    p = tmp_path / "spec.toml"
    p.write_text(textwrap.dedent(text))
    return p


def test_lists_and_ranges_expand_into_one_setup_per_value(tmp_path):
    s = load_spec(spec_file(tmp_path))
    assert [c.setup for c in s.cells()] == [
        "default", "lobo-start=0", "lobo-start=1", "lobo-start=2",
        "mix-minus_one=2", "mix-minus_one=3", "mix-minus_one=4"]
    assert s.overrides_of("lobo-start=2") == {"lobo.track.start": 2}
    assert s.overrides_of("mix-minus_one=3") == {
        "villain.counts": {"minus_one": 3}, "setup.player_count[players=4].location_target": 4}


def test_two_sweeps_in_one_setup_give_every_combination(tmp_path):
    text = only('["default", "both"]', """
        [setup.both]
        overrides = { "lobo.track.start" = "0..1", "setup.player_count[players=4].overflow_limit" = [3, 5] }
        """)
    s = load_spec(spec_file(tmp_path, text))
    assert [c.setup for c in s.cells()][1:] == ["both-start=0-overflow_limit=3", "both-start=0-overflow_limit=5",
                                           "both-start=1-overflow_limit=3", "both-start=1-overflow_limit=5"]


@pytest.mark.parametrize("path, leaf", [
    ("setup.player_count[players=4].lobo_start", "lobo_start"),  # an optional key the default pack leaves out
    ("setup.player_count[*].overflow_limit", "overflow_limit"),  # a path that selects several entries
])
@pytest.mark.parametrize("values", ['"3..5"', "[3, 4, 5]"])
def test_ranges_expand_on_optional_keys_and_several_entries(tmp_path, path, leaf, values):
    text = only('["default", "x"]', f'\n[setup.x]\noverrides = {{ "{path}" = {values} }}\n')
    s = load_spec(spec_file(tmp_path, text))
    assert [c.setup for c in s.cells()] == ["default"] + [f"x-{leaf}={v}" for v in (3, 4, 5)]
    assert s.overrides_of(f"x-{leaf}=4") == {path: 4}


@pytest.mark.parametrize("path, holds", [
    ("setup.player_count[players=4].lineup", "a list or a table"),
    ("setup.player_count[*].remove_minus_one", "true or false"),
])
def test_a_range_on_a_field_that_is_no_integer_is_refused_saying_so(tmp_path, path, holds):
    text = SWEEP.replace('setups = ["default", "lobo", "mix"]', 'setups = ["x"]') + f'\n[setup.x]\noverrides = {{ "{path}" = "0..2" }}\n'
    with pytest.raises(SpecError) as e:
        load_spec(spec_file(tmp_path, text))
    assert f"setup.x.overrides.{path}" in str(e.value) and "a LO..HI range sweeps a field that holds one integer" in str(e.value)
    assert holds in str(e.value)


def test_a_list_valued_field_is_a_value_not_a_sweep(tmp_path):
    text = only('["default", "line"]', """
        [setup.line]
        overrides = { "setup.player_count[players=4].lineup" = ["Calli Dagger", "Rocko Jurgen", "Dexter Kane", "Calli Dagger"] }
        """)
    s = load_spec(spec_file(tmp_path, text))
    assert [c.setup for c in s.cells()] == ["default", "line"]


@pytest.mark.parametrize("bad, key", [
    ('"lobo.track.start" = "3..1"', "setup.bad.overrides.lobo.track.start"),
    ('"lobo.track.start" = []', "setup.bad.overrides.lobo.track.start"),
    ('"lobo.track.start" = [1, 1]', "setup.bad.overrides.lobo.track.start"),
    ('"lobo.track.start" = [0, 12]', "setup.bad"),  # 12 is off the printed track: the expanded setup is refused
])
def test_bad_sweeps_are_refused_naming_the_key(tmp_path, bad, key):
    text = only('["default", "bad"]', f"\n[setup.bad]\noverrides = {{ {bad} }}\n")
    with pytest.raises(SpecError) as e:
        load_spec(spec_file(tmp_path, text))
    assert key in str(e.value)


def test_a_swept_baseline_must_name_one_value(tmp_path):
    with pytest.raises(SpecError, match="is a sweep"):
        load_spec(spec_file(tmp_path, SWEEP.replace('baseline = { setup = "default" }', 'baseline = { setup = "lobo" }')))


def test_set_parsing():
    assert parse_set(["lobo.track.start=2", "villain.counts={minus_one=4}", "setup.player_count[players=1].lineup=['Nika Shizuka']"]) == {
        "lobo.track.start": 2, "villain.counts": {"minus_one": 4},
        "setup.player_count[players=1].lineup": ["Nika Shizuka"]}
    assert parse_set(["x.y=Calli Dagger"]) == {"x.y": "Calli Dagger"}
    for bad in (["lobo.track.start"], ["=3"], ["x.y="], ["a.b=1", "a.b=2"]):
        with pytest.raises(OverrideError):
            parse_set(bad)


def test_play_with_set_equals_play_of_the_edited_pack(tmp_path, capsys):
    import shutil

    from sim.content import DEFAULT_PACK

    shutil.copytree(DEFAULT_PACK, tmp_path / "pack")
    f = tmp_path / "pack" / "lobo.toml"
    f.write_text(f.read_text().replace("start = 0\n", "start = 1\n", 1))
    assert main(["play", "--games", "3000", "--json", "--set", "lobo.track.start=1"]) == 0
    with_set = json.loads(capsys.readouterr().out)
    assert main(["play", "--games", "3000", "--json", "--content", str(tmp_path / "pack")]) == 0
    edited = json.loads(capsys.readouterr().out)
    assert with_set["overrides"] == {"lobo.track.start": 1}
    for k in ("wins", "outcomes", "turn_quantiles", "content_hash"):
        assert with_set[k] == edited[k], k
    assert main(["play", "--games", "3000", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["wins"] != with_set["wins"]


def test_set_off_the_board_is_refused_in_one_line(capsys):
    with pytest.raises(SystemExit) as e:
        main(["play", "--games", "10", "--set", "lobo.track.start=-5"])
    assert "start = -5" in str(e.value) and "0..8" in str(e.value)


def test_run_with_set_changes_every_cell_and_the_spec_hash(tmp_path):
    s = load_spec(spec_file(tmp_path))
    t = s.with_overrides({"setup.player_count[players=4].overflow_limit": 3})
    assert t.hash != s.hash
    assert t.overrides_of("default") == {"setup.player_count[players=4].overflow_limit": 3}
    assert t.overrides_of("lobo-start=1") == {"setup.player_count[players=4].overflow_limit": 3, "lobo.track.start": 1}
    with pytest.raises(OptionError) as e:  # the command line's --set is at fault, not the spec
        s.with_overrides({"lobo.track.start": 40})
    assert str(e.value).startswith("--set: lobo.toml: track: start = 40 is off the printed track")


def test_check_set_with_update_is_refused():
    with pytest.raises(SystemExit, match="--set with --update"):
        main(["check", "experiments/bands.toml", "--update", "--set", "lobo.track.start=1"])


def test_an_unlisted_sweep_is_refused_naming_its_table(tmp_path):
    text = SWEEP.replace('setups = ["default", "lobo", "mix"]', 'setups = ["default", "mix"]')
    with pytest.raises(SpecError) as e:
        load_spec(spec_file(tmp_path, text))
    assert str(e.value).startswith("spec.toml: setup.lobo: is defined but not listed in grid.setups")


def test_a_set_typo_is_blamed_on_the_option_not_the_spec(tmp_path):
    with pytest.raises(SystemExit) as e:
        main(["run", str(spec_file(tmp_path)), "--set", "lobo.track.strat=2", "--out", str(tmp_path / "out")])
    assert str(e.value) == "error: --set: override 'lobo.track.strat': lobo.toml.track has no key 'strat' (keys: loss, start)"


def test_a_set_that_one_setup_cannot_take_names_the_option_and_the_setup(tmp_path):
    text = only('["default", "few"]', """
        [setup.few]
        overrides = { "intel.components.un_transport" = [7, 8] }
        """)
    with pytest.warns(UserWarning, match="7 UN Transport tokens"):
        s = load_spec(spec_file(tmp_path, text))
        with pytest.raises(OptionError) as e:  # 4 players x 2 extra UN Transports: 8 tokens; few-un_transport=7 has 7
            s.with_overrides({"setup.player_count[players=4].extra_un": 2})
    assert str(e.value).startswith("--set: with [setup.few] of spec.toml: setup 'few-un_transport=7': setup.toml: "
                                   "player_count 4: extra_un = 2: "), str(e.value)


def test_the_readmes_sweep_example_names_the_setups_run_makes(tmp_path):
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    block = readme.split("# a sweep in a spec:")[1].split("\n\n")[0]
    tables = "\n".join(line.split("  #")[0].rstrip() for line in block.splitlines()[2:])
    s = load_spec(spec_file(tmp_path, only('["default", "lobo", "mix"]', tables)))
    made = [c.setup for c in s.cells()][1:]
    assert made == [f"lobo-lobo_start={v}" for v in (0, 1, 2)] + [f"mix-minus_one={v}" for v in range(2, 7)]
    assert "# setups lobo-lobo_start=0, =1, =2" in block and "# setups mix-minus_one=2 .. =6" in block
