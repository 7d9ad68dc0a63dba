"""What a game reads of its content pack: the values a variant, a line-up or a player count leaves unread.

A variant replaces some pack values with its own: ``dirty-lobo`` starts Dr. Lobo at
``setup.toml``'s ``[variants] dirty_lobo_start`` whatever ``lobo.track.start`` or a player
count's ``lobo_start`` says (``sim.rules.setup.setup_game``, ``sim.kernel.layout.settings_vector``).
An override of a value the games do not read plays the same games as the pack without it,
under a label that says otherwise: :func:`why_unread` names such an override, so that
``run``, ``play``, ``trace``, ``tune``, ``sensitivity`` and a bands file's cells refuse it
before any game is played (``check --set``, a change tried on the whole gate, is refused only
where no cell reads it, and names the cells that leave it unread in a warning).

:data:`READ_ONLY_UNDER`, :data:`SEAT_READS` (the set-up values a seat reads by its character's kind: Calli
Dagger's ``giver_extra_un``, the others' ``extra_un``), :data:`READ_ONLY_WITH` and :func:`replaced` declare, field by
field of :class:`sim.content.Content`, what the engines leave unread; keep them in step with
``sim/rules/setup.py`` and ``sim/kernel/setup.py`` (``tests/test_spec_reads.py`` plays
each declared case and checks that the games are the same).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass

import numpy as np


class UnreadOverrideWarning(UserWarning):
    """``check --set``: a cell of the gate leaves the override unread (its variant replaces the value), so it
    replays its baseline's games; the other cells play the change."""


# fields that describe the pack and no game reads
META = frozenset({"name", "path", "hash", "assumed", "by_players"})
# keys of a pack file that document it (a note, a source, an assumption flag): no game reads them
META_KEYS = frozenset({"note", "source", "assumed"})
# fields indexed by player count (arrays of length 7): a game reads its own player count's entry only
PER_PLAYER_PREFIXES = ("setup_", "easier_")

# fields only a variant reads: (field, the variant word, what it does with it). Like a setup.toml row, such a
# value is scoped: a game of another variant leaves it unread as its name says, and an override of it is
# refused only where no game reads it; a value a variant replaces (lobo_start under dirty-lobo) is refused
# in each game of that variant.
READ_ONLY_UNDER = (
    ("dirty_lobo_start", "dirty-lobo", "starts Dr. Lobo there"),
    ("dirty_location_delta", "dirty-location", "adds it to the Location target"),
    ("easier_extra_choice", "easier", "gives the extra choice"),
    ("easier_extra_top_secret", "easier", "deals the extra Top Secret cards"),
    ("easier_henchmen_level1", "easier", "starts every henchman at level 1"),
)


# setup.toml values a seat reads by its character's kind: (field, the character flag, the flag a reader has, the
# field a seat of the other kind reads instead, or None). A game whose seats are all of the other kind leaves the
# value unread, as the seats' characters say (sim/rules/setup.py make_player and setup_game, sim/kernel/setup.py)
SEAT_READS = (
    ("setup_extra_un", "character_gives_un", False, "giver_extra_un"),
    ("setup_extra_top_secret", "character_gives_un", False, "giver_extra_top_secret"),
    ("setup_giver_extra_un", "character_gives_un", True, "extra_un"),
    ("setup_giver_extra_top_secret", "character_gives_un", True, "extra_top_secret"),
    ("setup_giver_choice_max_un", "character_gives_un", True, None),
    ("setup_resolve_cut", "character_reduced_resolve_cut", False, "resolve_cut_reduced"),
    ("setup_resolve_cut_reduced", "character_reduced_resolve_cut", True, "resolve_cut"),
)
# a value its readers use only where another value of the game's player count is not 0: (field, that value, what
# it does)
READ_ONLY_WITH = (
    ("setup_giver_choice_max_un", "setup_extra_choice",
     "it caps the UN Transports a character with gives_un takes of extra_choice"),
    ("easier_henchmen_level1", "setup_henchmen_level2",
     "it keeps at level 1 the henchmen that start at level 2 by henchmen_level2"),
)

