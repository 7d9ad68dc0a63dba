"""Content, settings and game state as numba-friendly arrays (the kernel's data layout).

Every data block is **one declarative table** below, and everything else is
derived from it: the offset constants the kernel code uses, the namedtuple
:class:`Pack` and the compiled bundle's type (:mod:`sim.kernel.packref`),
:func:`encode`, :func:`snapshot_state` and the output row's field order.

* :data:`BUNDLE`: the content bundle, ``(name, dtype, ndim)``: the
  :class:`~sim.content.Content` arrays the kernel reads (as int64), then the
  tables :func:`pack` derives. :func:`pack` turns a Content into a :class:`Pack`,
  a namedtuple the jitted code takes as an argument (never as a global, so another
  pack or card count never recompiles).
* One game's state is a flat int64 vector ``st``: :data:`STATE` (scalars at fixed
  offsets ``S_*``, among them counts the kernel derives from other fields and keeps
  up to date, rebuilt by :func:`encode`; then the :class:`~sim.rules.state.Stats`
  counters ``ST_*``),
  then :data:`REGIONS`, whose offsets depend on the content sizes and are kept in
  ``pk.lay`` (indices ``L_*``, sizes in ``pk.region_size``). A player is a block
  of ``pk.lay[L_PSTRIDE]`` ints laid out by :data:`PLAYER` (``P_*``); a deck is a
  block ``[count, top, n_discard, pile[cap], discard[cap]]`` (the reference's
  ``Deck.pile`` / ``.discard`` / ``.top``, in the same order). The scratch regions
  (``L_W_*``) are part of :data:`REGIONS`: the kernel never allocates, and
  :func:`sim.kernel.decks.work` hands out exactly the region the table sized.
* :data:`ROW_FIELDS` / :data:`ROW_BLOCKS`: the output row, one per game (the
  numeric fields of :class:`~sim.rules.game.GameRecord` in its order, then each
  henchman's level and each seat's character); ``R_*`` are their offsets.
* :func:`settings_vector` turns :class:`~sim.rules.state.Settings` into ``cfg``
  (int64, indices ``C_*``), derived values included.
* :func:`encode` copies a reference :class:`~sim.rules.state.GameState` into a
  state vector and :func:`snapshot` / :func:`snapshot_state` give the same
  comparable dict for both engines (what the equality tests compare).

Adding a field: a per-player field is one line in :data:`PLAYER` (plus the rule
code that uses ``P_<NAME>``); a stat is one field of ``sim.rules.state.Stats`` and
of ``GameRecord`` (plus the rule code that counts ``ST_<NAME>``); a content array
is one line in :data:`BUNDLE`.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from dataclasses import fields as dataclass_fields

import numpy as np

from sim.content import Content
from sim.content import constants as codes
from sim.rules.game import GameRecord
from sim.rules.state import Stats

N_SKILLS = len(codes.BASIC_SKILLS)
N_ADV = len(codes.ADVANCED_SKILLS)
N_STATUS_EFFECTS = len(codes.STATUS_EFFECTS)
N_TS_EFFECTS = len(codes.TOP_SECRET_EFFECTS)


@dataclass(frozen=True)
class Field:
    """One entry of a state table: its offset constant, the reference attribute it mirrors, its size.

    ``size`` is a shape expression: an int, or a Python expression over the sizes of
    :func:`sizes` (``"n_henchmen"``, ``"3 * n_villain"``). ``kind`` says how it mirrors
    the reference: ``int`` / ``bool`` (a value or a fixed-size list), ``list`` (a list
    whose length is kept in the slot ``count``), ``outcome`` (None is -1), ``deck``
    (a :class:`~sim.rules.state.Deck` of capacity ``size``; ``copies`` decks side by
    side, a list of decks if more than one), ``players`` or ``scratch`` (no mirror).
    ``cap`` names the ``pk.lay`` slot that keeps a deck's capacity or the player stride.
    """

    const: str
    name: str = ""
    size: int | str = 1
    kind: str = "int"
    count: str = ""
    cap: str = ""
    copies: int = 1


# --- the scalar state: fixed offsets S_*, then the Stats counters ST_* -------------------
STATE = (
    Field("S_LOBO_START", "lobo_start"),
    Field("S_LOC_TARGET", "location_target"),
    Field("S_OVERFLOW", "overflow_limit"),
    Field("S_CLOSE_LEFT", "close_tokens_left"),
    Field("S_UN_SUPPLY", "un_supply"),
    Field("S_LOC_TRACK", "location_track"),
    Field("S_TURN", "turn"),
    Field("S_ACTIVE", "active"),
    Field("S_OUTCOME", "outcome", kind="outcome"),  # -1 while the game runs, else an Outcome code
    Field("S_DICE_RES", "dice_resolve_used", kind="bool"),
    Field("S_MOVE_RES", "move_resolve_used", kind="bool"),
    Field("S_WATCHED", "watched"),
    Field("S_N_NEXT"),  # cards next to Dr. Lobo (length of L_NEXT)
    Field("S_N_REMOVED"),  # villain cards removed at set-up (length of L_REMOVED)
    # derived from L_STATUS (kept by take_status and discard_status, rebuilt by encode): per seat,
    # the status cards it holds by effect, and the dice they add to each basic skill's tests
    Field("S_HELD_EFFECTS", size=codes.MAX_PLAYERS * N_STATUS_EFFECTS),
    Field("S_HELD_DICE", size=codes.MAX_PLAYERS * N_SKILLS),
    # derived from each hand (P_TS; kept by draw_top_secret and play_top_secret, rebuilt by encode):
    # per seat, the Top Secret cards it holds by effect
    Field("S_HELD_TS", size=codes.MAX_PLAYERS * N_TS_EFFECTS),
    # derived from the players' P_ADV (kept by decks.take_advanced, rebuilt by encode): the seats
    # holding each advanced skill's token
    Field("S_ADV_HELD", size=N_ADV),
)
# Stats counters, in the dataclass's order: ST_TESTS_ATTEMPTED, ST_INJURIES_TAKEN, ...
STAT_NAMES = tuple(f.name for f in dataclass_fields(Stats))

# --- a player's block: fixed offsets P_*; only the last field's size depends on the pack ---
PLAYER = (
    Field("P_CHAR", "character"),
    Field("P_SPACE", "space"),
    Field("P_SKILLS", "skills", N_SKILLS),
    Field("P_RESOLVE", "resolve"),
    Field("P_RESOLVE_MAX", "resolve_max"),
    Field("P_LIFE", "life"),
    Field("P_ADV", "advanced", N_ADV, kind="bool"),
    Field("P_INJ", "injuries"),
    Field("P_UN", "un_tokens"),
    Field("P_MISSIONS", "missions", 2, kind="list", count="P_N_MISSIONS"),  # 2 Fate card ids
    Field("P_FLIPPED", "mission_flipped", 2, kind="bool"),
    Field("P_GIVES", "gives_un", kind="bool"),
    Field("P_RESTED", "rested_last", kind="bool"),
    Field("P_TS", "top_secret", "n_top_secret", kind="list", count="P_N_TS"),  # the Top Secret hand
)

# --- a deck block ----------------------------------------------------------------------
D_COUNT, D_TOP, D_NDISC, D_PILE = range(4)  # then pile[cap], then discard[cap]

# --- regions after the scalars, offsets in pk.lay[L_*] (in this order) -------------------
REGIONS = (
    Field("L_HLEVEL", "henchman_level", "n_henchmen"),
    Field("L_GREEN", "green_loc", "n_henchmen"),
    Field("L_INTEL", "intel_loc", "n_intel"),
    Field("L_FACEUP", "intel_face_up", "n_intel", kind="bool"),
    Field("L_AIRPORT", "airport_closed", "n_spaces", kind="bool"),
    Field("L_NEXT", "next_to_lobo", "n_villain", kind="list", count="S_N_NEXT"),
    Field("L_REMOVED", "villain_removed", "n_villain", kind="list", count="S_N_REMOVED"),
    Field("L_STATUS", "status_holder", "n_status"),  # per status card: the seat holding it, -1 (in the deck) or -2 (removed)
    Field("L_VILLAIN", "villain", "n_villain", kind="deck", cap="L_VCAP"),
    Field("L_FATE", "fate", "n_fate", kind="deck", cap="L_FCAP"),
    Field("L_TS", "top_secret", "n_top_secret", kind="deck", cap="L_TSCAP"),
    Field("L_ENC", "encounters", "encounter_cap", kind="deck", cap="L_ECAP", copies=len(codes.DECKS)),
    Field("L_PLAYERS", "players", "player_stride", kind="players", cap="L_PSTRIDE", copies=codes.MAX_PLAYERS),
    # scratch ("work") regions at the end of the state vector: the kernel never allocates
    Field("L_W_SEEN", size="n_spaces", kind="scratch"),  # bit set (int64 words): plane + Resolve reach
    Field("L_W_CHOICES", size=4, kind="scratch"),  # token choices
    Field("L_W_OPTS", size="(MAX_OPTIONS + 1) * 4", kind="scratch"),  # test options (skill, modifier, successes, gamble)
    Field("L_W_EFFECT", size="max(N_SKILLS, N_ADV)", kind="scratch"),  # skills offered by a reward
    Field("L_W_MOPTS", size="(3 + N_SKILLS + n_status_kinds) * 2", kind="scratch"),  # secret-mission rewards (kind, skill or status kind)
    Field("L_W_BAG", size="n_bag", kind="scratch"),  # dice left in the bag
    Field("L_W_DICE", size="n_bag + 1", kind="scratch"),  # dice drawn (the Yellow die last)
    Field("L_W_FACES", size="n_bag + 1", kind="scratch"),  # their faces
    Field("L_W_DECK", size="n_fate", kind="scratch"),  # the gamble's deck
    Field("L_W_HAND", size=15, kind="scratch"),  # gamble hand, ranks, suits
    Field("L_W_POOL", size="N_INTEL_TYPES", kind="scratch"),  # Intel Pool by type (the record)
    Field("L_W_KEPT", size="n_villain", kind="scratch"),  # set-up: villain cards kept
    Field("L_W_CUT", size="n_villain", kind="scratch"),  # set-up: villain cards removed
    Field("L_W_PLUS_ONE", size="n_villain", kind="scratch"),  # set-up: the +1 cards
    Field("L_W_LEFT", size="n_characters", kind="scratch"),  # set-up: characters left to draw
    Field("L_W_LINEUP", size="MAX_PLAYERS", kind="scratch"),  # set-up: the line-up
    Field("L_W_CARDS", size="n_encounter", kind="scratch"),  # set-up: encounter cards of a deck
    Field("L_W_CHOSEN", size="n_henchmen", kind="scratch"),  # set-up: henchmen chosen for level 2
    Field("L_W_L2_POOL", size="n_henchmen", kind="scratch"),  # level-2 choice: henchmen left
    Field("L_W_L2_SCORES", size="n_henchmen", kind="scratch"),  # level-2 choice: scores
    Field("L_W_L2_TAKEN", size="n_henchmen", kind="scratch"),  # level-2 choice: taken flags
    Field("L_W_GREENS", size="2 * n_henchmen", kind="scratch"),  # FAQ 8: Location tokens to deal anew, their places
)
LAY_EXTRA = ("L_SIZE",)  # pk.lay's last slot: the state vector's length

# --- the output row: GameRecord's numeric fields in order, then blocks --------------------
ROW_TEXT = ("characters", "strategy", "variant", "henchman_levels")  # strings, rebuilt in Python
ROW_FIELDS = tuple(f.name for f in dataclass_fields(GameRecord) if f.name not in ROW_TEXT)
ROW_BLOCKS = (("henchman_levels", "n_henchmen"), ("characters", "MAX_PLAYERS"))  # after the fields
ROW_STAT_OF = {"injuries": "injuries_taken"}  # row fields named unlike their Stats counter
ROW_POOL = tuple(f"pool_{t}" for t in codes.INTEL_TYPES)  # the Intel Pool by type

# --- the settings vector cfg[C_*] -----------------------------------------------------------
SETTINGS = (
    Field("C_PLAYERS"),
    Field("C_EASIER"),
    Field("C_DIRTY_LOBO"),
    Field("C_DIRTY_LOC"),
    Field("C_LOBO_START"),
    Field("C_LOC_TARGET"),
    Field("C_OVERFLOW"),
    Field("C_CHARS", size=codes.MAX_PLAYERS),  # character indices by seat, -1 pad
    Field("C_RANDOM_LINEUP"),  # 1: draw each game's line-up from its SETUP stream
    Field("C_FIXED_SKILLS"),  # 1: characters take their fixed advanced skills (no set-up pick)
)

# --- content scalars and counts in pk.scal (a name of sizes() or a Content attribute) ---
SCALARS = (
    ("K_ALWAYS_DIE", "always_die"),
    ("K_N_UN", "n_un_transport"),
    ("K_N_CLOSE", "n_close_airport_tokens"),
    ("K_N_ADV_TOKENS", "n_advanced_skill_tokens"),
    ("K_LOBO_START", "lobo_start"),
    ("K_LOBO_LOSS", "lobo_loss"),
    ("K_DIRTY_LOBO", "dirty_lobo_start"),
    ("K_DIRTY_DELTA", "dirty_location_delta"),
    ("K_TURN_CAP", "turn_cap"),
    ("K_LOST_INTEL_SUPPLY", "lost_intel_to_supply"),
    ("K_FLIP_ANYWHERE", "flip_anywhere_first"),
    ("K_HENCHMAN_CONSEQ_IN_ENC", "henchman_consequences_in_encounters"),
    ("K_N_SPACES", "n_spaces"),
    ("K_N_CITIES", "n_cities"),
    # counts, named (the sizes of :func:`sizes`)
    ("K_N_HENCHMEN", "n_henchmen"),
    ("K_N_INTEL", "n_intel"),
    ("K_N_VILLAIN", "n_villain"),
    ("K_N_FATE", "n_fate"),
    ("K_N_TOP_SECRET", "n_top_secret"),
    ("K_N_ENCOUNTER", "n_encounter"),
    ("K_N_BAG", "n_bag"),
    ("K_N_CHARACTERS", "n_characters"),
    ("K_N_STATUS", "n_status"),
    ("K_STATUS_NEG_LOWER", "status_negative_lowers_skill"),
    ("K_STATUS_DISCARD_DECK", "status_discard_to_deck"),
)

# --- the content bundle: (name, dtype, ndim); Content arrays first, then derived tables ----
BUNDLE = (
    ("die_success", "int64", 2),
    ("die_injury", "int64", 2),
    ("die_heal", "int64", 2),
    ("bag_dice", "int64", 1),
    ("intel_token_type", "int64", 1),
    ("villain_advance", "int64", 1),
    ("villain_injury", "int64", 1),
    ("villain_close_city", "int64", 1),
    ("villain_add_intel", "int64", 2),
    ("villain_remove_region", "int64", 1),
    ("lobo_intel_required", "int64", 2),
    ("henchman_option_skill", "int64", 3),
    ("henchman_option_modifier", "int64", 3),
    ("henchman_option_successes", "int64", 3),
    ("henchman_autopass", "int64", 2),
    ("henchman_reward", "int64", 2),
    ("henchman_reward_amount", "int64", 2),
    ("henchman_reward_skill", "int64", 2),
    ("henchman_penalty", "int64", 2),
    ("henchman_penalty_amount", "int64", 2),
    ("henchman_penalty_skill", "int64", 2),
    ("character_skills", "int64", 2),
    ("character_resolve_start", "int64", 1),
    ("character_resolve_max", "int64", 1),
    ("character_life", "int64", 1),
    ("character_advanced", "int64", 2),
    ("character_advanced_choices", "int64", 2),
    ("character_skill_min", "int64", 1),
    ("character_skill_max", "int64", 1),
    ("character_start_space", "int64", 1),
    ("character_start_un", "int64", 1),
    ("character_start_status", "int64", 2),
    ("character_gives_un", "int64", 1),
    ("character_reduced_resolve_cut", "int64", 1),
    ("setup_board_intel", "int64", 1),
    ("setup_extra_un", "int64", 1),
    ("setup_extra_top_secret", "int64", 1),
    ("setup_extra_choice", "int64", 1),
    ("setup_giver_extra_un", "int64", 1),
    ("setup_giver_extra_top_secret", "int64", 1),
    ("setup_giver_choice_max_un", "int64", 1),
    ("setup_henchmen_level2", "int64", 1),
    ("setup_remove_injury_cards", "int64", 1),
    ("setup_remove_minus_one", "int64", 1),
    ("setup_remove_random_plus_one", "int64", 1),
    ("setup_resolve_cut", "int64", 1),
    ("setup_resolve_cut_reduced", "int64", 1),
    ("setup_location_target", "int64", 1),
    ("setup_overflow_limit", "int64", 1),
    ("setup_mission_resolve", "int64", 1),
    ("setup_rest_roll_die", "int64", 1),
    ("setup_lineup", "int64", 2),
    ("easier_extra_choice", "int64", 1),
    ("easier_extra_top_secret", "int64", 1),
    ("easier_henchmen_level1", "int64", 1),
    ("top_secret_effect", "int64", 1),
    ("encounter_deck", "int64", 1),
    ("encounter_option_skill", "int64", 3),
    ("encounter_option_modifier", "int64", 3),
    ("encounter_option_successes", "int64", 3),
    ("encounter_gamble", "int64", 2),
    ("encounter_autopass", "int64", 2),
    ("encounter_reward", "int64", 2),
    ("encounter_reward_amount", "int64", 2),
    ("encounter_reward_skill", "int64", 2),
    ("encounter_penalty", "int64", 2),
    ("encounter_penalty_amount", "int64", 2),
    ("encounter_penalty_skill", "int64", 2),
    ("encounter_no_advance", "int64", 2),
    ("encounter_henchman", "int64", 2),
    ("fate_city", "int64", 1),
    ("fate_rank", "int64", 1),
    ("fate_suit", "int64", 1),
    ("space_kind", "int64", 1),
    ("space_deck", "int64", 1),
    ("space_ussr", "int64", 1),
    ("space_airport", "int64", 1),
    ("space_red_airport", "int64", 1),
    ("space_train", "int64", 1),
    ("hop_distance", "int64", 2),
    ("status_type", "int64", 1),
    ("status_polarity", "int64", 1),
    ("status_effect", "int64", 1),
    ("status_amount", "int64", 1),
    ("status_skill", "int64", 1),
    ("steps_start", "int64", 1),  # [n_spaces + 1] CSR of spaces one MP away (connections + train hops)
    ("steps_list", "int64", 1),
    ("autopass_counts", "int64", 1),  # [11] automatic passes per advanced skill (heuristic's advanced_skill)
    ("autopass_level1_counts", "int64", 1),  # [11] level-1 henchmen each skill passes (heuristic's set-up pick)
    ("autopass_encounter_counts", "int64", 1),  # [11] encounter sides each skill passes (heuristic's set-up pick)
    ("deck_base", "int64", 1),  # [6] state offset of each encounter deck block
    ("scal", "int64", 1),  # content scalars K_*
    ("lay", "int64", 1),  # state layout L_* (region offsets, deck capacities)
    ("region_size", "int64", 1),  # [N_LAY] size of each region (what work() hands out)
    ("pass_table", "float64", 3),  # [6, 2, 2] exact P(pass) (sim.odds.content_pass_table)
    ("walk_start", "int64", 1),  # [n_spaces + 1] CSR: spaces within BASE_MP + EXTRA_MP + 1 walking MP of a start, ascending
    ("walk_dest", "int64", 1),
    ("walk_mp", "int64", 1),  # their walking cost (1 .. BASE_MP + EXTRA_MP + 1)
    ("airport_spaces", "int64", 1),  # spaces with an airport, ascending
    ("airport_reach", "int64", 2),  # [n_spaces, words] bit set of the spaces one MP from an airport (not itself)
    ("un_dests", "int64", 1),  # spaces a UN Transport may reach (not regional), ascending
    ("airports_by_distance", "int64", 2),  # [n_spaces, n_airports] airports by (hop distance to a space, id)
    ("airports_near_start", "int64", 1),  # [n_spaces + 1] CSR: airports one MP from a space (not the space itself)
    ("airports_near", "int64", 1),
    # [EXTRA_MP + 1, n_spaces, n_spaces] free walk (<= BASE_MP + extra MP) from a space nearest a target,
    # lowest id on ties; -1 if none
    ("walk_best", "int64", 3),
    ("walk_to", "int64", 2),  # [n_spaces, n_spaces] walking MP from a space to another (0: beyond the walk table)
    ("space_in_region", "int64", 2),  # [n_regions, n_spaces] 1 if a space lies in an End of Turn region
    ("status_card_effect", "int64", 1),  # [n_status] each status card's effect (status_effect of its kind)
    ("status_card_bonus", "int64", 2),  # [N_SKILLS, n_status] dice a skill_modifier card adds to a test of a skill
)
Pack = namedtuple("Pack", [name for name, _, _ in BUNDLE])

# --- one game's context: what the kernel's functions of a game read and write --------------
# pk: the content bundle (a Pack, compiled as a PackRef); cfg: the settings vector C_*;
# st: the game's state vector; rs: its random streams (sim.rng); sid, prm: each seat's
# strategy id and parameter vector (team_vectors: sid[seat], prm[seat]). Built once per batch by simulate_batch; compiled
# code gets it as one pointer (sim.kernel.packref.ContextRef, the same attribute names).
Context = namedtuple("Context", ("pk", "cfg", "st", "rs", "sid", "prm"))


# --- derived: the offset constants -------------------------------------------------------
def _const_offsets() -> dict[str, int]:
    """Offsets of the fixed-size tables: S_*, ST_*, P_*, L_* (into pk.lay), R_*, C_*, K_*."""
    out: dict[str, int] = {}
    o = 0
    for f in STATE:
        out[f.const] = o
        o += f.size
    out["S_STATS"] = o
    for name in STAT_NAMES:
        out[f"ST_{name.upper()}"] = o
        o += 1
    out["N_SCALARS"] = o
    o = 0
    for i, f in enumerate(PLAYER):
        if not isinstance(f.size, int) and i != len(PLAYER) - 1:
            raise ValueError(f"sim.kernel.layout.PLAYER: {f.const}: only the last field may have a pack-sized shape")
        if f.count:
            out[f.count] = o
            o += 1
        out[f.const] = o
        if isinstance(f.size, int):
            o += f.size
    slots = [f.const for f in REGIONS] + [f.cap for f in REGIONS if f.cap] + list(LAY_EXTRA)
    for i, name in enumerate(slots):
        out[name] = i
    out["N_LAY"] = len(slots)
    for i, name in enumerate(ROW_FIELDS):
        out[f"R_{name.upper()}"] = i
    out["N_ROW"] = len(ROW_FIELDS)
    o = 0
    for f in SETTINGS:
        out[f.const] = o
        o += f.size
    out["N_CFG"] = o
    for i, (name, _) in enumerate(SCALARS):
        out[name] = i
    out["N_SCAL"] = len(SCALARS)
    return out


OFFSETS = _const_offsets()
globals().update(OFFSETS)  # S_TURN, ST_KNOCKOUTS, P_SKILLS, L_INTEL, R_TURNS, K_TURN_CAP ...
# the row fields that are Stats counters, and the state offsets they copy
_stat_rows = [(i, STAT_NAMES.index(ROW_STAT_OF.get(n, n))) for i, n in enumerate(ROW_FIELDS)
              if ROW_STAT_OF.get(n, n) in STAT_NAMES]
ROW_STAT_ROWS = np.array([i for i, _ in _stat_rows], dtype=np.int64)
ROW_STAT_SRC = np.array([OFFSETS["S_STATS"] + s for _, s in _stat_rows], dtype=np.int64)
ROW_POOL_ROWS = np.array([ROW_FIELDS.index(n) for n in ROW_POOL], dtype=np.int64)


def sizes(c: Content) -> dict[str, int]:
    """The names a shape expression may use, for a content pack."""
    n_ts = len(c.top_secret_effect)
    last = PLAYER[-1]
    out = {
        "n_henchmen": int(c.n_henchmen),
        "n_intel": int(c.n_intel),
        "n_spaces": int(c.n_spaces),
        "n_villain": int(c.n_villain),
        "n_fate": int(c.n_fate),
        "n_top_secret": n_ts,
        "n_encounter": len(c.encounter_deck),
        "encounter_cap": max(int(np.count_nonzero(c.encounter_deck == d)) for d in range(len(codes.DECKS))),
        "n_bag": len(c.bag_dice),
        "n_characters": len(c.character_life),
        "n_status": int(c.n_status),
        "n_status_kinds": len(c.status_ids),
        "MAX_PLAYERS": codes.MAX_PLAYERS,
        "MAX_OPTIONS": codes.MAX_OPTIONS,
        "N_SKILLS": N_SKILLS,
        "N_ADV": N_ADV,
        "N_INTEL_TYPES": len(codes.INTEL_TYPES),
    }
    out["player_stride"] = OFFSETS[last.const] + shape(last.size, out)
    return out


def shape(expr, env: dict) -> int:
    """The value of a shape expression (an int, or an expression over :func:`sizes`)."""
    if isinstance(expr, int):
        return expr
    return int(eval(expr, {"__builtins__": {"max": max, "min": min}}, env))


def layout(c: Content) -> tuple[np.ndarray, np.ndarray]:
    """``(lay[N_LAY], region_size[N_LAY])`` of a pack: region offsets, capacities, the state's length."""
    env = sizes(c)
    lay = np.zeros(OFFSETS["N_LAY"], dtype=np.int64)
    size = np.zeros(OFFSETS["N_LAY"], dtype=np.int64)
    o = OFFSETS["N_SCALARS"]
    for f in REGIONS:
        n = shape(f.size, env)
        block = D_PILE + 2 * n if f.kind == "deck" else n
        lay[OFFSETS[f.const]] = o
        size[OFFSETS[f.const]] = block * f.copies
        if f.cap:
            lay[OFFSETS[f.cap]] = n
        o += block * f.copies
    lay[OFFSETS["L_SIZE"]] = o
    return lay, size


