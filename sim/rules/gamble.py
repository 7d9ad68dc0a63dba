"""Gamble actions: poker against the House with the Fate deck (field manual "Gamble Actions").

Follows the gamble protocol of :mod:`sim.poker`: a freshly shuffled 44-card
deck drawn lazily from the GAMBLE stream; 5 cards to the player; one exchange
(1 card, 2 with Gambling/Luck, up to 5 for 1 Resolve) all at once; 5 to the
House; the player must hold the *better* hand (a tie loses).
"""

from __future__ import annotations

from sim.content import constants as K
from sim.poker import CATEGORY_NAMES, RANK_NAMES, hand_category, hand_value
from sim.rng import GAMBLE
from sim.rules.errors import StrategyError, is_flag, is_integer
from sim.rules.state import GameState

SUITS = "cdhs"  # Fate deck suit codes 0..3: clubs, diamonds, hearts, spades


def card_name_of(rank, suit) -> str:
    return RANK_NAMES[int(rank)] + SUITS[int(suit) % 4]


def free_exchanges(g: GameState, seat: int) -> int:
    """Cards a player may exchange without Resolve (2 with Gambling/Luck)."""
    return K.LUCK_EXCHANGE if g.players[seat].advanced[K.GAMBLING_LUCK] else K.FREE_EXCHANGE


def hand_value_of(g: GameState, cards: list[int]) -> int:
    r, s = g.content.fate_rank, g.content.fate_suit
    return hand_value(*(int(r[x]) for x in cards), *(int(s[x]) for x in cards))


def gamble(g: GameState, seat: int) -> bool:
    """Play one gamble for the active player; True if the player's hand is better."""
    c = g.content
    p = g.players[seat]
    strat = g.strategy(seat)
    deck = list(range(len(c.fate_rank)))

    def draw() -> int:
        j = g.rng.below(len(deck), GAMBLE)
        card = deck[j]
        deck[j] = deck[-1]
        deck.pop()
        return card

    g.stats.gambles_played += 1
    hand = [draw() for _ in range(5)]
    free = free_exchanges(g, seat)
    answer = strat.gamble_exchange(g.view(seat, "gamble_exchange"), list(hand), free)
    if not (isinstance(answer, tuple) and len(answer) == 2):
        raise StrategyError(f"strategy {strat.name!r} must answer a gamble with (mask, spend_resolve), got {answer!r}")
    mask, spend = answer
    if not is_integer(mask) or not 0 <= mask < 32 or not is_flag(spend):
        raise StrategyError(f"strategy {strat.name!r} returned exchange mask {mask!r} and spend {spend!r}")
    mask, spend = int(mask), bool(spend)
    n = bin(mask).count("1")
    if spend and p.resolve <= 0:
        raise StrategyError(f"strategy {strat.name!r} spends Resolve it does not have in a gamble")
    if n > (K.RESOLVE_EXCHANGE if spend else free):
        raise StrategyError(f"strategy {strat.name!r} exchanges {n} cards (allowed {free})")
    if spend:
        p.resolve -= 1
        g.stats.resolve_spent += 1
    g.say("  gamble: dealt " + " ".join(card_name_of(c.fate_rank[x], c.fate_suit[x]) for x in hand))
    if n:
        for i in range(5):
            if (mask >> i) & 1:
                hand[i] = draw()
        g.say(
            f"  exchanges {n} card(s){' for 1 Resolve' if spend else ''}: "
            + " ".join(card_name_of(c.fate_rank[x], c.fate_suit[x]) for x in hand)
        )
    house = [draw() for _ in range(5)]
    mine, theirs = hand_value_of(g, hand), hand_value_of(g, house)
    won = mine > theirs
    g.say(
        "  House: "
        + " ".join(card_name_of(c.fate_rank[x], c.fate_suit[x]) for x in house)
        + f" | {CATEGORY_NAMES[hand_category(mine)]} vs {CATEGORY_NAMES[hand_category(theirs)]}: "
        + ("WIN" if won else ("tie, which loses" if mine == theirs else "LOSE"))
    )
    if won:
        g.stats.gambles_won += 1
    return won
