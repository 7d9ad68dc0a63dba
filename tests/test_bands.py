"""The CI gate: the default pack passes, a 2-point drift fails, --update re-baselines, bad files are refused."""

import contextlib
import io
import json
import math
import re
import shutil
import textwrap
from fractions import Fraction
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest

from sim.bands import (
    FALSE_ALARM,
    BandsError,
    Drift,
    cell_level,
    detectable_drift,
    false_alarm_rate,
    load_bands,
    notice_text,
    power_at,
    read_wins,
    run_check,
    sign_test_exact_p,
    sign_test_p,
    sign_test_significant,
    update_bands,
    wins_path,
)
from sim.cli import main
from sim.content import DEFAULT_PACK

ROOT = Path(__file__).resolve().parent.parent
BANDS = ROOT / "experiments" / "bands.toml"


def _cli(argv) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main([str(a) for a in argv])
    return rc, out.getvalue()


def make_pack(root: Path, name: str, edit) -> Path:
    pack = root / name
    shutil.copytree(DEFAULT_PACK, pack)
    edit(pack)
    return pack


def _two_plus_two_cards_made_plus_one(pack: Path) -> None:
    p = pack / "villain.toml"
    text = p.read_text()
    spots = [m.start() for m in re.finditer(r"^advance = 2$", text, re.M)]
    assert len(spots) == 16
    for i in spots[-2:]:
        text = text[:i] + "advance = 1" + text[i + len("advance = 2"):]
    assert "plus_two = 16\nplus_one = 14" in text
    p.write_text(text.replace("plus_two = 16\nplus_one = 14", "plus_two = 14\nplus_one = 16"))


def _lobo_starts_at_2(pack: Path) -> None:
    p = pack / "lobo.toml"
    text = p.read_text()
    assert "start = 0" in text
    p.write_text(text.replace("start = 0", "start = 2", 1))


@pytest.fixture(scope="module")
def packs(tmp_path_factory):
    root = tmp_path_factory.mktemp("packs")
    return {"drift": make_pack(root, "drift", _two_plus_two_cards_made_plus_one),
            "lobo2": make_pack(root, "lobo2", _lobo_starts_at_2)}


@pytest.fixture(scope="module")
def default_gate():
    return _cli(["check", BANDS])


@pytest.fixture(scope="module")
def drift_gate(packs):
    return _cli(["check", BANDS, "--content", packs["drift"]])


def bands_file(tmp_path: Path, games: int = 4000, batch: int = 1000, extra: str = "", baseline: bool = True,
               tolerance: float = 0.01) -> Path:
    """One 3-player cell with the band CI holds for it, re-centred with its baseline by --update (by default)."""
    model, _ = load_bands(BANDS)
    band = next(c for c in model.cell if c.name == "3p-heuristic").win_rate
    p = tmp_path / "bands.toml"
    p.write_text(textwrap.dedent(f"""
        [check]
        seed = 7
        games = {games}
        batch = {batch}
        tolerance = {tolerance}
        {extra}
        [[cell]]
        name = "3p-heuristic"
        players = 3
        strategy = "heuristic"
        win_rate = [{band[0]}, {band[1]}]
    """))
    if baseline:
        assert _cli(["check", p, "--update", "--margin", "0.05"])[0] == 0
        assert "baseline = {" in p.read_text()
    return p


# ---------------------------------------------------------------- the shipped gate
def test_default_pack_passes_the_shipped_gate_with_zero_drift(default_gate):
    rc, out = default_gate
    assert rc == 0, out
    model, _ = load_bands(BANDS)
    assert f"all {len(model.cell)} cells passed" in out and len(model.cell) == 10
    for c in model.cell:
        # z +0.0, p 1: bands.wins holds this baseline's games, and today's are the same
        assert re.search(rf"^{re.escape(c.name)} +\S+% +\S+% +\+0\.00 points +\+0\.0 +1 +\S+ points +ok$",
                         out, re.M), c.name
    assert "NOTICE" not in out


def test_the_shipped_cells_are_the_readme_s():
    """'The shipped file gates `heuristic` at every player count (1-6), `bold` at 4 players, the `dirty-lobo`
    variant at 3 and `tuned` at 2 and 4.'"""
    model, _ = load_bands(BANDS)
    cells = sorted((c.strategy, c.variant, c.players) for c in model.cell)
    assert all(not c.params and not c.overrides and c.skills == "pick" for c in model.cell)
    assert cells == sorted([("heuristic", "standard", n) for n in range(1, 7)] + [("bold", "standard", 4)]
                           + [("heuristic", "dirty-lobo", 3), ("tuned", "standard", 2), ("tuned", "standard", 4)])
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert set(read_wins(wins_path(BANDS))) == {c.name for c in model.cell}
    assert f"(one line per cell, {round(wins_path(BANDS).stat().st_size / 1000)} KB in all;" in readme
    assert ("The shipped file gates `heuristic` at every player count (1-6), `bold` at 4 players, the `dirty-lobo` "
            "variant at 3 and `tuned` at 2 and 4.") in readme


