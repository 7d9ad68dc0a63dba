"""Exact odds oracles, their sampled twins (z-tests at 1,000,000 samples) and the CLI text."""

import itertools
import json
import math
from fractions import Fraction
from math import comb

import numpy as np
import pytest

from sim import odds, poker, rng
from sim.content import load

N = 1_000_000
SEED = 20240611
DICE_ARGS = odds.default_dice()  # the default content pack's dice
SUCCESS, INJURY, HEAL, BAG, YELLOW = DICE_ARGS


def z(p_hat, p, n):
    return (p_hat - p) / math.sqrt(p * (1 - p) / n)


# --- exact dice odds ------------------------------------------------------------------
def test_default_dice_are_the_default_packs():
    pack = load()
    assert pack.die_names[YELLOW] == "yellow" and YELLOW == pack.always_die
    assert BAG.tolist() == pack.bag_dice.tolist()
    for mine, packs in ((SUCCESS, pack.die_success), (INJURY, pack.die_injury), (HEAL, pack.die_heal)):
        assert mine.tolist() == packs.tolist()
    # the printed dice: Black, Red, Green, Blue, Brown in the bag, Yellow always rolled
    names = [pack.die_names[d] for d in BAG]
    assert names == ["black", "red", "green", "blue", "brown"]
    assert SUCCESS[BAG].sum(axis=1).tolist() == [4, 3, 3, 2, 1]
    assert INJURY[BAG].sum(axis=1).tolist() == [2, 0, 2, 0, 0]
    assert (SUCCESS[YELLOW].sum(), INJURY[YELLOW].sum(), HEAL[YELLOW].sum()) == (1, 1, 1)


def test_default_fate_deck_is_the_default_packs():
    pack = load()
    rank, suit = odds.default_fate_deck()
    assert rank.tolist() == pack.fate_rank.tolist() and suit.tolist() == pack.fate_suit.tolist()
    # the standard 44 cards (4..A in four suits), in the pack's order
    assert sorted(zip(rank.tolist(), suit.tolist())) == sorted(
        zip(poker.DECK_RANK.tolist(), poker.DECK_SUIT.tolist())
    )


def test_yellow_alone():
    o = odds.dice_test_odds(0, 1)
    assert o.p_pass_exact == Fraction(1, 6)
    assert o.net_injuries_exact == {-1: Fraction(1, 6), 0: Fraction(4, 6), 1: Fraction(1, 6)}
    assert odds.dice_test_odds(0, 2).p_pass_exact == 0
    # reroll the failed Yellow once: 1/6 + 5/6 * 1/6; a rerolled face replaces the old one
    r = odds.dice_test_odds(0, 1, "on_fail")
    assert r.p_pass_exact == Fraction(11, 36)
    assert r.net_injuries_exact == {-1: Fraction(5, 36), 0: Fraction(26, 36), 1: Fraction(5, 36)}


def test_one_die_is_the_average_over_the_bag():
    yellow = {-1: Fraction(1, 6), 0: Fraction(4, 6), 1: Fraction(1, 6)}
    p_fail_bag = Fraction(2 + 3 + 3 + 4 + 5, 30)
    o = odds.dice_test_odds(1, 1)
    assert o.p_pass_exact == 1 - Fraction(5, 6) * p_fail_bag == Fraction(19, 36)
    want: dict[int, Fraction] = {}
    for d in BAG:
        for f in range(6):
            for y, py in yellow.items():
                v = int(INJURY[d, f]) + y
                want[v] = want.get(v, 0) + Fraction(1, 5) * Fraction(1, 6) * py
    assert o.net_injuries_exact == want
    # two successes from one bag die and Yellow: P(die S) * 1/6
    assert odds.dice_test_odds(1, 2).p_pass_exact == Fraction(4 + 3 + 3 + 2 + 1, 30) / 6


@pytest.mark.parametrize("reroll", ["none", "on_fail"])
@pytest.mark.parametrize("need", [1, 2])
@pytest.mark.parametrize("k", range(6))
def test_distributions_sum_to_one(k, need, reroll):
    o = odds.dice_test_odds(k, need, reroll)
    assert sum(o.net_injuries_exact.values()) == 1
    assert 0 <= o.p_pass_exact <= 1
    if k:
        prev = odds.dice_test_odds(k - 1, need, reroll)
        assert o.p_pass_exact >= prev.p_pass_exact
    if reroll == "on_fail":
        assert o.p_pass_exact >= odds.dice_test_odds(k, need).p_pass_exact


