"""Luck against skill: the variance shares on toys where each source's share is known exactly."""

import json

import numpy as np
import pytest

from sim import luck as L
from sim import rng as R


def uniforms(n: int, offsets: np.ndarray, source: int) -> np.ndarray:
    """A toy stream: one uniform per (game index for this source, source), from a 64-bit mix."""
    x = (np.arange(n) + offsets[source]).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(source * 0x632BE59BD9B4E019 + 1)
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return (x >> np.uint64(11)).astype(np.float64) / float(2**53)


def both_halves(n, offsets):
    """Won when the dice and the villain deck both fall right (p = 1/4): each decides 1/3 alone, 1/3 together."""
    return (uniforms(n, offsets, R.DICE) < 0.5) & (uniforms(n, offsets, R.VILLAIN) < 0.5)


def dice_only(n, offsets):
    return uniforms(n, offsets, R.DICE) < 0.3


N = 200_000


def test_and_of_two_fair_coins_gives_a_third_each_and_a_third_together():
    shares, p = L.first_order_shares(both_halves, N, seed=3)
    by = {s.group: s for s in shares}
    assert p == pytest.approx(0.25, abs=4 * np.sqrt(0.25 * 0.75 / N))
    for g in ("dice", "villain deck"):
        assert by[g].low <= 1 / 3 <= by[g].high, by[g]
        assert by[g].high - by[g].low < 0.03
    for g in ("dice", "villain deck"):  # the win flips when the other coin is right and this one falls anew
        assert by[g].changed == pytest.approx(N / 4, rel=0.03)
    for g in set(L.GROUPS) - {"dice", "villain deck"}:  # never drawn: not measured, rather than noise near 0
        assert (by[g].share, by[g].low, by[g].high, by[g].changed) == (None, None, None, 0), by[g]
        assert not by[g].measured
    rest = 1 - sum(s.share for s in shares if s.measured)
    assert rest == pytest.approx(1 / 3, abs=0.03)


def test_a_game_decided_by_the_dice_alone():
    shares, _ = L.first_order_shares(dice_only, N, seed=4)
    by = {s.group: s for s in shares}
    assert by["dice"].share == pytest.approx(1.0, abs=1e-12)
    assert [s.group for s in shares if s.measured] == ["dice"]


def test_a_source_drawn_without_changing_the_win_is_measured_from_the_records():
    """Re-drawing a source that changes a game's record but not its win is measured (a share near 0), not skipped."""
    def dice_win_villain_record(n, offsets):
        wins = dice_only(n, offsets)
        return wins, np.column_stack([wins, uniforms(n, offsets, R.VILLAIN)])

    shares, _ = L.first_order_shares(dice_win_villain_record, 20_000, seed=4)
    by = {s.group: s for s in shares}
    assert by["villain deck"].measured and by["villain deck"].changed == 20_000
    assert by["villain deck"].low <= 0.0 <= by["villain deck"].high
    assert by["Fate deck"].changed == 0 and not by["Fate deck"].measured


def test_a_source_not_drawn_gives_the_same_number_as_any_other_not_drawn():
    """Why such a share cannot be reported: its B games are the same games for every source not drawn."""
    ya = dice_only(N, L.offsets_for(N, None))
    fate = dice_only(N, L.offsets_for(N, L.GROUPS["Fate deck"]))
    setup = dice_only(N, L.offsets_for(N, L.GROUPS["set-up"]))
    assert np.array_equal(fate, setup) and not np.array_equal(fate, ya)


def test_offsets_pair_only_the_held_group():
    assert (L.offsets_for(5, None) == 0).all()
    b = L.offsets_for(5, L.GROUPS["encounter decks"])
    held = list(L.GROUPS["encounter decks"])
    assert (b[held] == 0).all()
    assert (np.delete(b, held) == 5).all()


def test_the_kernel_draws_each_source_from_its_offset_game():
    """With every offset n, games 0..n-1 are exactly games n..2n-1; a held source changes the rows."""
    import sim
    from sim.content import load
    from sim.kernel import ROW_FIELDS, run_batch
    from sim.rules.state import Settings
    from sim.run import _kernel_strategy

    c = load()
    s = Settings.build(c, 3)
    h = _kernel_strategy("heuristic", None)
    n = 200
    shifted = run_batch(c, s, h, 5, 0, n, source_offsets=np.full(R.N_SOURCES, n))
    later = run_batch(c, s, h, 5, n, n)
    game = ROW_FIELDS.index("game")
    cols = [i for i in range(shifted.shape[1]) if i != game]
    assert np.array_equal(shifted[:, cols], later[:, cols])
    held = run_batch(c, s, h, 5, 0, n, source_offsets=L.offsets_for(n, L.GROUPS["dice"]))
    assert not np.array_equal(held[:, cols], later[:, cols])
    assert sim.simulate(players=3, games=n, seed=5)["win"].to_list() == \
        (run_batch(c, s, h, 5, 0, n)[:, ROW_FIELDS.index("win")] != 0).tolist()


