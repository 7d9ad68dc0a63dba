"""Read a TOML file into a pydantic model, turning every failure into (file, key, reason)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ValidationError


def _number(v):
    """A TOML integer or float as a float; a string ("0.02") or a boolean is refused, not converted."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"must be a number, got {type(v).__name__} {v!r}")
    return float(v)


# a float field that takes a number only (pydantic's float would take "0.02" and true)
Number = Annotated[float, BeforeValidator(_number)]


def load_toml_model(path: str | Path, model: type[BaseModel], error, kind: str, named_lists: tuple[str, ...] = ()):
    """Return (path, raw dict, validated model); raise ``error(file, key, reason)`` otherwise.

    In ``named_lists`` (arrays of tables with a ``name`` key) an entry is named by
    its ``name`` in the key, e.g. ``cell[3p-heuristic].win_rate``.
    """
    p = Path(path)
    if not p.exists():
        raise error(str(p), None, f"{kind} file not found")
    if not p.is_file():
        raise error(str(p), None, f"{kind} file expected, but this is a folder" if p.is_dir() else f"{kind} file expected, but this is not a regular file")
    try:
        raw = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise error(p.name, None, f"malformed TOML: {e}") from None
    except UnicodeDecodeError as e:
        raise error(p.name, None, f"not a UTF-8 text file (is it a TOML {kind} file?): {e.reason} at byte {e.start}") from None
    except OSError as e:
        raise error(str(p), None, f"cannot read the {kind} file: {e.strerror or e}") from None
    try:
        return p, raw, model.model_validate(raw)
    except ValidationError as e:
        err = e.errors()[0]
        loc = list(err["loc"])
        if len(loc) > 1 and loc[0] in named_lists and isinstance(loc[1], int):
            entries = raw.get(loc[0], [])
            if loc[1] < len(entries) and isinstance(entries[loc[1]], dict):
                loc[1] = f"[{entries[loc[1]].get('name', loc[1])}]"
        key = ".".join(str(x) for x in loc).replace(".[", "[")
        if not key.isprintable():  # a name with a NUL or newline: show it escaped, on one line
            key = key.encode("unicode_escape").decode("ascii")
        reason = "unknown key" if err["type"] == "extra_forbidden" else err["msg"].removeprefix("Value error, ")
        raise error(p.name, key, reason) from None