def test_more_allowed_than_bag_draws_whole_bag():
    assert odds.dice_test_odds(7, 2) == odds.dice_test_odds(5, 2)


def brute_force(k, need, reroll_code):
    """Second oracle: every ordered draw x every raw face x reroll face, via choose_reroll."""
    s, inj, heal, bag, yellow = DICE_ARGS
    w_pass = Fraction(0)
    dist: dict[int, Fraction] = {}
    orders = list(itertools.permutations(bag.tolist(), k))
    for order in orders:
        dice = np.array([*order, yellow], np.int64)
        for faces in itertools.product(range(6), repeat=k + 1):
            faces = np.array(faces, np.int64)
            w = Fraction(1, len(orders) * 6 ** (k + 1))
            outs = [faces]
            if s[dice, faces].sum() < need and reroll_code:
                p = odds.choose_reroll(dice, faces, k + 1, s, inj)
                if p >= 0:
                    outs = []
                    for f in range(6):
                        g = faces.copy()
                        g[p] = f
                        outs.append(g)
            for g in outs:
                wg = w / len(outs)
                if s[dice, g].sum() >= need:
                    w_pass += wg
                net = int(inj[dice, g].sum() - heal[dice, g].sum())
                dist[net] = dist.get(net, 0) + wg
    return w_pass, dist


@pytest.mark.parametrize("k,need,reroll", [(2, 1, 1), (2, 2, 1), (2, 2, 0), (1, 1, 1)])
def test_exact_matches_brute_force(k, need, reroll):
    o = odds.dice_test_odds(k, need, reroll)
    p, dist = brute_force(k, need, reroll)
    assert o.p_pass_exact == p
    assert o.net_injuries_exact == {v: q for v, q in dist.items() if q}


def test_reroll_choice_rule():
    s, inj = SUCCESS, INJURY
    yellow, black, red, green, blue, brown = (load().die_index(n) for n in
                                              ("yellow", "black", "red", "green", "blue", "brown"))
    # Red and Green both 3/6: Green showing an injury goes first, else the earlier drawn
    assert odds.choose_reroll(np.array([red, green, yellow]), np.array([5, 3, 5]), 3, s, inj) == 1
    assert odds.choose_reroll(np.array([red, green, yellow]), np.array([5, 5, 5]), 3, s, inj) == 0
    assert odds.choose_reroll(np.array([green, red, yellow]), np.array([5, 5, 5]), 3, s, inj) == 0
    # Black showing success is not rerolled; best chance among the rest
    assert odds.choose_reroll(np.array([black, blue, yellow]), np.array([0, 5, 5]), 3, s, inj) == 1
    assert odds.choose_reroll(np.array([black, blue, yellow]), np.array([4, 5, 5]), 3, s, inj) == 0
    # Brown vs Yellow (both 1/6): Yellow showing an injury is chosen, else Yellow is last
    assert odds.choose_reroll(np.array([brown, yellow]), np.array([5, 1]), 2, s, inj) == 1
    assert odds.choose_reroll(np.array([brown, yellow]), np.array([5, 2]), 2, s, inj) == 0
    assert odds.choose_reroll(np.array([brown, yellow]), np.array([0, 0]), 2, s, inj) == -1
    assert (
        odds.choose_reroll_nb(np.array([red, green, yellow]), np.array([5, 3, 5]), 3, s, inj) == 1
    )


def test_custom_dice_plug_in():
    # a single always-success die and an empty-ish bag of blank dice
    s, inj, heal = odds.dice_arrays(("- - - - - -", "S S S S S S"))
    o = odds.dice_test_odds(1, 2, "none", s, inj, heal, np.array([0]), 1)
    assert o.p_pass_exact == 0
    o = odds.dice_test_odds(1, 1, "on_fail", s, inj, heal, np.array([0]), 1)
    assert o.p_pass_exact == 1 and o.net_injuries_exact == {0: 1}


# --- dice protocol and sampler ------------------------------------------------------------
def replay_dice(seed, game, k, need, reroll_code):
    st = rng.Streams(seed, game)
    s, inj, heal, bag, yellow = DICE_ARGS
    left = bag.tolist()
    n_left = len(left)
    dice = []
    for _ in range(k):
        j = st.below(n_left, rng.DICE)
        dice.append(left[j])
        left[j], left[n_left - 1] = left[n_left - 1], left[j]
        n_left -= 1
    dice.append(yellow)
    faces = [st.below(6, rng.DICE) for _ in dice]
    succ = sum(int(s[d, f]) for d, f in zip(dice, faces, strict=True))
    if succ < need and reroll_code:
        p = odds.choose_reroll(np.array(dice), np.array(faces), len(dice), s, inj)
        if p >= 0:
            faces[p] = st.below(6, rng.DICE)
    succ = sum(int(s[d, f]) for d, f in zip(dice, faces, strict=True))
    net = sum(int(inj[d, f] - heal[d, f]) for d, f in zip(dice, faces, strict=True))
    return int(succ >= need), net


