"""Overrides a cell's games do not read are refused: a variant that replaces the value, a player count's own
value over the pack's, a row of setup.toml no cell plays, a note (sim/rules/reads.py)."""

import re
import textwrap

import numpy as np
import pytest

import sim
from sim.cli import main
from sim.content import DEFAULT_PACK, load
from sim.content.overrides import load_with_overrides
from sim.experiments import OptionError, SpecError, load_spec
from sim.rules import reads
from sim.rules.state import Settings

CALLI_PICKS = ["seduction", "disguise", "weapons_use"]

# (override, players, variant, characters): each one is a value these games do not read
UNREAD = [
    ({"lobo.track.start": 3}, 2, "dirty-lobo", None),
    ({"setup.player_count[players=2].lobo_start": 3}, 2, "dirty-lobo", None),
    ({"setup.variants.dirty_lobo_start": 4}, 2, "standard", None),
    ({"setup.variants.dirty_location_delta": 3}, 3, "easier", None),
    ({"setup.player_count[players=3].easier_extra_choice": 2}, 3, "dirty", None),
    ({"setup.player_count[players=2].easier_extra_top_secret": 2}, 2, "standard", None),
    ({"setup.player_count[players=1].henchmen_level2": 0}, 1, "easier", None),  # solo easier: all at level 1
    ({"characters.character[name=Calli Dagger].advanced_choices": CALLI_PICKS}, 2, "fixed-skills", None),
    ({"setup.player_count[players=2].lineup": ["Nika Shizuka", "Dexter Kane"]}, 2, "standard", "random"),
    # a character no seat plays: the default 2-player line-up, and one given by name
    ({"characters.character[name=Agent Five].life": 9}, 2, "standard", None),
    ({"characters.character[name=Agent Five].skills.spycraft": 4}, 2, "standard", "Nika Shizuka,Dexter Kane"),
    # a set-up value no seat's character reads: Calli Dagger (gives_un, the solo default) takes giver_extra_*,
    # the others extra_*; resolve_cut_reduced is Rocko Jurgen's (reduced_resolve_cut), resolve_cut the others'
    ({"setup.player_count[players=1].extra_un": 1}, 1, "standard", None),
    ({"setup.player_count[players=1].extra_top_secret": 1}, 1, "easier", None),
    ({"setup.player_count[players=2].giver_extra_un": 3}, 2, "standard", "Rocko Jurgen,Dexter Kane"),
    ({"setup.player_count[players=2].giver_extra_top_secret": 0}, 2, "standard", "Nika Shizuka,Dexter Kane"),
    ({"setup.player_count[players=1].resolve_cut_reduced": 1}, 1, "standard", None),
    ({"setup.player_count[players=2].resolve_cut": 1}, 2, "standard", "Rocko Jurgen,Rocko Jurgen"),
    # giver_choice_max_un caps Calli's share of extra_choice, which is 0 at 4 players
    ({"setup.player_count[players=4].giver_choice_max_un": 0}, 4, "standard", None),
    ({"setup.player_count[players=2].giver_choice_max_un": 0}, 2, "standard", "random"),  # whoever sits
    # the easier variant keeps at level 1 the henchmen henchmen_level2 starts at level 2: none at 3 players
    ({"setup.player_count[players=3].easier_henchmen_level1": True}, 3, "easier", None),
]
# the same values where the games read them
READ = [
    ({"lobo.track.start": 3}, 2, "standard", None),
    ({"setup.variants.dirty_lobo_start": 4}, 2, "dirty-lobo", None),
    ({"setup.variants.dirty_location_delta": 3}, 3, "dirty-location", None),
    ({"setup.player_count[players=3].easier_extra_choice": 2}, 3, "easier", None),
    ({"setup.player_count[players=1].henchmen_level2": 0}, 1, "standard", None),
    ({"setup.player_count[players=2].lineup": ["Nika Shizuka", "Dexter Kane"]}, 2, "standard", None),
    ({"characters.character[name=Agent Five].life": 9}, 5, "standard", None),  # Agent Five sits at 5 players
    ({"characters.character[name=Agent Five].life": 9}, 2, "standard", "random"),  # and may at any count
    ({"characters.character[name=Agent Five].skills.spycraft": 4}, 2, "standard", "Nika Shizuka,Agent Five"),
    ({"setup.player_count[players=1].extra_un": 1}, 1, "standard", "Rocko Jurgen"),
    ({"setup.player_count[players=1].extra_un": 1}, 1, "standard", "random"),  # any character may sit
    ({"setup.player_count[players=1].giver_extra_un": 1}, 1, "standard", None),
    ({"setup.player_count[players=2].giver_extra_un": 3}, 2, "standard", None),
    ({"setup.player_count[players=4].resolve_cut_reduced": 2}, 4, "standard", None),  # Rocko sits at 4 players
    ({"setup.player_count[players=1].giver_choice_max_un": 0}, 1, "standard", None),  # extra_choice is 3 solo
    ({"setup.player_count[players=1].giver_choice_max_un": 0}, 1, "standard", "random"),
    ({"setup.player_count[players=2].easier_henchmen_level1": True}, 2, "easier", None),  # henchmen_level2 is 1
]


