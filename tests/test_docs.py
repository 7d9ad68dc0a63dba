"""docs/RULES.md stays true to the code, and nothing in the repository points outside it.

* No tracked file mentions the folder of rule notes that lives beside the
  repository (a clone does not have it).
* Every code citation in docs/RULES.md, written `` `path/to/file.py:name` `` (or
  ``Class.method``), names a function or class that exists in that file.
* Every decision method of ``strategies.base.Strategy`` is listed in the document.
* Every link to a section of docs/RULES.md leads to a heading that exists.

Parsing uses ``ast`` only, so these checks import nothing from the project.
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "docs" / "RULES.md"

# Built from pieces so that this file does not match itself.
OUTSIDE = ("../" + "shared", "shared" + "/rules")

CITATION = re.compile(r"`((?:sim|strategies|tools)/[\w/]+\.py):([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)`")
SPAN = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\]\(([^)\s]*)\)")


def tracked_files() -> list[str]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [f for f in out.decode().split("\0") if f]


def defined_names(path: Path) -> set[str]:
    """Top-level functions, classes and assigned names of a module, and ``Class.method`` names."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.add(node.name)
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.add(f"{node.name}.{item.name}")
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    in_code = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if in_code:
            continue
        m = re.match(r"#{1,6} (.+)", line)
        if m:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def test_nothing_points_outside_the_repository():
    offenders = []
    for name in tracked_files():
        path = ROOT / name
        if not path.is_file():
            continue
        data = path.read_bytes()
        for needle in OUTSIDE:
            if needle.encode() in data:
                offenders.append(f"{name}: mentions {needle!r}")
    assert not offenders, "\n".join(offenders)


def test_rules_doc_cites_code_that_exists():
    text = RULES.read_text(encoding="utf-8")
    citations = CITATION.findall(text)
    assert len(citations) >= 50, f"only {len(citations)} code citations found: has the format changed?"
    missing = []
    cache: dict[str, set[str]] = {}
    for file, name in citations:
        path = ROOT / file
        if not path.is_file():
            missing.append(f"{file}: no such file")
            continue
        if file not in cache:
            cache[file] = defined_names(path)
        if name not in cache[file]:
            missing.append(f"{file}:{name}: not defined there")
    assert not missing, "\n".join(sorted(set(missing)))


def test_rules_doc_citations_use_one_format():
    """A span that looks like a code citation but does not parse would escape the check above."""
    text = RULES.read_text(encoding="utf-8")
    odd = [
        span
        for span in SPAN.findall(text)
        if ".py:" in span and not CITATION.fullmatch(f"`{span}`")
    ]
    assert not odd, f"code citations not in the `file.py:name` form: {odd}"


def test_rules_doc_lists_every_strategy_decision():
    methods = {
        n.split(".", 1)[1]
        for n in defined_names(ROOT / "strategies" / "base.py")
        if n.startswith("Strategy.") and not n.split(".", 1)[1].startswith("_")
    } - {"params"}
    assert methods, "no decision methods found on Strategy"
    cited = {name.split(".", 1)[1] for file, name in CITATION.findall(RULES.read_text(encoding="utf-8"))
             if file == "strategies/base.py" and name.startswith("Strategy.")}
    assert methods <= cited, f"decisions missing from docs/RULES.md: {sorted(methods - cited)}"


def test_links_to_rules_doc_sections_exist():
    targets = anchors(RULES)
    broken = []
    for name in tracked_files():
        if not name.endswith(".md"):
            continue
        path = ROOT / name
        for link in LINK.findall(path.read_text(encoding="utf-8")):
            file, _, anchor = link.partition("#")
            if file:
                resolved = (path.parent / file).resolve()
                if resolved != RULES:
                    continue
            elif path.resolve() != RULES:
                continue
            if anchor and anchor not in targets:
                broken.append(f"{name}: link to #{anchor}")
    assert not broken, "\n".join(broken)


def _rules_text() -> str:
    return " ".join(RULES.read_text().split())  # one line: wrapped text compares as written


def test_rules_doc_gamble_side_count_is_the_pack_s():
    from sim.content import load

    g = load().encounter_gamble
    assert f"{int(g.sum())} of the {g.size} sides in the default pack" in _rules_text()


def test_rules_doc_injury_token_figures_are_a_recount():
    """The Injury-token reading quotes how often a team holds more than the 10 tokens: recounted here on
    the same games (heuristic players, seed 1, 500 games each of 4, 5 and 6 players, the readable engine,
    the team's injuries at the end of every turn)."""
    from sim.rules.game import play_game
    from sim.rules.state import Settings
    from sim.run import make_team, resolve_content

    c = resolve_content(None)
    over, most = [], []
    for n in (4, 5, 6):
        held, team, settings = [], make_team("heuristic", n), Settings.build(c, n)
        for g in range(500):
            peak = [0]

            def after_turn(state, peak=peak):
                peak[0] = max(peak[0], sum(p.injuries for p in state.players))

            play_game(c, settings, team, 1, g, after_turn=after_turn)
            held.append(peak[0])
        over.append(sum(h > 10 for h in held))
        most.append(max(held))
    text = _rules_text()
    assert (f"at the end of some turn in {over[0]} of 500 four-player, {over[1]} of 500 five-player and "
            f"{over[2]} of 500 six-player heuristic games (seed 1, readable engine; at most {most[0]}, {most[1]} "
            f"and {most[2]})") in text


def test_the_unreachable_sides_and_disguise_are_counted_as_the_pack_has_them():
    """docs/RULES.md's counts of the With Intel sides at sea (never played: no Intel lies at sea) and of the
    sides and henchman levels Disguise passes are the default pack's."""
    import numpy as np

    from sim.content import constants as K
    from sim.content import load

    c = load()
    text = " ".join(RULES.read_text().split())
    at_sea = np.asarray(c.encounter_deck) == K.OCEAN_DECK
    w = K.WITH_INTEL
    henchman = int((np.asarray(c.encounter_henchman)[at_sea, w] >= 0).sum())
    gamble = int((np.asarray(c.encounter_gamble)[at_sea, w] != 0).sum())
    auto = int((np.asarray(c.encounter_autopass)[at_sea, w] >= 0).sum())
    assert (f"({int(at_sea.sum())} sides, {henchman} of them henchman tests, {gamble} with a Gamble, {auto} with an "
            "auto-pass skill)") in text
    all_henchman = int((np.asarray(c.encounter_henchman)[:, K.NO_INTEL] >= 0).sum()) + int(
        (np.asarray(c.encounter_henchman)[at_sea, w] >= 0).sum())
    assert f"{all_henchman} sides (cards 03, 09, 15" in text and f"{all_henchman - henchman} of them reachable" in text
    disguise = K.ADVANCED_SKILLS.index("disguise")
    passes = {s: int((np.asarray(c.encounter_autopass) == s).sum() + (np.asarray(c.henchman_autopass) == s).sum())
              for s in range(len(K.ADVANCED_SKILLS))}
    assert passes[disguise] == 0 and all(n > 0 for s, n in passes.items() if s != disguise)
    assert "every advanced skill but Disguise passes at least one side or henchman level" in text
