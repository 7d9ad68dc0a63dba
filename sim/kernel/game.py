"""Kernel twin of ``sim.rules.game``: the turn loop, one game, and a parallel batch of games.

:func:`simulate_batch` fills ``out[n_games, row_width(pk)]`` (int64), one row per
game laid out by ``sim.kernel.layout.ROW_FIELDS`` (the numeric fields of
:class:`~sim.rules.game.GameRecord`, the outcome as its code) and ``ROW_BLOCKS``
(each henchman's level, each seat's character); :func:`sim.kernel.records`
turns rows back into records.
Each game draws from its own streams ``(seed, game0 + i)``, so a row never
depends on the batch size or the thread count.
"""

from __future__ import annotations

import numpy as np

from sim.content import constants as codes
from sim.jit import JIT_OPTIONS, KERNEL_OPTIONS, njit
from sim.kernel import strategy as decide
from sim.kernel.decks import (
    discard_status,
    draw_token,
    first_at,
    lobo,
    peek_card,
    play_top_secret,
    player_base,
    status_first_held,
    top_secret_card,
    work,
)
from sim.kernel.encounters import encounter_phase
from sim.kernel.endgame import intel_pool_counts
from sim.kernel.layout import (
    C_PLAYERS,
    K_N_HENCHMEN,
    K_N_INTEL,
    K_N_SPACES,
    K_TURN_CAP,
    L_HLEVEL,
    L_INTEL,
    L_SIZE,
    L_VCAP,
    L_VILLAIN,
    L_W_POOL,
    N_ROW,
    P_CHAR,
    P_INJ,
    P_RESTED,
    R_GAME,
    R_HENCHMEN_DEFEATED,
    R_LOBO,
    R_LOCATION_TRACK,
    R_OUTCOME,
    R_PLAYERS,
    R_ROUNDS,
    R_SEED,
    R_TURNS,
    R_WIN,
    ROW_POOL_ROWS,
    ROW_STAT_ROWS,
    ROW_STAT_SRC,
    S_ACTIVE,
    S_DICE_RES,
    S_LOC_TRACK,
    S_MOVE_RES,
    S_OUTCOME,
    S_TURN,
    S_WATCHED,
)
from sim.kernel.missions import mission_reward
from sim.kernel.movement import MOVES_PER_SPACE, move_capacity, movement_phase
from sim.kernel.packref import new_context
from sim.kernel.setup import setup_game
from sim.kernel.villain import heal, villain_phase
from sim.rng import N_SOURCES, OFFSETS, STATE_SIZE, VILLAIN

jit = njit(**KERNEL_OPTIONS)
# play_turn is called from play_game only: inlined there as numba IR, it is not also compiled
# on its own (each compiled kernel function is a library that numba optimizes and turns into
# machine code together with everything it calls: for play_turn, almost the whole game again).
# Inlining play_game or the phases as well saved more compile time but cost 3-9% of the speed.
inline_jit = njit(inline="always", **KERNEL_OPTIONS)

@jit
def start_of_turn(ctx, seat):
    """Top Secret cards a player may play at the start of the turn, and a Watch status card."""
    pk, st, rs = ctx.pk, ctx.st, ctx.rs
    b = player_base(pk, seat)
    ts = top_secret_card(pk, st, seat, codes.TS_HEAL_ALL)
    if ts >= 0 and st[b + P_INJ] > 0 and decide.heal_all(ctx, seat):
        play_top_secret(pk, st, seat, ts)
        heal(pk, st, seat, st[b + P_INJ])
    ts = top_secret_card(pk, st, seat, codes.TS_INTEL_TO_POOL)
    off, n_i = pk.lay[L_INTEL], pk.scal[K_N_INTEL]
    if ts >= 0 and first_at(st, off, n_i, codes.SUPPLY) >= 0 and decide.intel_to_pool(ctx, seat):
        play_top_secret(pk, st, seat, ts)
        t = draw_token(st, off, n_i, codes.SUPPLY, rs)
        st[off + t] = codes.POOL
    if status_first_held(pk, st, seat, codes.SE_WATCH) >= 0 and decide.use_watch(ctx, seat):
        st[S_WATCHED] = peek_card(st, pk.lay[L_VILLAIN], pk.lay[L_VCAP], rs, VILLAIN)


@inline_jit
def play_turn(ctx, seat, moves):
    """Movement, encounter, villain phase, secret-mission reward (stops when the game ends)."""
    pk, st = ctx.pk, ctx.st
    st[S_TURN] += 1
    st[S_ACTIVE] = seat
    st[S_DICE_RES] = 0
    st[S_MOVE_RES] = 0
    st[S_WATCHED] = -1
    card = status_first_held(pk, st, seat, codes.SE_LOSE_TURN)
    if card >= 0:  # a lose_turn status card: the villain phase only; the card is discarded
        discard_status(pk, st, card)
        villain_phase(ctx, 1)
        return
    start_of_turn(ctx, seat)
    rested = movement_phase(ctx, seat, moves)
    if st[S_OUTCOME] >= 0:
        return
    st[player_base(pk, seat) + P_RESTED] = 1 if rested else 0
    if not rested:
        encounter_phase(ctx, seat)
        if st[S_OUTCOME] >= 0:
            return
    villain_phase(ctx, 2 if rested else 1)
    mission_reward(ctx, seat)