def _games(pack, players, variant, characters):
    chars = None if characters in (None, "default") else characters
    df = sim.simulate(players=players, games=150, seed=11, variant=variant, characters=chars, content=pack)
    return df.drop("characters").to_numpy() if characters == "random" else df.to_numpy()


@pytest.mark.parametrize("override, players, variant, characters", UNREAD)
def test_a_value_the_games_do_not_read_is_named_and_plays_the_same_games(override, players, variant, characters):
    base, pack = load(), load_with_overrides(DEFAULT_PACK, override)
    s = Settings.build(pack, players, characters, variant)
    assert reads.changed(base, pack, players), "the override must change the pack where the game could look"
    assert reads.why_unread(base, pack, s, characters)
    assert reads.played_key(base, s, characters) == reads.played_key(pack, s, characters)
    a, b = _games(base, players, variant, characters), _games(pack, players, variant, characters)
    assert a.shape == b.shape and (a == b).all()  # the declaration is true: the very same games


@pytest.mark.parametrize("override, players, variant, characters", READ)
def test_the_same_value_is_read_where_its_variant_plays(override, players, variant, characters):
    base, pack = load(), load_with_overrides(DEFAULT_PACK, override)
    s = Settings.build(pack, players, characters, variant)
    assert reads.why_unread(base, pack, s, characters) is None
    assert reads.played_key(base, s, characters) != reads.played_key(pack, s, characters)
    assert not np.array_equal(_games(base, players, variant, characters), _games(pack, players, variant, characters))


SPEC = """
[experiment]
name = "reads"
seed = 1
games = 100
batch = 100

[grid]
players = [2]
strategies = ["heuristic"]
variants = ["standard", "dirty-lobo"]
setups = ["default", "lobo"]

[setup.lobo]
overrides = { "setup.player_count[players=2].lobo_start" = [1, 3] }
"""


