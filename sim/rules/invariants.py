"""Conservation invariants of a game position: every component is somewhere, once.

Checked after every turn in the test suite: 20 Intel tokens (supply, board, Pool,
removed), 4 green tokens, 35 villain cards (deck, discard, next to Dr. Lobo,
removed at set-up), 8 UN Transports, 22 Top Secret cards, 44 Fate cards, the
encounter decks, and every skill and Resolve inside its limits.
"""

from __future__ import annotations

from collections import Counter

from sim.content import constants as K
from sim.rules.state import DEFEATED, POOL, REMOVED, SUPPLY, GameState


def _deck_cards(deck) -> list[int]:
    return list(deck.pile) + list(deck.discard) + ([deck.top] if deck.top >= 0 else [])


def _exactly_once(label: str, cards: list[int], n: int) -> None:
    counts = Counter(cards)
    dup = sorted(x for x, k in counts.items() if k > 1)
    missing = sorted(set(range(n)) - set(counts))
    extra = sorted(set(counts) - set(range(n)))
    if dup or missing or extra:
        raise AssertionError(f"{label}: duplicated {dup}, missing {missing}, unknown {extra}")


def check_invariants(g: GameState) -> None:
    """Raise AssertionError naming the first broken invariant."""
    c = g.content
    n_spaces = c.n_spaces
    for t, loc in enumerate(g.intel_loc):
        if not (loc in (SUPPLY, POOL, REMOVED) or 0 <= loc < n_spaces):
            raise AssertionError(f"Intel token {t} at impossible place {loc}")
        if loc >= 0 and c.space_kind[loc] == K.REGIONAL:
            raise AssertionError(f"Intel token {t} on a regional area")
    if len(g.intel_loc) != len(c.intel_token_type):
        raise AssertionError("Intel token count changed")
    for t, loc in enumerate(g.green_loc):
        if not (loc in (SUPPLY, REMOVED) or 0 <= loc < n_spaces):
            raise AssertionError(f"Location token {t} at impossible place {loc}")
        if (loc == REMOVED) != (g.henchman_level[t] == DEFEATED):
            raise AssertionError(f"Location token {t} removed={loc == REMOVED} but henchman level {g.henchman_level[t]}")
    for h, level in enumerate(g.henchman_level):
        if level not in (1, 2, 3, DEFEATED):
            raise AssertionError(f"henchman {h} at level {level}")
    villain = _deck_cards(g.villain) + list(g.next_to_lobo) + list(g.villain_removed)
    _exactly_once("villain cards", villain, len(c.villain_advance))
    for card in g.next_to_lobo:
        if c.villain_injury[card]:
            raise AssertionError(f"Injury card {card} lies next to Dr. Lobo")
    fate = _deck_cards(g.fate) + [m for p in g.players for m in p.missions]
    _exactly_once("Fate cards", fate, len(c.fate_city))
    ts = _deck_cards(g.top_secret) + [t for p in g.players for t in p.top_secret]
    _exactly_once("Top Secret cards", ts, len(c.top_secret_effect))
    enc = [x for d in g.encounters for x in _deck_cards(d)]
    _exactly_once("encounter cards", enc, len(c.encounter_deck))
    for d, deck in enumerate(g.encounters):
        for x in _deck_cards(deck):
            if c.encounter_deck[x] != d:
                raise AssertionError(f"encounter card {x} in the wrong deck {d}")
    if len(g.status_holder) != c.n_status:
        raise AssertionError(f"status cards: {len(g.status_holder)} tracked, the pack has {c.n_status}")
    for card, h in enumerate(g.status_holder):
        if not K.STATUS_REMOVED <= h < len(g.players):
            raise AssertionError(f"status card {card} held by impossible seat {h}")
    for p in g.players:
        held = [int(c.status_type[x]) for x in g.status_of(p.seat)
                if c.status_polarity[c.status_type[x]] == K.THIRD_PERSON]
        if len(held) != len(set(held)):
            raise AssertionError(f"seat {p.seat} holds a third person twice")
    un = g.un_supply + sum(p.un_tokens for p in g.players)
    if un != c.n_un_transport or g.un_supply < 0:
        raise AssertionError(f"UN Transport tokens: {un} in play, expected {c.n_un_transport}")
    closed = sum(g.airport_closed)
    if closed + g.close_tokens_left != c.n_close_airport_tokens:
        raise AssertionError("close-airport tokens not conserved")
    for s, is_closed in enumerate(g.airport_closed):
        if is_closed and (not c.space_airport[s] or c.space_red_airport[s]):
            raise AssertionError(f"closed airport at {c.space_names[s]} which cannot close")
    for skill, tokens in enumerate(K.ADVANCED_SKILLS):
        held = sum(1 for p in g.players if p.advanced[skill])
        if held > c.n_advanced_skill_tokens:
            raise AssertionError(f"advanced skill {tokens}: {held} holders, {c.n_advanced_skill_tokens} tokens")
    for p in g.players:
        lo, hi = int(c.character_skill_min[p.character]), int(c.character_skill_max[p.character])
        if not all(lo <= x <= hi for x in p.skills):
            raise AssertionError(f"seat {p.seat}: skills {p.skills} outside the mat's {lo}..{hi}")
        if not 0 <= p.resolve <= p.resolve_max:
            raise AssertionError(f"seat {p.seat}: Resolve {p.resolve} outside 0..{p.resolve_max}")
        if not 0 <= p.injuries < p.life:
            raise AssertionError(f"seat {p.seat}: injuries {p.injuries} with life {p.life}")
        if p.un_tokens < 0:
            raise AssertionError(f"seat {p.seat}: negative UN tokens")
        if len(p.missions) != 2:
            raise AssertionError(f"seat {p.seat}: {len(p.missions)} mission cards")
        if not 0 <= p.space < n_spaces:
            raise AssertionError(f"seat {p.seat}: on impossible space {p.space}")
    if g.outcome is None and g.lobo >= c.lobo_loss:
        raise AssertionError("Dr. Lobo at 9 but the game goes on")
    if g.outcome is None and g.location_track >= g.location_target:
        raise AssertionError("Location Track at its target but the game goes on")
