"""Validation matches what the engine can play: content, specs, bands files and the API
refuse what would time out, exhaust memory, escape results/ or be silently truncated,
each naming the file, the field and the reason."""

from __future__ import annotations

import dataclasses
import re
import textwrap
from pathlib import Path

import pytest

import sim
import sim.bands
from sim.bands import BandsError, run_check
from sim.content import ContentError
from sim.content.overrides import load_with_overrides
from sim.content.schema import LOBO_TRACK_FIRST, LOBO_TRACK_LAST
from sim.experiments import SpecError, load_spec

# ------------------------------------------------------------------ content
CONTENT_BAD = [
    # (override path, value, file, field fragment, reason fragment)
    ("setup.player_count[*].overflow_limit", 0, "setup.toml", "overflow_limit", "greater than or equal to 1"),
    ("setup.variants.dirty_lobo_start", 12, "setup.toml", "variants", "dirty_lobo_start = 12 is off the printed track"),
    ("setup.variants.dirty_lobo_start", -1, "setup.toml", "variants", "0..8"),
    ("lobo.track.start", -5, "lobo.toml", "track", "start = -5 is off the printed track: Dr. Lobo starts on 0..8"),
    ("lobo.track.start", 12, "lobo.toml", "track", "off the printed track"),
    ("lobo.track.loss", 10, "lobo.toml", "track", "loss = 10 is off the printed track"),
    ("intel.tokens.weapon", 1_000_000_000, "intel.toml", "weapon", "less than or equal to 1000"),
    ("intel.components.un_transport", 2**70, "intel.toml", "un_transport", "less than or equal to 1000"),
    ("characters.character[0].life", 2**70, "characters.toml", "life", "at most 99"),
    ("characters.character[0].resolve_max", 10**12, "characters.toml", "resolve_max", "less than or equal to 99"),
    ("characters.character[0].name", "", "characters.toml", "name", "must not be empty"),
    ("characters.character[0].name", "Calli\x00Dagger", "characters.toml", "name", "control character"),
    ("characters.character[0].name", "Calli, Dagger", "characters.toml", "name", "comma"),
    ("henchmen.henchman[0].name", "  ", "henchmen.toml", "name", "must not be empty"),
    ("dice.die[0].name", "", "dice.toml", "name", "must not be empty"),
    ("map.city[0].name", "Paris\n", "map.toml", "name", "control character"),
    ("encounters.card[0].id", "", "encounters.toml", "id", "must not be empty"),
    ("setup.simulation.turn_cap", 10**9, "setup.toml", "turn_cap", "less than or equal to 100000"),
    ("setup.player_count[players=4].location_target", 2**64, "setup.toml", "location_target", "less than or equal to 99"),
    ("top_secret.deck.total", 10**9, "top_secret.toml", "total", "less than or equal to 1000"),
    ("setup.player_count[players=4].remove_random_plus_one", 15, "setup.toml", "player_count 4",
     "remove_random_plus_one = 15, but villain.toml has 14 +1 cards"),
    ("lobo.position[position=3].intel", ["W"] * 9, "lobo.toml", "position 3", "needs 9 weapon Intel, but intel.toml has 8"),
    ("lobo.track.start", 2.0, "lobo.toml", "start", "valid integer"),
    # set-up counts beyond the components: the engines handed out what was left and skipped the rest
    ("setup.player_count[players=4].extra_un", 1000, "setup.toml", "player_count 4",
     "extra_un = 1000: 4 players would take 4000 UN Transport tokens at set-up"),
    ("setup.player_count[players=4].extra_un", 5, "setup.toml", "player_count 4",
     "extra_un = 5: 4 players would take 20 UN Transport tokens at set-up (4 seats of start_un 0 (characters.toml) + "
     "extra_un 5), but intel.toml has 8"),
    ("setup.player_count[players=2].giver_extra_un", 8, "setup.toml", "player_count 2",
     "giver_extra_un = 8: 2 players would take 11 UN Transport tokens"),
    ("setup.player_count[players=4].extra_top_secret", 1000, "setup.toml", "player_count 4",
     "extra_top_secret = 1000: 4 players would take 4000 Top Secret cards at set-up (4 seats of extra_top_secret "
     "1000), but top_secret.toml has 22"),
    ("setup.player_count[players=6].easier_extra_top_secret", 4, "setup.toml", "player_count 6",
     "easier_extra_top_secret = 4: 6 players would take 24 Top Secret cards at set-up in the easier variant"),
    ("setup.player_count[players=4].extra_choice", 8, "setup.toml", "player_count 4",
     "extra_choice = 8: 4 players would take 33 UN Transport tokens and Top Secret cards together at set-up"),
    ("setup.player_count[players=3].easier_extra_choice", 10, "setup.toml", "player_count 3",
     "easier_extra_choice = 10: 3 players would take 31 UN Transport tokens and Top Secret cards together at set-up "
     "in the easier variant"),
    # a villain deck the set-up removals leave unable to serve every draw ("villain deck and discard
    # pile are both empty" in play, run and tune)
    ("villain.counts", {"plus_two": 0, "plus_one": 3, "injury": 0, "minus_one": 32}, "villain.toml", "composition",
     "at 1 player the deck left after the set-up removals (setup.toml player_count 1: remove_injury_cards = true, "
     "remove_minus_one = true, remove_random_plus_one = 3) has no card"),
    ("villain.counts", {"plus_two": 0, "plus_one": 11, "injury": 0, "minus_one": 24}, "villain.toml", "composition",
     "at 1 player the deck left after the set-up removals (setup.toml player_count 1: remove_injury_cards = true, "
     "remove_minus_one = true, remove_random_plus_one = 3) has 8 cards, no Injury card and advancement +8 in all: "
     "from 0 Dr. Lobo never reaches 9"),
    ("setup.player_count[players=2].villain_counts", {"plus_two": 0, "plus_one": 3, "injury": 0, "minus_one": 32},
     "setup.toml", "player_count 2", "villain.toml: composition: at 2 players the deck left after the set-up removals "
     "(setup.toml player_count 2: remove_injury_cards = true, remove_minus_one = true) has 3 cards, no Injury card "
     "and advancement +3 in all"),
    ("setup.player_count[players=4].villain_counts", {"plus_two": 0, "plus_one": 3, "injury": 0, "minus_one": 32},
     "setup.toml", "player_count 4", "at 4 players the deck left after the set-up removals (setup.toml "
     "player_count 4: none) has 35 cards, no Injury card and advancement -29 in all"),
    ("characters.character[0].start_un", 99, "characters.toml", "character 'Calli Dagger'",
     "start_un = 99, but intel.toml has 8 UN Transport tokens"),
    ("characters.character[1].start_un", 4, "setup.toml", "player_count 6",  # two Rocko Jurgen among 6 players
     "start_un = 4 of 'Rocko Jurgen' (characters.toml): 6 players would take 9 UN Transport tokens"),
    ("lobo.track.start", True, "lobo.toml", "start", "valid integer"),
]


