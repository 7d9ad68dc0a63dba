"""Python side of the kernel's batch entry: validate, build arrays, run, rebuild records.

``run_batch(content, settings, strategy, seed, game0, n_games)`` plays games
``game0 .. game0 + n_games - 1`` with :func:`sim.kernel.game.simulate_batch`
and returns the int64 rows; :func:`records` turns rows into the reference's
:class:`~sim.rules.game.GameRecord` objects (strings rebuilt here).
"""

from __future__ import annotations

import os
import threading

import numpy as np

from sim.content import Content
from sim.kernel import layout
from sim.kernel.game import simulate_batch, work_arrays
from sim.kernel.packref import kernel_pack
from sim.rng import N_SOURCES, check_seed
from sim.rules.game import GameRecord
from sim.rules.state import OUTCOME_NAMES, Outcome, Settings

_BUNDLES: dict[int, tuple] = {}
# games per chunk a thread plays: about CHUNKS_PER_THREAD chunks a thread, within these bounds.
# Small chunks: at the end one thread waits for the other's last chunk, half a chunk on average
# (8 chunks a thread: 141,956 games/s on 2 threads; 256: 144,268, means of 8 runs of 200,000
# games); a chunk costs one call into the kernel, its game context allocated anew (some microseconds).
CHUNK_MIN, CHUNK_MAX, CHUNKS_PER_THREAD = 100, 20_000, 256


def bundle(content: Content, copy: int = 0):
    """(namedtuple Pack, kernel bundle) of a content pack, cached per pack object.

    ``copy`` k > 0 gives the k-th private copy (own arrays), one per worker thread.
    """
    key = (id(content), copy)
    hit = _BUNDLES.get(key)
    if hit is None or hit[0] is not content:
        if copy == 0:
            pk = layout.pack(content)
        else:  # copy 0's arrays copied (packing the content again took ~0.13 s, a thread at a time)
            base, _ = bundle(content, 0)
            pk = type(base)(*(np.array(a, copy=True) for a in base))
        hit = (content, pk, kernel_pack(pk))
        _BUNDLES[key] = hit
    return hit[1], hit[2]


# --- a cold start: the kernel compiled by helper processes, then loaded from the cache ------------
# numba compiles one function at a time. With an empty cache, two helper processes share the kernel's
# parts and put them in the shared on-disk cache. One compiles the encounter phase (about 40% of the
# kernel) and the phases that share most of its callees, then the bundle's conversion and the passes that turn
# rows into a table or a tally (which this process would otherwise compile after the helpers). The other compiles
# first the effects of encounter cards, which the encounter phase reaches only after its skill tests (so
# it finds them in the cache), then the other phases; it then waits for the first one's parts (a byte on a
# pipe, or its end if that helper stops) and compiles the entry point, which loads every part from the
# cache and optimizes the whole kernel at once (sim.jit). This process then loads the whole kernel from
# the cache: kernel code compiled in the process that plays ran 7-11% slower than the same code loaded
# from the cache (56,177 against 62,527 games/s in one run), so even one core gains. The same code
# either way: only who compiles it differs.
HELPER_PARTS = (
    ("encounters", "encounter_phase", ("ctx", "int")),
    ("villain", "villain_phase", ("ctx", "int")),  # villain_advancement: the encounter phase's dice test has it
    ("missions", "mission_reward", ("ctx", "int")),
    ("game", "record", ("ctx", "int", "int", "row")),
    ("game", "start_of_turn", ("ctx", "int")),
)
OWN_PARTS = (
    ("encounters", "apply_effect", ("ctx", "int", "int", "int", "int")),  # first: the other helper then finds it
    ("setup", "setup_game", ("ctx", "int", "int")),
    ("movement", "movement_phase", ("ctx", "int", "moves")),
)


