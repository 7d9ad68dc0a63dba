"""The shared wording helpers: a count of one takes the singular."""

import pytest

from sim.text import count, counts


def test_count_takes_the_singular_for_one():
    assert count(1, "player") == "1 player"
    assert count(4, "player") == "4 players"
    assert count(0, "game") == "0 games"


def test_counts_of_a_list():
    assert counts([1], "player") == "1 player"
    assert counts([2], "player") == "2 players"
    assert counts([1, 2], "player") == "1, 2 players"
    assert counts([], "player") == "no players"


def test_a_tune_target_for_one_player_says_player():
    from sim.tune import Target, TuneError

    with pytest.raises(TuneError) as e:
        Target(1, 0.5, 0.4)
    assert str(e.value).startswith("target for 1 player: band")


def test_the_luck_progress_of_one_player_says_player(capsys):
    from sim.cli import main

    assert main(["luck", "--players", "1", "--games", "200", "--strategies", "heuristic"]) == 0
    captured = capsys.readouterr()
    assert "1 player:" in captured.err and "1 players" not in captured.err + captured.out


def test_the_sensitivity_progress_and_charts_of_one_player_say_player(tmp_path, capsys):
    from sim.cli import main

    assert main(["sensitivity", "--players", "1", "--games", "200", "--knob", "lobo.track.start",
                 "--out", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert "1 player, lobo.track.start" in captured.err and "1 players" not in captured.err + captured.out
    from PIL import Image

    with Image.open(tmp_path / "tornado_1p.png") as png:
        assert png.info["Title"] == "smersh-sim sensitivity, 1 player"