@pytest.mark.parametrize("path,value,file,field,reason", CONTENT_BAD, ids=[f"{c[0]}={c[1]!r}" for c in CONTENT_BAD])
def test_content_the_engine_cannot_play_is_refused(path, value, file, field, reason):
    with pytest.raises(ContentError) as e:
        load_with_overrides(None, {path: value}, "test")
    msg = str(e.value)
    assert msg.startswith(file + ": "), msg
    assert field in msg and reason in msg, msg


def test_the_printed_lobo_track_is_written_down():
    assert (LOBO_TRACK_FIRST, LOBO_TRACK_LAST) == (0, 9)


@pytest.mark.parametrize("path,value", [
    ("setup.player_count[*].overflow_limit", 1),  # the lowest limit that plays: no game times out
    ("lobo.track.start", 8),
    ("setup.variants.dirty_lobo_start", 0),
    ("lobo.track.loss", 9),
    ("setup.player_count[players=4].extra_un", 2),  # 4 x 2 = the 8 UN Transport tokens
    ("setup.player_count[players=6].easier_extra_top_secret", 3),  # 6 x 3 of 22 Top Secret cards
    ("characters.character[0].start_un", 4),  # two of 6 players are Calli Dagger: 8 of 8
])
def test_values_at_the_edge_of_the_allowed_range_load(path, value):
    load_with_overrides(None, {path: value}, "test")


@pytest.mark.parametrize("overrides", [
    # solo: 12 - 3 random +1 cards = 9 +1 cards, exactly Dr. Lobo's loss from 0
    {"setup.player_count[players=1].villain_counts": {"plus_two": 0, "plus_one": 12, "injury": 0, "minus_one": 23}},
    # from a start of 1, 8 are enough
    {"setup.player_count[players=1].villain_counts": {"plus_two": 0, "plus_one": 11, "injury": 0, "minus_one": 24},
     "setup.player_count[players=1].lobo_start": 1, "setup.variants.dirty_lobo_start": 1},
    # an Injury card always goes back to the discard pile: the deck never runs out
    {"setup.player_count[players=4].villain_counts": {"plus_two": 0, "plus_one": 3, "injury": 1, "minus_one": 31}},
])
def test_a_villain_deck_that_can_serve_every_draw_loads(overrides):
    load_with_overrides(None, overrides, "test")


