"""smersh-sim: a Monte Carlo balance simulator for the co-operative board game Agents of SMERSH."""

__version__ = "0.1.0"
# Bump when a rules change alters what a seeded game does (recorded in every result file).
RULES_VERSION = "3"


def simulate(*args, **kwargs):
    """Play seeded games and return one row per game (see :func:`sim.run.simulate`)."""
    from sim.run import simulate as _simulate

    return _simulate(*args, **kwargs)


__all__ = ["simulate", "__version__", "RULES_VERSION"]
