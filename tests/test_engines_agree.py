"""The kernel plays the very same games as the readable rulebook: 2,000 games for every
player count 1-6 and every built-in strategy, compared field for field."""

from concurrent.futures import ProcessPoolExecutor

import pytest

import sim
import strategies

GAMES = 2000
CHUNK = 500
SEED = 424242


def reference_rows(args):
    players, strategy, lo, hi = args
    return sim.simulate(players=players, games=hi - lo, strategy=strategy, seed=SEED, game0=lo, engine="reference")


@pytest.mark.slow
@pytest.mark.parametrize("players", [1, 2, 3, 4, 5, 6])
def test_kernel_rows_equal_reference_rows(players):
    tasks = [(players, s, lo, lo + CHUNK) for s in strategies.BUILT_IN for lo in range(0, GAMES, CHUNK)]
    with ProcessPoolExecutor(2) as pool:
        ref = list(pool.map(reference_rows, tasks))
    for (p, strategy, lo, hi), expected in zip(tasks, ref):
        got = sim.simulate(players=p, games=hi - lo, strategy=strategy, seed=SEED, game0=lo)
        assert got.columns == expected.columns and got.schema == expected.schema
        if not got.equals(expected):
            diff = got.with_row_index().join(expected.with_row_index(), on="index", suffix="_ref")
            bad = [c for c in got.columns if not got[c].equals(expected[c])]
            pytest.fail(f"{players}p {strategy} games {lo}-{hi}: kernel differs from the reference in {bad}; "
                        f"first rows: {diff.filter(sum((diff[c] != diff[c + '_ref']).cast(int) for c in bad) > 0).head(2)}")
