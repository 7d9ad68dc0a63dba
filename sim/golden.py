"""Golden transcripts: a few seeded games rendered as text, kept under tests/golden/.

A rules change refreshes them in the same commit (``python -m sim.golden``), so a
reviewer sees a behaviour change as a diff of plain-English game logs.
"""

from __future__ import annotations

import sys
from pathlib import Path

# (file stem, players, strategy, seed, game, variant)
CASES = (
    ("solo_heuristic_s7", 1, "heuristic", 7, 0, None),
    ("2p_cautious_s11_dirty", 2, "cautious", 11, 0, "dirty"),
    ("3p_heuristic_s7", 3, "heuristic", 7, 0, None),
    ("4p_bold_s3", 4, "bold", 3, 0, None),
    ("5p_random_s2", 5, "random", 2, 0, None),
    ("6p_heuristic_s5_easier", 6, "heuristic", 5, 1, "easier"),
)

GOLDEN_DIR = Path(__file__).resolve().parent.parent / "tests" / "golden"


def render(players: int, strategy: str, seed: int, game: int, variant, content=None) -> str:
    """The trace of one game, as `smersh-sim trace` prints it below its header line (the settings played)."""
    import strategies
    from sim.content import load
    from sim.rules import Settings, play_game

    content = content or load()
    settings = Settings.build(content, players, None, variant)
    team = [strategies.make(strategy) for _ in range(players)]
    rec, g = play_game(content, settings, team, seed, game, trace=True)
    lines = list(g.trace)
    lines.append(
        f"RESULT: {rec.outcome} after {rec.turns} turns ({rec.rounds} rounds); "
        f"Dr. Lobo {rec.lobo}, Location Track {rec.location_track}"
    )
    return "\n".join(lines) + "\n"


def refresh(directory: Path = GOLDEN_DIR) -> list[Path]:
    """Rewrite every golden transcript; returns the paths written."""
    from sim.content import load

    content = load()
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for stem, players, strategy, seed, game, variant in CASES:
        path = directory / f"{stem}.txt"
        path.write_text(render(players, strategy, seed, game, variant, content))
        out.append(path)
    return out


if __name__ == "__main__":
    for p in refresh(Path(sys.argv[1]) if len(sys.argv) > 1 else GOLDEN_DIR):
        print(p)
