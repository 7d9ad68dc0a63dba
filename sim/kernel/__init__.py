"""The numba twin of ``sim.rules``: the whole game as ``@njit`` code over arrays.

Function for function the same names as ``sim.rules`` (``setup_game``,
``villain_advancement``, ``dice_test``, ``legal_moves``, ``encounter_phase``,
``play_game`` ...). A game's functions take one context ``ctx``
(:class:`sim.kernel.layout.Context`: the content bundle ``pk``, the settings
vector ``cfg``, the int64 state vector ``st``, the random streams ``rs``, the
strategy's id ``sid`` and parameters ``prm``), then what the rule is about
(``seat``, a card, a count). Every kernel function is tested for exact equality
with the reference (tests/test_kernel_*.py).

How it stays fast: the kernel never allocates (scratch space is a region at the
end of the state vector, ``L_W_*`` in :mod:`sim.kernel.layout`) and is compiled
without numba's runtime (:data:`sim.jit.KERNEL_OPTIONS`), so no call pays for
atomic reference counts, and without negative-index wraparound
(:data:`sim.jit.NO_WRAPAROUND`); map facts that never change are tables in the
bundle (walking costs and the best walk toward each target, airports by
distance, End of Turn regions); token scans pick without a branch per token
where the board decides (:func:`sim.kernel.decks.draw_token`, through a bit set); the cards each seat
holds are also counted by effect (``S_HELD_*``, kept where cards are taken and
given up), and the seats holding each advanced skill (``S_ADV_HELD``), so most
look-ups end at a count; each random source works out its
next eight draws at once in vector lanes (:func:`sim.rng.fill_ahead`); and the
heuristic finds its move without listing the ~200 legal moves
(:func:`sim.kernel.strategy.heuristic_move`, tested against the Python
heuristic). Entry points:

* :func:`run_batch` / :func:`records`: a batch of games as rows, and the rows as
  the reference's :class:`~sim.rules.game.GameRecord` objects (``run_batch(sink=...)``
  hands each chunk's rows to the caller in the thread that played it instead:
  ``simulate()`` builds its table that way, :class:`sim.run.KernelTable`);
* :func:`simulate_batch`: the jitted kernel itself (a contiguous run of games, no
  GIL; :func:`run_batch` hands small chunks of the games to its threads as they
  come free), playing in the work arrays of :func:`work_arrays` (it allocates no arrays).
"""

# (stale cached code is dropped by sim.jit, which every compiled module imports first)
from sim.kernel.batch import bundle, records, run_batch
from sim.kernel.game import play_game, simulate_batch, work_arrays
from sim.kernel.layout import (
    ROW_FIELDS,
    Context,
    pack,
    row_columns,
    settings_vector,
    strategy_vector,
    team_vectors,
)
from sim.kernel.packref import kernel_pack

__all__ = [
    "ROW_FIELDS",
    "Context",
    "bundle",
    "kernel_pack",
    "pack",
    "play_game",
    "records",
    "row_columns",
    "run_batch",
    "settings_vector",
    "simulate_batch",
    "strategy_vector",
    "team_vectors",
    "work_arrays",
]
