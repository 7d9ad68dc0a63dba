"""Content overrides by path: change any value of a pack for one experiment cell.

A path names a file (without ``.toml``), then keys; an array of tables is
indexed by ``[key=value]`` (the entry whose ``key`` equals ``value``), ``[N]``
(position) or ``[*]`` (every entry)::

    "lobo.track.start" = 2
    "setup.player_count[players=4].location_target" = 6
    "setup.player_count[*].overflow_limit" = 3
    "henchmen.henchman[name=Darling].levels[0].options[0].modifier" = 0

One path is special: ``"villain.counts"`` takes a table of whole numbers ``{plus_two, plus_one,
minus_one, injury}`` and relabels the advancement side of the fewest cards
needed (highest card ids first, End of Turn sides untouched) to reach those
counts, updating ``[composition]`` to match. Kinds left out keep their count,
except ``plus_one``: when it is left out, +1 cards fill the deck to its size
(``{ minus_one = 4 }`` turns two +1 cards of the default deck into -1 cards).
"""

from __future__ import annotations

import copy
import functools
import re

from sim.content.model import ContentError

_STEP = re.compile(r"^(?P<key>[A-Za-z_][A-Za-z0-9_]*)(?P<sel>(\[[^\]]*\])*)$")
_SEL = re.compile(r"\[([^\]]*)\]")

VILLAIN_KINDS = {"plus_two": 2, "plus_one": 1, "minus_one": -1, "injury": None}


class OverrideError(ValueError):
    """An override path or value that does not fit the pack."""


class SetError(ValueError):
    """A command-line override (``--set``) that cannot apply where it is given: names the option, not a file."""


def _coerce(text: str, like, where: str):
    """The selector value ``text`` read as the type of the entry's value ``like``.

    A boolean field takes only true or false: any other word (yes, 1, on) would have
    matched the entries whose value is false, so it is refused.
    """
    if isinstance(like, bool):
        if text.lower() not in ("true", "false"):
            raise OverrideError(f"{where}: {text!r} is not true or false (the field is a boolean)")
        return text.lower() == "true"
    if isinstance(like, int):
        try:
            return int(text)
        except ValueError:
            return text
    return text


def _select(items: list, sel: str, where: str) -> list:
    if not isinstance(items, list):
        raise OverrideError(f"{where} is not an array of tables, cannot select [{sel}]")
    if sel == "*":
        return list(items)
    if sel.lstrip("-").isdigit():
        i = int(sel)
        if not -len(items) <= i < len(items):
            raise OverrideError(f"{where}[{sel}]: index out of range (0..{len(items) - 1})")
        return [items[i]]
    if "=" in sel:
        k, v = (s.strip() for s in sel.split("=", 1))
        hits = [it for it in items if isinstance(it, dict) and k in it and it[k] == _coerce(v, it[k], f"{where}[{sel}]")]
        if not hits:
            known = sorted({str(it.get(k)) for it in items if isinstance(it, dict) and k in it})
            raise OverrideError(f"{where}[{sel}]: no entry with {k} = {v!r} (known: {', '.join(known[:12])})")
        return hits
    raise OverrideError(f"{where}[{sel}]: use [key=value], [N] or [*]")


def _parents(raw: dict, path: str, what: str) -> tuple[list, str, list[str], str]:
    """Walk ``path`` to its last step: (the nodes holding it, its key, its selections, where they are)."""
    parts = path.split(".")
    if len(parts) < 2:
        raise OverrideError(f"{what} {path!r}: give file.key[.key...], e.g. 'lobo.track.start'")
    file = parts[0] + ".toml"
    if file not in raw:
        stems = ", ".join(sorted(f[:-5] for f in raw))
        raise OverrideError(f"{what} {path!r}: no pack file {file!r} (files: {stems})")
    steps = []
    for step in parts[1:]:
        m = _STEP.match(step)
        if not m:
            raise OverrideError(f"{what} {path!r}: cannot read step {step!r}")
        steps.append((step, m.group("key"), _SEL.findall(m.group("sel"))))
    nodes = [raw[file]]
    where = file
    for step, key, sels in steps[:-1]:
        nodes = [x for node in nodes for x in _child(node, key, sels, where, path, what)]
        where = f"{where}.{step}"
    _, key, sels = steps[-1]
    if what != "override" or key not in _optional_keys():  # an override may add a key the schema allows
        for node in nodes:
            _child(node, key, [], where, path, what)  # the key exists in every node
    return nodes, key, sels, where


