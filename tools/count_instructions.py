"""Instructions a game, by kernel function, counted by valgrind: a measure with no noise.

Timings on a shared machine move by a few percent from run to run; the number of
instructions the kernel executes for the same games does not. This runs
``perf_kernel.py`` under valgrind's callgrind (with its branch predictor model) and
sums the cost of every instruction by the compiled kernel function it lies in (the
perf map ``perf_kernel.py`` writes), per game:

    .venv/bin/python tools/count_instructions.py --games 2000
    .venv/bin/python tools/count_instructions.py --games 2000 --tree /path/to/other/checkout
    .venv/bin/python tools/count_instructions.py --games 2000 --branches 30   # and the branches missed most

valgrind runs no AVX-512 code, so the kernel is compiled for ``haswell`` (AVX2), in a
cache directory of its own, by a native run first (about 30 s with an empty cache);
the callgrind run then takes about a minute. Instruction counts are not time: a
change can cut instructions and still wait as long on a chain of dependent ones, so
check a change's speed with ``ab_kernel.py`` too. The mispredictions are valgrind's
simple predictor's, not the CPU's: read them as where branches follow the game.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

from perf_annotate import disassemble, read_code  # (tools/ is this script's folder)


def _functions(perf_map: str):
    rows = []
    with open(perf_map) as f:
        for line in f:
            a, s, n = line.split(None, 2)
            rows.append((int(a, 16), int(s, 16), n.strip()))
    rows.sort()
    return rows


def _self_costs(callgrind_out: str, rows):
    """Self cost (Ir, Bc, Bcm) of each mapped function, and calls into each, from callgrind's output."""
    starts = [r[0] for r in rows]

    def name_of(addr):
        i = bisect.bisect_right(starts, addr) - 1
        return rows[i][2] if i >= 0 and addr < rows[i][0] + rows[i][1] else None

    cost = collections.defaultdict(lambda: [0, 0, 0])
    calls = collections.Counter()
    missed = collections.Counter()  # mispredictions at each branch instruction
    names: dict[str, str] = {}
    addr = 0
    call_line = None
    with open(callgrind_out) as f:
        for line in f:
            c = line[0] if line else ""
            if c not in "0123456789+-*":
                m = re.match(r"c?fn=\((\d+)\)(?: (\S+))?", line)
                if m and m.group(2):
                    names[m.group(1)] = m.group(2)
                if line.startswith("cfn="):
                    callee = m.group(1) if m else None
                elif line.startswith("calls="):
                    call_line = (callee, int(line[6:].split()[0]))
                continue
            parts = line.split()
            tok = parts[0]
            if tok == "*":
                pass
            elif tok[0] == "+":
                addr += int(tok[1:], 0)
            elif tok[0] == "-":
                addr -= int(tok[1:], 0)
            else:
                addr = int(tok, 0)
            if call_line is not None:  # the inclusive cost of a call: counted in the callee
                callee, n = call_line
                call_line = None
                target = names.get(callee, "")
                if target.startswith("0x"):
                    target = name_of(int(target.split("'")[0], 16)) or target
                if name_of(addr):
                    calls[target] += n
                continue
            fn = name_of(addr)
            if fn:
                v = [int(x) for x in parts[2:5]] + [0, 0, 0]
                acc = cost[fn]
                for i in range(3):
                    acc[i] += v[i]
                if v[2]:
                    missed[addr] += v[2]
    return cost, calls, missed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--tree", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                    help="the checkout to measure (default: this one)")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--branches", type=int, default=0, metavar="N",
                    help="also list the N branch instructions valgrind's predictor misses most, with their code")
    ap.add_argument("--cache", default="", help="numba cache directory for the haswell build "
                                               "(default: one per state of the kernel's sources, in the temp folder)")
    args = ap.parse_args()
    tree = os.path.abspath(args.tree)
    # numba keys cached code on each function's own file; with NUMBA_CACHE_DIR set the project does not
    # clear stale code (sim/_cache.py), so the folder is named after the hash of the kernel's sources
    spec = importlib.util.spec_from_file_location("_tree_cache", os.path.join(tree, "sim", "_cache.py"))
    tree_cache = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tree_cache)
    cache = args.cache or os.path.join(tempfile.gettempdir(), "smersh-haswell-" + tree_cache.sources_hash()[:16])
    env = dict(os.environ, NUMBA_CPU_NAME="haswell", NUMBA_CPU_FEATURES="", NUMBA_CACHE_DIR=cache,
               PYTHONPATH=tree)
    script = os.path.join(tree, "tools", "perf_kernel.py")
    subprocess.run([sys.executable, script, "--games", "100"], env=env, check=True, cwd=tree,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # compile natively into the cache
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        code_file = os.path.join(tmp, "kernel.code")  # perf_kernel.py dumps each function's machine code
        env["PERF_KERNEL_CODE"] = code_file
        run = subprocess.run(["valgrind", "--tool=callgrind", "--dump-instr=yes", "--branch-sim=yes",
                              f"--callgrind-out-file={out}", sys.executable, script, "--games", str(args.games)],
                             env=env, cwd=tree, capture_output=True, text=True)
        m = re.search(r"perf map (\S+)", run.stderr)
        if run.returncode != 0 or not m:
            raise SystemExit(f"callgrind run failed:\n{run.stderr[-3000:]}")
        rows = _functions(m.group(1))
        cost, calls, missed = _self_costs(out, rows)
        code = read_code(code_file) if args.branches else []
    games = args.games + 10  # perf_kernel plays 10 games first
    total = [sum(c[i] for c in cost.values()) for i in range(3)]
    print(f"{tree}: {args.games:,} four-player games; per game: {total[0] / games:,.0f} instructions, "
          f"{total[1] / games:,.0f} conditional branches, {total[2] / games:,.0f} mispredicted (valgrind's model)")
    print(f"{'instr/game':>10} {'share':>6} {'calls':>6} {'instr/call':>10} {'branches':>8} {'mispred':>7}  function")
    for fn, (ir, bc, bcm) in sorted(cost.items(), key=lambda kv: -kv[1][0])[: args.top]:
        n = calls.get(fn, 0) / games
        per = f"{ir / games / n:>10,.0f}" if n else f"{'':>10}"
        print(f"{ir / games:>10,.0f} {100 * ir / total[0]:>5.1f}% {n:>6.1f} {per} {bc / games:>8,.0f} "
              f"{bcm / games:>7,.0f}  {fn}")
    if args.branches:
        _print_branches(missed, rows, code, games, args.branches)


def _print_branches(missed, rows, code, games: int, top: int) -> None:
    """The branches missed most, each with the instructions before it (what it tests)."""
    starts = [r[0] for r in rows]
    print(f"\nthe {top} branches valgrind's predictor misses most (mispredictions a game, function+offset):")
    for addr, n in missed.most_common(top):
        i = bisect.bisect_right(starts, addr) - 1
        fn_start, _size, name = rows[i]
        print(f"{n / games:7.1f}  {name}+{addr - fn_start:#x}")
        func = next((f for f in code if f[0] <= addr < f[0] + f[1]), None)
        if func is None:
            continue
        dis = disassemble(func[0], func[2])
        k = next((j for j, (a, _t) in enumerate(dis) if a == addr), None)
        for a, text in dis[max(0, (k or 0) - 6): (k or 0) + 1]:
            print(f"           {'>' if a == addr else ' '} {a - fn_start:#6x}  {text}")


if __name__ == "__main__":
    main()