def test_the_villain_deck_check_is_made_at_dr_lobos_lowest_start():
    mix = {"setup.player_count[players=1].villain_counts": {"plus_two": 0, "plus_one": 11, "injury": 0,
                                                            "minus_one": 24},
           "setup.player_count[players=1].lobo_start": 1}
    with pytest.raises(ContentError) as e:  # the Dirty Intel variant starts Dr. Lobo at 2, the row at 1: 8 < 9 - 1
        load_with_overrides(None, {**mix, "setup.variants.dirty_lobo_start": 0}, "test")
    assert "has 8 cards, no Injury card and advancement +8 in all: from 0 Dr. Lobo never reaches 9" in str(e.value)


@pytest.mark.parametrize("argv", [["play", "--players", "2", "--games", "20"], ["trace", "--players", "2"],
                                  ["run", "{spec}", "--out", "{out}", "--quiet"],
                                  ["check", "experiments/bands.toml"]])
def test_a_villain_deck_that_runs_out_is_refused_by_the_cli_in_one_line(argv, tmp_path, capsys, monkeypatch):
    from sim.cli import main

    root = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(root)
    spec = tmp_path / "tiny.toml"
    spec.write_text('[experiment]\nname = "tiny"\nseed = 3\ngames = 20\nbatch = 10\n\n'
                    '[grid]\nplayers = [2]\nstrategies = ["heuristic"]\n')
    argv = [a.format(spec=spec, out=tmp_path / "out") for a in argv]
    with pytest.raises(SystemExit) as e:
        main([*argv, "--set", "villain.counts={plus_two=0,plus_one=3,injury=0,minus_one=32}"])
    assert "villain.toml: composition: at 1 player the deck left after the set-up removals" in str(e.value)
    assert "Traceback" not in capsys.readouterr().err


def test_a_tune_knob_that_empties_the_villain_deck_is_refused_in_one_line(capsys):
    from sim.cli import main

    with pytest.raises(SystemExit) as e:
        main(["tune", "--players", "2", "--target", "0.4:0.5", "--budget", "1000", "--knob", "villain.counts.injury=0..0",
              "--knob", "villain.counts.plus_two=0..0", "--knob", "villain.counts.minus_one=32..32"])
    assert "the pack refuses this setting: villain.toml: composition: at 1 player" in str(e.value)
    assert "Traceback" not in capsys.readouterr().err


def test_a_tune_knob_with_a_bad_path_is_named_once():
    from sim.cli import main

    with pytest.raises(SystemExit) as e:
        main(["tune", "--players", "2", "--target", "0.4:0.5", "--budget", "1000", "--knob", "lobo.track.strat=1..2"])
    assert str(e.value) == ("error: --knob lobo.track.strat=1: the pack refuses this setting: override "
                            "'lobo.track.strat': lobo.toml.track has no key 'strat' (keys: loss, start)")


def test_a_line_up_is_checked_against_the_set_up_supplies():
    # the loader checks line-ups of distinct characters while they last; a line-up that repeats
    # a character is checked when it is chosen
    from sim.rules.state import Settings

    c = load_with_overrides(None, {"characters.character[0].start_un": 2}, "test")
    assert Settings.build(c, 5).players == 5  # the default line-up: one Calli Dagger
    assert Settings.build(c, 4, ["Calli Dagger"] * 4).players == 4  # 8 of 8
    with pytest.raises(ContentError) as e:
        Settings.build(c, 5, ["Calli Dagger"] * 5)
    assert str(e.value) == (
        "setup.toml: player_count 5: start_un = 2 of 'Calli Dagger' (characters.toml): the line-up "
        + ", ".join(["'Calli Dagger'"] * 5) + " would take 10 UN Transport tokens at set-up (5 seats of start_un 2 "
        "(characters.toml) + giver_extra_un 0), but intel.toml has 8")


