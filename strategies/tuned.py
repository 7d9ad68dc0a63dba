"""``tuned``: the heuristic with the parameters chosen per player count by ``smersh-sim tune-strategy``.

The parameters are data, ``strategies/tuned.toml``: one table per player count, with the
rules version, content-pack hash, budget and seed they came from. ``tuned`` is a
:class:`~strategies.heuristic.HeuristicStrategy`, so the kernel plays it exactly.
"""

from __future__ import annotations

import copy
import functools
import tomllib
from pathlib import Path

from sim.text import count
from strategies.heuristic import HeuristicStrategy, check_param_names

TUNED_PATH = Path(__file__).resolve().parent / "tuned.toml"
DEFAULT_PATH = TUNED_PATH  # (TUNED_PATH may be pointed at another file, as tests do)
RETUNE = "re-run `smersh-sim tune-strategy` (see the README) to write it"


def file_digest(path: str | Path | None = None) -> str:
    """sha256 of the tuned file's bytes (by default :data:`TUNED_PATH`), or ``"missing"``: what a module strategy
    that builds ``tuned`` may read, besides its source."""
    import hashlib

    try:
        return hashlib.sha256(Path(TUNED_PATH if path is None else path).read_bytes()).hexdigest()
    except FileNotFoundError:
        return "missing"


class TunedError(ValueError):
    """strategies/tuned.toml is missing, malformed or has no set for a player count."""


def load_tuned(path: str | Path | None = None) -> dict:
    """The parsed tuned file: ``{"meta": {...}, "players": {"4": {"params": {...}, ...}}}``.

    Read on every call (parsed once per text), so an edited file is never played as its old text."""
    p = Path(TUNED_PATH if path is None else path)
    if not p.is_file():
        raise TunedError(f"{p.name}: file not found; {RETUNE}")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise TunedError(f"{p.name}: not UTF-8 text ({e}); {RETUNE}") from None
    return copy.deepcopy(_parse(p.name, text))


@functools.lru_cache(maxsize=8)
def _parse(name: str, text: str) -> dict:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise TunedError(f"{name}: malformed TOML ({e}); {RETUNE}") from None
    for key in ("meta", "players"):
        if not isinstance(raw.get(key), dict):
            raise TunedError(f"{name}: [{key}] table missing; {RETUNE}")
    for n, entry in raw["players"].items():
        if not isinstance(entry, dict) or not isinstance(entry.get("params"), dict):
            raise TunedError(f"{name}: players.{n}.params missing; {RETUNE}")
    return raw


def tuned_params(players: int, path: str | Path | None = None) -> dict:
    """The tuned parameter set for ``players`` (from ``path``, by default :data:`TUNED_PATH`)."""
    path = TUNED_PATH if path is None else path
    raw = load_tuned(path)
    entry = raw["players"].get(str(int(players)))
    if entry is None:
        have = ", ".join(sorted(raw["players"])) or "none"
        raise TunedError(f"{Path(path).name}: players.{players}: no parameter set for {count(players, 'player')} "
                         f"(tuned for: {have}); {RETUNE}")
    return dict(entry["params"])


def _check_file_params(params: dict, players: int, path: str | Path) -> None:
    """Refuse a parameter of the tuned file the heuristic does not take, or a set that lacks one, naming the file's
    key."""
    from dataclasses import fields

    from strategies.heuristic import HeuristicParams

    known = {f.name for f in fields(HeuristicParams)}
    for name, value in params.items():
        where = f"{Path(path).name}: players.{int(players)}.params.{name}"
        if name not in known:
            raise TunedError(f"{where}: not a heuristic parameter (known: {', '.join(sorted(known))}); {RETUNE}")
        try:
            HeuristicParams(**{name: value})
        except ValueError as e:
            raise TunedError(f"{where}: {e}; {RETUNE}") from None
    missing = sorted(known - set(params))
    if missing:  # the heuristic's default would play under the tuned label
        raise TunedError(f"{Path(path).name}: players.{int(players)}.params: {', '.join(missing)} missing (a tuned set "
                         f"gives every parameter; the heuristic's default would play in its place); {RETUNE}")


def check_players(players) -> None:
    """Refuse a seat count that is not an integer from 1 to 6 as ``sim.simulate`` does (a TypeError for another
    type, a bool included; a ValueError out of range), rather than play the set of a count converted from it."""
    from sim.content.constants import MAX_PLAYERS
    from sim.rules.errors import is_integer

    if not is_integer(players):
        raise TypeError(f"players must be an integer, got {type(players).__name__} {players!r}")
    if not 1 <= players <= MAX_PLAYERS:
        raise ValueError(f"players must be an integer from 1 to {MAX_PLAYERS}, got {players}")


def make_tuned(players: int | None = None, **params) -> HeuristicStrategy:
    """The ``tuned`` strategy for ``players`` seats (``params`` override single values).

    A bad value in the tuned file is a :class:`TunedError` naming the file's key
    (``tuned.toml: players.4.params.pool_target``); a bad value in ``params`` is the
    heuristic's own ValueError, and so is a parameter it does not take. ``players`` is an
    integer from 1 to 6 (a float, a string or a bool is refused, not converted to a count).
    """
    if players is None:
        raise ValueError("strategy 'tuned' has one parameter set per player count "
                         "(strategies/tuned.toml): give the player count (players=...)")
    check_players(players)
    check_param_names(params)
    path = TUNED_PATH  # read at each call: a test may point it at another file
    own = tuned_params(players, path)
    _check_file_params(own, players, path)
    return HeuristicStrategy(name="tuned", **{**own, **params})


def searched_on() -> dict:
    """What the tuned file's sets were searched for (its ``[meta]``): the content pack's hash and the rules
    version; always the standard game with the pack's default line-up (``tune-strategy`` plays no other)."""
    meta = load_tuned(TUNED_PATH)["meta"]
    source = "strategies/tuned.toml" if TUNED_PATH == DEFAULT_PATH else str(TUNED_PATH)
    return {"source": source, "pack_hash": meta.get("pack_hash"), "rules_version": meta.get("rules_version")}


# what sim.run.warn_searched_elsewhere asks of a registered strategy whose parameters were searched for one game
make_tuned.searched_on = searched_on
# what strategies.build asks of a dict of parameters that holds "players" (which the call would take for the
# seat count): the heuristic's refusal, naming the parameters it takes
make_tuned.check_params = check_param_names
