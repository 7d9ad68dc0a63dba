"""A results folder as one unit: a lock while a run writes it, a manifest once it is complete.

``smersh-sim run`` holds an exclusive lock on ``<out>/.lock`` (``fcntl.flock``;
``msvcrt.locking`` on Windows) while it plays and writes; a second run into
the same folder is refused with the holder's process id. The operating system releases the lock when its
process ends, however it ends, so a killed run never blocks the next one.

The last file a run writes, atomically, is ``manifest.json``: the name, size,
sha256 and row count of every file of that one complete run, and the run's
key. A run first deletes the old manifest, so a folder whose run stopped
while writing has none. Readers (``compare``, :func:`read_summary`,
:func:`read_metadata`) call :func:`check_folder`, which refuses a folder
without a manifest, or one where a file the manifest lists differs from it.
A listed file may be absent (``games.parquet`` is not committed with
``results/``) unless the reader needs it.

``metadata.json`` (listed in the manifest) holds the run's metadata as plain
JSON for any reader; ``provenance.json`` (not listed, not committed) holds what
changes without changing a number: the git revision, package versions and
the hash of the simulator's code.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import socket
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

MANIFEST = "manifest.json"
METADATA = "metadata.json"
PROVENANCE = "provenance.json"
LOCK = ".lock"
MANIFEST_FORMAT = 1


class ResultsError(ValueError):
    """A results folder that is locked by another run, incomplete, or not one run's files."""


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def atomic_write_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def dumps(obj) -> str:
    """JSON as the project writes it: sorted keys, stable layout, a final newline."""
    return json.dumps(obj, sort_keys=True, indent=1) + "\n"


# ------------------------------------------------------------------ lock
try:
    import fcntl