@functools.lru_cache(maxsize=1)
def _optional_keys() -> frozenset[str]:
    """Keys a pack entry may leave out (e.g. a player count's ``lobo_start``): an override may add them."""
    import inspect

    from pydantic import BaseModel

    from sim.content import schema

    keys = set()
    for _, cls in inspect.getmembers(schema, inspect.isclass):
        if issubclass(cls, BaseModel) and cls.__module__ == schema.__name__:
            keys |= {name for name, f in cls.model_fields.items() if not f.is_required()}
    return frozenset(keys)


def _child(node, key: str, sels: list[str], where: str, path: str, what: str) -> list:
    """``node[key]``, then each selection applied in turn."""
    if not isinstance(node, dict) or key not in node:
        keys = ", ".join(sorted(node)) if isinstance(node, dict) else "none"
        raise OverrideError(f"{what} {path!r}: {where} has no key {key!r} (keys: {keys})")
    cur = [node[key]]
    for sel in sels:
        cur = [x for c in cur for x in _select(c, sel, f"{where}.{key}")]
    return cur


def _set_path(raw: dict, path: str, value) -> None:
    nodes, key, sels, where = _parents(raw, path, "override")
    if sels:
        raise OverrideError(f"override {path!r}: ends on a selection; name the key to set")
    for node in nodes:
        if not isinstance(node, dict):
            raise OverrideError(f"override {path!r}: {where} is not a table")
        old = node.get(key)
        if isinstance(old, (dict, list)) and not isinstance(value, type(old)):
            raise OverrideError(f"override {path!r}: {where}.{key} is a {type(old).__name__}, not a value")
        # a table merges into a table (the keys it names change, the rest stay)
        node[key] = {**old, **copy.deepcopy(value)} if isinstance(old, dict) else copy.deepcopy(value)


def get_path(raw: dict, path: str) -> list:
    """The values an override path names in a parsed pack (one per selected entry)."""
    nodes, key, sels, where = _parents(raw, path, "path")
    return [x for node in nodes for x in _child(node, key, sels, where, path, "path")]


def _whole_number(v) -> bool:
    """An integer (a numpy integer too), not a bool, a float, a string or anything else."""
    import numbers

    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def rebalance_villain(raw: dict, counts: dict) -> None:
    """Relabel villain advancement values to reach ``counts`` (see the module doc)."""
    unknown = set(counts) - set(VILLAIN_KINDS)
    if unknown:
        raise OverrideError(f"villain.counts: unknown kind(s) {sorted(unknown)}; use {sorted(VILLAIN_KINDS)}")
    for k, v in counts.items():
        if not _whole_number(v):
            raise OverrideError(f"villain.counts: {k} = {v!r} is not a whole number of cards "
                                f"(give an integer such as {k} = 4)")
    counts = {k: int(v) for k, v in counts.items()}
    vill = raw["villain.toml"]
    cards = vill["card"]

    def kind(card) -> str:
        if card.get("injury"):
            return "injury"
        return {2: "plus_two", 1: "plus_one", -1: "minus_one"}[card["advance"]]

    want = {k: int(counts.get(k, sum(1 for c in cards if kind(c) == k))) for k in VILLAIN_KINDS}
    if "plus_one" not in counts:  # +1 cards, the most common kind, fill the deck to its size
        want["plus_one"] = len(cards) - sum(v for k, v in want.items() if k != "plus_one")
    if any(v < 0 for v in want.values()):
        raise OverrideError(f"villain.counts: negative count in {want}")
    if sum(want.values()) != len(cards):
        raise OverrideError(f"villain.counts: {want} adds up to {sum(want.values())}, the deck has {len(cards)} cards")
    have = {k: [c for c in cards if kind(c) == k] for k in VILLAIN_KINDS}
    spare = []
    for k in VILLAIN_KINDS:
        surplus = len(have[k]) - want[k]
        if surplus > 0:
            spare.extend(sorted(have[k], key=lambda c: -c["id"])[:surplus])
    spare.sort(key=lambda c: -c["id"])
    for k in VILLAIN_KINDS:
        for _ in range(want[k] - len(have[k])):
            card = spare.pop(0)
            card.pop("injury", None)
            if k == "injury":
                card["injury"] = True
                card["advance"] = 0
            else:
                card["advance"] = VILLAIN_KINDS[k]
            card["assumed"] = True
    comp = vill["composition"]
    for k in VILLAIN_KINDS:
        comp[k] = want[k]


