"""Layers 5-6: whole games and batches in the kernel equal the reference's games.

``play_game`` must leave the very same final position (every deck, token and
counter, the stream counters included); ``simulate_batch`` rows must rebuild
the reference's GameRecords field for field, whatever the batch size and the
thread count.
"""

import numpy as np
import pytest

import strategies
from sim.kernel import layout
from sim.kernel.batch import records, run_batch
from sim.kernel.game import play_game as k_play_game
from sim.kernel.movement import move_capacity
from sim.rules import Settings, play_game
from tests.kernel_support import (
    NO_JIT,
    STRATEGY_NAMES,
    VARIANTS,
    assert_same,
    content_and_pack,
    kernel_bundle,
    kernel_context,
    n_cases,
    new_rng_state,
)


@pytest.mark.parametrize("players", [1, 2, 3, 4, 5, 6])
def test_play_game_final_position_matches_reference(players):
    c, pk = content_and_pack()
    kp = kernel_bundle()
    st, rs = layout.new_state(pk), new_rng_state()
    moves = np.zeros((move_capacity(pk), 4), dtype=np.int64)
    for game in range(n_cases(40, 1)):
        name = STRATEGY_NAMES[game % len(STRATEGY_NAMES)]
        variant = VARIANTS[(game // len(STRATEGY_NAMES)) % len(VARIANTS)]
        s = Settings.build(c, players, None, variant)
        sid, prm = layout.strategy_vector(strategies.make(name))
        _rec, g = play_game(c, s, [strategies.make(name) for _ in range(players)], 23, game)
        k_play_game(kernel_context(pk=kp, cfg=layout.settings_vector(c, s), st=st, rs=rs, sid=sid, prm=prm), 23, game, moves)
        assert_same(g, st, rs, f"players {players}, {name}, {variant}, game {game}")


@pytest.mark.parametrize("players", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("name", STRATEGY_NAMES)
def test_batch_rows_equal_reference_records(players, name):
    c, _ = content_and_pack()
    n = n_cases(100, 1)
    variant = VARIANTS[(players + STRATEGY_NAMES.index(name)) % len(VARIANTS)]
    s = Settings.build(c, players, None, variant)
    seed = 2024
    rows = run_batch(c, s, strategies.make(name), seed, 5, n)
    got = records(c, s, name, rows)
    for i, rec in enumerate(got):
        ref, _g = play_game(c, s, [strategies.make(name) for _ in range(players)], seed, 5 + i)
        assert rec == ref, f"game {5 + i}"


@pytest.mark.skipif(NO_JIT, reason="thread counts mean nothing without JIT")
def test_batch_independent_of_batch_size_and_threads():
    c, _ = content_and_pack()
    s = Settings.build(c, 3, None, "dirty")
    strat = strategies.make("bold")
    whole = run_batch(c, s, strat, 99, 1000, 64)
    parts = np.vstack(
        [
            run_batch(c, s, strat, 99, 1000 + a, b - a)
            for a, b in ((0, 1), (1, 8), (8, 41), (41, 64))
        ]
    )
    assert np.array_equal(whole, parts)
    for threads in (1, 2, 3, 7):
        assert np.array_equal(whole, run_batch(c, s, strat, 99, 1000, 64, threads=threads)), threads
    assert run_batch(c, s, strat, 99, 0, 0).shape == (0, whole.shape[1])


@pytest.mark.skipif(NO_JIT, reason="thread counts mean nothing without JIT")
def test_threads_taking_small_chunks_give_the_same_rows(monkeypatch):
    """Worker threads take chunks of games as they come free: many small chunks, the same rows;
    with a sink, each chunk's rows are handed over in the thread that played it, and none kept."""
    import threading

    from sim.kernel import batch

    c, _ = content_and_pack()
    s = Settings.build(c, 4)
    strat = strategies.make("heuristic")
    whole = run_batch(c, s, strat, 7, 300, 61)
    calls = []
    real = batch.simulate_batch

    def counted(pk, cfg, sid, prm, seed, game0, n, out, offsets, *work):
        calls.append((game0, n))
        return real(pk, cfg, sid, prm, seed, game0, n, out, offsets, *work)

    monkeypatch.setattr(batch, "CHUNK_MIN", 4)
    monkeypatch.setattr(batch, "simulate_batch", counted)
    chunks = [(lo, min(lo + 4, 61)) for lo in range(0, 61, 4)]
    for threads in (1, 2, 3):
        calls.clear()
        assert np.array_equal(whole, run_batch(c, s, strat, 7, 300, 61, threads=threads)), threads
        assert sorted(calls) == [(300 + lo, hi - lo) for lo, hi in chunks]
        got = np.full_like(whole, -99)
        seen, where = [], set()

        def sink(lo, hi, rows, got=got, seen=seen, where=where):
            seen.append((lo, hi))
            where.add(threading.get_ident())
            got[lo:hi] = rows

        assert run_batch(c, s, strat, 7, 300, 61, threads=threads, sink=sink) is None
        assert np.array_equal(got, whole), threads
        assert sorted(seen) == chunks, threads
        assert (threading.get_ident() in where) == (threads == 1), threads  # played in the caller's thread


def test_each_thread_gets_a_private_copy_of_the_bundle():
    """A worker thread's bundle holds the same arrays as the first, in memory of its own."""
    from sim.content import load
    from sim.kernel.batch import bundle

    c = load().for_players(3)
    first, _ = bundle(c)
    fresh = layout.pack(c)
    for k in (1, 2):
        pk, kernel = bundle(c, k)
        assert kernel is not None and pk is not first and bundle(c, k)[0] is pk  # cached per copy
        for name, a, b, packed in zip(first._fields, first, pk, fresh):
            assert a.dtype == b.dtype and np.array_equal(a, b) and np.array_equal(b, packed), name
            assert not np.shares_memory(a, b), name


def test_rows_into_a_given_array_and_a_wrong_one_refused():
    c, _ = content_and_pack()
    s = Settings.build(c, 2)
    strat = strategies.make("heuristic")
    whole = run_batch(c, s, strat, 7, 300, 30)
    buf = np.full((40, whole.shape[1]), -5, dtype=np.int64)
    assert run_batch(c, s, strat, 7, 300, 30, out=buf[:30]) is not None
    assert np.array_equal(buf[:30], whole) and (buf[30:] == -5).all()
    for bad in (buf[:29], buf[:30, :-1], buf[:30].astype(np.int32), buf[::-1][:30]):
        with pytest.raises(ValueError, match="out must be a C-contiguous int64 array"):
            run_batch(c, s, strat, 7, 300, 30, out=bad)
    with pytest.raises(ValueError, match="a sink or an out array, not both"):
        run_batch(c, s, strat, 7, 300, 30, out=buf[:30], sink=lambda lo, hi, rows: None)


@pytest.mark.skipif(NO_JIT, reason="thread counts mean nothing without JIT")
def test_an_error_in_one_thread_stops_the_others(monkeypatch):
    """The first chunk fails: the error reaches the caller, and the other threads take no more chunks. No timing:
    each other chunk lasts until the run's stop is set (a hang guard aside), so a thread that went on taking
    chunks after it would show here as a third call."""
    import threading
    import types

    from sim.kernel import batch

    c, _ = content_and_pack()
    s = Settings.build(c, 4)
    calls = []
    stops = []

    class Stop(threading.Event):  # run_batch's stop event, seen by the chunks
        def __init__(self):
            super().__init__()
            stops.append(self)

    def failing(pk, cfg, sid, prm, seed, game0, n, out, offsets, *work):
        calls.append(game0)
        if game0 == 0:
            raise RuntimeError("a kernel error in the first chunk")
        assert stops[0].wait(120)  # a hang guard, not a timing: the chunk ends once the run is stopped

    monkeypatch.setattr(batch, "CHUNK_MIN", 4)
    monkeypatch.setattr(batch, "simulate_batch", failing)
    monkeypatch.setattr(batch, "threading", types.SimpleNamespace(Lock=threading.Lock, Event=Stop))
    with pytest.raises(RuntimeError, match="first chunk"):
        run_batch(c, s, strategies.make("heuristic"), 7, 0, 400, threads=2)
    assert 0 in calls and len(calls) <= 2, calls  # of 100 chunks: the failing one, and the other thread's one


@pytest.mark.slow
@pytest.mark.skipif(NO_JIT, reason="already running without JIT")
def test_kernel_tests_pass_without_jit():
    """The kernel is also plain Python: its equality tests pass with NUMBA_DISABLE_JIT=1."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    tests = sorted(str(p) for p in (root / "tests").glob("test_kernel_*.py"))
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@pytest.mark.skipif(NO_JIT, reason="nothing is compiled without JIT")
def test_a_cold_starts_helper_puts_the_bundles_conversion_and_the_outputs_passes_in_the_cache(tmp_path):
    """The encounter phase's helper also compiles ``kernel_pack``'s conversion and the passes that turn rows into
    a table or a tally into the cache, so the process that plays loads them rather than compiling them after the
    helpers are done (about 4 s and 1.5 s from an empty cache)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    code = "from sim.kernel.batch import compile_bundle, compile_outputs; compile_bundle(); compile_outputs()"
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-3000:]
    cached = sorted(p.name for p in tmp_path.rglob("*.nbi"))
    for name in ("packref._to_ref-", "run._table_rows-", "tally._scan_rows-", "tally._sum_rows-"):
        assert any(c.startswith(name) for c in cached), (name, cached)
    assert not any(name.startswith("game.") for name in cached), cached  # the bundle only, not the kernel


@pytest.mark.skipif(NO_JIT, reason="nothing is compiled without JIT")
def test_the_outputs_passes_a_cold_start_compiles_are_the_ones_a_run_calls(monkeypatch):
    """What :func:`compile_outputs` compiles (each pass through its own code, on no games) is what a table and a
    summary then call: after it, ``sim.simulate``'s table and a summary-only run compile no other version. (Fresh
    dispatchers of the same functions, so that versions compiled by other tests do not count.)"""
    import sim
    from sim import run, tally
    from sim.jit import jit
    from sim.kernel import batch

    fresh, calls = {}, []
    for module, name in ((run, "_table_rows"), (tally, "_scan_rows"), (tally, "_sum_rows")):
        fresh[name] = jit(getattr(module, name).py_func)

        def counted(*args, name=name):
            calls.append(name)
            return fresh[name](*args)

        monkeypatch.setattr(module, name, counted)
    batch.compile_outputs()
    compiled = {name: list(f.signatures) for name, f in fresh.items()}
    assert all(len(sigs) == 1 for sigs in compiled.values()), compiled
    calls.clear()
    table = sim.simulate(players=3, games=5, seed=2)
    summary = sim.simulate(players=5, games=5, seed=2, summary_only=True)
    assert table.height == 5 and summary["games"] == 5
    assert set(calls) == set(fresh)  # the runs called each of them
    assert {name: list(f.signatures) for name, f in fresh.items()} == compiled


def test_a_cold_starts_helpers_share_the_parts_and_the_entry_point_waits_for_the_other_one(monkeypatch):
    """The two helpers: one compiles the encounter phase and the phases sharing its callees, then signals the
    other and compiles the bundle's conversion; the other compiles the effects of encounter cards and the other
    phases and, after the signal (or the first helper's end), the entry point. Between them they compile every
    phase ``play_game`` calls, each once. (Compiles recorded, not run.)"""
    import collections
    import os

    from sim.kernel import batch

    done = []

    def compile_part(module, name, args):
        done.append(name)

    monkeypatch.setattr(batch, "compile_part", compile_part)
    monkeypatch.setattr(batch, "compile_bundle", lambda: compile_part("packref", "bundle", ()))
    monkeypatch.setattr(batch, "compile_outputs", lambda: compile_part("run", "outputs", ()))
    helper_parts = [name for _, name, _ in batch.HELPER_PARTS]
    own_parts = [name for _, name, _ in batch.OWN_PARTS]

    class Ends:
        """The pipe's ends as batch's os sees them: each use recorded among the compiles."""

        def read(self, fd, n):
            done.append(("read", fd, n))
            return b"1"

        def write(self, fd, data):
            done.append(("write", fd, data))
            return len(data)

        def close(self, fd):
            done.append(("close", fd))

    with monkeypatch.context() as mp:  # the order: each helper's parts, then its use of the pipe, then the rest
        mp.setattr(batch, "os", Ends())
        batch.compile_rest(5)
        assert done == [*own_parts, ("read", 5, 1), "simulate_batch"]
        done.clear()
        batch.compile_helper_parts(7)
        assert done == [*helper_parts, ("write", 7, b"1"), ("close", 7), "bundle", "outputs"]
    for ended in (False, True):  # a real pipe: the byte, or the pipe's end when the first helper stopped without it
        done.clear()
        read, write = os.pipe()
        try:
            if ended:
                os.close(write)
            else:
                batch.compile_helper_parts(write)  # writes the byte, closes its end
            write = None
            batch.compile_rest(read)
        finally:
            for fd in (read, write):
                if fd is not None:
                    os.close(fd)
        expected = own_parts + ["simulate_batch"] + ([] if ended else helper_parts + ["bundle", "outputs"])
        assert collections.Counter(done) == collections.Counter(expected) and done[-1] == "simulate_batch"
    # the parts are what the entry point's game calls: every phase, the set-up and the output row
    import ast
    import inspect

    from sim.kernel import game

    tree = ast.parse(inspect.getsource(game))
    called = {node.func.id for fn in tree.body if isinstance(fn, ast.FunctionDef)
              and fn.name in ("play_turn", "play_game", "simulate_batch")
              for node in ast.walk(fn) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    parts = {name for _, name, _ in batch.HELPER_PARTS + batch.OWN_PARTS}
    # (and the effects of encounter cards, compiled ahead by the other helper for the encounter phase's)
    assert parts - called == {"apply_effect"} and {name for name in called if name.endswith("_phase")} <= parts
    assert {"setup_game", "start_of_turn", "mission_reward", "record"} <= parts

    # and a cold start starts them so: the first one's standard output is the second one's standard input
    started = []

    class Pipe:
        closed = False

        def close(self):
            self.closed = True

    class Popen:
        def __init__(self, args, stdin=None, stdout=None, stderr=None):
            self.code, self.stdin = args[-1], stdin
            self.stdout = Pipe() if stdout == subprocess.PIPE else None
            started.append(self)

        def wait(self, timeout=None):
            waits.append(("wait", self.code))
            self.returncode = 0
            return 0

        def poll(self):
            return getattr(self, "returncode", None)

        def kill(self):
            waits.append(("kill", self.code))

    import subprocess
    import types

    monkeypatch.setattr(subprocess, "Popen", Popen)
    monkeypatch.setattr("sim._cache.is_compiled", lambda: False)
    monkeypatch.setattr(batch, "simulate_batch", types.SimpleNamespace(overloads={}))
    waits = []
    for cores in (2, 1):
        started.clear()
        waits.clear()
        monkeypatch.setattr(os, "cpu_count", lambda cores=cores: cores)
        batch._compile_cold_in_helpers(meanwhile=lambda: waits.append("meanwhile"))
        if cores == 1:  # one helper: every part, the entry point compiling what it finds missing
            (only,) = started
            assert only.code.endswith("compile_rest()") and only.stdin is None
            assert waits == [("wait", only.code)]  # (the caller then loads the bundle itself)
            continue
        first, second = started
        assert "os.dup2(" in first.code and first.code.endswith("compile_helper_parts(said)")
        assert second.code.endswith("compile_rest(0)") and second.stdin is first.stdout and first.stdout.closed
        # this process loads the bundle's conversion once the first has ended, while the second still compiles
        assert waits == [("wait", first.code), "meanwhile", ("wait", second.code)]
    # an error there (or Ctrl-C) leaves no helper compiling unwaited for: the second is stopped and waited for
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    started.clear()
    waits.clear()

    def failing():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        batch._compile_cold_in_helpers(meanwhile=failing)
    first, second = started
    assert waits == [("wait", first.code), ("kill", second.code), ("wait", second.code)]


@pytest.mark.skipif(NO_JIT, reason="the sizes are checked by the compiled kernel")
def test_the_kernel_refuses_work_arrays_of_other_sizes_and_too_few_rows():
    """``simulate_batch`` plays in the caller's work arrays (it allocates no arrays): one of another size, which the
    kernel would write past without bounds checks, an ``out`` with fewer rows than games or narrower rows, or
    offsets not one per source is refused; the arrays of ``work_arrays`` play the games ``run_batch`` plays,
    whatever they held before."""
    from sim.kernel.batch import bundle
    from sim.kernel.game import simulate_batch, work_arrays
    from sim.rng import N_SOURCES

    c, _ = content_and_pack()
    s = Settings.build(c, 3)
    c3 = c.for_players(3)
    pk, kp = bundle(c3)
    cfg = layout.settings_vector(c3, s)
    sid, prm = layout.team_vectors([strategies.make("heuristic")] * 3)
    offsets = np.zeros(N_SOURCES, np.int64)
    out = np.zeros((5, layout.row_width(pk)), np.int64)
    st, rs, moves = work_arrays(pk)
    for bad in ((st[:-1], rs, moves), (st, rs[:-1], moves), (st, rs, moves[:-1]),
                (st, rs, np.zeros((moves.shape[0], 3), np.int64))):
        with pytest.raises(ValueError, match="work arrays not of the bundle's sizes"):
            simulate_batch(kp, cfg, sid, prm, 3, 0, 5, out, offsets, *bad)
    with pytest.raises(ValueError, match="out has fewer rows than games, or rows narrower than the bundle's"):
        simulate_batch(kp, cfg, sid, prm, 3, 0, 6, out, offsets, st, rs, moves)
    with pytest.raises(ValueError, match="out has fewer rows than games, or rows narrower than the bundle's"):
        simulate_batch(kp, cfg, sid, prm, 3, 0, 5, np.zeros((5, out.shape[1] - 1), np.int64), offsets, st, rs, moves)
    with pytest.raises(ValueError, match="offsets must hold one int per random source"):
        simulate_batch(kp, cfg, sid, prm, 3, 0, 5, out, offsets[:-1], st, rs, moves)
    for a in (st, rs, moves):
        a.fill(7)  # left over from another batch: cleared
    simulate_batch(kp, cfg, sid, prm, 3, 0, 5, out, offsets, st, rs, moves)
    assert np.array_equal(out, run_batch(c, s, strategies.make("heuristic"), 3, 0, 5))