def test_a_real_drift_inside_the_tolerance_is_a_notice_of_the_shipped_gate():
    """The README's NOTICE: consequences in encounters moves 1p-heuristic by about half a point, a change the
    tolerance lets pass and the exact sign test on the paired games says is real."""
    change = "henchmen.readings.consequences_in_encounters=true"
    rc, out = _cli(["check", BANDS, "--set", change])
    readme = (ROOT / "README.md").read_text()
    assert f"`--set '{change}'`:" in " ".join(readme.split())
    line = next(x for x in out.splitlines() if x.startswith("NOTICE 1p-heuristic: "))
    assert f"\n{line}\n" in readme
    assert rc == 1 and "FAIL 3p-heuristic: win_rate" in out  # elsewhere it drifts beyond the tolerance
    # 4p-heuristic moves by about 1.2 points: beyond the tolerance, so it fails (a noise floor over the 1 point,
    # 1.23 points for a 10-cell file, had let it pass)
    assert re.search(r"^FAIL 4p-heuristic: win_rate \S+% drifted \+1\.\d\d points", out, re.M), out


def test_drift_pack_fails_the_shipped_gate(drift_gate):
    rc, out = drift_gate
    assert rc == 1, out
    m = re.search(r"^FAIL 4p-heuristic: win_rate (\S+)% drifted ([+-]\d+\.\d+) points from the baseline (\S+)% "
                  r"on the same 40000 games \(tolerance (\d+\.\d\d) points\)$", out, re.M)
    assert m, out
    assert float(m[2]) > float(m[4]) >= 1.0 and float(m[1]) - float(m[3]) == pytest.approx(float(m[2]), abs=0.011)
    readme = (ROOT / "README.md").read_text()
    assert f"\n{m[0]}\n" in readme  # the README's example is today's line
    # "(the heuristic cells move by 1.9 to 2.3 points and all fail"
    model, _ = load_bands(BANDS)
    heuristic = [c.name for c in model.cell if c.strategy == "heuristic"]
    drifts = []
    for name in heuristic:
        h = re.search(rf"^FAIL {re.escape(name)}: win_rate \S+% drifted ([+-]\d+\.\d+) points from the baseline",
                      out, re.M)
        assert h, name
        drifts.append(float(h[1]))
    assert f"(the heuristic cells move by {min(drifts):.1f} to {max(drifts):.1f} points and all fail;" \
        in " ".join(readme.split())


def _shipped_rates() -> tuple[list[float], int]:
    model, _ = load_bands(BANDS)
    return [c.baseline.wins / c.baseline.games for c in model.cell], model.check.games


def test_shipped_gate_power_is_what_check_prints():
    """The computation behind the printed smallest detectable drift, for every cell of the shipped file:
    a drift that large fails with probability >= 95% (the bound of power_at), and the worst case (p = 1/2,
    any pairing) is the tolerance plus 1.645 * 1.0 / sqrt(40000)."""
    model, _ = load_bands(BANDS)
    c, k = model.check, len(model.cell)
    for cell in model.cell:
        rate = cell.baseline.wins / cell.baseline.games
        assert (cell.baseline.seed, cell.baseline.games) == (c.seed, c.games)
        d = detectable_drift(rate, c.games, c.tolerance)
        assert power_at(d, rate, c.games, c.tolerance) == pytest.approx(0.95, abs=1e-9), cell.name
        assert d >= c.tolerance, cell.name
    assert cell_level(k) == 0.005 / k
    assert detectable_drift(0.5, 40_000, 0.01) == pytest.approx(0.01 + 1.6448536 / 200, abs=1e-7)


def test_a_change_with_no_real_effect_fails_the_shipped_gate_at_the_stated_rate():
    """Simulated gate runs in which every cell replays independent games with its baseline's win rate: the
    share of runs in which any cell fails is what false_alarm_rate says (the README quotes it, tested there),
    and each cell's is below 0.47%."""
    rates, n = _shipped_rates()
    rng = np.random.default_rng(20261127)
    reps = 400_000
    failed = np.zeros(reps, bool)
    for p in rates:
        drift = (rng.binomial(n, p, reps) - rng.binomial(n, p, reps)) / n
        failed |= np.abs(drift) > 0.01
        assert false_alarm_rate([p], n, 0.01) <= 0.0047, p  # 1 point is at least 2.83 noise sd for any cell
    predicted = false_alarm_rate(rates, n, 0.01)
    assert abs(failed.mean() - predicted) <= 3 * math.sqrt(predicted * (1 - predicted) / reps)