def test_each_group_resamples_with_its_own_draws():
    """Two groups whose names have the same length get different bootstrap draws; one group always the same."""
    gen = np.random.default_rng(0)
    ya = gen.random(5000) < 0.4
    yb = np.where(gen.random(5000) < 0.3, ya, gen.random(5000) < 0.4)
    for a, b in (("tokens", "set-up"), ("encounter decks", "Top Secret deck")):
        assert len(a) == len(b)
        sa, sb = L.share_of(ya, yb, a, 1), L.share_of(ya, yb, b, 1)
        assert sa.share == sb.share  # the same pairs: the same estimate
        assert (sa.low, sa.high) != (sb.low, sb.high)  # but not the same resamples
        assert (sa.low, sa.high) == (L.share_of(ya, yb, a, 1).low, L.share_of(ya, yb, a, 1).high)
    assert L.bootstrap_key("dice") == L.bootstrap_key("dice") != L.bootstrap_key("Fate deck")


def _strict_json(text: str):
    """json.loads that refuses NaN and Infinity, as JavaScript and other strict parsers do."""
    import json

    return json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))


def test_an_outcome_without_variance_measures_no_share():
    """All games lost: nothing to share out, so no share, no interval, and no other game played (never NaN)."""
    calls = []

    def never(n, offsets):
        calls.append(offsets)
        return np.zeros(n, bool)

    for play, rate in ((never, 0.0), (lambda n, o: np.ones(n, bool), 1.0)):
        shares, p = L.first_order_shares(play, 1000, seed=1)
        assert p == rate
        assert all((s.share, s.low, s.high, s.changed, s.measured) == (None, None, None, None, False) for s in shares)
    assert len(calls) == 1  # the A games only
    flat = L.share_of(np.zeros(50, bool), np.zeros(50, bool), "dice", 1)
    assert (flat.share, flat.low, flat.high) == (None, None, None)


