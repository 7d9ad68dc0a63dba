"""Content, settings and game state as numba-friendly arrays (the kernel's data layout).

* :func:`pack` turns a :class:`~sim.content.Content` into a :class:`Pack`, a
  namedtuple of int64 / float64 arrays the jitted code takes as an argument
  (never as a global, so another pack or card count never recompiles).
* :func:`settings_vector` turns :class:`~sim.rules.state.Settings` into ``cfg``
  (int64, indices ``C_*``), derived values included (Dr. Lobo's start, the
  Location target, the overflow limit).
* One game's state is a flat int64 vector ``st``: scalars at the fixed offsets
  ``S_*``, then regions whose offsets depend on the content sizes and are kept
  in ``pk.lay`` (indices ``L_*``). A player is a block of ``pk.lay[L_PSTRIDE]``
  ints with fields ``P_*``; a deck is a block ``[count, top, n_discard,
  pile[cap], discard[cap]]`` (the reference's ``Deck.pile`` / ``.discard`` /
  ``.top``, in the same order).
* :func:`encode` copies a reference :class:`~sim.rules.state.GameState` into a
  state vector and :func:`snapshot` / :func:`snapshot_state` give the same
  comparable dict for both engines (what the equality tests compare).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from sim.content import Content
from sim.content import constants as K

# --- scalar offsets in the state vector ----------------------------------------------
S_LOBO_START = 0
S_LOC_TARGET = 1
S_OVERFLOW = 2
S_CLOSE_LEFT = 3
S_UN_SUPPLY = 4
S_LOC_TRACK = 5
S_TURN = 6
S_ACTIVE = 7
S_OUTCOME = 8  # -1 while the game runs, else an Outcome code
S_DICE_RES = 9
S_MOVE_RES = 10
S_WATCHED = 11
S_N_NEXT = 12  # cards next to Dr. Lobo
S_N_REMOVED = 13  # villain cards removed at set-up
S_STATS = 14  # Stats fields in dataclass order
STAT_NAMES = (
    "tests_attempted",
    "tests_passed",
    "gambles_played",
    "gambles_won",
    "injuries_taken",
    "knockouts",
    "resolve_spent",
    "un_used",
    "overflows",
    "airports_closed",
    "missions_completed",
    "villain_drawn",
    "henchman_tests",
    "henchman_passed",
    "top_secret_played",
)
(
    ST_TESTS,
    ST_PASSED,
    ST_GAMBLES,
    ST_GAMBLES_WON,
    ST_INJURIES,
    ST_KNOCKOUTS,
    ST_RESOLVE,
    ST_UN,
    ST_OVERFLOWS,
    ST_AIRPORTS,
    ST_MISSIONS,
    ST_VILLAIN,
    ST_HTESTS,
    ST_HPASSED,
    ST_TS_PLAYED,
) = range(S_STATS, S_STATS + len(STAT_NAMES))
N_SCALARS = S_STATS + len(STAT_NAMES)

# --- region offsets, kept in pk.lay ------------------------------------------------
(
    L_HLEVEL,
    L_GREEN,
    L_INTEL,
    L_AIRPORT,
    L_NEXT,
    L_REMOVED,
    L_VILLAIN,
    L_VCAP,
    L_FATE,
    L_FCAP,
    L_TS,
    L_TSCAP,
    L_ENC,
    L_ECAP,
    L_PLAYERS,
    L_PSTRIDE,
    L_SIZE,
    # scratch ("work") regions at the end of the state vector: the kernel never allocates
    L_W_SEEN,  # [n_spaces] bit set (int64 words) of the plane + Resolve destinations
    L_W_CHOICES,  # [4] token choices
    L_W_OPTS,  # [(MAX_OPTIONS + 1) * 4] test options (rows: skill, modifier, successes, gamble)
    L_W_EFFECT,  # [max(N_SKILLS, N_ADV)] skills offered by a reward
    L_W_MOPTS,  # [(3 + N_SKILLS) * 2] secret-mission rewards (rows: kind, skill)
    L_W_BAG,  # [n_bag] dice left in the bag
    L_W_DICE,  # [n_bag + 1] dice drawn (the Yellow die last)
    L_W_FACES,  # [n_bag + 1] their faces
    L_W_DECK,  # [n_fate] the gamble's deck
    L_W_HAND,  # [15] gamble hand, ranks, suits
    L_W_POOL,  # [4] Intel Pool by type (the record)
    L_W_SETUP,  # [3 * n_villain + n_characters + MAX_PLAYERS + n_encounter + n_henchmen] set-up
    L_W_LEVEL2,  # [3 * n_henchmen] the strategies' choice of level-2 henchmen
) = range(30)
N_LAY = 30

# --- player fields -------------------------------------------------------------------
N_SKILLS = len(K.BASIC_SKILLS)
N_ADV = len(K.ADVANCED_SKILLS)
P_CHAR = 0
P_SPACE = 1
P_SKILLS = 2
P_RESOLVE = P_SKILLS + N_SKILLS
P_RESOLVE_MAX = P_RESOLVE + 1
P_LIFE = P_RESOLVE_MAX + 1
P_ADV = P_LIFE + 1
P_INJ = P_ADV + N_ADV
P_UN = P_INJ + 1
P_MISSIONS = P_UN + 1  # 2 Fate card ids
P_N_MISSIONS = P_MISSIONS + 2
P_FLIPPED = P_N_MISSIONS + 1  # 2 flags
P_WATCH = P_FLIPPED + 2
P_GIVES = P_WATCH + 1
P_RESTED = P_GIVES + 1
P_N_TS = P_RESTED + 1
P_TS = P_N_TS + 1  # Top Secret hand, capacity = number of Top Secret cards

# --- deck block ---------------------------------------------------------------------
D_COUNT = 0
D_TOP = 1
D_NDISC = 2
D_PILE = 3  # pile[cap], then discard[cap]

# --- settings vector ----------------------------------------------------------------
(
    C_PLAYERS,
    C_EASIER,
    C_DIRTY_LOBO,
    C_DIRTY_LOC,
    C_LOBO_START,
    C_LOC_TARGET,
    C_OVERFLOW,
) = range(7)
C_CHARS = 7  # K.MAX_PLAYERS character indices, -1 pad
C_RANDOM_LINEUP = C_CHARS + K.MAX_PLAYERS  # 1: draw each game's line-up from its SETUP stream
N_CFG = C_RANDOM_LINEUP + 1

# --- content scalars, kept in pk.scal ------------------------------------------------
(
    K_ALWAYS_DIE,
    K_N_UN,
    K_N_CLOSE,
    K_LOBO_START,
    K_LOBO_LOSS,
    K_DIRTY_LOBO,
    K_DIRTY_DELTA,
    K_TURN_CAP,
    K_N_SPACES,
    K_N_CITIES,
) = range(10)
N_SCAL = 10

_INT_FIELDS = (
    "die_success",
    "die_injury",
    "die_heal",
    "bag_dice",
    "intel_token_type",
    "villain_advance",
    "villain_injury",
    "villain_close_city",
    "villain_add_intel",
    "villain_remove_region",
    "lobo_intel_required",
    "henchman_option_skill",
    "henchman_option_modifier",
    "henchman_option_successes",
    "henchman_autopass",
    "character_skills",
    "character_resolve_start",
    "character_resolve_max",
    "character_life",
    "character_advanced",
    "character_start_space",
    "character_start_un",
    "character_watch",
    "character_gives_un",
    "character_reduced_resolve_cut",
    "setup_board_intel",
    "setup_extra_un",
    "setup_extra_top_secret",
    "setup_extra_choice",
    "setup_giver_extra_un",
    "setup_giver_extra_top_secret",
    "setup_giver_choice_max_un",
    "setup_henchmen_level2",
    "setup_remove_injury_cards",
    "setup_remove_minus_one",
    "setup_remove_random_plus_one",
    "setup_resolve_cut",
    "setup_resolve_cut_reduced",
    "setup_location_target",
    "setup_overflow_limit",
    "setup_mission_resolve",
    "setup_rest_roll_die",
    "setup_lineup",
    "easier_extra_choice",
    "easier_extra_top_secret",
    "easier_henchmen_level1",
    "top_secret_effect",
    "encounter_deck",
    "encounter_option_skill",
    "encounter_option_modifier",
    "encounter_option_successes",
    "encounter_gamble",
    "encounter_autopass",
    "encounter_reward",
    "encounter_reward_amount",
    "encounter_reward_skill",
    "encounter_penalty",
    "encounter_penalty_amount",
    "encounter_penalty_skill",
    "encounter_no_advance",
    "fate_city",
    "fate_rank",
    "fate_suit",
    "space_kind",
    "space_deck",
    "space_ussr",
    "space_airport",
    "space_red_airport",
    "space_train",
    "hop_distance",
)
_EXTRA_FIELDS = (
    "steps_start",  # [n_spaces + 1] CSR of spaces one MP away (connections + train hops)
    "steps_list",
    "autopass_counts",  # [11] automatic passes per advanced skill (heuristic's advanced_skill)
    "deck_base",  # [6] state offset of each encounter deck block
    "scal",  # content scalars K_*
    "lay",  # state layout L_*
    "pass_table",  # float64 [6, 2, 2] exact P(pass) (sim.odds.content_pass_table)
    # static move tables (sim.rules.movement facts that depend on the map only)
    "walk_start",  # [n_spaces + 1] CSR: spaces within BASE_MP + 1 walking MP of a start, ascending
    "walk_dest",
    "walk_mp",  # their walking cost (1 .. BASE_MP + 1)
    "airport_spaces",  # spaces with an airport, ascending
    "airport_reach",  # [n_spaces, words] bit set of the spaces one MP from an airport (not itself)
    "un_dests",  # spaces a UN Transport may reach (not regional), ascending
    "airports_by_distance",  # [n_spaces, n_airports] airports by (hop distance to a space, id)
    "airports_near_start",  # [n_spaces + 1] CSR: airports one MP from a space (not the space itself)
    "airports_near",
)

Pack = namedtuple("Pack", _INT_FIELDS + _EXTRA_FIELDS)


def layout(c: Content) -> np.ndarray:
    """Region offsets of the state vector for a content pack (``lay[N_LAY]``)."""
    lay = np.zeros(N_LAY, dtype=np.int64)
    n_h, n_v, n_f, n_ts = c.n_henchmen, c.n_villain, c.n_fate, len(c.top_secret_effect)
    ecap = max(int(np.count_nonzero(c.encounter_deck == d)) for d in range(len(K.DECKS)))
    o = N_SCALARS
    lay[L_HLEVEL] = o
    o += n_h
    lay[L_GREEN] = o
    o += n_h
    lay[L_INTEL] = o
    o += c.n_intel
    lay[L_AIRPORT] = o
    o += c.n_spaces
    lay[L_NEXT] = o
    o += n_v
    lay[L_REMOVED] = o
    o += n_v
    lay[L_VILLAIN], lay[L_VCAP] = o, n_v
    o += D_PILE + 2 * n_v
    lay[L_FATE], lay[L_FCAP] = o, n_f
    o += D_PILE + 2 * n_f
    lay[L_TS], lay[L_TSCAP] = o, n_ts
    o += D_PILE + 2 * n_ts
    lay[L_ENC], lay[L_ECAP] = o, ecap
    o += len(K.DECKS) * (D_PILE + 2 * ecap)
    lay[L_PLAYERS] = o
    lay[L_PSTRIDE] = P_TS + n_ts
    o += K.MAX_PLAYERS * lay[L_PSTRIDE]
    n_bag = len(c.bag_dice)
    n_chars = len(c.character_life)
    n_e = len(c.encounter_deck)
    sizes = (
        (L_W_SEEN, c.n_spaces),
        (L_W_CHOICES, 4),
        (L_W_OPTS, (K.MAX_OPTIONS + 1) * 4),
        (L_W_EFFECT, max(N_SKILLS, N_ADV)),
        (L_W_MOPTS, (3 + N_SKILLS) * 2),
        (L_W_BAG, n_bag),
        (L_W_DICE, n_bag + 1),
        (L_W_FACES, n_bag + 1),
        (L_W_DECK, n_f),
        (L_W_HAND, 15),
        (L_W_POOL, 4),
        (L_W_SETUP, 3 * n_v + n_chars + K.MAX_PLAYERS + n_e + n_h),
        (L_W_LEVEL2, 3 * n_h),
    )
    for region, size in sizes:
        lay[region] = o
        o += size
    lay[L_SIZE] = o
    return lay


def pack(c: Content) -> Pack:
    """The content pack as the kernel's argument bundle (int64 arrays, plus the pass table)."""
    from sim.odds import content_pass_table
    from sim.rules.movement import steps_table
    from sim.rules.skill_tests import autopass_counts

    arrays = {
        f: np.ascontiguousarray(np.asarray(getattr(c, f)).astype(np.int64)) for f in _INT_FIELDS
    }
    table = steps_table(c)
    start = np.zeros(c.n_spaces + 1, dtype=np.int64)
    for s, row in enumerate(table):
        start[s + 1] = start[s] + len(row)
    arrays["steps_start"] = start
    arrays["steps_list"] = np.array([t for row in table for t in row], dtype=np.int64)
    arrays["autopass_counts"] = np.array(autopass_counts(c), dtype=np.int64)
    lay = layout(c)
    ecap = int(lay[L_ECAP])
    arrays["deck_base"] = np.array(
        [lay[L_ENC] + d * (D_PILE + 2 * ecap) for d in range(len(K.DECKS))], dtype=np.int64
    )
    scal = np.zeros(N_SCAL, dtype=np.int64)
    scal[K_ALWAYS_DIE] = c.always_die
    scal[K_N_UN] = c.n_un_transport
    scal[K_N_CLOSE] = c.n_close_airport_tokens
    scal[K_LOBO_START] = c.lobo_start
    scal[K_LOBO_LOSS] = c.lobo_loss
    scal[K_DIRTY_LOBO] = c.dirty_lobo_start
    scal[K_DIRTY_DELTA] = c.dirty_location_delta
    scal[K_TURN_CAP] = c.turn_cap
    scal[K_N_SPACES] = c.n_spaces
    scal[K_N_CITIES] = c.n_cities
    arrays["scal"] = scal
    arrays["lay"] = lay
    arrays["pass_table"] = np.ascontiguousarray(content_pass_table(c), dtype=np.float64)
    arrays.update(move_tables(c))
    return Pack(**arrays)


