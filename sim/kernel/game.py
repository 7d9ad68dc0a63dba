"""Kernel twin of ``sim.rules.game``: the turn loop, one game, and a parallel batch of games.

:func:`simulate_batch` fills ``out[n_games, row_width(pk)]`` (int64), one row per
game in the order of :data:`ROW_FIELDS` (the numeric fields of
:class:`~sim.rules.game.GameRecord`, the outcome as its code, then each
henchman's level); :func:`sim.kernel.records` turns rows back into records.
Each game draws from its own streams ``(seed, game0 + i)``, so a row never
depends on the batch size or the thread count.
"""

from __future__ import annotations

import numpy as np

from sim.content import constants as K
from sim.jit import JIT_OPTIONS, KERNEL_OPTIONS, njit
from sim.kernel import strategy as S
from sim.kernel.decks import (
    draw_token,
    lobo,
    peek_card,
    play_top_secret,
    player_base,
    top_secret_card,
    work,
)
from sim.kernel.encounters import encounter_phase
from sim.kernel.endgame import intel_pool_counts
from sim.kernel.layout import (
    C_PLAYERS,
    K_TURN_CAP,
    L_HLEVEL,
    L_INTEL,
    L_SIZE,
    L_VCAP,
    L_VILLAIN,
    L_W_POOL,
    P_CHAR,
    P_INJ,
    P_RESTED,
    P_WATCH,
    S_ACTIVE,
    S_DICE_RES,
    S_LOC_TRACK,
    S_MOVE_RES,
    S_OUTCOME,
    S_STATS,
    S_TURN,
    S_WATCHED,
)
from sim.kernel.missions import mission_reward
from sim.kernel.movement import movement_phase
from sim.kernel.setup import setup_game
from sim.kernel.villain import heal, villain_phase
from sim.rng import STATE_SIZE, VILLAIN

jit = njit(**KERNEL_OPTIONS)

ROW_FIELDS = (
    "seed",
    "game",
    "players",
    "outcome",
    "win",
    "turns",
    "rounds",
    "lobo",
    "location_track",
    "henchmen_defeated",
    "pool_weapon",
    "pool_tech",
    "pool_double_agent",
    "pool_atomic",
    "tests_attempted",
    "tests_passed",
    "henchman_tests",
    "henchman_passed",
    "gambles_played",
    "gambles_won",
    "injuries",
    "knockouts",
    "resolve_spent",
    "un_used",
    "overflows",
    "airports_closed",
    "missions_completed",
    "villain_drawn",
    "top_secret_played",
)
N_ROW = len(ROW_FIELDS)  # then one column per henchman (his level), then one per seat (character, -1 pad)
# Stats offsets (sim.kernel.layout.STAT_NAMES order) of the record's counters from tests_attempted on
_ROW_STATS = (0, 1, 12, 13, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 14)
ROW_STATS = np.array(_ROW_STATS, dtype=np.int64)


def row_width(pk) -> int:
    return N_ROW + int(pk.henchman_autopass.shape[0]) + K.MAX_PLAYERS


@jit
def start_of_turn(pk, st, rs, sid, prm, seat):
    """Top Secret cards a player may play at the start of the turn, and Dexter's Watch."""
    b = player_base(pk, seat)
    ts = top_secret_card(pk, st, seat, K.TS_HEAL_ALL)
    if ts >= 0 and st[b + P_INJ] > 0 and S.heal_all(pk, st, rs, sid, prm, seat):
        play_top_secret(pk, st, seat, ts)
        heal(pk, st, seat, st[b + P_INJ])
    ts = top_secret_card(pk, st, seat, K.TS_INTEL_TO_POOL)
    off, n_i = pk.lay[L_INTEL], pk.intel_token_type.shape[0]
    has_supply = False
    for t in range(n_i):
        if st[off + t] == K.SUPPLY:
            has_supply = True
            break
    if ts >= 0 and has_supply and S.intel_to_pool(rs, sid):
        play_top_secret(pk, st, seat, ts)
        t = draw_token(st, off, n_i, K.SUPPLY, rs)
        st[off + t] = K.POOL
    if st[b + P_WATCH] and S.use_watch(rs, sid, prm):
        st[S_WATCHED] = peek_card(st, pk.lay[L_VILLAIN], pk.lay[L_VCAP], rs, VILLAIN)