def pack(c: Content) -> Pack:
    """The content pack as the kernel's argument bundle (:data:`BUNDLE`'s arrays, in its dtypes)."""
    from sim.odds import content_pass_table
    from sim.rules.movement import steps_table
    from sim.rules.skill_tests import (
        autopass_counts,
        autopass_encounter_counts,
        autopass_level1_counts,
    )

    content_fields = {f.name for f in dataclass_fields(Content)}
    arrays = {name: getattr(c, name) for name, _, _ in BUNDLE if name in content_fields}
    table = steps_table(c)
    start = np.zeros(c.n_spaces + 1, dtype=np.int64)
    for s, row in enumerate(table):
        start[s + 1] = start[s] + len(row)
    arrays["steps_start"] = start
    arrays["steps_list"] = np.array([t for row in table for t in row], dtype=np.int64)
    arrays["autopass_counts"] = np.array(autopass_counts(c), dtype=np.int64)
    arrays["autopass_level1_counts"] = np.array(autopass_level1_counts(c), dtype=np.int64)
    arrays["autopass_encounter_counts"] = np.array(autopass_encounter_counts(c), dtype=np.int64)
    lay, region_size = layout(c)
    ecap = int(lay[OFFSETS["L_ECAP"]])
    arrays["deck_base"] = np.array(
        [lay[OFFSETS["L_ENC"]] + d * (D_PILE + 2 * ecap) for d in range(len(codes.DECKS))], dtype=np.int64
    )
    env = sizes(c)
    arrays["scal"] = np.array(
        [env[name] if name in env else int(getattr(c, name)) for _, name in SCALARS], dtype=np.int64
    )
    arrays["lay"] = lay
    arrays["region_size"] = region_size
    arrays["pass_table"] = content_pass_table(c)
    arrays.update(move_tables(c))
    # villain.in_region for every region and space (USSR cities count as Asia too; oceans in none)
    arrays["space_in_region"] = np.array(
        [[c.space_kind[s] != codes.OCEAN and (c.space_ussr[s] != 0 if r == codes.USSR_REGION else c.space_deck[s] == r)
          for s in range(c.n_spaces)] for r in range(len(codes.REGIONS))], dtype=np.int64)
    # per status card, so the scans of a seat's cards read one table, without a branch per card
    kinds = np.asarray(c.status_type, dtype=np.int64)
    arrays["status_card_effect"] = np.asarray(c.status_effect, dtype=np.int64)[kinds]
    arrays["status_card_bonus"] = np.array(
        [[c.status_amount[k] if c.status_effect[k] == codes.SE_SKILL_MODIFIER and c.status_skill[k] == skill else 0
          for k in kinds] for skill in range(N_SKILLS)], dtype=np.int64).reshape(N_SKILLS, len(kinds))
    out = {}
    for name, dtype, ndim in BUNDLE:
        a = np.ascontiguousarray(np.asarray(arrays.pop(name)).astype(dtype))
        if a.ndim != ndim:
            raise ValueError(f"sim.kernel.layout.BUNDLE: {name} has {a.ndim} dimensions, the table says {ndim}")
        out[name] = a
    if arrays:
        raise ValueError(f"sim.kernel.layout.pack: {sorted(arrays)} built but not in BUNDLE")
    return Pack(**out)