SCOPED = frozenset(f for f, _, _ in READ_ONLY_UNDER)
# the henchmen a game starts at level 2: henchmen_level2 of them, none where the variant 'easier' keeps them at level 1
# (easier_henchmen_level1); each value is unread where the other makes it so
LEVEL2 = ("setup_henchmen_level2", "easier_henchmen_level1")
# fields with a row per character: a game reads the rows of the characters at its table only (a random line-up
# may seat any), except the names, by which a line-up is given
CHARACTER_PREFIX = "character_"
CHARACTER_READ_WHOLE = frozenset({"character_names"})


def per_player(field: str) -> bool:
    return field.startswith(PER_PLAYER_PREFIXES)


def replaced(pack, settings, characters: str | None = None) -> dict[str, str]:
    """The fields of ``pack`` (the pack a ``settings.players``-player game plays) that a game of ``settings``
    does not read, each with why, as a clause: ``{"lobo_start": "the variant 'dirty-lobo' starts Dr. Lobo at
    setup.toml's [variants] dirty_lobo_start (2) instead"}``.

    ``characters``: the line-up as given (None or "default": setup.toml's lineup; "random"; names).
    """
    s = settings
    p = s.players
    words = {"dirty-lobo": s.dirty_lobo, "dirty-location": s.dirty_location, "easier": s.easier,
             "fixed-skills": s.fixed_skills}
    out: dict[str, str] = {}
    for field, word, does in READ_ONLY_UNDER:
        if not words[word]:
            out[field] = f"only the variant '{word}' reads it (it {does})"
    if s.dirty_lobo:
        out["lobo_start"] = (f"the variant 'dirty-lobo' starts Dr. Lobo at setup.toml's [variants] dirty_lobo_start "
                             f"({int(pack.dirty_lobo_start)}) instead")
    if s.easier and bool(pack.easier_henchmen_level1[p]):
        out["setup_henchmen_level2"] = (f"the variant 'easier' starts every henchman at level 1 at {p} player(s) "
                                        "(setup.toml's easier_henchmen_level1) instead")
    if s.fixed_skills:
        out["character_advanced_choices"] = ("the variant 'fixed-skills' gives each character its own advanced "
                                             "skills (characters.toml's advanced) instead of a pick among "
                                             "advanced_choices")
    lineup = lineup_label(characters)
    if lineup != "default":
        out["setup_lineup"] = f"the line-up {lineup!r} replaces setup.toml's lineup"
    for field, why in seat_unread(pack, p, characters).items():
        out.setdefault(field, why)  # a variant's own reason first
    return out


def _names(pack, rows) -> str:
    return ", ".join(repr(str(pack.character_names[i])) for i in sorted(rows))


def seat_unread(pack, players: int, characters=None) -> dict[str, str]:
    """The ``setup.toml`` values (:data:`SEAT_READS`) that no seat of a ``players``-player game of ``pack`` with the
    line-up ``characters`` reads, each with why: with Calli Dagger alone at the table (the solo default) no seat
    reads ``extra_un``, she reads ``giver_extra_un``. None is unread by the seats where any character may sit (a
    random line-up); a value of :data:`READ_ONLY_WITH` whose gate is 0 is unread whoever sits."""
    sits = seated(pack, players, characters)
    out: dict[str, str] = {}
    playing = _names(pack, sits or ())
    for field, flag, reader, instead in SEAT_READS if sits else ():
        flags = np.asarray(getattr(pack, flag), dtype=bool)
        readers = {i for i in range(len(flags)) if bool(flags[i]) == reader}
        if readers & sits:
            continue
        name = flag.removeprefix(CHARACTER_PREFIX)
        if reader:
            out[field] = (f"only a character with {name}" + (f" ({_names(pack, readers)})" if readers else "")
                          + f" reads it, and no seat plays one (the line-up is {playing})")
        else:
            out[field] = (f"only a character without {name} reads it, and every seat plays one with it (the line-up "
                          f"is {playing})")
        if instead:
            out[field] += f"; the seats read setup.toml's {instead} instead"
    for field, gate, does in READ_ONLY_WITH:
        if field not in out and not int(np.asarray(getattr(pack, gate))[players]):
            out[field] = f"{does}, which is 0 at {players} player(s)"
    return out


