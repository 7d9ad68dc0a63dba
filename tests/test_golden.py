"""Seeded games replay exactly as their golden transcripts (refresh with `python -m sim.golden`)."""

import difflib

import pytest

from sim.content import load
from sim.golden import CASES, GOLDEN_DIR, render


@pytest.fixture(scope="module")
def content():
    return load()


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_golden_transcript(content, case):
    stem, players, strategy, seed, game, variant = case
    path = GOLDEN_DIR / f"{stem}.txt"
    assert path.exists(), f"missing {path}; run `python -m sim.golden` and commit it"
    want = path.read_text()
    got = render(players, strategy, seed, game, variant, content)
    if got != want:
        diff = "".join(
            list(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "golden", "now"))[:80]
        )
        pytest.fail(
            f"{stem}: the game no longer replays as its golden transcript. If the rules change "
            f"is intended, run `python -m sim.golden` and commit the new transcripts.\n{diff}"
        )


def test_golden_games_cover_every_player_count():
    assert sorted({c[1] for c in CASES}) == [1, 2, 3, 4, 5, 6]
