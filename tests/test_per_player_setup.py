"""Setup values for one player count alone: Dr. Lobo's start and the villain deck mix."""

import shutil

import pytest

import sim
from sim.content import DEFAULT_PACK, ContentError, load
from sim.content.overrides import load_with_overrides


def play(content, players, games=600, engine="kernel"):
    return sim.simulate(players=players, games=games, seed=9, content=content, engine=engine)


def test_a_four_player_lobo_start_plays_like_the_global_one_at_four_players_only():
    per = load_with_overrides(DEFAULT_PACK, {"setup.player_count[players=4].lobo_start": 2})
    glob = load_with_overrides(DEFAULT_PACK, {"lobo.track.start": 2})
    base = load(DEFAULT_PACK)
    assert play(per, 4).equals(play(glob, 4))
    assert not play(per, 4).equals(play(base, 4))
    for players in (1, 2, 3, 5, 6):
        assert play(per, players, 300).equals(play(base, players, 300))


def test_a_four_player_villain_mix_plays_like_the_global_one_at_four_players_only():
    per = load_with_overrides(DEFAULT_PACK, {"setup.player_count[players=4].villain_counts": {"minus_one": 5}})
    glob = load_with_overrides(DEFAULT_PACK, {"villain.counts": {"minus_one": 5}})
    base = load(DEFAULT_PACK)
    assert play(per, 4).equals(play(glob, 4))
    assert play(per, 3, 300).equals(play(base, 3, 300))
    assert per.for_players(4).hash == glob.hash  # the 4-player game plays exactly the globally changed pack


def test_both_engines_play_the_per_player_pack():
    per = load_with_overrides(DEFAULT_PACK, {"setup.player_count[players=2].lobo_start": 3,
                                             "setup.player_count[players=2].villain_counts": {"injury": 5}})
    assert play(per, 2, 60).equals(play(per, 2, 60, engine="reference"))


def test_an_edited_pack_file_takes_per_player_values(tmp_path):
    shutil.copytree(DEFAULT_PACK, tmp_path / "pack")
    f = tmp_path / "pack" / "setup.toml"
    text = f.read_text()
    marker = "players = 4\n"
    assert marker in text
    f.write_text(text.replace(marker, marker + "lobo_start = 1\nvillain_counts = { minus_one = 4 }\n", 1))
    c = load(tmp_path / "pack")
    assert c.for_players(4).lobo_start == 1 and c.for_players(3) is c
    assert int((c.for_players(4).villain_advance == -1).sum()) == 4


@pytest.mark.parametrize("overrides, reason", [
    ({"setup.player_count[players=4].lobo_start": -1}, "lobo_start = -1 is off the printed track"),
    ({"setup.player_count[players=4].lobo_start": 9}, "Dr. Lobo starts on 0..8"),
    ({"setup.player_count[players=4].villain_counts": {"minus_one": 99}}, "villain.counts"),
    ({"setup.player_count[players=4].villain_counts": {"minus_two": 1}}, "minus_two"),
])
def test_values_off_the_board_are_refused_naming_file_field_and_range(overrides, reason):
    with pytest.raises(ContentError) as e:
        load_with_overrides(DEFAULT_PACK, overrides)
    assert "setup.toml" in str(e.value) and reason in str(e.value)


def test_legal_but_unprinted_values_are_loaded_with_a_warning(capsys):
    import warnings

    from sim.cli import main
    from sim.content import UnprintedValueWarning, unprinted

    assert unprinted(load(DEFAULT_PACK)) == []  # the default pack has the printed component counts
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        c = load_with_overrides(DEFAULT_PACK, {"intel.tokens.weapon": 9, "intel.tokens.total": 21})
    assert c.n_intel == 21
    said = [str(x.message) for x in seen if issubclass(x.category, UnprintedValueWarning)]
    assert said == ["intel.toml: 21 yellow Intel tokens; the printed game has 20 (legal, but not the published game)",
                    "intel.toml: tokens: weapon = 9; the printed game has 8 (legal, but not the published game)"]
    assert main(["play", "--games", "10", "--set", "intel.components.un_transport=10"]) == 0
    err = capsys.readouterr().err
    assert "warning: intel.toml: 10 UN Transport tokens; the printed game has 8" in err


def test_unprinted_advanced_skill_tokens_say_the_count_per_skill_and_the_totals():
    import warnings

    from sim.content import UnprintedValueWarning

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        load_with_overrides(DEFAULT_PACK, {"intel.components.advanced_skill_tokens": 5})
    (w,) = [x for x in seen if issubclass(x.category, UnprintedValueWarning)]
    assert str(w.message) == ("intel.toml: 5 tokens of each of the 11 advanced skills (55 in all); the printed game "
                              "has 4 of each, 44 in all (legal, but not the published game)")