def test_set_up_counts_beyond_the_components_are_refused_by_the_cli_in_one_line(capsys):
    from sim.cli import main

    for argv in (["trace", "--players", "4", "--seed", "7", "--set", "setup.player_count[players=4].extra_un=1000"],
                 ["play", "--players", "5", "--games", "10", "--characters", ",".join(["Calli Dagger"] * 5),
                  "--set", "characters.character[0].start_un=2"]):
        with pytest.raises(SystemExit) as e:
            main(argv)
        assert "setup.toml: player_count" in str(e.value) and "UN Transport tokens" in str(e.value), e.value
    assert "Traceback" not in capsys.readouterr().err


def test_overflow_limit_1_plays_without_timeouts():
    # the bound is where games stop timing out: with 0 every placed Intel token is cleared
    # at once (48 of 300 games hit the turn cap), with 1 none does
    c = load_with_overrides(None, {"setup.player_count[*].overflow_limit": 1}, "test")
    for players in (1, 2, 4):
        r = sim.simulate(players=players, games=500, seed=11, content=c, summary_only=True)
        assert r["timeouts"] == 0, players


# ------------------------------------------------------------------ specs
SPEC = """
[experiment]
name = "mini"
seed = 5
games = 48
batch = 16

[grid]
players = [2, 3]
strategies = ["heuristic", "gamble_happy"]

[strategy.gamble_happy]
base = "heuristic"
params = { gamble_p = 0.99 }
"""

SPEC_BAD = [
    # (old, new, key, reason)
    ("games = 48", "games = 48.0", "experiment.games", "valid integer"),
    ("games = 48", "games = 48.7", "experiment.games", "valid integer"),
    ("games = 48", "games = true", "experiment.games", "valid integer"),
    ("seed = 5", "seed = 5.0", "experiment.seed", "valid integer"),
    ("batch = 16", "batch = 1e3", "experiment.batch", "valid integer"),
    ("batch = 16", "batch = 1000000000", "experiment.batch", "less than or equal to 1000000"),
    ("games = 48", "games = 1000000000", "experiment.batch",
     "4 cell(s) of 1,000,000,000 games in batches of 16 make 250,000,000 batches, more than 100,000"),
    ("players = [2, 3]", "players = [2.0, 3]", "grid.players.0", "valid integer"),
    ("players = [2, 3]", "players = [true]", "grid.players.0", "valid integer"),
    ('name = "mini"', 'name = ".."', "experiment.name", "should match pattern"),
    ('name = "mini"', 'name = "."', "experiment.name", "should match pattern"),
    ('name = "mini"', 'name = "../escape"', "experiment.name", "should match pattern"),
    ('name = "mini"', 'name = "/tmp/x"', "experiment.name", "should match pattern"),
    ('name = "mini"', 'name = ""', "experiment.name", "at least 1 character"),
    ('name = "mini"', 'name = "a\\u0000b"', "experiment.name", "should match pattern"),
    ('strategies = ["heuristic", "gamble_happy"]', 'strategies = ["heuristic", "heuristic"]', "grid.strategies", "listed twice: heuristic"),
    ("players = [2, 3]", 'players = [2, 3]\nvariants = ["easier", "easier"]', "grid.variants", "listed twice"),
    ("players = [2, 3]", 'players = [2, 3]\nvariants = ["dirty", "dirty-lobo,dirty-location"]', "grid.variants", "same variant"),
    ("players = [2, 3]", 'players = [2]\ncharacters = ["Calli Dagger,Rocko Jurgen", "Calli Dagger, Rocko Jurgen"]', "grid.characters", "same line-up"),
    ("players = [2, 3]", 'players = [2, 3]\nsetups = ["default", "default"]', "grid.setups", "listed twice"),
    ("gamble_p = 0.99", 'gamble_p = "high"', "strategy.gamble_happy.params", "gamble_p must be a finite number"),
    ("gamble_p = 0.99", "pool_target = 5.5", "strategy.gamble_happy.params", "pool_target must be an integer"),
    ("gamble_p = 0.99", "reroll = 1", "strategy.gamble_happy.params", "reroll must be true or false"),
    ("gamble_p = 0.99", "gamble_p = nan", "strategy.gamble_happy.params", "gamble_p must be a finite number"),
    ("players = [2, 3]", 'players = [2, 3]\nvariants = ["standard", ""]', "grid.variants", "'' is not a name"),
    ("params = { gamble_p = 0.99 }", 'params = { gamble_p = 0.99 }\n[compare]\nbaseline = { strategy = "heurstic" }', "compare.baseline.strategy",
     "'heurstic' is not in the grid's strategy values"),
    ("params = { gamble_p = 0.99 }", 'params = { gamble_p = 0.99 }\n[targets]\nwin_rate = { "2" = ["0.4", "0.5"] }',
     "targets.win_rate.2.0", "must be a number, got str '0.4'"),
    ("params = { gamble_p = 0.99 }", 'params = { gamble_p = 0.99 }\n[targets]\nwin_rate = { "3" = [false, true] }',
     "targets.win_rate.3.0", "must be a number, got bool False"),
    ("params = { gamble_p = 0.99 }", 'params = { gamble_p = 0.99 }\n[targets]\nwin_rate = { "2" = [0, 1], "4" = [0.4, 0.5] }',
     "targets.win_rate.4", "no cell plays 4 players"),
    ("params = { gamble_p = 0.99 }", 'params = { gamble_p = 0.99 }\n[setup.default]\noverrides = { "lobo.track.start" = 2 }',
     "setup.default", "unchanged pack"),
    ("params = { gamble_p = 0.99 }", 'params = { gamble_p = 0.99 }\n[setup.odd]\noverrides = {}',
     "setup.odd.overrides", "would be the default pack"),
    ("params = { gamble_p = 0.99 }", 'params = { gamble_p = 0.99 }\n[setup.odd]\noverrides = { "lobo.track.start" = -5 }',
     "setup.odd.overrides", "off the printed track"),
    # a table the grid does not list would silently play nowhere
    ("params = { gamble_p = 0.99 }", 'params = { gamble_p = 0.99 }\n[setup.unlisted]\noverrides = { "lobo.track.start" = 2 }',
     "setup.unlisted", "is defined but not listed in grid.setups: no cell would play it"),
    ('strategies = ["heuristic", "gamble_happy"]', 'strategies = ["heuristic"]', "strategy.gamble_happy",
     "is defined but not listed in grid.strategies: no cell would play it"),
]