except ImportError:  # Windows
    import msvcrt

    # Windows locks are mandatory: another process cannot read locked bytes. The lock is on one byte far
    # past the holder record, so a refused run can still read who holds the folder.
    _LOCK_OFFSET = 1 << 30

    def _lock(fd: int) -> None:
        """Lock ``fd`` exclusively without waiting; ``BlockingIOError`` when another process holds it."""
        os.lseek(fd, _LOCK_OFFSET, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError as e:
            if e.errno in (errno.EACCES, errno.EDEADLOCK):
                raise BlockingIOError(e.errno, e.strerror) from None
            raise

    def _unlock(fd: int) -> None:
        os.lseek(fd, _LOCK_OFFSET, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
else:
    def _lock(fd: int) -> None:
        """Lock ``fd`` exclusively without waiting; ``BlockingIOError`` when another process holds it."""
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


@contextmanager
def locked(out: Path) -> Iterator[None]:
    """Hold ``<out>/.lock`` exclusively for the block, or refuse naming the holder."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / LOCK
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            _lock(fd)
        except BlockingIOError:
            raise ResultsError(
                f"{out}: another run is writing into this folder ({_holder(path)}); "
                "wait for it to finish, or write elsewhere with --out"
            ) from None
        except OSError as e:
            raise ResultsError(f"{out}: cannot lock {path.name} ({e.strerror}); use another --out") from None
        holder = {"pid": os.getpid(), "host": socket.gethostname(), "command": " ".join(sys.argv)}
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)  # not os.pwrite: Windows has none
        os.write(fd, (json.dumps(holder) + "\n").encode())
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            _unlock(fd)
    finally:
        os.close(fd)


def _holder(path: Path) -> str:
    try:
        h = json.loads(path.read_text())
        return f"process {h['pid']} on {h['host']}: {h['command']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "holder not yet recorded"


# ------------------------------------------------------------------ manifest
def _rows(path: Path) -> int | None:
    if path.suffix != ".parquet":
        return None
    import pyarrow.parquet as pq

    return int(pq.read_metadata(path).num_rows)


def write_manifest(out: Path, files: Iterable[Path], key: str) -> Path:
    """Name every file of the complete run (size, sha256, rows) and its key; written last."""
    entries = {}
    for f in files:
        entries[f.name] = {"bytes": f.stat().st_size, "sha256": file_sha256(f), "rows": _rows(f)}
    path = out / MANIFEST
    atomic_write_text(path, dumps({"format": MANIFEST_FORMAT, "key": key, "files": entries}))
    return path


def check_folder(folder: Path | str, need: Iterable[str] = ("summary.parquet",)) -> dict:
    """The manifest of a complete, consistent results folder, or a ResultsError saying what is wrong."""
    folder = Path(folder)
    if folder.is_file():  # summary.parquet or games.parquet given for its folder
        raise ResultsError(f"{folder}: a file; give its results folder ({folder.parent})")
    if not folder.is_dir():
        raise ResultsError(f"{folder}: no such results folder; run `smersh-sim run SPEC` first")
    mpath = folder / MANIFEST
    if not mpath.is_file():
        if (folder / "summary.parquet").exists():
            raise ResultsError(
                f"{folder}: no {MANIFEST}, so its files are not known to be one complete run (a run stopped "
                "while writing them, or an older version wrote them); run the study again into this folder"
            )
        raise ResultsError(f"{folder}: no results here ({MANIFEST} missing); run `smersh-sim run SPEC` first")
    try:
        manifest = json.loads(mpath.read_text())
        files = manifest["files"]
        if manifest.get("format") != MANIFEST_FORMAT or not isinstance(files, dict) or not isinstance(manifest["key"], str):
            raise ValueError("unknown layout")
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as e:
        raise ResultsError(f"{mpath}: unreadable manifest ({e}); run the study again into this folder") from None
    for name in need:
        if name not in files:
            raise ResultsError(f"{folder / name}: not part of the run recorded in {mpath} (that run did not write it)")
    for name, entry in sorted(files.items()):
        path = folder / name
        why = None
        if not path.is_file():
            if name not in need:
                continue  # e.g. games.parquet, which is not committed: absent is not inconsistent
            raise ResultsError(_absent(folder, name))  # not kept here, which no other run's file explains
        elif path.stat().st_size != entry.get("bytes"):
            why = f"{path.stat().st_size} bytes, the manifest says {entry.get('bytes')}"
        elif file_sha256(path) != entry.get("sha256"):
            why = "its sha256 differs from the manifest's"
        if why:
            raise ResultsError(
                f"{path}: does not match {mpath} ({why}): the folder mixes files of different runs or a file "
                "was changed; run the study again into this folder"
            )
    return manifest


GAMES_FILE = "games.parquet"  # the per-game table: bulky, so .gitignore leaves it out of committed results


def _rerun_command(folder: Path) -> str:
    """``smersh-sim run experiments/player_count.toml --out results/player_count``: the command that writes the
    run again, its spec named by the file ``metadata.json`` records (under experiments/ where it is there)."""
    try:
        spec_file = json.loads((folder / METADATA).read_text()).get("spec_file")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        spec_file = None
    if not isinstance(spec_file, str) or not spec_file:
        spec = "SPEC"
    elif (Path("experiments") / spec_file).is_file():
        spec = f"experiments/{spec_file}"
    elif (Path(__file__).resolve().parent.parent / "experiments" / spec_file).is_file():
        spec = str(Path(__file__).resolve().parent.parent / "experiments" / spec_file)
    else:
        spec = f"SPEC (the spec file {spec_file})"
    return f"`smersh-sim run {spec} --out {folder}`"


def _absent(folder: Path, name: str) -> str:
    """Why a file the manifest lists, and the reader needs, is not in the folder, and how to write it."""
    again = _rerun_command(folder)
    if name == GAMES_FILE:
        return (f"{folder / name}: the per-game table is not in this folder: the run wrote it ({MANIFEST} lists it), "
                f"but {GAMES_FILE} is not committed with the results (.gitignore leaves the bulky per-game tables "
                f"out), so a clone has the summary and charts only; run the study again to write it: {again} (the "
                "same spec writes it again)")
    return (f"{folder / name}: not in this folder, though {MANIFEST} lists it as a file of the run (removed, or not "
            f"copied with the rest); run the study again to write it: {again}")


SENSITIVITY_FILE = "sensitivity.parquet"  # what `smersh-sim sensitivity --out` writes (sim.sensitivity)
TUNE_FILE = "tune.json"  # what `smersh-sim tune --out` writes (sim.tune)
TUNE_FIELDS = ("strategy", "params", "engine", "content_hash", "rules_version", "seed", "budget")
WHAT_IT_READS = (f"a `smersh-sim run` folder (with its {MANIFEST}), a `sensitivity --out` folder ({SENSITIVITY_FILE}), "
                 f"a `tune --out` folder ({TUNE_FILE}), or one of those files or a run's Parquet files")


def read_metadata(path: Path | str) -> dict:
    """A run's metadata as a dict, for any reader (pandas, polars, DuckDB, plain Python).

    ``path`` is a results folder of ``smersh-sim run`` (checked against its manifest; ``metadata.json``
    plus ``provenance`` from ``provenance.json`` when present) or one of its Parquet files (the key-value
    metadata, decoded). The output folder of ``smersh-sim sensitivity --out`` (no manifest) gives the
    metadata of its ``sensitivity.parquet``; that of ``smersh-sim tune --out`` the fields of its
    ``tune.json`` that say what its games were played with (:data:`TUNE_FIELDS`); either file may be
    given itself.
    """
    path = Path(path)
    if path.is_dir():
        if not (path / MANIFEST).exists() and not (path / "summary.parquet").exists():
            for name in (SENSITIVITY_FILE, TUNE_FILE):
                if (path / name).is_file():
                    return read_metadata(path / name)
            raise ResultsError(f"{path}: no results here that read_metadata knows; it reads {WHAT_IT_READS}")
        check_folder(path, need=(METADATA,))
        meta = json.loads((path / METADATA).read_text())
        prov = path / PROVENANCE
        if prov.is_file():
            try:
                meta["provenance"] = json.loads(prov.read_text())
            except (OSError, ValueError):
                pass  # provenance is informative only; the numbers' metadata is complete without it
        return meta
    if not path.is_file():
        raise ResultsError(f"{path}: no such folder or file; read_metadata reads {WHAT_IT_READS}")
    if path.suffix == ".json":
        return _tune_metadata(path)
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        raw = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowException) as e:
        raise ResultsError(f"{path}: not a readable Parquet file ({e})") from None
    return metadata_from_parquet(raw)


def _tune_metadata(path: Path) -> dict:
    """What a tune's games were played with, from its ``tune.json``."""
    try:
        record = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ResultsError(f"{path}: unreadable ({e})") from None
    missing = [k for k in TUNE_FIELDS if not isinstance(record, dict) or k not in record]
    if missing:
        raise ResultsError(f"{path}: not a {TUNE_FILE} of `smersh-sim tune --out` (no {', '.join(missing)}); "
                           f"read_metadata reads {WHAT_IT_READS}")
    # with what the seats played at each player count, where the file says it (tune.json of earlier code does not)
    return {k: record[k] for k in (*TUNE_FIELDS, "plays") if k in record}


# ------------------------------------------------------------------ metadata
JSON_FIELDS = ("spec", "content_hash", "strategy_params", "strategy_modules", "plays")


def parquet_metadata(meta: dict) -> dict[str, str]:
    """The metadata dict as Parquet key-value pairs (``smersh.<field>``, JSON for nested values)."""
    return {f"smersh.{k}": (json.dumps(v, sort_keys=True, separators=(",", ":")) if k in JSON_FIELDS else str(v))
            for k, v in meta.items()}


def metadata_from_parquet(raw: dict[bytes, bytes]) -> dict:
    out: dict = {}
    for k, v in raw.items():
        k = k.decode()
        if not k.startswith("smersh."):
            continue
        name = k[len("smersh."):]
        out[name] = json.loads(v) if name in JSON_FIELDS else v.decode()
    if "seed" in out:
        out["seed"] = int(out["seed"])
    if not out:
        raise ResultsError("no smersh metadata in this Parquet file: it was not written by `smersh-sim run`")
    return out
