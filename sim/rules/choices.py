"""The choices a strategy is offered (see docs/RULES.md). Pure descriptions, no rules."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class Means(IntEnum):
    """How a player moves this turn."""

    STAY = 0
    WALK = 1  # connections and Trans-Siberian train hops, 1 MP each
    PLANE = 2  # open airport to open airport, all MP
    UN = 3  # own UN Transport token
    UN_GIFT = 4  # a UN Transport token handed over by Calli (gives_un)
    TOP_SECRET_UN = 5  # a Top Secret card acting as UN Transport


@dataclass(frozen=True)
class Move:
    """One legal movement: destination, means, and whether Resolve buys the +1 MP."""

    dest: int
    means: Means
    resolve: bool = False
    steps: int = 0  # movement points used (information only)


class TokenChoice(IntEnum):
    """What to do on a space with tokens (only one token per turn)."""

    NO_INTEL = 0  # ignore tokens: plain No Intel encounter
    HENCHMAN = 1  # reveal a green Location token and test the henchman
    POOL = 2  # take a yellow Intel token into the Pool, With Intel encounter
    EXCHANGE = 3  # swap a yellow token for a green one on a Fate city, With Intel encounter


@dataclass(frozen=True)
class TestOption:
    """One way to resolve a test: a skill test or (gamble=True) a Gamble."""

    skill: int = -1
    modifier: int = 0
    successes: int = 1
    gamble: bool = False


@dataclass(frozen=True)
class Test:
    """A test about to be rolled (what the strategy knows when deciding on dice)."""

    option: TestOption
    dice_allowed: int  # skill + modifier (+2 Top Secret, +1 Resolve as spent)
    henchman: int = -1  # henchman index for a henchman test
    level: int = 0  # henchman level
    no_advance: bool = False  # failing does not advance the villain


class Reward(IntEnum):
    """Secret mission rewards."""

    TOP_SECRET = 0
    RESOLVE = 1
    UN_TRANSPORT = 2
    SKILL = 3  # +1 to a basic skill (which one: MissionReward.skill)


@dataclass(frozen=True)
class MissionReward:
    kind: Reward
    skill: int = -1
