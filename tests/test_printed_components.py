"""The printed values of the components beyond their counts: the dice's faces and which die stays out of the
bag, the Intel mix, the -1 villain cards, the printed characters (Calli's UN gift, Rocko's smaller Resolve cut,
one character with the Watch), henchmen and status cards. Set off the printed value, by ``--set`` or in a
designer's own pack, each is played with one UnprintedValueWarning for each field; a value the pack tags
``assumed`` (the rulebooks do not print it) changes without one."""

from __future__ import annotations

import re
import shutil
import warnings
from pathlib import Path

import pytest

from sim.cli import main
from sim.content import DEFAULT_PACK, UnprintedValueWarning, load, load_raw, unprinted
from sim.content.overrides import load_with_overrides, parse_set

TAIL = " (legal, but not the published game)"
YELLOW_ALL_S = 'dice.die[name=yellow].faces=["S","S","S","S","S","S"]'
YELLOW_SAID = ("dice.toml: die 'yellow': faces = [\"S\", \"S\", \"S\", \"S\", \"S\", \"S\"]; the printed game has "
               "[\"S\", \"I\", \"H\", \"-\", \"-\", \"-\"]")


def said(*items: str, pack=DEFAULT_PACK) -> list[str]:
    """The UnprintedValueWarnings of ``pack`` with ``--set`` ``items``, tail included."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        load_with_overrides(pack, parse_set(list(items)))
    return [str(w.message) for w in seen if issubclass(w.category, UnprintedValueWarning)]


def character(name: str, field: str) -> str:
    return f"characters.character[name={name}].{field}"


# ------------------------------------------------------------------ the default pack
def test_the_default_pack_loads_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnprintedValueWarning)
        c = load(DEFAULT_PACK)
        load_with_overrides(DEFAULT_PACK, {})
    assert unprinted(c) == []


def test_the_printed_values_are_the_default_packs():
    """The printed tables of the loader agree with the default pack's files wherever they print a value."""
    from sim.content.loader import (
        PRINTED_CHARACTERS,
        PRINTED_DICE,
        PRINTED_GIVES_UN,
        PRINTED_HENCHMEN,
        PRINTED_INTEL,
        PRINTED_MINUS_ONE,
        PRINTED_OUT_OF_BAG,
        PRINTED_REDUCED_CUT,
        PRINTED_STATUS,
        PRINTED_STATUS_EFFECT,
        PRINTED_THIRD_PERSONS,
        PRINTED_WATCH,
    )

    raw = load_raw()
    dice = {d["name"]: d for d in raw["dice.toml"]["die"]}
    assert set(dice) == set(PRINTED_DICE)
    for name, counts in PRINTED_DICE.items():
        assert {f: dice[name]["faces"].count(f) for f in counts} == counts, name
        assert dice[name]["in_bag"] == (name != PRINTED_OUT_OF_BAG)
        # a die whose faces are not all printed tags them assumed; Yellow's are all printed and are not tagged
        assert ("faces" in dice[name].get("assumed", [])) == (sum(counts.values()) < 6), name
    assert {t: raw["intel.toml"]["tokens"][t] for t in PRINTED_INTEL} == PRINTED_INTEL
    assert raw["villain.toml"]["composition"]["minus_one"] == PRINTED_MINUS_ONE
    chars = {c["name"]: c for c in raw["characters.toml"]["character"]}
    assert set(PRINTED_CHARACTERS) <= set(chars)
    for name, c in chars.items():
        assert c.get("gives_un", False) == (name == PRINTED_GIVES_UN)
        assert c.get("reduced_resolve_cut", False) == (name == PRINTED_REDUCED_CUT)
        assert not {"gives_un", "reduced_resolve_cut"} & set(c.get("assumed", []))
    assert [h["name"] for h in raw["henchmen.toml"]["henchman"]] == list(PRINTED_HENCHMEN)
    status = {s["name"]: s for s in raw["status.toml"]["status"]}
    assert set(PRINTED_STATUS) <= set(status) and PRINTED_WATCH in PRINTED_STATUS
    watch = status[PRINTED_WATCH]["id"]
    assert sum(watch in c.get("start_status", []) for c in chars.values()) == 1
    for name, effect in PRINTED_STATUS_EFFECT.items():
        assert status[name]["effect"] == effect and "effect" not in status[name]["assumed"]
    for name in PRINTED_THIRD_PERSONS:
        assert status[name]["polarity"] == "third_person" and "polarity" not in status[name]["assumed"]


# ------------------------------------------------------------------ the audit's commands
AUDIT = [
    (4, YELLOW_ALL_S, [YELLOW_SAID]),
    (4, "intel.tokens={weapon=9, tech=4, double_agent=4, atomic=3, total=20}",
     ["intel.toml: tokens: weapon = 9; the printed game has 8", "intel.toml: tokens: tech = 4; the printed game has 5"]),
    (4, "villain.counts={minus_one=6}", ["villain.toml: composition: minus_one = 6; the printed game has 2"]),
    (5, character("Rocko Jurgen", "reduced_resolve_cut") + "=false",
     ["characters.toml: character 'Rocko Jurgen': reduced_resolve_cut = false; the printed game has true"]),
    (5, character("Calli Dagger", "gives_un") + "=false",
     ["characters.toml: character 'Calli Dagger': gives_un = false; the printed game has true"]),
]


