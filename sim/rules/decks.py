"""Decks and token supplies: the canonical draw protocol both engines follow.

* A deck draw takes a uniformly random card of the pile (``j = below(len(pile))``),
  moves the last card into its place and pops: a lazily shuffled deck.
* An exhausted pile is rebuilt from its discards in ascending card-id order
  ("shuffle to make a new draw pile"), then drawn the same way.
* A token drawn from a supply (or the Pool) is a uniformly random one among the
  token ids lying there, in ascending id order.
* A face-down token picked from a space (``pick_on_space``) is drawn the same way
  when the space holds several of that colour; a lone token is taken without a draw.
"""

from __future__ import annotations

from sim.rng import TOKENS
from sim.rules.state import Deck, GameState


def draw_card(g: GameState, deck: Deck, source: int) -> int:
    """Draw the top card of ``deck`` (reshuffling its discards if needed); -1 if none left."""
    if deck.top >= 0:
        card, deck.top = deck.top, -1
        return card
    if not deck.pile:
        if not deck.discard:
            return -1
        deck.pile = sorted(deck.discard)
        deck.discard = []
    j = g.rng.below(len(deck.pile), source)
    card = deck.pile[j]
    deck.pile[j] = deck.pile[-1]
    deck.pile.pop()
    return card


def peek_card(g: GameState, deck: Deck, source: int) -> int:
    """Reveal the top card without drawing it (it stays on top for the next draw)."""
    if deck.top < 0:
        deck.top = draw_card(g, deck, source)
    return deck.top


def cards_in(deck: Deck) -> int:
    return len(deck.pile) + (1 if deck.top >= 0 else 0)


def draw_token(g: GameState, locations: list[int], where: int) -> int:
    """Pick a random token lying at ``where`` (a supply, the Pool or a space); -1 if none."""
    candidates = [t for t, loc in enumerate(locations) if loc == where]
    if not candidates:
        return -1
    return candidates[g.rng.below(len(candidates), TOKENS)]


def pick_on_space(g: GameState, locations: list[int], space: int) -> int:
    """A blind pick among the face-down tokens of one colour on ``space`` (TOKENS stream).

    The tokens are face down, so the pick is uniform among them; a lone token is taken
    without a draw. -1 if none lies there.
    """
    candidates = [t for t, loc in enumerate(locations) if loc == space]
    if len(candidates) <= 1:
        return candidates[0] if candidates else -1
    return candidates[g.rng.below(len(candidates), TOKENS)]
