"""Content overrides (``--set``, spec ``[overrides]``, tune knobs): selectors and values are read
exactly, and anything that does not fit is refused naming the path, the value and the reason."""

from __future__ import annotations

import numpy as np
import pytest

from sim.content import ContentError, load_raw
from sim.content.overrides import (
    OverrideError,
    apply_overrides,
    get_path,
    load_with_overrides,
    parse_set,
)

ALL_S = ["S"] * 6


@pytest.fixture(scope="module")
def raw():
    return load_raw(None)


# ------------------------------------------------------------------ selectors on boolean fields
@pytest.mark.parametrize("word", ["true", "True"])
def test_a_true_selector_picks_the_dice_in_the_bag(raw, word):
    picked = get_path(raw, f"dice.die[in_bag={word}].name")
    assert picked == ["black", "red", "green", "blue", "brown"]


def test_a_false_selector_picks_the_die_out_of_the_bag(raw):
    assert get_path(raw, "dice.die[in_bag=false].name") == ["yellow"]
    patched = apply_overrides(raw, {"dice.die[in_bag=false].faces": ALL_S})
    assert [d["faces"] == ALL_S for d in patched["dice.toml"]["die"]] == [True] + [False] * 5


@pytest.mark.parametrize("word", ["yes", "1", "0", "no", "on", "tru", ""])
def test_a_boolean_selector_that_is_not_true_or_false_is_refused(raw, word):
    # "yes" and "1" used to read as false and edit the yellow die, the one out of the bag
    path = f"dice.die[in_bag={word}].faces"
    with pytest.raises(OverrideError) as e:
        apply_overrides(raw, {path: ALL_S})
    msg = str(e.value)
    assert f"dice.toml.die[in_bag={word}]" in msg, msg
    assert f"{word!r} is not true or false" in msg, msg


def test_a_bad_boolean_selector_is_refused_by_the_cli_in_one_line(capsys):
    from sim.cli import main

    with pytest.raises(SystemExit) as e:
        main(["play", "--games", "10", "--set", 'dice.die[in_bag=yes].faces=["S","S","S","S","S","S"]'])
    assert "dice.toml.die[in_bag=yes]" in str(e.value) and "not true or false" in str(e.value)
    assert "Traceback" not in capsys.readouterr().err


# ------------------------------------------------------------------ villain.counts values
def _kinds(raw) -> dict:
    comp = raw["villain.toml"]["composition"]
    return {k: comp[k] for k in ("plus_two", "plus_one", "minus_one", "injury")}


@pytest.mark.parametrize("value", [2, np.int64(2)])
def test_villain_counts_take_whole_numbers(raw, value):
    patched = apply_overrides(raw, {"villain.counts": {"minus_one": value, "injury": 0}})
    assert _kinds(patched)["minus_one"] == 2 and _kinds(patched)["injury"] == 0
    assert all(type(c["advance"]) is int for c in patched["villain.toml"]["card"])


@pytest.mark.parametrize("value", [2.7, 2.0, True, False, "3", "abc", float("nan"), float("inf"), None, [2]])
def test_villain_counts_refuse_anything_but_a_whole_number(raw, value):
    # 2.7 played like 2, true like 1 and "3" like 3; "abc", nan and inf ended in a traceback
    with pytest.raises(OverrideError) as e:
        apply_overrides(raw, {"villain.counts": {"minus_one": value}})
    assert str(e.value).startswith(f"villain.counts: minus_one = {value!r} is not a whole number"), str(e.value)


@pytest.mark.parametrize("text", ["{minus_one=2.7}", "{minus_one=true}", '{minus_one="3"}', '{minus_one="abc"}',
                                  "{minus_one=nan}", "{minus_one=inf}", "{minus_one=-inf}"])
def test_villain_counts_from_the_command_line_are_refused_naming_the_value(text):
    with pytest.raises(ContentError) as e:
        load_with_overrides(None, parse_set([f"villain.counts={text}"], "--set"), "--set")
    msg = str(e.value)
    assert msg.startswith("--set: villain.counts: minus_one = "), msg
    assert "is not a whole number" in msg, msg


def test_a_per_player_villain_mix_refuses_a_fraction_too():
    with pytest.raises(ContentError) as e:
        load_with_overrides(None, {"setup.player_count[players=4].villain_counts": {"minus_one": 2.7}}, "test")
    msg = str(e.value)
    assert msg.startswith("setup.toml: player_count 4: villain_counts.minus_one"), msg


@pytest.mark.parametrize("text", ["{minus_one=2.7}", "{minus_one=nan}"])
def test_bad_villain_counts_end_in_one_cli_line(text, capsys):
    from sim.cli import main

    with pytest.raises(SystemExit) as e:
        main(["play", "--games", "10", "--set", f"villain.counts={text}"])
    assert "villain.counts: minus_one" in str(e.value) and "not a whole number" in str(e.value)
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("kinds, table", [
    ({"villain.counts.injury": 5}, ("villain.counts", {"injury": 5})),
    ({"villain.counts": {"minus_one": 4}, "villain.counts.injury": 5}, ("villain.counts", {"minus_one": 4, "injury": 5})),
    ({"setup.player_count[players=4].villain_counts.minus_one": 5},
     ("setup.player_count[players=4].villain_counts", {"minus_one": 5})),
])
def test_one_kind_of_villain_card_is_a_path_of_its_own_as_tune_knobs_name_it(raw, kinds, table):
    """``villain.counts.injury = 5`` is ``villain.counts = {injury = 5}`` (and so for a player count's own
    ``villain_counts``): ``--set`` and spec overrides take the paths ``tune`` and ``sensitivity`` knobs name."""
    assert apply_overrides(raw, kinds) == apply_overrides(raw, dict([table]))
    with pytest.raises(OverrideError, match=r"override 'villain\.counts\.injuries': no villain card kind 'injuries' "
                                            r"\(kinds: injury, minus_one, plus_one, plus_two\)"):
        apply_overrides(raw, {"villain.counts.injuries": 5})
