"""Load a content pack folder into a frozen :class:`Content`.

``load(path)`` = ``build(load_raw(path), path)``:

* ``load_raw`` parses every pack file with ``tomllib`` (all must be present);
* ``build`` validates each file with its pydantic model (:mod:`sim.content.schema`),
  runs the checks that cross files, and turns the data into read-only arrays.

``build`` takes the parsed data as plain dicts so a caller may patch values
(experiment overrides) and rebuild; the content hash is taken over that data,
so a patched pack has its own hash.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import tomllib
from collections import deque
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from sim.content import constants as K
from sim.content.model import Content, ContentError
from sim.content.schema import (
    FILES,
    LOBO_TRACK_FIRST,
    LOBO_TRACK_LAST,
    MODELS,
    RANK_VALUES,
    SUITS,
    EntryValueError,
    q,
)

DEFAULT_PACK = Path(__file__).resolve().parent / "default"

# keys that identify an entry of an array of tables, tried in order
_LABEL_KEYS = ("id", "name", "players", "position", "effect", "city")


# ------------------------------------------------------------------ reading
def load_raw(path: str | Path | None = None) -> dict[str, dict]:
    """Parse every file of the pack at ``path`` (default pack when ``None``)."""
    folder = Path(DEFAULT_PACK if path is None else path)
    if not folder.is_dir():
        why = "is a file, not a folder" if folder.exists() else "does not exist"
        raise ContentError(None, None, f"content pack folder {str(folder)!r} {why}")
    raw: dict[str, dict] = {}
    for name in FILES:
        f = folder / name
        if not f.is_file():
            raise ContentError(name, None, f"file missing from content pack {str(folder)!r}")
        try:
            raw[name] = tomllib.loads(f.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as e:
            msg = str(e)
            m = re.search(r"at line (\d+), column (\d+)", msg)
            where = f"line {m.group(1)}, column {m.group(2)}" if m else None
            reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", msg) or msg
            raise ContentError(name, where, f"malformed TOML: {reason}") from None
        except UnicodeDecodeError as e:
            raise ContentError(name, None, f"not UTF-8 text: {e}") from None
    return raw


class UnprintedValueWarning(UserWarning):
    """A pack value the engine can play but the published game does not print (e.g. a 40-card villain deck)."""


# The box's component counts (Field Manual, Components) and Dr. Lobo's printed track
PRINTED = (
    ("villain.toml", "villain cards", "n_villain", 35),
    ("intel.toml", "yellow Intel tokens", "n_intel", 20),
    ("intel.toml", "UN Transport tokens", "n_un_transport", 8),
    ("intel.toml", "close-airport tokens", "n_close_airport_tokens", 24),
    ("intel.toml", f"tokens of each of the {len(K.ADVANCED_SKILLS)} advanced skills", "n_advanced_skill_tokens", 4),
    ("fate.toml", "Fate cards", "n_fate", 44),
    ("encounters.toml", "encounter cards", "n_encounters", 108),
    ("top_secret.toml", "Top Secret cards", "n_top_secret", 22),
    ("status.toml", "status cards", "n_status", 48),
    ("henchmen.toml", "henchmen (Location tokens)", "n_henchmen", 4),
    ("dice.toml", "dice", "n_dice", 6),
    ("characters.toml", "characters (Character Mats)", "n_characters", 5),
    ("lobo.toml", "the space where Dr. Lobo wins (loss)", "lobo_loss", LOBO_TRACK_LAST),
)

# The printed dice (Field Manual, Resolving Tests: Six Custom Dice; Reference Manual, 5 Dice Ratios):
# how many faces of each code a die prints. Yellow's six faces are all printed ("1 Success, 1 Injury,
# 1 Heal Injury and 3 Failures"), so every code is counted; the other dice print only the codes given
# (Black: "4 Successes" and "1 side that gives 2 Injuries"), their other faces are the pack's
# assumption. Yellow is the one die out of the bag ("It never goes into the draw bag").
PRINTED_DICE = {
    "yellow": {"S": 1, "I": 1, "II": 0, "H": 1, "-": 3},
    "black": {"S": 4, "II": 1},
    "red": {"S": 3},
    "green": {"S": 3, "I": 2},
    "blue": {"S": 2},
    "brown": {"S": 1},
}
PRINTED_OUT_OF_BAG = "yellow"
# The yellow Intel tokens by type (Reference Manual, 2 Components: "8 Weapon, 5 Tech, 4 Double Agent, 3 Atomic")
PRINTED_INTEL = {"weapon": 8, "tech": 5, "double_agent": 4, "atomic": 3}
# Field Manual, Additional Rules, Villain Advancement: "there are 2 cards that actually subtract 1"
PRINTED_MINUS_ONE = 2
# The names the rulebooks print (Field Manual, Game Set-Up and FAQ; Reference Manual, 2 Components), and what
# they print of them: Calli's UN gift and set-up exceptions (Field Manual, Set-Up By Number of Players; Hints
# And Tips 1), Rocko's smaller Resolve cut ("Except for Rocko", Variants: 5 Player Variant), one character
# starting with the Watch (Additional Rules, Villain Advancement) and what the Watch does, and the third
# persons Corduroy Blu and The Small Man (FAQ 2)
PRINTED_CHARACTERS = ("Calli Dagger", "Rocko Jurgen", "Dexter Kane", "Nika Shizuka")
PRINTED_GIVES_UN = "Calli Dagger"  # the one character with gives_un
PRINTED_REDUCED_CUT = "Rocko Jurgen"  # the one character with reduced_resolve_cut
PRINTED_WATCH = "Watch"  # the status card one character starts with
PRINTED_WATCH_HOLDERS = 1
PRINTED_HENCHMEN = ("Darling", "Mr. Big", "Fedor", "Pierre")
PRINTED_STATUS = ("Watch", "9 Lives", "Probed by Aliens", "Revoked", "Cool Agent", "The Small Man", "Corduroy Blu")
PRINTED_STATUS_EFFECT = {"Watch": "watch"}
PRINTED_THIRD_PERSONS = ("Corduroy Blu", "The Small Man")

NO_CAP = 99  # giver_choice_max_un: no cap on the UN Transports of a choice
NOT_PRINTED = ...  # a player count the rulebook prints no value for (no warning there)

# The set-up values the rulebook prints, for 1..6 players (docs/RULES.md, "Set-up by number of
# players", names the text each comes from): Field Manual, Set-Up By Number of Players (1 and 2
# players; 3-4 players: "no tokens and no special instructions"), 3 Villain Phase (Intel Overflow:
# 1-3 players 5, 4+ players 4), the Secret Mission reward (2 Resolve solo), 1.1 Rest Action (solo:
# the Blue die), Variants (5 players: Resolve -1, Rocko's unchanged, "all other rules are the same
# as if you are playing a 4-player game"; 6 players: -2, Rocko's -1; For An Easier Game); the
# Location targets: Reference Manual (5 for 3-5 players, 4 for 2, 3 for 1), none for 6 players.
PRINTED_SETUP = {
    "board_intel": (3, 2, 0, 0, 0, 0),
    "extra_un": (0, 2, 0, 0, 0, 0),
    "extra_top_secret": (0, 0, 0, 0, 0, 0),
    "extra_choice": (3, 0, 0, 0, 0, 0),
    "giver_extra_un": (0, 1, 0, 0, 0, 0),
    "giver_extra_top_secret": (0, 1, 0, 0, 0, 0),
    "giver_choice_max_un": (1, NO_CAP, NO_CAP, NO_CAP, NO_CAP, NO_CAP),
    "henchmen_level2": (2, 1, 0, 0, 0, 0),
    "remove_injury_cards": (True, True, False, False, False, False),
    "remove_minus_one": (True, True, False, False, False, False),
    "remove_random_plus_one": (3, 0, 0, 0, 0, 0),
    "resolve_cut": (0, 0, 0, 0, 1, 2),
    "resolve_cut_reduced": (0, 0, 0, 0, 0, 1),
    "location_target": (3, 4, 5, 5, 5, NOT_PRINTED),
    "overflow_limit": (5, 5, 5, 4, 4, 4),
    "mission_resolve": (2, 1, 1, 1, 1, 1),
    "rest_roll_die": ("blue", None, None, None, None, None),
    "easier_extra_choice": (0, 0, 1, 1, 1, NOT_PRINTED),
    "easier_extra_top_secret": (0, 1, 0, 0, 0, 0),
    "easier_henchmen_level1": (True, False, False, False, False, False),
}
PRINTED_LOBO_START = 0  # Dr. Lobo's pawn on "Start" (lobo.toml's track.start, a player count's lobo_start)
PRINTED_VARIANTS = {"dirty_lobo_start": 2, "dirty_location_delta": 1}  # Variants: For A Real Challenge


class _Said(str):
    """A printed value said in words (``4 "S" among its faces``), shown as it is."""


def _show(field: str | None, v) -> str:
    """A pack value as its file writes it."""
    if isinstance(v, _Said):
        return str(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_show(None, x) for x in v) + "]"
    if v is None:
        return "none (omitted)"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    if field == "giver_choice_max_un" and v == NO_CAP:
        return f"{v} (no cap)"
    return str(v)


@dataclass(frozen=True)
class Unprinted:
    """One legal pack value the printed game does not have: a field of ``entry`` (setup.toml's row or
    table, lobo.toml's track, a die, a character, ...), a component count of ``file`` (``field`` None,
    ``what`` counted), or a printed entry the pack lacks (``field`` and ``value`` None, ``what`` named)."""

    file: str
    entry: str | None
    field: str | None
    what: str
    value: object
    printed: object

    def phrase(self, values) -> str:
        if self.field is None and self.value is None:
            return f"no {self.what}"
        shown = ", ".join(_show(self.field, v) for v in values)
        return f"{self.field} = {shown}" if self.field else f"{shown} {self.what}"

    @property
    def text(self) -> str:
        head = f"{self.file}: {self.entry}" if self.entry else self.file
        if self.field is None and self.what.startswith("tokens of each"):  # a count per skill: the totals too
            n = len(K.ADVANCED_SKILLS)
            return (f"{head}: {self.value} {self.what} ({self.value * n} in all); the printed game has {self.printed} "
                    f"of each, {self.printed * n} in all (legal, but not the published game)")
        return (f"{head}: {self.phrase([self.value])}; the printed game has {_show(self.field, self.printed)} "
                "(legal, but not the published game)")


def _setup_value(c: Content, field: str, players: int):
    if field == "rest_roll_die":
        d = int(c.setup_rest_roll_die[players])
        return None if d < 0 else c.die_names[d]
    a = getattr(c, field if field.startswith("easier_") else "setup_" + field)
    return bool(a[players]) if a.dtype == np.bool_ else int(a[players])


def _named(names, name: str) -> int | None:
    """The index of ``name`` in ``names`` (case aside), or None."""
    folded = [n.casefold() for n in names]
    return folded.index(name.casefold()) if name.casefold() in folded else None


def _missing(file: str, kind: str, names, printed) -> list[Unprinted]:
    """A printed entry (die, character, ...) the pack does not have, by name."""
    return [Unprinted(file, None, None, f"{kind} {q(n)}", None, _Said("one")) for n in printed if _named(names, n) is None]


def _faces(c: Content, d: int) -> list[str]:
    """The faces of die ``d`` as dice.toml writes them."""
    out = []
    for s, i, h in zip(c.die_success[d], c.die_injury[d], c.die_heal[d], strict=True):
        out.append("S" if s else "II" if i == 2 else "I" if i else "H" if h else "-")
    return out


def _printed_faces(counts: dict) -> object:
    """A printed die: its faces when all six are printed, else the faces it prints, in words."""
    if sum(counts.values()) == 6:
        return [f for f in K.FACE_CODES for _ in range(counts.get(f, 0))]
    said = " and ".join(f"{n} {json.dumps(f)}" for f, n in counts.items())
    return _Said(f"{said} among its faces")


def _minus_one(c: Content) -> int:
    return int(np.count_nonzero((c.villain_advance == -1) & ~c.villain_injury))


def _component_values(c: Content) -> list[Unprinted]:
    """The printed values of the pack's components beyond their counts: the dice, the Intel mix, the -1
    villain cards, the printed characters, henchmen and status cards and what the rulebooks say of them."""
    out = _missing("dice.toml", "die", c.die_names, PRINTED_DICE)
    for name, counts in PRINTED_DICE.items():
        d = _named(c.die_names, name)
        if d is None:
            continue
        entry, faces = f"die {q(c.die_names[d])}", _faces(c, d)
        if any(faces.count(f) != n for f, n in counts.items()):
            out.append(Unprinted("dice.toml", entry, "faces", "faces", faces, _printed_faces(counts)))
        in_bag, printed_in_bag = d != int(c.always_die), name != PRINTED_OUT_OF_BAG
        if in_bag != printed_in_bag:
            out.append(Unprinted("dice.toml", entry, "in_bag", "in_bag", in_bag, printed_in_bag))
    mix = np.bincount(c.intel_token_type, minlength=len(K.INTEL_TYPES))
    for code, t in enumerate(K.INTEL_TYPES):
        if int(mix[code]) != PRINTED_INTEL[t]:
            out.append(Unprinted("intel.toml", "tokens", t, t, int(mix[code]), PRINTED_INTEL[t]))
    if _minus_one(c) != PRINTED_MINUS_ONE:
        out.append(Unprinted("villain.toml", "composition", "minus_one", "minus_one", _minus_one(c),
                             PRINTED_MINUS_ONE))
    out += _missing("henchmen.toml", "henchman", c.henchman_names, PRINTED_HENCHMEN)
    out += _missing("characters.toml", "character", c.character_names, PRINTED_CHARACTERS)
    for ch, name in enumerate(c.character_names):
        if name.casefold() not in {n.casefold() for n in PRINTED_CHARACTERS}:  # a mat the rulebooks do not print
            continue
        for field, holder, flags in (("gives_un", PRINTED_GIVES_UN, c.character_gives_un),
                                     ("reduced_resolve_cut", PRINTED_REDUCED_CUT, c.character_reduced_resolve_cut)):
            printed = name.casefold() == holder.casefold()
            if bool(flags[ch]) != printed:
                out.append(Unprinted("characters.toml", f"character {q(name)}", field, field, bool(flags[ch]), printed))
    out += _missing("status.toml", "status card", c.status_names, PRINTED_STATUS)
    watch = _named(c.status_names, PRINTED_WATCH)
    if watch is not None:
        holders = sum(1 for row in c.character_start_status if watch in row)
        if holders != PRINTED_WATCH_HOLDERS:
            out.append(Unprinted("characters.toml", None, None, f"characters starting with the {PRINTED_WATCH}",
                                 holders, PRINTED_WATCH_HOLDERS))
    for name, effect in PRINTED_STATUS_EFFECT.items():
        k = _named(c.status_names, name)
        if k is not None and K.STATUS_EFFECTS[int(c.status_effect[k])] != effect:
            out.append(Unprinted("status.toml", f"status {q(c.status_ids[k])}", "effect", "effect",
                                 K.STATUS_EFFECTS[int(c.status_effect[k])], effect))
    for name in PRINTED_THIRD_PERSONS:
        k = _named(c.status_names, name)
        if k is not None and K.STATUS_POLARITIES[int(c.status_polarity[k])] != "third_person":
            out.append(Unprinted("status.toml", f"status {q(c.status_ids[k])}", "polarity", "polarity",
                                 K.STATUS_POLARITIES[int(c.status_polarity[k])], "third_person"))
    return out


def unprinted_values(c: Content) -> list[Unprinted]:
    """The pack's values that are legal but differ from the printed game: the component counts and the
    printed values of the components (:func:`_component_values`), Dr. Lobo's start, each player count's
    set-up values (where the rulebook prints one) and the variants'."""
    out = []
    for file, what, attr, printed in PRINTED:
        value = len(c.top_secret_effect) if attr == "n_top_secret" else int(getattr(c, attr))
        if value != printed:
            out.append(Unprinted(file, None, None, what, value, printed))
    out += _component_values(c)
    if int(c.lobo_start) != PRINTED_LOBO_START:
        out.append(Unprinted("lobo.toml", "track", "start", "Dr. Lobo's start", int(c.lobo_start), PRINTED_LOBO_START))
    for p in range(1, K.MAX_PLAYERS + 1):
        entry = f"player_count {p}"
        own = c.by_players.get(p)
        if own is not None and own.lobo_start != c.lobo_start and own.lobo_start != PRINTED_LOBO_START:
            out.append(Unprinted("setup.toml", entry, "lobo_start", "Dr. Lobo's start", int(own.lobo_start),
                                 PRINTED_LOBO_START))
        if own is not None and _minus_one(own) != _minus_one(c) and _minus_one(own) != PRINTED_MINUS_ONE:
            out.append(Unprinted("setup.toml", entry, "villain_counts.minus_one", "villain_counts.minus_one",
                                 _minus_one(own), PRINTED_MINUS_ONE))
        for field, printed in PRINTED_SETUP.items():
            value = _setup_value(c, field, p)
            if printed[p - 1] is not NOT_PRINTED and value != printed[p - 1]:
                out.append(Unprinted("setup.toml", entry, field, field, value, printed[p - 1]))
    for field, printed in PRINTED_VARIANTS.items():
        value = int(getattr(c, field))
        if value != printed:
            out.append(Unprinted("setup.toml", "variants", field, field, value, printed))
    return out


