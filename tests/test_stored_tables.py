"""Tables computed once and kept in the cache folder (sim._cache.stored_table), and the pass odds kept so."""

import numpy as np
import pytest

import sim._cache as cache
from sim import odds
from sim.content import load


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    return tmp_path / cache.TABLES


def _counted(value):
    calls = []

    def compute():
        calls.append(1)
        return np.array(value)

    return compute, calls


def test_a_stored_table_is_computed_once_then_read(folder):
    compute, calls = _counted([[0.25, 0.5], [1.0, 0.125]])
    first = cache.stored_table("t", (1, (2, 3)), compute)
    again = cache.stored_table("t", (1, (2, 3)), compute)
    assert len(calls) == 1
    assert len(list(folder.glob("t-*.npy"))) == 1
    np.testing.assert_array_equal(first, again)
    assert again.dtype == np.float64 and again.tobytes() == first.tobytes()


def test_another_key_or_name_is_another_table(folder):
    compute, calls = _counted([1.0])
    cache.stored_table("t", (1,), compute)
    other = cache.stored_table("t", (2,), lambda: np.array([2.0]))
    named = cache.stored_table("u", (1,), lambda: np.array([3.0]))
    assert other.tolist() == [2.0] and named.tolist() == [3.0]
    assert len(list(folder.glob("*.npy"))) == 3


def test_other_sources_never_read_a_table_stored_under_the_old_ones(folder, monkeypatch):
    cache.stored_table("t", (1,), lambda: np.array([1.0]))
    monkeypatch.setattr(cache, "_loaded", "an edited kernel's hash")
    assert cache.stored_table("t", (1,), lambda: np.array([5.0])).tolist() == [5.0]


@pytest.mark.parametrize("damage", [b"", b"not a numpy file", None])
def test_an_unreadable_table_is_computed_again_and_replaced(folder, damage):
    cache.stored_table("t", (1,), lambda: np.array([1.0, 2.0]))
    (path,) = folder.glob("t-*.npy")
    if damage is None:  # cut short, as by a process killed while writing (os.replace prevents it, but)
        path.write_bytes(path.read_bytes()[:-4])
    else:
        path.write_bytes(damage)
    compute, calls = _counted([1.0, 2.0])
    assert cache.stored_table("t", (1,), compute).tolist() == [1.0, 2.0]
    assert len(calls) == 1
    assert cache.stored_table("t", (1,), compute).tolist() == [1.0, 2.0] and len(calls) == 1


def test_a_folder_that_cannot_be_written_computes_each_time(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(blocker))
    compute, calls = _counted([7.0])
    assert cache.stored_table("t", (1,), compute).tolist() == [7.0]
    assert cache.stored_table("t", (1,), compute).tolist() == [7.0]
    assert len(calls) == 2
    assert not list(tmp_path.glob("**/*.npy"))


@pytest.mark.parametrize("key", [(np.arange(2000),), (np.int64(3),), ([1, 2],), ((1, (2, 3.5, "x")), {"a": 1})])
def test_a_key_of_anything_but_plain_values_is_refused(folder, key):
    """A long array's repr elides its middle: two arrays would name one table. Only plain values are taken."""
    with pytest.raises(TypeError, match="stored_table 't': a key holds plain values and tuples of them, not"):
        cache.stored_table("t", key, lambda: np.array([1.0]))
    assert not folder.exists()


def test_without_its_sources_a_table_is_computed_each_time(folder, monkeypatch):
    def unreadable():
        raise FileNotFoundError("sim/kernel/game.py")

    monkeypatch.setattr(cache, "loaded_sources_hash", unreadable)
    compute, calls = _counted([4.0])
    assert cache.stored_table("t", (1, (2, 3.5, "x", None, True)), compute).tolist() == [4.0]
    assert cache.stored_table("t", (1, (2, 3.5, "x", None, True)), compute).tolist() == [4.0]
    assert len(calls) == 2 and not folder.exists()


def test_an_array_numpy_cannot_save_is_returned_and_not_kept(folder):
    value = cache.stored_table("t", (1,), lambda: np.array([{"a": 1}], dtype=object))
    assert value[0] == {"a": 1}
    assert not list(folder.glob("*"))  # neither the table nor its temporary file


def test_the_stored_pass_table_is_the_enumeration(folder):
    """The pass odds the kernel and the heuristic read: stored, then read back, equal to enumerating each
    entry again (every dice count, need and reroll)."""
    c = load()
    table = odds.pass_table.__wrapped__(*odds.pass_table_args(c))  # past the per-process cache
    (path,) = folder.glob("pass_table-*.npy")
    read = odds.pass_table.__wrapped__(*odds.pass_table_args(c))
    assert read.tobytes() == table.tobytes() and path.exists()
    for k in range(6):
        for needed in (1, 2):
            for r, mode in enumerate(("none", "on_fail")):
                want = odds.dice_test_odds(k, needed, mode, c.die_success, c.die_injury, c.die_heal, c.bag_dice,
                                           c.always_die).p_pass
                assert table[k, needed - 1, r] == want, (k, needed, mode)
    assert 0 < table[1, 0, 0] < table[5, 0, 1] <= 1