def move_tables(c: Content) -> dict:
    """The static move tables of :func:`pack`, from the readable engine's own functions."""
    from types import SimpleNamespace

    from sim.rules.movement import steps_table, walk_costs

    table = steps_table(c)
    view = SimpleNamespace(content=c)
    start, dest, mp = [0], [], []
    for s in range(c.n_spaces):
        costs = walk_costs(view, s, codes.BASE_MP + codes.EXTRA_MP + 1)
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
    un = [s for s in range(c.n_spaces) if c.space_kind[s] != codes.REGIONAL]
    hop = np.asarray(c.hop_distance)
    by_distance = [sorted(airports, key=lambda a, t=t: (int(hop[a, t]), a)) for t in range(c.n_spaces)]
    walk_best = np.full((codes.EXTRA_MP + 1, c.n_spaces, c.n_spaces), -1, dtype=np.int64)
    walk_to = np.zeros((c.n_spaces, c.n_spaces), dtype=np.int64)
    for s in range(c.n_spaces):
        for k in range(start[s], start[s + 1]):
            walk_to[s, dest[k]] = mp[k]
        for extra in range(codes.EXTRA_MP + 1):
            free = [dest[k] for k in range(start[s], start[s + 1]) if mp[k] <= codes.BASE_MP + extra]
            for t in range(c.n_spaces):
                if free:
                    walk_best[extra, s, t] = min(free, key=lambda d, t=t: (int(hop[d, t]), d))
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
        "walk_best": walk_best,
        "walk_to": walk_to,
    }


