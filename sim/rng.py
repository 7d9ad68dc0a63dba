"""Counter-based random streams: (seed, game index, source) -> an independent stream.

The generator is Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy
as 1, 2, 3", SC'11), written so that the *same* source code runs as plain Python
and under ``numba.njit`` with bit-identical results:

* every intermediate value stays in ``[0, 2**63)``, so Python's unbounded ints
  and numba's int64 agree and nothing ever overflows (the 32x32-bit products are
  split into 16-bit halves);
* draw ``n`` of a stream is a pure function of ``(seed, game, source, n)``: no
  hidden state, so a game's villain deck never shifts because a strategy rolled
  more dice, and results cannot depend on batch size or thread count.

Layout of one Philox call: counter = (n, source, game_lo, game_hi),
key = (seed_lo, seed_hi); the first output word is draw ``n``.

A *stream state* is an int64 array ``[seed_lo, seed_hi, game_lo, game_hi,
count_0 .. count_{N_SOURCES-1}, ...]`` (see :func:`new_state` and the offsets below); ``next_u32`` and
friends advance the counter of one source. Python code may use the
:class:`Streams` wrapper, numba code the ``*_nb`` compiled twins.
"""

from __future__ import annotations

import numpy as np

MASK32 = 0xFFFFFFFF
_M0 = 0xD2511F53
_M1 = 0xCD9E8D57
_W0 = 0x9E3779B9
_W1 = 0xBB67AE85

# --- sources: one independent stream each -------------------------------------------
DICE = 0
VILLAIN = 1
FATE = 2
TOKENS = 3  # yellow Intel and green Location token draws
GAMBLE = 4
STRATEGY = 5
TOP_SECRET = 6
SETUP = 7  # setup choices that are random (character line-ups drawn per game, ...)
ENCOUNTER = 8  # encounter deck d uses source ENCOUNTER + d (d = 0..5)
STATUS = 14  # random status cards
N_SOURCES = 16

SOURCE_NAMES = {
    DICE: "dice",
    VILLAIN: "villain",
    FATE: "fate",
    TOKENS: "tokens",
    GAMBLE: "gamble",
    STRATEGY: "strategy",
    TOP_SECRET: "top_secret",
    SETUP: "setup",
    STATUS: "status",
}
for _d in range(6):
    SOURCE_NAMES[ENCOUNTER + _d] = f"encounter_{_d}"

STATE_HEADER = 4  # seed_lo, seed_hi, game_lo, game_hi
COUNTS = STATE_HEADER  # [N_SOURCES] draws taken from each source
OFFSETS = COUNTS + N_SOURCES  # [N_SOURCES] game-index offset per source: 0 (a game's own streams) unless set
GAME_LO = OFFSETS + N_SOURCES  # [N_SOURCES] low word of the game index each source draws from
GAME_HI = GAME_LO + N_SOURCES  # [N_SOURCES] its high word
AHEAD_W = 8  # draws of one source worked out together, ahead of time (two vectors of LANES)
LANES = 4  # Philox blocks in one vector: <4 x i64>, a 256-bit register (8 lanes in one 512-bit register were slower)
AHEAD_N = GAME_HI + N_SOURCES  # [N_SOURCES] AHEAD_W + the first draw number whose value AHEAD keeps (0: none)
AHEAD = AHEAD_N + N_SOURCES  # [N_SOURCES, AHEAD_W] the values of that draw and the next AHEAD_W - 1
STATE_SIZE = AHEAD + N_SOURCES * AHEAD_W
assert AHEAD_W % LANES == 0, "a row is a whole number of vectors"
MAX_SEED = 2**63 - 1
MAX_GAME = 2**63 - 1


def mulhilo32(a, m):
    """Return (hi, lo) 32-bit words of the 64-bit product ``a * m`` (both < 2**32)."""
    p_lo = a * (m & 0xFFFF)  # < 2**48
    p_hi = a * (m >> 16)  # < 2**48
    s = p_lo + ((p_hi & 0xFFFF) << 16)  # < 2**49
    lo = s & MASK32
    hi = ((p_hi >> 16) + (s >> 32)) & MASK32
    return hi, lo


