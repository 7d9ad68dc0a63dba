"""Keep numba's on-disk cache of the kernel consistent with its sources.

numba keys a cached function on its own file only: after an edit of, say,
``decks.py``, a cached ``play_game`` (in ``game.py``) would still hold the old
``draw_card`` compiled into it. So the kernel stamps its cache with one hash of
every kernel module, of the shared twins (``sim/rng.py``, ``sim/poker.py``,
``sim/odds.py``), of the integer codes (``sim/content/constants.py``), of the
dataclasses whose field order fixes the state and row offsets compiled in as
constants (``Stats`` and ``Outcome`` in ``sim/rules/state.py``, ``GameRecord`` in
``sim/rules/game.py``) and of the compile flags (``sim/jit.py``), and drops the cached
code of all of them whenever that hash changes (numba would not notice a change
of flags in ``sim/jit.py``). Only the default in-tree cache (``__pycache__``) is managed;
with ``NUMBA_CACHE_DIR`` set, clear that folder by hand after editing.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import threading
from pathlib import Path

STAMP = "kernel-sources.sha256"
TABLES = "tables"  # stored_table's files, in the cache folder
# besides sim/kernel/*.py: the compiled twins, the flags, the integer codes compiled code freezes,
# and the dataclasses the layout derives its offsets from (tests/test_kernel_layout.py checks that
# every sim module a kernel module imports at its top is here or read only when packing)
HASHED = ("rng.py", "poker.py", "odds.py", "jit.py", "_cache.py", "content/constants.py", "rules/state.py")
HASHED_MODULES = ("sim.kernel.", "sim.rng", "sim.poker", "sim.odds", "sim.jit", "sim._cache", "sim.content.constants",
                  "sim.rules.state")
# only these top-level classes or functions of a module (the rest of sim/rules/game.py is the readable engine's
# turn loop; the kernel compiles sim/rules/setup.py's un_left, the reading both engines share)
HASHED_DEFINITIONS = {"rules/game.py": ("GameRecord",), "rules/setup.py": ("un_left",)}
TWIN_MODULES = ("rng", "poker", "odds")  # sim/<module>.py compiled twins, cached in sim/__pycache__


SIM = Path(__file__).resolve().parent
KERNEL = SIM / "kernel"
_refreshed = False
_loaded: str | None = None


def sources_hash() -> str:
    files = sorted(KERNEL.glob("*.py")) + [SIM / n for n in HASHED]
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode())
        h.update(f.read_bytes())
    for name, classes in sorted(HASHED_DEFINITIONS.items()):
        h.update(name.encode())
        for text in definition_sources(SIM / name, classes):
            h.update(text.encode())
    return h.hexdigest()


def loaded_sources_hash() -> str:
    """:func:`sources_hash` as this process first read it: the sources of the kernel code in memory.

    Taken by :func:`refresh_cache` when :mod:`sim.jit` is imported, before any kernel module:
    a file edited since changes the hash on disk but not the functions already imported, and
    code compiled from those must not be cached under the new sources' name.
    """
    global _loaded
    if _loaded is None:
        _loaded = sources_hash()
    return _loaded


def definition_sources(path: Path, classes: tuple[str, ...]) -> list[str]:
    """The source text of each named top-level class or function of ``path`` (decorators included), in order."""
    import ast

    text = path.read_text()
    found = {}
    for node in ast.parse(text).body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name in classes:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            lines = text.splitlines()[first - 1:node.end_lineno]
            found[node.name] = "\n".join(lines)
    missing = [c for c in classes if c not in found]
    if missing:
        raise RuntimeError(f"sim/_cache.py: {path.name} has no class or function {', '.join(missing)} to hash")
    return [found[c] for c in classes]


def cache_dir() -> Path:
    """Where numba keeps the kernel's compiled code (``NUMBA_CACHE_DIR`` when set)."""
    custom = os.environ.get("NUMBA_CACHE_DIR")
    return Path(custom) if custom else KERNEL / "__pycache__"


def is_compiled() -> bool:
    """Whether a compiled kernel is on disk (not on a fresh checkout or after an edit)."""
    return any(cache_dir().glob("**/game.simulate_batch-*.nbi"))


def refresh_cache() -> None:
    """Delete stale cached kernel code (a no-op when the sources did not change).

    Called once per process by :mod:`sim.jit`, which every compiled module imports
    before it compiles or loads anything.
    """
    global _refreshed
    try:
        digest = loaded_sources_hash()  # now: before the module importing sim.jit defines its functions
    except OSError:
        return  # unreadable sources: leave the cache as it is
    if _refreshed or os.environ.get("NUMBA_CACHE_DIR"):
        return
    _refreshed = True
    cache = cache_dir()
    stamp = cache / STAMP
    try:
        if stamp.is_file() and stamp.read_text() == digest:
            return
        twins = SIM / "__pycache__"
        stale = list(cache.glob("*.nb[ic]"))
        for module in TWIN_MODULES:
            stale += list(twins.glob(f"{module}.*.nb[ic]"))
        for f in stale:
            f.unlink(missing_ok=True)
        shutil.rmtree(cache / "pairings", ignore_errors=True)  # KernelStrategy pairings (sim.kernel.custom)
        shutil.rmtree(cache / TABLES, ignore_errors=True)  # stored_table's, named by the old sources' hash
        cache.mkdir(exist_ok=True)
        tmp = cache / f"{STAMP}.{os.getpid()}"
        tmp.write_text(digest)
        os.replace(tmp, stamp)
    except OSError:
        pass  # a read-only install: numba will not cache there either


def stored_table(name: str, key: tuple, compute):
    """``compute()``'s array, computed once and kept in the cache folder: for a table derived only from the
    kernel's sources (:func:`sources_hash`) and ``key``, such as the exact pass odds of a pack's dice that
    every process packing the pack needs (about 0.6 s to enumerate). ``key`` holds plain values only (int,
    float, str, bool, None, tuples of them), written out in full in the file's name hash: a numpy value is
    refused, since its text can stand for several values (a long array's ``repr`` elides its middle).
    The file is named by a hash of the sources and the key, so an edit or other dice never reads another
    table; a file that cannot be read is computed again, and where the sources or the folder cannot be read
    or written the table is computed in each process."""
    import numpy as np

    _check_plain(key, name)
    try:
        sources = loaded_sources_hash()
    except OSError:  # an install without its sources: nothing names the table safely
        return np.asarray(compute())
    digest = hashlib.sha256(repr((sources, name, key)).encode()).hexdigest()[:40]
    path = cache_dir() / TABLES / f"{name}-{digest}.npy"
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError):
        pass
    value = np.asarray(compute())
    # one temporary file per process and thread: two threads packing at once never share one
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            np.save(f, value, allow_pickle=False)
        os.replace(tmp, path)  # whole or not at all, for a process reading it at the same time
    except (OSError, ValueError):  # ValueError: an array numpy cannot save without pickle
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    return value


def _check_plain(key, name: str) -> None:
    """Refuse a key :func:`stored_table` cannot name exactly (anything but plain values and tuples of them)."""
    if isinstance(key, tuple):
        for item in key:
            _check_plain(item, name)
    elif key is not None and type(key) not in (int, float, str, bool):
        raise TypeError(f"stored_table {name!r}: a key holds plain values and tuples of them, not "
                        f"{type(key).__name__}")