def lineup_label(characters) -> str:
    """A line-up as given (None, "default", "random", "A,B" or a sequence of names or indices) as one string."""
    if characters is None:
        return "default"
    from sim.rules.state import lineup_names

    names = lineup_names(characters)  # refuses an empty line-up, as Settings.build does
    return characters.strip() if isinstance(characters, str) else ",".join(map(str, names))


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                and a.dtype == b.dtype and bool(np.array_equal(a, b)))
    return type(a) is type(b) and a == b


def _fields(pack) -> list[str]:
    return [f.name for f in dataclasses.fields(pack) if f.name not in META]


def changed(before, after, players: int) -> list[str]:
    """The fields a ``players``-player game could read (a per-player-count field: its own entry) that differ
    between the packs ``before`` and ``after``, whatever the variant."""
    a, b = before.for_players(players), after.for_players(players)
    out = []
    for f in _fields(a):
        x, y = getattr(a, f), getattr(b, f)
        if per_player(f):
            x, y = x[players], y[players]
        if not _same(x, y):
            out.append(f)
    return out




def why_unread(before, after, settings, characters: str | None = None) -> str | None:
    """Why games of ``settings`` play alike with ``before`` and ``after`` though the packs differ where such a
    game could look (its player count's entries): every field that differs is one its variant or line-up
    replaces (:func:`replaced`). None when a differing field is read, or when nothing differs there."""
    return _why(changed(before, after, settings.players), before, after, settings, characters)


def seated(pack, players: int, characters) -> frozenset | None:
    """The characters (indices) that sit at a ``players``-player game of ``pack`` with the line-up ``characters``
    as given (see :func:`replaced`); None where any may (a random line-up, or one this cannot resolve)."""
    label = lineup_label(characters)
    if label == "random":
        return None
    if label == "default":
        return frozenset(int(c) for c in pack.setup_lineup[players] if c >= 0)
    given = characters.split(",") if isinstance(characters, str) else characters
    try:
        return frozenset(pack.character_index(c.strip()) if isinstance(c, str) else int(c) for c in given)
    except (ValueError, TypeError):
        return None


def _unseated(before, after, field: str, players: int, characters) -> str | None:
    """Why a change of a character's field (``character_life``...) is unread: it changes only characters no seat
    plays. None where a seated character's value changes (or the arrays' shapes differ)."""
    if not field.startswith(CHARACTER_PREFIX) or field in CHARACTER_READ_WHOLE:
        return None
    x, y = np.asarray(getattr(before, field)), np.asarray(getattr(after, field))
    sits = seated(after, players, characters)
    if sits is None or x.shape != y.shape:
        return None
    rows = {int(i) for i in np.nonzero((x != y).reshape(len(x), -1).any(axis=1))[0]}
    if not rows or rows & sits:
        return None
    names = ", ".join(repr(after.character_names[i]) for i in sorted(rows))
    playing = ", ".join(repr(after.character_names[i]) for i in sorted(sits))
    return f"it changes only {names}, whom no seat plays (the line-up is {playing})"


def _why(diff: list[str], before, after, settings, characters) -> str | None:
    if not diff:
        return None
    skip = replaced(after.for_players(settings.players), settings, characters)
    reasons = []
    for f in diff:
        why = skip.get(f) or _unseated(before, after, f, settings.players, characters)
        if why is None:
            return None
        reasons.append(why)
    return "; ".join(dict.fromkeys(reasons))


def replaced_by(load, outer: dict, inner: dict, players) -> list[str]:
    """The paths of ``outer`` (overrides applied first: ``run --set``, ``check --set``) that ``inner`` (applied
    after them: a setup's or a bands cell's own) replaces wholly for games of ``players``: each changes what
    such a game could read without ``inner``, and nothing with it (``villain.counts`` set by both, say).
    ``load(overrides) -> Content``; a set of overrides it refuses is not judged (the caller reports it)."""
    from sim.content import ContentError

    out = []
    for path in outer:
        rest = {k: v for k, v in outer.items() if k != path}
        try:
            alone = any(changed(load(rest), load(outer), p) for p in players)
            under = any(changed(load({**rest, **inner}), load({**outer, **inner}), p) for p in players)
        except ContentError:
            continue
        if alone and not under:
            out.append(path)
    return out


