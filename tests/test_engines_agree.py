"""The kernel plays the very same games as the readable rulebook: 2,000 games for every
player count 1-6 and every built-in strategy, compared field for field.

The rulebook's rows come from ``tests/golden/engine_agree.json`` where its key is this code's
(``tests/reference_record.py``: a digest of each chunk's rows, under a hash of every source and
of the versions that decide them); anywhere else, and for any chunk whose digest the kernel's
rows do not match, the rulebook plays the chunk again and the rows are compared value by value."""

import warnings
from concurrent.futures import ProcessPoolExecutor

import polars as pl
import pytest

import sim
from tests.reference_record import (
    SEED,
    chunk_name,
    chunks,
    recorded_digests,
    reference_rows,
    rows_digest,
)


@pytest.fixture(scope="module")
def recorded():
    digests = recorded_digests()
    if digests is None:
        warnings.warn("tests/golden/engine_agree.json is missing or not this code's (a source changed): the "
                      "rulebook plays every chunk again; refresh it with `.venv/bin/python -m "
                      "tests.reference_record`", stacklevel=1)
    return digests or {}


def kernel_rows(task):
    players, strategy, lo, hi = task
    return sim.simulate(players=players, games=hi - lo, strategy=strategy, seed=SEED, game0=lo)


def check_agreement(tasks, recorded, kernel=kernel_rows):
    """Fail unless the kernel's rows of every chunk are the rulebook's: its recorded digest, or else its rows
    played again and compared value by value (naming the chunk, the columns and the first rows that differ)."""
    got = {task: kernel(task) for task in tasks}
    replay = [task for task in tasks if recorded.get(chunk_name(task)) != rows_digest(got[task])]
    with ProcessPoolExecutor(2) as pool:
        for task, expected in zip(replay, pool.map(reference_rows, replay)):
            rows = got[task]
            assert rows.columns == expected.columns and rows.schema == expected.schema, chunk_name(task)
            if not rows.equals(expected):
                diff = rows.with_row_index().join(expected.with_row_index(), on="index", suffix="_ref")
                bad = [c for c in rows.columns if not rows[c].equals(expected[c])]
                first = diff.filter(sum((diff[c] != diff[c + "_ref"]).cast(int) for c in bad) > 0).head(2)
                pytest.fail(f"{chunk_name(task)}: kernel differs from the reference in {bad}; first rows: {first}")
    wrong = [chunk_name(t) for t in replay if chunk_name(t) in recorded]
    if wrong:  # the rulebook played them again and the kernel matched it: the record is not the rulebook's
        pytest.fail(f"tests/golden/engine_agree.json: the recorded digests of {wrong} are not the rulebook's rows "
                    "of this code; refresh it with `.venv/bin/python -m tests.reference_record`")


@pytest.mark.slow
@pytest.mark.parametrize("players", [1, 2, 3, 4, 5, 6])
def test_kernel_rows_equal_reference_rows(players, recorded):
    check_agreement(chunks(players), recorded)


SMALL = (2, "heuristic", 0, 20)


def test_a_value_the_kernel_changes_fails_with_or_without_the_record():
    """One changed value of one game: the digest differs, the chunk is played again, the test names it."""
    expected = reference_rows(SMALL)

    def off_by_one(task):
        rows = kernel_rows(task)
        return rows.with_columns(pl.when(pl.col("game") == 7).then(pl.col("turns") + 1).otherwise(pl.col("turns"))
                                 .alias("turns"))

    for recorded in ({}, {chunk_name(SMALL): rows_digest(expected)}):
        with pytest.raises(pytest.fail.Exception,
                           match=r"^2p heuristic games 0-20: kernel differs from the reference in \['turns'\]"):
            check_agreement([SMALL], recorded, kernel=off_by_one)
    check_agreement([SMALL], {chunk_name(SMALL): rows_digest(expected)})  # the real kernel: its digest, no replay


def test_a_wrong_recorded_digest_is_found_out():
    """A record whose digest is not the rulebook's rows fails, after the rulebook played the chunk again."""
    with pytest.raises(pytest.fail.Exception, match=r"recorded digests of \['2p heuristic games 0-20'\] are not"):
        check_agreement([SMALL], {chunk_name(SMALL): "0" * 64})


def test_the_record_is_keyed_by_every_source(tmp_path, monkeypatch):
    """An edit to any source file, code or content, gives another key: the record no longer applies."""
    import shutil

    import tests.reference_record as rr

    for folder in rr.SOURCE_FOLDERS:
        shutil.copytree(rr.ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(rr, "ROOT", tmp_path)
    base = rr.sources_key()
    for edited in ("sim/rules/villain.py", "sim/content/default/dice.toml", "strategies/tuned.toml",
                   "sim/kernel/game.py"):
        path = tmp_path / edited
        text = path.read_bytes()
        path.write_bytes(text + b"\n")
        assert rr.sources_key() != base, edited
        path.write_bytes(text)
        assert rr.sources_key() == base
    added = tmp_path / "sim" / "content" / "default" / "extra.dat"  # a file of any kind the rules might read
    added.write_bytes(b"1")
    assert rr.sources_key() != base
    added.unlink()
    (tmp_path / "sim" / "__pycache__").mkdir(exist_ok=True)
    (tmp_path / "sim" / "__pycache__" / "x.pyc").write_bytes(b"compiled")  # not a source
    assert rr.sources_key() == base
