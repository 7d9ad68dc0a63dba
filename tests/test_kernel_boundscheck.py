"""The kernel never indexes out of bounds, nor with a negative index (sim/jit.py drops numba's
negative-index wraparound in kernel code): compiled afresh with NUMBA_BOUNDSCHECK=1, where either
raises IndexError, it plays the very same games. That cold start also shows the kernel compiled by
helper processes and loaded from the cache by the process that plays."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.kernel_support import NO_JIT

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = r'''
import json, sys
import numpy as np
import sim, strategies
from sim.kernel import view
from tests.kernel_support import kernel_context, reference_game, kernel_copy

out = {}
for p in range(1, 7):
    for s in strategies.BUILT_IN:
        df = sim.simulate(players=p, games=400, seed=11, strategy=s)
        out[f"{p}-{s}"] = int(df.drop("strategy").hash_rows().sum() % (2**61))
# the entry point came from the cache (helper processes compile a cold kernel: code compiled in
# the process that plays ran 7-11% slower than the same code loaded from the cache)
from sim.kernel.game import simulate_batch
out["entry"] = [sum(simulate_batch._cache_hits.values()), sum(simulate_batch._cache_misses.values())]
if len(sys.argv) > 1:  # the control: an index past the state vector raises (bounds checks compiled in)
    g, _, cfg, sid, prm = reference_game(2, "heuristic", 1, 0)
    st, rs = kernel_copy(g)
    try:
        view._henchman(kernel_context(cfg=cfg, st=st, rs=rs, sid=sid, prm=prm), 0, 10**6)
        out["control"] = "no error"
    except IndexError:
        out["control"] = "IndexError"
print(json.dumps(out))
'''


def _run(env_extra: dict, *args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **env_extra}
    done = subprocess.run([sys.executable, "-c", SCRIPT, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.skipif(NO_JIT, reason="compiled code")
def test_kernel_plays_the_same_games_with_bounds_checks(tmp_path):
    checked = _run({"NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(tmp_path / "cache")}, "control")  # compiled afresh
    assert checked.pop("control") == "IndexError"
    assert checked.pop("entry") == [1, 0]  # an empty cache: compiled by the helpers, loaded here
    plain = _run({})
    assert plain.pop("entry") == [1, 0]
    assert checked == plain
