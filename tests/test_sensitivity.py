"""smersh-sim sensitivity: one step down and up per knob, paired against the unchanged pack."""

import polars as pl
import pytest

from sim import sensitivity as S
from sim.content import DEFAULT_PACK, load_raw


def test_current_values_of_the_default_pack():
    raw = load_raw(DEFAULT_PACK)
    assert S.current_value(raw, "lobo.track.start") == 0
    assert S.current_value(raw, "setup.player_count[players=4].location_target") == 5
    assert S.current_value(raw, "villain.counts.minus_one") == raw["villain.toml"]["composition"]["minus_one"]
    with pytest.raises(S.SensitivityError, match="different values"):
        S.current_value(raw, "setup.player_count[*].location_target")
    with pytest.raises(S.SensitivityError, match="no kind"):
        S.current_value(raw, "villain.counts.minus_two")


def test_steps_are_paired_and_refusals_reported(tmp_path):
    knobs = ["lobo.track.start", "setup.player_count[players={players}].extra_un"]
    t = S.sensitivity([4], knobs, games=4000, seed=3)
    assert t.height == 4
    played = t.filter(pl.col("refused").is_null())
    # the paired difference is exactly the difference of the two win rates on the same games
    for r in played.iter_rows(named=True):
        assert r["diff"] == pytest.approx(r["win_rate"] - r["default_win_rate"], abs=1e-12)
        assert r["diff_low"] <= r["diff"] <= r["diff_high"]
    # extra_un is 0 at 4 players: a step down is refused by the pack, with the reason, and plays nothing
    down = t.filter((pl.col("knob") == "setup.player_count[players=4].extra_un") & (pl.col("step") == -1)).row(0, named=True)
    assert down["refused"] and "extra_un" in down["refused"] and down["win_rate"] is None
    # Dr. Lobo one step further along makes the game clearly harder (about 8 points here)
    up = t.filter((pl.col("knob") == "lobo.track.start") & (pl.col("step") == 1)).row(0, named=True)
    assert up["diff_high"] < 0
    files = S.write_outputs(t, tmp_path)
    assert (tmp_path / "tornado_4p.png") in files
    assert pl.read_parquet(tmp_path / "sensitivity.parquet").equals(t)


def test_per_player_knobs_read_the_pack_values_they_fall_back_to():
    raw = load_raw(DEFAULT_PACK)
    assert S.current_value(raw, "setup.player_count[players=4].lobo_start") == raw["lobo.toml"]["track"]["start"]
    assert S.current_value(raw, "setup.player_count[players=4].villain_counts.minus_one") == \
        raw["villain.toml"]["composition"]["minus_one"]
    assert all(k.startswith("setup.player_count[players=3].") for k in S.default_knobs(3))
