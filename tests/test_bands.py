"""The win-rate gate passes on the default pack and fails, naming the cell, when the balance drifts."""

import shutil
import textwrap
from pathlib import Path

import pytest

from sim.bands import BandsError, load_bands, run_check
from sim.cli import main
from sim.content import DEFAULT_PACK

ROOT = Path(__file__).resolve().parent.parent


def bands_file(tmp_path: Path, extra: str = "") -> Path:
    """One cell with the band CI holds for it in experiments/bands.toml."""
    model, _ = load_bands(ROOT / "experiments" / "bands.toml")
    band = next(c for c in model.cell if c.name == "3p-heuristic").win_rate
    p = tmp_path / "bands.toml"
    p.write_text(textwrap.dedent(f"""
        [check]
        seed = 7
        games = 800
        batch = 400
        early_stop = true
        {extra}
        [[cell]]
        name = "3p-heuristic"
        players = 3
        strategy = "heuristic"
        win_rate = [{band[0]}, {band[1]}]
    """))
    return p


@pytest.fixture(scope="module")
def lobo_at_2_pack(tmp_path_factory):
    pack = tmp_path_factory.mktemp("pack") / "lobo2"
    shutil.copytree(DEFAULT_PACK, pack)
    text = (pack / "lobo.toml").read_text()
    assert "start = 0" in text
    (pack / "lobo.toml").write_text(text.replace("start = 0", "start = 2", 1))
    return pack


def test_gate_passes_on_the_default_pack(tmp_path, capsys):
    path = bands_file(tmp_path)
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "3p-heuristic" in out and "all 1 cells inside their bands" in out


def test_gate_fails_naming_the_cell_when_lobo_starts_at_2(tmp_path, lobo_at_2_pack, capsys):
    path = bands_file(tmp_path)
    results = run_check(path, content=lobo_at_2_pack)
    assert results[0].failed and results[0].verdicts["win_rate"] == "outside"
    assert main(["check", str(path), "--content", str(lobo_at_2_pack)]) == 1
    out = capsys.readouterr().out
    assert "FAIL 3p-heuristic: win_rate" in out and "lies outside its band" in out


def test_gate_is_deterministic(tmp_path):
    path = bands_file(tmp_path)
    a, b = run_check(path), run_check(path)
    assert a[0].estimates == b[0].estimates and a[0].games == b[0].games


def test_early_stop_plays_fewer_games_when_clear(tmp_path, lobo_at_2_pack):
    path = bands_file(tmp_path)
    stopped = run_check(path, content=lobo_at_2_pack)[0]
    assert stopped.games == 800  # stops at the first look (2 batches), clearly outside
    path.write_text(path.read_text().replace("games = 800", "games = 1600"))
    assert run_check(path, content=lobo_at_2_pack)[0].games == 800


def test_update_rewrites_bands_around_the_estimates(tmp_path, lobo_at_2_pack, capsys):
    path = bands_file(tmp_path)
    assert main(["check", str(path), "--content", str(lobo_at_2_pack), "--update", "--margin", "0.03"]) == 0
    diff = capsys.readouterr().out
    assert diff.startswith("--- bands.toml (before)") and "+win_rate = [" in diff
    assert main(["check", str(path), "--content", str(lobo_at_2_pack)]) == 0


def test_bad_bands_files_are_refused(tmp_path):
    path = bands_file(tmp_path)
    path.write_text(path.read_text().replace("win_rate = [", "win_rate = [0.9, 0.1] #"))
    with pytest.raises(BandsError, match=r"bands.toml: cell\[3p-heuristic\].win_rate: .*low <= high"):
        load_bands(path)
    path = bands_file(tmp_path, extra="gmaes = 3")
    with pytest.raises(BandsError, match=r"bands.toml: check.gmaes: unknown key"):
        load_bands(path)
