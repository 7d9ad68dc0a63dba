"""The printed set-up values: a Location target the Location Track can never reach is refused, and
a set-up value the rulebook prints otherwise is played with an UnprintedValueWarning."""

import pytest

from sim.content import DEFAULT_PACK, ContentError, load
from sim.content.overrides import load_with_overrides
from sim.rules.encounters import henchman_encounter
from sim.rules.errors import GameOver
from sim.rules.state import DEFEATED, Outcome
from tests.rules_helpers import DICE, clear_table, face, install_rng, new_game, put, put_green

# the most Location Track advances by player count in the default pack: 4 henchmen x 3 levels,
# less one for each henchman starting at level 2 (2 solo, 1 with two players)
MOST = {1: 10, 2: 11, 3: 12, 4: 12, 5: 12, 6: 12}


def row(players: int, field: str) -> str:
    return f"setup.player_count[players={players}].{field}"


# ------------------------------------------------------------------ the Location target's reach
@pytest.mark.filterwarnings("ignore::sim.content.UnprintedValueWarning")  # the values up to the bound: legal, not printed
@pytest.mark.parametrize("players", sorted(MOST))
def test_a_location_target_beyond_the_henchman_passes_is_refused(players):
    most = MOST[players]
    with pytest.raises(ContentError) as e:
        load_with_overrides(DEFAULT_PACK, {row(players, "location_target"): most + 1})
    err = e.value
    assert (err.file, err.entry) == ("setup.toml", f"player_count {players}"), str(err)
    assert err.reason.startswith(f"location_target = {most + 1}, but the Location Track can advance at most {most} "
                                 f"times in a {players}-player game, so the Location win could never happen"), str(err)
    assert "henchmen.toml's 4 henchmen x 3 levels" in err.reason
    assert ("henchmen_level2" in err.reason) == (most < 12)
    # the most itself is reachable: played, not refused (the dirty-location variant's +1 off)
    c = load_with_overrides(DEFAULT_PACK, {row(players, "location_target"): most,
                                           "setup.variants.dirty_location_delta": 0})
    assert int(c.setup_location_target[players]) == most


@pytest.mark.parametrize("players", [1, 4])
def test_the_dirty_location_variant_counts_towards_the_reach(players):
    most = MOST[players]
    with pytest.raises(ContentError) as e:
        load_with_overrides(DEFAULT_PACK, {row(players, "location_target"): most})  # + dirty_location_delta 1
    err = e.value
    assert (err.file, err.entry) == ("setup.toml", f"player_count {players}"), str(err)
    assert err.reason.startswith(f"location_target = {most} with variants.dirty_location_delta = 1 makes the "
                                 f"dirty-location variant's target {most + 1}, but the Location Track can advance at "
                                 f"most {most} times"), str(err)
    assert "could never happen in that variant" in err.reason
    with pytest.raises(ContentError, match=r"player_count 1: location_target = 3 with variants.dirty_location_delta "
                                           r"= 90 makes the dirty-location variant's target 93"):
        load_with_overrides(DEFAULT_PACK, {"setup.variants.dirty_location_delta": 90})


@pytest.mark.filterwarnings("ignore::sim.content.UnprintedValueWarning")  # the values up to the bound: legal, not printed
def test_the_bound_follows_the_henchmen_and_their_start_levels():
    # 3 henchmen: 9 passes at 4 players; henchmen_level2 = 3 leaves 9 at 4 players
    def drop_one(raw):
        raw["henchmen.toml"]["henchman"].pop()
        for e in raw["encounters.toml"]["card"]:  # no card names the dropped henchman
            for side in ("no_intel", "with_intel"):
                if e[side].get("henchman") == "Pierre":
                    del e[side]["henchman"]
        raw["setup.toml"]["variants"]["dirty_location_delta"] = 0

    from sim.content import build, load_raw

    raw = load_raw()
    drop_one(raw)
    raw["setup.toml"]["player_count"][3]["location_target"] = 9
    assert build(raw).n_henchmen == 3
    raw["setup.toml"]["player_count"][3]["location_target"] = 10
    with pytest.raises(ContentError, match="at most 9 times in a 4-player game.*henchmen.toml's 3 henchmen x 3"):
        build(raw)
    with pytest.raises(ContentError, match=r"location_target = 10, but the Location Track can advance at most 9 times"
                                           r".*less 1 for each of the henchmen_level2 = 3 starting at level 2"):
        load_with_overrides(DEFAULT_PACK, {row(4, "henchmen_level2"): 3, row(4, "location_target"): 10})


