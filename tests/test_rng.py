"""Known answers and Python/numba agreement for the counter-based random streams."""

import numpy as np
import pytest
from numba import njit

from sim import rng

# Random123 known-answer vectors for Philox4x32-10: counter[4], key[2] -> output[4].
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    (
        (0xFFFFFFFF,) * 4,
        (0xFFFFFFFF, 0xFFFFFFFF),
        (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD),
    ),
    (
        (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
        (0xA4093822, 0x299F31D0),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
    ),
]


@pytest.mark.parametrize("ctr,key,want", KAT)
def test_philox_known_answers_python(ctr, key, want):
    assert rng.philox4x32(*ctr, *key) == want


@pytest.mark.parametrize("ctr,key,want", KAT)
def test_philox_known_answers_numba(ctr, key, want):
    assert tuple(int(x) for x in rng.philox4x32_nb(*ctr, *key)) == want


def test_philox_word0_is_the_blocks_first_word():
    """On known answers and on random counters and keys (edge words included), plain and compiled."""
    for ctr, key, want in KAT:
        assert rng.philox_word0(*ctr, *key) == int(rng.philox_word0_nb(*ctr, *key)) == want[0]
    r = np.random.default_rng(7)
    words = [0, 1, 0xFFFFFFFF, 0x80000000] + [int(x) for x in r.integers(0, 2**32, 200)]
    for i in range(300):
        args = [words[(i * 7 + j * 13) % len(words)] for j in range(6)]
        want = rng.philox4x32(*args)[0]
        assert rng.philox_word0(*args) == want
        assert int(rng.philox_word0_nb(*args)) == want


def test_stream_known_answers():
    # Pinned output of the stream layer (counter = (n, source, game_lo, game_hi), key = seed).
    s = rng.Streams(seed=12345, game=2**40 + 7)
    assert [s.u32(rng.TOKENS) for _ in range(5)] == [
        2521832447,
        2478885239,
        2393563369,
        1934113192,
        1293665743,
    ]


def test_python_and_numba_streams_agree():
    seeds = [0, 1, 2**32 - 1, 2**32, 2**62 + 12345]
    games = [0, 1, 999_999, 2**32 + 5, 2**62 + 3]
    for seed in seeds:
        for game in games:
            py = rng.Streams(seed, game)
            st = rng.new_state(seed, game)
            for source in (rng.DICE, rng.VILLAIN, rng.ENCOUNTER + 5, rng.STRATEGY):
                for bound in (6, 44, 1, 35):
                    assert py.below(bound, source) == rng.next_below_nb(st, source, bound)
                assert py.u32(source) == rng.next_u32_nb(st, source)
                assert py.uniform(source) == rng.next_uniform_nb(st, source)
            assert list(st[rng.COUNTS : rng.COUNTS + rng.N_SOURCES]) == py.counts


def test_streams_called_from_njit_code():
    @njit
    def five_dice(seed, game):
        st = np.zeros(rng.STATE_SIZE, dtype=np.int64)
        rng.init_state_nb(st, seed, game)
        out = np.empty(5, dtype=np.int64)
        for i in range(5):
            out[i] = rng.next_below_nb(st, rng.DICE, 6)
        return out

    py = rng.Streams(7, 3)
    assert list(five_dice(7, 3)) == [py.below(6, rng.DICE) for _ in range(5)]


def test_sources_are_independent():
    """Drawing from one source never shifts another source's numbers."""
    a = rng.Streams(5, 11)
    b = rng.Streams(5, 11)
    for _ in range(100):
        a.u32(rng.DICE)  # a strategy rolled many more dice in game a
    assert [a.u32(rng.VILLAIN) for _ in range(10)] == [b.u32(rng.VILLAIN) for _ in range(10)]


def test_batch_size_does_not_matter():
    games = np.arange(1000, dtype=np.int64)
    big = np.empty((1000, 8), dtype=np.int64)
    rng.u32_block_nb(9, games, rng.FATE, 8, big)
    for lo, hi in [(0, 1), (3, 17), (500, 1000)]:
        part = np.empty((hi - lo, 8), dtype=np.int64)
        rng.u32_block_nb(9, games[lo:hi], rng.FATE, 8, part)
        assert np.array_equal(part, big[lo:hi])
    # and the plain-Python block agrees with the compiled one
    py = np.empty((20, 8), dtype=np.int64)
    rng.u32_block(9, games[:20], rng.FATE, 8, py)
    assert np.array_equal(py, big[:20])