@pytest.mark.parametrize("name, reason", [
    ("heuristic ", "shadows a registered strategy"),  # printed as the heuristic, played as gamble_happy
    (" mine", "has spaces around it"),
    ("heuristic[pool_target=5]", "holds [ ], which the labels of strategies use"),
    ("heuristic+token", "holds +, which the labels of strategies use"),
])
def test_a_strategy_table_named_like_another_strategys_label_is_refused(tmp_path, name, reason):
    """A [strategy.X] name labels its cells' rows: one that reads as another strategy's label (a registered name
    with spaces around it, a parameter list, a replaced decision) would pass its games off as that strategy's
    (``compare --baseline strategy=heuristic`` matched "heuristic " too)."""
    text = SPEC.replace('"gamble_happy"]', f'"{name}"]').replace("[strategy.gamble_happy]", f'[strategy."{name}"]')
    p = tmp_path / "mini.toml"
    p.write_text(textwrap.dedent(text))
    with pytest.raises(SpecError, match=re.escape(f"mini.toml: strategy.{name}: {reason}")):
        load_spec(p)


@pytest.mark.parametrize("old,new,key,reason", SPEC_BAD, ids=[c[1] for c in SPEC_BAD])
def test_bad_specs_are_refused_naming_file_key_and_reason(tmp_path, old, new, key, reason):
    assert old in SPEC
    text = SPEC.replace(old, new)
    if "setup.odd" in new:
        text = text.replace('strategies = ["heuristic", "gamble_happy"]', 'strategies = ["heuristic", "gamble_happy"]\nsetups = ["odd"]')
    p = tmp_path / "mini.toml"
    p.write_text(textwrap.dedent(text))
    with pytest.raises(SpecError) as e:
        load_spec(p)
    msg = str(e.value)
    assert msg.startswith("mini.toml: "), msg
    assert key in msg and reason in msg, msg


def test_targets_take_integers_and_floats(tmp_path):
    p = tmp_path / "mini.toml"
    p.write_text(textwrap.dedent(SPEC) + '[targets]\nwin_rate = { "2" = [0, 1], "3" = [0.25, 0.5] }\n')
    assert load_spec(p).targets() == {2: (0.0, 1.0), 3: (0.25, 0.5)}


def test_bands_tolerance_takes_a_float(tmp_path):
    p = tmp_path / "bands.toml"
    p.write_text(BANDS.replace("batch = 20", "batch = 20\ntolerance = 0.02"))
    assert sim.bands.load_bands(p)[0].check.tolerance == 0.02


def test_with_games_refuses_non_integers(tmp_path):
    p = tmp_path / "mini.toml"
    p.write_text(textwrap.dedent(SPEC))
    spec = load_spec(p)
    for bad in (2.5, True, "10"):
        with pytest.raises(SpecError, match="experiment.games"):
            spec.with_games(bad)


