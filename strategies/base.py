"""The strategy interface: one method per decision in docs/RULES.md.

Every method gets a :class:`sim.rules.state.PlayerView` (public information plus
the player's own hand) and the legal options, and returns its choice (usually
an index into the options). An index, a count or a bit mask is a Python or a
numpy integer (``numbers.Integral``; True and False count as 1 and 0 for an
index or ``setup_extras``' count, as ``isinstance(True, int)`` has it, and are
refused for ``reroll``, a gamble's mask and a level-2 henchman). The engine validates every answer and raises
:class:`sim.rules.errors.StrategyError` on an illegal one; it never fixes it.
"""

from __future__ import annotations

from sim.rules.choices import MissionReward, Move, Test, TestOption, TokenChoice
from sim.rules.state import PlayerView


class Strategy:
    """Base class; subclasses override every decision."""

    name = "strategy"

    def params(self) -> dict:
        """Named parameters (recorded with results)."""
        return {}

    # set-up
    def setup_level2_henchmen(self, view: PlayerView, k: int) -> list[int]:
        """``k`` different henchmen to start at level 2: a list, a tuple or a 1-d numpy integer array of
        integers (Python's or numpy's; True and False are refused)."""
        raise NotImplementedError

    def setup_extras(self, view: PlayerView, n: int, max_un: int) -> int:
        """How many of ``n`` extra items to take as UN Transports (the rest are Top Secret): 0 to
        ``min(n, max_un)``. ``max_un`` is the character's cap, and never more than the supply can
        still give this seat."""
        raise NotImplementedError

    def setup_advanced_skill(self, view: PlayerView, skills: list[int]) -> int:
        """Index into ``skills`` of the advanced skill to pick at set-up (asked once per pick)."""
        raise NotImplementedError

    # 1. movement
    def rest(self, view: PlayerView) -> bool:
        raise NotImplementedError

    def move(self, view: PlayerView, moves: list[Move]) -> int:
        raise NotImplementedError

    # 2. tokens
    def token(self, view: PlayerView, choices: list[TokenChoice]) -> int:
        raise NotImplementedError

    # 3. test option (skill tests and Gamble)
    def test_option(self, view: PlayerView, options: list[TestOption]) -> int:
        raise NotImplementedError

    def use_auto_pass(self, view: PlayerView, skill: int, henchman: int, no_advance: bool) -> bool:
        """Use the advanced skill ``skill`` to pass this test automatically (False: test it anyway).

        ``henchman`` is the henchman tested (-1 for an encounter card); ``no_advance`` whether
        the encounter says "do not advance villain"."""
        raise NotImplementedError

    # 4. dice
    def draw_die(self, view: PlayerView, test: Test, drawn: list[int]) -> bool:
        raise NotImplementedError

    def resolve_plus_one(self, view: PlayerView, test: Test, drawn: list[int]) -> bool:
        raise NotImplementedError

    def reroll(self, view: PlayerView, test: Test, dice: list[int], faces: list[int]) -> int:
        """Index of the die to reroll for 1 Resolve, or -1."""
        raise NotImplementedError

    # 5. gamble
    def gamble_exchange(self, view: PlayerView, hand: list[int], free: int) -> tuple[int, bool]:
        """(bitmask of hand positions to exchange, spend 1 Resolve to exchange up to 5)."""
        raise NotImplementedError

    # 6. secret mission reward, and the skill choices of rewards
    def mission_reward(self, view: PlayerView, options: list[MissionReward]) -> int:
        raise NotImplementedError

    def skill_up(self, view: PlayerView, skills: list[int]) -> int:
        raise NotImplementedError

    def advanced_skill(self, view: PlayerView, skills: list[int]) -> int:
        raise NotImplementedError

    # status cards (docs/RULES.md "Status cards")
    def skill_down(self, view: PlayerView, skills: list[int]) -> int:
        """Index into ``skills`` of the basic skill to lower by 1 ("lower any skill": a negative
        status card with no copy left)."""
        raise NotImplementedError

    def status_top_secret(self, view: PlayerView) -> bool:
        """A positive status card with no copy left: draw a Top Secret card (True) or gain 1 Resolve (False)?"""
        raise NotImplementedError

    # 7. Top Secret cards and the Watch
    def play_auto_pass(self, view: PlayerView, test: Test) -> bool:
        raise NotImplementedError

    def play_two_dice(self, view: PlayerView, test: Test) -> bool:
        raise NotImplementedError

    def cancel_advance(self, view: PlayerView, card: int) -> bool:
        raise NotImplementedError

    def heal_all(self, view: PlayerView) -> bool:
        raise NotImplementedError

    def intel_to_pool(self, view: PlayerView) -> bool:
        raise NotImplementedError

    def use_watch(self, view: PlayerView) -> bool:
        raise NotImplementedError
