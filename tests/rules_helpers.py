"""Toolkit for scripted scenario tests of the readable rules engine (``sim.rules``).

A scenario test builds a game with :func:`new_game`, arranges the table with the
small builders below (players, tokens, hands, stacked decks), installs a
:class:`ScriptedRng` so every random draw is forced, and drives one phase with a
:class:`Scripted` strategy whose answers come from per-decision queues.

* :class:`Scripted` answers every decision of :class:`strategies.base.Strategy`
  from a queue (``s.push("move", answer, ...)``); an answer is a value or a
  callable taking the same arguments as the decision. With an empty queue the
  decision's default applies (draw every die, never spend Resolve, stay put,
  first option, play no Top Secret card, ...). Every call is logged in
  ``s.calls`` as ``(decision, args)`` so a test can check what was offered.
* :class:`ScriptedRng` replaces ``g.rng``: ``below(n, source)`` pops queued
  values per source (``rng.push(DICE, 0, 3)``; a ``(bound, value)`` pair also
  asserts the bound), else a per-source policy (``rng.policies[src] = fn(n)``),
  else a draw with ``n == 1`` returns 0, else the fallback (0 by default, or an
  AssertionError with ``strict=True``). ``rng.log`` keeps ``(source, n, value)``.
* :func:`script_dice` and :func:`script_gamble` turn "draw the black then the
  red die, roll S and blank" or "deal these five cards" into the raw draws of
  the engine's dice and gamble protocols.
"""

from __future__ import annotations

import functools
from collections import defaultdict, deque

import numpy as np

from sim.content import build, load, load_raw
from sim.content import constants as K
from sim.rng import DICE, ENCOUNTER, FATE, GAMBLE, SOURCE_NAMES, TOP_SECRET, VILLAIN
from sim.rules.choices import Means, Move
from sim.rules.setup import setup_game
from sim.rules.state import POOL, SUPPLY, Deck, GameState, Settings
from strategies.base import Strategy
from strategies.heuristic import HeuristicStrategy

__all__ = [
    "DICE",
    "ENCOUNTER",
    "FATE",
    "GAMBLE",
    "TOP_SECRET",
    "VILLAIN",
    "NumpyAnswers",
    "Scripted",
    "ScriptedRng",
    "content",
    "content_with",
    "new_game",
    "install_rng",
    "clear_table",
    "put",
    "put_intel",
    "put_green",
    "give_top_secret",
    "stack",
    "stack_villain",
    "stack_encounter",
    "stack_fate",
    "villain_cards",
    "next_to_lobo",
    "encounter_card_where",
    "face",
    "bag_picks",
    "script_dice",
    "fate_card",
    "gamble_picks",
    "script_gamble",
    "pick_move",
    "pool",
    "cards",
    "moves_to",
    "sp",
]


# ------------------------------------------------------------------ content
@functools.lru_cache(maxsize=1)
def content():
    """The default content pack (loaded once per test session)."""
    return load()


def content_with(patch) -> object:
    """A content pack built from the default raw data after ``patch(raw)`` edits it in place."""
    raw = load_raw()
    patch(raw)
    return build(raw)


def sp(name: str) -> int:
    """Space index of a map name in the default pack."""
    return content().space_index(name)


