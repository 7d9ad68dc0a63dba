"""The end of the game (field manual: Winning / Losing the Game), checked when a track moves."""

from __future__ import annotations

from sim.content import constants as K
from sim.rules.errors import GameOver
from sim.rules.state import DEFEATED, POOL, GameState, Outcome


def intel_pool_counts(g: GameState) -> list[int]:
    """Intel Pool by type (W, T, D, A): what is revealed at the end."""
    counts = [0] * len(K.INTEL_TYPES)
    types = g.content.intel_token_type
    for t, loc in enumerate(g.intel_loc):
        if loc == POOL:
            counts[int(types[t])] += 1
    return counts


def intel_required(g: GameState) -> list[int]:
    """Intel symbols printed at Dr. Lobo's current track position (<= 0 uses position 0)."""
    pos = min(max(g.lobo, 0), g.content.lobo_loss - 1)
    return [int(x) for x in g.content.lobo_intel_required[pos]]


def end_game(g: GameState, outcome: Outcome) -> None:
    g.outcome = outcome
    g.say(f"GAME OVER: {outcome.label}")
    raise GameOver(outcome.label)


def check_lobo(g: GameState) -> None:
    """Dr. Lobo at 9 (or more): the players lose at once."""
    if g.lobo >= g.content.lobo_loss:
        end_game(g, Outcome.LOSS_LOBO)


def check_henchmen(g: GameState) -> None:
    """All four henchmen defeated: an immediate win."""
    if all(level == DEFEATED for level in g.henchman_level):
        end_game(g, Outcome.WIN_HENCHMEN)


def check_location(g: GameState) -> None:
    """Location Track at its target: reveal the Pool and compare with Dr. Lobo's symbols."""
    if g.location_track >= g.location_target:
        have, need = intel_pool_counts(g), intel_required(g)
        g.say(
            "Intel Pool revealed: "
            + " ".join(f"{K.INTEL_LETTERS[i]}x{have[i]}" for i in range(len(have)))
            + " | needed at Dr. Lobo "
            + str(g.lobo)
            + ": "
            + " ".join(f"{K.INTEL_LETTERS[i]}x{need[i]}" for i in range(len(need)) if need[i])
        )
        if all(h >= n for h, n in zip(have, need)):
            end_game(g, Outcome.WIN_LOCATION)
        end_game(g, Outcome.LOSS_INTEL)
