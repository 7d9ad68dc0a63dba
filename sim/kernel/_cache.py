"""Keep numba's on-disk cache of the kernel consistent with its sources.

numba keys a cached function on its own file only: after an edit of, say,
``decks.py``, a cached ``play_game`` (in ``game.py``) would still hold the old
``draw_card`` compiled into it. So the kernel stamps its cache with one hash of
every kernel module and of the shared twins it calls (``sim/rng.py``,
``sim/poker.py``, ``sim/jit.py``), and drops the kernel's cache files whenever
that hash changes. Only the default in-tree cache (``__pycache__``) is managed;
with ``NUMBA_CACHE_DIR`` set, clear that folder by hand after editing.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

STAMP = "kernel-sources.sha256"


def sources_hash() -> str:
    here = Path(__file__).resolve().parent
    files = sorted(here.glob("*.py")) + [here.parent / n for n in ("rng.py", "poker.py", "jit.py")]
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def cache_dir() -> Path:
    """Where numba keeps the kernel's compiled code (``NUMBA_CACHE_DIR`` when set)."""
    custom = os.environ.get("NUMBA_CACHE_DIR")
    return Path(custom) if custom else Path(__file__).resolve().parent / "__pycache__"


def is_compiled() -> bool:
    """Whether a compiled kernel is on disk (not on a fresh checkout or after an edit)."""
    return any(cache_dir().glob("**/game.simulate_batch-*.nbi"))


def refresh_cache() -> None:
    """Delete stale cached kernel code (a no-op when the sources did not change)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    cache = Path(__file__).resolve().parent / "__pycache__"
    stamp = cache / STAMP
    try:
        digest = sources_hash()
        if stamp.is_file() and stamp.read_text() == digest:
            return
        if cache.is_dir():
            for f in list(cache.glob("*.nbi")) + list(cache.glob("*.nbc")):
                f.unlink(missing_ok=True)
        cache.mkdir(exist_ok=True)
        tmp = cache / f"{STAMP}.{os.getpid()}"
        tmp.write_text(digest)
        os.replace(tmp, stamp)
    except OSError:
        pass  # a read-only install: numba will not cache there either