def _notice_cutoff(m: int, level: float) -> int:
    """The most games won now and lost then (of ``m`` changed games) that the test still calls a real drift
    (-1: none): the rejection region, found by bisection and checked on both sides of its edge."""
    lo, hi = -1, m // 2  # significant at lo (or lo = -1); not at hi: up == down is never significant
    assert not sign_test_significant(m // 2, m - m // 2, level)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if sign_test_significant(mid, m - mid, level) else (lo, mid)
    return lo


def test_a_change_with_no_real_effect_gets_a_notice_at_most_the_stated_rate():
    """With no true drift each changed game goes either way with probability 1/2. For every number of changed
    games up to 2,000 (and a few far more), the probability that a cell gets a NOTICE is at most its share of
    FALSE_ALARM, computed exactly: so at most FALSE_ALARM over the file's cells (Bonferroni), however few games
    a change moves. The test is the exact sign test, not a more cautious one: one more game in the region would
    break the level. McNemar's normal z, which decided before, let 0.064% per cell through at 74 changed games."""
    _, n = _shipped_rates()
    level = cell_level(10)
    assert level == FALSE_ALARM / 10 == 0.0005
    bound = Fraction(level)
    for m in [*range(1, 2001), 5_000, 20_000, n]:
        c = _notice_cutoff(m, level)
        tail, term = 0, 1  # sum of C(m, i) for i <= c, then C(m, c + 1)
        for i in range(c + 1):
            tail += term
            term = term * (m - i) // (i + 1)
        alarm = Fraction(2 * tail, 2**m)  # both tails: up <= c or down <= c (disjoint, c < m / 2)
        assert alarm <= bound, (m, c, float(alarm))
        assert Fraction(2 * (tail + term), 2**m) > bound, m  # the region is the largest the level allows
        assert sign_test_exact_p(c + 1, m - c - 1) > bound and (c < 0 or sign_test_exact_p(c, m - c) <= bound)
    # the old rule: |z| > 3.48 (the normal quantile of 0.05% two-sided) at 74 changed games: 24 against 50 or worse
    z = NormalDist().inv_cdf(1 - level / 2)
    c = max(k for k in range(38) if abs(74 - 2 * k) / math.sqrt(74) > z)
    assert 2 * sum(math.comb(74, i) for i in range(c + 1)) / 2**74 == pytest.approx(0.00064, abs=0.000005)


def test_few_changed_games_are_judged_exactly():
    """15 games won now and lost then against 1 the reverse: z = 14 / 4 = 3.50, beyond 3.48, but the exact p is
    2 * 17 / 2^16 = 0.00052, above the 10 cells' 0.0005: no NOTICE. The README's 1140 against 910 still is one."""
    assert sign_test_exact_p(15, 1) == Fraction(2 * 17, 2**16) and sign_test_p(15, 1) == pytest.approx(0.000518799)
    few = _drift(15, 1)
    assert few.z == 3.5 and few.p == pytest.approx(0.00052, abs=2e-6) and not few.significant and few.notice is None
    assert _drift(1140, 910).significant and _drift(1140, 910).p == pytest.approx(4.13055e-7, rel=1e-5)
    assert _drift(16, 1).significant  # p = 2 * 18 / 2^17 = 0.00027
    # the floating-point p is the exact one, to far better than the millionth at which the decision goes exact
    for up, down in [(0, 0), (1, 0), (3, 2), (15, 1), (100, 0), (1140, 910), (10_100, 9_900), (9_000, 7_000)]:
        assert sign_test_p(up, down) == pytest.approx(float(sign_test_exact_p(up, down)), rel=1e-9, abs=1e-300)


def test_the_notice_level_follows_the_number_of_cells_and_the_fail_rule_does_not():
    """Bonferroni over the file's cells for the notices' z; the pass/fail rule stays the agreed tolerance
    (it is not raised to the noise of independent replays, which would let real drifts past it)."""
    n = 40_000
    assert cell_level(30) < cell_level(10) < cell_level(8) < cell_level(1) == FALSE_ALARM
    # one cell near 50%: about 0.47% (1 point is 2.83 noise standard deviations); ten: about ten times that
    assert false_alarm_rate([0.5], n, 0.01) == pytest.approx(2 * NormalDist().cdf(-0.01 / math.sqrt(0.5 / n)))
    assert false_alarm_rate([0.5] * 10, n, 0.01) == pytest.approx(1 - (1 - false_alarm_rate([0.5], n, 0.01)) ** 10)
    assert false_alarm_rate([0.5], n, 0.05) < 1e-12  # a looser tolerance: fewer false alarms
    # a real drift of 1.1 points on the same games fails, however few games it changes
    assert _drift(401, 0).failed and not _drift(400, 0).failed  # "moved more than" the tolerance
    with pytest.raises(ValueError, match="cells must be a positive integer"):
        cell_level(0)


@pytest.mark.parametrize("pairing", ["independent", "most_discordant"])
def test_power_bound_holds_for_simulated_pairings(pairing):
    """Replicates of the gate's rule on paired Bernoulli games drifted by exactly the printed detectable drift:
    at least 95% must fail (minus 3 standard errors of the replicate share)."""
    rng = np.random.default_rng(20261126)
    n, tol, reps = 40_000, 0.01, 4000
    for p0 in (0.1, 0.35, 0.5):
        d = detectable_drift(p0, n, tol)
        p1 = p0 + d
        if pairing == "independent":
            p01, p10 = (1 - p0) * p1, p0 * (1 - p1)
        else:  # as many games as possible change result in both directions
            both = max(0.0, p0 + p1 - 1)  # the fewest games won both times (counter-monotone coupling)
            p01, p10 = p1 - both, p0 - both
        counts = rng.multinomial(n, [p01, p10, 1 - p01 - p10], size=reps)
        drift = (counts[:, 0] - counts[:, 1]) / n
        share_failed = float(np.mean(np.abs(drift) > tol))
        assert share_failed >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps), (p0, share_failed)


