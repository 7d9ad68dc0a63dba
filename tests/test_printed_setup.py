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
