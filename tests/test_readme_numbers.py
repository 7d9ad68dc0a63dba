"""The numbers the README shows are the committed results' numbers."""

import re
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parent.parent


def test_skill_ladder_table_matches_the_committed_summary():
    text = (ROOT / "README.md").read_text()
    summary = pl.read_parquet(ROOT / "results" / "player_count" / "summary.parquet")
    rate = {(r["strategy"], r["players"]): r["win_rate"] for r in summary.iter_rows(named=True)}
    rows = re.findall(r"^\| `(\w+)` \| [^|]+ \|((?: [\d.]+% \|){6})$", text, flags=re.M)
    assert {name for name, _ in rows} == {"random", "bold", "heuristic", "cautious", "tuned"}
    for name, cells in rows:
        shown = [float(x) for x in re.findall(r"([\d.]+)%", cells)]
        for players, value in enumerate(shown, start=1):
            assert value == round(100 * rate[(name, players)], 1), (name, players, value)
