"""The numba twin of ``sim.rules``: the whole game as ``@njit`` code over arrays.

Function for function the same names as ``sim.rules`` (``setup_game``,
``villain_advancement``, ``dice_test``, ``legal_moves``, ``encounter_phase``,
``play_game`` ...), over the content bundle (:mod:`sim.kernel.layout`,
:mod:`sim.kernel.packref`), a settings vector ``cfg`` and one int64 state
vector per game. Every kernel function is tested for exact equality with the
reference (tests/test_kernel_*.py). Entry points:

* :func:`run_batch` / :func:`records`: a batch of games as rows, and the rows as
  the reference's :class:`~sim.rules.game.GameRecord` objects;
* :func:`simulate_batch`: the parallel jitted kernel itself.
"""

from sim.kernel._cache import refresh_cache

refresh_cache()  # before any jitted kernel module loads its cache

from sim.kernel.batch import bundle, records, run_batch  # noqa: E402
from sim.kernel.game import ROW_FIELDS, play_game, simulate_batch  # noqa: E402
from sim.kernel.layout import STRATEGY_IDS, pack, settings_vector, strategy_vector  # noqa: E402
from sim.kernel.packref import kernel_pack  # noqa: E402

__all__ = [
    "ROW_FIELDS",
    "STRATEGY_IDS",
    "bundle",
    "kernel_pack",
    "pack",
    "play_game",
    "records",
    "run_batch",
    "settings_vector",
    "simulate_batch",
    "strategy_vector",
]