@pytest.mark.filterwarnings("ignore::sim.content.UnprintedValueWarning")  # the values up to the bound: legal, not printed
def test_the_bound_is_reached_by_passing_every_henchman_at_every_level():
    """Twelve passes at Location tokens (4 henchmen x 3 levels, all from level 1) reach a target of 12:
    the last one ends the game on the Location Track, before it would defeat the last henchman."""
    c = load_with_overrides(DEFAULT_PACK, {row(4, "location_target"): 12, "setup.variants.dirty_location_delta": 0})
    g = clear_table(new_game(4, cont=c))
    rng = install_rng(g)
    g.strategies[0].set_default("draw_die", False)  # the Yellow die alone
    g.strategies[0].set_default("use_auto_pass", True)
    assert g.location_target == 12 and g.henchman_level == [1, 1, 1, 1]
    put(g, 0, "Paris")
    passes = 0
    with pytest.raises(GameOver):
        for h in range(4):
            while g.henchman_level[h] != DEFEATED:
                put_green(g, h, "Paris")
                rng.push(DICE, (6, face("yellow", "S")))
                henchman_encounter(g, 0, h)
                passes += 1
                assert g.location_track == passes
    assert passes == 11 and g.location_track == 12  # the twelfth pass ended the game
    assert g.outcome == Outcome.LOSS_INTEL  # the Location end (an empty Pool), not the henchmen win
    assert g.henchman_level[3] == 3


def test_the_default_pack_reaches_every_target():
    c = load(DEFAULT_PACK)
    for players, most in MOST.items():
        assert int(c.setup_location_target[players]) + int(c.dirty_location_delta) <= most


# ------------------------------------------------------------------ the printed set-up values
def unprinted_warnings(overrides: dict) -> list[str]:
    import warnings

    from sim.content import UnprintedValueWarning

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        load_with_overrides(DEFAULT_PACK, overrides)
    return [str(w.message) for w in seen if issubclass(w.category, UnprintedValueWarning)]


def test_the_default_pack_holds_the_printed_set_up_values():
    """PRINTED_SETUP is the rulebook's; the default setup.toml must agree with it wherever it prints a value."""
    from sim.content import load_raw, unprinted
    from sim.content.loader import NOT_PRINTED, PRINTED_LOBO_START, PRINTED_SETUP, PRINTED_VARIANTS

    assert unprinted(load(DEFAULT_PACK)) == []  # every player count, and the variants' values
    setup = load_raw()["setup.toml"]
    for r in setup["player_count"]:
        for field, printed in PRINTED_SETUP.items():
            if printed[r["players"] - 1] is not NOT_PRINTED:
                assert r.get(field) == printed[r["players"] - 1], (r["players"], field)
        assert "lobo_start" not in r
    assert setup["variants"] == PRINTED_VARIANTS
    assert load_raw()["lobo.toml"]["track"]["start"] == PRINTED_LOBO_START
    # the player counts the rulebook prints no value for are the default pack's assumptions
    assert [k for k, v in PRINTED_SETUP.items() if NOT_PRINTED in v] == ["location_target", "easier_extra_choice"]
    six = next(r for r in setup["player_count"] if r["players"] == 6)
    assert {"location_target", "easier_extra_choice"} <= set(six["assumed"])


# (override, the warning): every set-up field the rulebook prints, off its printed value
OFF_PRINT = [
    (row(4, "location_target"), 6, "player_count 4: location_target = 6; the printed game has 5"),
    (row(4, "overflow_limit"), 999, "player_count 4: overflow_limit = 999; the printed game has 4"),
    (row(6, "overflow_limit"), 5, "player_count 6: overflow_limit = 5; the printed game has 4"),
    (row(5, "resolve_cut"), 50, "player_count 5: resolve_cut = 50; the printed game has 1"),
    (row(6, "resolve_cut_reduced"), 2, "player_count 6: resolve_cut_reduced = 2; the printed game has 1"),
    ("setup.variants.dirty_location_delta", 3, "variants: dirty_location_delta = 3; the printed game has 1"),
    ("setup.variants.dirty_lobo_start", 3, "variants: dirty_lobo_start = 3; the printed game has 2"),
    (row(1, "board_intel"), 4, "player_count 1: board_intel = 4; the printed game has 3"),
    (row(2, "extra_un"), 1, "player_count 2: extra_un = 1; the printed game has 2"),
    (row(4, "extra_top_secret"), 1, "player_count 4: extra_top_secret = 1; the printed game has 0"),
    (row(1, "extra_choice"), 2, "player_count 1: extra_choice = 2; the printed game has 3"),
    (row(2, "giver_extra_un"), 0, "player_count 2: giver_extra_un = 0; the printed game has 1"),
    (row(2, "giver_extra_top_secret"), 2, "player_count 2: giver_extra_top_secret = 2; the printed game has 1"),
    (row(1, "giver_choice_max_un"), 99, "player_count 1: giver_choice_max_un = 99 (no cap); the printed game has 1"),
    (row(3, "giver_choice_max_un"), 2, "player_count 3: giver_choice_max_un = 2; the printed game has 99 (no cap)"),
    (row(2, "henchmen_level2"), 0, "player_count 2: henchmen_level2 = 0; the printed game has 1"),
    (row(3, "remove_injury_cards"), True, "player_count 3: remove_injury_cards = true; the printed game has false"),
    (row(2, "remove_minus_one"), False, "player_count 2: remove_minus_one = false; the printed game has true"),
    (row(1, "remove_random_plus_one"), 2, "player_count 1: remove_random_plus_one = 2; the printed game has 3"),
    (row(1, "mission_resolve"), 1, "player_count 1: mission_resolve = 1; the printed game has 2"),
    (row(1, "rest_roll_die"), "red", 'player_count 1: rest_roll_die = "red"; the printed game has "blue"'),
    (row(4, "rest_roll_die"), "blue", 'player_count 4: rest_roll_die = "blue"; the printed game has none (omitted)'),
    (row(3, "easier_extra_choice"), 2, "player_count 3: easier_extra_choice = 2; the printed game has 1"),
    (row(2, "easier_extra_top_secret"), 0, "player_count 2: easier_extra_top_secret = 0; the printed game has 1"),
    (row(1, "easier_henchmen_level1"), False,
     "player_count 1: easier_henchmen_level1 = false; the printed game has true"),
    (row(4, "lobo_start"), 1, "player_count 4: lobo_start = 1; the printed game has 0"),
]