def test_too_many_batches_are_refused_before_any_batch_is_listed(tmp_path, capsys):
    """``run --games 1000000000`` on a spec of 16-game batches: a one-line error at once, naming the
    batch size that would do, not a run that lists 250 million batch jobs before playing any."""
    from sim.cli import main

    p = tmp_path / "mini.toml"
    p.write_text(textwrap.dedent(SPEC))
    spec = load_spec(p)
    assert spec.with_games(16 * 25_000).games == 400_000  # exactly 100,000 batches: allowed
    with pytest.raises(SpecError, match=r"experiment\.batch: .*100,004 batches.*raise batch to at least 17\b"):
        spec.with_games(16 * 25_000 + 1)
    with pytest.raises(SystemExit) as e:
        main(["run", str(p), "--games", "1000000000", "--out", str(tmp_path / "out"), "--quiet"])
    assert "experiment.batch" in str(e.value) and "raise batch to at least 40,000" in str(e.value)
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------ bands files
BANDS = """
[check]
seed = 7
games = 40
batch = 20

[[cell]]
name = "2p"
players = 2
baseline = { seed = 7, games = 40, wins = 12 }
win_rate = [0.0, 1.0]

[[cell]]
name = "3p"
players = 3
strategy = "heuristic"
baseline = { seed = 7, games = 40, wins = 12 }
win_rate = [0.0, 1.0]
"""

BANDS_BAD = [
    # (old, new, key, reason) -- every change is in the second cell
    ('strategy = "heuristic"', 'strategy = "genius"', "cell[3p].strategy", "unknown strategy 'genius'"),
    ('strategy = "heuristic"', 'strategy = "heuristic"\nvariant = "harder"', "cell[3p].variant", "unknown variant 'harder'"),
    ('strategy = "heuristic"', 'strategy = "heuristic"\nparams = { bogus = 1 }', "cell[3p].params", "unknown heuristic parameter"),
    ('strategy = "heuristic"', 'strategy = "heuristic"\nparams = { pool_target = "lots" }', "cell[3p].params", "pool_target must be an integer"),
    ('strategy = "heuristic"', 'strategy = "heuristic"\ncharacters = "Nobody,Calli Dagger,Rocko Jurgen"', "cell[3p].characters", "Nobody"),
    ('strategy = "heuristic"', 'strategy = "heuristic"\noverrides = { "lobo.track.start" = -5 }', "cell[3p].overrides", "off the printed track"),
    ("win_rate = [0.0, 1.0]\n\"\"\"", "win_rate = [0.1, 1.5]\n\"\"\"", "cell[3p].win_rate", "within [0, 1]"),
    ("win_rate = [0.0, 1.0]\n\"\"\"", "win_rate = [-0.1, 0.5]\n\"\"\"", "cell[3p].win_rate", "within [0, 1]"),
    ("win_rate = [0.0, 1.0]\n\"\"\"", "win_rate = [30, 40]\n\"\"\"", "cell[3p].win_rate", "within [0, 1]"),
    ("win_rate = [0.0, 1.0]\n\"\"\"", "win_rate = [0.5, 0.4]\n\"\"\"", "cell[3p].win_rate", "low <= high"),
    ("win_rate = [0.0, 1.0]\n\"\"\"", "win_rate = [nan, nan]\n\"\"\"", "cell[3p].win_rate", "finite"),
    ("win_rate = [0.0, 1.0]\n\"\"\"", "win_rate = [0.1, inf]\n\"\"\"", "cell[3p].win_rate", "finite"),
    ("win_rate = [0.0, 1.0]\n\"\"\"", "win_rate = [false, true]\n\"\"\"", "cell[3p].win_rate", "finite numbers"),
    ("win_rate = [0.0, 1.0]\n\"\"\"", "win_rate = [0.0, 1.0]\nshare_loss_lobo = [0.2, 1.2]\n\"\"\"", "cell[3p].share_loss_lobo", "within [0, 1]"),
    ("win_rate = [0.0, 1.0]\n\"\"\"", "win_rate = [0.0, 1.0]\nmean_turns = [-3.0, 20.0]\n\"\"\"", "cell[3p].mean_turns", "at least 0"),
    ("games = 40", "games = 40.0", "check.games", "valid integer"),
    ("batch = 20", 'batch = 20\ntolerance = "0.02"', "check.tolerance", "must be a number, got str '0.02'"),
    ("batch = 20", "batch = 20\ntolerance = true", "check.tolerance", "must be a number, got bool True"),
    ('name = "3p"', 'name = "3p\\u0000"', "cell[3p\\x00].name", "should match pattern"),
    ('strategy = "heuristic"', 'strategy = "heuristic"\nvariant = ""', "cell[3p].variant", "should match pattern"),
    ('strategy = "heuristic"', 'strategy = "heuristic"\ncharacters = " "', "cell[3p].characters", "should match pattern"),
    ("players = 3", "players = 3.0", "cell[3p].players", "valid integer"),
]