def compile_part(module: str, name: str, args: tuple) -> None:
    """Compile one kernel function (and all it calls) for the kernel's argument types, into the cache.
    A part other than the entry point is compiled as a callee (``sim.jit.callee_part``): the entry point
    optimizes it whole where it links it in."""
    import contextlib
    import importlib

    from numba import types

    from sim.jit import callee_part
    from sim.kernel.packref import CONTEXT_TYPE, PACK_TYPE

    ints, rows = types.Array(types.int64, 1, "C"), types.Array(types.int64, 2, "C")
    kinds = {"ctx": CONTEXT_TYPE, "int": types.int64, "moves": rows, "row": ints, "pack": PACK_TYPE, "ints": ints,
             "rows": rows, "params": types.Array(types.float64, 2, "C")}
    with contextlib.nullcontext() if (module, name) == ENTRY[:2] else callee_part():
        importlib.import_module(f"sim.kernel.{module}").__dict__[name].compile(tuple(kinds[a] for a in args))


# simulate_batch(pk, cfg, sid, prm, seed, game0, n_games, out, offsets, st, rs, moves)
ENTRY = ("game", "simulate_batch", ("pack", "ints", "ints", "params", "int", "int", "int", "rows", "ints", "ints", "ints",
                                    "rows"))


def compile_bundle() -> None:
    """Compile what turns a packed bundle into the kernel's (:func:`sim.kernel.packref.kernel_pack`), for the
    default pack (every pack's bundle has the same type), into the cache."""
    from sim.content import load

    kernel_pack(layout.pack(load()))


def compile_outputs() -> None:
    """Compile what turns played rows into a run's results, into the cache: the per-game table's copy
    (:meth:`sim.run.KernelTable.take`, ``sim.simulate``'s) and a summary's two passes (:meth:`sim.tally.Tally.of_rows`,
    a study's), each through its own code on no games, so with the argument types a run gives them."""
    from sim.content import load
    from sim.run import KernelTable
    from sim.tally import Tally

    content = load().for_players(4)
    no_rows = np.zeros((0, layout.row_width(layout.pack(content))), np.int64)
    KernelTable(content, Settings(players=4), 0).take(0, 0, no_rows)
    Tally.of_rows(no_rows, layout.ROW_FIELDS, content.lobo_intel_required)  # (the pack's table: read-only)


def compile_helper_parts(signal: int) -> None:
    """The first helper's part of a cold start: :data:`HELPER_PARTS`; then one byte on the file descriptor
    ``signal`` (a pipe: the other helper waits for it before the entry point), which it then closes; then the
    bundle's conversion and the outputs' passes (:func:`compile_outputs`), while the other compiles the entry
    point."""
    for part in HELPER_PARTS:
        compile_part(*part)
    try:
        os.write(signal, b"1")
    except OSError:  # the other helper has ended: nobody waits
        pass
    os.close(signal)
    compile_bundle()
    compile_outputs()


def compile_rest(wait: int | None = None) -> None:
    """The other helper's part of a cold start: :data:`OWN_PARTS`; then, once the first helper's parts are in
    the cache (a byte on the file descriptor ``wait``, or its end: that helper ended), the entry point. Without
    ``wait`` (one core: the only helper) the entry point compiles the other parts itself, as callees."""
    for part in OWN_PARTS:
        compile_part(*part)
    if wait is not None:
        os.read(wait, 1)
    compile_part(*ENTRY)


def _compile_cold_in_helpers(meanwhile=None) -> None:
    """On an empty cache: compile the kernel in helper processes (two at once with 2+ cores). With two, the first
    one's standard output is the second one's standard input: the first says on it when its parts are done (its own
    prints go to the null device), the second reads it before the entry point. ``meanwhile()``: work of this
    process's own that needs only the first one's (loading the bundle's conversion), done once that one has ended,
    while the other still compiles the entry point."""
    import subprocess
    import sys

    from sim._cache import is_compiled

    if simulate_batch.overloads or is_compiled():
        return
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this checkout's sim
    start = (f"import os, sys; sys.path.insert(0, {root!r}); "
             "from sim.kernel.batch import compile_helper_parts, compile_rest; ")
    quiet = subprocess.DEVNULL
    helpers = []
    try:
        if (os.cpu_count() or 1) < 2:
            helpers.append(subprocess.Popen([sys.executable, "-c", start + "compile_rest()"], stdout=quiet,
                                            stderr=quiet))
        else:
            say = "said = os.dup(1); os.dup2(os.open(os.devnull, os.O_WRONLY), 1); compile_helper_parts(said)"
            first = subprocess.Popen([sys.executable, "-c", start + say], stdout=subprocess.PIPE, stderr=quiet)
            helpers.append(first)
            try:
                helpers.append(subprocess.Popen([sys.executable, "-c", start + "compile_rest(0)"],
                                                stdin=first.stdout, stdout=quiet, stderr=quiet))
            finally:
                first.stdout.close()  # the second helper holds the pipe now: it sees its end when the first ends
    except OSError:
        pass
    try:
        for k, helper in enumerate(helpers):  # whatever they did not put in the cache, this process compiles itself
            try:
                helper.wait(timeout=600)
            except subprocess.TimeoutExpired:
                helper.kill()
                helper.wait()
            if k == 0 and len(helpers) == 2 and meanwhile is not None:
                meanwhile()
    finally:  # meanwhile() failed, or Ctrl-C: no helper is left compiling, unwaited for (numba's cache files are
        for helper in helpers:  # written whole or not at all)
            if helper.poll() is None:
                helper.kill()
                helper.wait()