@pytest.mark.parametrize("players, item, lines", AUDIT, ids=[a[1] for a in AUDIT])
def test_the_audited_printed_values_warn_in_play(players, item, lines, capsys):
    assert main(["play", "--players", str(players), "--games", "5", "--set", item]) == 0
    assert capsys.readouterr().err == "".join(f"warning: {x}{TAIL}\n" for x in lines)
    assert said(item) == [x + TAIL for x in lines]


# ------------------------------------------------------------------ every printed value
OFF_PRINT = [
    ('dice.die[name=black].faces=["S","S","S","S","S","-"]',
     ["dice.toml: die 'black': faces = [\"S\", \"S\", \"S\", \"S\", \"S\", \"-\"]; the printed game has 4 \"S\" and "
      "1 \"II\" among its faces"]),
    ('dice.die[name=green].faces=["S","S","S","I","-","-"]',
     ["dice.toml: die 'green': faces = [\"S\", \"S\", \"S\", \"I\", \"-\", \"-\"]; the printed game has 3 \"S\" and "
      "2 \"I\" among its faces"]),
    ('dice.die[name=brown].faces=["S","S","-","-","-","-"]',
     ["dice.toml: die 'brown': faces = [\"S\", \"S\", \"-\", \"-\", \"-\", \"-\"]; the printed game has 1 \"S\" "
      "among its faces"]),
    ('dice.die[name=yellow].faces=["S","I","I","-","-","-"]',
     ["dice.toml: die 'yellow': faces = [\"S\", \"I\", \"I\", \"-\", \"-\", \"-\"]; the printed game has "
      "[\"S\", \"I\", \"H\", \"-\", \"-\", \"-\"]"]),
    ("dice.die[name=red].name=purple", ["dice.toml: no die 'red'; the printed game has one"]),
    ("intel.tokens={weapon=7, atomic=4}",
     ["intel.toml: tokens: weapon = 7; the printed game has 8", "intel.toml: tokens: atomic = 4; the printed game has 3"]),
    ("villain.counts.minus_one=0", ["villain.toml: composition: minus_one = 0; the printed game has 2"]),
    ("setup.player_count[players=4].villain_counts={minus_one=4}",
     ["setup.toml: player_count 4: villain_counts.minus_one = 4; the printed game has 2"]),
    (character("Nika Shizuka", "gives_un") + "=true",
     ["characters.toml: character 'Nika Shizuka': gives_un = true; the printed game has false"]),
    (character("Nika Shizuka", "reduced_resolve_cut") + "=true",
     ["characters.toml: character 'Nika Shizuka': reduced_resolve_cut = true; the printed game has false"]),
    (character("Dexter Kane", "start_status") + "=[]",
     ["characters.toml: 0 characters starting with the Watch; the printed game has 1"]),
    (character("Nika Shizuka", "start_status") + '=["watch"]',
     ["characters.toml: 2 characters starting with the Watch; the printed game has 1"]),
    ("status.status[id=watch].effect=none",
     ["status.toml: status 'watch': effect = \"none\"; the printed game has \"watch\""]),
    ("status.status[id=the_small_man].polarity=positive",
     ["status.toml: status 'the_small_man': polarity = \"positive\"; the printed game has \"third_person\""]),
    ('status.status[id=cool_agent].name="Cool Guy"', ["status.toml: no status card 'Cool Agent'; the printed game has one"]),
]


@pytest.mark.parametrize("item, lines", OFF_PRINT, ids=[a[0] for a in OFF_PRINT])
def test_a_printed_value_off_the_printed_game_warns_once_per_field(item, lines):
    assert said(item) == [x + TAIL for x in lines]


def test_the_die_out_of_the_bag_is_printed():
    assert said("dice.die[name=yellow].in_bag=true", "dice.die[name=black].in_bag=false") == [
        f"dice.toml: die 'yellow': in_bag = true; the printed game has false{TAIL}",
        f"dice.toml: die 'black': in_bag = false; the printed game has true{TAIL}"]


# the values the rulebooks do not print (tagged assumed in the default pack): no warning
ASSUMED = [
    'dice.die[name=black].faces=["S","S","S","S","II","I"]',  # the sixth face
    'dice.die[name=red].faces=["S","S","S","I","II","H"]',  # the three faces not printed
    'dice.die[name=yellow].faces=["-","H","-","I","-","S"]',  # the printed faces in another order
    "villain.counts={plus_two=15}",  # the +2 / +1 split
    "villain.counts={injury=4}",
    character("Calli Dagger", "start_un") + "=2",
    character("Rocko Jurgen", "life") + "=7",
    character("Agent Five", "resolve_start") + "=1",
    (character("Agent Five", "gives_un") + "=true", character("Agent Five", "reduced_resolve_cut") + "=true"),
    "status.status[id=nine_lives].polarity=negative",
    "status.status[id=cool_agent].amount=2",
    "henchmen.henchman[name=Darling].level[0].options[0].modifier=0",
    ("top_secret.card_type[effect=auto_pass].count=5", "top_secret.card_type[effect=two_dice].count=5"),
    "lobo.position[position=3].intel=[\"W\"]",
]