@pytest.mark.parametrize("k,need,reroll", [(0, 1, 1), (3, 2, 1), (5, 1, 0), (2, 2, 1)])
def test_play_dice_test_follows_protocol(k, need, reroll):
    for game in range(60):
        want = replay_dice(5, game, k, need, reroll)
        a = rng.new_state(5, game)
        b = rng.new_state(5, game)
        got_py = odds.play_dice_test(a, k, need, reroll, *DICE_ARGS)
        got_nb = odds.play_dice_test_nb(b, k, need, reroll, *DICE_ARGS)
        assert tuple(int(x) for x in got_py) == want == tuple(int(x) for x in got_nb)
        assert np.array_equal(a, b)


@pytest.mark.parametrize(
    "k,need,reroll",
    [
        (0, 1, "none"),
        (1, 1, "on_fail"),
        (2, 2, "none"),
        (3, 2, "on_fail"),
        (5, 1, "on_fail"),
        (4, 2, "none"),
    ],
)
def test_dice_sampler_matches_exact(k, need, reroll):
    o = odds.dice_test_odds(k, need, reroll)
    n_pass, counts = odds.dice_test_sampled(k, need, reroll, samples=N, seed=SEED)
    assert sum(counts.values()) == N
    assert abs(z(n_pass / N, o.p_pass, N)) < 4
    assert set(counts) <= set(o.net_injuries)
    for v, p in o.net_injuries.items():
        assert abs(z(counts.get(v, 0) / N, p, N)) < 4, (v, p, counts.get(v, 0))
    mean = o.mean_net_injuries
    var = sum((v - mean) ** 2 * p for v, p in o.net_injuries.items())
    mean_hat = sum(v * c for v, c in counts.items()) / N
    assert abs(mean_hat - mean) / math.sqrt(var / N) < 4


def test_dice_sampler_impossible_cell():
    n_pass, counts = odds.dice_test_sampled(0, 2, "on_fail", samples=10_000, seed=SEED)
    assert n_pass == 0 and sum(counts.values()) == 10_000


def test_dice_sampler_deterministic_and_batch_independent():
    args = (3, 2, 1, *DICE_ARGS)
    a = odds.sample_dice_tests(SEED, 2000, *args)
    b = odds.sample_dice_tests(SEED, 2000, *args)
    assert a[0] == b[0] and np.array_equal(a[1], b[1])
    c = odds.sample_dice_tests(SEED, 1200, *args, 0)
    d = odds.sample_dice_tests(SEED, 800, *args, 1200)
    assert a[0] == c[0] + d[0] and np.array_equal(a[1], c[1] + d[1])
    e = odds.sample_dice_tests(SEED + 1, 2000, *args)
    assert not (a[0] == e[0] and np.array_equal(a[1], e[1]))
    off = odds.net_injury_offset(INJURY, HEAL, BAG)
    assert a[1].shape[0] == odds.net_injury_size(INJURY, HEAL, BAG)
    assert off == 6


# --- gambles ------------------------------------------------------------------------------
def test_stand_pat_exact():
    g = odds.stand_pat_odds()
    assert g.exact and g.stderr is None
    assert g.p_win_exact == (1 - g.p_tie_exact) / 2
    assert (g.p_tie_exact * comb(44, 5) * comb(39, 5)).denominator == 1
    assert g.p_win == float(g.p_win_exact) and g.p_tie == float(g.p_tie_exact)
    assert 0 < g.p_tie < 0.001


def test_stand_pat_exact_on_small_deck_by_brute_force():
    # 12-card deck: ranks 4..7 in three suits; check tie and win counts over every pair of hands
    ranks = np.repeat(np.arange(4, 8), 3)
    suits = np.tile(np.arange(3), 4)
    hands = list(itertools.combinations(range(12), 5))
    val = {h: int(poker.hand_value_cards(*h, ranks, suits)) for h in hands}
    win = tie = total = 0
    for a in hands:
        for b in hands:
            if set(a) & set(b):
                continue
            total += 1
            win += val[a] > val[b]
            tie += val[a] == val[b]
    assert total == comb(12, 5) * comb(7, 5)
    g = odds.stand_pat_odds(ranks, suits)
    assert g.p_tie_exact == Fraction(tie, total)
    assert g.p_win_exact == Fraction(win, total)