def _rows(pack, sits) -> list[int]:
    """The characters that may sit: ``sits``, or every character where any may (a random line-up)."""
    n = len(pack.character_names)
    return list(range(n)) if sits is None else sorted(i for i in sits if i < n)


def _starting_resolve(pack, settings, sits) -> dict[int, int]:
    """Each character's starting Resolve (make_player: its resolve_start less the cut it reads, no less than 0),
    for the characters that may sit."""
    p = settings.players
    return {i: max(0, int(pack.character_resolve_start[i]) - int(
        (pack.setup_resolve_cut_reduced if pack.character_reduced_resolve_cut[i] else pack.setup_resolve_cut)[p]))
        for i in _rows(pack, sits)}


def _picks(pack, settings, sits) -> dict[int, int] | None:
    """How many advanced skills each character that may sit picks at set-up (its mat's list, counted): all that
    a game without 'fixed-skills' reads of ``character_advanced``. None under 'fixed-skills' (it takes those skills)."""
    if settings.fixed_skills:
        return None
    return {i: int(np.count_nonzero(pack.character_advanced[i])) for i in _rows(pack, sits)}


def _tokens(pack, settings, sits) -> int:
    """The advanced-skill tokens a game can run short of: a skill has at most one holder a seat, and a seat asks
    for a token only of a skill it does not hold, so more tokens than players play as many as players."""
    return min(int(pack.n_advanced_skill_tokens), settings.players)


def _by_name(pack, values: dict[int, int]) -> str:
    return ", ".join(f"{pack.character_names[i]!r} {v}" for i, v in values.items())


# values a game reads only through what they work out together at set-up: (the fields, that outcome from a pack,
# the game's settings and the characters that may sit (None where it does not apply), why two packs with the same
# outcome play alike). played_key hashes the outcome in place of the fields, and why_alike compares it.
SETUP_OUTCOMES = (
    (("setup_resolve_cut", "setup_resolve_cut_reduced", "character_resolve_start", "character_reduced_resolve_cut"),
     _starting_resolve,
     lambda pack, x, y, p: f"every character that may sit starts with the same Resolve either way ({_by_name(pack, x)})"),
    (("character_advanced",), _picks,
     lambda pack, x, y, p: ("without 'fixed-skills' a mat's advanced skills are read only for how many a character "
                            f"picks, the same either way ({_by_name(pack, x)})")),
    (("n_advanced_skill_tokens",), _tokens,
     lambda pack, x, y, p: (f"no advanced skill runs out of tokens at {p} player(s) with either count: a skill has "
                            "at most one holder a seat")),
)


def _outcomes(pack, settings, sits) -> list[tuple[tuple, object, object]]:
    """The :data:`SETUP_OUTCOMES` that apply to games of ``settings``: (fields, outcome, why)."""
    out = []
    for fields, outcome, why in SETUP_OUTCOMES:
        v = outcome(pack, settings, sits)
        if v is not None:
            out.append((fields, v, why))
    return out


def why_alike(before, after, settings, characters: str | None = None) -> str | None:
    """Why games of ``settings`` play alike with ``before`` and ``after`` (:func:`played_key`): what
    :func:`why_unread` says, or that each differing value is one of the rest unread or one of the values a game
    reads only through what they work out to at set-up (:data:`SETUP_OUTCOMES`: each seat's starting Resolve, how
    many advanced skills a character picks, whether a skill's tokens can run out), and those come out the same.
    None where the games differ, or the packs do not."""
    p = settings.players
    diff = changed(before, after, p)
    if not diff:
        return None
    why = why_unread(before, after, settings, characters)
    if why is not None:
        return why
    a, b = before.for_players(p), after.for_players(p)
    skip = replaced(b, settings, characters)
    sits = seated(b, p, characters)
    reasons, rest = [], []
    for f in diff:
        why = skip.get(f) or _unseated(before, after, f, p, characters)
        if why is None:
            rest.append(f)
        else:
            reasons.append(why)
    for (fields, x, why), (_, y, _) in zip(_outcomes(a, settings, sits), _outcomes(b, settings, sits)):
        if set(fields) & set(rest):
            if x != y:
                return None
            reasons.append(why(b, x, y, p))
            rest = [f for f in rest if f not in fields]
    if rest:
        return None
    return "; ".join(dict.fromkeys(reasons))