def test_assumed_values_change_without_a_warning():
    for items in ASSUMED:
        assert said(*([items] if isinstance(items, str) else items)) == [], items
    # which character holds the Watch is assumed, that one does is printed
    assert said(character("Dexter Kane", "start_status") + "=[]", character("Nika Shizuka", "start_status") +
                '=["watch"]') == []


# ------------------------------------------------------------------ a designer's own pack
def test_a_designers_pack_warns_as_set_does(tmp_path, capsys):
    pack = tmp_path / "my-pack"
    shutil.copytree(DEFAULT_PACK, pack)

    def edit(file: str, old: str, new: str, count: int = 1):
        text = (pack / file).read_text(encoding="utf-8")
        assert text.count(old) == count, (file, old)
        (pack / file).write_text(text.replace(old, new), encoding="utf-8")

    edit("dice.toml", 'faces = ["S", "I", "H", "-", "-", "-"]', 'faces = ["S", "S", "S", "S", "S", "S"]')
    edit("characters.toml", "reduced_resolve_cut = true", "reduced_resolve_cut = false")
    for file, n in (("characters.toml", 1), ("setup.toml", 3)):
        edit(file, '"Nika Shizuka"', '"Nika"', n)
    for file, n in (("henchmen.toml", 1), ("encounters.toml", 5)):
        edit(file, '"Pierre"', '"Pierrot"', n)
    lines = [YELLOW_SAID, "henchmen.toml: no henchman 'Pierre'; the printed game has one",
             "characters.toml: no character 'Nika Shizuka'; the printed game has one",
             "characters.toml: character 'Rocko Jurgen': reduced_resolve_cut = false; the printed game has true"]
    assert said(pack=pack) == [x + TAIL for x in lines]
    assert main(["play", "--players", "5", "--games", "5", "--content", str(pack)]) == 0
    assert capsys.readouterr().err == "".join(f"warning: {x}{TAIL}\n" for x in lines)


# ------------------------------------------------------------------ the other commands
BANDS = """
[check]
seed = 7
games = 20
batch = 20
tolerance = 0.5

[[cell]]
name = "4p"
players = 4
strategy = "heuristic"
win_rate = [0.0, 1.0]
baseline = { seed = 7, games = 20, wins = 5 }
"""


def test_trace_and_check_warn_once(tmp_path, capsys):
    assert main(["trace", "--players", "4", "--set", YELLOW_ALL_S]) == 0
    assert capsys.readouterr().err == f"warning: {YELLOW_SAID}{TAIL}\n"
    bands = tmp_path / "b.toml"
    bands.write_text(BANDS, encoding="utf-8")
    main(["check", str(bands), "--set", YELLOW_ALL_S])
    err = capsys.readouterr().err
    assert err.count("warning: ") == 1 and f"warning: {YELLOW_SAID}{TAIL}\n" in err, err


def test_sensitivity_says_the_steps_off_the_printed_game_once(capsys):
    assert main(["sensitivity", "--players", "4", "--games", "20", "--knob", "villain.counts.minus_one"]) == 0
    warned = [x for x in capsys.readouterr().err.splitlines() if x.startswith("warning:")]
    assert warned == ["warning: villain.toml: composition, in sensitivity's steps: minus_one = 1, 3 (printed: 2); "
                      "legal, but not the published game"]


def test_a_summary_of_faces_and_missing_names():
    from sim.content.loader import Unprinted, _Said, unprinted_summary

    yellow = [Unprinted("dice.toml", "die 'yellow'", "faces", "faces", f, ["S", "I", "H", "-", "-", "-"])
              for f in (["S"] * 6, ["-"] * 6)]
    gone = Unprinted("henchmen.toml", None, None, "henchman 'Pierre'", None, _Said("one"))
    assert unprinted_summary([*yellow, gone, gone], "tune's settings") == [
        'dice.toml: die \'yellow\', in tune\'s settings: faces = ["-", "-", "-", "-", "-", "-"], ["S", "S", "S", "S", '
        '"S", "S"] (printed: ["S", "I", "H", "-", "-", "-"]); legal, but not the published game',
        f"henchmen.toml: no henchman 'Pierre'; the printed game has one{TAIL}"]


def test_the_readme_names_what_warns():
    """README.md's list of what warns names each printed value of the components."""
    text = re.sub(r"\s+", " ", (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8"))
    for words in ("the faces each die prints", "which die stays out of the bag", "the Intel mix",
                  "the two -1 villain cards", "Calli's UN gift", "Rocko's smaller Resolve cut"):
        assert words in text, words