# ------------------------------------------------------------------ scripted strategy
class Scripted(Strategy):
    """A strategy whose every answer is queued by the test (or a sensible default)."""

    name = "scripted"

    def __init__(self, **defaults):
        self.queues: dict[str, deque] = defaultdict(deque)
        self.defaults: dict = dict(defaults)
        self.calls: list[tuple[str, tuple]] = []

    # --- scripting -------------------------------------------------------------
    def push(self, decision: str, *answers) -> Scripted:
        """Queue answers for one decision (values, or callables taking the decision's args)."""
        if not hasattr(self, decision):
            raise AttributeError(f"no decision {decision!r}")
        self.queues[decision].extend(answers)
        return self

    def set_default(self, decision: str, answer) -> Scripted:
        """Answer used whenever the decision's queue is empty (value or callable)."""
        self.defaults[decision] = answer
        return self

    def asked(self, decision: str) -> list[tuple]:
        """Arguments (without the view) of every call of ``decision`` so far."""
        return [args for d, args in self.calls if d == decision]

    def pending(self) -> dict[str, list]:
        """Queued answers not consumed yet."""
        return {d: list(q) for d, q in self.queues.items() if q}

    def _answer(self, decision: str, view, *args):
        self.calls.append((decision, tuple(args)))
        q = self.queues[decision]
        if q:
            a = q.popleft()
        elif decision in self.defaults:
            a = self.defaults[decision]
        else:
            a = getattr(self, "_default_" + decision)
        if callable(a):
            return a(view, *args)
        return a

    # --- defaults ----------------------------------------------------------------
    @staticmethod
    def _default_setup_level2_henchmen(view, k):
        return list(range(k))

    @staticmethod
    def _default_setup_extras(view, n, max_un):
        return 0

    @staticmethod
    def _default_move(view, moves):
        for i, m in enumerate(moves):
            if m.means == Means.STAY:
                return i
        return 0

    _default_rest = False
    _default_token = 0
    _default_test_option = 0
    _default_draw_die = True
    _default_resolve_plus_one = False
    _default_reroll = -1
    _default_gamble_exchange = (0, False)
    _default_mission_reward = 0
    _default_skill_up = 0
    _default_skill_down = 0
    _default_status_top_secret = True
    _default_advanced_skill = 0
    _default_setup_advanced_skill = 0
    _default_play_auto_pass = False
    _default_play_two_dice = False
    _default_cancel_advance = False
    _default_heal_all = False
    _default_intel_to_pool = False
    _default_use_watch = False
    _default_use_auto_pass = True

    # --- the Strategy interface ----------------------------------------------------
    def setup_level2_henchmen(self, view, k):
        return self._answer("setup_level2_henchmen", view, k)

    def setup_extras(self, view, n, max_un):
        return self._answer("setup_extras", view, n, max_un)

    def setup_advanced_skill(self, view, skills):
        return self._answer("setup_advanced_skill", view, list(skills))

    def rest(self, view):
        return self._answer("rest", view)

    def move(self, view, moves):
        return self._answer("move", view, list(moves))

    def token(self, view, choices):
        return self._answer("token", view, list(choices))

    def test_option(self, view, options):
        return self._answer("test_option", view, list(options))

    def draw_die(self, view, test, drawn):
        return self._answer("draw_die", view, test, list(drawn))

    def resolve_plus_one(self, view, test, drawn):
        return self._answer("resolve_plus_one", view, test, list(drawn))

    def reroll(self, view, test, dice, faces):
        return self._answer("reroll", view, test, list(dice), list(faces))

    def gamble_exchange(self, view, hand, free):
        return self._answer("gamble_exchange", view, list(hand), free)

    def mission_reward(self, view, options):
        return self._answer("mission_reward", view, list(options))

    def skill_up(self, view, skills):
        return self._answer("skill_up", view, list(skills))

    def advanced_skill(self, view, skills):
        return self._answer("advanced_skill", view, list(skills))

    def skill_down(self, view, skills):
        return self._answer("skill_down", view, list(skills))

    def status_top_secret(self, view):
        return self._answer("status_top_secret", view)

    def play_auto_pass(self, view, test):
        return self._answer("play_auto_pass", view, test)

    def play_two_dice(self, view, test):
        return self._answer("play_two_dice", view, test)

    def cancel_advance(self, view, card):
        return self._answer("cancel_advance", view, card)

    def heal_all(self, view):
        return self._answer("heal_all", view)

    def intel_to_pool(self, view):
        return self._answer("intel_to_pool", view)

    def use_watch(self, view):
        return self._answer("use_watch", view)

    def use_auto_pass(self, view, skill, henchman, no_advance):
        return self._answer("use_auto_pass", view, skill, henchman, no_advance)


def moves_to(moves: list[Move], dest: int, means: Means | None = None, resolve: bool | None = None) -> list[Move]:
    """The listed moves to ``dest`` (optionally of one means / Resolve flag)."""
    return [
        m
        for m in moves
        if m.dest == dest and (means is None or m.means == means) and (resolve is None or m.resolve == resolve)
    ]


def pick_move(dest: int | str, means: Means, resolve: bool = False):
    """A ``move`` answer choosing the (unique) legal move to ``dest`` by ``means``."""
    if isinstance(dest, str):
        dest = sp(dest)

    def choose(view, moves):
        hits = [i for i, m in enumerate(moves) if m.dest == dest and m.means == means and m.resolve == resolve]
        assert hits, f"no legal move to {view.content.space_names[dest]} by {means.name} (resolve={resolve})"
        assert len(hits) == 1, f"{len(hits)} identical moves listed"
        return hits[0]

    return choose