def test_stand_pat_sampler_matches_exact():
    g = odds.stand_pat_odds()
    n_win, n_tie = odds.sample_stand_pat(SEED, N, poker.DECK_RANK, poker.DECK_SUIT)
    assert abs(z(n_win / N, g.p_win, N)) < 4
    assert abs(z(n_tie / N, g.p_tie, N)) < 4
    assert (n_win, n_tie) == odds.sample_gambles(SEED, N, 0, poker.DECK_RANK, poker.DECK_SUIT)


def test_dealt_hand_categories_match_exact():
    counts = odds.hand_category_counts()
    total = comb(44, 5)
    got = odds.sample_hand_categories(SEED, N, poker.DECK_RANK, poker.DECK_SUIT)
    assert got.sum() == N
    for c in range(10):
        assert abs(z(got[c] / N, counts[c] / total, N)) < 4, poker.CATEGORY_NAMES[c]


def test_gamble_samplers_deterministic_and_batch_independent():
    d = (poker.DECK_RANK, poker.DECK_SUIT)
    for allowance in (0, 1, 2, 5):
        a = odds.sample_gambles(SEED, 3000, allowance, *d)
        assert a == odds.sample_gambles(SEED, 3000, allowance, *d)
        b = odds.sample_gambles(SEED, 1000, allowance, *d, 0)
        c = odds.sample_gambles(SEED, 2000, allowance, *d, 1000)
        assert a == (b[0] + c[0], b[1] + c[1])
    h = odds.sample_hand_categories(SEED, 3000, *d)
    assert np.array_equal(h, odds.sample_hand_categories(SEED, 3000, *d))
    assert np.array_equal(
        h,
        odds.sample_hand_categories(SEED, 1000, *d, 0)
        + odds.sample_hand_categories(SEED, 2000, *d, 1000),
    )


def test_policies_ordered_and_stderr():
    res = {p: odds.gamble_policy_odds(p, samples=200_000, seed=SEED) for p in poker.POLICIES}
    sp = odds.stand_pat_odds()
    assert abs(res["stand_pat"].p_win - sp.p_win) < 4 * res["stand_pat"].stderr
    for g in res.values():
        assert not g.exact
        assert g.stderr == pytest.approx(math.sqrt(g.p_win * (1 - g.p_win) / 200_000))
    wins = [res[p].p_win for p in ("stand_pat", "exchange_1", "exchange_2", "exchange_5")]
    assert wins == sorted(wins)
    with pytest.raises(ValueError):
        odds.gamble_policy_odds("exchange_3")


# --- CLI text -----------------------------------------------------------------------------
def test_cli_dice():
    text = odds.cli_dice(False)
    assert "reroll = on_fail" in text and "16.67%" in text
    rows = json.loads(odds.cli_dice(True))
    assert len(rows) == 6 * 2 * 2
    for r in rows:
        assert set(r) == {"dice_allowed", "successes_needed", "reroll", "p_pass", "net_injuries", "content_hash"}
        assert r["reroll"] in ("none", "on_fail")
        assert sum(r["net_injuries"].values()) == pytest.approx(1)
        assert all(isinstance(k, str) for k in r["net_injuries"])
        exact = odds.dice_test_odds(r["dice_allowed"], r["successes_needed"], r["reroll"])
        assert r["p_pass"] == exact.p_pass


def test_cli_gamble():
    rows = json.loads(odds.cli_gamble(True, samples=20_000, seed=3))["policies"]
    assert [r["policy"] for r in rows] == ["stand_pat", "exchange_1", "exchange_2", "exchange_5"]
    assert rows[0]["exact"] is True and rows[0]["stderr"] is None
    assert all(r["exact"] is False and r["stderr"] > 0 for r in rows[1:])
    assert {"policy", "p_win", "p_tie", "exact", "stderr"} <= set(rows[0])
    text = odds.cli_gamble(False, samples=20_000, seed=3)
    for name in poker.CATEGORY_NAMES:
        assert name in text
    assert "1,086,008" in text and "±" in text


