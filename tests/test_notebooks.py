"""The designer and analyst notebooks execute end to end on small runs of the checked-in studies."""

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from sim.experiments import load_spec
from sim.study import run_study

ROOT = Path(__file__).resolve().parent.parent
STUDIES = ("player_count", "villain_minus_one", "strategies")
NOTEBOOKS = ("designer_player_count.ipynb", "analyst_strategies.ipynb")


@pytest.fixture(scope="module")
def small_results(tmp_path_factory):
    results = tmp_path_factory.mktemp("results")
    for name in STUDIES:
        spec = load_spec(ROOT / "experiments" / f"{name}.toml").with_games(40)
        report = run_study(spec, results / spec.name, progress=False, charts=False)
        assert report.finished
    return results


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_executes(small_results, name, monkeypatch):
    monkeypatch.setenv("SMERSH_RESULTS", str(small_results))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebooks_hold_no_simulation_logic(name):
    text = (ROOT / "notebooks" / name).read_text()
    for banned in ("import sim", "from sim", "import strategies", "simulate("):
        assert banned not in text, f"{name} must only read results, found {banned!r}"
    assert os.path.getsize(ROOT / "notebooks" / name) < 50_000  # committed without outputs
