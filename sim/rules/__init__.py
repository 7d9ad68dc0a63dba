"""The executable rulebook: the whole game of SMERSH in readable Python.

One module per rulebook section: :mod:`setup`, :mod:`movement`,
:mod:`encounters` (with :mod:`missions`), :mod:`skill_tests`, :mod:`gamble`,
:mod:`villain`, :mod:`endgame`; :mod:`game` is the turn loop. Names follow the
rulebook's words. The numba kernel (``sim.kernel``) must reproduce these games
exactly: every random draw goes through the per-source streams of ``sim.rng``.
"""

from sim.rules.game import GameRecord, play_game, play_turn
from sim.rules.state import GameState, Outcome, Settings

__all__ = ["GameRecord", "GameState", "Outcome", "Settings", "play_game", "play_turn"]