def _nine_rounds(c0, c1, c2, c3, k0, k1):
    """The first nine rounds of Philox4x32-10; the counter words after them and the tenth round's key."""
    for r in range(9):
        if r > 0:
            k0 = (k0 + _W0) & MASK32
            k1 = (k1 + _W1) & MASK32
        hi0, lo0 = mulhilo32(c0, _M0)
        hi1, lo1 = mulhilo32(c2, _M1)
        c0 = hi1 ^ c1 ^ k0
        c1 = lo1
        c2 = hi0 ^ c3 ^ k1
        c3 = lo0
    return c0, c1, c2, c3, (k0 + _W0) & MASK32, (k1 + _W1) & MASK32


def philox4x32(c0, c1, c2, c3, k0, k1):
    """Philox4x32-10 block function: four 32-bit counter words, two key words."""
    c0, c1, c2, c3, k0, k1 = _nine_rounds(c0, c1, c2, c3, k0, k1)
    hi0, lo0 = mulhilo32(c0, _M0)
    hi1, lo1 = mulhilo32(c2, _M1)
    return hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0


def philox_word0(c0, c1, c2, c3, k0, k1):
    """The first output word of :func:`philox4x32`, the one a draw uses (tested equal).

    The same ten rounds; the last computes only that word, and compiled it comes back
    in a register rather than through memory with three words thrown away.
    """
    c0, c1, c2, c3, k0, _k1 = _nine_rounds(c0, c1, c2, c3, k0, k1)
    hi1, _lo1 = mulhilo32(c2, _M1)
    return hi1 ^ c1 ^ k0


def random_u32(seed, game, source, n):
    """Draw ``n`` (0-based) of stream ``(seed, game, source)`` as an int in [0, 2**32)."""
    o0, _o1, _o2, _o3 = philox4x32(
        n & MASK32, source & MASK32, game & MASK32, (game >> 32) & MASK32, seed & MASK32, (seed >> 32) & MASK32
    )
    return o0


def init_state(state, seed, game):
    """Fill an int64 state array (length STATE_SIZE) for ``(seed, game)`` with zero counters.

    Source ``s`` draws from game ``game + state[OFFSETS + s]``; the offsets are left
    as they are (zero in a fresh state), so a luck study can hold one source's
    streams while the others come from other games (:mod:`sim.luck`).
    """
    state[0] = seed & MASK32
    state[1] = (seed >> 32) & MASK32
    state[2] = game & MASK32
    state[3] = (game >> 32) & MASK32
    for i in range(N_SOURCES):
        state[COUNTS + i] = 0
        g = game + state[OFFSETS + i]
        state[GAME_LO + i] = g & MASK32
        state[GAME_HI + i] = (g >> 32) & MASK32
        state[AHEAD_N + i] = 0


def fill_ahead(state, source, n0):
    """Work out draws ``n0 .. n0 + AHEAD_W - 1`` of ``source`` into its AHEAD row."""
    g0, g1, k0, k1 = state[GAME_LO + source], state[GAME_HI + source], state[0], state[1]
    row = AHEAD + source * AHEAD_W
    for i in range(AHEAD_W):
        state[row + i] = philox_word0((n0 + i) & MASK32, source, g0, g1, k0, k1)
    state[AHEAD_N + source] = n0 + AHEAD_W


def next_u32(state, source):
    """Next 32-bit draw of ``source``; advances that source's counter only.

    Draws are worked out AHEAD_W at a time (:func:`fill_ahead`; compiled, the lanes run
    side by side in vector registers at about the cost of one draw), and the next row is
    worked out as the last value of a row is taken, so the game waits on values computed
    long before. A row serves only the draw numbers it was made for (``AHEAD_N``), so a
    state whose counters are set by other means, or a state of zeros, still gives the
    right numbers.
    """
    n = state[COUNTS + source]
    state[COUNTS + source] = n + 1
    k = n + AHEAD_W - state[AHEAD_N + source]
    if k < 0 or k >= AHEAD_W:
        fill_ahead(state, source, n)
        k = 0
    v = state[AHEAD + source * AHEAD_W + k]
    if k == AHEAD_W - 1:
        fill_ahead(state, source, n + 1)
    return v