@pytest.mark.parametrize("old,new,key,reason", BANDS_BAD, ids=[c[1] for c in BANDS_BAD])
def test_bands_files_are_validated_whole_before_any_cell_plays(tmp_path, monkeypatch, old, new, key, reason):
    text = ('"""' + BANDS + '"""').replace(old, new, 1)[3:-3] if old.endswith('"""') else BANDS.replace(old, new, 1)
    assert text != BANDS
    p = tmp_path / "bands.toml"
    p.write_text(text)
    played = []
    monkeypatch.setattr(sim.bands, "check_cell", lambda cell, *a, **k: played.append(cell.name))
    with pytest.raises(BandsError) as e:
        run_check(p)
    msg = str(e.value)
    assert msg.startswith("bands.toml: "), msg
    assert key in msg and reason in msg, msg
    assert played == []  # the first cell, which is fine, did not play either


# ------------------------------------------------------------------ API
API_BAD = [
    ({"players": True}, TypeError, "players must be an integer"),
    ({"players": 2.0}, TypeError, "players must be an integer"),
    ({"summary_only": "no"}, TypeError, "summary_only must be True or False"),
    ({"summary_only": 1}, TypeError, "summary_only must be True or False"),
    ({"games": 10.0}, TypeError, "games must be an integer"),
    ({"games": True}, TypeError, "games must be an integer"),
    ({"seed": 1.5}, TypeError, "seed must be an integer"),
    ({"seed": "1"}, TypeError, "seed must be an integer"),
    ({"threads": 1.0}, TypeError, "threads must be"),
    ({"batch": 0, "summary_only": True}, ValueError, "batch must be positive"),
    ({"batch": 1.5, "summary_only": True}, TypeError, "batch must be an integer"),
    ({"params": ["pool_target", 3]}, TypeError, "params must be a dict"),
    ({"params": {"pool_target": "lots"}}, ValueError, "pool_target must be an integer"),
    ({"variant": 3}, TypeError, "variant must be"),
    ({"characters": 3}, TypeError, "characters must be"),
    # an empty line-up is refused, never taken silently as the default one
    ({"characters": ""}, ValueError, "characters: empty"),
    ({"characters": " , "}, ValueError, "characters: empty"),
    ({"characters": []}, ValueError, "characters: empty"),
    ({"characters": ()}, ValueError, "characters: empty"),
    ({"engine": 1}, TypeError, "engine must be a string"),
    ({"content": 3}, TypeError, "content must be"),
    ({"games": 3_000_000_000}, ValueError, "would not fit in memory"),
    ({"games": 3_000_000_000, "summary_only": True, "batch": 3_000_000_000}, ValueError, "batch: at most"),
]


@pytest.mark.parametrize("kw,exc,match", API_BAD, ids=[repr(c[0]) for c in API_BAD])
def test_api_wrong_types_get_clear_errors(kw, exc, match):
    with pytest.raises(exc, match=match):
        sim.simulate(**{"players": 2, "games": 3, "seed": 1, **kw})


def test_api_takes_numpy_integers():
    import numpy as np

    df = sim.simulate(players=np.int64(2), games=np.int32(3), seed=np.int64(1))
    assert df.height == 3 and df["players"].to_list() == [2, 2, 2]


def test_numpy_parameter_values_play_alike_on_both_engines():
    """A numpy scalar parameter is kept as the Python value both engines read: np.float32 had been compared in
    float32 by the readable engine and widened to float64 by the kernel (34 of 300 solo games differed)."""
    import numpy as np

    from strategies.heuristic import HeuristicParams

    p = HeuristicParams(gamble_p=np.float32(0.6669238683127572), pool_target=np.int8(5), reroll=np.True_)
    assert (type(p.gamble_p), type(p.pool_target), type(p.reroll)) == (float, int, bool)
    assert p.gamble_p == float(np.float32(0.6669238683127572))
    kw = dict(players=1, games=300, seed=5, params={"gamble_p": np.float32(0.6669238683127572), "gamble_resolve": True})
    assert sim.simulate(**kw).equals(sim.simulate(**kw, engine="reference"))


