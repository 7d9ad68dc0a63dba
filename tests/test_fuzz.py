"""A seeded table of mutations of the default pack, a spec and a bands file.

Every case must end in a clean refusal (ContentError / SpecError / BandsError whose
message starts with the file's name and names the field) or a clean run (a few games,
no timeout); a refused spec or bands file is also refused by `smersh-sim run` /
`check` in one line. A mutation that is out of range by construction (a wrong type, an empty
or NUL name, 2**70, nan) must be refused, never accepted.
"""

from __future__ import annotations

import copy
import json
import math
import random
import re

import pytest

import sim
from sim.bands import BandsError, run_check
from sim.cli import main
from sim.content import ContentError
from sim.content.loader import DEFAULT_PACK, build, load_raw
from sim.experiments import SpecError, load_spec
from sim.study import run_study

SEED = 1962
N_CONTENT, N_SPEC, N_BANDS = 70, 40, 40
FREE_TEXT = {"note", "source", "description"}
HUGE = (2**70, -(2**63) - 1)


def _leaves(node, path=()):
    """Every (path, value) below node: scalars, lists and tables."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _leaves(v, path + (i,))
    if path:
        yield path, node


def _mutate(rng: random.Random, v):
    """(new value, must the loader refuse it?)"""
    if isinstance(v, bool):
        return rng.choice([(not v, False), (1, True), ("true", True), (0.0, True)])
    if isinstance(v, int):
        return rng.choice([(v + 1, False), (v - 1, False), (0, False), (-1, False), (2, False), (9, False),
                           (10**9, False), (HUGE[0], True), (HUGE[1], True), (float(v), True), (v + 0.5, True),
                           (True, True), (str(v), True)])
    if isinstance(v, float):
        return rng.choice([(math.nan, True), (math.inf, True), (-math.inf, True), (round(v * 1.1, 3), False),
                           (int(v), False), ("0.5", True), (True, True)])
    if isinstance(v, str):
        return rng.choice([("", True), ("\x00", True), (v + "\x00", True), (v.upper(), False), ("Atlantis", False),
                           (v + ",", False), (5, True), ("x" * 300, False)])
    if isinstance(v, list):
        if not v:
            return rng.choice([([1], False), (["x"], False)])
        return rng.choice([([], False), (v[:-1], False), (v + [copy.deepcopy(v[0])], False), (v[::-1], False),
                           (v * 40, False), (v[0], False)])
    if isinstance(v, dict):
        return rng.choice([({}, False), ({**v, "bogus_key": 1}, True), (dict(list(v.items())[1:]), False)])
    raise AssertionError(v)


def _apply(doc: dict, rng: random.Random, skip=("meta",)) -> tuple[str, object, bool]:
    paths = [p for p, _ in _leaves(doc) if p[0] not in skip]
    path = rng.choice(paths)
    node = doc
    for k in path[:-1]:
        node = node[k]
    old = node[path[-1]]
    if rng.random() < 0.08 and isinstance(node, dict):
        del node[path[-1]]  # a missing key: required ones are refused, optional ones take the default
        return ".".join(map(str, path)) + " (deleted)", None, False
    new, must_refuse = _mutate(rng, old)
    if path[-1] in FREE_TEXT or (len(path) > 1 and path[-2] == "assumed"):
        must_refuse = must_refuse and not isinstance(new, str)
    node[path[-1]] = new
    return ".".join(map(str, path)), new, must_refuse


# ---------------------------------------------------------------- content pack
RAW = load_raw()


def _content_cases():
    rng = random.Random(SEED)
    cases = []
    for i in range(N_CONTENT):
        raw = copy.deepcopy(RAW)
        file = rng.choice(sorted(raw))
        where, new, must_refuse = _apply(raw[file], rng)
        cases.append(pytest.param(file, raw, must_refuse, id=f"c{i}-{file}:{where}={new!r}"[:120]))
    return cases


@pytest.mark.parametrize("file,raw,must_refuse", _content_cases())
def test_fuzz_content_pack(file, raw, must_refuse):
    try:
        c = build(raw, DEFAULT_PACK)
    except ContentError as e:
        assert str(e).startswith(file + ": "), str(e)
        assert e.reason
        return
    assert not must_refuse, f"{file}: an out-of-range value was accepted"
    for players in (1, 4):
        r = sim.simulate(players=players, games=3, seed=5, content=c, summary_only=True)
        assert r["games"] == 3 and r["timeouts"] == 0


# ---------------------------------------------------------------- specs
SPEC = {
    "experiment": {"name": "fz", "description": "fuzz", "seed": 5, "games": 4, "batch": 2},
    "grid": {"players": [2, 3], "strategies": ["heuristic", "gh"], "variants": ["standard"],
             "characters": ["default"], "setups": ["default", "lobo2"]},
    "strategy": {"gh": {"base": "heuristic", "params": {"gamble_p": 0.9, "pool_target": 6}}},
    "setup": {"lobo2": {"overrides": {"lobo.track.start": 2, "setup.player_count[players=2].location_target": 5}}},
    "compare": {"baseline": {"strategy": "heuristic"}},
}

BANDS = {
    "check": {"seed": 7, "games": 40, "batch": 20, "tolerance": 0.05},
    "cell": [
        {"name": "2p", "players": 2, "strategy": "heuristic", "params": {"pool_target": 7}, "variant": "standard",
         "characters": "default", "overrides": {"lobo.track.start": 1}, "win_rate": [0.0, 1.0],
         "mean_turns": [1.0, 200.0], "baseline": {"seed": 7, "games": 40, "wins": 12}},
        {"name": "3p", "players": 3, "strategy": "bold", "win_rate": [0.0, 1.0], "share_loss_lobo": [0.0, 1.0],
         "baseline": {"seed": 7, "games": 40, "wins": 3}},
    ],
}


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # JSON's escapes are TOML's
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return "{ " + ", ".join(f"{json.dumps(k)} = {_toml_value(x)}" for k, x in v.items()) + " }"


def _toml(doc: dict) -> str:
    out = []
    for key, section in doc.items():
        if isinstance(section, list) and all(isinstance(x, dict) for x in section):
            for t in section:
                out.append(f"[[{key}]]")
                out += [f"{k} = {_toml_value(v)}" for k, v in t.items()]
        elif isinstance(section, dict) and key in ("strategy", "setup") and all(isinstance(x, dict) for x in section.values()):
            for name, t in section.items():
                out.append(f"[{key}.{json.dumps(name)}]")
                out += [f"{k} = {_toml_value(v)}" for k, v in t.items()]
        elif isinstance(section, dict):
            out.append(f"[{key}]")
            out += [f"{k} = {_toml_value(v)}" for k, v in section.items()]
        else:
            out.append(f"{key} = {_toml_value(section)}")
    return "\n".join(out) + "\n"


def _file_cases(base: dict, n: int, prefix: str, seed: int):
    rng = random.Random(seed)
    cases = []
    for i in range(n):
        doc = copy.deepcopy(base)
        where, new, must_refuse = _apply(doc, rng, skip=())
        cases.append(pytest.param(_toml(doc), must_refuse, id=f"{prefix}{i}-{where}={new!r}"[:120]))
    return cases


def _names_a_field(msg: str, file: str) -> bool:
    return bool(re.match(re.escape(file) + r": \S", msg))


def _cli_refuses_in_one_line(argv: list[str], file: str, capsys) -> None:
    """The same refusal through the command line: one line naming the file, no traceback."""
    with pytest.raises(SystemExit) as e:
        main(argv)
    out, err = capsys.readouterr()
    assert isinstance(e.value.code, str) and "\n" not in e.value.code.strip(), e.value.code
    assert file in e.value.code and "Traceback" not in out + err


@pytest.mark.parametrize("text,must_refuse", _file_cases(SPEC, N_SPEC, "s", SEED + 1))
def test_fuzz_spec(tmp_path, capsys, text, must_refuse):
    p = tmp_path / "fz.toml"
    p.write_text(text)
    try:
        spec = load_spec(p)
    except SpecError as e:
        assert _names_a_field(str(e), "fz.toml"), str(e)
        _cli_refuses_in_one_line(["run", str(p), "--quiet", "--out", str(tmp_path / "out")], "fz.toml", capsys)
        return
    assert not must_refuse, f"an out-of-range value was accepted:\n{text}"
    report = run_study(spec.with_games(2), tmp_path / "out", progress=False, charts=False)
    assert report.finished


@pytest.mark.parametrize("text,must_refuse", _file_cases(BANDS, N_BANDS, "b", SEED + 2))
def test_fuzz_bands(tmp_path, capsys, text, must_refuse):
    p = tmp_path / "bands.toml"
    p.write_text(text)
    try:
        results = run_check(p)
    except BandsError as e:
        assert _names_a_field(str(e), "bands.toml"), str(e)
        _cli_refuses_in_one_line(["check", str(p)], "bands.toml", capsys)
        return
    assert not must_refuse, f"an out-of-range value was accepted:\n{text}"
    assert results and all(r.games >= 1 for r in results)


def test_the_fuzz_table_is_large_and_mostly_refusals():
    assert N_CONTENT + N_SPEC + N_BANDS >= 100
    refused = sum(1 for c in _content_cases() if c.values[2])
    assert refused >= N_CONTENT // 4  # the table does exercise out-of-range values
