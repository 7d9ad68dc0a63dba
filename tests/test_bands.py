"""The CI gate: the default pack passes, a 2-point drift fails, --update re-baselines, bad files are refused."""

import contextlib
import io
import math
import re
import shutil
import textwrap
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest

from sim.bands import (
    FALSE_ALARM,
    BandsError,
    critical_z,
    detectable_drift,
    fail_threshold,
    false_alarm_rate,
    load_bands,
    power_at,
    run_check,
    update_bands,
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


def bands_file(tmp_path: Path, games: int = 4000, batch: int = 1000, extra: str = "", baseline: bool = True) -> Path:
    """One 3-player cell with the band CI holds for it, re-centred with its baseline by --update (by default)."""
    model, _ = load_bands(BANDS)
    band = next(c for c in model.cell if c.name == "3p-heuristic").win_rate
    p = tmp_path / "bands.toml"
    p.write_text(textwrap.dedent(f"""
        [check]
        seed = 7
        games = {games}
        batch = {batch}
        tolerance = 0.01
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
        assert re.search(rf"^{re.escape(c.name)} +\S+% +\S+% +\+0\.00 points +\S+ points +\S+ points +ok$", out,
                         re.M), c.name


def test_the_shipped_cells_are_the_readme_s():
    """'The shipped file gates `heuristic` at every player count (1-6), `bold` at 4 players, the `dirty-lobo`
    variant at 3 and `tuned` at 2 and 4.'"""
    model, _ = load_bands(BANDS)
    cells = sorted((c.strategy, c.variant, c.players) for c in model.cell)
    assert all(not c.params and not c.overrides and c.skills == "pick" for c in model.cell)
    assert cells == sorted([("heuristic", "standard", n) for n in range(1, 7)] + [("bold", "standard", 4)]
                           + [("heuristic", "dirty-lobo", 3), ("tuned", "standard", 2), ("tuned", "standard", 4)])
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert ("The shipped file gates `heuristic` at every player count (1-6), `bold` at 4 players, the `dirty-lobo` "
            "variant at 3 and `tuned` at 2 and 4.") in readme


def test_drift_pack_fails_the_shipped_gate(drift_gate):
    rc, out = drift_gate
    assert rc == 1, out
    m = re.search(r"^FAIL 4p-heuristic: win_rate (\S+)% drifted ([+-]\d+\.\d+) points from the baseline (\S+)% "
                  r"on the same 40000 games \(threshold (\d+\.\d\d) points\)$", out, re.M)
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
    any pairing) is the threshold plus 1.645 * 1.0 / sqrt(40000)."""
    model, _ = load_bands(BANDS)
    c, k = model.check, len(model.cell)
    for cell in model.cell:
        rate = cell.baseline.wins / cell.baseline.games
        assert (cell.baseline.seed, cell.baseline.games) == (c.seed, c.games)
        d = detectable_drift(rate, c.games, c.tolerance, k)
        assert power_at(d, rate, c.games, c.tolerance, k) == pytest.approx(0.95, abs=1e-9), cell.name
        assert d >= fail_threshold(rate, c.games, c.tolerance, k) >= c.tolerance, cell.name
    z = NormalDist().inv_cdf(1 - 0.005 / (2 * k))
    assert critical_z(k) == pytest.approx(z, abs=1e-12)
    assert detectable_drift(0.5, 40_000, 0.01, k) == pytest.approx(z * math.sqrt(0.5) / 200 + 1.6448536 / 200,
                                                                    abs=1e-7)


def test_a_change_with_no_real_effect_fails_the_shipped_gate_at_most_the_stated_rate():
    """Simulated gate runs in which every cell replays independent games with its baseline's win rate: the
    share of runs in which any cell fails is at most FALSE_ALARM (0.5%), over all the cells together.
    (The 1-point tolerance alone failed about 0.5% of such runs per cell: 2.5% over the 10 shipped cells.)"""
    rates, n = _shipped_rates()
    k = len(rates)
    rng = np.random.default_rng(20261127)
    reps = 400_000
    failed = np.zeros(reps, bool)
    failed_by_tolerance = np.zeros(reps, bool)
    for p in rates:
        drift = (rng.binomial(n, p, reps) - rng.binomial(n, p, reps)) / n
        failed |= np.abs(drift) > fail_threshold(p, n, 0.01, k)
        failed_by_tolerance |= np.abs(drift) > 0.01
    se = math.sqrt(FALSE_ALARM * (1 - FALSE_ALARM) / reps)
    assert failed.mean() <= FALSE_ALARM + 3 * se, failed.mean()
    # the analytic rate check relies on agrees with the simulated one
    predicted = false_alarm_rate(rates, n, 0.01)
    assert predicted <= FALSE_ALARM
    assert abs(failed.mean() - predicted) <= 3 * math.sqrt(predicted * (1 - predicted) / reps)
    assert failed_by_tolerance.mean() > FALSE_ALARM + 3 * se  # what the threshold is for


def test_the_threshold_follows_the_number_of_cells():
    """Bonferroni over the file's cells: more cells, each tested at a stricter level, so that the
    family-wise false-alarm rate stays at FALSE_ALARM; the tolerance is the floor."""
    n = 40_000
    assert false_alarm_rate([0.5], n, 0.01) < FALSE_ALARM  # one cell: the tolerance is above its floor
    for k in (8, 10, 30):  # every cell at its floor: Bonferroni's share each
        assert false_alarm_rate([0.5] * k, n, 0.01) <= FALSE_ALARM
        assert false_alarm_rate([0.5] * k, n, 0.01) == pytest.approx(FALSE_ALARM, rel=0.01)
    assert fail_threshold(0.5, n, 0.01, 30) > fail_threshold(0.5, n, 0.01, 10) > fail_threshold(0.5, n, 0.01, 8)
    assert fail_threshold(0.1, n, 0.01, 10) == 0.01 and fail_threshold(0.0, n, 0.01, 10) == 0.01
    assert fail_threshold(0.5, n, 0.05, 10) == 0.05  # a looser tolerance than the noise floor is kept
    with pytest.raises(ValueError, match="cells must be a positive integer"):
        critical_z(0)


@pytest.mark.parametrize("pairing", ["independent", "most_discordant"])
def test_power_bound_holds_for_simulated_pairings(pairing):
    """Replicates of the gate's rule on paired Bernoulli games drifted by exactly the printed detectable drift:
    at least 95% must fail (minus 3 standard errors of the replicate share)."""
    rng = np.random.default_rng(20261126)
    n, tol, reps, cells = 40_000, 0.01, 4000, 10
    for p0 in (0.1, 0.35, 0.5):
        d = detectable_drift(p0, n, tol, cells)
        p1 = p0 + d
        if pairing == "independent":
            p01, p10 = (1 - p0) * p1, p0 * (1 - p1)
        else:  # as many games as possible change result in both directions
            both = max(0.0, p0 + p1 - 1)  # the fewest games won both times (counter-monotone coupling)
            p01, p10 = p1 - both, p0 - both
        counts = rng.multinomial(n, [p01, p10, 1 - p01 - p10], size=reps)
        drift = (counts[:, 0] - counts[:, 1]) / n
        share_failed = float(np.mean(np.abs(drift) > fail_threshold(p0, n, tol, cells)))
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
    rc, diff = _cli(["check", path, "--content", packs["lobo2"], "--update", "--margin", "0.03"])
    assert rc == 0 and diff.startswith("--- bands.toml (before)")
    assert f"-baseline = {{ seed = 7, games = 4000, wins = {before.wins} }}" in diff
    assert "+baseline = { seed = 7, games = 4000, wins = " in diff and "+win_rate = [" in diff
    after = load_bands(path)[0].cell[0]
    assert after.baseline.wins < before.wins
    assert _cli(["check", path, "--content", packs["lobo2"]])[0] == 0
    assert _cli(["check", path])[0] == 1  # the default pack now drifted from the new baseline
    rc, again = _cli(["check", path, "--content", packs["lobo2"], "--update", "--margin", "0.03"])
    assert rc == 0 and again.strip() == "bands and baselines unchanged"


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
                        rf"4000 games \(threshold {pts}\)", fails[0]), fails[0]
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