def played_key(pack, settings, characters: str | None = None) -> str:
    """A digest of what games of ``settings`` read of ``pack``: two packs with the same key play the same games
    (same seed, strategies and engine)."""
    p = settings.players
    c = pack.for_players(p)
    skip = replaced(c, settings, characters)
    sits = seated(c, p, characters)
    h = hashlib.sha256()
    outcomes = _outcomes(c, settings, sits)
    derived = {f for fields, _, _ in outcomes for f in fields}
    for f in _fields(c):
        if f in LEVEL2:  # read together, each replacing the other: hashed as the number they start at level 2
            v = 0 if (settings.easier and bool(c.easier_henchmen_level1[p])) else int(c.setup_henchmen_level2[p])
            h.update(f"{f}\0{v}\0".encode())
            continue
        if f in skip or f in derived:
            continue
        v = getattr(c, f)
        if per_player(f):
            v = v[p]
        if f.startswith(CHARACTER_PREFIX) and f not in CHARACTER_READ_WHOLE and sits is not None:
            v = np.asarray(v)[sorted(i for i in sits if i < len(v))]  # the rows of the seated characters
        h.update(f.encode() + b"\0")
        if isinstance(v, np.ndarray):
            h.update(str((v.shape, str(v.dtype))).encode() + np.ascontiguousarray(v).tobytes())
        else:
            h.update(repr(v).encode())
        h.update(b"\0")
    for fields, v, _ in outcomes:  # what the fields work out to at set-up, in their place
        h.update(f"{fields}\0{v!r}\0".encode())
    return h.hexdigest()


@dataclass(frozen=True)
class Unread:
    """An override no game of some cell reads (:func:`first_unread`)."""

    path: str
    text: str  # a clause that follows the path and its value: "has no effect in ...: why"
    cell: tuple | None  # the (where, settings, characters) that does not read it; None: no cell at all
    kind: str  # "variant" (its variant or line-up replaces it), "shadowed", "scoped", "rows" or "meta"


def leaf(path: str) -> str:
    """The last key of an override path, its row selectors dropped: ``setup.player_count[players=2].lobo_start`` -> ``lobo_start``."""
    return re.sub(r"\[.*?\]", "", path.rsplit(".", 1)[-1])


def _counts(counts, word: str = "or") -> str:
    counts = sorted(counts)
    return ", ".join(map(str, counts[:-1])) + (f" {word} " if len(counts) > 1 else "") + str(counts[-1])


def rows_named(raw: dict, path: str) -> set[int] | None:
    """The player counts of the ``setup.toml`` rows an override path names (None: not a path into the rows)."""
    from sim.content.overrides import OverrideError, get_path

    m = re.match(r"^setup\.player_count((?:\[[^\]]*\])*)(?:\.|$)", path)
    if not m:
        return None
    try:
        rows = get_path(raw, f"setup.player_count{m.group(1)}") if m.group(1) else raw["setup.toml"]["player_count"]
    except (OverrideError, KeyError):
        return None
    return {r.get("players") for r in rows if isinstance(r, dict)}