def test_luck_report_of_a_strategy_that_never_wins(tmp_path, capsys):
    """The report says why in one line and writes strict JSON: null where nothing was measured, never NaN."""
    from sim.cli import main

    argv = ["luck", "--players", "1", "--strategy", "random", "--games", "500", "--strategies", "random,heuristic"]
    assert main([*argv, "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "nan" not in text.lower()
    why = "the win rate is 0% (all 500 games lost): there is no variance in the outcome to share out among the sources"
    assert text.count(why) == 1 and f"  no shares: {why}\n" in text
    saved = _strict_json((tmp_path / "luck.json").read_text())
    assert main([*argv, "--json"]) == 0
    rec = _strict_json(capsys.readouterr().out)["players"][0]
    assert rec == saved["players"][0]
    assert (rec["win_rate"], rec["not_measured"], rec["rest"]) == (0.0, why, None)
    for s in rec["shares"]:
        assert (s["share"], s["low"], s["high"], s["games_changed"], s["not_measured"]) == (None, None, None, None, why)
    assert rec["skill"]["strategies"]["random"]["win_rate"] == 0.0  # the spread across strategies is still there
    assert (tmp_path / "luck_1p.png").exists()


def test_too_few_pairs_is_refused():
    with pytest.raises(L.LuckError):
        L.first_order_shares(dice_only, 1)


def test_luck_report_on_the_game(tmp_path, capsys):
    """The CLI's report: sources these games never draw from (set-up with the default line-up, the
    heuristic's strategy stream) are reported as not measured, with no share and no interval."""
    import json

    from sim.cli import main

    assert main(["luck", "--players", "2", "--games", "3000", "--strategies", "bold,heuristic", "--json",
                 "--out", str(tmp_path)]) == 0
    rec = json.loads(capsys.readouterr().out)["players"][0]
    by = {s["group"]: s for s in rec["shares"]}
    for g in ("set-up", "strategy"):
        assert (by[g]["share"], by[g]["low"], by[g]["high"], by[g]["games_changed"]) == (None, None, None, 0)
        assert by[g]["not_measured"] == "not drawn in these games: re-drawing it changed none of the 3,000 games"
    for g in set(by) - {"set-up", "strategy"}:  # every other source changes some of the games
        assert by[g]["games_changed"] > 0 and by[g]["share"] is not None and by[g]["not_measured"] is None, g
    assert by["dice"]["low"] > 0.0  # the dice clearly matter
    assert rec["not_measured"] is None
    assert rec["rest"] == pytest.approx(1 - sum(s["share"] for s in rec["shares"] if s["share"] is not None))
    saved = json.loads((tmp_path / "luck.json").read_text())["players"][0]
    assert {s["group"]: s["share"] for s in saved["shares"]} == {g: s["share"] for g, s in by.items()}
    assert set(rec["skill"]["strategies"]) == {"bold", "heuristic"}
    assert rec["skill"]["strategies"]["heuristic"]["win_rate"] == pytest.approx(rec["win_rate"])
    assert (tmp_path / "luck_2p.png").exists() and (tmp_path / "luck.json").exists()


def test_luck_text_says_which_sources_were_not_drawn(capsys):
    from sim.cli import main

    assert main(["luck", "--players", "4", "--games", "300", "--strategies", "heuristic"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for g in ("set-up", "strategy"):
        (line,) = [x for x in lines if x.strip().startswith(g + " ")]
        assert line.endswith("not drawn in these games: re-drawing it changed none of the 300 games"), line
        assert "%" not in line
    (dice,) = [x for x in lines if x.strip().startswith("dice ")]
    assert "%  [" in dice


def _outside_the_figure(fig) -> list[str]:
    """Every text of the figure (titles, labels, tick labels, notes) that runs past the figure's edges."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    edge = fig.bbox
    out = []
    for ax in fig.axes:
        texts = [ax.title, ax.xaxis.label, ax.yaxis.label, *ax.get_xticklabels(), *ax.get_yticklabels(), *ax.texts]
        for t in texts:
            if not t.get_text() or not t.get_visible():
                continue
            bb = t.get_window_extent(renderer)
            if bb.x0 < edge.x0 - 0.5 or bb.x1 > edge.x1 + 0.5 or bb.y0 < edge.y0 - 0.5 or bb.y1 > edge.y1 + 0.5:
                out.append(t.get_text())
    return out


@pytest.mark.parametrize("params,strategy", [({}, "heuristic"), ({"pool_target": 9, "exchange_when": "never"}, "tuned")])
def test_the_luck_chart_keeps_every_title_and_label_inside(params, strategy):
    """The committed 2- and 4-player charts once cut off the right-hand title."""
    import json
    from pathlib import Path

    import matplotlib.pyplot as plt

    from sim.charts import luck_figure

    table = json.loads((Path(__file__).resolve().parent.parent / "results" / "luck" / "luck.json").read_text())
    for rec in table["players"]:
        rec = dict(rec, params=params, strategy=strategy)
        rec["skill"] = dict(rec["skill"], strategies={k + "_with_a_long_name": dict(v, params=params)
                                                      for k, v in rec["skill"]["strategies"].items()})
        flat = dict(rec, not_measured=L.no_variance_note(0.0, rec["pairs"]), rest=None)
        for r in (rec, flat):
            fig = luck_figure(r)
            try:
                assert _outside_the_figure(fig) == [], r["players"]
            finally:
                plt.close(fig)


def test_the_luck_chart_names_the_given_parameters():
    """Given parameters are named in the title, never only "(given params)", so the panel cannot pass for the
    strategy's registered defaults."""
    import json
    from pathlib import Path

    import matplotlib.pyplot as plt

    from sim.charts import luck_figure

    table = json.loads((Path(__file__).resolve().parent.parent / "results" / "luck" / "luck.json").read_text())
    rec = table["players"][0]
    for params, title in (({}, "heuristic:"), ({"pool_target": 9, "exchange_when": "never"},
                                               "heuristic with pool_target=9, exchange_when=never:")):
        fig = luck_figure(dict(rec, params=params))
        try:
            assert fig.axes[0].get_title().replace("\n", " ").startswith(f"{rec['players']} players, {title} "), params
        finally:
            plt.close(fig)


def test_every_random_source_belongs_to_one_group():
    """A source left out of every group would never be held: its share would hide in the rest."""
    from sim import rng as R

    held = [s for group in L.GROUPS.values() for s in group]
    assert sorted(held) == sorted(R.SOURCE_NAMES) and len(held) == len(set(held))


def _no_games(*a, **k):
    raise AssertionError("games were played before the strategies were checked")


@pytest.mark.parametrize("argv,fragment", [
    (["--strategies", "heuristic,genius"], "--strategies: unknown strategy 'genius'"),
    (["--strategies", "heuristic,heuristic"], "--strategies: 'heuristic' given twice"),
    (["--strategies", "heuristic,,bold"], "--strategies"),
    (["--strategies", ""], "--strategies"),
    (["--strategy", "genius"], "--strategy: unknown strategy 'genius'"),
    (["--param", "bogus=1"], "--param: unknown heuristic parameter"),
])
def test_luck_refuses_bad_strategies_before_playing(argv, fragment, monkeypatch):
    from sim.cli import main

    monkeypatch.setattr(L, "first_order_shares", _no_games)
    monkeypatch.setattr("sim.run.simulate_tally", _no_games)
    with pytest.raises(SystemExit) as e:
        main(["luck", "--players", "2", "--games", "200", *argv])
    assert e.value.code == 2 and fragment in str(e.value), e.value  # a bad option: exit status 2


def test_luck_table_builds_every_strategy_before_playing(monkeypatch):
    monkeypatch.setattr(L, "first_order_shares", _no_games)
    monkeypatch.setattr("sim.run.simulate_tally", _no_games)
    with pytest.raises(L.LuckError, match="genius"):
        L.luck_table([2, 4], games=200, ladder=["heuristic", "genius"])
    with pytest.raises(ValueError, match="bogus"):
        L.luck_table([2, 4], games=200, params={"bogus": 1})


def test_luck_plays_the_tuned_set_of_each_player_count(capsys):
    import json

    import sim
    from sim.cli import main
    from strategies.tuned import tuned_params

    n = 300
    wins, _ = L.kernel_play(2, "tuned")(n, L.offsets_for(n, None))
    tuned = sim.simulate(players=2, games=n, seed=1, strategy="heuristic", params=tuned_params(2))["win"].to_numpy()
    default = sim.simulate(players=2, games=n, seed=1)["win"].to_numpy()
    assert np.array_equal(wins, tuned.astype(bool))
    assert not np.array_equal(wins, default.astype(bool))  # the test tells tuned from the default heuristic
    assert main(["luck", "--players", "2", "--games", str(n), "--strategy", "tuned", "--strategies", "heuristic,tuned",
                 "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)["players"][0]
    assert rec["win_rate"] == pytest.approx(tuned.mean())
    assert rec["skill"]["strategies"]["tuned"]["win_rate"] == pytest.approx(rec["win_rate"])


def test_the_studied_strategy_plays_its_params_in_the_ladder(capsys):
    """With --param, the ladder entry of the strategy under study is the same games and decisions as its shares."""
    import json

    from sim.cli import main

    assert main(["luck", "--players", "4", "--games", "300", "--param", "pool_target=9", "--param",
                 "exchange_when=never", "--strategies", "heuristic,bold", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)["players"][0]
    ladder = rec["skill"]["strategies"]
    assert ladder["heuristic"]["win_rate"] == pytest.approx(rec["win_rate"])
    assert ladder["heuristic"]["params"] == {"pool_target": 9, "exchange_when": "never"}
    assert ladder["bold"]["params"] == {}  # the other strategies play their defaults
    main(["luck", "--players", "4", "--games", "300", "--strategies", "heuristic", "--json"])
    default = json.loads(capsys.readouterr().out)["players"][0]
    assert default["win_rate"] != pytest.approx(rec["win_rate"])  # the params change these games


def test_the_luck_record_names_the_pack_and_rules_it_was_played_with():
    """luck.json recorded no content pack: a designer's pack and the default gave records alike but for the
    numbers. It records the pack's hash and the rules version, as tune.json does."""
    from pathlib import Path

    import sim
    from sim.content import load

    table = json.loads((Path(__file__).resolve().parent.parent / "results" / "luck" / "luck.json").read_text())
    assert (table["content_hash"], table["rules_version"]) == (load().hash, sim.RULES_VERSION)
    rec = L.luck_table([2], games=50, seed=3)
    assert (rec["content_hash"], rec["rules_version"]) == (load().hash, sim.RULES_VERSION)
