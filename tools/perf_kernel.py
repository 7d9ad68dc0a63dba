"""Profile the kernel with Linux ``perf``: play games, then name numba's code for perf.

numba's JIT code has no symbols that perf can see (this llvmlite has no perf map
support), so after playing this script writes ``/tmp/perf-<pid>.map``: every
function of every compiled kernel library at its address, sized by the gap to
the next one. Usage (4-player heuristic games, one thread):

    perf record -F 2000 -o /tmp/kernel.perf -- .venv/bin/python tools/perf_kernel.py --games 300000
    perf report -i /tmp/kernel.perf --stdio --no-children --sort sym | head -60

Call graphs are not usable (numba's code keeps no frame pointers); the self time
of each function that LLVM did not inline is. ``--summary`` prints the map's
functions grouped by kernel module instead of the raw names.
"""

from __future__ import annotations

import argparse
import os
import re
import struct
import sys
import time

_OBJECTS: dict[str, bytes] = {}


def _keep_object_code() -> None:
    """Keep a copy of each library's object code as numba loads or compiles it (for its symbol table)."""
    from numba.core import codegen

    orig = codegen.CPUCodeLibrary._set_compiled_object

    def hook(self, value):
        _OBJECTS[self._name] = bytes(value)
        return orig(self, value)

    codegen.CPUCodeLibrary._set_compiled_object = hook


def _libraries():
    """Every compiled library of the kernel and its twins (one per compiled signature)."""
    from numba.core.registry import CPUDispatcher

    seen = set()
    for name, mod in list(sys.modules.items()):
        if not (name.startswith("sim") or name.startswith("strategies")):
            continue
        for obj in list(vars(mod).values()):
            if isinstance(obj, CPUDispatcher):
                for cres in obj.overloads.values():
                    lib = cres.library
                    if id(lib) not in seen:
                        seen.add(id(lib))
                        yield lib