# ------------------------------------------------------------------ scripted randomness
class ScriptedRng:
    """Stand-in for :class:`sim.rng.Streams` whose draws the test dictates."""

    def __init__(self, fallback=None, strict: bool = False):
        self.queues: dict[int, deque] = defaultdict(deque)
        self.policies: dict[int, object] = {}
        self.fallback = fallback
        self.strict = strict
        self.log: list[tuple[int, int, int]] = []

    def push(self, source: int, *values) -> ScriptedRng:
        """Queue draws of ``source``: ints, or ``(bound, value)`` pairs that also check the bound."""
        self.queues[source].extend(values)
        return self

    def below(self, n: int, source: int) -> int:
        assert n > 0, f"below({n}) from {SOURCE_NAMES.get(source, source)}"
        q = self.queues[source]
        if q:
            v = q.popleft()
            if isinstance(v, tuple):
                bound, v = v
                assert n == bound, (
                    f"{SOURCE_NAMES.get(source, source)} draw: expected below({bound}), engine asked below({n})"
                )
        elif source in self.policies:
            v = self.policies[source](n)
        elif n == 1:
            v = 0
        elif self.fallback is not None:
            v = self.fallback.below(n, source)
        elif self.strict:
            raise AssertionError(f"unscripted draw below({n}) from {SOURCE_NAMES.get(source, source)}")
        else:
            v = 0
        assert 0 <= v < n, f"scripted value {v} outside below({n}) for {SOURCE_NAMES.get(source, source)}"
        self.log.append((source, n, v))
        return v

    def u32(self, source: int) -> int:
        if self.fallback is not None:
            return self.fallback.u32(source)
        return self.below(2**32, source)

    def uniform(self, source: int) -> float:
        return self.u32(source) / 4294967296.0

    def drawn(self, source: int) -> list[tuple[int, int]]:
        """(bound, value) of every draw from ``source`` so far."""
        return [(n, v) for s, n, v in self.log if s == source]

    def left(self) -> dict[str, list]:
        """Queued draws not consumed yet (should be empty at the end of a scripted test)."""
        return {SOURCE_NAMES.get(s, str(s)): list(q) for s, q in self.queues.items() if q}


def install_rng(g: GameState, *, strict: bool = False, keep_real: bool = False) -> ScriptedRng:
    """Replace the game's streams with a :class:`ScriptedRng` (optionally falling back to them)."""
    rng = ScriptedRng(fallback=g.rng if keep_real else None, strict=strict)
    g.rng = rng
    return rng


# ------------------------------------------------------------------ building a game
def new_game(
    players: int = 4,
    characters=None,
    variant=None,
    *,
    seed: int = 1,
    game: int = 0,
    strategies: list | None = None,
    trace: bool = True,
    cont=None,
) -> GameState:
    """A freshly set-up game with :class:`Scripted` strategies (``g.strategies``)."""
    c = cont or content()
    settings = Settings.build(c, players, characters, variant)
    strats = strategies if strategies is not None else [Scripted() for _ in range(players)]
    return setup_game(c, settings, strats, seed, game, trace)


def clear_table(g: GameState) -> GameState:
    """Empty board, Pool and hands: every token and card back to its supply or deck.

    Leaves players on their spaces, the villain deck as dealt and Dr. Lobo at his start.
    """
    g.intel_loc[:] = [SUPPLY] * len(g.intel_loc)
    g.green_loc[:] = [SUPPLY] * len(g.green_loc)
    g.airport_closed[:] = [False] * len(g.airport_closed)
    g.close_tokens_left = int(g.content.n_close_airport_tokens)
    for p in g.players:
        g.un_supply += p.un_tokens
        p.un_tokens = 0
        g.top_secret.pile.extend(p.top_secret)
        p.top_secret = []
        p.injuries = 0
    return g


def put(g: GameState, seat: int, space: str | int) -> None:
    """Stand a player on a space."""
    g.players[seat].space = sp(space) if isinstance(space, str) else space


def put_intel(g: GameState, space: str | int, kind: str | None = None, where: int | None = None) -> int:
    """Move a yellow token (of a type, e.g. 'weapon') from the supply to a space (or the Pool)."""
    c = g.content
    dest = where if where is not None else (sp(space) if isinstance(space, str) else space)
    for t, loc in enumerate(g.intel_loc):
        if loc == SUPPLY and (kind is None or K.INTEL_TYPES[int(c.intel_token_type[t])] == kind):
            g.intel_loc[t] = dest
            return t
    raise AssertionError(f"no {kind or ''} Intel token left in the supply")