def unprinted(c: Content) -> list[str]:
    """The pack's values that are legal but differ from the printed game, one sentence each."""
    return [u.text for u in unprinted_values(c)]


_COLLECTING: ContextVar[list | None] = ContextVar("unprinted_collecting", default=None)


@contextmanager
def collecting_unprinted(into: list):
    """Within it, a pack loaded adds its unprinted values (:class:`Unprinted`) to ``into`` instead of
    warning: a command that plays many packs (tune's settings, sensitivity's steps) says them once, with
    :func:`warn_unprinted_summary`, instead of one warning for each value of a swept knob."""
    token = _COLLECTING.set(into)
    try:
        yield into
    finally:
        _COLLECTING.reset(token)


def unprinted_summary(values: list[Unprinted], where: str) -> list[str]:
    """``values`` (of several packs) as one line for each file and entry: a field's values together
    (``setup.toml: player_count 4, in sensitivity's steps: location_target = 4, 6 (printed: 5);
    ...``); a file and entry with a single value is said as the pack itself says it."""
    groups: dict[tuple, dict[tuple, tuple[Unprinted, list]]] = {}
    for u in values:
        fields = groups.setdefault((u.file, u.entry), {})
        _, seen = fields.setdefault((u.field, u.what), (u, []))
        if u.value not in seen:
            seen.append(u.value)
    lines = []
    for (file, entry), fields in groups.items():
        if len(fields) == 1 and len(next(iter(fields.values()))[1]) == 1:
            lines.append(next(iter(fields.values()))[0].text)
            continue
        parts = []
        for u, seen in fields.values():
            try:
                seen = sorted(seen)
            except TypeError:  # a die name and none
                pass
            parts.append(f"{u.phrase(seen)} (printed: {_show(u.field, u.printed)})")
        head = f"{file}: {entry}" if entry else file
        lines.append(f"{head}, in {where}: {'; '.join(parts)}; legal, but not the published game")
    return lines