def test_cli_gamble_json_holds_everything_the_text_prints():
    """--json gave only the four policy records: not the exact stand-pat fractions, how each policy was
    sampled, nor the table of dealt hands the text prints."""
    got = json.loads(odds.cli_gamble(True, samples=2_000, seed=3))
    text = odds.cli_gamble(False, samples=2_000, seed=3)
    assert set(got) == {"policies", "dealt_hands", "dealt_hands_total", "content_hash"}
    stand, *sampled = got["policies"]
    exact = odds.stand_pat_odds()
    assert (Fraction(stand["p_win_exact"]), Fraction(stand["p_tie_exact"])) == (exact.p_win_exact, exact.p_tie_exact)
    assert f"P(win) = {stand['p_win_exact']} , P(tie) = {stand['p_tie_exact']}" in text
    assert (stand["samples"], stand["seed"]) == (None, None)
    for r in sampled:  # the text's "sampled, n=2,000, seed=3"
        assert (r["exact"], r["samples"], r["seed"], r["p_win_exact"]) == (False, 2_000, 3, None)
        assert f"{r['policy']}" in text and "sampled, n=2,000, seed=3" in text
    hands = got["dealt_hands"]
    assert [h["category"] for h in hands] == list(reversed(poker.CATEGORY_NAMES))  # best first, as printed
    assert got["dealt_hands_total"] == math.comb(44, 5) == sum(h["count"] for h in hands)
    counts = odds.hand_category_counts()
    for h in hands:
        c = poker.CATEGORY_NAMES.index(h["category"])
        assert h["count"] == counts[c]
        assert Fraction(h["probability_exact"]) == Fraction(h["count"], got["dealt_hands_total"])
        assert h["probability"] == pytest.approx(h["count"] / got["dealt_hands_total"], rel=1e-15)
        assert f"{h['count']:,}" in text


def test_cli_odds_read_a_content_packs_dice_and_fate_deck(tmp_path):
    from tests.test_content import pack_copy

    default = load()
    assert odds.cli_dice(True, default) == odds.cli_dice(True)  # the default pack prints the printed dice
    folder = pack_copy(tmp_path)
    dice = folder / "dice.toml"
    text = dice.read_text()
    black = 'faces = ["S", "S", "S", "S", "II", "-"]'
    assert black in text
    dice.write_text(text.replace(black, 'faces = ["S", "S", "S", "S", "S", "S"]'))
    pack = load(folder)
    rows = json.loads(odds.cli_dice(True, pack))
    exact = odds.dice_table(pack.die_success, pack.die_injury, pack.die_heal, pack.bag_dice, pack.always_die)
    assert [{k: v for k, v in r.items() if k != "content_hash"} for r in rows] == json.loads(json.dumps(exact))
    assert {r["content_hash"] for r in rows} == {pack.hash} != {default.hash}  # each row names its pack
    assert rows != json.loads(odds.cli_dice(True))  # an all-success Black die changes the odds
    # the gamble's exact stand-pat row uses the pack's Fate deck (the default one is the standard deck)
    got = json.loads(odds.cli_gamble(True, samples=2_000, seed=3, content=default))["policies"][0]
    want = json.loads(odds.cli_gamble(True, samples=2_000, seed=3))["policies"][0]
    assert got == want


def test_gamble_sampling_in_chunks_counts_the_same_gambles(monkeypatch):
    """Sampling in interruptible chunks plays gamble game0 + i for sample i: the same counts as one call."""
    deck_rank, deck_suit = odds._deck_defaults(None, None)
    whole = odds.sample_gambles(SEED, 5_000, poker.POLICIES["exchange_2"], deck_rank, deck_suit, 0)
    monkeypatch.setattr(odds, "GAMBLE_CHUNK", 1_200)  # five chunks, the last one short
    res = odds.gamble_policy_odds("exchange_2", samples=5_000, seed=SEED)
    assert (round(res.p_win * 5_000), round(res.p_tie * 5_000)) == tuple(int(x) for x in whole)


def test_odds_name_the_pack_their_numbers_come_from(tmp_path, capsys):
    """``odds --content`` printed another pack's numbers under no pack's name: the text names the pack (as
    tune, sensitivity and luck do) and the JSON its hash."""
    from sim.cli import main
    from tests.test_content import pack_copy

    folder = pack_copy(tmp_path)
    pack = load(folder)
    for what in ("dice", "gamble"):
        extra = ["--samples", "2000"] if what == "gamble" else []
        assert main(["odds", what, "--content", str(folder), *extra]) == 0
        out = capsys.readouterr().out
        assert out.startswith(f"content pack {pack.name!r} at {folder} (hash {pack.hash[:12]})\n"), out[:200]
        assert main(["odds", what, *extra]) == 0
        assert not capsys.readouterr().out.startswith("content pack")
    assert json.loads(odds.cli_gamble(True, samples=2_000, seed=3, content=pack))["content_hash"] == pack.hash
    assert json.loads(odds.cli_gamble(True, samples=2_000, seed=3))["content_hash"] == load().hash