def spec_file(tmp_path, text=SPEC, name="spec.toml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_a_lobo_start_crossed_with_dirty_lobo_is_refused_naming_setup_variant_and_why(tmp_path):
    with pytest.raises(SpecError) as e:
        load_spec(spec_file(tmp_path))
    msg = str(e.value)
    assert msg.startswith("spec.toml: setup.lobo.overrides: setup 'lobo-lobo_start=1': ")
    assert "variant 'dirty-lobo'" in msg and "dirty_lobo_start (2) instead" in msg
    assert "the default's games under the setup's label" in msg and "\n" not in msg


def test_the_same_setup_under_the_standard_game_alone_is_accepted(tmp_path):
    s = load_spec(spec_file(tmp_path, SPEC.replace('["standard", "dirty-lobo"]', '["standard"]')))
    assert [c.setup for c in s.cells()] == ["default", "lobo-lobo_start=1", "lobo-lobo_start=3"]


def test_a_sweep_value_equal_to_the_packs_is_not_refused(tmp_path):
    # lobo_start = 0 is the 2-player game's start already: the cell plays the default's games, as its label says
    text = SPEC.replace("[1, 3]", "[0]").replace('["standard", "dirty-lobo"]', '["dirty-lobo"]')
    assert len(load_spec(spec_file(tmp_path, text)).cells()) == 2


@pytest.mark.parametrize("override, needle", [
    ('"setup.variants.dirty_location_delta" = 2', "only the variant 'dirty-location' reads it"),
    ('"setup.player_count[players=4].location_target" = 6', "names only setup.toml's row for 4 player(s), but the games here have 2"),
    ('"setup.player_count[players=2].note" = "x"', "documents the pack"),
])
def test_other_overrides_no_cell_reads_are_refused(tmp_path, override, needle):
    text = SPEC.replace('"setup.player_count[players=2].lobo_start" = [1, 3]', override)
    with pytest.raises(SpecError, match="setup.lobo.overrides") as e:
        load_spec(spec_file(tmp_path, text))
    assert needle in str(e.value)


def test_a_global_value_a_player_count_sets_for_itself_is_refused(tmp_path):
    text = SPEC.replace('variants = ["standard", "dirty-lobo"]\n', "").replace(
        '"setup.player_count[players=2].lobo_start" = [1, 3]',
        '"setup.player_count[players=2].lobo_start" = 1, "lobo.track.start" = 3')
    with pytest.raises(SpecError) as e:
        load_spec(spec_file(tmp_path, text))
    assert "setup.toml's player_count 2 sets its own lobo_start" in str(e.value)


def test_rows_of_the_grids_player_counts_each_read_by_their_own_cells_are_accepted(tmp_path):
    text = SPEC.replace("players = [2]", "players = [2, 3]").replace('["standard", "dirty-lobo"]', '["standard"]').replace(
        '"setup.player_count[players=2].lobo_start" = [1, 3]',
        '"setup.player_count[players=2].location_target" = 5, "setup.player_count[players=3].location_target" = 6')
    assert len(load_spec(spec_file(tmp_path, text)).cells()) == 4


def test_fixed_skills_from_experiment_skills_refuses_the_picks(tmp_path):
    text = SPEC.replace('variants = ["standard", "dirty-lobo"]\n', "").replace(
        "batch = 100\n", 'batch = 100\nskills = "fixed"\n').replace(
        '"setup.player_count[players=2].lobo_start" = [1, 3]',
        f'"characters.character[name=Calli Dagger].advanced_choices" = {CALLI_PICKS}')
    with pytest.raises(SpecError, match="variant 'fixed-skills'"):
        load_spec(spec_file(tmp_path, text))


def test_run_set_the_variant_replaces_is_refused_naming_the_option(tmp_path):
    s = load_spec(spec_file(tmp_path, SPEC.replace('setups = ["default", "lobo"]', 'setups = ["default"]').split("[setup.lobo]")[0]))
    with pytest.raises(OptionError) as e:
        s.with_overrides({"lobo.track.start": 1})
    assert str(e.value).startswith("--set lobo.track.start=1: has no effect in the cells of 2 players, variant 'dirty-lobo'")
    with pytest.raises(SystemExit) as e:
        main(["run", str(tmp_path / "spec.toml"), "--set", "lobo.track.start=1", "--out", str(tmp_path / "out")])
    assert str(e.value).startswith("error: --set lobo.track.start=1: ") and not (tmp_path / "out").exists()


@pytest.mark.parametrize("cmd", [["play", "--games", "10"], ["trace"]])
def test_play_and_trace_set_the_variant_replaces_are_refused(cmd):
    with pytest.raises(SystemExit) as e:
        main(cmd + ["--players", "2", "--variant", "dirty-lobo", "--set", "lobo.track.start=1"])
    msg = str(e.value)
    assert msg.startswith("error: --set lobo.track.start=1: has no effect in this game (2 players, variant 'dirty-lobo')")
    assert "dirty_lobo_start (2) instead" in msg and "\n" not in msg


BANDS = """
[check]
seed = 7
games = 40
batch = 20
tolerance = 0.05

[[cell]]
name = "2p"
players = 2
strategy = "heuristic"
win_rate = [0.0, 1.0]
baseline = { seed = 7, games = 40, wins = 10 }

[[cell]]
name = "2p-dirty"
players = 2
strategy = "heuristic"
variant = "dirty-lobo"
win_rate = [0.0, 1.0]
baseline = { seed = 7, games = 40, wins = 10 }
"""


def _no_games(monkeypatch):
    import sim.bands

    def played(*a, **k):
        raise AssertionError("games were played")

    monkeypatch.setattr(sim.bands, "check_cell", played)


def test_a_bands_cells_override_its_variant_replaces_is_refused_before_any_game(tmp_path, monkeypatch):
    from sim.bands import BandsError, run_check

    p = tmp_path / "b.toml"
    p.write_text(textwrap.dedent(BANDS) + 'overrides = { "lobo.track.start" = 3 }\n')
    _no_games(monkeypatch)
    with pytest.raises(BandsError) as e:
        run_check(p, update=True)
    assert str(e.value).startswith('b.toml: cell[2p-dirty].overrides: "lobo.track.start" = 3 has no effect in '
                                   "cell[2p-dirty] (2 players, variant 'dirty-lobo'): the variant 'dirty-lobo' starts")


def test_check_set_no_cell_reads_is_refused_and_one_a_cell_leaves_unread_is_named(tmp_path, monkeypatch, capsys):
    """``check --set`` tries a change on the whole gate: refused (exit 2) where no cell would read it; where a
    cell's variant replaces the value, that cell truly replays its baseline's games, and a warning names it."""
    p = tmp_path / "b.toml"
    p.write_text(textwrap.dedent(BANDS))
    dirty_only = tmp_path / "d.toml"
    dirty_only.write_text(textwrap.dedent(BANDS).replace(BANDS[BANDS.index("[[cell]]"):BANDS.index('[[cell]]\nname = "2p-dirty"')], ""))
    _no_games(monkeypatch)
    with pytest.raises(SystemExit) as e:
        main(["check", str(dirty_only), "--set", "lobo.track.start=1"])
    assert e.value.code == 2
    assert str(e.value).startswith("error: --set lobo.track.start=1: has no effect in cell[2p-dirty] (2 players, "
                                   "variant 'dirty-lobo')")
    assert str(e.value).endswith("no cell of d.toml would play it")
    capsys.readouterr()
    with pytest.raises(AssertionError, match="games were played"):  # the standard cell plays the change
        main(["check", str(p), "--set", "lobo.track.start=1"])
    warned = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning: --set")]
    assert len(warned) == 1 and re.fullmatch(r"warning: --set lobo.track.start=1 has no effect in cell\[2p-dirty\] "
                                             r"\(2 players, variant 'dirty-lobo'\).*: cell\[2p-dirty\] replays its "
                                             r"baseline's games", warned[0]), warned
    with pytest.raises(SystemExit) as e:  # a typo: --set, not the cells, is at fault
        main(["check", str(p), "--set", "lobo.track.strat=1"])
    assert str(e.value) == "error: --set: override 'lobo.track.strat': lobo.toml.track has no key 'strat' (keys: loss, start)"
    with pytest.raises(AssertionError, match="games were played"):  # the dirty-lobo cell reads its own start
        main(["check", str(p), "--set", "setup.variants.dirty_lobo_start=3"])


def test_tune_and_sensitivity_refuse_a_knob_only_a_variant_reads(monkeypatch):
    from sim import sensitivity as S
    from sim import tune as T

    monkeypatch.setattr(T, "race", lambda *a, **k: (_ for _ in ()).throw(AssertionError("games were played")))
    with pytest.raises(T.TuneError, match=r"dirty_lobo_start=1 and setup.variants.dirty_lobo_start=2 play the same "
                                          r"games at 2 players.*a value only a variant reads"):
        T.tune([T.Knob.parse("setup.variants.dirty_lobo_start=1..3")], [T.Target(2, 0.3, 0.5)], budget=4000)
    with pytest.raises(S.SensitivityError, match=r"dirty_location_delta 1 -> 2 at 2 players: only the variant "
                                                 r"'dirty-location' reads it .*sensitivity plays the standard game"):
        S.sensitivity([2], ["setup.variants.dirty_location_delta"], games=10)


def test_an_experiment_override_a_setup_replaces_is_refused_naming_the_setup(tmp_path):
    """A setup's own overrides apply after the experiment's (and ``run --set``): where they set the same value,
    that setup's cells play without the experiment's, under a header that names it."""
    text = SPEC.replace('variants = ["standard", "dirty-lobo"]\n', "").replace(
        '"setup.player_count[players=2].lobo_start" = [1, 3]', '"villain.counts" = { minus_one = 4 }')
    with pytest.raises(OptionError) as e:
        load_spec(spec_file(tmp_path, text)).with_overrides({"villain.counts": {"injury": 5}})
    assert str(e.value) == ('--set villain.counts={"injury": 5}: has no effect in the cells of setup \'lobo\': '
                            '[setup.lobo] sets "villain.counts" = {"minus_one": 4} after it, which replaces it; '
                            'those cells of spec.toml would play as if it were not given')
    own = text.replace("batch = 100\n", 'batch = 100\noverrides = { "villain.counts" = { injury = 5 } }\n')
    with pytest.raises(SpecError, match=r'experiment\.overrides: "villain\.counts" = \{"injury": 5\} has no effect '
                                        r"in the cells of setup 'lobo'.*would play as if it were not set"):
        load_spec(spec_file(tmp_path, own))
    # a value of the experiment the setup leaves alone plays in every cell
    other = text.replace("batch = 100\n", 'batch = 100\noverrides = { "lobo.track.start" = 1 }\n')
    assert len(load_spec(spec_file(tmp_path, other)).cells()) == 2


def test_check_set_a_cells_own_override_replaces_is_named_or_refused(tmp_path, monkeypatch, capsys):
    """``check --set`` under a cell that sets the same value itself: that cell replays its baseline's games, and
    a warning names it; where every cell does, no cell would play the change, and it is refused."""
    own = 'overrides = { "villain.counts" = { minus_one = 4 } }\n'
    first = BANDS.index('[[cell]]\nname = "2p-dirty"')
    p = tmp_path / "b.toml"
    p.write_text(textwrap.dedent(BANDS[:first] + own + "\n" + BANDS[first:]))
    _no_games(monkeypatch)
    with pytest.raises(AssertionError, match="games were played"):  # the dirty cell plays the change
        main(["check", str(p), "--set", "villain.counts={injury=5}"])
    warned = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning: --set")]
    assert warned == ['warning: --set villain.counts={"injury": 5} has no effect in cell[2p]: its own overrides '
                      "replace it, and it replays its baseline's games"], warned
    both = tmp_path / "both.toml"
    both.write_text(textwrap.dedent(BANDS[:first] + own + "\n" + BANDS[first:] + own))
    with pytest.raises(SystemExit) as e:
        main(["check", str(both), "--set", "villain.counts={injury=5}"])
    assert e.value.code == 2 and str(e.value) == (
        'error: --set villain.counts={"injury": 5}: every cell of both.toml sets it itself, after --set, which '
        "replaces it; no cell would play it")


SOLO_EXTRA = "setup.player_count[players=1].extra_un"


def test_a_set_up_value_no_seated_character_reads_is_refused_by_play_spec_check_and_sensitivity(tmp_path, monkeypatch):
    """The solo default seats Calli Dagger alone, who takes giver_extra_un: extra_un=1 would play the default's
    games under a label that says one more UN Transport."""
    from sim import sensitivity as S
    from sim.bands import BandsError, run_check

    why = ("only a character without gives_un reads it, and every seat plays one with it (the line-up is "
           "'Calli Dagger'); the seats read setup.toml's giver_extra_un instead")
    with pytest.raises(SystemExit) as e:
        main(["play", "--players", "1", "--games", "10", "--set", f"{SOLO_EXTRA}=1"])
    assert str(e.value) == (f"error: --set {SOLO_EXTRA}=1: has no effect in this game (1 player, variant "
                            f"'standard'): {why}; the games would be those of the pack without it")
    text = SPEC.replace("players = [2]", "players = [1]").replace('["standard", "dirty-lobo"]', '["standard"]').replace(
        '"setup.player_count[players=2].lobo_start" = [1, 3]', f'"{SOLO_EXTRA}" = [1, 2]')
    with pytest.raises(SpecError) as e:
        load_spec(spec_file(tmp_path, text))
    assert why in str(e.value) and "\n" not in str(e.value)
    # with a character who reads it, the same sweep plays
    assert len(load_spec(spec_file(tmp_path, text.replace('setups =', 'characters = ["Rocko Jurgen"]\nsetups ='))).cells()) == 3
    _no_games(monkeypatch)
    solo = tmp_path / "solo.toml"
    solo.write_text(textwrap.dedent(BANDS).replace("players = 2", "players = 1").replace('variant = "dirty-lobo"\n', ""))
    with pytest.raises(SystemExit) as e:
        main(["check", str(solo), "--set", f"{SOLO_EXTRA}=3"])
    assert e.value.code == 2 and why in str(e.value) and str(e.value).endswith("no cell of solo.toml would play it")
    b = tmp_path / "b.toml"
    b.write_text(textwrap.dedent(BANDS).replace("players = 2", "players = 1").replace('variant = "dirty-lobo"\n', "")
                 + f'overrides = {{ "{SOLO_EXTRA}" = 1 }}\n')
    with pytest.raises(BandsError, match=re.escape(why)):
        run_check(b, update=True)
    monkeypatch.setattr(S, "play_win_vector", lambda *a, **k: (_ for _ in ()).throw(AssertionError("games were played")))
    with pytest.raises(S.SensitivityError, match=re.escape(f"{SOLO_EXTRA} 0 -> 1 at 1 player: {why}")):
        S.sensitivity([1], [SOLO_EXTRA], games=10)


def test_a_resolve_cut_at_or_above_every_readers_starting_resolve_plays_as_that_resolve():
    """make_player: Resolve = max(0, start - cut), and nothing else reads the cut. At 4 players Calli, Dexter and
    Nika (Resolve 3) read resolve_cut: 3 and 4 play the same games, and played_key says so; 2 and 3 do not. With a
    random line-up the readers are every character without reduced_resolve_cut (all start at 3 too)."""
    cut = "setup.player_count[players=4].resolve_cut"
    three, four, two = (load_with_overrides(DEFAULT_PACK, {cut: v}) for v in (3, 4, 2))
    for characters in (None, "random"):
        s = Settings.build(three, 4, None if characters is None else characters)
        assert reads.played_key(three, s, characters) == reads.played_key(four, s, characters)
        assert reads.played_key(two, s, characters) != reads.played_key(three, s, characters)
        assert np.array_equal(_games(three, 4, "standard", characters), _games(four, 4, "standard", characters))
    s = Settings(players=4)
    assert reads.why_alike(three, four, s) == (
        "every character that may sit starts with the same Resolve either way ('Calli Dagger' 0, 'Rocko Jurgen' 2, "
        "'Dexter Kane' 0, 'Nika Shizuka' 0)")
    assert reads.why_alike(two, three, s) is None and reads.why_unread(three, four, s) is None


ROCKO = "characters.character[name=Rocko Jurgen]"
CALLI = "characters.character[name=Calli Dagger]"
# (override, players, variant): a value the games read only through its set-up outcome, which it leaves as it was
ALIKE_AT_SETUP = [
    # Rocko's reduced cut flipped where both cuts are 0 (4 players): he starts at Resolve 2 either way
    ({f"{ROCKO}.reduced_resolve_cut": False}, 4, "standard"),
    # another pair of advanced skills on Calli's mat: without fixed-skills she still picks two
    ({f"{CALLI}.advanced": ["lockpicking", "electronics"]}, 2, "standard"),
    # more tokens of each advanced skill than players: none runs out either way
    ({"intel.components.advanced_skill_tokens": 6}, 4, "standard"),
]
# the same changes where the outcome changes
READ_AT_SETUP = [
    ({f"{ROCKO}.reduced_resolve_cut": False}, 6, "standard"),  # cuts 2 and 1 at 6 players: Resolve 0 against 1
    ({f"{CALLI}.advanced": ["lockpicking", "electronics"]}, 2, "fixed-skills"),  # she takes those two
    ({f"{CALLI}.advanced": ["lockpicking"]}, 2, "standard"),  # she picks one
    ({"intel.components.advanced_skill_tokens": 6}, 5, "standard"),  # 4 tokens may run out at 5 players
]


@pytest.mark.parametrize("override, players, variant", ALIKE_AT_SETUP)
def test_a_value_read_only_through_a_set_up_outcome_it_leaves_alone_plays_the_same_games(override, players, variant):
    """played_key hashes each seat's starting Resolve, the number of advanced skills a character picks and the
    tokens that can run out, not the values behind them: a change that leaves those alone plays the same games,
    and why_alike says why (tune races such settings as one, sensitivity reports no game changed)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # off the printed game, as meant
        base, pack = load(), load_with_overrides(DEFAULT_PACK, override)
    s = Settings.build(base, players, variant=variant)
    assert reads.played_key(base, s) == reads.played_key(pack, s)
    assert reads.why_alike(base, pack, s) is not None and reads.why_unread(base, pack, s) is None
    assert np.array_equal(_games(base, players, variant, None), _games(pack, players, variant, None))


@pytest.mark.parametrize("override, players, variant", READ_AT_SETUP)
def test_a_value_read_only_through_a_set_up_outcome_it_changes_plays_other_games(override, players, variant):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base, pack = load(), load_with_overrides(DEFAULT_PACK, override)
    s = Settings.build(base, players, variant=variant)
    assert reads.played_key(base, s) != reads.played_key(pack, s)
    assert reads.why_alike(base, pack, s) is None
    assert not np.array_equal(_games(base, players, variant, None), _games(pack, players, variant, None))


def _ref_games(overrides, players=2, variant=None, games=200):
    """Reference-engine games of the default pack with ``overrides``: the table a cell of that pack plays."""
    pack = load_with_overrides(DEFAULT_PACK, overrides) if overrides else load()
    df = sim.simulate(players=players, games=games, seed=11, variant=variant, content=pack, engine="reference",
                      threads=1)
    return df.to_numpy()


DEX_LIFE = "characters.character[name=Dexter Kane].life"
LINEUP2 = "setup.player_count[players=2].lineup"
EXTRA_UN2 = "setup.player_count[players=2].extra_un"
CAP2 = "setup.player_count[players=2].giver_choice_max_un"
CHOICE2 = "setup.player_count[players=2].extra_choice"
SEAT_SPEC = """
[experiment]
name = "seat"
seed = 1
games = 100
batch = 100
overrides = { EXP }

[grid]
players = [2]
strategies = ["heuristic"]
setups = ["seat"]

[setup.seat]
overrides = { OWN }
"""


def _seat_spec(tmp_path, exp, own):
    text = SEAT_SPEC.replace("EXP", ", ".join(f'"{k}" = {v}' for k, v in exp.items())).replace(
        "OWN", ", ".join(f'"{k}" = {v}' for k, v in own.items()))
    return spec_file(tmp_path, text)


def test_an_experiment_override_is_judged_by_the_pack_each_setup_plays(tmp_path):
    """The experiment's overrides (and run --set) apply to every cell before its setup's own: a setup that seats
    Dexter Kane reads his life, one that sets extra_choice reads the cap of Calli's share of it, and one that
    seats Calli twice reads no extra_un. The games say the same."""
    dexter = {LINEUP2: '["Dexter Kane", "Rocko Jurgen"]'}
    assert len(load_spec(_seat_spec(tmp_path, {DEX_LIFE: 6}, dexter)).cells()) == 1
    seated = {LINEUP2: ["Dexter Kane", "Rocko Jurgen"]}
    assert not np.array_equal(_ref_games(seated), _ref_games({**seated, DEX_LIFE: 6}))
    choice = {CHOICE2: 2}
    assert len(load_spec(_seat_spec(tmp_path, {CAP2: 0}, choice)).cells()) == 1
    assert not np.array_equal(_ref_games(choice), _ref_games({**choice, CAP2: 0}))
    # run --set is judged alike
    spec = load_spec(_seat_spec(tmp_path, {"lobo.track.start": 1}, dexter))
    assert len(spec.with_overrides({DEX_LIFE: 6}).cells()) == 1
    # the mirror: a setup seating Calli Dagger twice reads no extra_un, and plays the same games without it
    callis = {LINEUP2: '["Calli Dagger", "Calli Dagger"]'}
    with pytest.raises(SpecError) as e:
        load_spec(_seat_spec(tmp_path, {EXTRA_UN2: 3}, callis))
    assert str(e.value) == (
        f'spec.toml: experiment.overrides: "{EXTRA_UN2}" = 3 has no effect in the cells of 2 players, variant '
        "'standard', setup 'seat': only a character without gives_un reads it, and every seat plays one with it "
        "(the line-up is 'Calli Dagger'); the seats read setup.toml's giver_extra_un instead; those cells would "
        "play as if it were not set")
    twice = {LINEUP2: ["Calli Dagger", "Calli Dagger"]}
    assert np.array_equal(_ref_games(twice), _ref_games({**twice, EXTRA_UN2: 3}))
    with pytest.raises(OptionError, match=r"^--set setup.player_count\[players=2\].extra_un=3: has no effect in "
                                          r"the cells of 2 players, variant 'standard', setup 'seat': .*'Calli "
                                          r"Dagger'\)"):
        load_spec(_seat_spec(tmp_path, {"lobo.track.start": 1}, callis)).with_overrides({EXTRA_UN2: 3})


SEAT_BANDS = """
[check]
seed = 7
games = 40
batch = 20
tolerance = 0.05

[[cell]]
name = "seat"
players = 2
strategy = "heuristic"
win_rate = [0.0, 1.0]
baseline = { seed = 7, games = 40, wins = 10 }
overrides = { "setup.player_count[players=2].lineup" = LINEUP }
"""


def test_check_set_is_judged_by_the_pack_each_cell_plays(tmp_path, monkeypatch, capsys):
    """``check --set`` applies before a cell's own overrides: a cell seating Dexter Kane reads his life; a cell
    seating Calli Dagger twice reads no extra_un, and is named in a warning (refused where it is the only cell)."""
    dexter = SEAT_BANDS.replace("LINEUP", '["Dexter Kane", "Rocko Jurgen"]')
    callis = SEAT_BANDS.replace("LINEUP", '["Calli Dagger", "Calli Dagger"]').replace('"seat"', '"callis"')
    p, q = tmp_path / "dex.toml", tmp_path / "both.toml"
    p.write_text(textwrap.dedent(dexter))
    q.write_text(textwrap.dedent(dexter) + textwrap.dedent(callis)[textwrap.dedent(callis).index("[[cell]]"):])
    _no_games(monkeypatch)
    with pytest.raises(AssertionError, match="games were played"):
        main(["check", str(p), "--set", f"{DEX_LIFE}=6"])
    capsys.readouterr()
    with pytest.raises(AssertionError, match="games were played"):  # cell[seat] plays the change
        main(["check", str(q), "--set", f"{EXTRA_UN2}=3"])
    warned = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning: --set")]
    assert warned == [f"warning: --set {EXTRA_UN2}=3 has no effect in cell[callis] (2 players, variant 'standard'): "
                      "only a character without gives_un reads it, and every seat plays one with it (the line-up is "
                      "'Calli Dagger'); the seats read setup.toml's giver_extra_un instead: cell[callis] replays its "
                      "baseline's games"], warned
    only = tmp_path / "callis.toml"
    only.write_text(textwrap.dedent(callis))
    with pytest.raises(SystemExit) as e:
        main(["check", str(only), "--set", f"{EXTRA_UN2}=3"])
    assert e.value.code == 2 and str(e.value).endswith("no cell of callis.toml would play it")


CALLI_CHOICES = "characters.character[name=Calli Dagger].advanced_choices"


def test_run_skills_is_applied_before_the_spec_is_judged(tmp_path, monkeypatch):
    """``run --skills pick`` on a spec whose file fixes the skills: Calli Dagger's advanced_choices, read only where
    players pick, is read by every cell as played; the other way round, ``--skills fixed`` leaves it unread and is
    refused naming the option."""
    import sim.study

    monkeypatch.setattr(sim.study, "run_study", lambda *a, **k: (_ for _ in ()).throw(AssertionError("played")))
    text = SPEC.replace('variants = ["standard", "dirty-lobo"]\n', "").replace(
        '"setup.player_count[players=2].lobo_start" = [1, 3]', f'"{CALLI_CHOICES}" = {CALLI_PICKS}'.replace("'", '"'))
    fixed = spec_file(tmp_path, text.replace("batch = 100\n", 'batch = 100\nskills = "fixed"\n'), "fixed.toml")
    with pytest.raises(SpecError, match=r"setup.lobo.overrides: .*fixed-skills"):  # as the file says
        load_spec(fixed)
    with pytest.raises(AssertionError, match="played"):
        main(["run", str(fixed), "--quiet", "--out", str(tmp_path / "out"), "--skills", "pick"])
    assert not np.array_equal(_ref_games(None), _ref_games({CALLI_CHOICES: CALLI_PICKS}))
    picks = spec_file(tmp_path, text, "pick.toml")
    assert len(load_spec(picks).cells()) == 2
    with pytest.raises(SystemExit) as e:
        main(["run", str(picks), "--quiet", "--out", str(tmp_path / "out"), "--skills", "fixed"])
    assert e.value.code == 2 and str(e.value).startswith(
        "error: --skills fixed: pick.toml: setup.lobo.overrides: ")
    assert "fixed-skills" in str(e.value) and "\n" not in str(e.value)
    assert np.array_equal(_ref_games(None, variant="fixed-skills"),
                          _ref_games({CALLI_CHOICES: CALLI_PICKS}, variant="fixed-skills"))


def test_a_value_whose_gate_is_0_is_refused_whoever_sits_and_under_easier(tmp_path):
    """giver_choice_max_un caps Calli's share of extra_choice, 0 at 2 players, whatever line-up sits (a random one
    too); easier_henchmen_level1 keeps at level 1 the henchmen henchmen_level2 starts at level 2, none from 3
    players on: both play the same games, and are refused."""
    cap = "setup.player_count[players=2].giver_choice_max_un"
    with pytest.raises(SystemExit) as e:
        main(["play", "--players", "2", "--games", "10", "--characters", "random", "--set", f"{cap}=0"])
    assert str(e.value) == (f"error: --set {cap}=0: has no effect in this game (2 players, variant 'standard', "
                            "characters 'random'): it caps the UN Transports a character with gives_un takes of "
                            "extra_choice, which is 0 at 2 player(s); the games would be those of the pack without it")
    level1 = "setup.player_count[players=3].easier_henchmen_level1"
    text = SPEC.replace("players = [2]", "players = [3]").replace('["standard", "dirty-lobo"]', '["easier"]').replace(
        '"setup.player_count[players=2].lobo_start" = [1, 3]', f'"{level1}" = true')
    with pytest.raises(SpecError) as e:
        load_spec(spec_file(tmp_path, text))
    assert str(e.value) == (f'spec.toml: setup.lobo.overrides: "{level1}" = true has no effect: it keeps at level 1 '
                            "the henchmen that start at level 2 by henchmen_level2, which is 0 at 3 player(s), and the "
                            "games here play 'easier'; no cell would play it")


def test_setups_that_play_the_same_games_are_named_in_a_warning(tmp_path, monkeypatch, capsys):
    """A sweep of the 6-player Resolve cut: 3, 4 and 5 leave every seat that reads it at Resolve 0 (they start at
    3), so those setups play the same games under three labels; 2 is the pack's own value (the default's games,
    as its label says) and is not named."""
    import sim.study

    cut = "setup.player_count[players=6].resolve_cut"
    text = SPEC.replace("players = [2]", "players = [6]").replace('variants = ["standard", "dirty-lobo"]\n', "").replace(
        '"setup.player_count[players=2].lobo_start" = [1, 3]', f'"{cut}" = "2..5"')
    p = spec_file(tmp_path, text)
    monkeypatch.setattr(sim.study, "run_study", lambda *a, **k: (_ for _ in ()).throw(AssertionError("played")))
    with pytest.raises(AssertionError, match="played"):
        main(["run", str(p), "--quiet", "--out", str(tmp_path / "out")])
    warned = [line for line in capsys.readouterr().err.splitlines() if "same games" in line]
    assert warned == ["warning: spec.toml: setups 'lobo-resolve_cut=3', 'lobo-resolve_cut=4' and 'lobo-resolve_cut=5' "
                      "play the same games in every cell (every character that may sit starts with the same Resolve "
                      "either way ('Calli Dagger' 0, 'Rocko Jurgen' 1, 'Dexter Kane' 0, 'Nika Shizuka' 0, "
                      "'Agent Five' 0)): their rows will differ in label only"], warned
    three, five, two = (_ref_games({cut: v}, players=6, games=60) for v in (3, 5, 2))
    assert np.array_equal(three, five) and not np.array_equal(two, three)
    with pytest.warns(reads.UnreadOverrideWarning) as w:  # the library says it too
        load_spec(p)
    assert [str(x.message) for x in w if "same games" in str(x.message)] == [warned[0].removeprefix("warning: ")]


@pytest.mark.parametrize("empty", ["", "  ", " , ", [], ()])
def test_an_empty_line_up_is_refused_not_read_as_the_default_one(empty):
    """The readings' line-up label never takes an empty line-up for the default one (as Settings.build)."""
    from sim.rules.reads import lineup_label

    assert lineup_label(None) == "default" and lineup_label(" random ") == "random"
    with pytest.raises(ValueError, match="characters: empty"):
        lineup_label(empty)