def default_threads() -> int:
    """Worker threads when none are asked for: numba's configured count (NUMBA_NUM_THREADS)."""
    import numba

    return int(numba.config.NUMBA_NUM_THREADS)


def _naming_refusals(strategy, batch):
    """``batch`` (a KernelStrategy's pairing), its refusal of an illegal answer, or numba's of code
    that does not compile, naming ``strategy``."""
    from numba.core.errors import NumbaError

    def play(*args):
        """The pairing's call; an illegal answer's refusal or a compile failure re-raised with the strategy's name."""
        try:
            return batch(*args)
        except NumbaError as e:  # compiling the pairing (the first call) failed: numba's pages stay chained
            raise strategy.refusal(e) from e
        except ValueError as e:
            named = strategy.refusal(e)
            if named is None:
                raise
            raise named from None

    return play


def run_batch(
    content: Content, settings: Settings, strategy, seed: int, game0: int, n_games: int,
    threads: int | None = None, source_offsets: np.ndarray | None = None, sink=None, out: np.ndarray | None = None,
) -> np.ndarray | None:
    """Rows ``out[n_games, row_width]`` (see ``sim.kernel.layout.ROW_FIELDS``) for one study cell.

    ``strategy`` is a strategy with a kernel twin (``strategies.make(...)``), played by every
    seat, or a list of them, one per seat (a mixed team).
    The games are played in contiguous chunks, each taken by the next thread to come free; a
    game's row depends only on (seed, game index), so the result is the same for any thread
    count. An error in one thread, or Ctrl-C, stops the others after their current chunk.
    ``source_offsets[N_SOURCES]`` (:mod:`sim.luck`): game ``g``'s source ``s`` draws from
    game ``g + source_offsets[s]`` (default: every source from game ``g``).

    With ``sink``, no rows are kept: each thread plays a chunk into a buffer of its own and
    calls ``sink(lo, hi, rows)`` with the rows of games ``game0 + lo .. game0 + hi - 1``, in
    that thread (so the sink must be safe to call from several threads on disjoint ranges,
    and the rows are valid only during the call); ``run_batch`` then returns None.
    ``out``: an int64 array of ``n_games`` rows to fill and return (a caller playing batch
    after batch reuses one, so the pages of a new array are not cleared for every batch).
    """
    from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

    content = content.for_players(settings.players)  # the player count's own Lobo start / villain mix
    if n_games < 0:
        raise ValueError(f"n_games must be >= 0, got {n_games}")
    check_seed(seed, game0 + max(n_games - 1, 0))
    offsets = np.zeros(N_SOURCES, np.int64)
    if source_offsets is not None:
        offsets[:] = np.asarray(source_offsets, dtype=np.int64)
        if offsets.min() < 0:
            raise ValueError("source_offsets must be non-negative")
        check_seed(seed, game0 + max(n_games - 1, 0) + int(offsets.max()))
    threads = default_threads() if threads is None else int(threads)
    if threads < 1:
        raise ValueError(f"threads must be at least 1, got {threads}")
    batch = simulate_batch
    team = list(strategy) if isinstance(strategy, (list, tuple)) else [strategy] * settings.players
    if len(team) != settings.players:
        raise ValueError(f"strategy: {len(team)} strategies for {settings.players} seats")
    custom = [s for s in team if hasattr(s, "batch_function")]
    if custom:  # a KernelStrategy: the base's vector, the user's decisions (one pairing for every seat)
        if any(s is not custom[0] for s in team):
            raise ValueError("a KernelStrategy replaces decisions for every seat: it cannot share a team with "
                             "other strategies; give the same KernelStrategy to every seat")
        batch = _naming_refusals(custom[0], custom[0].batch_function())
        team = [custom[0].base] * settings.players
    sid, prm = layout.team_vectors(team)
    if batch is simulate_batch and hasattr(simulate_batch, "overloads"):  # compiled (not NUMBA_DISABLE_JIT)
        _compile_cold_in_helpers(meanwhile=lambda: bundle(content))  # (then the bundle below is at hand)
    pk, _ = bundle(content)
    cfg = layout.settings_vector(content, settings)
    width = layout.row_width(pk)
    if out is not None:
        if sink is not None:
            raise ValueError("run_batch: give a sink or an out array, not both")
        if out.dtype != np.int64 or out.shape != (n_games, width) or not out.flags.c_contiguous:
            raise ValueError(f"run_batch: out must be a C-contiguous int64 array of shape {(n_games, width)}, "
                             f"got {out.dtype} {out.shape}")
    elif sink is None:
        out = np.zeros((n_games, width), dtype=np.int64)
    threads = max(1, min(threads, n_games))
    # the games are played in chunks: a thread slowed by other work on its core takes fewer (one
    # fixed slice per thread waited for the slowest), and Ctrl-C or an error stops the run at the
    # end of the chunks being played; rows depend only on the game index
    chunk = min(CHUNK_MAX, max(CHUNK_MIN, n_games // (threads * CHUNKS_PER_THREAD)))
    starts = iter(range(0, n_games, chunk))
    take = threading.Lock()
    stop = threading.Event()

    def work(k: int) -> None:
        """Play chunks of the games on this thread's own bundle until none is left (or the run stops)."""
        kp, kpk = bundle(content, k)
        kcfg, kprm = cfg.copy(), prm.copy()
        st, rs, moves = work_arrays(kp)  # (cleared by the kernel at each call)
        # with a sink, the chunk's rows stay in this small buffer (in the cache, and no pages of
        # a large table to fault in) until the sink has taken what it keeps
        buf = np.empty((chunk, width), dtype=np.int64) if sink is not None else None
        while not stop.is_set():
            with take:
                lo = next(starts, None)
            if lo is None:
                return
            hi = min(n_games, lo + chunk)
            rows = out[lo:hi] if sink is None else buf[: hi - lo]
            batch(kpk, kcfg, sid, kprm, seed, game0 + lo, hi - lo, rows, offsets, st, rs, moves)
            if sink is not None:
                sink(lo, hi, rows)

    if threads == 1:  # in the caller's thread: Ctrl-C lands between chunks
        work(0)
        return out
    with ThreadPoolExecutor(max_workers=threads) as pool:
        futures = [pool.submit(work, k) for k in range(threads)]
        try:
            wait(futures, return_when=FIRST_EXCEPTION)
            if any(f.done() and f.exception() is not None for f in futures):
                stop.set()  # before waiting for the others: one still playing takes no more chunks
            for f in futures:
                f.result()
        finally:  # an error or Ctrl-C here: the other threads stop after their current chunk
            stop.set()
    return out


def records(
    content: Content, settings: Settings, strategy_name: str, rows: np.ndarray
) -> list[GameRecord]:
    """GameRecords of kernel rows (the reference's field values, strings included)."""
    names = content.character_names
    cols = layout.row_columns(rows, len(content.henchman_names))
    out = []
    for i in range(rows.shape[0]):
        d = {name: int(cols[name][i]) for name in layout.ROW_FIELDS}
        d["outcome"] = OUTCOME_NAMES[Outcome(d["outcome"])]
        d["win"] = bool(d["win"])
        d["characters"] = ",".join(names[int(ch)] for ch in cols["characters"][i, : d["players"]])
        d["strategy"] = strategy_name
        d["variant"] = settings.variant_label
        d["henchman_levels"] = "".join(str(int(x)) for x in cols["henchman_levels"][i])
        out.append(GameRecord(**d))
    return out
