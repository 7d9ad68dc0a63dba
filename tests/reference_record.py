"""The rulebook engine's rows for the engines' agreement test, kept as digests in tests/golden/engine_agree.json.

The agreement test compares the kernel's rows with the rulebook engine's on 2,000 games for every player
count and built-in strategy: 48,000 games of readable Python, nearly all of that test's time. The rulebook's
rows are a pure function of the sources (every file of ``sim/`` and ``strategies/`` but compiled Python) and
of the versions of Python, numpy, polars, pydantic and numba, so this record keeps, under a key hashed from
all of them and this file, the digest of each chunk of rulebook rows. Where the key still matches, the test
compares the kernel's rows with the recorded digests; anywhere else (an edit to any source, another
version), or where a digest differs, the rulebook plays the chunk again, as before. Refresh the record
after a change to the sources, in the same commit:

    .venv/bin/python -m tests.reference_record
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "tests" / "golden" / "engine_agree.json"
SOURCE_FOLDERS = ("sim", "strategies")

GAMES = 2000
CHUNK = 500
SEED = 424242
PLAYERS = (1, 2, 3, 4, 5, 6)


def sources_key() -> str:
    """sha256 over every file of ``sim/`` and ``strategies/`` but compiled Python (path and bytes), this file, the
    versions of Python, numpy, polars, pydantic (it reads the pack) and numba (the heuristic's pass odds are
    compiled), and the games the record covers."""
    import llvmlite
    import numba
    import numpy
    import polars
    import pydantic

    h = hashlib.sha256()
    h.update(f"python {sys.version}\nnumpy {numpy.__version__}\npolars {polars.__version__}\n"
             f"pydantic {pydantic.VERSION}\nnumba {numba.__version__}\nllvmlite {llvmlite.__version__}\n".encode())
    h.update(f"games {GAMES} chunk {CHUNK} seed {SEED} players {PLAYERS}\n".encode())
    h.update(Path(__file__).read_bytes())
    for folder in SOURCE_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                h.update(f"{path.relative_to(ROOT).as_posix()}\n{path.stat().st_size}\n".encode())
                h.update(path.read_bytes())
    return h.hexdigest()


def rows_digest(frame) -> str:
    """sha256 of a table's schema and every value (its CSV text): equal digests, equal tables."""
    return hashlib.sha256(f"{frame.schema!r}\n{frame.write_csv()}".encode()).hexdigest()


def chunks(players: int):
    """(players, strategy, first game, end) of each chunk the test compares."""
    import strategies

    return [(players, s, lo, lo + CHUNK) for s in strategies.BUILT_IN for lo in range(0, GAMES, CHUNK)]


def chunk_name(task) -> str:
    players, strategy, lo, hi = task
    return f"{players}p {strategy} games {lo}-{hi}"


def reference_rows(task):
    """The rulebook engine's rows of one chunk."""
    import sim

    players, strategy, lo, hi = task
    return sim.simulate(players=players, games=hi - lo, strategy=strategy, seed=SEED, game0=lo, engine="reference")


def _digest_of_reference(task) -> tuple[str, str]:
    return chunk_name(task), rows_digest(reference_rows(task))


def recorded_digests() -> dict[str, str] | None:
    """The recorded digests by chunk name, or None where the record is missing or its key is not this code's."""
    try:
        record = json.loads(RECORD.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("key") != sources_key():
        return None
    digests = record.get("digests")
    return digests if isinstance(digests, dict) else None


def refresh(workers: int | None = None) -> dict:
    """Play every chunk on the rulebook engine and write the record (returns it)."""
    tasks = [t for p in PLAYERS for t in chunks(p)]
    with ProcessPoolExecutor(workers or os.cpu_count()) as pool:
        digests = dict(pool.map(_digest_of_reference, tasks))
    record = {"what": "sha256 of the rulebook engine's rows (schema and CSV text) of each chunk the engines' "
                      "agreement test compares; valid only under its key (tests/reference_record.py)",
              "key": sources_key(), "digests": digests}
    RECORD.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return record


if __name__ == "__main__":
    before = sources_key()
    refresh()
    if sources_key() != before:  # a source edited while the rulebook played: the record may mix two codes
        RECORD.unlink()
        sys.exit("tests/golden/engine_agree.json: a source changed while the record was made; run it again")
    print(f"wrote {RECORD.relative_to(ROOT)}")