# ---------------------------------------------------------------- small files
def test_gate_is_the_same_for_any_batch_size(tmp_path):
    path = bands_file(tmp_path)
    a = run_check(path)[0]
    path.write_text(path.read_text().replace("batch = 1000", "batch = 333"))
    b = run_check(path)[0]
    assert a.tally.equals(b.tally) and a.estimates == b.estimates and a.vs_baseline == b.vs_baseline
    assert a.vs_baseline.drift == 0.0 and not a.failed


def test_update_rebaselines_and_prints_the_diff(tmp_path, packs):
    path = bands_file(tmp_path)
    before = load_bands(path)[0].cell[0].baseline
    rc, out = _cli(["check", path, "--content", packs["lobo2"]])
    assert rc == 1 and "FAIL 3p-heuristic: win_rate" in out
    # the pack the baselines come from is the file's own ([check] content), never --content alone
    path.write_text(path.read_text().replace("tolerance = 0.01\n", f'tolerance = 0.01\ncontent = "{packs["lobo2"]}"\n'))
    rc, diff = _cli(["check", path, "--update", "--margin", "0.03"])
    assert rc == 0 and diff.startswith("--- bands.toml (before)")
    assert f"-baseline = {{ seed = 7, games = 4000, wins = {before.wins} }}" in diff
    assert "+baseline = { seed = 7, games = 4000, wins = " in diff and "+win_rate = [" in diff
    after = load_bands(path)[0].cell[0]
    assert after.baseline.wins < before.wins
    assert _cli(["check", path])[0] == 0
    assert _cli(["check", path, "--content", DEFAULT_PACK])[0] == 1  # the default pack drifted from the new baseline
    rc, again = _cli(["check", path, "--update", "--margin", "0.03"])
    assert rc == 0 and again.strip() == "bands and baselines unchanged"


def test_update_json_says_what_changed_cell_by_cell(tmp_path, packs):
    """`check --update --json` prints JSON (it printed the text diff): each cell's baseline and bands before and
    after, today's estimates, and whether the bands and wins files changed."""
    path = bands_file(tmp_path)
    was = load_bands(path)[0].cell[0]
    path.write_text(path.read_text().replace("tolerance = 0.01\n", f'tolerance = 0.01\ncontent = "{packs["lobo2"]}"\n'))
    rc, out = _cli(["check", path, "--update", "--margin", "0.02", "--json"])
    doc = json.loads(out)
    now = load_bands(path)[0].cell[0]
    (r,) = run_check(path)
    assert rc == 0 and now.baseline.wins < was.baseline.wins
    assert doc == {
        "updated": True, "margin": 0.02,
        "bands_file": {"name": "bands.toml", "changed": True}, "wins_file": {"name": "bands.wins", "changed": True},
        "cells": [{"cell": "3p-heuristic", "changed": True, "games": 4000,
                   "baseline": {"before": {"seed": 7, "games": 4000, "wins": was.baseline.wins},
                                "after": {"seed": 7, "games": 4000, "wins": now.baseline.wins}},
                   "bands": {"win_rate": {"before": list(was.win_rate), "after": list(now.win_rate),
                                          "estimate": r.estimates["win_rate"].value,
                                          "ci_low": r.estimates["win_rate"].low,
                                          "ci_high": r.estimates["win_rate"].high}}}]}
    rc, out = _cli(["check", path, "--update", "--margin", "0.02", "--json"])
    doc = json.loads(out)
    assert rc == 0 and not doc["updated"] and not doc["cells"][0]["changed"]
    assert not doc["bands_file"]["changed"] and not doc["wins_file"]["changed"]


