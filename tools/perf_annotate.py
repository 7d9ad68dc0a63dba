"""Hot instructions of one compiled kernel function, from a ``perf record`` of ``perf_kernel.py``.

    PERF_KERNEL_CODE=/tmp/kernel.code perf record -F 4000 -o /tmp/kernel.perf -- \\
        .venv/bin/python tools/perf_kernel.py --games 300000
    .venv/bin/python tools/perf_annotate.py /tmp/kernel.perf /tmp/kernel.code dice_test

prints the function's disassembly (objdump) with the share of its samples at each
instruction (perf's own ``annotate`` cannot read JIT code that has no file).
"""

from __future__ import annotations

import argparse
import collections
import struct
import subprocess
import tempfile


def read_code(path: str) -> list[tuple[int, int, bytes]]:
    """(address, size, machine code) of each function in a ``PERF_KERNEL_CODE`` dump of ``perf_kernel.py``."""
    with open(path, "rb") as f:
        buf = f.read()
    funcs, i = [], 0
    while i < len(buf):
        addr, size = struct.unpack_from("<QQ", buf, i)
        funcs.append((addr, size, buf[i + 16 : i + 16 + size]))
        i += 16 + size
    return funcs


def disassemble(addr: int, code: bytes) -> list[tuple[int, str]]:
    """(address, instruction) of a function's machine code, by objdump."""
    with tempfile.NamedTemporaryFile(suffix=".bin") as tmp:
        tmp.write(code)
        tmp.flush()
        dis = subprocess.run(["objdump", "-D", "-b", "binary", "-m", "i386:x86-64", "--no-show-raw-insn",
                              f"--adjust-vma={addr:#x}", tmp.name], capture_output=True, text=True).stdout
    out = []
    for line in dis.splitlines():
        head, _, text = line.partition(":")
        try:
            out.append((int(head.strip(), 16), text.strip()))
        except ValueError:
            continue
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("perf_data")
    ap.add_argument("code", help="the file PERF_KERNEL_CODE named")
    ap.add_argument("function", help="a part of the function's name (e.g. dice_test)")
    ap.add_argument("--min", type=float, default=0.2, help="show instructions with at least this %% of samples")
    args = ap.parse_args()
    funcs = read_code(args.code)
    script = subprocess.run(["perf", "script", "-i", args.perf_data, "-F", "ip,sym"], capture_output=True,
                            text=True).stdout
    hits = collections.Counter()
    total = 0
    for line in script.splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2 and args.function in parts[1]:
            hits[int(parts[0], 16)] += 1
            total += 1
    if not total:
        raise SystemExit(f"no samples in a function named like {args.function!r}")
    first = min(hits)
    addr, size, code = next(f for f in funcs if f[0] <= first < f[0] + f[1])
    print(f"{total} samples, function at {addr:#x}, {size} bytes")
    for a, text in disassemble(addr, code):
        n = hits.get(a, 0)
        pct = 100 * n / total
        mark = f"{pct:5.1f}%" if n else "      "
        if pct >= args.min or "j" in text[:8]:
            print(f"{mark} {a:x}:\t{text}")


if __name__ == "__main__":
    main()
