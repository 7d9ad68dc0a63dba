"""Content overrides (``--set``, spec ``[overrides]``, tune knobs): selectors and values are read
exactly, and anything that does not fit is refused naming the path, the value and the reason."""

from __future__ import annotations

import pytest

from sim.content import load_raw
from sim.content.overrides import OverrideError, apply_overrides, get_path

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
