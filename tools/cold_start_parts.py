"""Where a cold start's wall time goes: each helper process's parts, in order, with when each ended.

Runs ``sim.simulate(players=4, games=1)`` with ``NUMBA_CACHE_DIR`` set to a fresh temporary folder, as
``smersh-sim bench``'s cold start does (helper processes included), with a timer put in front of each
helper's code around ``sim.kernel.batch.compile_part``, ``compile_bundle`` and (where there is one)
``compile_outputs``. Prints, per helper, each
part's compile seconds and when it ended, and the first result's time, both in seconds from before
``import sim`` in this process. ``--json`` prints the same as one JSON object. Works on any checkout whose helpers compile
through those functions (this one's, and the code before its helpers were rebalanced or compiled the outputs).

    .venv/bin/python tools/cold_start_parts.py [--json]
    PYTHONPATH=/path/to/checkout .venv/bin/python tools/cold_start_parts.py   # another checkout's kernel
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time

from compile_times import empty_cache  # (tools/, this script's folder, is on the path)

HOOK = """import json as _json, os as _os, sys as _sys, time as _time
_sys.path.insert(0, {root!r})
import sim.kernel.batch as _batch


def _timed(f, label=None):
    def timed(*a, **k):
        start = _time.time()
        try:
            return f(*a, **k)
        finally:
            with open({log!r}, "a") as out:
                out.write(_json.dumps([_os.getpid(), label or a[1], start, _time.time()]) + "\\n")
    return timed


_batch.compile_part = _timed(_batch.compile_part)
_batch.compile_bundle = _timed(_batch.compile_bundle, "kernel_pack (the bundle's conversion)")
if hasattr(_batch, "compile_outputs"):
    _batch.compile_outputs = _timed(_batch.compile_outputs, "outputs (the table's copy, the tally's passes)")
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true", help="the same, as one JSON object")
    args = ap.parse_args()
    log = os.path.join(empty_cache(), "parts.jsonl")
    plain = subprocess.Popen
    started = {}

    class Popen(plain):
        """A helper's ``python -c CODE`` run with the timers in front of CODE."""

        def __init__(self, cmd, *a, **k):
            if isinstance(cmd, list) and cmd[1:2] == ["-c"] and "sim.kernel.batch" in cmd[2]:
                cmd = [cmd[0], "-c", HOOK.format(root=root, log=log) + cmd[2]]
            super().__init__(cmd, *a, **k)
            started[self.pid] = time.time()

    subprocess.Popen = Popen
    t0 = time.time()
    import sim

    root = os.path.dirname(os.path.dirname(os.path.abspath(sim.__file__)))
    sim.simulate(players=4, games=1, seed=1)
    t_end = time.time()
    helpers = {}
    if os.path.exists(log):
        with open(log) as f:
            for line in f:
                pid, name, start, end = json.loads(line)
                helpers.setdefault(pid, []).append({"part": name, "s": round(end - start, 1),
                                                    "ended_at_s": round(end - t0, 1)})
    out = {"sim": sim.__file__, "first_result_s": round(t_end - t0, 1),
           "helpers": [{"started_at_s": round(started[pid] - t0, 1), "parts": parts}
                       for pid, parts in sorted(helpers.items(), key=lambda kv: started.get(kv[0], 0))]}
    if args.json:
        print(json.dumps(out))
        return
    print(f"{out['sim']}: first result {out['first_result_s']} s (from before `import sim`)")
    for i, h in enumerate(out["helpers"], 1):
        print(f"helper {i} (started at {h['started_at_s']} s)")
        for p in h["parts"]:
            print(f"  {p['s']:6.1f} s  ended at {p['ended_at_s']:6.1f} s  {p['part']}")


if __name__ == "__main__":
    main()