def test_margin_help_says_what_update_writes(tmp_path, capsys):
    """The help once called the margin "win rate points / turn fraction", read as 3 for 3 points, and never said
    that the band is widened to the 95% interval: with --margin 0 --update writes the interval, not a point."""
    from sim.bands import run_check

    with pytest.raises(SystemExit):
        main(["check", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert ("--margin MARGIN with --update: each band is re-centred on today's estimate +/- MARGIN, then widened to "
            "cover the estimate's 95% interval, its ends rounded outward to 0.001 (0.1 turn), so the interval lies "
            "inside it (0 gives the interval itself, not a point). A fraction from 0 to 1: for a win rate or outcome "
            "share 0.03 is +/- 3 points (0.45 -> [0.42, 0.48]); for mean_turns it is +/- 3% of the mean "
            "(default 0.03)") in text
    # what it says, on a file: --margin 0 gives the 95% interval, 0.03 the estimate +/- 3 points
    path = bands_file(tmp_path, baseline=False)  # 4,000 games: a 95% interval narrower than +/- 3 points
    path.write_text(path.read_text().replace("win_rate = [", "mean_turns = [1.0, 100.0]\nwin_rate = ["))
    for margin in (0.0, 0.03):
        assert _cli(["check", path, "--update", "--margin", margin])[0] == 0
        (r,) = run_check(path)
        cell = load_bands(path)[0].cell[0]
        for key, width in (("win_rate", margin), ("mean_turns", margin * r.estimates["mean_turns"].value)):
            e = r.estimates[key]
            step = 10 if key == "mean_turns" else 1000  # outward: low down, high up, to the grid
            want = (max(math.floor(round(min(e.value - width, e.low) * step, 6)) / step, 0),
                    math.ceil(round(max(e.value + width, e.high) * step, 6)) / step)
            assert tuple(getattr(cell, key)) == want, (key, margin)
        if margin == 0:
            assert cell.win_rate[0] < r.estimates["win_rate"].value < cell.win_rate[1]  # the interval, not a point
        else:  # the estimate +/- 3 points, rounded outward
            v = r.estimates["win_rate"].value
            assert tuple(cell.win_rate) == (math.floor(round((v - 0.03) * 1000, 6)) / 1000,
                                            math.ceil(round((v + 0.03) * 1000, 6)) / 1000)


ALL_METRICS = "".join(f"{m} = [0.0, 1.0]\n" for m in ("share_win_location", "share_win_henchmen", "share_loss_lobo",
                                                        "share_loss_intel", "share_timeout"))


@pytest.mark.parametrize("margin", [0.0, 0.001, 0.03])
def test_after_update_every_interval_lies_inside_its_band(tmp_path, margin):
    """--update writes bands that hold today's 95% intervals: right after it, every metric is "inside", none
    "touches the band's edge". Rounding each end to the nearest 0.001 (or 0.1 turn) had cut into the interval,
    e.g. 2p mean_turns [18.23, 18.32] written as [18.2, 18.3] with --margin 0."""
    from sim.bands import Estimate, _round_band

    assert _round_band("mean_turns", Estimate(18.28, 18.23, 18.32), 0.0) == (18.2, 18.4)
    assert _round_band("win_rate", Estimate(0.8771, 0.8738, 0.8803), 0.0) == (0.873, 0.881)
    assert _round_band("win_rate", Estimate(0.45, 0.44, 0.46), 0.03) == (0.42, 0.48)  # the help's example
    assert _round_band("win_rate", Estimate(0.99, 0.97, 0.999), 0.03) == (0.96, 1.0)  # clipped to [0, 1]
    path = bands_file(tmp_path, baseline=False)
    path.write_text(path.read_text().replace("win_rate = [", f"mean_turns = [1.0, 100.0]\n{ALL_METRICS}win_rate = ["))
    assert _cli(["check", path, "--update", "--margin", margin])[0] == 0
    (r,) = run_check(path)
    assert len(r.verdicts) == 7 and r.vs_baseline.drift == 0
    for m, verdict in r.verdicts.items():
        e, band = r.estimates[m], r.cell.bands()[m]
        assert verdict == "inside" and band[0] <= e.low <= e.high <= band[1], (m, band, e)
    rc, out = _cli(["check", path])
    assert rc == 0 and "touches" not in out, out


# ---------------------------------------------------------------- drifts inside the tolerance
def _drift(up: int, down: int | None, n: int = 40_000, base_wins: int = 18_205, cells: int = 10) -> Drift:
    """A constructed comparison: ``up`` games won now and lost then, ``down`` the reverse (None: unpaired)."""
    base = base_wins / n
    value = (base_wins + up - (down or 0)) / n
    return Drift(base, value, 0.01, detectable_drift(base, n, 0.01), cells, None if down is None else (up, down),
                 "bands.wins does not exist" if down is None else None)


def test_the_notice_decision():
    """A cell that passes gets a NOTICE when its paired drift is real at the gate's family-wise level (the exact
    sign test's p at most the cell's share of it), or when it drifted and its baseline games are not recorded;
    never when it failed."""
    level = cell_level(10)
    real = _drift(1140, 910)  # +0.57 points, z = 230 / sqrt(2050) = 5.08: the audit's 1p consequences change
    assert real.z == pytest.approx(230 / math.sqrt(2050)) and not real.failed and real.significant
    assert real.notice == "significant"
    assert real.p == pytest.approx(float(sign_test_exact_p(1140, 910))) and real.p < level
    noise = _drift(1020, 990)  # +0.08 points, z = 0.67
    assert not noise.significant and noise.notice is None and noise.p > 0.5
    assert _drift(100, 0).notice == "significant"  # 100 games more won, none fewer: z 10
    assert _drift(100, None).notice == "untested"  # the same drift, its games not recorded
    # either side of the level: the same +40-game drift spread over m and m + 2 changed games
    m = max(k for k in range(40, 400, 2) if sign_test_exact_p((k + 40) // 2, (k - 40) // 2) <= Fraction(level))
    assert _drift((m + 40) // 2, (m - 40) // 2).notice == "significant"
    assert _drift((m + 42) // 2, (m - 38) // 2).notice is None
    assert _drift(0, 0).notice is None and _drift(0, 0).z == 0.0 and _drift(0, 0).p == 1  # no game changed
    assert _drift(0, None, base_wins=18_205).notice is None  # drift 0 exactly: nothing to say
    big = _drift(3000, 2400)  # +1.5 points: fails, the FAIL line says it
    assert big.failed and big.significant and big.notice is None
    # fewer cells, a looser level per cell: the family-wise level is what it is about
    assert cell_level(1) > level and _drift((m + 42) // 2, (m - 38) // 2, cells=1).notice == "significant"


def _result(v: Drift, name: str = "1p-heuristic"):
    from sim.bands import CellResult, CellSection

    cell = CellSection(name=name, players=1, win_rate=(0.0, 1.0))
    return CellResult(cell, 40_000, {}, {}, {}, None, v)


def test_notice_lines_say_how_real_the_drift_is():
    t = notice_text(_result(_drift(1140, 910)))
    assert t == ("NOTICE 1p-heuristic: real drift +0.57 points (z +5.1, exact p 4.1e-07, on the same 40000 games: "
                 "1140 won now and lost then, 910 the reverse; significant at the notices' family-wise 0.5% level over 10 cells), inside the "
                 "1.00-point tolerance: it passes, but it is real")
    t = notice_text(_result(_drift(230, None)))
    assert t == ("NOTICE 1p-heuristic: drift +0.57 points, inside the 1.00-point tolerance, is not tested for "
                 "significance: bands.wins does not exist (record the baseline's games with `check --update`)")
    assert notice_text(_result(_drift(1020, 990))) is None


def test_a_real_content_change_inside_the_tolerance_gets_a_notice(tmp_path):
    """henchmen.readings.consequences_in_encounters = true moves the 3-player heuristic cell by about 2 points
    on its 4,000 games (z about 4): inside a 3-point tolerance, so it passes, and the NOTICE says the drift is
    real, in text and --json; with a 1-point tolerance the same change fails."""
    (tmp_path / "strict").mkdir()
    strict = bands_file(tmp_path / "strict")
    change = ["--set", "henchmen.readings.consequences_in_encounters=true"]
    rc, out = _cli(["check", strict, *change])
    assert rc == 1 and re.search(r"^FAIL 3p-heuristic: win_rate \S+% drifted \+[23]\.\d\d points", out, re.M), out
    path = bands_file(tmp_path, tolerance=0.03)
    assert wins_path(path).exists() and set(read_wins(wins_path(path))) == {"3p-heuristic"}
    change = ["--set", "henchmen.readings.consequences_in_encounters=true"]
    rc, out = _cli(["check", path, *change])
    assert rc == 0, out
    m = re.search(r"^NOTICE 3p-heuristic: real drift \+(\d\.\d\d) points \(z \+(\d\.\d), exact p (\S+), on the same "
                  r"4000 games: (\d+) won now and lost then, (\d+) the reverse; significant at the notices' family-wise 0\.5% level "
                  r"over 1 cell\), inside the (\d\.\d\d)-point tolerance: it passes, but it is real$", out, re.M)
    assert m, out
    assert 1.0 < float(m[1]) < float(m[6]) and float(m[3]) <= cell_level(1)
    assert float(m[1]) == pytest.approx((int(m[4]) - int(m[5])) / 40, abs=0.006)
    assert float(m[3]) == pytest.approx(float(sign_test_exact_p(int(m[4]), int(m[5]))), rel=0.05)
    assert re.search(rf"^3p-heuristic +\S+% +\S+% +\+\d\.\d\d points +\+\d\.\d +{re.escape(m[3])} +\S+ points +ok, NOTICE$",
                     out, re.M), out
    assert "the 1 cell passed: no drift beyond the tolerance, every metric inside its band (1 NOTICE above)" in out
    rc, js = _cli(["check", path, *change, "--json"])
    doc = json.loads(js)
    (rec,) = [r for r in doc["cells"] if r["check"] == "baseline"]
    assert rc == 0 and doc["passed"] and doc["notices"] == [m[0]] and rec["notice"] == m[0]
    assert rec["significant"] is True and rec["verdict"] == "ok" and rec["z"] == pytest.approx(float(m[2]), abs=0.05)
    assert (rec["won_now_lost_then"], rec["lost_now_won_then"]) == (int(m[4]), int(m[5]))
    assert rec["p"] == pytest.approx(float(sign_test_exact_p(int(m[4]), int(m[5]))), rel=1e-9)
    assert rec["level"] == FALSE_ALARM  # one cell: the whole family-wise level
    # unchanged: z 0, p 1, no notice
    rc, out = _cli(["check", path])
    assert rc == 0 and "NOTICE" not in out and re.search(r"^3p-heuristic .* \+0\.00 points +\+0\.0 +1 ", out, re.M)
    # without the recorded games the drift is still named, as not tested
    wins_path(path).unlink()
    rc, out = _cli(["check", path, *change])
    assert rc == 0 and re.search(r"^NOTICE 3p-heuristic: drift \+\d\.\d\d points, inside the \d\.\d\d-point "
                                 r"tolerance, is not tested for significance: bands\.wins does not exist", out, re.M)
    assert re.search(r"^3p-heuristic +\S+% +\S+% +\+\d\.\d\d points +- +- ", out, re.M), out


def test_baseline_games_of_other_games_are_not_paired(tmp_path):
    assert wins_path("x/bands.toml") == Path("x/bands.wins")
    assert wins_path("x/odd.wins") == Path("x/odd.wins.wins")  # never the bands file itself
    path = bands_file(tmp_path, tolerance=0.03)  # the change below (about 2 points) passes, unpaired
    w = wins_path(path)
    good = w.read_text()
    wins = load_bands(path)[0].cell[0].baseline.wins
    path.write_text(path.read_text().replace(f"wins = {wins} }}", f"wins = {wins - 1} }}"))  # edited by hand
    rc, out = _cli(["check", path])  # drift +1 game: not tested, and says why
    assert rc == 0 and re.search(r"^NOTICE 3p-heuristic: drift \+0\.0\d points, .* not tested for significance: the "
                                 rf"recorded games \(seed 7, 4000 games, {wins} won\) are not the baseline's "
                                 rf"\(seed 7, 4000 games, {wins - 1} won\)", out, re.M), out
    w.write_text(good.replace('"3p-heuristic"', '"other"'))
    rc, out = _cli(["check", path, "--set", "henchmen.readings.consequences_in_encounters=true"])
    assert rc == 0 and "is not tested for significance: bands.wins holds no record of this cell" in out, out


def test_a_damaged_wins_file_is_refused_before_any_game(tmp_path, monkeypatch):
    path = bands_file(tmp_path)
    w = wins_path(path)
    good = w.read_text()
    line = good.splitlines()[-1]
    name, seed, games, wins, bits = line.split("\t")

    def no_games(**kw):
        raise AssertionError("played games before validating the wins file")

    monkeypatch.setattr("sim.run.simulate_tally", no_games)
    for bad, why in (
        (good.replace(line, line[:-8]), r"win bits hold \d+ bytes, 4000 games need 500"),
        (good.replace(line, "\t".join([name, seed, games, str(int(wins) + 1), bits])), r"win bits set, but the record"),
        (good + line + "\n", r"a second record of '3p-heuristic'"),
        (good.replace(line, line.replace("\t", " ")), r"not a record"),
        (good.replace(line, line[:-4] + "!!!!"), r"not a record"),
    ):
        w.write_text(bad)
        with pytest.raises(SystemExit, match=rf"bands error: bands.wins: line \d+: .*{why}"):
            _cli(["check", path])
    w.write_text(good, encoding="utf-16")  # saved in another encoding: a traceback (UnicodeDecodeError) before
    with pytest.raises(SystemExit, match=r"bands error: bands.wins: byte 0: not UTF-8 text"):
        _cli(["check", path])


def test_the_committed_wins_file_is_what_update_writes():
    """bands.wins as `check --update` writes it (its header included): an update that changes no game then
    rewrites nothing."""
    from sim.bands import WINS_HEADER, read_wins

    w = wins_path(BANDS)
    text = w.read_text(encoding="utf-8")
    assert text.startswith(WINS_HEADER)
    body = text[len(WINS_HEADER):].splitlines()
    model, _ = load_bands(BANDS)
    assert [json.loads(line.split("\t")[0]) for line in body] == [c.name for c in model.cell]
    assert set(read_wins(w)) == {c.name for c in model.cell}


def test_update_records_a_missing_baseline(tmp_path):
    path = bands_file(tmp_path, baseline=False)
    with pytest.raises(SystemExit, match=r"bands error: bands.toml: cell\[3p-heuristic\].baseline: missing"):
        _cli(["check", path])
    rc, diff = _cli(["check", path, "--update"])
    assert rc == 0 and "+baseline = { seed = 7, games = 4000, wins = " in diff
    assert _cli(["check", path])[0] == 0


def test_stale_baseline_is_refused_before_any_game(tmp_path, monkeypatch):
    path = bands_file(tmp_path)
    path.write_text(path.read_text().replace("games = 4000\n", "games = 8000\n", 1))

    def no_games(**kw):
        raise AssertionError("played games before validating the file")

    monkeypatch.setattr("sim.run.simulate_tally", no_games)
    with pytest.raises(SystemExit, match=r"cell\[3p-heuristic\].baseline: recorded with seed 7 and 4000 games, "
                                         r"but \[check\] plays seed 7 and 8000 games; record a new one"):
        _cli(["check", path])


def test_band_failure_lines_use_percent_and_points(tmp_path, packs):
    path = bands_file(tmp_path)
    rc, out = _cli(["check", path, "--content", packs["lobo2"]])
    assert rc == 1
    fails = [line for line in out.splitlines() if line.startswith("FAIL")]
    pct, pts = r"\d+\.\d\d%", r"\d+\.\d\d points"
    assert len(fails) == 2, out
    assert re.fullmatch(rf"FAIL 3p-heuristic: win_rate {pct} drifted -{pts} from the baseline {pct} on the same "
                        rf"4000 games \(tolerance {pts}\)", fails[0]), fails[0]
    assert re.fullmatch(rf"FAIL 3p-heuristic: win_rate {pct} \(95% interval \[{pct}, {pct}\]\) lies {pts} below "
                        rf"its band \[{pct}, {pct}\]", fails[1]), fails[1]


def test_bad_bands_files_are_refused(tmp_path):
    path = bands_file(tmp_path, baseline=False)
    text = path.read_text()
    path.write_text(text.replace("win_rate = [", "win_rate = [0.9, 0.1] #"))
    with pytest.raises(BandsError, match=r"bands.toml: cell\[3p-heuristic\].win_rate: .*low <= high"):
        load_bands(path)
    path.write_text(text.replace("tolerance = 0.01", "tolerance = nan"))
    with pytest.raises(BandsError, match=r"bands.toml: check.tolerance: "):
        load_bands(path)
    path.write_text(text + "baseline = { seed = 7, games = 4000, wins = 4001 }\n")
    with pytest.raises(BandsError, match=r"cell\[3p-heuristic\].baseline: .*wins \(4001\) exceed games \(4000\)"):
        load_bands(path)
    path = bands_file(tmp_path, extra="gmaes = 3", baseline=False)
    with pytest.raises(BandsError, match=r"bands.toml: check.gmaes: unknown key"):
        load_bands(path)


def test_update_never_writes_an_invalid_file(tmp_path):
    path = bands_file(tmp_path)
    before = path.read_text()
    with pytest.raises(SystemExit):  # the command line refuses a nan margin before playing
        _cli(["check", path, "--update", "--margin", "nan"])
    assert path.read_text() == before
    results = run_check(path, update=True)  # and update_bands guards its own callers
    with pytest.raises(BandsError, match=r"bands.toml: --update would write an invalid file, left unchanged: "
                                         r"cell\[3p-heuristic\].win_rate: .*\[nan, nan\]"):
        update_bands(path, results, math.nan)
    assert path.read_text() == before and not list(tmp_path.glob("*.tmp"))