def warn_unprinted_summary(values: list[Unprinted], where: str, known=()) -> None:
    """Warn (UnprintedValueWarning) once for each line of :func:`unprinted_summary`, leaving out the values
    whose sentence is in ``known`` (those of the unchanged pack, which warns on its own)."""
    import warnings

    known = set(known)
    for line in unprinted_summary([u for u in values if u.text not in known], where):
        warnings.warn(UnprintedValueWarning(line), stacklevel=2)


def warn_unprinted(c: Content) -> Content:
    """Warn (UnprintedValueWarning) about each unprinted value of ``c`` (or, inside :func:`collecting_unprinted`,
    add them to its list); return ``c``."""
    import warnings

    values = unprinted_values(c)
    into = _COLLECTING.get()
    if into is not None:
        into.extend(values)
        return c
    for u in values:
        warnings.warn(UnprintedValueWarning(u.text), stacklevel=3)
    return c


def load(path: str | Path | None = None) -> Content:
    """Load and validate the content pack at ``path`` (default pack when ``None``).

    A legal value the printed game does not have is loaded with an UnprintedValueWarning.
    """
    folder = Path(DEFAULT_PACK if path is None else path)
    return warn_unprinted(build(load_raw(folder), folder))


def content_hash(raw: dict[str, dict]) -> str:
    """sha256 over the parsed data of all files (comments and layout do not count)."""
    h = hashlib.sha256()
    for name in sorted(raw):
        h.update(name.encode())
        h.update(b"\0")
        h.update(json.dumps(raw[name], sort_keys=True, separators=(",", ":"), default=str).encode())
        h.update(b"\0")
    return h.hexdigest()


# ------------------------------------------------------------------ errors
def _label(collection: str, item, idx: int) -> str:
    if isinstance(item, dict):
        for key in _LABEL_KEYS:
            v = item.get(key)
            if isinstance(v, (str, int)) and not isinstance(v, bool):
                return f"{collection} {q(v)}"
    return f"{collection} #{idx + 1}"


def _fmt_path(parts, node) -> str:
    """``level 1.options #2.skill``: list items by their level/label or 1-based number."""
    out: list[str] = []
    for p in parts:
        if isinstance(p, int):
            item = node[p] if isinstance(node, list) and p < len(node) else None
            if isinstance(item, dict) and isinstance(item.get("level"), int):
                out[-1:] = [f"{out[-1] if out else ''} {item['level']}".strip()]
            else:
                out[-1:] = [f"{out[-1] if out else ''} #{p + 1}".strip()]
            node = item
        else:
            out.append(str(p))
            node = node.get(p) if isinstance(node, dict) else None
    return ".".join(out)