def next_below(state, source, bound):
    """Uniform int in [0, bound) from one draw (multiply-shift; bias <= bound / 2**32)."""
    return (next_u32(state, source) * bound) >> 32


def next_uniform(state, source):
    """Uniform float in [0, 1) with 32 random bits."""
    return next_u32(state, source) * (1.0 / 4294967296.0)


def u32_block(seed, games, source, n_draws, out):
    """Fill ``out[len(games), n_draws]`` with the first draws of each game's stream."""
    for i in range(games.shape[0]):
        g = games[i]
        for n in range(n_draws):
            out[i, n] = random_u32(seed, g, source, n)


def mulhilo32_u64(a, m):
    """:func:`mulhilo32` with one native unsigned 64-bit product (compiled code only)."""
    p = np.uint64(a) * np.uint64(m)
    return np.int64(p >> np.uint64(32)), np.int64(p & np.uint64(MASK32))


def _philox_lanes_codegen(context, builder, sig, args):
    """LLVM IR of :func:`fill_ahead`'s Philox lanes: AHEAD_W // LANES vectors of LANES 64-bit lanes.

    The vectors' ten rounds are interleaved: two independent chains of multiplies keep the
    CPU busier than one (8 draws in two <4 x i64> vectors: 1.04-1.05x games/s against 4 in
    one; 16 in four: no faster), and a source's row runs out half as often."""
    from llvmlite import ir

    state, row, source, n0, g0, g1, k0, k1 = args
    i64 = ir.IntType(64)
    vec = ir.VectorType(i64, LANES)

    def splat(x):
        v = ir.Constant(vec, [0] * LANES)
        for i in range(LANES):
            v = builder.insert_element(v, x, ir.Constant(ir.IntType(32), i))
        return v

    def const(c):
        return ir.Constant(vec, [c] * LANES)

    mask, shift = const(MASK32), const(32)
    chains = []
    for h in range(AHEAD_W // LANES):
        c0 = builder.and_(builder.add(splat(n0), ir.Constant(vec, list(range(h * LANES, (h + 1) * LANES)))), mask)
        # each word < 2**32 already: the masks tell LLVM so, and it multiplies 32 x 32 bits (vpmuludq)
        c1, c2, c3 = (builder.and_(splat(x), mask) for x in (source, g0, g1))
        chains.append([c0, c1, c2, c3])
    k0, k1 = builder.and_(k0, ir.Constant(i64, MASK32)), builder.and_(k1, ir.Constant(i64, MASK32))
    for r in range(10):
        if r > 0:
            k0 = builder.and_(builder.add(k0, ir.Constant(i64, _W0)), ir.Constant(i64, MASK32))
            k1 = builder.and_(builder.add(k1, ir.Constant(i64, _W1)), ir.Constant(i64, MASK32))
        for words in chains:
            c0, c1, c2, c3 = words
            p0 = builder.mul(c0, const(_M0))  # < 2**64: both factors < 2**32
            p1 = builder.mul(c2, const(_M1))
            hi0, lo0 = builder.lshr(p0, shift), builder.and_(p0, mask)
            hi1, lo1 = builder.lshr(p1, shift), builder.and_(p1, mask)
            words[:] = (builder.xor(builder.xor(hi1, c1), splat(k0)), lo1,
                        builder.xor(builder.xor(hi0, c3), splat(k1)), lo0)
    arr = context.make_array(sig.args[0])(context, builder, state)
    for h, words in enumerate(chains):
        ptr = builder.gep(arr.data, [builder.add(row, ir.Constant(i64, h * LANES))])
        builder.store(words[0], builder.bitcast(ptr, vec.as_pointer()), align=8)
    return context.get_dummy_value()


def _philox_lanes_typer(typingctx, state, row, source, n0, g0, g1, k0, k1):
    from numba import types

    return types.none(state, row, source, n0, g0, g1, k0, k1), _philox_lanes_codegen


def fill_ahead_vector(state, source, n0):
    """:func:`fill_ahead` with its lanes in vector registers (compiled code only; tested equal)."""
    row = AHEAD + source * AHEAD_W
    _philox_lanes(state, row, source, n0, state[GAME_LO + source], state[GAME_HI + source], state[0], state[1])
    state[AHEAD_N + source] = n0 + AHEAD_W


# --- numba twins: the very same functions, compiled ----------------------------------
from numba import config  # noqa: E402
from numba.core.extending import intrinsic  # noqa: E402

from sim.jit import compile_twins  # noqa: E402

_philox_lanes = intrinsic(_philox_lanes_typer)
# the vector lanes exist only compiled; under NUMBA_DISABLE_JIT=1 the plain fill_ahead runs
_REPLACEMENTS = {"mulhilo32": mulhilo32_u64} | ({} if config.DISABLE_JIT else {"fill_ahead": fill_ahead_vector})

_TWINS = ("mulhilo32", "_nine_rounds", "philox4x32", "philox_word0", "random_u32", "init_state", "fill_ahead", "next_u32", "next_below", "next_uniform", "u32_block")
_twins = compile_twins(globals(), _TWINS, replacements=_REPLACEMENTS, runtime_free=_TWINS)
mulhilo32_nb = _twins["mulhilo32"]
philox4x32_nb = _twins["philox4x32"]
philox_word0_nb = _twins["philox_word0"]
random_u32_nb = _twins["random_u32"]
init_state_nb = _twins["init_state"]
fill_ahead_nb = _twins["fill_ahead"]
next_u32_nb = _twins["next_u32"]
next_below_nb = _twins["next_below"]
next_uniform_nb = _twins["next_uniform"]
u32_block_nb = _twins["u32_block"]


def check_seed(seed: int, game: int = 0) -> None:
    """Raise ValueError unless seed and game index are valid stream coordinates."""
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    if not 0 <= int(seed) <= MAX_SEED:
        raise ValueError(f"seed must be in [0, 2**63), got {seed}")
    if not 0 <= int(game) <= MAX_GAME:
        raise ValueError(f"game index must be in [0, 2**63), got {game}")


def new_state(seed: int, game: int) -> np.ndarray:
    """Return a fresh int64 stream state for ``(seed, game)``."""
    check_seed(seed, game)
    state = np.zeros(STATE_SIZE, dtype=np.int64)
    init_state(state, int(seed), int(game))
    return state


def _use_compiled_block() -> bool:
    import os

    return os.environ.get("SMERSH_PURE_PYTHON_RNG", "") not in ("1", "true", "yes")


# The Python handle calls the compiled block function (identical output, pinned by
# tests) because pure-Python Philox costs ~40 us a draw; SMERSH_PURE_PYTHON_RNG=1
# (or NUMBA_DISABLE_JIT=1) runs the plain-Python function instead.
_block = philox4x32_nb if _use_compiled_block() else philox4x32


class Streams:
    """Python handle on one game's streams (plain ints; same numbers as the kernel).

    >>> s = Streams(seed=1, game=0)
    >>> s.below(6, DICE) in range(6)
    True
    """

    __slots__ = ("seed", "game", "counts", "_k0", "_k1", "_g0", "_g1")

    def __init__(self, seed: int, game: int):
        check_seed(seed, game)
        self.seed = int(seed)
        self.game = int(game)
        self.counts = [0] * N_SOURCES
        self._k0 = self.seed & MASK32
        self._k1 = (self.seed >> 32) & MASK32
        self._g0 = self.game & MASK32
        self._g1 = (self.game >> 32) & MASK32

    def u32(self, source: int) -> int:
        """Next 32-bit draw of ``source``."""
        n = self.counts[source]
        self.counts[source] = n + 1
        return int(_block(n & MASK32, source, self._g0, self._g1, self._k0, self._k1)[0])

    def below(self, bound: int, source: int) -> int:
        """Uniform int in [0, bound)."""
        if bound <= 0:
            raise ValueError(f"bound must be positive, got {bound}")
        return (self.u32(source) * bound) >> 32

    def uniform(self, source: int) -> float:
        """Uniform float in [0, 1)."""
        return self.u32(source) * (1.0 / 4294967296.0)

    def state(self) -> np.ndarray:
        """The equivalent int64 state array (for handing over to numba code)."""
        st = new_state(self.seed, self.game)
        st[COUNTS:COUNTS + N_SOURCES] = self.counts
        return st