def settings_vector(c: Content, s) -> np.ndarray:
    """``cfg[N_CFG]`` of a :class:`~sim.rules.state.Settings` (derived values included)."""
    n = s.players
    cfg = np.full(OFFSETS["N_CFG"], -1, dtype=np.int64)
    cfg[OFFSETS["C_PLAYERS"]] = n
    cfg[OFFSETS["C_EASIER"]] = int(s.easier)
    cfg[OFFSETS["C_DIRTY_LOBO"]] = int(s.dirty_lobo)
    cfg[OFFSETS["C_DIRTY_LOC"]] = int(s.dirty_location)
    cfg[OFFSETS["C_LOBO_START"]] = int(c.dirty_lobo_start) if s.dirty_lobo else int(c.lobo_start)
    cfg[OFFSETS["C_LOC_TARGET"]] = int(c.setup_location_target[n]) + (
        int(c.dirty_location_delta) if s.dirty_location else 0
    )
    cfg[OFFSETS["C_OVERFLOW"]] = int(c.setup_overflow_limit[n])
    cfg[OFFSETS["C_RANDOM_LINEUP"]] = int(getattr(s, "random_lineup", False))
    cfg[OFFSETS["C_FIXED_SKILLS"]] = int(getattr(s, "fixed_skills", False))
    if not cfg[OFFSETS["C_RANDOM_LINEUP"]]:
        lineup = s.characters or tuple(int(x) for x in c.setup_lineup[n] if x >= 0)
        for i, ch in enumerate(lineup):
            cfg[OFFSETS["C_CHARS"] + i] = ch
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
    H_PATIENCE,
    H_RELEASE_AT_TARGET,
) = range(20)
N_PARAMS = 20
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
    "patience_rounds": H_PATIENCE,
    "release_at_pool_target": H_RELEASE_AT_TARGET,
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


