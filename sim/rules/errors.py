"""Exceptions of the rules engine, and the kinds of answer a strategy may give."""

import numbers

import numpy as np


class GameOver(Exception):
    """Raised the moment a track change ends the game; the outcome is on the state."""


class RuleError(RuntimeError):
    """The engine reached a position the rules do not allow (a bug, never silenced)."""


class StrategyError(ValueError):
    """A strategy returned an illegal choice (a bug in the strategy, never silently fixed)."""


# A strategy's answers: numpy's scalars count as Python's (a rule written with numpy arrays answers
# numpy integers, and the kernel, where a KernelStrategy's decisions run, cannot tell them apart).
def is_integer(x) -> bool:
    """A count or a bit mask: a Python or numpy integer (``numbers.Integral``), not True or False."""
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def is_flag(x) -> bool:
    """True or False, Python's or numpy's."""
    return isinstance(x, (bool, np.bool_))


def is_index(x) -> bool:
    """An index into the options: an integer, or True or False read as 1 or 0 (as ``isinstance(True, int)`` has it)."""
    return is_integer(x) or is_flag(x)


def is_index_array(x) -> bool:
    """A 1-d numpy array of integers, read as the list of them (a kernel decision writes its indices
    to one); not of True and False, which is a mask, nor of floats."""
    return isinstance(x, np.ndarray) and x.ndim == 1 and np.issubdtype(x.dtype, np.integer)