def test_api_takes_numpy_integer_character_indices():
    import numpy as np

    want = sim.simulate(players=2, games=3, seed=1, characters=[0, 1])
    for engine in ("kernel", "reference"):
        got = sim.simulate(players=2, games=3, seed=1, characters=[np.int64(0), np.int32(1)], engine=engine)
        assert got.equals(want), engine


def test_character_indices_that_are_not_integers_are_refused():
    from sim.rules.state import Settings

    c = sim.run.resolve_content(None)
    for bad in (True, 1.0):
        with pytest.raises(ValueError, match="characters: give names or indices"):
            Settings.build(c, 2, [0, bad])


@pytest.mark.parametrize("engine,team", [
    ("reference", "one"), ("reference", "per-seat"), ("kernel", "one"), ("kernel", "per-seat"), ("kernel", "mixed"),
])
def test_params_with_strategy_objects_are_refused_not_ignored(engine, team):
    import strategies

    h = strategies.make("heuristic")
    strategy = {"one": h, "per-seat": [h, strategies.make("bold")], "mixed": ["heuristic", h]}[team]
    with pytest.raises(ValueError, match="with a strategy object"):
        sim.simulate(players=2, games=3, strategy=strategy, params={"pool_target": 3}, engine=engine)
    with pytest.raises(ValueError, match="with a strategy object"):
        sim.simulate(players=2, games=3, strategy=strategy, params={"pool_target": 3}, engine=engine,
                     summary_only=True)
    sim.simulate(players=2, games=3, strategy=strategy, engine=engine)  # without params they play


def test_summary_only_reference_keeps_line_up_and_variant():
    kw = {"players": 2, "games": 6, "seed": 4, "characters": "Nika Shizuka,Dexter Kane", "variant": "dirty"}
    full = sim.simulate(engine="reference", **kw)
    agg = sim.simulate(engine="reference", summary_only=True, batch=4, **kw)
    kern = sim.simulate(summary_only=True, batch=4, **kw)
    assert agg["wins"] == int(full["win"].sum()) == kern["wins"]
    assert agg["mean_turns"] == pytest.approx(full["turns"].mean()) == kern["mean_turns"]
    assert agg["turns_histogram"] == kern["turns_histogram"]


def test_the_spec_name_cannot_leave_results(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(textwrap.dedent(SPEC.replace('name = "mini"', 'name = "ok.name-1_x"')))
    assert load_spec(p).name == "ok.name-1_x"
    assert Path("results", load_spec(p).name).resolve().parent == Path("results").resolve()


@pytest.mark.parametrize("name", ["gamble_p", "auto_pass_below"])
def test_probability_parameters_are_refused_off_0_to_1(name):
    """Below 0 or above 1 a probability threshold plays as 0 or 1 does (no P(pass) is below -1, every one is
    below 5): refused, naming the parameter and its range, as every other parameter's off-range value."""
    import strategies
    from strategies.heuristic import PROBABILITY_PARAMS, HeuristicParams

    assert name in PROBABILITY_PARAMS
    for bad in (-1, -0.01, 1.01, 5, float("inf")):
        with pytest.raises(ValueError, match=rf"^{name} must be a finite number from 0 to 1 \(a probability\), got"):
            strategies.make("heuristic", **{name: bad})
    for good in (0, 0.0, 0.5, 1, 1.0):
        assert getattr(HeuristicParams(**{name: good}), name) == good
    float_fields = {f.name for f in dataclasses.fields(HeuristicParams) if f.type in ("float", float)}
    assert float_fields == set(PROBABILITY_PARAMS)  # a new float knob: give it its range here too


@pytest.mark.filterwarnings("ignore::sim.content.loader.UnprintedValueWarning")  # a reading spec's own
def test_the_committed_tuned_sets_specs_and_bands_still_validate():
    import strategies
    from sim.bands import load_bands, validate_bands
    from sim.experiments import load_spec

    for players in range(1, 7):
        strategies.make("tuned", players=players)
    root = Path(__file__).resolve().parents[1] / "experiments"
    for f in sorted(root.glob("*.toml")):
        if f.name.startswith("bands"):
            model, p = load_bands(f)
            validate_bands(model, p.name, None if model.check.content is None else (p.parent / model.check.content))
        else:
            load_spec(f)
