"""CI's entry point (.ci/run, the Makefile's test target): any failure of the tests stops it before the gate,
and pytest collecting no tests is named, though make reports every failing recipe as its own status 2."""

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _stub(path: Path, body: str) -> None:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def ci(tmp_path):
    """A copy of .ci/run and the Makefile whose .venv is installed already and holds stubs: `python` (pytest)
    exits with $PYTEST_RC, `smersh-sim` (the gate) logs that it ran."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    (tmp_path / ".ci").mkdir()
    shutil.copy2(ROOT / ".ci" / "run", tmp_path / ".ci" / "run")
    shutil.copy2(ROOT / "Makefile", tmp_path / "Makefile")
    (tmp_path / "pyproject.toml").write_text("")
    bin_ = tmp_path / ".venv" / "bin"
    bin_.mkdir(parents=True)
    _stub(bin_ / "python", 'echo "pytest ran" >> log; exit "$PYTEST_RC"')
    _stub(bin_ / "smersh-sim", 'echo "gate ran: $*" >> log')
    stamp = tmp_path / ".venv" / ".installed"
    stamp.write_text("")
    os.utime(tmp_path / "pyproject.toml", (1_000_000_000, 1_000_000_000))  # the install is newer: not redone
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}

    def run(pytest_rc: int) -> tuple[int, str, str]:
        (tmp_path / "log").unlink(missing_ok=True)
        p = subprocess.run([str(tmp_path / ".ci" / "run")], cwd=tmp_path, env={**env, "PYTEST_RC": str(pytest_rc)},
                           capture_output=True, text=True, timeout=60)
        return p.returncode, p.stderr, (tmp_path / "log").read_text()

    return run


def test_ci_runs_the_gate_only_after_the_tests_pass(ci):
    rc, err, log = ci(0)
    assert rc == 0 and log == "pytest ran\ngate ran: check experiments/bands.toml\n", (err, log)
    rc, err, log = ci(1)  # a failed test
    assert rc != 0 and log == "pytest ran\n" and "collected no tests" not in err


def test_ci_says_pytest_collected_no_tests(ci):
    """pytest's exit status 5 is a failure CI names; .ci/run once tested for 5 after `make test`, which never
    returns it (make turns it into 2), so the case was never said."""
    rc, err, log = ci(5)
    assert rc != 0 and log == "pytest ran\n"
    assert "make test: pytest collected no tests (exit status 5): a failure, not a pass" in err, err
