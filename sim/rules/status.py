"""Status cards a player holds: the passive effects (docs/RULES.md "Status cards").

Cards are dealt by :func:`sim.rules.encounters.gain_status` (rewards, penalties, set-up).
``GameState.status_holder[card]`` is the seat holding a card or -1 (in the status deck);
a discarded card goes back to the deck. Where a player holds two cards with the same
one-shot effect, the lowest card id is used first.
"""

from __future__ import annotations

from sim.content import constants as K
from sim.rules.state import GameState

IN_DECK = K.STATUS_IN_DECK


def first_held(g: GameState, seat: int, effect: int) -> int:
    """The lowest id of a status card with ``effect`` (STATUS_EFFECTS code) the seat holds, or -1."""
    c = g.content
    for card, h in enumerate(g.status_holder):
        if h == seat and c.status_effect[c.status_type[card]] == effect:
            return card
    return -1


def holds_kind(g: GameState, seat: int, kind: int) -> bool:
    """The seat holds a card of this status kind."""
    t = g.content.status_type
    return any(h == seat and t[card] == kind for card, h in enumerate(g.status_holder))


def skill_bonus(g: GameState, seat: int, skill: int) -> int:
    """Dice the seat's skill_modifier cards add to a test of ``skill`` (negative: take away)."""
    c = g.content
    total = 0
    for card, h in enumerate(g.status_holder):
        if h == seat:
            kind = c.status_type[card]
            if c.status_effect[kind] == K.SE_SKILL_MODIFIER and c.status_skill[kind] == skill:
                total += int(c.status_amount[kind])
    return total


def extra_mp(g: GameState, seat: int) -> int:
    """Walking movement points an extra_move card adds (one card's worth: they do not stack)."""
    return K.EXTRA_MP if first_held(g, seat, K.SE_EXTRA_MOVE) >= 0 else 0


def status_name(g: GameState, card: int) -> str:
    return g.content.status_names[int(g.content.status_type[card])]


def discard_status(g: GameState, card: int) -> None:
    """A status card goes back to the status deck, or out of the game (status.toml [readings] discarded)."""
    g.status_holder[card] = IN_DECK if g.content.status_discard_to_deck else K.STATUS_REMOVED