def _elf_functions(buf: bytes):
    """(name, section index, value, size) of every FUNC symbol of an ELF64 little-endian object."""
    shoff, = struct.unpack_from("<Q", buf, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", buf, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", buf, shoff + i * shentsize) for i in range(shnum)]
    for sh in sections:
        if sh[1] != 2:  # SHT_SYMTAB
            continue
        strtab = sections[sh[6]]
        for k in range(sh[5] // 24):
            st_name, st_info, _other, st_shndx, st_value, st_size = struct.unpack_from("<IBBHQQ", buf, sh[4] + 24 * k)
            if st_info & 0xF != 2 or not st_size:  # STT_FUNC
                continue
            s = strtab[4] + st_name
            yield buf[s : buf.index(b"\0", s)].decode(), st_shndx, st_value, st_size


def _demangle(name: str) -> str:
    """A readable name: ``_ZN3sim6kernel5decks9draw_cardB..`` -> ``sim.kernel.decks.draw_card``."""
    if not name.startswith("_ZN"):
        return name
    parts, i = [], 3
    while i < len(name) and name[i].isdigit():
        m = re.match(r"\d+", name[i:])
        n = int(m.group())
        i += len(m.group())
        parts.append(name[i : i + n])
        i += n
    return ".".join(p for p in parts if p) or name


def write_perf_map() -> str:
    """Write /tmp/perf-<pid>.map: each function of the kernel's object code at its loaded address."""
    rows = []
    for lib in _libraries():
        buf = _OBJECTS.get(lib._name)
        if buf is None:
            continue
        funcs = list(_elf_functions(buf))
        base = {}  # section -> load address, from the symbols the JIT engine can name
        for name, shndx, value, _size in funcs:
            if shndx not in base:
                addr = lib._codegen._engine.get_function_address(name)
                if addr:
                    base[shndx] = addr - value
        for name, shndx, value, size in funcs:
            if shndx in base:
                rows.append((base[shndx] + value, size, _demangle(name)))
    path = f"/tmp/perf-{os.getpid()}.map"
    with open(path, "w") as out:
        for addr, size, name in sorted(rows):
            out.write(f"{addr:x} {size:x} {name}\n")
    if os.environ.get("PERF_KERNEL_CODE"):  # each function's machine code, for tools/perf_annotate.py
        import ctypes

        with open(os.environ["PERF_KERNEL_CODE"], "wb") as out:
            for addr, size, _name in sorted(rows):
                out.write(struct.pack("<QQ", addr, size) + ctypes.string_at(addr, size))
    return path


def phase_profile(players: int, strategy: str, seed: int, games: int) -> dict:
    """Cycles per phase from the tool's own copy of the turn loop (sim.kernel.game), timed with rdtsc.

    (The copy follows the status-card rules, RULES_VERSION 3: a lost turn is its villain phase.)

    The loop calls the kernel's own phase functions in the kernel's order, and its rows
    are checked equal to ``simulate_batch``'s; each timer costs ~25 cycles (subtracted).
    """
    import numpy as np
    from llvmlite import ir
    from numba import njit, types
    from numba.core.extending import intrinsic

    import strategies
    from sim.content import constants as codes
    from sim.content import load
    from sim.kernel import layout
    from sim.kernel.batch import bundle
    from sim.kernel.decks import discard_status, player_base, status_first_held
    from sim.kernel.encounters import encounter_phase
    from sim.kernel.game import record, simulate_batch, start_of_turn, work_arrays
    from sim.kernel.layout import (
        C_PLAYERS,
        K_N_SPACES,
        K_TURN_CAP,
        L_SIZE,
        P_RESTED,
        S_ACTIVE,
        S_DICE_RES,
        S_MOVE_RES,
        S_OUTCOME,
        S_TURN,
        S_WATCHED,
    )
    from sim.kernel.missions import mission_reward
    from sim.kernel.movement import MOVES_PER_SPACE, movement_phase
    from sim.kernel.packref import new_context
    from sim.kernel.setup import setup_game
    from sim.kernel.villain import villain_phase
    from sim.rng import N_SOURCES, STATE_SIZE
    from sim.rules.state import Settings

    @intrinsic
    def cycles(typingctx):
        def codegen(context, builder, sig, args):
            fn = builder.module.declare_intrinsic("llvm.readcyclecounter", fnty=ir.FunctionType(ir.IntType(64), []))
            return builder.call(fn, [])

        return types.int64(), codegen

    names = ("setup", "start of turn", "movement", "encounter", "villain", "mission reward", "record", "loop/timers")

    @njit(nogil=True)
    def run(pk, cfg, sid, prm, seed, game0, n_games, out, acc):
        st = np.zeros(pk.lay[L_SIZE], np.int64)
        rs = np.zeros(STATE_SIZE, np.int64)
        moves = np.zeros((1 + MOVES_PER_SPACE * pk.scal[K_N_SPACES], 4), np.int64)
        ctx = new_context(pk, cfg, st, rs, sid, prm)
        t_all = cycles()
        for i in range(n_games):
            game = game0 + i
            t0 = cycles()
            setup_game(ctx, seed, game)
            t1 = cycles()
            acc[0] += t1 - t0
            n = cfg[C_PLAYERS]
            seat = 0
            cap = pk.scal[K_TURN_CAP]
            while True:
                if st[S_TURN] >= cap:
                    st[S_OUTCOME] = codes.TIMEOUT
                    break
                st[S_TURN] += 1
                st[S_ACTIVE] = seat
                st[S_DICE_RES] = 0
                st[S_MOVE_RES] = 0
                st[S_WATCHED] = -1
                card = status_first_held(pk, st, seat, codes.SE_LOSE_TURN)
                if card >= 0:  # a lose_turn status card: the villain phase only
                    t0 = cycles()
                    discard_status(pk, st, card)
                    villain_phase(ctx, 1)
                    acc[4] += cycles() - t0
                    acc[9] += 1
                    if st[S_OUTCOME] >= 0:
                        break
                    seat = (seat + 1) % n
                    continue
                t0 = cycles()
                start_of_turn(ctx, seat)
                t1 = cycles()
                rested = movement_phase(ctx, seat, moves)
                t2 = cycles()
                acc[1] += t1 - t0
                acc[2] += t2 - t1
                acc[9] += 1
                if st[S_OUTCOME] >= 0:
                    break
                st[player_base(pk, seat) + P_RESTED] = 1 if rested else 0
                if not rested:
                    t0 = cycles()
                    encounter_phase(ctx, seat)
                    acc[3] += cycles() - t0
                    if st[S_OUTCOME] >= 0:
                        break
                t0 = cycles()
                villain_phase(ctx, 2 if rested else 1)
                t1 = cycles()
                mission_reward(ctx, seat)
                t2 = cycles()
                acc[4] += t1 - t0
                acc[5] += t2 - t1
                if st[S_OUTCOME] >= 0:
                    break
                seat = (seat + 1) % n
            t0 = cycles()
            record(ctx, seed, game, out[i])
            acc[6] += cycles() - t0
        acc[8] += cycles() - t_all
        # the cost of one timer read, measured here
        t0 = cycles()
        for _ in range(1000):
            acc[10] += cycles()
        acc[11] = (cycles() - t0) // 1000

    content = load()
    settings = Settings.build(content, players)
    content = content.for_players(players)
    team = [strategies.make(strategy, players=players) for _ in range(players)]
    sid, prm = layout.team_vectors(team)
    pk, kp = bundle(content)
    cfg = layout.settings_vector(content, settings)
    offsets = np.zeros(N_SOURCES, np.int64)
    out = np.zeros((games, layout.row_width(pk)), np.int64)
    acc = np.zeros(12, np.int64)
    run(kp, cfg, sid, prm, seed, 0, 10, out[:10], acc)  # compile
    acc[:] = 0
    t = time.perf_counter()
    run(kp, cfg, sid, prm, seed, 0, games, out, acc)
    wall = time.perf_counter() - t
    ref = np.zeros_like(out)
    simulate_batch(kp, cfg, sid, prm, seed, 0, games, ref, offsets, *work_arrays(pk))
    assert np.array_equal(out, ref), "the profiling loop played other games than simulate_batch"
    turns = int(acc[9])
    timer = int(acc[11])
    timed = {0: games, 1: turns, 2: turns, 6: games}
    per_phase = {}
    for k in range(7):
        calls = timed.get(k, turns)  # encounter/villain/mission: about one per turn; overhead estimate
        per_phase[names[k]] = max(0, int(acc[k]) - timer * calls)
    per_phase[names[7]] = int(acc[8]) - sum(per_phase.values())
    total = int(acc[8])
    return {"games": games, "turns": turns, "wall_s": wall, "cycles_total": total, "timer_cycles": timer,
            "cycles": per_phase, "cycles_per_ns": total / wall / 1e9}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=300_000)
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--strategy", default="heuristic")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--phases", action="store_true", help="time each phase of the turn loop (rdtsc) instead")
    args = ap.parse_args()
    if args.phases:
        r = phase_profile(args.players, args.strategy, args.seed, args.games)
        ghz = r["cycles_per_ns"]
        print(f"{r['games']} games, {r['turns']} player turns ({r['turns'] / r['games']:.1f} a game), "
              f"{r['wall_s']:.2f} s with timers; TSC {ghz:.2f} GHz; one timer read {r['timer_cycles']} cycles")
        print(f"{'phase':<16} {'share':>6} {'ns/game':>8} {'ns/turn':>8}")
        for name, c in r["cycles"].items():
            print(f"{name:<16} {100 * c / r['cycles_total']:>5.1f}% {c / ghz / r['games']:>8.0f} "
                  f"{c / ghz / r['turns']:>8.1f}")
        print(f"{'total':<16} {100.0:>5.1f}% {r['cycles_total'] / ghz / r['games']:>8.0f} "
              f"{r['cycles_total'] / ghz / r['turns']:>8.1f}")
        return
    _keep_object_code()
    import sim

    sim.simulate(players=args.players, games=10, seed=args.seed, strategy=args.strategy)  # load/compile
    t0 = time.perf_counter()
    sim.simulate(players=args.players, games=args.games, seed=args.seed, strategy=args.strategy, threads=1,
                 summary_only=True)
    dt = time.perf_counter() - t0
    path = write_perf_map()
    print(f"{args.games} games in {dt:.2f} s ({args.games / dt:,.0f} games/s); perf map {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