def team_vectors(team) -> tuple[np.ndarray, np.ndarray]:
    """``(sid[MAX_PLAYERS] int64, prm[MAX_PLAYERS, N_PARAMS] float64)``: each seat's strategy.

    ``team`` is one strategy per seat (seats beyond it are padded with the last seat's
    strategy; no game reads them). Every seat must have a kernel twin.
    """
    team = list(team)
    if not 1 <= len(team) <= codes.MAX_PLAYERS:
        raise ValueError(f"team: 1 to {codes.MAX_PLAYERS} strategies, one per seat, got {len(team)}")
    sid = np.zeros(codes.MAX_PLAYERS, dtype=np.int64)
    prm = np.zeros((codes.MAX_PLAYERS, N_PARAMS), dtype=np.float64)
    for seat in range(codes.MAX_PLAYERS):
        sid[seat], prm[seat] = strategy_vector(team[min(seat, len(team) - 1)])
    return sid, prm


# --- reference <-> kernel state -------------------------------------------------------


def new_state(pk: Pack) -> np.ndarray:
    """A zeroed state vector for one game."""
    return np.zeros(int(pk.lay[OFFSETS["L_SIZE"]]), dtype=np.int64)


def _value(f: Field, v):
    """A reference attribute as the int(s) the state holds."""
    if f.kind == "outcome":
        return -1 if v is None else int(v)
    if isinstance(v, (list, tuple)):
        return [int(x) for x in v]
    return int(v)


