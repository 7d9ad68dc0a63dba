"""The typed, frozen content object the engines read, and the content error type.

Everything the kernel needs is a read-only numpy array (``np.int64`` for integers,
``np.bool_`` for flags, ``-1`` as padding / "none") or a plain int. Names stay as
tuples of strings for reports and look-ups. Codes come from
:mod:`sim.content.constants`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


class ContentError(ValueError):
    """A content pack that cannot be loaded: ``"<file>: <entry>: <reason>"``.

    ``file`` is the pack file name (e.g. ``villain.toml``), ``entry`` names the
    card / city / die / section at fault (``None`` when the whole file is meant)
    and ``reason`` says what is wrong.
    """

    def __init__(self, file: str | None, entry: str | None, reason: str):
        self.file = file
        self.entry = entry
        self.reason = reason
        super().__init__(": ".join(p for p in (file, entry, reason) if p))


@dataclass(frozen=True, eq=False)
class Content:
    """One content pack, validated and turned into arrays (see ``sim.content.load``)."""

    # names and meta
    name: str
    path: Path
    hash: str
    assumed: tuple[str, ...]

    # dice (file order)
    die_names: tuple[str, ...]
    die_success: np.ndarray  # [n_dice, 6] 1 where the face is S
    die_injury: np.ndarray  # [n_dice, 6] 1 for I, 2 for II
    die_heal: np.ndarray  # [n_dice, 6] 1 for H
    bag_dice: np.ndarray  # [n_bag] die indices that go in the bag
    always_die: int  # the die rolled with every test (not in the bag)

    # intel
    intel_type_names: tuple[str, ...]
    intel_token_type: np.ndarray  # [n_intel] token id -> INTEL_TYPES code
    n_un_transport: int
    n_close_airport_tokens: int

    # villain deck (file order = card id)
    villain_advance: np.ndarray  # [n] +2/+1/-1, 0 for Injury cards
    villain_injury: np.ndarray  # [n] bool
    villain_close_city: np.ndarray  # [n] space index or -1
    villain_add_intel: np.ndarray  # [n, 2] space indices, -1 pad
    villain_remove_region: np.ndarray  # [n] REGIONS code or -1

    # Dr. Lobo
    lobo_start: int
    lobo_loss: int
    lobo_intel_required: np.ndarray  # [lobo_loss, 4] Intel needed per type at each position

    # henchmen (index = green Location token id)
    henchman_names: tuple[str, ...]
    henchman_option_skill: np.ndarray  # [n_h, 3, 2] basic skill code, -1 pad
    henchman_option_modifier: np.ndarray  # [n_h, 3, 2]
    henchman_option_successes: np.ndarray  # [n_h, 3, 2] 0 pad
    henchman_autopass: np.ndarray  # [n_h, 3] advanced skill code or -1
    henchman_reward: np.ndarray  # [n_h, 3] EFFECTS code applied on a pass
    henchman_reward_amount: np.ndarray  # [n_h, 3]
    henchman_reward_skill: np.ndarray  # [n_h, 3] as encounter_reward_skill
    henchman_penalty: np.ndarray  # [n_h, 3] EFFECTS code applied on a fail
    henchman_penalty_amount: np.ndarray  # [n_h, 3]
    henchman_penalty_skill: np.ndarray  # [n_h, 3]
    henchman_consequences_in_encounters: bool  # henchmen.toml [readings]

    # characters
    character_names: tuple[str, ...]
    character_skills: np.ndarray  # [n_char, 5] in BASIC_SKILLS order
    character_resolve_start: np.ndarray  # [n_char]
    character_resolve_max: np.ndarray  # [n_char]
    character_life: np.ndarray  # [n_char]
    character_advanced: np.ndarray  # [n_char, 11] bool: the mat's fixed advanced skills (how many to pick)
    character_advanced_choices: np.ndarray  # [n_char, 11] bool: the skills a player may pick at set-up
    character_skill_min: np.ndarray  # [n_char] lowest basic skill level on the mat
    character_skill_max: np.ndarray  # [n_char] highest basic skill level on the mat
    n_advanced_skill_tokens: int  # tokens of each advanced skill
    character_start_space: np.ndarray  # [n_char] space index
    character_start_un: np.ndarray  # [n_char]
    character_start_status: np.ndarray  # [n_char, MAX_START_STATUS] status card kinds dealt at set-up, -1 pad
    character_gives_un: np.ndarray  # [n_char] bool
    character_reduced_resolve_cut: np.ndarray  # [n_char] bool

    # setup by player count: arrays of length 7 indexed by player count (index 0 unused)
    setup_board_intel: np.ndarray
    setup_extra_un: np.ndarray
    setup_extra_top_secret: np.ndarray
    setup_extra_choice: np.ndarray
    setup_giver_extra_un: np.ndarray
    setup_giver_extra_top_secret: np.ndarray
    setup_giver_choice_max_un: np.ndarray
    setup_henchmen_level2: np.ndarray
    setup_remove_injury_cards: np.ndarray  # bool
    setup_remove_minus_one: np.ndarray  # bool
    setup_remove_random_plus_one: np.ndarray
    setup_resolve_cut: np.ndarray
    setup_resolve_cut_reduced: np.ndarray
    setup_location_target: np.ndarray
    setup_overflow_limit: np.ndarray
    setup_mission_resolve: np.ndarray
    setup_rest_roll_die: np.ndarray  # die index or -1
    setup_lineup: np.ndarray  # [7, 6] character indices, -1 pad
    easier_extra_choice: np.ndarray
    easier_extra_top_secret: np.ndarray
    easier_henchmen_level1: np.ndarray  # bool
    dirty_lobo_start: int
    dirty_location_delta: int
    turn_cap: int

    # Top Secret deck
    top_secret_effect: np.ndarray  # [n_ts] TOP_SECRET_EFFECTS code

    # encounters (card id = file order; side 0 No Intel, 1 With Intel)
    encounter_ids: tuple[str, ...]
    encounter_deck: np.ndarray  # [n_enc] DECKS code
    encounter_option_skill: np.ndarray  # [n_enc, 2, 2] basic skill, -1 pad
    encounter_option_modifier: np.ndarray  # [n_enc, 2, 2]
    encounter_option_successes: np.ndarray  # [n_enc, 2, 2] 0 pad
    encounter_gamble: np.ndarray  # [n_enc, 2] bool
    encounter_autopass: np.ndarray  # [n_enc, 2] advanced skill or -1
    encounter_reward: np.ndarray  # [n_enc, 2] EFFECTS code
    encounter_reward_amount: np.ndarray  # [n_enc, 2]
    encounter_reward_skill: (
        np.ndarray
    )  # [n_enc, 2] basic (up_skill) / advanced (named_advanced_skill) / status card kind (status) / -1
    encounter_penalty: np.ndarray  # [n_enc, 2] EFFECTS code
    encounter_penalty_amount: np.ndarray  # [n_enc, 2]
    encounter_penalty_skill: np.ndarray  # [n_enc, 2] basic (lower_skill) / -1
    encounter_no_advance: np.ndarray  # [n_enc, 2] bool
    encounter_henchman: np.ndarray  # [n_enc, 2] henchman the side tests (FAQ 6) or -1
    lost_intel_to_supply: bool  # encounters.toml [readings] lost_intel: "supply" (True) or "removed"
    flip_anywhere_first: int  # encounters.toml [readings] flip_anywhere: FLIP_POOL_FIRST / FLIP_BOARD_FIRST

    # Fate deck
    fate_city: np.ndarray  # [n_fate] space index
    fate_rank: np.ndarray  # [n_fate] 4..14 (11 J, 12 Q, 13 K, 14 A)
    fate_suit: np.ndarray  # [n_fate] 0 clubs, 1 diamonds, 2 hearts, 3 spades

    # map: cities first, then oceans, then regional areas
    space_names: tuple[str, ...]
    space_kind: np.ndarray  # [n] CITY / OCEAN / REGIONAL
    space_deck: np.ndarray  # [n] DECKS code (OCEAN_DECK at sea)
    space_ussr: np.ndarray  # [n] bool
    space_airport: np.ndarray  # [n] bool
    space_red_airport: np.ndarray  # [n] bool
    space_train: np.ndarray  # [n] bool
    adjacent: np.ndarray  # [n, n] bool, directed: adjacent[a, b] = a step a -> b is allowed
    neighbor_start: np.ndarray  # [n + 1] CSR row starts of `adjacent`
    neighbor_list: np.ndarray  # [m] CSR neighbours, sorted by index within a row
    hop_distance: np.ndarray  # [n, n] BFS steps over `adjacent`; UNREACHABLE when none

    # status cards (status.toml): kinds in file order; a card id = its place in the deck
    status_ids: tuple[str, ...] = ()
    status_names: tuple[str, ...] = ()
    status_type: np.ndarray = None  # [n_status] card id -> kind
    status_polarity: np.ndarray = None  # [n_kinds] STATUS_POLARITIES code
    status_effect: np.ndarray = None  # [n_kinds] STATUS_EFFECTS code
    status_amount: np.ndarray = None  # [n_kinds] the effect's amount (0 where it takes none)
    status_skill: np.ndarray = None  # [n_kinds] basic skill of skill_modifier, else -1
    status_negative_lowers_skill: bool = True  # status.toml [readings] unavailable_negative: "lower_skill"
    status_discard_to_deck: bool = True  # status.toml [readings] discarded: "deck" (True) or "removed"

    # the pack as played by a player count with its own Dr. Lobo start or villain mix
    # (setup.toml's optional lobo_start / villain_counts); see for_players
    by_players: dict = field(default_factory=dict, repr=False)

    UNREACHABLE = 999

    # ------------------------------------------------------------------ helpers
    @property
    def short_hash(self) -> str:
        return self.hash[:12]

    @property
    def n_spaces(self) -> int:
        return len(self.space_names)

    @property
    def n_cities(self) -> int:
        return int(np.count_nonzero(self.space_kind == 0))

    @property
    def n_dice(self) -> int:
        return len(self.die_names)

    @property
    def n_intel(self) -> int:
        return int(self.intel_token_type.shape[0])

    @property
    def n_villain(self) -> int:
        return int(self.villain_advance.shape[0])

    @property
    def n_encounters(self) -> int:
        return int(self.encounter_deck.shape[0])

    @property
    def n_fate(self) -> int:
        return int(self.fate_city.shape[0])

    @property
    def n_status(self) -> int:
        return int(self.status_type.shape[0])

    @property
    def n_henchmen(self) -> int:
        return len(self.henchman_names)

    @property
    def n_characters(self) -> int:
        return len(self.character_names)

    def for_players(self, players: int) -> Content:
        """The pack a ``players``-player game plays: itself, or its per-player-count variant."""
        return self.by_players.get(int(players), self)

    def space_index(self, name: str) -> int:
        return _index(self.space_names, name, "map.toml", "space")

    def character_index(self, name: str) -> int:
        return _index(self.character_names, name, "characters.toml", "character")

    def henchman_index(self, name: str) -> int:
        return _index(self.henchman_names, name, "henchmen.toml", "henchman")

    def status_index(self, name: str) -> int:
        """The status card kind with this id (or name)."""
        if name in self.status_names:
            return self.status_names.index(name)
        return _index(self.status_ids, name, "status.toml", "status card")

    def die_index(self, name: str) -> int:
        return _index(self.die_names, name, "dice.toml", "die")

    def __repr__(self) -> str:
        return f"Content(name={self.name!r}, hash={self.short_hash}, path={str(self.path)!r})"


def _index(names: tuple[str, ...], name: str, file: str, kind: str) -> int:
    try:
        return names.index(name)
    except ValueError:
        # case-insensitive fallback for hand-typed names
        folded = [n.casefold() for n in names]
        if isinstance(name, str) and name.casefold() in folded:
            return folded.index(name.casefold())
        raise ContentError(
            file, f"{kind} {name!r}", f"unknown {kind}; known: {', '.join(names)}"
        ) from None