def test_below_is_uniform():
    """Each face of a d6 within 4 standard errors of 1/6 over 600,000 draws."""
    games = np.arange(600_000, dtype=np.int64)
    out = np.empty((games.size, 1), dtype=np.int64)
    rng.u32_block_nb(3, games, rng.DICE, 1, out)
    faces = (out[:, 0] * 6) >> 32
    counts = np.bincount(faces, minlength=6)
    p = 1 / 6
    z = (counts / games.size - p) / np.sqrt(p * (1 - p) / games.size)
    assert np.all(np.abs(z) < 4), z


def test_bad_seeds_are_rejected():
    for bad in (-1, 2**63, 1.5, "1", True):
        with pytest.raises(ValueError, match="seed"):
            rng.Streams(bad, 0)
    with pytest.raises(ValueError, match="game"):
        rng.Streams(1, -3)


def test_compiled_mulhilo_matches_the_plain_one():
    """The kernel's native 64-bit mulhilo gives the plain function's words on edge and random inputs."""
    import random

    r = random.Random(5)
    cases = [(0, 0), (rng.MASK32, rng.MASK32), (1, rng.MASK32), (rng.MASK32, 0xD2511F53)]
    cases += [(r.getrandbits(32), r.getrandbits(32)) for _ in range(2000)]
    for a, m in cases:
        assert tuple(int(x) for x in rng.mulhilo32_nb(a, m)) == rng.mulhilo32(a, m) == divmod(a * m, 2**32)


@pytest.mark.parametrize("compiled", [False, True])
def test_draws_kept_ahead_never_serve_another_draw_number(compiled):
    """next_u32 keeps a row of the following draws; counters set by hand, or a state of zeros, still give draw n."""
    next_u32 = rng.next_u32_nb if compiled else rng.next_u32
    state = rng.new_state(5, 9)
    got = [int(next_u32(state, rng.DICE)) for _ in range(3 * rng.AHEAD_W + 1)]  # across rows
    assert got == [rng.random_u32(5, 9, rng.DICE, n) for n in range(3 * rng.AHEAD_W + 1)]
    state[rng.COUNTS + rng.DICE] = 3 * rng.AHEAD_W - 2  # back, inside the row kept
    assert int(next_u32(state, rng.DICE)) == rng.random_u32(5, 9, rng.DICE, 3 * rng.AHEAD_W - 2)
    state = rng.new_state(5, 9)
    got = [int(next_u32(state, rng.DICE)) for _ in range(3)]
    assert got == [rng.random_u32(5, 9, rng.DICE, n) for n in range(3)]
    state[rng.COUNTS + rng.DICE] = 17  # skip ahead: the draw kept for number 3 must not be used
    assert int(next_u32(state, rng.DICE)) == rng.random_u32(5, 9, rng.DICE, 17)
    state[rng.COUNTS + rng.DICE] = 1  # and back
    assert int(next_u32(state, rng.DICE)) == rng.random_u32(5, 9, rng.DICE, 1)
    zeros = np.zeros(rng.STATE_SIZE, np.int64)  # seed 0, game 0, nothing initialised
    assert int(next_u32(zeros, rng.FATE)) == rng.random_u32(0, 0, rng.FATE, 0)


def test_vector_lanes_equal_the_plain_fill():
    """Compiled, a row of draws is worked out in vector lanes: the same words as draw by draw (counter wrap too)."""
    for seed, game, source, n0 in [(1, 0, rng.DICE, 0), (2**63 - 1, 2**63 - 1, rng.STATUS, 2**32 - 2),
                                   (123456789012345, 987654321, rng.ENCOUNTER + 5, 2**40 + 7)]:
        plain, compiled = rng.new_state(seed, game), rng.new_state(seed, game)
        rng.fill_ahead(plain, source, n0)
        rng.fill_ahead_nb(compiled, source, n0)
        assert np.array_equal(plain, compiled)
        row = plain[rng.AHEAD + source * rng.AHEAD_W:][:rng.AHEAD_W]
        assert list(row) == [rng.random_u32(seed, game, source, (n0 + i) & rng.MASK32) for i in range(rng.AHEAD_W)]