@jit
def play_turn(pk, cfg, st, rs, sid, prm, seat, moves):
    """Movement, encounter, villain phase, secret-mission reward (stops when the game ends)."""
    st[S_TURN] += 1
    st[S_ACTIVE] = seat
    st[S_DICE_RES] = 0
    st[S_MOVE_RES] = 0
    st[S_WATCHED] = -1
    start_of_turn(pk, st, rs, sid, prm, seat)
    rested = movement_phase(pk, cfg, st, rs, sid, prm, seat, moves)
    if st[S_OUTCOME] >= 0:
        return
    st[player_base(pk, seat) + P_RESTED] = 1 if rested else 0
    if not rested:
        encounter_phase(pk, cfg, st, rs, sid, prm, seat)
        if st[S_OUTCOME] >= 0:
            return
    villain_phase(pk, st, rs, 2 if rested else 1)
    mission_reward(pk, cfg, st, rs, sid, prm, seat)


@jit
def play_game(pk, cfg, st, rs, sid, prm, seed, game, moves):
    """Play one game in ``st`` (streams ``(seed, game)``); ``moves`` is scratch for move lists."""
    setup_game(pk, cfg, st, rs, sid, prm, seed, game)
    n = cfg[C_PLAYERS]
    seat = 0
    cap = pk.scal[K_TURN_CAP]
    while True:
        if st[S_TURN] >= cap:
            st[S_OUTCOME] = K.TIMEOUT
            break
        play_turn(pk, cfg, st, rs, sid, prm, seat, moves)
        if st[S_OUTCOME] >= 0:
            break
        seat = (seat + 1) % n


@jit
def record(pk, cfg, st, seed, game, row):
    """Write one game's row (see :data:`ROW_FIELDS`)."""
    n = cfg[C_PLAYERS]
    outcome = st[S_OUTCOME]
    row[0] = seed
    row[1] = game
    row[2] = n
    row[3] = outcome
    row[4] = 1 if outcome <= 1 else 0
    row[5] = st[S_TURN]
    row[6] = (st[S_TURN] + n - 1) // n
    row[7] = lobo(pk, st)
    row[8] = st[S_LOC_TRACK]
    n_h = pk.henchman_autopass.shape[0]
    defeated = 0
    for h in range(n_h):
        level = st[pk.lay[L_HLEVEL] + h]
        row[N_ROW + h] = level
        if level == K.DEFEATED:
            defeated += 1
    row[9] = defeated
    for seat in range(K.MAX_PLAYERS):
        row[N_ROW + n_h + seat] = st[player_base(pk, seat) + P_CHAR] if seat < n else -1
    pool = work(pk, st, L_W_POOL, 4)
    intel_pool_counts(pk, st, pool)
    for i in range(4):
        row[10 + i] = pool[i]
    for i in range(len(_ROW_STATS)):
        row[14 + i] = st[S_STATS + _ROW_STATS[i]]


@njit(**JIT_OPTIONS)  # the one kernel function that allocates (the state, once per batch)
def simulate_batch(pk, cfg, sid, prm, seed, game0, n_games, out):
    """Play games ``game0 .. game0 + n_games - 1`` one after another; row i of ``out`` is game0 + i.

    Compiled without the GIL: :func:`sim.kernel.batch.run_batch` runs one call per
    thread on contiguous slices, each thread with its own copy of the bundle.
    (A ``prange`` over one shared bundle did not scale while the kernel still counted
    references: two threads fighting over the shared counters ran at 1.03x of one.)
    """
    size = pk.lay[L_SIZE]
    cap = 1 + 5 * pk.space_kind.shape[0]
    st = np.zeros(size, np.int64)
    rs = np.zeros(STATE_SIZE, np.int64)
    moves = np.zeros((cap, 4), np.int64)
    for i in range(n_games):
        play_game(pk, cfg, st, rs, sid, prm, seed, game0 + i, moves)
        record(pk, cfg, st, seed, game0 + i, out[i])