def move_tables(c: Content) -> dict:
    """The static move tables of :func:`pack`, from the readable engine's own functions."""
    from types import SimpleNamespace

    from sim.rules.movement import steps_table, walk_costs

    table = steps_table(c)
    view = SimpleNamespace(content=c)
    start, dest, mp = [0], [], []
    for s in range(c.n_spaces):
        costs = walk_costs(view, s, K.BASE_MP + 1)
        for d in sorted(costs):
            if d != s:
                dest.append(d)
                mp.append(costs[d])
        start.append(len(dest))
    airports = [s for s in range(c.n_spaces) if c.space_airport[s]]
    words = (c.n_spaces + 63) // 64
    reach = np.zeros((c.n_spaces, words), dtype=np.uint64)
    for a in airports:
        for t in table[a]:
            if t != a:
                reach[a, t // 64] |= np.uint64(1) << np.uint64(t % 64)
    un = [s for s in range(c.n_spaces) if c.space_kind[s] != K.REGIONAL]
    hop = np.asarray(c.hop_distance)
    by_distance = [sorted(airports, key=lambda a, t=t: (int(hop[a, t]), a)) for t in range(c.n_spaces)]
    near_start, near = [0], []
    for t in range(c.n_spaces):
        near.extend(a for a in airports if a != t and t in table[a])
        near_start.append(len(near))
    return {
        "walk_start": np.array(start, dtype=np.int64),
        "walk_dest": np.array(dest, dtype=np.int64),
        "walk_mp": np.array(mp, dtype=np.int64),
        "airport_spaces": np.array(airports, dtype=np.int64),
        "airport_reach": reach.view(np.int64),
        "un_dests": np.array(un, dtype=np.int64),
        "airports_by_distance": np.array(by_distance, dtype=np.int64).reshape(c.n_spaces, len(airports)),
        "airports_near_start": np.array(near_start, dtype=np.int64),
        "airports_near": np.array(near, dtype=np.int64),
    }


def settings_vector(c: Content, s) -> np.ndarray:
    """``cfg[N_CFG]`` of a :class:`~sim.rules.state.Settings` (derived values included)."""
    n = s.players
    cfg = np.full(N_CFG, -1, dtype=np.int64)
    cfg[C_PLAYERS] = n
    cfg[C_EASIER] = int(s.easier)
    cfg[C_DIRTY_LOBO] = int(s.dirty_lobo)
    cfg[C_DIRTY_LOC] = int(s.dirty_location)
    cfg[C_LOBO_START] = int(c.dirty_lobo_start) if s.dirty_lobo else int(c.lobo_start)
    cfg[C_LOC_TARGET] = int(c.setup_location_target[n]) + (
        int(c.dirty_location_delta) if s.dirty_location else 0
    )
    cfg[C_OVERFLOW] = int(c.setup_overflow_limit[n])
    cfg[C_RANDOM_LINEUP] = int(getattr(s, "random_lineup", False))
    if not cfg[C_RANDOM_LINEUP]:
        lineup = s.characters or tuple(int(x) for x in c.setup_lineup[n] if x >= 0)
        for i, ch in enumerate(lineup):
            cfg[C_CHARS + i] = ch
    return cfg


# --- strategies: ids and parameter vectors ------------------------------------------
RANDOM = 0
HEURISTIC = 1

(
    H_DICE_STOP,
    H_PLUS_ONE,
    H_REROLL,
    H_RESERVE,
    H_MOVE_RESOLVE,
    H_POOL_TARGET,
    H_FINAL_POOL_MIN,
    H_EXCH_WHEN,
    H_EXCH_MIN_POOL,
    H_MAX_GREENS,
    H_UN_MIN_DIST,
    H_REST_MARGIN,
    H_MISSION_REWARD,
    H_GAMBLE_RESOLVE,
    H_GAMBLE_P,
    H_AUTO_PASS_BELOW,
    H_CANCEL_AT,
    H_WATCH_FAIL,
) = range(18)
N_PARAMS = 18
PARAM_INDEX = {  # HeuristicParams field -> index in the parameter vector
    "dice_stop_margin": H_DICE_STOP,
    "plus_one": H_PLUS_ONE,
    "reroll": H_REROLL,
    "resolve_reserve": H_RESERVE,
    "move_resolve": H_MOVE_RESOLVE,
    "pool_target": H_POOL_TARGET,
    "final_pool_min": H_FINAL_POOL_MIN,
    "exchange_when": H_EXCH_WHEN,
    "exchange_min_pool": H_EXCH_MIN_POOL,
    "max_greens": H_MAX_GREENS,
    "un_min_distance": H_UN_MIN_DIST,
    "rest_margin": H_REST_MARGIN,
    "mission_reward": H_MISSION_REWARD,
    "gamble_resolve": H_GAMBLE_RESOLVE,
    "gamble_p": H_GAMBLE_P,
    "auto_pass_below": H_AUTO_PASS_BELOW,
    "cancel_at": H_CANCEL_AT,
    "watch_fail": H_WATCH_FAIL,
}
PLUS_ONE_CODES = {"never": 0, "henchman": 1, "always": 2}


def strategy_vector(strategy) -> tuple[int, np.ndarray]:
    """``(strategy id, params[N_PARAMS] float64)`` of a strategy with a kernel twin.

    Each built-in strategy writes its own vector (its ``kernel_vector()``, from the
    names above); the kernel never looks at strategy classes or names.
    """
    make = getattr(strategy, "kernel_vector", None)
    if make is None:
        raise ValueError(f"no kernel twin for strategy {getattr(strategy, 'name', strategy)!r}")
    sid, prm = make()
    if sid not in (RANDOM, HEURISTIC) or prm.shape != (N_PARAMS,) or prm.dtype != np.float64:
        raise ValueError(f"strategy {strategy.name!r}: kernel_vector() gave id {sid!r}, params {prm.shape}")
    return sid, prm


# --- reference <-> kernel state -------------------------------------------------------


def new_state(pk: Pack) -> np.ndarray:
    """A zeroed state vector for one game."""
    return np.zeros(int(pk.lay[L_SIZE]), dtype=np.int64)


def _put_deck(st, base, cap, deck) -> None:
    st[base + D_COUNT] = len(deck.pile)
    st[base + D_TOP] = deck.top
    st[base + D_NDISC] = len(deck.discard)
    st[base + D_PILE : base + D_PILE + len(deck.pile)] = deck.pile
    st[base + D_PILE + cap : base + D_PILE + cap + len(deck.discard)] = deck.discard


def _get_deck(st, base, cap) -> dict:
    n, nd = int(st[base + D_COUNT]), int(st[base + D_NDISC])
    return {
        "pile": [int(x) for x in st[base + D_PILE : base + D_PILE + n]],
        "discard": [int(x) for x in st[base + D_PILE + cap : base + D_PILE + cap + nd]],
        "top": int(st[base + D_TOP]),
    }


def encode(pk: Pack, g) -> np.ndarray:
    """The state vector of a reference GameState (to run kernel steps from a given position)."""
    lay = pk.lay
    st = new_state(pk)
    st[S_LOBO_START] = g.lobo_start
    st[S_LOC_TARGET] = g.location_target
    st[S_OVERFLOW] = g.overflow_limit
    st[S_CLOSE_LEFT] = g.close_tokens_left
    st[S_UN_SUPPLY] = g.un_supply
    st[S_LOC_TRACK] = g.location_track
    st[S_TURN] = g.turn
    st[S_ACTIVE] = g.active
    st[S_OUTCOME] = -1 if g.outcome is None else int(g.outcome)
    st[S_DICE_RES] = int(g.dice_resolve_used)
    st[S_MOVE_RES] = int(g.move_resolve_used)
    st[S_WATCHED] = g.watched
    st[S_N_NEXT] = len(g.next_to_lobo)
    st[S_N_REMOVED] = len(g.villain_removed)
    for i, name in enumerate(STAT_NAMES):
        st[S_STATS + i] = getattr(g.stats, name)
    n_h = len(g.henchman_level)
    st[lay[L_HLEVEL] : lay[L_HLEVEL] + n_h] = g.henchman_level
    st[lay[L_GREEN] : lay[L_GREEN] + n_h] = g.green_loc
    st[lay[L_INTEL] : lay[L_INTEL] + len(g.intel_loc)] = g.intel_loc
    st[lay[L_AIRPORT] : lay[L_AIRPORT] + len(g.airport_closed)] = [int(x) for x in g.airport_closed]
    st[lay[L_NEXT] : lay[L_NEXT] + len(g.next_to_lobo)] = g.next_to_lobo
    st[lay[L_REMOVED] : lay[L_REMOVED] + len(g.villain_removed)] = g.villain_removed
    _put_deck(st, lay[L_VILLAIN], lay[L_VCAP], g.villain)
    _put_deck(st, lay[L_FATE], lay[L_FCAP], g.fate)
    _put_deck(st, lay[L_TS], lay[L_TSCAP], g.top_secret)
    for d, deck in enumerate(g.encounters):
        _put_deck(st, pk.deck_base[d], lay[L_ECAP], deck)
    for p in g.players:
        b = lay[L_PLAYERS] + p.seat * lay[L_PSTRIDE]
        st[b + P_CHAR] = p.character
        st[b + P_SPACE] = p.space
        st[b + P_SKILLS : b + P_SKILLS + N_SKILLS] = p.skills
        st[b + P_RESOLVE] = p.resolve
        st[b + P_RESOLVE_MAX] = p.resolve_max
        st[b + P_LIFE] = p.life
        st[b + P_ADV : b + P_ADV + N_ADV] = [int(x) for x in p.advanced]
        st[b + P_INJ] = p.injuries
        st[b + P_UN] = p.un_tokens
        st[b + P_N_MISSIONS] = len(p.missions)
        st[b + P_MISSIONS : b + P_MISSIONS + len(p.missions)] = p.missions
        st[b + P_FLIPPED : b + P_FLIPPED + 2] = [int(x) for x in p.mission_flipped]
        st[b + P_WATCH] = int(p.watch)
        st[b + P_GIVES] = int(p.gives_un)
        st[b + P_RESTED] = int(p.rested_last)
        st[b + P_N_TS] = len(p.top_secret)
        st[b + P_TS : b + P_TS + len(p.top_secret)] = p.top_secret
    return st


def snapshot(g) -> dict:
    """Comparable summary of a reference GameState (the fields the kernel mirrors)."""

    def deck(d):
        return {"pile": list(d.pile), "discard": list(d.discard), "top": d.top}

    return {
        "lobo_start": g.lobo_start,
        "location_target": g.location_target,
        "overflow_limit": g.overflow_limit,
        "close_tokens_left": g.close_tokens_left,
        "un_supply": g.un_supply,
        "location_track": g.location_track,
        "turn": g.turn,
        "active": g.active,
        "outcome": -1 if g.outcome is None else int(g.outcome),
        "dice_resolve_used": int(g.dice_resolve_used),
        "move_resolve_used": int(g.move_resolve_used),
        "watched": g.watched,
        "next_to_lobo": list(g.next_to_lobo),
        "villain_removed": list(g.villain_removed),
        "stats": {n: getattr(g.stats, n) for n in STAT_NAMES},
        "henchman_level": list(g.henchman_level),
        "green_loc": list(g.green_loc),
        "intel_loc": list(g.intel_loc),
        "airport_closed": [int(x) for x in g.airport_closed],
        "villain": deck(g.villain),
        "fate": deck(g.fate),
        "top_secret": deck(g.top_secret),
        "encounters": [deck(d) for d in g.encounters],
        "players": [
            {
                "character": p.character,
                "space": p.space,
                "skills": list(p.skills),
                "resolve": p.resolve,
                "resolve_max": p.resolve_max,
                "life": p.life,
                "advanced": [int(x) for x in p.advanced],
                "injuries": p.injuries,
                "un_tokens": p.un_tokens,
                "missions": list(p.missions),
                "mission_flipped": [int(x) for x in p.mission_flipped],
                "watch": int(p.watch),
                "gives_un": int(p.gives_un),
                "rested_last": int(p.rested_last),
                "top_secret": list(p.top_secret),
            }
            for p in g.players
        ],
    }


def snapshot_state(pk: Pack, st: np.ndarray, players: int) -> dict:
    """The :func:`snapshot` dict of a kernel state vector."""
    lay = pk.lay
    n_h = pk.henchman_autopass.shape[0]
    n_i = pk.intel_token_type.shape[0]
    n_s = pk.space_kind.shape[0]

    def ints(a, b):
        return [int(x) for x in st[a:b]]

    out = {
        "lobo_start": int(st[S_LOBO_START]),
        "location_target": int(st[S_LOC_TARGET]),
        "overflow_limit": int(st[S_OVERFLOW]),
        "close_tokens_left": int(st[S_CLOSE_LEFT]),
        "un_supply": int(st[S_UN_SUPPLY]),
        "location_track": int(st[S_LOC_TRACK]),
        "turn": int(st[S_TURN]),
        "active": int(st[S_ACTIVE]),
        "outcome": int(st[S_OUTCOME]),
        "dice_resolve_used": int(st[S_DICE_RES]),
        "move_resolve_used": int(st[S_MOVE_RES]),
        "watched": int(st[S_WATCHED]),
        "next_to_lobo": ints(lay[L_NEXT], lay[L_NEXT] + st[S_N_NEXT]),
        "villain_removed": ints(lay[L_REMOVED], lay[L_REMOVED] + st[S_N_REMOVED]),
        "stats": {n: int(st[S_STATS + i]) for i, n in enumerate(STAT_NAMES)},
        "henchman_level": ints(lay[L_HLEVEL], lay[L_HLEVEL] + n_h),
        "green_loc": ints(lay[L_GREEN], lay[L_GREEN] + n_h),
        "intel_loc": ints(lay[L_INTEL], lay[L_INTEL] + n_i),
        "airport_closed": ints(lay[L_AIRPORT], lay[L_AIRPORT] + n_s),
        "villain": _get_deck(st, lay[L_VILLAIN], lay[L_VCAP]),
        "fate": _get_deck(st, lay[L_FATE], lay[L_FCAP]),
        "top_secret": _get_deck(st, lay[L_TS], lay[L_TSCAP]),
        "encounters": [_get_deck(st, pk.deck_base[d], lay[L_ECAP]) for d in range(len(K.DECKS))],
        "players": [],
    }
    for seat in range(players):
        b = int(lay[L_PLAYERS] + seat * lay[L_PSTRIDE])
        out["players"].append(
            {
                "character": int(st[b + P_CHAR]),
                "space": int(st[b + P_SPACE]),
                "skills": ints(b + P_SKILLS, b + P_SKILLS + N_SKILLS),
                "resolve": int(st[b + P_RESOLVE]),
                "resolve_max": int(st[b + P_RESOLVE_MAX]),
                "life": int(st[b + P_LIFE]),
                "advanced": ints(b + P_ADV, b + P_ADV + N_ADV),
                "injuries": int(st[b + P_INJ]),
                "un_tokens": int(st[b + P_UN]),
                "missions": ints(b + P_MISSIONS, b + P_MISSIONS + st[b + P_N_MISSIONS]),
                "mission_flipped": ints(b + P_FLIPPED, b + P_FLIPPED + 2),
                "watch": int(st[b + P_WATCH]),
                "gives_un": int(st[b + P_GIVES]),
                "rested_last": int(st[b + P_RESTED]),
                "top_secret": ints(b + P_TS, b + P_TS + st[b + P_N_TS]),
            }
        )
    return out
