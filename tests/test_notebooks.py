"""The designer and analyst notebooks execute end to end on small runs of the checked-in studies,
and the numbers they print equal those of ``smersh-sim compare`` / the summary on the same results."""

import os
import re
from pathlib import Path

import nbformat
import polars as pl
import pytest
from nbclient import NotebookClient

from sim.compare import compare_run
from sim.experiments import load_spec
from sim.study import run_study

ROOT = Path(__file__).resolve().parent.parent
STUDIES = ("player_count", "villain_minus_one", "strategies")
NOTEBOOKS = ("designer_player_count.ipynb", "analyst_strategies.ipynb")
NUM = r"([+-]?\d+\.\d+)"


@pytest.fixture(scope="module")
def small_results(tmp_path_factory):
    results = tmp_path_factory.mktemp("results")
    for name in STUDIES:
        spec = load_spec(ROOT / "experiments" / f"{name}.toml").with_games(40)
        report = run_study(spec, results / spec.name, progress=False, charts=False)
        assert report.finished
    return results


@pytest.fixture(scope="module")
def executed(small_results):
    """Each notebook executed once on the small results: name -> (notebook, printed text)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("SMERSH_RESULTS", str(small_results))
    mp.setenv("MPLBACKEND", "Agg")
    out = {}
    try:
        for name in NOTEBOOKS:
            nb = nbformat.read(ROOT / "notebooks" / name, as_version=4)
            NotebookClient(nb, timeout=300, kernel_name="python3",
                           resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
            text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                           for o in c.get("outputs", []) if o.get("output_type") == "stream")
            out[name] = (nb, text)
    finally:
        mp.undo()
    return out


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_executes(executed, name):
    nb, _ = executed[name]
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors


def _points(x: float) -> float:
    return 100 * x


def test_analyst_paired_differences_equal_compare(executed, small_results):
    _, text = executed["analyst_strategies.ipynb"]
    line = re.compile(rf"^(\d)p (\S+): {NUM}% -> {NUM}%, n01 (-?\d+), n10 (-?\d+), diff {NUM} points, "
                      rf"paired 95% interval \[{NUM}, {NUM}\]$", re.M)
    printed = {(int(m[1]), m[2]): m.groups()[2:] for m in line.finditer(text)}
    table, _ = compare_run(small_results / "strategies", {"strategy": "heuristic"})
    assert len(printed) == table.height == 8, text
    assert any(r["n10"] > r["n01"] for r in table.iter_rows(named=True))  # a negative difference is shown
    for r in table.iter_rows(named=True):
        base, rate, n01, n10, diff, low, high = printed[(r["players"], r["strategy"])]
        assert (int(n01), int(n10)) == (r["n01"], r["n10"])
        for shown, exact in ((base, r["baseline_win_rate"]), (rate, r["win_rate"]), (diff, r["diff"]),
                             (low, r["paired_low"]), (high, r["paired_high"])):
            assert float(shown) == pytest.approx(_points(exact), abs=1e-4), (r["cell"], text)


def test_designer_paired_effect_equals_compare(executed, small_results):
    _, text = executed["designer_player_count.ipynb"]
    line = re.compile(rf"^(\d)p: {NUM}% -> {NUM}%, diff {NUM} points, paired 95% interval \[{NUM}, {NUM}\]$", re.M)
    printed = {int(m[1]): m.groups()[1:] for m in line.finditer(text)}
    table, _ = compare_run(small_results / "villain_minus_one", {"setup": "default"})
    assert len(printed) == table.height == 6, text
    for r in table.iter_rows(named=True):
        base, rate, diff, low, high = printed[r["players"]]
        for shown, exact in ((base, r["baseline_win_rate"]), (rate, r["win_rate"]), (diff, r["diff"]),
                             (low, r["paired_low"]), (high, r["paired_high"])):
            assert float(shown) == pytest.approx(_points(exact), abs=1e-4), (r["cell"], text)


def test_designer_player_count_rates_equal_the_summary(executed, small_results):
    _, text = executed["designer_player_count.ipynb"]
    m = re.search(rf"2 players {NUM}% vs 4 players {NUM}%: difference {NUM} points", text)
    assert m, text
    s = pl.read_parquet(small_results / "player_count" / "summary.parquet").filter(pl.col("strategy") == "heuristic")
    rate = {r["players"]: r["win_rate"] for r in s.iter_rows(named=True)}
    assert float(m[1]) == pytest.approx(_points(rate[2]), abs=0.005)
    assert float(m[2]) == pytest.approx(_points(rate[4]), abs=0.005)
    assert float(m[3]) == pytest.approx(_points(rate[2] - rate[4]), abs=0.005)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebooks_hold_no_simulation_logic(name):
    """They read results through the checked readers only (one complete run, this code's rules)."""
    text = (ROOT / "notebooks" / name).read_text()
    assert "read_parquet" not in text  # a bare read would show a mixed or stale folder's numbers
    text = re.sub(r"from sim\.study import (read_games, )?read_summary", "", text)
    for banned in ("import sim", "from sim", "import strategies", "simulate("):
        assert banned not in text, f"{name} must only read results, found {banned!r}"
    assert os.path.getsize(ROOT / "notebooks" / name) < 50_000  # committed without outputs


@pytest.mark.parametrize("broken", ["no manifest", "other rules"])
def test_a_notebook_refuses_a_folder_that_is_not_one_current_run(small_results, tmp_path, broken):
    """A re-run stopped while writing leaves no manifest (a summary of one run beside the games of
    another); a folder of other rules describes other games: the notebook stops, naming the folder."""
    import json
    import shutil

    from nbclient.exceptions import CellExecutionError

    results = tmp_path / "results"
    shutil.copytree(small_results, results)
    if broken == "no manifest":
        (results / "strategies" / "manifest.json").unlink()
        want = "no manifest.json"
    else:
        meta = results / "strategies" / "metadata.json"
        m = json.loads(meta.read_text())
        m["rules_version"] = "0"
        meta.write_text(json.dumps(m))
        manifest = json.loads((results / "strategies" / "manifest.json").read_text())
        from sim.manifest import file_sha256

        manifest["files"]["metadata.json"].update(bytes=meta.stat().st_size, sha256=file_sha256(meta))
        (results / "strategies" / "manifest.json").write_text(json.dumps(manifest))
        want = "played by RULES_VERSION '0'"
    nb = nbformat.read(ROOT / "notebooks" / "analyst_strategies.ipynb", as_version=4)
    mp = pytest.MonkeyPatch()
    mp.setenv("SMERSH_RESULTS", str(results))
    mp.setenv("MPLBACKEND", "Agg")
    try:
        with pytest.raises(CellExecutionError) as e:
            NotebookClient(nb, timeout=300, kernel_name="python3",
                           resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    finally:
        mp.undo()
    assert "ResultsError" in str(e.value) and want in str(e.value), str(e.value)[-2000:]