def _put_deck(st, base, cap, deck) -> None:
    """Store a reference Deck in the deck block at ``base`` (capacity ``cap``)."""
    st[base + D_COUNT] = len(deck.pile)
    st[base + D_TOP] = deck.top
    st[base + D_NDISC] = len(deck.discard)
    st[base + D_PILE : base + D_PILE + len(deck.pile)] = deck.pile
    st[base + D_PILE + cap : base + D_PILE + cap + len(deck.discard)] = deck.discard


def _get_deck(st, base, cap) -> dict:
    """A deck block as the dict of :func:`snapshot`."""
    n, nd = int(st[base + D_COUNT]), int(st[base + D_NDISC])
    return {
        "pile": [int(x) for x in st[base + D_PILE : base + D_PILE + n]],
        "discard": [int(x) for x in st[base + D_PILE + cap : base + D_PILE + cap + nd]],
        "top": int(st[base + D_TOP]),
    }


def _deck_dict(d) -> dict:
    """A reference Deck as the dict of :func:`snapshot`."""
    return {"pile": list(d.pile), "discard": list(d.discard), "top": d.top}


def _walk(pk: Pack, st, players: int):




    """Tuples (seat or None, field, state offset, size) of every mirrored field, players by seat (the tables' order)."""
    lay = pk.lay
    env_n = {f.const: int(pk.region_size[OFFSETS[f.const]]) // f.copies for f in REGIONS}
    for f in STATE:
        if f.name:
            yield None, f, OFFSETS[f.const], f.size
    for f in REGIONS:
        if f.kind in ("scratch", "players"):
            continue
        cap = int(lay[OFFSETS[f.cap]]) if f.cap else env_n[f.const]
        yield None, f, int(lay[OFFSETS[f.const]]), cap
    for seat in range(players):
        b = _player_offset(pk, seat)
        for f in PLAYER:
            n = f.size if isinstance(f.size, int) else int(lay[OFFSETS["L_PSTRIDE"]]) - OFFSETS[f.const]
            yield seat, f, b + OFFSETS[f.const], n


def encode(pk: Pack, g) -> np.ndarray:
    """The state vector of a reference GameState (to run kernel steps from a given position)."""
    st = new_state(pk)
    for i, name in enumerate(STAT_NAMES):
        st[OFFSETS["S_STATS"] + i] = getattr(g.stats, name)
    for seat, f, at, n in _walk(pk, st, len(g.players)):
        src = g if seat is None else g.players[seat]
        v = getattr(src, f.name)
        if f.kind == "deck":
            decks = v if f.copies > 1 else [v]
            for d, deck in enumerate(decks):
                _put_deck(st, at + d * (D_PILE + 2 * n), n, deck)
            continue
        v = _value(f, v)
        if f.kind == "list":
            count = OFFSETS[f.count] + (at - OFFSETS[f.const] if seat is not None else 0)
            st[count] = len(v)
        if isinstance(v, list):
            st[at : at + len(v)] = v
        else:
            st[at] = v
    count_held(pk, st)
    return st


def _player_offset(pk: Pack, seat: int) -> int:
    """Offset of a seat's player block in the state vector (``decks.player_base`` in plain Python)."""
    return int(pk.lay[OFFSETS["L_PLAYERS"]] + seat * pk.lay[OFFSETS["L_PSTRIDE"]])


def count_held(pk: Pack, st: np.ndarray) -> None:
    """Rebuild every count the kernel keeps of what the seats hold, from the fields it counts.

    The status cards by effect and their dice (S_HELD_EFFECTS, S_HELD_DICE, from L_STATUS), the
    Top Secret cards by effect (S_HELD_TS, from each hand) and the seats holding each advanced
    skill (S_ADV_HELD, from P_ADV): after setting those fields by hand, as :func:`encode` does.
    """
    effects, dice, ts, adv = (OFFSETS[k] for k in ("S_HELD_EFFECTS", "S_HELD_DICE", "S_HELD_TS", "S_ADV_HELD"))
    st[effects : effects + codes.MAX_PLAYERS * N_STATUS_EFFECTS] = 0
    st[dice : dice + codes.MAX_PLAYERS * N_SKILLS] = 0
    st[ts : ts + codes.MAX_PLAYERS * N_TS_EFFECTS] = 0
    st[adv : adv + N_ADV] = 0
    o = int(pk.lay[OFFSETS["L_STATUS"]])
    for card in range(int(pk.scal[OFFSETS["K_N_STATUS"]])):
        seat = int(st[o + card])
        if seat >= 0:
            st[effects + seat * N_STATUS_EFFECTS + int(pk.status_card_effect[card])] += 1
            st[dice + seat * N_SKILLS : dice + (seat + 1) * N_SKILLS] += pk.status_card_bonus[:, card]
    for seat in range(codes.MAX_PLAYERS):
        b = _player_offset(pk, seat)
        for i in range(int(st[b + OFFSETS["P_N_TS"]])):
            st[ts + seat * N_TS_EFFECTS + int(pk.top_secret_effect[st[b + OFFSETS["P_TS"] + i]])] += 1
        st[adv : adv + N_ADV] += st[b + OFFSETS["P_ADV"] : b + OFFSETS["P_ADV"] + N_ADV] != 0


def snapshot(g) -> dict:
    """Comparable summary of a reference GameState (the fields the kernel mirrors)."""
    out: dict = {"stats": {n: getattr(g.stats, n) for n in STAT_NAMES}, "players": []}
    for f in STATE + REGIONS:
        if not f.name or f.kind in ("scratch", "players"):
            continue
        v = getattr(g, f.name)
        if f.kind == "deck":
            out[f.name] = [_deck_dict(d) for d in v] if f.copies > 1 else _deck_dict(v)
        else:
            out[f.name] = _value(f, v)
    for p in g.players:
        out["players"].append({f.name: _value(f, getattr(p, f.name)) for f in PLAYER})
    return out


def snapshot_state(pk: Pack, st: np.ndarray, players: int) -> dict:
    """The :func:`snapshot` dict of a kernel state vector."""
    s0 = OFFSETS["S_STATS"]
    out: dict = {"stats": {n: int(st[s0 + i]) for i, n in enumerate(STAT_NAMES)}, "players": []}
    for seat, f, at, n in _walk(pk, st, players):
        if f.kind == "deck":
            step = D_PILE + 2 * n
            decks = [_get_deck(st, at + d * step, n) for d in range(f.copies)]
            v = decks if f.copies > 1 else decks[0]
        elif f.kind == "list":
            count = OFFSETS[f.count] + (at - OFFSETS[f.const] if seat is not None else 0)
            v = [int(x) for x in st[at : at + int(st[count])]]
        elif f.size == 1:
            v = int(st[at])
        else:
            v = [int(x) for x in st[at : at + n]]
        if seat is None:
            out[f.name] = v
        else:
            if seat == len(out["players"]):
                out["players"].append({})
            out["players"][seat][f.name] = v
    return out


def row_block_slots(n_henchmen: int) -> dict[str, tuple[int, int]]:
    """Each of :data:`ROW_BLOCKS` by name: (its first slot in a row, its width)."""
    out = {}
    o = OFFSETS["N_ROW"]
    env = {"n_henchmen": n_henchmen, "MAX_PLAYERS": codes.MAX_PLAYERS}
    for name, expr in ROW_BLOCKS:
        n = shape(expr, env)
        out[name] = (o, n)
        o += n
    return out


def row_columns(rows: np.ndarray, n_henchmen: int) -> dict[str, np.ndarray]:
    """The output rows by name: each of :data:`ROW_FIELDS`, then each of :data:`ROW_BLOCKS` (2-D)."""
    cols = {name: rows[:, OFFSETS[f"R_{name.upper()}"]] for name in ROW_FIELDS}
    for name, (o, n) in row_block_slots(n_henchmen).items():
        cols[name] = rows[:, o : o + n]
    return cols


def row_width(pk: Pack) -> int:
    """Ints in one output row for a pack (the fields, then the blocks)."""
    env = {"n_henchmen": int(pk.scal[OFFSETS["K_N_HENCHMEN"]]), "MAX_PLAYERS": codes.MAX_PLAYERS}
    return OFFSETS["N_ROW"] + sum(shape(expr, env) for _, expr in ROW_BLOCKS)