def _pydantic_error(file: str, data: dict, exc: ValidationError) -> ContentError:
    errors = exc.errors(include_url=False)
    err = errors[0]
    loc = tuple(err["loc"])
    msg = err["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
    more = f" (and {len(errors) - 1} more error(s) in this file)" if len(errors) > 1 else ""
    cause = (err.get("ctx") or {}).get("error")
    if isinstance(cause, EntryValueError):
        return ContentError(file, cause.entry, cause.reason + more)
    if not loc:
        return ContentError(file, "file", msg + more)
    head, rest = loc[0], loc[1:]
    top = data.get(head) if isinstance(data, dict) else None
    node = top
    if isinstance(top, list) and rest and isinstance(rest[0], int):
        idx = rest[0]
        node = top[idx] if idx < len(top) else None
        entry = _label(str(head), node, idx)
        rest = rest[1:]
    else:
        entry = str(head)
    if err["type"] == "extra_forbidden":
        msg = "unknown key (not allowed here)"
    if rest:
        msg = f"{_fmt_path(rest, node)}: {msg}"
    return ContentError(file, entry, msg + more)


# ------------------------------------------------------------------ helpers
def _ro(a) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


def _i64(x) -> np.ndarray:
    return _ro(np.asarray(x, dtype=np.int64))


def _b(x) -> np.ndarray:
    return _ro(np.asarray(x, dtype=np.bool_))


def _assumed(raw: dict[str, dict]) -> tuple[str, ...]:
    out = []
    for file in sorted(raw):
        for key, v in raw[file].items():
            if key == "meta":
                continue
            items = [(key, v)] if isinstance(v, dict) else []
            if isinstance(v, list):
                items = [(_label(key, x, i), x) for i, x in enumerate(v) if isinstance(x, dict)]
            for label, x in items:
                a = x.get("assumed")
                if a is True:
                    out.append(f"{file}:{label}")
                elif isinstance(a, list) and a:
                    out.append(f"{file}:{label} ({', '.join(map(str, a))})")
    return tuple(sorted(out))


def _effect_skill(eff, status_ids=()) -> int:
    """The argument code of an effect: advanced skill (named_advanced_skill), basic skill
    (up/lower_skill), status card kind (status: its index in status.toml) or -1."""
    if eff.effect == "status":
        return status_ids.index(eff.card)
    if eff.effect == "named_advanced_skill":
        return K.ADVANCED_SKILLS.index(eff.skill)
    if eff.effect in ("up_skill", "lower_skill"):
        return K.BASIC_SKILLS.index(eff.skill)
    return -1


# ------------------------------------------------------------------ Fate deck
# Field Manual, Set-up 3 "Secret Mission": each player holds 2 Fate cards under the mat; a new
# pair is drawn when both are done (after the old pair is discarded). Every other city draw (board
# Intel at set-up, the Location token of an exchange, 2.2.3) is drawn and discarded at once.
MISSION_CARDS = 2
# "Gamble Actions": 5 cards to the player, up to 5 redrawn for 1 Resolve, then 5 to the House,
# all from one deck (docs/RULES.md "Gamble": a freshly shuffled copy of the whole Fate deck).
POKER_HAND = 5


def fate_cards_needed(gamble_sides: int, players: int = K.MAX_PLAYERS) -> tuple[int, str]:
    """The fewest Fate cards a ``players``-player game can be played with, and why (one sentence).

    Secret missions hold ``2 * players`` cards out of the deck while one more city is drawn;
    a Gamble (when some encounter side offers one) deals 5 + 5 + 5 cards from one deck.
    """
    cities = MISSION_CARDS * players + 1
    gamble = 2 * POKER_HAND + K.RESOLVE_EXCHANGE if gamble_sides else 0
    why_cities = (f"{players} players hold {MISSION_CARDS * players} as secret missions while one more is "
                  "drawn for a city (board Intel, the Location token of an exchange)")
    why_gamble = (f"a Gamble ({gamble_sides} sides of encounters.toml offer one) deals {POKER_HAND} cards to "
                  f"the player, up to {K.RESOLVE_EXCHANGE} more in the exchange for 1 Resolve and {POKER_HAND} "
                  "to the House, all from one deck")
    if gamble > cities:
        return gamble, why_gamble
    return cities, why_cities


# ------------------------------------------------------------------ per player count
PER_PLAYER_KEYS = ("lobo_start", "villain_counts")


def _per_player_overrides(setup, loss: int) -> dict[int, dict]:
    """Each player count's own Dr. Lobo start and villain mix, as pack overrides (checked on the track)."""
    out = {}
    for row in setup.player_count:
        ov = {}
        if row.lobo_start is not None:
            if not LOBO_TRACK_FIRST <= row.lobo_start < loss:
                raise ContentError(
                    "setup.toml", f"player_count {row.players}",
                    f"lobo_start = {row.lobo_start} is off the printed track: Dr. Lobo starts on "
                    f"{LOBO_TRACK_FIRST}..{loss - 1} (printed track {LOBO_TRACK_FIRST}..{LOBO_TRACK_LAST}, "
                    f"below lobo.toml's loss = {loss})")
            ov["lobo.track.start"] = row.lobo_start
        if row.villain_counts is not None:
            counts = {k: v for k, v in row.villain_counts.model_dump().items() if v is not None}
            if counts:
                ov["villain.counts"] = counts
        if ov:
            out[row.players] = ov
    return out


def _derived(raw: dict, overrides: dict, path, players: int) -> Content:
    """The plain pack a ``players``-player game plays (the per-player values applied, then dropped)."""
    from sim.content.overrides import OverrideError, apply_overrides

    try:
        patched = apply_overrides(raw, overrides)
    except OverrideError as e:
        raise ContentError("setup.toml", f"player_count {players}", str(e)) from None
    for row in patched["setup.toml"]["player_count"]:
        for k in PER_PLAYER_KEYS:
            row.pop(k, None)
    try:
        return build(patched, path, _players=players)
    except ContentError as e:
        raise ContentError("setup.toml", f"player_count {players}", f"its lobo_start / villain_counts: {e}") from None


# ------------------------------------------------------------------ Location target
def location_advances(n_henchmen: int, level2: int) -> int:
    """The most times the Location Track can advance in one game.

    It advances only on a passed henchman test at a green Location token (Field Manual 2.3;
    a test inside an encounter card levels the henchman up without moving it, FAQ 6), and a
    pass levels the henchman up, or at level 3 defeats him and takes his token out of the game.
    Henchman levels never go down, so each henchman is passed at a token at most once per
    level from his start to level 3: 3 times from level 1, twice from level 2.
    """
    return n_henchmen * K.HENCHMAN_LEVELS - level2


def _check_location_target(row, n_henchmen: int, delta: int) -> None:
    """Refuse a Location target (with the dirty-location variant's ``delta`` added) that the Location
    Track can never reach at ``row``'s player count: only the henchmen win would be left."""
    p, target, k = row.players, row.location_target, row.henchmen_level2
    most = location_advances(n_henchmen, k)
    if target <= most and target + delta <= most:
        return
    how = (f"only a passed henchman test at a Location token moves it, once for each level a henchman is passed "
           f"at, from his start to level {K.HENCHMAN_LEVELS}: henchmen.toml's {n_henchmen} henchmen x "
           f"{K.HENCHMAN_LEVELS} levels" + (f", less 1 for each of the henchmen_level2 = {k} starting at level 2"
                                            if k else ""))
    if target > most:
        what, where = f"location_target = {target}", ""
    else:
        what = (f"location_target = {target} with variants.dirty_location_delta = {delta} makes the dirty-location "
                f"variant's target {target + delta}")
        where = " in that variant"
    raise ContentError("setup.toml", f"player_count {p}",
                       f"{what}, but the Location Track can advance at most {most} times in a {p}-player game, so "
                       f"the Location win could never happen{where} ({how})")


# ------------------------------------------------------------------ villain deck
def _check_villain_deck(vil, row, start: int, loss: int) -> None:
    """Refuse a villain deck that the set-up removals of ``row`` leave unable to serve the game.

    Every villain card drawn goes back to the discard pile (an End of Turn event, an Injury
    card, a cancelled or V-1'd advancement) except an advancement laid next to Dr. Lobo, and
    the discard pile is shuffled into a new deck when the deck runs out (Field Manual, Villain
    phase; docs/RULES.md). So the deck and its discard pile can only both run out with every
    card lying next to Dr. Lobo: impossible while an Injury card is left in the deck, and
    impossible when the cards add up to Dr. Lobo's loss from his lowest start (laying the last
    one down ends the game). Otherwise the game stops at a draw the rules cannot make.
    """
    p = row.players
    kept = [c for c in vil.card
            if not (row.remove_injury_cards and c.injury) and not (row.remove_minus_one and c.category == "minus_one")]
    plus_one = sum(1 for c in kept if c.category == "plus_one")
    n_random = min(row.remove_random_plus_one, plus_one)  # more is refused with the row's own message
    n = len(kept) - n_random
    if any(c.injury for c in kept):
        return
    total = sum(c.advance for c in kept) - n_random
    if start + total >= loss:
        return
    removals = [f"{k} = {'true' if v is True else v}" for k, v in (
        ("remove_injury_cards", row.remove_injury_cards), ("remove_minus_one", row.remove_minus_one),
        ("remove_random_plus_one", row.remove_random_plus_one)) if v]
    left = (f"has {n} card{'s' if n != 1 else ''}, no Injury card and advancement {total:+d} in all: from {start} "
            f"Dr. Lobo never reaches {loss}, so the deck and its discard pile run out once every card lies next to "
            "him") if n else "has no card: the first villain card drawn cannot be"
    raise ContentError(
        "villain.toml", "composition",
        f"at {p} player{'s' if p != 1 else ''} the deck left after the set-up removals (setup.toml player_count {p}: "
        f"{', '.join(removals) or 'none'}) {left} (the deck needs an Injury card, which always goes back to the "
        f"discard pile, or advancements adding up to at least {loss - start})")


# ------------------------------------------------------------------ set-up supplies
def _setup_seat(c: Content, players: int, ch: int) -> tuple:
    """What one seat of character ``ch`` takes at set-up: (name, start_un, UN field, its value, TS field, its value)."""
    giver = bool(c.character_gives_un[ch])
    un_field = "giver_extra_un" if giver else "extra_un"
    ts_field = "giver_extra_top_secret" if giver else "extra_top_secret"
    return (c.character_names[ch], int(c.character_start_un[ch]), un_field,
            int(getattr(c, "setup_" + un_field)[players]), ts_field, int(getattr(c, "setup_" + ts_field)[players]))


def _worst_lineup(c: Content, players: int, need) -> list[int]:
    """The line-up that takes the most by ``need(seat)``, with distinct characters while they last."""
    order = sorted(range(c.n_characters), key=lambda ch: (-need(_setup_seat(c, players, ch)), ch))
    return [order[i % len(order)] for i in range(players)]


def _seats_text(seats: list[tuple], term) -> str:
    """``"2 seats of start_un 0 + extra_un 5, 1 seat of ..."``: the seats grouped by what they take."""
    groups: dict[str, int] = {}
    for seat in seats:
        groups[term(seat)] = groups.get(term(seat), 0) + 1
    return ", ".join(f"{n} seat{'s' if n != 1 else ''} of {t}" for t, n in groups.items())


def check_setup_supplies(c: Content, players: int, lineup=None) -> None:
    """Refuse a set-up that hands out more UN Transport tokens or Top Secret cards than the pack holds.

    The engines give a token or card while one is left and skip the rest, so a count beyond
    the components would be played as a smaller one. A seat takes its character's start_un
    plus the row's extra_un / extra_top_secret (giver_extra_* for a character with gives_un);
    the easier variant adds easier_extra_top_secret. A choice (extra_choice, easier_extra_choice)
    may be split between the two kinds, so it is checked against both supplies together.
    ``lineup`` (character indices): that line-up; ``None``: for every line-up of distinct
    characters while they last (the default and random line-ups), the one that takes the most.
    Raises ContentError naming setup.toml's row for ``players`` and the field at fault.
    """
    p = int(players)
    entry = f"player_count {p}"
    n_un, n_ts = int(c.n_un_transport), len(c.top_secret_effect)
    easier_ts, choice, easier_choice = (int(c.easier_extra_top_secret[p]), int(c.setup_extra_choice[p]),
                                        int(c.easier_extra_choice[p]))

    def seats_for(need) -> list[tuple]:
        chars = _worst_lineup(c, p, need) if lineup is None else [int(x) for x in lineup]
        return sorted((_setup_seat(c, p, ch) for ch in chars), key=lambda s: -need(s))

    who = (f"{p} player{'s' if p != 1 else ''}" if lineup is None
           else "the line-up " + ", ".join(repr(c.character_names[int(ch)]) for ch in lineup))
    un = seats_for(lambda s: s[1] + s[3])
    total = sum(s[1] + s[3] for s in un)
    if total > n_un:
        name, start, field, extra = un[0][:4]
        at_fault = f"{field} = {extra}" if extra else f"start_un = {start} of {name!r} (characters.toml)"
        raise ContentError(
            "setup.toml", entry,
            f"{at_fault}: {who} would take {total} UN Transport tokens at set-up "
            f"({_seats_text(un, lambda s: f'start_un {s[1]} (characters.toml) + {s[2]} {s[3]}')}), "
            f"but intel.toml has {n_un}")
    ts = seats_for(lambda s: s[5])
    for easier in (0, 1):
        total = sum(s[5] + easier * easier_ts for s in ts)
        if total > n_ts:
            field, value = ("easier_extra_top_secret", easier_ts) if easier else (ts[0][4], ts[0][5])
            more = f" + easier_extra_top_secret {easier_ts}" if easier else ""
            terms = _seats_text(ts, lambda s, more=more: f"{s[4]} {s[5]}{more}")
            raise ContentError(
                "setup.toml", entry,
                f"{field} = {value}: {who} would take {total} Top Secret cards at set-up"
                f"{' in the easier variant' if easier else ''} ({terms}), but top_secret.toml has {n_ts}")
    both = seats_for(lambda s: s[1] + s[3] + s[5])
    fixed = sum(s[1] + s[3] + s[5] for s in both)
    for easier, field, value, more in ((0, "extra_choice", choice, choice),
                                       (1, "easier_extra_choice", easier_choice, choice + easier_ts + easier_choice)):
        total = fixed + p * more
        if total > n_un + n_ts:
            raise ContentError(
                "setup.toml", entry,
                f"{field} = {value}: {who} would take {total} UN Transport tokens and Top Secret cards together at "
                f"set-up{' in the easier variant' if easier else ''} ({fixed} given outright, {more} a seat "
                f"{'from the choices and easier_extra_top_secret' if easier else 'to choose'}), but the pack has "
                f"{n_un + n_ts} (intel.toml {n_un} UN Transport tokens, top_secret.toml {n_ts} cards)")


# ------------------------------------------------------------------ build
def build(raw: dict, path: str | Path | None = None, *, _players: int | None = None) -> Content:
    """Validate parsed pack data (``{file name: parsed TOML}``) and build a Content.

    ``_players`` (internal): the pack is one player count's variant (its own Dr. Lobo start or
    villain mix, see ``_derived``); the checks that depend on them look at that count only.
    """
    for name in FILES:
        if name not in raw:
            raise ContentError(name, None, "file missing from content pack data")
        if not isinstance(raw[name], dict):
            raise ContentError(name, None, "file data must be a table")
    raw = copy.deepcopy({name: raw[name] for name in FILES})
    m = {}
    for name in FILES:
        try:
            m[name] = MODELS[name].model_validate(raw[name])
        except ValidationError as e:
            raise _pydantic_error(name, raw[name], e) from None

    dice, intel, vil = m["dice.toml"], m["intel.toml"], m["villain.toml"]
    lobo, hench, chars = m["lobo.toml"], m["henchmen.toml"], m["characters.toml"]
    setup, ts, enc = m["setup.toml"], m["top_secret.toml"], m["encounters.toml"]
    fate, mp = m["fate.toml"], m["map.toml"]
    status = m["status.toml"]

    # ---------------------------------------------------------------- status cards
    status_ids = tuple(c.id for c in status.status)
    status_type = []
    for i, c in enumerate(status.status):
        status_type += [i] * c.copies

    def status_ref(file: str, entry: str, field: str, eff) -> None:
        if eff.effect == "status" and eff.card not in status_ids:
            raise ContentError(file, entry, f"{field}.card names unknown status card {eff.card!r} "
                                            f"(status.toml has {', '.join(map(repr, status_ids))})")

    # ---------------------------------------------------------------- map
    space_names = tuple(mp.space_names())
    sidx = {n: i for i, n in enumerate(space_names)}
    n = len(space_names)
    n_city = len(mp.city)
    kind = [K.CITY] * n_city + [K.OCEAN] * len(mp.ocean) + [K.REGIONAL] * len(mp.regional)
    deck = (
        [K.DECKS.index(c.continent) for c in mp.city]
        + [K.OCEAN_DECK] * len(mp.ocean)
        + [K.DECKS.index(r.continent) for r in mp.regional]
    )
    ussr = [c.ussr for c in mp.city] + [False] * len(mp.ocean) + [r.ussr for r in mp.regional]
    airport = [c.airport for c in mp.city] + [False] * (n - n_city)
    red = [c.red_airport for c in mp.city] + [False] * (n - n_city)
    train_set = set(mp.railway.cities)
    train = [nm in train_set for nm in space_names]
    adj = np.zeros((n, n), dtype=np.bool_)
    for a, b in mp.connections.edges:
        adj[sidx[a], sidx[b]] = adj[sidx[b], sidx[a]] = True
    for r in mp.regional:
        for x in r.exits:
            adj[sidx[r.name], sidx[x]] = True
    starts = [0]
    nbrs: list[int] = []
    for i in range(n):
        row = np.flatnonzero(adj[i]).tolist()
        nbrs += row
        starts.append(len(nbrs))
    hop = np.full((n, n), Content.UNREACHABLE, dtype=np.int64)
    for s in range(n):
        hop[s, s] = 0
        todo = deque([s])
        while todo:
            x = todo.popleft()
            for y in nbrs[starts[x] : starts[x + 1]]:
                if hop[s, y] == Content.UNREACHABLE:
                    hop[s, y] = hop[s, x] + 1
                    todo.append(y)
    cities = set(space_names[:n_city])

    def city_ref(file: str, entry: str, field: str, name: str, need_airport=False) -> int:
        if name not in sidx:
            raise ContentError(file, entry, f"{field} names unknown city {name!r}")
        if name not in cities:
            raise ContentError(file, entry, f"{field} names {name!r}, which is not a city")
        if need_airport and not airport[sidx[name]]:
            raise ContentError(file, entry, f"{field} names {name!r}, which has no airport")
        return sidx[name]

    # ---------------------------------------------------------------- dice
    die_names = tuple(d.name for d in dice.die)
    faces = [d.faces for d in dice.die]
    die_success = [[int(f == "S") for f in fs] for fs in faces]
    die_injury = [[{"I": 1, "II": 2}.get(f, 0) for f in fs] for fs in faces]
    die_heal = [[int(f == "H") for f in fs] for fs in faces]
    bag = [i for i, d in enumerate(dice.die) if d.in_bag]
    always = next(i for i, d in enumerate(dice.die) if not d.in_bag)

    # ---------------------------------------------------------------- intel
    token_type = []
    for code, t in enumerate(K.INTEL_TYPES):
        token_type += [code] * getattr(intel.tokens, t)

    # ---------------------------------------------------------------- villain
    vf = "villain.toml"
    v_close, v_add, v_rm = [], [], []
    for c in vil.card:
        entry = f"card {c.id}"
        v_close.append(
            -1
            if c.close_airport is None
            else city_ref(vf, entry, "close_airport", c.close_airport, need_airport=True)
        )
        adds = [city_ref(vf, entry, "add_intel", x) for x in c.add_intel]
        v_add.append(adds + [-1] * (2 - len(adds)))
        v_rm.append(-1 if c.remove_intel is None else K.REGIONS.index(c.remove_intel))

    # ---------------------------------------------------------------- lobo
    dirty = setup.variants.dirty_lobo_start
    if not LOBO_TRACK_FIRST <= dirty < lobo.track.loss:
        raise ContentError(
            "setup.toml",
            "variants",
            f"dirty_lobo_start = {dirty} is off the printed track: Dr. Lobo starts on "
            f"{LOBO_TRACK_FIRST}..{lobo.track.loss - 1} (below lobo.toml's loss = {lobo.track.loss})",
        )
    per_players = _per_player_overrides(setup, lobo.track.loss)
    req = np.zeros((lobo.track.loss, len(K.INTEL_TYPES)), dtype=np.int64)
    for p in lobo.position:
        for letter in p.intel:
            req[p.position, K.INTEL_LETTERS.index(letter)] += 1
        for code, t in enumerate(K.INTEL_TYPES):
            have = getattr(intel.tokens, t)
            if req[p.position, code] > have:
                raise ContentError(
                    "lobo.toml",
                    f"position {p.position}",
                    f"needs {req[p.position, code]} {t} Intel, but intel.toml has {have} {t} tokens "
                    "(the Location win could never happen here)",
                )

    # ---------------------------------------------------------------- henchmen
    nh = len(hench.henchman)
    L, NO = K.HENCHMAN_LEVELS, K.MAX_OPTIONS
    h_skill = np.full((nh, L, NO), -1, dtype=np.int64)
    h_mod = np.zeros((nh, L, NO), dtype=np.int64)
    h_succ = np.zeros((nh, L, NO), dtype=np.int64)
    h_auto = np.full((nh, L), -1, dtype=np.int64)
    h_eff = np.zeros((6, nh, L), dtype=np.int64)  # reward, amount, skill, penalty, amount, skill
    for h, hm in enumerate(hench.henchman):
        for lv, level in enumerate(hm.level):
            for o, opt in enumerate(level.options):
                h_skill[h, lv, o] = K.BASIC_SKILLS.index(opt.skill)
                h_mod[h, lv, o] = opt.modifier
                h_succ[h, lv, o] = opt.successes
            if level.autopass is not None:
                h_auto[h, lv] = K.ADVANCED_SKILLS.index(level.autopass)
            for k, eff in ((0, level.reward), (3, level.penalty)):
                status_ref("henchmen.toml", f"henchman {q(hm.name)}", f"level {lv + 1}.{'reward' if k == 0 else 'penalty'}",
                           eff)
                h_eff[k, h, lv] = K.EFFECTS.index(eff.effect)
                h_eff[k + 1, h, lv] = eff.value
                h_eff[k + 2, h, lv] = _effect_skill(eff, status_ids)

    # ---------------------------------------------------------------- characters
    char_names = tuple(c.name for c in chars.character)
    c_start = []
    for c in chars.character:
        if c.start not in sidx:
            raise ContentError(
                "characters.toml",
                f"character {q(c.name)}",
                f"start names unknown space {c.start!r}",
            )
        c_start.append(sidx[c.start])
    c_adv = np.zeros((len(char_names), len(K.ADVANCED_SKILLS)), dtype=np.bool_)
    for i, c in enumerate(chars.character):
        for s in c.advanced:
            c_adv[i, K.ADVANCED_SKILLS.index(s)] = True
    c_status = np.full((len(char_names), K.MAX_START_STATUS), -1, dtype=np.int64)
    for i, c in enumerate(chars.character):
        for j, sid in enumerate(c.start_status):
            if sid not in status_ids:
                raise ContentError("characters.toml", f"character {q(c.name)}",
                                   f"start_status names unknown status card {sid!r} "
                                   f"(status.toml has {', '.join(map(repr, status_ids))})")
            c_status[i, j] = status_ids.index(sid)
    c_choices = np.ones((len(char_names), len(K.ADVANCED_SKILLS)), dtype=np.bool_)
    for i, c in enumerate(chars.character):
        if c.advanced_choices is not None:
            c_choices[i] = False
            for s in c.advanced_choices:
                c_choices[i, K.ADVANCED_SKILLS.index(s)] = True

    # ---------------------------------------------------------------- setup
    P = K.MAX_PLAYERS + 1
    rows = {r.players: r for r in setup.player_count}
    lineup = np.full((P, K.MAX_PLAYERS), -1, dtype=np.int64)
    rest_die = np.full(P, -1, dtype=np.int64)
    for p, r in rows.items():
        entry = f"player_count {p}"
        for j, nm in enumerate(r.lineup):
            if nm not in char_names:
                raise ContentError("setup.toml", entry, f"lineup names unknown character {nm!r}")
            lineup[p, j] = char_names.index(nm)
        if r.rest_roll_die is not None:
            if r.rest_roll_die not in die_names:
                raise ContentError(
                    "setup.toml", entry, f"rest_roll_die names unknown die {r.rest_roll_die!r}"
                )
            rest_die[p] = die_names.index(r.rest_roll_die)
        if r.henchmen_level2 > nh:
            raise ContentError(
                "setup.toml",
                entry,
                f"henchmen_level2 = {r.henchmen_level2}, but there are {nh} henchmen",
            )
        _check_location_target(r, nh, setup.variants.dirty_location_delta)
        plus_one = sum(1 for c in vil.card if c.category == "plus_one")
        if r.remove_random_plus_one > plus_one:
            raise ContentError(
                "setup.toml",
                entry,
                f"remove_random_plus_one = {r.remove_random_plus_one}, but villain.toml has {plus_one} +1 cards",
            )
        if r.board_intel > intel.tokens.total:
            raise ContentError(
                "setup.toml",
                entry,
                f"board_intel = {r.board_intel}, but there are {intel.tokens.total} Intel tokens",
            )
    # a player count with its own Dr. Lobo start or villain mix is checked by its own pack (_derived)
    for p in sorted(rows) if _players is None else [_players]:
        if _players is not None or p not in per_players:
            _check_villain_deck(vil, rows[p], min(lobo.track.start, setup.variants.dirty_lobo_start),
                                lobo.track.loss)
    for c in chars.character:
        if c.start_un > intel.components.un_transport:
            raise ContentError("characters.toml", f"character {q(c.name)}",
                               f"start_un = {c.start_un}, but intel.toml has {intel.components.un_transport} "
                               "UN Transport tokens")

    def by_players(field: str, dtype=np.int64) -> np.ndarray:
        a = np.zeros(P, dtype=dtype)
        for p, r in rows.items():
            a[p] = getattr(r, field)
        return _ro(a)

    # ---------------------------------------------------------------- top secret
    ts_effect = []
    for t in ts.card_type:
        ts_effect += [K.TOP_SECRET_EFFECTS.index(t.effect)] * t.count

    # ---------------------------------------------------------------- encounters
    ne = len(enc.card)
    e_deck = np.zeros(ne, dtype=np.int64)
    e_skill = np.full((ne, 2, NO), -1, dtype=np.int64)
    e_mod = np.zeros((ne, 2, NO), dtype=np.int64)
    e_succ = np.zeros((ne, 2, NO), dtype=np.int64)
    e_gamble = np.zeros((ne, 2), dtype=np.bool_)
    e_auto = np.full((ne, 2), -1, dtype=np.int64)
    e_rew = np.zeros((ne, 2), dtype=np.int64)
    e_rew_amt = np.zeros((ne, 2), dtype=np.int64)
    e_rew_skill = np.full((ne, 2), -1, dtype=np.int64)
    e_pen = np.zeros((ne, 2), dtype=np.int64)
    e_pen_amt = np.zeros((ne, 2), dtype=np.int64)
    e_pen_skill = np.full((ne, 2), -1, dtype=np.int64)
    e_noadv = np.zeros((ne, 2), dtype=np.bool_)
    e_hench = np.full((ne, 2), -1, dtype=np.int64)
    hench_names = [h.name for h in hench.henchman]

    def skill_code(eff):
        return _effect_skill(eff, status_ids)

    for i, card in enumerate(enc.card):
        e_deck[i] = K.DECKS.index(card.deck)
        for s, sd in enumerate((card.no_intel, card.with_intel)):
            for o, opt in enumerate(sd.options):
                e_skill[i, s, o] = K.BASIC_SKILLS.index(opt.skill)
                e_mod[i, s, o] = opt.modifier
                e_succ[i, s, o] = opt.successes
            e_gamble[i, s] = sd.gamble
            e_auto[i, s] = -1 if sd.autopass is None else K.ADVANCED_SKILLS.index(sd.autopass)
            for what, eff in (("reward", sd.reward), ("penalty", sd.penalty)):
                status_ref("encounters.toml", f"card {q(card.id)}", f"{('no_intel', 'with_intel')[s]}.{what}", eff)
            e_rew[i, s] = K.EFFECTS.index(sd.reward.effect)
            e_rew_amt[i, s] = sd.reward.value
            e_rew_skill[i, s] = skill_code(sd.reward)
            e_pen[i, s] = K.EFFECTS.index(sd.penalty.effect)
            e_pen_amt[i, s] = sd.penalty.value
            e_pen_skill[i, s] = skill_code(sd.penalty)
            e_noadv[i, s] = sd.no_advance
            if sd.henchman is not None:
                if sd.henchman not in hench_names:
                    raise ContentError(
                        "encounters.toml", f"card {q(card.id)}",
                        f"{('no_intel', 'with_intel')[s]}.henchman names unknown henchman {sd.henchman!r} "
                        f"(henchmen.toml has {', '.join(map(repr, hench_names))})",
                    )
                e_hench[i, s] = hench_names.index(sd.henchman)

    # ---------------------------------------------------------------- fate
    f_city = [city_ref("fate.toml", f"card {q(c.city)}", "city", c.city) for c in fate.card]
    if fate.deck.one_per_city:
        named = {c.city for c in fate.card}
        for nm in space_names[:n_city]:
            if nm not in named:
                raise ContentError(
                    "fate.toml",
                    f"city {nm!r}",
                    "map city has no Fate card (deck.one_per_city = true)",
                )

    need, why = fate_cards_needed(sum(s.gamble for card in enc.card for s in (card.no_intel, card.with_intel)))
    if len(fate.card) < need:
        raise ContentError("fate.toml", "card", f"the deck has {len(fate.card)} Fate cards, but a game needs at least "
                                                f"{need}: {why}")

    derived = {players: _derived(raw, overrides, path, players) for players, overrides in per_players.items()}
    content = Content(
        by_players=derived,
        name=Path(path).name if path is not None else "<raw>",
        path=Path(path).resolve() if path is not None else Path("<raw>"),
        hash=content_hash(raw),
        assumed=_assumed(raw),
        die_names=die_names,
        die_success=_i64(die_success),
        die_injury=_i64(die_injury),
        die_heal=_i64(die_heal),
        bag_dice=_i64(bag),
        always_die=always,
        intel_type_names=tuple(K.INTEL_TYPES),
        intel_token_type=_i64(token_type),
        n_un_transport=intel.components.un_transport,
        n_close_airport_tokens=intel.components.close_airport_tokens,
        villain_advance=_i64([c.advance for c in vil.card]),
        villain_injury=_b([c.injury for c in vil.card]),
        villain_close_city=_i64(v_close),
        villain_add_intel=_i64(np.reshape(v_add, (len(vil.card), 2))),
        villain_remove_region=_i64(v_rm),
        lobo_start=lobo.track.start,
        lobo_loss=lobo.track.loss,
        lobo_intel_required=_ro(req),
        henchman_names=tuple(h.name for h in hench.henchman),
        henchman_option_skill=_ro(h_skill),
        henchman_option_modifier=_ro(h_mod),
        henchman_option_successes=_ro(h_succ),
        henchman_autopass=_ro(h_auto),
        henchman_reward=_ro(h_eff[0]),
        henchman_reward_amount=_ro(h_eff[1]),
        henchman_reward_skill=_ro(h_eff[2]),
        henchman_penalty=_ro(h_eff[3]),
        henchman_penalty_amount=_ro(h_eff[4]),
        henchman_penalty_skill=_ro(h_eff[5]),
        henchman_consequences_in_encounters=hench.readings.consequences_in_encounters,
        character_names=char_names,
        character_skills=_i64([[c.skills[s] for s in K.BASIC_SKILLS] for c in chars.character]),
        character_resolve_start=_i64([c.resolve_start for c in chars.character]),
        character_resolve_max=_i64([c.resolve_max for c in chars.character]),
        character_life=_i64([c.life for c in chars.character]),
        character_advanced=_ro(c_adv),
        character_advanced_choices=_ro(c_choices),
        character_skill_min=_i64([c.skill_min for c in chars.character]),
        character_skill_max=_i64([c.skill_max for c in chars.character]),
        n_advanced_skill_tokens=intel.components.advanced_skill_tokens,
        character_start_space=_i64(c_start),
        character_start_un=_i64([c.start_un for c in chars.character]),
        character_start_status=_ro(c_status),
        character_gives_un=_b([c.gives_un for c in chars.character]),
        character_reduced_resolve_cut=_b([c.reduced_resolve_cut for c in chars.character]),
        setup_board_intel=by_players("board_intel"),
        setup_extra_un=by_players("extra_un"),
        setup_extra_top_secret=by_players("extra_top_secret"),
        setup_extra_choice=by_players("extra_choice"),
        setup_giver_extra_un=by_players("giver_extra_un"),
        setup_giver_extra_top_secret=by_players("giver_extra_top_secret"),
        setup_giver_choice_max_un=by_players("giver_choice_max_un"),
        setup_henchmen_level2=by_players("henchmen_level2"),
        setup_remove_injury_cards=by_players("remove_injury_cards", np.bool_),
        setup_remove_minus_one=by_players("remove_minus_one", np.bool_),
        setup_remove_random_plus_one=by_players("remove_random_plus_one"),
        setup_resolve_cut=by_players("resolve_cut"),
        setup_resolve_cut_reduced=by_players("resolve_cut_reduced"),
        setup_location_target=by_players("location_target"),
        setup_overflow_limit=by_players("overflow_limit"),
        setup_mission_resolve=by_players("mission_resolve"),
        setup_rest_roll_die=_ro(rest_die),
        setup_lineup=_ro(lineup),
        easier_extra_choice=by_players("easier_extra_choice"),
        easier_extra_top_secret=by_players("easier_extra_top_secret"),
        easier_henchmen_level1=by_players("easier_henchmen_level1", np.bool_),
        dirty_lobo_start=setup.variants.dirty_lobo_start,
        dirty_location_delta=setup.variants.dirty_location_delta,
        turn_cap=setup.simulation.turn_cap,
        top_secret_effect=_i64(ts_effect),
        encounter_ids=tuple(c.id for c in enc.card),
        encounter_deck=_ro(e_deck),
        encounter_option_skill=_ro(e_skill),
        encounter_option_modifier=_ro(e_mod),
        encounter_option_successes=_ro(e_succ),
        encounter_gamble=_ro(e_gamble),
        encounter_autopass=_ro(e_auto),
        encounter_reward=_ro(e_rew),
        encounter_reward_amount=_ro(e_rew_amt),
        encounter_reward_skill=_ro(e_rew_skill),
        encounter_penalty=_ro(e_pen),
        encounter_penalty_amount=_ro(e_pen_amt),
        encounter_penalty_skill=_ro(e_pen_skill),
        encounter_no_advance=_ro(e_noadv),
        encounter_henchman=_ro(e_hench),
        lost_intel_to_supply=enc.readings.lost_intel == "supply",
        flip_anywhere_first=K.FLIP_ANYWHERE_READINGS.index(enc.readings.flip_anywhere),
        fate_city=_i64(f_city),
        fate_rank=_i64([RANK_VALUES[c.rank] for c in fate.card]),
        fate_suit=_i64([SUITS.index(c.suit) for c in fate.card]),
        space_names=space_names,
        space_kind=_i64(kind),
        space_deck=_i64(deck),
        space_ussr=_b(ussr),
        space_airport=_b(airport),
        space_red_airport=_b(red),
        space_train=_b(train),
        adjacent=_ro(adj),
        neighbor_start=_i64(starts),
        neighbor_list=_i64(nbrs),
        hop_distance=_ro(hop),
        status_ids=status_ids,
        status_names=tuple(c.name for c in status.status),
        status_type=_i64(status_type),
        status_polarity=_i64([K.STATUS_POLARITIES.index(c.polarity) for c in status.status]),
        status_effect=_i64([K.STATUS_EFFECTS.index(c.effect) for c in status.status]),
        status_amount=_i64([c.amount for c in status.status]),
        status_skill=_i64([-1 if c.skill is None else K.BASIC_SKILLS.index(c.skill) for c in status.status]),
        status_negative_lowers_skill=status.readings.unavailable_negative == "lower_skill",
        status_discard_to_deck=status.readings.discarded == "deck",
    )
    for players in sorted(rows):
        check_setup_supplies(content, players)  # every line-up of distinct characters while they last
        check_setup_supplies(content, players, [x for x in lineup[players] if x >= 0])  # the row's own line-up
    return content