@pytest.mark.parametrize("path, value, text", OFF_PRINT, ids=[f"{p}={v}" for p, v, _ in OFF_PRINT])
def test_a_set_up_value_off_the_printed_game_warns_in_one_line(path, value, text):
    assert unprinted_warnings({path: value}) == [f"setup.toml: {text} (legal, but not the published game)"]


def test_every_printed_set_up_field_is_covered():
    from sim.content.loader import PRINTED_SETUP, PRINTED_VARIANTS

    covered = {p.rpartition(".")[2] for p, _, _ in OFF_PRINT}
    assert covered == set(PRINTED_SETUP) | set(PRINTED_VARIANTS) | {"lobo_start"}


def test_dr_lobos_start_off_the_printed_track_start_warns():
    assert unprinted_warnings({"lobo.track.start": 1}) == [
        "lobo.toml: track: start = 1; the printed game has 0 (legal, but not the published game)"]
    # a player count that sets the pack's own start again says nothing more
    assert len(unprinted_warnings({"lobo.track.start": 1, row(4, "lobo_start"): 1})) == 1
    assert unprinted_warnings({"lobo.track.start": 1, row(4, "lobo_start"): 0}) == [
        "lobo.toml: track: start = 1; the printed game has 0 (legal, but not the published game)"]


def test_values_the_rulebook_does_not_print_do_not_warn():
    # six players: no printed Location target or easier choice (the default pack's are assumed);
    # the line-ups and the turn cap are the simulator's own
    assert unprinted_warnings({row(6, "location_target"): 7, row(6, "easier_extra_choice"): 0,
                               row(4, "lineup"): ["Nika Shizuka", "Rocko Jurgen", "Dexter Kane", "Calli Dagger"],
                               "setup.simulation.turn_cap": 900}) == []


def test_many_packs_are_said_once_per_row():
    from sim.content.loader import Unprinted, unprinted_summary

    u = [Unprinted("setup.toml", "player_count 4", "location_target", "location_target", v, 5) for v in (6, 4, 6)]
    u += [Unprinted("setup.toml", "player_count 4", "overflow_limit", "overflow_limit", 999, 4),
          Unprinted("setup.toml", "variants", "dirty_location_delta", "dirty_location_delta", 2, 1)]
    assert unprinted_summary(u, "tune's settings") == [
        "setup.toml: player_count 4, in tune's settings: location_target = 4, 6 (printed: 5); overflow_limit = 999 "
        "(printed: 4); legal, but not the published game",
        "setup.toml: variants: dirty_location_delta = 2; the printed game has 1 (legal, but not the published game)"]
    n = Unprinted("intel.toml", None, None, "yellow Intel tokens", 21, 20)
    assert unprinted_summary([n, n], "x") == [n.text]
    assert unprinted_summary([n, Unprinted("intel.toml", None, None, "yellow Intel tokens", 22, 20)], "x") == [
        "intel.toml, in x: 21, 22 yellow Intel tokens (printed: 20); legal, but not the published game"]