@jit
def play_game(ctx, seed, game, moves):
    """Play one game in ``st`` (streams ``(seed, game)``); ``moves`` is scratch for move lists."""
    pk, cfg, st = ctx.pk, ctx.cfg, ctx.st
    setup_game(ctx, seed, game)
    n = cfg[C_PLAYERS]
    seat = 0
    cap = pk.scal[K_TURN_CAP]
    while True:
        if st[S_TURN] >= cap:
            st[S_OUTCOME] = codes.TIMEOUT
            break
        play_turn(ctx, seat, moves)
        if st[S_OUTCOME] >= 0:
            break
        seat = (seat + 1) % n


@jit
def record(ctx, seed, game, row):
    """Write one game's row (sim.kernel.layout.ROW_FIELDS, then the ROW_BLOCKS)."""
    pk, cfg, st = ctx.pk, ctx.cfg, ctx.st
    n = cfg[C_PLAYERS]
    outcome = st[S_OUTCOME]
    row[R_SEED] = seed
    row[R_GAME] = game
    row[R_PLAYERS] = n
    row[R_OUTCOME] = outcome
    row[R_WIN] = 1 if outcome == codes.WIN_LOCATION or outcome == codes.WIN_HENCHMEN else 0
    row[R_TURNS] = st[S_TURN]
    row[R_ROUNDS] = (st[S_TURN] + n - 1) // n
    row[R_LOBO] = lobo(pk, st)
    row[R_LOCATION_TRACK] = st[S_LOC_TRACK]
    n_h = pk.scal[K_N_HENCHMEN]
    defeated = 0
    for h in range(n_h):  # block 1: each henchman's level
        level = st[pk.lay[L_HLEVEL] + h]
        row[N_ROW + h] = level
        if level == codes.DEFEATED:
            defeated += 1
    row[R_HENCHMEN_DEFEATED] = defeated
    for seat in range(codes.MAX_PLAYERS):  # block 2: each seat's character
        row[N_ROW + n_h + seat] = st[player_base(pk, seat) + P_CHAR] if seat < n else -1
    pool = work(pk, st, L_W_POOL)
    intel_pool_counts(pk, st, pool)
    for i in range(ROW_POOL_ROWS.shape[0]):
        row[ROW_POOL_ROWS[i]] = pool[i]
    for i in range(ROW_STAT_ROWS.shape[0]):
        row[ROW_STAT_ROWS[i]] = st[ROW_STAT_SRC[i]]


def work_arrays(pk) -> tuple:
    """Fresh work arrays for :func:`simulate_batch` with bundle ``pk`` (its namedtuple,
    :func:`sim.kernel.layout.pack`'s): the game state, the random streams' state and the move list. A caller
    playing batch after batch keeps one set (per thread) and passes it to each call; the kernel clears them."""
    return (np.zeros(int(pk.lay[L_SIZE]), np.int64), np.zeros(STATE_SIZE, np.int64),
            np.zeros((move_capacity(pk), 4), np.int64))


@njit(**JIT_OPTIONS)  # the one kernel function that allocates (the game's context, once per batch)
def simulate_batch(pk, cfg, sid, prm, seed, game0, n_games, out, offsets, st, rs, moves):
    """Play games ``game0 .. game0 + n_games - 1`` one after another; row i of ``out`` is game0 + i.

    Source ``s`` of game ``g`` draws from game ``g + offsets[s]`` (all zero but in a luck study).
    ``st``, ``rs``, ``moves``: the work arrays of :func:`work_arrays` (cleared here; arrays of other sizes
    are refused). The caller allocates them: numba's array allocation, which no cache keeps, was compiled in
    every process that compiled this function (about 0.4 s of a cold start's entry point).

    Compiled without the GIL: :func:`sim.kernel.batch.run_batch` runs calls on contiguous
    chunks of the games in several threads, each thread with its own copy of the bundle.
    (A ``prange`` over one shared bundle did not scale while the kernel still counted
    references: two threads fighting over the shared counters ran at 1.03x of one.)
    """
    if (st.shape[0] != pk.lay[L_SIZE] or rs.shape[0] != STATE_SIZE
            or moves.shape[0] != 1 + MOVES_PER_SPACE * pk.scal[K_N_SPACES] or moves.shape[1] != 4):
        raise ValueError("simulate_batch: work arrays not of the bundle's sizes (sim.kernel.game.work_arrays)")
    if out.shape[0] < n_games or out.shape[1] < N_ROW + pk.scal[K_N_HENCHMEN] + codes.MAX_PLAYERS:  # (record's slots)
        raise ValueError("simulate_batch: out has fewer rows than games, or rows narrower than the bundle's")
    if offsets.shape[0] != N_SOURCES:
        raise ValueError("simulate_batch: offsets must hold one int per random source")
    for i in range(st.shape[0]):
        st[i] = 0
    for i in range(rs.shape[0]):
        rs[i] = 0
    for s in range(N_SOURCES):
        rs[OFFSETS + s] = offsets[s]
    for i in range(moves.shape[0]):
        for j in range(4):
            moves[i, j] = 0
    ctx = new_context(pk, cfg, st, rs, sid, prm)
    for i in range(n_games):
        play_game(ctx, seed, game0 + i, moves)
        record(ctx, seed, game0 + i, out[i])