def pool(g: GameState, *kinds: str) -> list[int]:
    """Put Intel tokens of the given types from the supply into the Pool."""
    return [put_intel(g, 0, k, where=POOL) for k in kinds]


def put_green(g: GameState, henchman: str | int, space: str | int) -> int:
    """Put a henchman's green Location token on a space."""
    h = g.content.henchman_index(henchman) if isinstance(henchman, str) else henchman
    g.green_loc[h] = sp(space) if isinstance(space, str) else space
    return h


def give_top_secret(g: GameState, seat: int, effect: int) -> int:
    """Move a Top Secret card with ``effect`` from the deck into a player's hand."""
    eff = g.content.top_secret_effect
    for zone in (g.top_secret.pile, g.top_secret.discard):
        for card in zone:
            if int(eff[card]) == effect:
                zone.remove(card)
                g.players[seat].top_secret.append(card)
                return card
    raise AssertionError(f"no Top Secret card with effect {K.TOP_SECRET_EFFECTS[effect]} left")


# ------------------------------------------------------------------ stacking decks
def stack(g: GameState, deck: Deck, cards: list[int], source: int) -> None:
    """Make ``cards`` the next draws of ``deck`` in this order (needs a ScriptedRng on g).

    The cards are taken out of the pile or discard; the pile becomes
    ``other pile cards + reversed(cards)`` and the source's policy draws the last card.
    """
    assert isinstance(g.rng, ScriptedRng), "install_rng(g) first"
    if deck.top >= 0:  # a card revealed on top (the Watch) goes back into the pile
        deck.pile.append(deck.top)
        deck.top = -1
    for card in cards:
        if card in deck.pile:
            deck.pile.remove(card)
        elif card in deck.discard:
            deck.discard.remove(card)
        else:
            raise AssertionError(f"card {card} is in neither pile nor discard")
    deck.pile = list(deck.pile) + list(reversed(cards))
    g.rng.policies[source] = lambda n: n - 1


def stack_villain(g: GameState, *cards: int) -> None:
    stack(g, g.villain, list(cards), VILLAIN)


def stack_fate(g: GameState, *cards: int) -> None:
    stack(g, g.fate, list(cards), FATE)


def stack_encounter(g: GameState, *cards: int) -> None:
    """Stack encounter cards on top of their decks (each card goes to its own deck)."""
    c = g.content
    by_deck: dict[int, list[int]] = defaultdict(list)
    for card in cards:
        by_deck[int(c.encounter_deck[card])].append(card)
    for d, cs in by_deck.items():
        stack(g, g.encounters[d], cs, ENCOUNTER + d)


def villain_cards(g: GameState, *, advance: int | None = None, injury: bool = False,
                  remove_region: int | None = None, where: str = "pile") -> list[int]:
    """Villain card ids in the pile (or 'any') with a given advancement / Injury icon / region."""
    c = g.content
    pool_ = list(g.villain.pile) if where == "pile" else list(range(c.n_villain))
    out = []
    for card in sorted(pool_):
        if bool(c.villain_injury[card]) != injury:
            continue
        if advance is not None and int(c.villain_advance[card]) != advance:
            continue
        if remove_region is not None and int(c.villain_remove_region[card]) != remove_region:
            continue
        out.append(card)
    return out


def next_to_lobo(g: GameState, *cards: int) -> None:
    """Lay villain cards from the pile next to Dr. Lobo."""
    for card in cards:
        g.villain.pile.remove(card)
        g.next_to_lobo.append(card)


def encounter_card_where(pred, c=None) -> int:
    """First encounter card id satisfying ``pred(content, card)``."""
    c = c or content()
    for card in range(c.n_encounters):
        if pred(c, card):
            return card
    raise AssertionError("no encounter card matches")


# ------------------------------------------------------------------ dice
def face(die: str, code: str, c=None) -> int:
    """First face index of a die showing ``code`` (S, I, II, H or -)."""
    c = c or content()
    d = c.die_index(die)
    for f in range(6):
        key = (int(c.die_success[d, f]), int(c.die_injury[d, f]), int(c.die_heal[d, f]))
        got = {(1, 0, 0): "S", (0, 1, 0): "I", (0, 2, 0): "II", (0, 0, 1): "H", (0, 0, 0): "-"}.get(key)
        if got == code:
            return f
    raise AssertionError(f"the {die} die has no {code} face")


def bag_picks(dice: list[str], c=None) -> list[tuple[int, int]]:
    """(bound, index) bag draws that pull the named dice in order from a full bag."""
    c = c or content()
    bag = [int(d) for d in c.bag_dice]
    out = []
    for name in dice:
        d = c.die_index(name)
        j = bag.index(d)
        out.append((len(bag), j))
        bag[j] = bag[-1]
        bag.pop()
    return out