# ------------------------------------------------------------------ on the command line
@pytest.mark.parametrize("argv, text", [
    (["--set", row(4, "location_target") + "=6"], "player_count 4: location_target = 6; the printed game has 5"),
    (["--set", row(4, "overflow_limit") + "=999"], "player_count 4: overflow_limit = 999; the printed game has 4"),
    (["--players", "5", "--set", row(5, "resolve_cut") + "=50"],
     "player_count 5: resolve_cut = 50; the printed game has 1"),
    (["--variant", "dirty-location", "--set", "setup.variants.dirty_location_delta=3"],
     "variants: dirty_location_delta = 3; the printed game has 1"),
])
def test_play_warns_of_a_set_up_value_off_the_printed_game(argv, text, capsys):
    from sim.cli import main

    argv = ["play", "--games", "5", *argv]
    if "--players" not in argv:
        argv += ["--players", "4"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert err == f"warning: setup.toml: {text} (legal, but not the published game)\n"


def test_play_refuses_a_location_target_it_can_never_reach(capsys):
    from sim.cli import OptionError, main

    for target in (13, 99):
        with pytest.raises(OptionError):
            main(["play", "--players", "4", "--games", "5", "--set", row(4, "location_target") + f"={target}"])
        err = capsys.readouterr().err
        assert (f"setup.toml: player_count 4: location_target = {target}, but the Location Track can advance at most "
                "12 times in a 4-player game, so the Location win could never happen") in err


@pytest.mark.parametrize("players", [1, 2, 3, 4, 5, 6])
def test_the_default_pack_plays_without_a_warning(players, capsys):
    from sim.cli import main

    for variant in ("standard", "easier", "dirty"):
        assert main(["play", "--players", str(players), "--games", "5", "--variant", variant]) == 0
        assert capsys.readouterr().err == ""


@pytest.mark.filterwarnings("ignore::sim.content.UnprintedValueWarning")  # a reading spec's own
def test_the_committed_studies_and_bands_do_not_warn_of_set_up_values():
    """The experiments' setups and band cells change no set-up value off the printed game."""
    from pathlib import Path

    from sim.bands import load_bands
    from sim.experiments import load_spec

    root = Path(__file__).resolve().parents[1] / "experiments"
    packs = []
    for f in sorted(root.glob("*.toml")):
        if f.name == "bands.toml":
            model, _ = load_bands(f)
            packs += [dict(c.overrides) for c in model.cell]
        else:
            spec = load_spec(f)
            packs += [spec.overrides_of(s) for s in spec.model.grid.setups]
    assert len(packs) > 10
    for overrides in packs:
        said = unprinted_warnings(overrides)
        assert not [w for w in said if w.startswith(("setup.toml", "lobo.toml"))], (overrides, said)


def test_sweeps_say_each_row_once(capsys):
    """tune's settings and sensitivity's steps: one line for a row's swept values, not one per value."""
    from sim.cli import main

    knobs = ["--knob", row(4, "location_target") + "=3..7", "--knob", row(4, "overflow_limit") + "=3..5"]
    assert main(["tune", "--players", "4", "--target", "0.3:0.6", *knobs, "--budget", "600",
                 "--confirm-games", "0"]) == 0
    warned = [x for x in capsys.readouterr().err.splitlines() if x.startswith("warning:")]
    assert warned == ["warning: setup.toml: player_count 4, in tune's settings: location_target = 3, 4, 6, 7 "
                      "(printed: 5); overflow_limit = 3, 5 (printed: 4); legal, but not the published game"]
    assert main(["sensitivity", "--players", "4", "--games", "20", "--knob", row(4, "location_target"),
                 "--knob", row(4, "overflow_limit")]) == 0
    warned = [x for x in capsys.readouterr().err.splitlines() if x.startswith("warning:")]
    assert warned == ["warning: setup.toml: player_count 4, in sensitivity's steps: location_target = 4, 6 "
                      "(printed: 5); overflow_limit = 3, 5 (printed: 4); legal, but not the published game"]


def test_a_spec_sweep_of_a_printed_value_warns_once_per_field(tmp_path, capsys):
    """A sweep's values off the printed game are said together (one line a field), as sensitivity and tune say
    theirs, not one warning per value; the printed value itself (5) is not among them."""
    from sim.cli import main

    spec = tmp_path / "sw.toml"
    spec.write_text('[experiment]\nname = "sw"\nseed = 1\ngames = 20\nbatch = 20\n\n[grid]\nplayers = [4]\n'
                    'strategies = ["heuristic"]\nsetups = ["loc"]\n\n[setup.loc]\n'
                    'overrides = { "setup.player_count[players=4].location_target" = [3, 4, 5, 6, 7] }\n')
    assert main(["run", str(spec), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err == ("warning: setup.toml: player_count 4, in sw.toml's setups: location_target = 3, 4, 6, 7 "
                   "(printed: 5); legal, but not the published game\n"), err
