"""The choices a strategy is offered (see docs/RULES.md). Pure descriptions, no rules."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from sim.content import constants as K


class Means(IntEnum):
    """How a player moves this turn."""

    STAY = K.M_STAY
    WALK = K.M_WALK  # connections and Trans-Siberian train hops, 1 MP each
    PLANE = K.M_PLANE  # open airport to open airport, all MP
    UN = K.M_UN  # own UN Transport token
    UN_GIFT = K.M_UN_GIFT  # a UN Transport token handed over by Calli (gives_un)
    TOP_SECRET_UN = K.M_TOP_SECRET_UN  # a Top Secret card acting as UN Transport


@dataclass(frozen=True)
class Move:
    """One legal movement: destination, means, and whether Resolve buys the +1 MP."""

    dest: int
    means: Means
    resolve: bool = False
    steps: int = 0  # movement points used (information only)


class TokenChoice(IntEnum):
    """What to do on a space with tokens (only one token per turn)."""

    NO_INTEL = K.T_NO_INTEL  # ignore tokens: plain No Intel encounter
    HENCHMAN = K.T_HENCHMAN  # reveal a green Location token and test the henchman
    POOL = K.T_POOL  # take a yellow Intel token into the Pool, With Intel encounter
    EXCHANGE = K.T_EXCHANGE  # swap a yellow token for a green one on a Fate city, With Intel encounter


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

    TOP_SECRET = K.R_TOP_SECRET
    RESOLVE = K.R_RESOLVE
    UN_TRANSPORT = K.R_UN
    SKILL = K.R_SKILL  # +1 to a basic skill (which one: MissionReward.skill)
    DISCARD_STATUS = K.R_DISCARD_STATUS  # discard a negative status card (which kind: MissionReward.card)


@dataclass(frozen=True)
class MissionReward:
    kind: Reward
    skill: int = -1
    card: int = -1  # DISCARD_STATUS: the status card kind (content.status_type) discarded
