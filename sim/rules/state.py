"""The state of one game of SMERSH, and the read-only view a strategy gets of it.

Strategies import this module only (never the engine): it describes the board,
the players and the decks, and :class:`PlayerView` hides what a real player
cannot see (face-down Intel, deck order, future rolls).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from enum import IntEnum

from sim.content import Content
from sim.content import constants as K
from sim.rules.errors import is_index

# Where a token is: a space index (>= 0) or one of these; a henchman's level after his
# defeat at level 3 (codes of sim.content.constants, named here for strategies).
SUPPLY, POOL, REMOVED, DEFEATED = K.SUPPLY, K.POOL, K.REMOVED, K.DEFEATED


class Outcome(IntEnum):
    """How a game ended."""

    WIN_LOCATION = K.WIN_LOCATION  # Location Track at target and the Intel Pool matched Dr. Lobo
    WIN_HENCHMEN = K.WIN_HENCHMEN  # all four henchmen defeated
    LOSS_LOBO = K.LOSS_LOBO  # Dr. Lobo reached 9
    LOSS_INTEL = K.LOSS_INTEL  # Location Track at target but the Pool lacked Intel
    TIMEOUT = K.TIMEOUT  # the safety turn cap: a bug to report, never a real outcome

    @property
    def label(self) -> str:
        return OUTCOME_NAMES[self]

    @property
    def is_win(self) -> bool:
        return self in (Outcome.WIN_LOCATION, Outcome.WIN_HENCHMEN)


OUTCOME_NAMES = {
    Outcome.WIN_LOCATION: "win_location",
    Outcome.WIN_HENCHMEN: "win_henchmen",
    Outcome.LOSS_LOBO: "loss_lobo",
    Outcome.LOSS_INTEL: "loss_intel",
    Outcome.TIMEOUT: "timeout",
}


# an empty line-up is refused, never taken for the default one (lineup_names)
EMPTY_LINEUP = "characters: empty; give one character per seat, 'default' or 'random'"


def lineup_names(characters) -> list:
    """The characters of a line-up given as ``"A,B"`` or a sequence of names or indices; an empty one is
    refused, never silently the default line-up (that is None or "default")."""
    names = ([c.strip() for c in characters.split(",") if c.strip()] if isinstance(characters, str)
             else list(characters))
    if not names:
        raise ValueError(EMPTY_LINEUP)
    return names


@dataclass(frozen=True)
class Settings:
    """What varies between games of one study cell: player count, line-up, variants."""

    players: int = 4
    characters: tuple[int, ...] = ()  # character indices by seat; () = the pack's default line-up
    random_lineup: bool = False  # draw each game's line-up from its SETUP stream
    easier: bool = False
    dirty_lobo: bool = False  # Dirty Intel: Dr. Lobo starts at 2
    dirty_location: bool = False  # Dirty Intel: Location target +1
    fixed_skills: bool = False  # each character takes its fixed advanced skills instead of picking

    VARIANTS = ("easier", "dirty-lobo", "dirty-location", "dirty", "fixed-skills")
    SKILLS = ("pick", "fixed")  # how advanced skills are set up (``skills`` argument / --skills)

    @classmethod
    def build(cls, content: Content, players: int, characters=None, variant=None, skills=None) -> Settings:
        """Validate user input (names, counts, variant words, skills mode) into Settings.

        ``skills``: "pick" (the players pick their advanced skills, the default) or "fixed"
        (each character's fixed skills of characters.toml), the same as the variant word
        "fixed-skills".
        """
        if not isinstance(players, int) or not 1 <= players <= K.MAX_PLAYERS:
            raise ValueError(f"players must be an integer from 1 to {K.MAX_PLAYERS}, got {players!r}")
        random_lineup = isinstance(characters, str) and characters.strip() == "random"
        if random_lineup:
            lineup = ()
        elif characters is None or characters == "default":
            lineup = tuple(int(c) for c in content.setup_lineup[players] if c >= 0)
            if len(lineup) != players:
                raise ValueError(
                    f"setup.toml: lineup for {players} player{'' if players == 1 else 's'} has {len(lineup)} characters"
                )
        else:
            characters = lineup_names(characters)
            lineup = tuple(
                content.character_index(c) if isinstance(c, str) else cls._character_index(c)
                for c in characters
            )
            if len(lineup) != players:
                raise ValueError(
                    f"characters: {len(lineup)} given for {players} player{'' if players == 1 else 's'}; give one per seat"
                )
            for c in lineup:
                if not 0 <= c < len(content.character_names):
                    raise ValueError(f"characters: no character with index {c}")
        if not random_lineup:  # a random line-up is one the loader checked (distinct characters while they last)
            from sim.content.loader import check_setup_supplies

            check_setup_supplies(content, players, lineup)
        flags = cls._variant_flags(variant, skills)
        return cls(players=players, characters=lineup, random_lineup=random_lineup, **flags)

    @staticmethod
    def _character_index(c) -> int:
        """A character index given as an integer (a numpy integer too; not a bool)."""
        if isinstance(c, bool) or type(c).__name__ == "bool_":
            raise ValueError(f"characters: give names or indices, got {c!r}")
        try:
            return operator.index(c)
        except TypeError:
            raise ValueError(f"characters: give names or indices, got {type(c).__name__} {c!r}") from None

    @classmethod
    def _variant_flags(cls, variant, skills=None) -> dict:
        """The variant flags of ``variant`` (None, a string or a list of words) with ``skills`` folded in."""
        if skills is not None and skills not in cls.SKILLS:
            raise ValueError(f"skills: must be one of {', '.join(cls.SKILLS)}, got {skills!r}")
        flags = {"easier": False, "dirty_lobo": False, "dirty_location": False, "fixed_skills": skills == "fixed"}
        words = variant
        if isinstance(variant, str):
            words = [w.strip() for w in variant.split(",") if w.strip()]
        for w in words or ():
            if w == "easier":
                flags["easier"] = True
            elif w == "dirty-lobo":
                flags["dirty_lobo"] = True
            elif w == "dirty-location":
                flags["dirty_location"] = True
            elif w == "dirty":
                flags["dirty_lobo"] = flags["dirty_location"] = True
            elif w == "fixed-skills":
                flags["fixed_skills"] = True
            elif w in ("", "none", "standard"):
                pass
            else:
                raise ValueError(
                    f"variant: unknown variant {w!r}; choose from {', '.join(cls.VARIANTS)}"
                )
        return flags

    @classmethod
    def label_of(cls, variant, skills: str | None = None) -> str:
        """The :attr:`variant_label` of the games ``variant`` with ``skills`` plays (no content needed):
        ``label_of("dirty")`` is ``"dirty-lobo,dirty-location"``, ``label_of("standard", "fixed")``
        is ``"fixed-skills"``. Raises ValueError on an unknown word."""
        return cls(**cls._variant_flags(variant, skills)).variant_label

    @classmethod
    def with_skills(cls, variant, skills: str | None):
        """``variant`` (None, a string or a list of words) with the skills mode folded in.

        ``skills`` "fixed" adds the variant word "fixed-skills"; "pick" or None leaves it as is.
        """
        if skills is not None and skills not in cls.SKILLS:
            raise ValueError(f"skills: must be one of {', '.join(cls.SKILLS)}, got {skills!r}")
        if skills != "fixed":
            return variant
        if variant is None:
            return "fixed-skills"
        if isinstance(variant, str):
            return f"{variant},fixed-skills" if variant.strip() else "fixed-skills"
        return [*variant, "fixed-skills"]

    @property
    def variant_label(self) -> str:
        words = [
            w
            for w, on in (
                ("easier", self.easier),
                ("dirty-lobo", self.dirty_lobo),
                ("dirty-location", self.dirty_location),
                ("fixed-skills", self.fixed_skills),
            )
            if on
        ]
        return ",".join(words) if words else "standard"


@dataclass
class Deck:
    """A face-down draw pile drawn lazily (uniform draws = a shuffled deck) plus its discards.

    ``pile`` holds the undrawn card ids; a draw takes a uniformly random one,
    swaps it with the last and pops (the canonical protocol the kernel repeats).
    ``top`` is a card already revealed as the top of the pile (Dexter's Watch).
    """

    pile: list[int]
    discard: list[int] = field(default_factory=list)
    top: int = -1


@dataclass
class Player:
    """One agent at the table."""

    seat: int
    character: int
    space: int
    skills: list[int]
    resolve: int
    resolve_max: int
    life: int
    advanced: list[bool]
    injuries: int = 0
    un_tokens: int = 0
    top_secret: list[int] = field(default_factory=list)  # Top Secret card ids in hand
    missions: list[int] = field(default_factory=list)  # two Fate card ids
    mission_flipped: list[bool] = field(default_factory=lambda: [False, False])
    gives_un: bool = False
    # how the player arrived this turn matters for nothing after movement; kept for traces
    rested_last: bool = False


@dataclass
class Stats:
    """Per-game counters reported in the one-row-per-game table."""

    tests_attempted: int = 0
    tests_passed: int = 0
    gambles_played: int = 0
    gambles_won: int = 0
    injuries_taken: int = 0
    knockouts: int = 0
    resolve_spent: int = 0
    un_used: int = 0
    overflows: int = 0
    airports_closed: int = 0
    missions_completed: int = 0
    villain_drawn: int = 0
    henchman_tests: int = 0
    henchman_passed: int = 0
    card_henchman_tests: int = 0  # henchman tests called for by encounter cards (FAQ 6)
    card_henchman_passed: int = 0
    top_secret_played: int = 0


@dataclass
class GameState:
    """Everything on and around the table. Engines mutate it; strategies read a view."""

    content: Content
    settings: Settings
    players: list[Player]
    lobo_start: int
    location_target: int
    overflow_limit: int
    henchman_level: list[int]  # per henchman: 1..3, or DEFEATED
    green_loc: list[int]  # per Location token (= henchman): space, SUPPLY or REMOVED
    intel_loc: list[int]  # per yellow Intel token: space, SUPPLY, POOL or REMOVED
    intel_face_up: list[bool]  # per yellow Intel token: flipped face up ("Flip Up Intel"), for good
    airport_closed: list[bool]
    close_tokens_left: int
    un_supply: int
    villain: Deck
    next_to_lobo: list[int]  # villain advancement cards lying next to Dr. Lobo
    villain_removed: list[int]  # removed at setup
    fate: Deck
    encounters: list[Deck]  # one per encounter deck (constants.DECKS order)
    top_secret: Deck
    # per status card (status.toml, card id = place in the deck): the seat holding it, or -1
    # (in the status deck). Status cards lie face up in front of their holder: public.
    status_holder: list[int] = field(default_factory=list)
    location_track: int = 0
    turn: int = 0  # player turns played so far
    active: int = 0  # seat of the active player
    outcome: Outcome | None = None
    stats: Stats = field(default_factory=Stats)
    # per-turn flags of the active player
    dice_resolve_used: bool = False
    move_resolve_used: bool = False
    watched: int = -1  # villain card id revealed by the Watch this turn, else -1
    # machinery: the game's random streams, one strategy per seat, the optional trace
    rng: object = None
    strategies: list = field(default_factory=list)
    trace: list | None = None

    def say(self, text: str) -> None:
        """Append a line to the game trace (when tracing)."""
        if self.trace is not None:
            self.trace.append(text)

    def view(self, seat: int, decision: str | None = None) -> PlayerView:
        """Seat ``seat``'s view, for its strategy's ``decision`` (which the view's refusals name)."""
        return PlayerView(self, self.rng, seat, decision)

    def strategy(self, seat: int):
        return self.strategies[seat]

    # --- derived facts used by rules and views ------------------------------------
    @property
    def lobo(self) -> int:
        """Dr. Lobo's track: start plus the cards lying next to him."""
        adv = self.content.villain_advance
        return self.lobo_start + sum(int(adv[c]) for c in self.next_to_lobo)

    @property
    def rounds(self) -> int:
        """Completed or started rounds (a round = every player took a turn)."""
        n = self.settings.players
        return (self.turn + n - 1) // n

    def status_of(self, seat: int) -> list[int]:
        """The status card ids a seat holds, ascending."""
        return [c for c, h in enumerate(self.status_holder) if h == seat]

    def yellow_on(self, space: int) -> list[int]:
        return [t for t, loc in enumerate(self.intel_loc) if loc == space]

    def green_on(self, space: int) -> list[int]:
        return [t for t, loc in enumerate(self.green_loc) if loc == space]

    def intel_in(self, where: int) -> list[int]:
        return [t for t, loc in enumerate(self.intel_loc) if loc == where]

    def greens_in(self, where: int) -> list[int]:
        return [t for t, loc in enumerate(self.green_loc) if loc == where]

    def yellow_on_board(self) -> list[int]:
        return [t for t, loc in enumerate(self.intel_loc) if loc >= 0]

    def green_on_board(self) -> list[int]:
        return [t for t, loc in enumerate(self.green_loc) if loc >= 0]


# --- the view's index arguments: what each one indexes, and the words that refuse one out of range ---
# A view method asked with an index outside its range (``view.resolve(view.seat - 1)`` at seat 0,
# ``view.henchman(view.n_henchmen)``) would read another seat's value (Python wraps a negative index) or,
# in the kernel, which reads without bounds checks, whatever lies there. Both engines' views refuse it,
# in the same words (:func:`view_argument_text`; the kernel's view, ``sim.kernel.view``, compiles it).
OPEN_END = 1 << 62  # an upper bound that is none: "0 or more"
RANDOM_BELOW_MAX = 1 << 31  # the largest n of random_below (the kernel's 32-bit draw times n stays an int64)
_FIRST_PLACE = min(K.SUPPLY, K.POOL)  # the lowest "place" (PlayerView._range): a space, SUPPLY or POOL

# what each kind of index names (the refusal says it); its range, per engine: PlayerView._range and
# sim.kernel.view's range functions
VIEW_INDEX_KINDS = {
    "seat": "a seat",
    "henchman": "a henchman",
    "basic skill": "a basic skill",
    "advanced skill": "an advanced skill",
    "top secret card": "an index into seat who's Top Secret hand, view.top_secret_count(who) cards",
    "mission card": "a secret-mission card; past the last, -1",
    "intel type": "an Intel type",
    "place": f"a space, SUPPLY ({K.SUPPLY}) or POOL ({K.POOL})",
    "space": "a space",
    "status card": "a status card",
    "outcomes": "the number of outcomes",
}

# view method -> the kind of each of its arguments, in order (an argument's range may depend on the first
# argument: the Top Secret cards of seat ``who``). The kernel's view has every one of these but the last
# three (sim.kernel.view.VIEW_API); tests/test_view.py checks that the two tables agree.
VIEW_INDEXES = {
    "henchman": ("henchman",),
    **dict.fromkeys(("character", "space", "resolve", "resolve_max", "life", "injuries", "un_tokens",
                     "top_secret_count"), ("seat",)),
    "skill": ("seat", "basic skill"),
    "has_advanced": ("seat", "advanced skill"),
    "top_secret_effect": ("seat", "top secret card"),
    "mission_city": ("seat", "mission card"),
    "pool_face_up": ("intel type",),
    "face_up_count": ("place", "intel type"),
    "yellow_at": ("place",),
    "green_at": ("place",),
    "airport_open": ("space",),
    "status_holder": ("status card",),
    "status_modifier": ("basic skill",),
    "random_below": ("outcomes",),
    "mission_cities": ("seat",),  # the readable engine's own (the argument may be None: my own)
    "status_cards": ("seat",),
    "status_effects": ("seat",),
}


def view_argument_text(decision, method, args, param, lo, hi, what):
    """The refusal of argument ``param`` (legal: ``lo`` to ``hi``) of ``view.<method>(<args>)``, asked
    by ``decision`` ("" where no decision is known), as both engines word it::

        decision rest asked view.resolve(-1): who must be 0 to 3 (a seat)

    ``args`` is the call's arguments as text; ``what`` what the argument indexes. Plain string
    operations only: the kernel compiles this function."""
    if hi >= OPEN_END:
        legal = " must be " + str(lo) + " or more"
    elif hi < lo:
        legal = " has no legal value"
    else:
        legal = " must be " + str(lo) + " to " + str(hi)
    head = "decision " + decision + " asked " if len(decision) > 0 else ""
    return head + "view." + method + "(" + args + "): " + param + legal + " (" + what + ")"


class PlayerView:
    """What a player may see: public state plus their own hand; no face-down Intel types.

    Strategies receive this, never the GameState. ``random_below`` draws from
    the game's strategy stream, the only randomness a strategy may use.

    A method asked with an index outside its range (a seat, a henchman, a skill...: ``VIEW_INDEXES``)
    raises :class:`~sim.rules.errors.StrategyError` naming the strategy, the decision being made
    (``decision``, as the engine asks it) and the index with its legal range.
    """

    __slots__ = ("_g", "_rng", "seat", "_decision")

    def __init__(self, game: GameState, rng, seat: int, decision: str | None = None):
        self._g = game
        self._rng = rng
        self.seat = seat
        self._decision = decision

    # --- the index arguments, checked --------------------------------------------------
    def _range(self, kind: str, first) -> tuple[int, int]:
        """The legal values of an argument of ``kind`` (``first``: the call's first argument, checked)."""
        g = self._g
        if kind == "seat":
            return 0, len(g.players) - 1
        if kind == "henchman":
            return 0, len(g.henchman_level) - 1
        if kind == "basic skill":
            return 0, len(K.BASIC_SKILLS) - 1
        if kind == "advanced skill":
            return 0, len(K.ADVANCED_SKILLS) - 1
        if kind == "top secret card":
            return 0, len(g.players[first].top_secret) - 1
        if kind == "mission card":
            return 0, OPEN_END
        if kind == "intel type":
            return 0, len(K.INTEL_TYPES) - 1
        if kind == "place":
            return _FIRST_PLACE, g.content.n_spaces - 1
        if kind == "space":
            return 0, g.content.n_spaces - 1
        if kind == "status card":
            return 0, len(g.status_holder) - 1
        if kind == "outcomes":
            return 1, RANDOM_BELOW_MAX
        raise KeyError(kind)

    def _check(self, method: str, *args) -> None:
        """Refuse ``view.<method>(*args)`` where an argument is outside its range (StrategyError). The methods
        call it only where a quick test of their arguments (plain ints in range) fails: it is the slow path."""
        for param, kind, a in zip(_PARAMETERS[method], VIEW_INDEXES[method], args):
            lo, hi = self._range(kind, args[0])
            if not (type(a) is int or is_index(a)) or not lo <= a <= hi:  # 1.5 is not one of lo..hi either
                self._refuse(method, args, param, kind, lo, hi)

    def _player(self, method: str, who, *more) -> Player:
        """Seat ``who``'s player, ``view.<method>(who, *more)`` checked."""
        if type(who) is not int or not 0 <= who < len(self._g.players):
            self._check(method, who, *more)
        return self._g.players[who]

    def _refuse(self, method, args, param, kind, lo, hi):
        from sim.rules.errors import StrategyError

        strategies = self._g.strategies
        name = getattr(strategies[self.seat], "name", None) if 0 <= self.seat < len(strategies) else None
        text = view_argument_text(self._decision or "", method, ", ".join(map(str, args)), param, lo, hi,
                                  VIEW_INDEX_KINDS[kind])
        raise StrategyError(text if name is None else f"strategy {name!r}: {text}")

    # --- randomness for randomised strategies -------------------------------------
    def random_below(self, n: int) -> int:
        from sim.rng import STRATEGY

        if type(n) is not int or not 1 <= n <= RANDOM_BELOW_MAX:
            self._check("random_below", n)
        return self._rng.below(n, STRATEGY)

    # --- public facts ---------------------------------------------------------------
    @property
    def content(self) -> Content:
        return self._g.content

    @property
    def settings(self) -> Settings:
        return self._g.settings

    @property
    def me(self) -> Player:
        return self._g.players[self.seat]

    @property
    def players(self) -> list[Player]:
        return self._g.players

    @property
    def lobo(self) -> int:
        return self._g.lobo

    @property
    def location_track(self) -> int:
        return self._g.location_track

    @property
    def location_target(self) -> int:
        return self._g.location_target

    @property
    def henchman_level(self) -> list[int]:
        return list(self._g.henchman_level)

    @property
    def rounds(self) -> int:
        """The round being played (every player takes one turn a round; public)."""
        return self._g.rounds

    @property
    def pool_size(self) -> int:
        """Number of Intel tokens in the Pool (face down: their types are hidden)."""
        return len(self._g.intel_in(POOL))

    def face_up_intel(self) -> list[tuple[int, int]]:
        """``(where, type)`` of every face-up Intel token still in play (where: a space,
        SUPPLY or POOL), sorted; face-down tokens are not listed ("Flip Up Intel")."""
        types = self._g.content.intel_token_type
        return sorted((loc, int(types[t])) for t, (loc, up) in enumerate(zip(self._g.intel_loc, self._g.intel_face_up))
                      if up and loc != REMOVED)

    def pool_face_up(self, kind: int | None = None):
        """Face-up Intel tokens in the Pool by type (W, T, D, A), or of one type ``kind``;
        the rest of the Pool is face down."""
        if kind is not None and (type(kind) is not int or not 0 <= kind < len(K.INTEL_TYPES)):
            self._check("pool_face_up", kind)
        counts = [0] * len(K.INTEL_TYPES)
        for loc, k in self.face_up_intel():
            if loc == POOL:
                counts[k] += 1
        return counts if kind is None else counts[kind]

    def face_up_count(self, where: int, kind: int) -> int:
        """Face-up Intel tokens of type ``kind`` at ``where`` (a space, SUPPLY or POOL)."""
        if (type(where) is not int or type(kind) is not int or not _FIRST_PLACE <= where < self._g.content.n_spaces
                or not 0 <= kind < len(K.INTEL_TYPES)):
            self._check("face_up_count", where, kind)
        return sum(1 for loc, k in self.face_up_intel() if loc == where and k == kind)

    # --- one number at a time: the same names as the kernel's view (sim.kernel.view) ----
    @property
    def n_players(self) -> int:
        return self._g.settings.players

    @property
    def n_henchmen(self) -> int:
        return len(self._g.henchman_level)

    def henchman(self, h: int) -> int:
        """Henchman ``h``'s level (1..3, or DEFEATED)."""
        if type(h) is not int or not 0 <= h < len(self._g.henchman_level):
            self._check("henchman", h)
        return self._g.henchman_level[h]

    def character(self, who: int) -> int:
        return self._player("character", who).character

    def space(self, who: int) -> int:
        return self._player("space", who).space

    def skill(self, who: int, skill: int) -> int:
        """Basic skill ``skill`` of the player in seat ``who``."""
        p = self._player("skill", who, skill)
        if type(skill) is not int or not 0 <= skill < len(K.BASIC_SKILLS):
            self._check("skill", who, skill)
        return p.skills[skill]

    def resolve(self, who: int) -> int:
        return self._player("resolve", who).resolve

    def resolve_max(self, who: int) -> int:
        return self._player("resolve_max", who).resolve_max

    def life(self, who: int) -> int:
        return self._player("life", who).life

    def injuries(self, who: int) -> int:
        return self._player("injuries", who).injuries

    def has_advanced(self, who: int, skill: int) -> bool:
        p = self._player("has_advanced", who, skill)
        if type(skill) is not int or not 0 <= skill < len(K.ADVANCED_SKILLS):
            self._check("has_advanced", who, skill)
        return bool(p.advanced[skill])

    def un_tokens(self, who: int) -> int:
        return self._player("un_tokens", who).un_tokens

    def top_secret_count(self, who: int) -> int:
        return len(self._player("top_secret_count", who).top_secret)

    def top_secret_effect(self, who: int, i: int) -> int:
        """Effect code of the ``i``-th Top Secret card in the hand of seat ``who``."""
        p = self._player("top_secret_effect", who, i)
        if type(i) is not int or not 0 <= i < len(p.top_secret):
            self._check("top_secret_effect", who, i)
        return int(self._g.content.top_secret_effect[p.top_secret[i]])

    def mission_city(self, who: int, i: int) -> int:
        """City of seat ``who``'s ``i``-th secret-mission card, -1 once flipped (or absent)."""
        p = self._player("mission_city", who, i)
        if type(i) is not int or i < 0:
            self._check("mission_city", who, i)
        if i >= len(p.missions) or p.mission_flipped[i]:
            return -1
        return int(self._g.content.fate_city[p.missions[i]])

    def status_holder(self, card: int) -> int:
        """Seat holding status card ``card`` (face up), or -1 in the deck, -2 out of the game."""
        if type(card) is not int or not 0 <= card < len(self._g.status_holder):
            self._check("status_holder", card)
        return self._g.status_holder[card]

    def yellow_at(self, where: int) -> int:
        """Yellow Intel tokens at ``where`` (a space, SUPPLY or POOL), face up or down."""
        if type(where) is not int or not _FIRST_PLACE <= where < self._g.content.n_spaces:
            self._check("yellow_at", where)
        return sum(1 for loc in self._g.intel_loc if loc == where)

    def green_at(self, where: int) -> int:
        """Green Location tokens at ``where`` (a space or SUPPLY), face down: counted, not named."""
        if type(where) is not int or not _FIRST_PLACE <= where < self._g.content.n_spaces:
            self._check("green_at", where)
        return sum(1 for loc in self._g.green_loc if loc == where)

    @property
    def intel_supply_size(self) -> int:
        return len(self._g.intel_in(SUPPLY))

    @property
    def green_supply_size(self) -> int:
        return len(self._g.greens_in(SUPPLY))

    @property
    def un_supply(self) -> int:
        return self._g.un_supply

    @property
    def dice_resolve_used(self) -> bool:
        return self._g.dice_resolve_used

    @property
    def move_resolve_used(self) -> bool:
        return self._g.move_resolve_used

    @property
    def watched_advance(self) -> int | None:
        """Advancement value of the villain card the Watch revealed this turn (None if none)."""
        c = self._g.watched
        if c < 0:
            return None
        if self._g.content.villain_injury[c]:
            return 0
        return int(self._g.content.villain_advance[c])

    def yellow_spaces(self) -> list[int]:
        """Spaces holding at least one face-down yellow Intel token (sorted)."""
        return sorted({loc for loc in self._g.intel_loc if loc >= 0})

    def green_spaces(self) -> list[int]:
        """Spaces holding at least one face-down green Location token (sorted)."""
        return sorted({loc for loc in self._g.green_loc if loc >= 0})

    def airport_open(self, space: int) -> bool:
        c = self._g.content
        if type(space) is not int or not 0 <= space < c.n_spaces:
            self._check("airport_open", space)
        return bool(c.space_airport[space]) and (
            bool(c.space_red_airport[space]) or not self._g.airport_closed[space]
        )

    def mission_cities(self, seat: int | None = None) -> list[int]:
        """Unflipped secret-mission cities of a player (default: me)."""
        p = self._g.players[self.seat] if seat is None else self._player("mission_cities", seat)
        fate_city = self._g.content.fate_city
        return [int(fate_city[f]) for f, done in zip(p.missions, p.mission_flipped) if not done]

    def status_cards(self, seat: int | None = None) -> list[int]:
        """Status card ids a player holds (default: me), ascending. They lie face up: public.

        A card's kind is ``content.status_type[card]``; its polarity, effect, amount and skill
        are ``content.status_polarity`` / ``status_effect`` / ``status_amount`` / ``status_skill``
        of the kind (sim.content.constants STATUS_*)."""
        if seat is not None:
            self._player("status_cards", seat)
        return self._g.status_of(self.seat if seat is None else seat)

    def status_effects(self, seat: int | None = None) -> list[int]:
        """The STATUS_EFFECTS codes of the status cards a player holds (default: me), by card id."""
        c = self._g.content
        if seat is not None:
            self._player("status_effects", seat)
        return [int(c.status_effect[c.status_type[x]]) for x in self._g.status_of(self.seat if seat is None else seat)]

    def status_modifier(self, skill: int) -> int:
        """The dice my status cards add to (or take from) tests of a basic skill."""
        from sim.rules.status import skill_bonus

        if type(skill) is not int or not 0 <= skill < len(K.BASIC_SKILLS):
            self._check("status_modifier", skill)
        return skill_bonus(self._g, self.seat, skill)

    def top_secret_effects(self) -> list[int]:
        """Effect codes of the Top Secret cards in my hand."""
        eff = self._g.content.top_secret_effect
        return [int(eff[c]) for c in self.me.top_secret]


def _parameter_names() -> dict[str, tuple[str, ...]]:
    """The names of each checked method's arguments (``who``, ``h``...), which a refusal names."""
    import inspect

    return {m: tuple(inspect.signature(getattr(PlayerView, m)).parameters)[1:] for m in VIEW_INDEXES}


_PARAMETERS = _parameter_names()