def _counts_table(path: str) -> bool:
    """Whether ``path`` names a table of villain card counts (the pack's, or a player count's own)."""
    return path == "villain.counts" or path.endswith(".villain_counts")


def fold_counts(overrides: dict) -> dict:
    """``overrides`` with each ``villain.counts.KIND`` (or a player count's ``villain_counts.KIND``) folded into
    its table, ``villain.counts = {KIND = n}``, as a knob of ``tune`` or ``sensitivity`` names one kind; a table
    given too takes the kinds given after it."""
    out: dict = {}
    for path, value in overrides.items():
        table, _, kind = path.rpartition(".")
        if _counts_table(table):
            if kind not in VILLAIN_KINDS:
                raise OverrideError(f"override {path!r}: no villain card kind {kind!r} (kinds: "
                                    f"{', '.join(sorted(VILLAIN_KINDS))})")
            path, value = table, {kind: value}
        if _counts_table(path) and isinstance(out.get(path), dict) and isinstance(value, dict):
            value = {**out[path], **value}
        out[path] = value
    return out


def apply_overrides(raw: dict, overrides: dict) -> dict:
    """A deep copy of ``raw`` with every override applied (raises OverrideError)."""
    out = copy.deepcopy(raw)
    for path, value in fold_counts(overrides).items():
        if path == "villain.counts":
            if not isinstance(value, dict):
                raise OverrideError("villain.counts takes a table {plus_two, plus_one, minus_one, injury}")
            rebalance_villain(out, value)
        else:
            _set_path(out, path, value)
    return out


def split_assignment(item: str) -> tuple[str, str | None]:
    """``'setup.player_count[players=4].lobo_start=2'`` -> (path, '2'): split at the first '=' outside [...]."""
    depth = 0
    for i, ch in enumerate(item):
        depth += (ch == "[") - (ch == "]")
        if ch == "=" and depth == 0:
            return item[:i].strip(), item[i + 1:].strip()
    return item.strip(), None


def parse_set(items: list[str] | None, option: str = "--set") -> dict:
    """``["lobo.track.start=2", "villain.counts={minus_one=4}"]`` -> overrides; values are read as TOML.

    A value that is not TOML (``Calli Dagger``) is taken as a string.
    """
    import tomllib

    out: dict = {}
    for item in items or []:
        path, text = split_assignment(item)
        if text is None or not path or not text:
            raise OverrideError(f"{option} expects PATH=VALUE, e.g. lobo.track.start=2; got {item!r}")
        if path in out:
            raise OverrideError(f"{option} {path} given twice")
        try:
            out[path] = tomllib.loads(f"v = {text}")["v"]
        except tomllib.TOMLDecodeError:
            out[path] = text
    return out


def load_with_overrides(path, overrides: dict, source: str = "overrides"):
    """Load a pack, apply overrides, validate; errors name the source, the override and the reason."""
    from sim.content.loader import build, load_raw, warn_unprinted

    raw = load_raw(path)
    try:
        patched = apply_overrides(raw, overrides)
    except OverrideError as e:
        raise ContentError(source, None, str(e)) from None
    return warn_unprinted(build(patched, path))


def pack_loader(path, packs: dict | None = None):
    """``pack(overrides)``: the pack at ``path`` with ``overrides``, loaded once per distinct set of overrides
    (``packs``: packs already loaded, by :func:`json.dumps` of their overrides with sorted keys). A set the
    pack refuses raises its ContentError each time and is not kept."""
    import json

    packs = {} if packs is None else packs

    def pack(overrides: dict):
        key = json.dumps(overrides, sort_keys=True, default=str)
        if key not in packs:
            packs[key] = load_with_overrides(path, overrides, None)
        return packs[key]

    return pack