def first_unread(load, overrides: dict, cells: list[tuple], under: dict | None = None,
                 raw: dict | None = None) -> Unread | None:
    """The first path of ``overrides`` that changes nothing the games of ``cells`` read, with why, or None.

    ``load(overrides) -> Content`` builds a pack; where it refuses a set of overrides (ContentError), the paths
    it needs are not judged (the caller reports the refusal). ``cells``: ``(where, settings, characters)`` of
    the games the overrides apply to, or ``(where, settings, characters, own)`` where the cell's pack has
    overrides of its own (a spec's ``[setup.X]``, a bands cell's), applied after ``overrides``: the cell is
    judged by the pack it plays; ``where`` names it in the text ("the cells of 2 player(s), variant
    'dirty-lobo'"). ``under``: overrides applied first; those of ``overrides`` win. ``raw``: the parsed pack,
    to tell the ``setup.toml`` rows a path names (without it, the rows whose values it changes).

    A path is refused when

    * in a cell whose player count's entries it changes, each value it changes is one the cell's variant or
      line-up replaces (:func:`why_unread`): ``lobo.track.start`` under ``dirty-lobo``;
    * in a cell, it changes a value of the whole pack (not a ``setup.player_count`` row) that the cell's
      player count replaces with its own (``setup.toml``'s ``lobo_start`` or ``villain_counts``);
    * no cell reads it, its value being scoped to player counts (``setup.toml`` rows) or to variants
      (:data:`READ_ONLY_UNDER`) no cell plays; where some cell reads such a value, the others leave it unread
      as its name says, and it is not refused;
    * it names a key that documents the pack (``note``, ``source``, ``assumed``).

    One that changes nothing anywhere (it sets the value the pack has, e.g. a sweep's value that is the
    default's) is not refused: its cells play the default's games, as their label says.
    """
    from sim.content import ContentError
    from sim.content.constants import MAX_PLAYERS

    under = dict(under or {})
    full = {**under, **overrides}
    groups: dict[str, tuple[dict, list]] = {}  # the cells by their own overrides
    for cell in cells:
        own = dict(cell[3]) if len(cell) > 3 and cell[3] else {}
        groups.setdefault(json.dumps(own, sort_keys=True, default=str), (own, []))[1].append(cell)
    try:
        for own, _ in groups.values():
            load({**full, **own})
    except ContentError:
        return None
    players = sorted({cell[1].players for cell in cells})
    labels = sorted({cell[1].variant_label for cell in cells})
    for path in overrides:
        if leaf(path) in META_KEYS:
            return Unread(path, f"names {leaf(path)!r}, which documents the pack for its readers: no game reads it",
                          None, "meta")
        rest = {k: v for k, v in full.items() if k != path}
        if path in under:
            rest[path] = under[path]
        row = path.startswith("setup.player_count")
        named = (rows_named(raw, path) if raw is not None else None) if row else None
        read, scoped, seen = False, None, set()
        for own, group in groups.values():
            after = load({**full, **own})
            try:
                before = load({**rest, **own})
            except ContentError:
                read = True  # not judged
                continue
            diffs = {p: changed(before, after, p) for p in range(1, MAX_PLAYERS + 1)}
            counts = [p for p, d in diffs.items() if d]
            if not counts:  # nothing changes here (its own overrides set it again: replaced_by's to say)
                continue
            seen.update(counts)
            for cell in group:
                where, s, characters = cell[:3]
                p = s.players
                if p not in counts:
                    if row:  # a row of another player count (scoped, as its selection says), or the value p has
                        read = read or (named is not None and p in named)
                        continue
                    fields = diffs[counts[0]]
                    what = ("lobo_start" if "lobo_start" in fields
                            else "villain_counts" if any(f.startswith("villain_") for f in fields) else "value")
                    return Unread(path, f"has no effect in {where}: setup.toml's player_count {p} sets its own "
                                        f"{what}, which {p}-player games play instead", cell, "shadowed")
                why = _why(diffs[p], before, after, s, characters)
                if why is None:
                    read = True
                elif not set(diffs[p]) <= SCOPED:
                    return Unread(path, f"has no effect in {where}: {why}", cell, "variant")
                else:
                    scoped = why
        if read or not seen:
            continue
        if scoped is not None:
            return Unread(path, f"has no effect: {scoped}, and the games here play {_counts(map(repr, labels), 'and')}",
                          None, "scoped")
        what = (f"names only setup.toml's row for {_counts(named)} player(s)" if named
                else f"changes only what games of {_counts(seen)} player(s) read")
        return Unread(path, f"{what}, but the games here have {_counts(players)}", None, "rows")
    return None