def script_dice(rng: ScriptedRng, draw: list[str], faces: list[str], yellow: str = "-",
                reroll: str | None = None, reroll_die: str | None = None, c=None) -> None:
    """Queue one dice test: pull ``draw`` from the bag, roll ``faces`` (codes) and Yellow.

    ``reroll`` (a face code of ``reroll_die``) queues the face of a reroll.
    """
    assert len(draw) == len(faces)
    rng.push(DICE, *bag_picks(draw, c))
    rng.push(DICE, *[(6, face(d, f, c)) for d, f in zip(draw, faces)])
    rng.push(DICE, (6, face("yellow", yellow, c)))
    if reroll is not None:
        rng.push(DICE, (6, face(reroll_die, reroll, c)))


# ------------------------------------------------------------------ gambles
def fate_card(rank: int | str, suit: int | str, c=None) -> int:
    """Fate card id of a rank (4..14 or '4'..'A') and suit (0..3 or 'c','d','h','s')."""
    c = c or content()
    if isinstance(rank, str):
        rank = {"T": 10, "J": 11, "Q": 12, "K": 13, "A": 14}.get(rank) or int(rank)
    if isinstance(suit, str):
        suit = "cdhs".index(suit)
    for card in range(c.n_fate):
        if int(c.fate_rank[card]) == rank and int(c.fate_suit[card]) == suit:
            return card
    raise AssertionError(f"no Fate card {rank}/{suit}")


def cards(text: str, c=None) -> list[int]:
    """Fate card ids from text like 'Ah Kd 9c 7s 5h'."""
    return [fate_card(t[:-1], t[-1], c) for t in text.split()]


def gamble_picks(sequence: list[int], n_cards: int = 44) -> list[tuple[int, int]]:
    """(bound, index) GAMBLE draws that deal the card ids in ``sequence`` from a fresh deck."""
    deck = list(range(n_cards))
    out = []
    for card in sequence:
        j = deck.index(card)
        out.append((len(deck), j))
        deck[j] = deck[-1]
        deck.pop()
    return out


def script_gamble(rng: ScriptedRng, hand: str, house: str, exchanged: str = "", c=None) -> None:
    """Queue one gamble: the dealt hand, the replacement cards (by position order), the House."""
    seq = cards(hand, c) + (cards(exchanged, c) if exchanged else []) + cards(house, c)
    rng.push(GAMBLE, *gamble_picks(seq, (c or content()).n_fate))


# ------------------------------------------------------------------ numpy answers
class NumpyAnswers(HeuristicStrategy):
    """The heuristic, every integer answer given as a numpy integer of ``dtype``; ``asked``: the
    decisions answered so. The engines take it as the same Python int: the heuristic's games."""

    def __init__(self, dtype=np.int64, **params):
        super().__init__(**params)
        self.dtype, self.asked = dtype, set()

    def _numpy(self, decision: str, answer):
        self.asked.add(decision)
        return self.dtype(answer)

    def setup_level2_henchmen(self, view, k):
        return [self._numpy("setup_level2_henchmen", h) for h in super().setup_level2_henchmen(view, k)]

    def setup_extras(self, view, n, max_un):
        return self._numpy("setup_extras", super().setup_extras(view, n, max_un))

    def setup_advanced_skill(self, view, skills):
        return self._numpy("setup_advanced_skill", super().setup_advanced_skill(view, skills))

    def move(self, view, moves):
        return self._numpy("move", super().move(view, moves))

    def token(self, view, choices):
        return self._numpy("token", super().token(view, choices))

    def test_option(self, view, options):
        return self._numpy("test_option", super().test_option(view, options))

    def reroll(self, view, test, dice, faces):
        return self._numpy("reroll", super().reroll(view, test, dice, faces))

    def gamble_exchange(self, view, hand, free):
        mask, spend = super().gamble_exchange(view, hand, free)
        return self._numpy("gamble_exchange", mask), spend

    def mission_reward(self, view, options):
        return self._numpy("mission_reward", super().mission_reward(view, options))

    def skill_up(self, view, skills):
        return self._numpy("skill_up", super().skill_up(view, skills))

    def advanced_skill(self, view, skills):
        return self._numpy("advanced_skill", super().advanced_skill(view, skills))

    def skill_down(self, view, skills):
        return self._numpy("skill_down", super().skill_down(view, skills))
