"""Matplotlib figures made from result tables only (never from the engines)."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

from sim.text import count, params_text

OUTCOME_LABELS = {
    "win_location": "win: Location Track + Intel",
    "win_henchmen": "win: all henchmen defeated",
    "loss_lobo": "loss: Dr. Lobo at 9",
    "loss_intel": "loss: Intel short at the end",
    "timeout": "timeout (bug)",
}
OUTCOME_COLORS = {
    "win_location": "#2b8a3e",
    "win_henchmen": "#8ce99a",
    "loss_lobo": "#c92a2a",
    "loss_intel": "#f08c00",
    "timeout": "#495057",
}


def _bar(upper: np.ndarray, lower: np.ndarray) -> np.ndarray:
    """An error-bar length ``upper - lower``; rounding noise below 0 (e.g. 1e-16 at an
    interval's end) becomes 0, since matplotlib refuses negative lengths."""
    return np.maximum(upper - lower, 0.0)


def _series_key(row: dict, dims: list[str]) -> str:
    return ", ".join(f"{row[d]}" for d in dims) or "all"


def _varying(summary: pl.DataFrame, exclude: tuple[str, ...]) -> list[str]:
    return [d for d in ("strategy", "variant", "characters", "setup") if d not in exclude and summary[d].n_unique() > 1]


def strategy_labels(names, spec: dict | None = None) -> dict[str, str]:
    """Each grid strategy name -> what played under it, from the spec as written (``metadata.json``'s
    ``spec``): a registered strategy (or a per-seat team) its name, since it played its registered
    parameters (``tuned``: those of ``strategies/tuned.toml``); a ``[strategy.X]`` table
    ``X = base with k=v, ...`` (or ``X = package.module:object``), so games played with given parameters
    never pass for the base strategy's. Without the spec a name stands alone."""
    tables = (spec or {}).get("strategy") or {}
    out = {}
    for name in names:
        table = tables.get(name)
        if table is None:
            out[name] = str(name)
            continue
        params = table.get("params") or {}
        out[name] = f"{name} = {table.get('module') or table.get('base')}" + (
            f" with {params_text(params)}" if params else "")
    return out


def played_by(summary: pl.DataFrame, spec: dict | None = None) -> str:
    """``strategy: tuned`` or ``strategies: heuristic, early = heuristic with exchange_when=early``: the
    level of play of every number a chart of ``summary`` shows, whether or not the strategy varies (in the
    spec's grid order when the spec is given)."""
    names = summary["strategy"].unique(maintain_order=True).to_list()
    order = ((spec or {}).get("grid") or {}).get("strategies") or []
    names = sorted(names, key=lambda n: order.index(n) if n in order else len(order))
    labels = strategy_labels(names, spec)
    sep = "; " if any("," in v for v in labels.values()) else ", "  # a label's own commas: its parameters
    return ("strategy: " if len(names) == 1 else "strategies: ") + sep.join(labels[n] for n in names)


def _wrap(text: str, width_in: float, fontsize: float = 9) -> str:
    """``text`` wrapped to lines that fit ``width_in`` inches at ``fontsize`` points (with room to spare)."""
    chars = max(20, int(width_in * 72 / (0.62 * fontsize)))
    return "\n".join(textwrap.fill(line, chars, break_on_hyphens=False) for line in text.split("\n"))


def chart_description(summary: pl.DataFrame, meta: dict | None = None) -> dict:
    """What a study chart's PNG carries as its Description (JSON): the strategies that played (as
    :func:`strategy_labels` names them) and, given the run's ``metadata.json``, all of it (the parameters
    every seat played with by player count in ``strategy_params``, the seed, the pack's hash, the rules
    version)."""
    spec = (meta or {}).get("spec")
    names = summary["strategy"].unique(maintain_order=True).to_list()
    return {**(meta or {}), "strategies": strategy_labels(names, spec)}


def _colours(n: int) -> list:
    """``n`` colours, no two alike (tab10 repeats after 10 series, so two lines would share a colour)."""
    if n <= 10:
        return [plt.get_cmap("tab10")(i) for i in range(n)]
    if n <= 20:
        return [plt.get_cmap("tab20")(i) for i in range(n)]
    return [plt.get_cmap("turbo")(i / (n - 1)) for i in range(n)]


def _save(fig, path: Path, title: str, description: dict, **kw) -> Path:
    fig.savefig(path, dpi=110, metadata={"Title": title, "Description": json.dumps(description, sort_keys=True)}, **kw)
    plt.close(fig)
    return path


def win_rate_figure(summary: pl.DataFrame, title: str = "", targets: dict | None = None, meta: dict | None = None):
    """Win rate against player count with 95% Wilson interval bars, one line per series; the title's second
    line names the strategies that played (:func:`played_by`).

    ``targets`` (``{players: (low, high)}``) draws each player count's target band.
    """
    dims = _varying(summary, ()) or ["strategy"]
    fig, ax = plt.subplots(figsize=(7.5, 4.5), layout="constrained")
    groups: dict[str, list[dict]] = {}
    for row in summary.sort("players").iter_rows(named=True):
        groups.setdefault(_series_key(row, dims), []).append(row)
    n = len(groups)
    for i, ((label, rows), colour) in enumerate(zip(groups.items(), _colours(n))):
        x = np.array([r["players"] for r in rows], dtype=float) + (i - (n - 1) / 2) * 0.06
        y = np.array([r["win_rate"] for r in rows]) * 100
        lo = _bar(y, np.array([r["ci_low"] for r in rows]) * 100)
        hi = _bar(np.array([r["ci_high"] for r in rows]) * 100, y)
        ax.errorbar(x, y, yerr=[lo, hi], marker="o", capsize=3, label=label, color=colour)
    for k, (p, (lo_t, hi_t)) in enumerate(sorted((targets or {}).items())):
        ax.fill_between([p - 0.3, p + 0.3], [100 * lo_t] * 2, [100 * hi_t] * 2, color="tab:green", alpha=0.18,
                        lw=0, label="target band" if k == 0 else None)
    ax.set_xlabel("players")
    ax.set_ylabel("win rate (%)")
    ax.set_xticks(sorted(summary["players"].unique().to_list()))
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.set_title(_wrap((title or "Win rate by player count (bars: 95% Wilson interval)") + "\n"
                       + played_by(summary, (meta or {}).get("spec")), 7.0, 10), fontsize=10)
    # many series: the legend beside the axes, not over the lines
    ax.legend(title=" / ".join(dims), fontsize=8,
              **({"loc": "upper left", "bbox_to_anchor": (1.01, 1.0)} if n > 5 else {}))
    if 6 in summary["players"].to_list():
        ax.annotate("6 players repeat one character (5 mats)", xy=(0.99, 0.01), xycoords="axes fraction",
                    ha="right", va="bottom", fontsize=7, color="#666")
    return fig


def win_rate_by_players(summary: pl.DataFrame, path: Path, title: str = "", targets: dict | None = None,
                        meta: dict | None = None) -> Path:
    """:func:`win_rate_figure` saved to ``path``, its PNG Description :func:`chart_description`."""
    return _save(win_rate_figure(summary, title, targets, meta), path, "smersh-sim win rate by player count",
                 chart_description(summary, meta))


def _cell_label(r: dict, dims: list[str]) -> str:
    return f"{r['players']}p" + (f" {_series_key(r, dims)}" if dims else "")


def outcome_figure(summary: pl.DataFrame, meta: dict | None = None):
    """How games end per cell (top), which Intel a short Pool lacked, and how far the track came in Lobo losses;
    the figure's title names the strategies that played (:func:`played_by`). A share axis starts at 0; a panel
    with no game to show says so."""
    from sim.tally import INTEL_TYPE_NAMES

    rows = list(summary.sort(["strategy", "variant", "setup", "characters", "players"]).iter_rows(named=True))
    dims = _varying(summary, ())
    labels = [_cell_label(r, dims) for r in rows]
    width = max(6.0, 0.45 * len(rows) + 2)
    fig, axes = plt.subplots(3, 1, figsize=(width, 10.5), sharex=True, layout="constrained")
    fig.suptitle(_wrap("How games end\n" + played_by(summary, (meta or {}).get("spec")), width - 0.5, 11),
                 fontsize=11)
    x = np.arange(len(rows))
    ax = axes[0]
    bottom = np.zeros(len(rows))
    for name, label in OUTCOME_LABELS.items():
        share = np.array([r[f"share_{name}"] for r in rows]) * 100
        if share.sum() == 0 and name in ("timeout", "win_henchmen"):
            continue
        ax.bar(x, share, bottom=bottom, color=OUTCOME_COLORS[name], label=label)
        bottom += share
    ax.set_ylabel("share of games (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    # which Intel type the Pool lacked in games lost on Intel (a game short of two types counts twice)
    ax = axes[1]
    colours = ("#495057", "#1971c2", "#e8590c", "#5c940d")
    step = 0.8 / len(INTEL_TYPE_NAMES)
    for k, (t, colour) in enumerate(zip(INTEL_TYPE_NAMES, colours)):
        share = np.array([r[f"n_loss_intel_short_{t}"] / r["games"] for r in rows]) * 100
        ax.bar(x - 0.4 + step * (k + 0.5), share, width=step, color=colour, label=t.replace("_", " "))
    ax.set_ylabel("share of all games (%)")
    ax.set_title("Lost on Intel: the Pool was short of which type\n(at Dr. Lobo's final position)", fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    _share_axis(ax, sum(r["n_loss_intel"] for r in rows), "no game was lost on Intel")
    # how far the Location Track had come when Dr. Lobo reached 9
    ax = axes[2]
    longest = max((len(r["track_histogram_loss_lobo"]) for r in rows), default=1)
    cmap = plt.get_cmap("viridis", max(longest, 2))
    bottom = np.zeros(len(rows))
    for k in range(longest):
        share = np.array([(r["track_histogram_loss_lobo"][k] if k < len(r["track_histogram_loss_lobo"]) else 0)
                          / r["games"] for r in rows]) * 100
        ax.bar(x, share, bottom=bottom, color=cmap(k), label=f"track at {k}")
        bottom += share
    ax.set_ylabel("share of all games (%)")
    ax.set_title("Lost to Dr. Lobo at 9: how far the Location Track had come", fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    _share_axis(ax, sum(r["n_loss_lobo"] for r in rows), "no game was lost to Dr. Lobo")
    ax.set_xticks(x)
    ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=8)
    return fig


def _share_axis(ax, games: int, none: str) -> None:
    """A share-of-games axis from 0 up; with no game to show, 0 to 1% and a note saying so (matplotlib's
    automatic limits around all-zero bars run below 0)."""
    if games:
        ax.set_ylim(bottom=0)
        return
    ax.set_ylim(0, 1)
    ax.text(0.5, 0.5, none, transform=ax.transAxes, ha="center", va="center", fontsize=9, color="#666")


def outcome_causes(summary: pl.DataFrame, path: Path, meta: dict | None = None) -> Path:
    """:func:`outcome_figure` saved to ``path``, its PNG Description :func:`chart_description`."""
    return _save(outcome_figure(summary, meta), path, "smersh-sim how games end", chart_description(summary, meta))


def survival_curve(hist) -> tuple[np.ndarray, np.ndarray]:
    """``(r, share)``: of the games of a rounds histogram (``hist[r]`` games lasted ``r`` rounds), the
    share still running after ``r`` rounds, that is lasting more than ``r``, for r = 0 .. the longest
    (where it is 0)."""
    hist = np.asarray(hist, dtype=float)
    if hist.sum() <= 0:
        raise ValueError("survival_curve: an empty histogram")
    last = int(np.nonzero(hist)[0].max())
    share = 1.0 - np.cumsum(hist[: last + 1]) / hist.sum()
    share[last] = 0.0  # exactly, not a rounding residue
    return np.arange(last + 1), share


def game_length_figure(summary: pl.DataFrame, meta: dict | None = None):
    """Share of games still running after r rounds: one panel per player count, won and lost games apart; the
    figure's title names the strategies that played (:func:`played_by`)."""
    counts = sorted(summary["players"].unique().to_list())
    cols = min(3, len(counts))
    nrows = -(-len(counts) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4.2 * cols, 3.3 * nrows + 0.4), squeeze=False, sharey=True,
                             layout="constrained")
    dims = _varying(summary, ("players",))
    series = sorted({_series_key(r, dims) for r in summary.iter_rows(named=True)})
    colour = dict(zip(series, _colours(len(series)))) if dims else {series[0]: "tab:blue"}
    for ax, players in zip(axes.flat, counts):
        for r in summary.filter(pl.col("players") == players).iter_rows(named=True):
            key = _series_key(r, dims)
            total = np.array(r["rounds_histogram"], dtype=float)
            won = np.zeros_like(total)
            won[: len(r["rounds_histogram_win"])] = r["rounds_histogram_win"]
            for hist, style in ((won, "-"), (total - won, "--")):
                if hist.sum() == 0:
                    continue
                x, y = survival_curve(hist)
                ax.step(x, y, where="post", ls=style, color=colour[key], lw=1.2)
        ax.set_title(count(players, "player"), fontsize=10)
        ax.set_xlabel("rounds")
        ax.grid(alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel("share still running")
    for ax in list(axes.flat)[len(counts):]:
        ax.set_visible(False)
    fig.suptitle(_wrap("Game length: solid won games, dashed lost games\n"
                       + played_by(summary, (meta or {}).get("spec")), 4.2 * cols - 0.4, 11), fontsize=11)
    # one legend beside the panels: a line style per outcome, a colour per series (every panel has them all)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color="#333" if dims else "tab:blue", ls=style, label=what)
               for style, what in (("-", "won"), ("--", "lost"))]
    handles += [Line2D([], [], color=colour[k], label=k) for k in series] if dims else []
    fig.legend(handles=handles, loc="outside right upper", fontsize=7, title=" / ".join(dims) or None,
               title_fontsize=7)
    return fig


def game_length_survival(summary: pl.DataFrame, path: Path, meta: dict | None = None) -> Path:
    """:func:`game_length_figure` saved to ``path``, its PNG Description :func:`chart_description`."""
    return _save(game_length_figure(summary, meta), path, "smersh-sim game length", chart_description(summary, meta))


def paired_figure(table: pl.DataFrame, baseline: str, played: str = ""):
    """Paired win-rate differences against the baseline: paired and unpaired 95% intervals, and behind
    the paired one its family-wise interval (Bonferroni over all the rows, see ``sim.compare``); ``played``
    (:func:`played_by` of the run) is the title's second line."""
    rows = list(table.iter_rows(named=True))
    pairings = {r.get("pairing", "same games") for r in rows}
    pairing = ("same games" if pairings <= {"same games"} else "by game index" if pairings == {"game index"}
               else "same games, or by game index across player counts")
    fig, ax = plt.subplots(figsize=(7.5, max(2.5, 0.4 * len(rows) + 1.2)))
    y = np.arange(len(rows))
    d = np.array([r["diff"] for r in rows]) * 100
    if len(rows) > 1:
        ax.errorbar(d, y + 0.12, xerr=[_bar(d, np.array([r["familywise_low"] for r in rows]) * 100),
                                       _bar(np.array([r["familywise_high"] for r in rows]) * 100, d)],
                    fmt="none", elinewidth=5, ecolor="#a5d8ff", zorder=1,
                    label=f"paired, family-wise: all {len(rows)} hold together (95%)")
    ax.errorbar(d, y + 0.12, xerr=[_bar(d, np.array([r["paired_low"] for r in rows]) * 100),
                                   _bar(np.array([r["paired_high"] for r in rows]) * 100, d)],
                fmt="o", capsize=3, zorder=2, label=f"paired ({pairing}), 95% each")
    ax.errorbar(d, y - 0.12, xerr=[_bar(d, np.array([r["unpaired_low"] for r in rows]) * 100),
                                   _bar(np.array([r["unpaired_high"] for r in rows]) * 100, d)],
                fmt="s", capsize=3, color="#aaa", label="unpaired")
    ax.axvline(0, color="k", lw=0.8)
    ax.set_yticks(y)
    ax.set_yticklabels([r["cell"] for r in rows], fontsize=8)
    ax.set_xlabel(f"win rate minus baseline ({baseline}), percentage points")
    head = f"Paired differences ({len(rows)} rows)" if len(rows) > 1 else "Paired difference (95% intervals)"
    ax.set_title(_wrap(head + ("\n" + played if played else ""), 7.0, 10), fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def paired_differences(table: pl.DataFrame, path: Path, baseline: str, meta: dict | None = None,
                       summary: pl.DataFrame | None = None) -> Path:
    """:func:`paired_figure` saved to ``path``; given the run's ``summary`` (and its ``metadata.json``) the
    title names the strategies that played and the PNG's Description is :func:`chart_description` with the
    baseline."""
    played = played_by(summary, (meta or {}).get("spec")) if summary is not None else ""
    description = {**(chart_description(summary, meta) if summary is not None else meta or {}), "baseline": baseline}
    # long cell names: the x label is wider than the axes
    return _save(paired_figure(table, baseline, played), path, "smersh-sim paired differences", description,
                 bbox_inches="tight")


# the charts a study writes into its results folder, and the charts `compare` adds there: against the spec's
# baseline COMPARE_CHART, against another one compare_chart(its label); COMPARE_CHARTS matches both kinds
STUDY_CHARTS = ("win_rate_by_players.png", "outcomes.png", "game_length.png")
COMPARE_CHART = "paired_differences.png"
COMPARE_CHARTS = (COMPARE_CHART, "paired_differences.*.png")  # (globs)


def compare_chart(baseline: str | None) -> str:
    """The file name of ``compare``'s chart: :data:`COMPARE_CHART` against the spec's baseline (None), else
    ``paired_differences.<baseline>.png``, so that a chart against another baseline never replaces the one a
    results folder shows. Where the label holds characters other than letters, digits and ``.,=+-`` (each
    written ``_``), or is longer than 80 characters (cut there), a hash of the whole label follows, so that two
    baselines never share a file."""
    if baseline is None:
        return COMPARE_CHART
    name = re.sub(r"[^A-Za-z0-9.,=+-]", "_", baseline)[:80]
    if name != baseline:
        import hashlib

        name += "-" + hashlib.sha1(baseline.encode()).hexdigest()[:8]
    return f"paired_differences.{name}.png"


def study_charts(summary: pl.DataFrame, out: Path, spec=None) -> list[Path]:
    """Every chart of a study; each written to a temporary name first. The run's ``metadata.json``, written
    before them, names the strategies' parameters in the titles and goes into each PNG's Description."""
    import os

    from sim.manifest import METADATA

    meta = json.loads((out / METADATA).read_text()) if (out / METADATA).is_file() else None
    made = []
    targets = spec.targets() if spec is not None else {}
    makers = (lambda sm, pth: win_rate_by_players(sm, pth, targets=targets, meta=meta),
              lambda sm, pth: outcome_causes(sm, pth, meta), lambda sm, pth: game_length_survival(sm, pth, meta))
    for name, fn in zip(STUDY_CHARTS, makers):
        final = out / name
        tmp = out / ("tmp_" + name)
        fn(summary, tmp)
        os.replace(tmp, final)
        made.append(final)
    return made


def tune_candidates(result, path: Path) -> Path:
    """Each tuned candidate's win rate with its interval (95% over the race's looks) against the target band(s)."""
    targets = result.targets
    fig, axes = plt.subplots(1, len(targets), figsize=(max(6.0, 0.18 * len(result.candidates) + 3), 4.2),
                             squeeze=False)
    colours = {"found": "tab:green", "dropped": "tab:grey", "edge": "tab:purple", "unresolved": "tab:orange"}
    order = sorted(result.candidates, key=lambda c: c.values)
    for ax, t in zip(axes[0], targets):
        ax.axhspan(t.low, t.high, color="tab:green", alpha=0.15, label=f"target [{t.low:.2f}, {t.high:.2f}]")
        for x, c in enumerate(order):
            w, n = c.wins[t.players], c.games[t.players]
            if n == 0:
                continue
            lo, hi = result.interval(c, t.players)
            p = w / n
            ax.errorbar([x], [p], yerr=[[p - lo], [hi - p]], fmt="o", ms=3, capsize=2,
                        color=colours.get(c.state, "black"))
        ax.set_xticks(range(len(order)))
        ax.set_xticklabels([",".join(str(v) for v in c.values) for c in order], rotation=90, fontsize=6)
        ax.set_xlabel(" , ".join(k.path for k in result.knobs))
        ax.set_ylabel("win rate")
        ax.set_title(f"{count(t.players, 'player')}, {result.who()}, seed {result.seed}: green found, grey dropped, purple "
                     f"on an edge, orange unresolved\n95% intervals over the race's {result.levels.looks} looks"
                     + (f"; pack {result.made['content_hash'][:12]}, rules version {result.made['rules_version']}"
                        if result.made else ""), fontsize=9)
        ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    return _save(fig, path, "smersh-sim tune candidates", {**result.made, "seed": result.seed})


def tornado(table: pl.DataFrame, path: Path, players: int) -> Path:
    """Paired change in win rate per step down and up for each knob (bars), 95% intervals (whiskers);
    the title and the PNG's Description (JSON) say what the games were played with."""
    from sim.sensitivity import games_per_setting, made_with, short_name, who_played

    rows = [r for r in table.iter_rows(named=True)]
    knobs = sorted({r["knob"] for r in rows},
                   key=lambda k: max((abs(r["diff"]) for r in rows if r["knob"] == k and r["diff"] is not None),
                                     default=0.0))
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(knobs) + 1.6))
    for y, knob in enumerate(knobs):
        for r in (r for r in rows if r["knob"] == knob):
            colour = "tab:blue" if r["step"] > 0 else "tab:red"
            if r["diff"] is None or r.get("same_games"):
                continue  # refused by the pack, or the unchanged pack's games: said in the label
            d = r["diff"] * 100
            ax.barh(y, d, color=colour, alpha=0.6, height=0.6)
            ax.errorbar([d], [y], xerr=[[d - r["diff_low"] * 100], [r["diff_high"] * 100 - d]], fmt="none",
                        ecolor="black", capsize=2, lw=0.8)
    labels = []
    for knob in knobs:
        mine = [r for r in rows if r["knob"] == knob]
        refused = [("down" if r["step"] < 0 else "up") for r in mine if r["refused"]]
        same = [("down" if r["step"] < 0 else "up") for r in mine if r.get("same_games")]
        labels.append(f"{short_name(knob)} (now {mine[0]['from']}" + (f"; {'/'.join(refused)} refused" if refused else "")
                      + (f"; {'/'.join(same)}: no game changed" if same else "") + ")")
    ax.set_yticks(range(len(knobs)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_xlabel("change in win rate (points): red one step down, blue one step up")
    base = rows[0]["default_win_rate"] * 100 if rows else float("nan")
    made = made_with(table)
    games = max(games_per_setting(table), default=0)  # a refused step played none
    ax.set_title(f"{count(players, 'player')}, {who_played(made)}: win rate {base:.1f}% on the unchanged pack\n"
                 f"{games:,} games a setting, seed {made['seed']}, pack {made['content_hash'][:12]}, rules version "
                 f"{made['rules_version']}, {made['engine']}\nbars: 95% paired intervals", fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return _save(fig, path, f"smersh-sim sensitivity, {count(players, 'player')}",
                 {**made, "players": players, "games": games})


def _luck_share_bars(ax, rec: dict) -> None:
    """Each group's share with its interval; a group whose re-drawing changed no game has no bar, a grey note why."""
    shares = rec["shares"]
    measured = [s for s in shares if s["share"] is not None]
    names = [s["group"] for s in shares] + ["no single source"]
    y = np.array([i for i, s in enumerate(shares) if s["share"] is not None] + [len(shares)])
    vals = [100 * s["share"] for s in measured] + [100 * rec["rest"]]
    lo = [100 * (s["share"] - s["low"]) if s["low"] is not None else 0.0 for s in measured] + [0.0]
    hi = [100 * (s["high"] - s["share"]) if s["high"] is not None else 0.0 for s in measured] + [0.0]
    ax.barh(y, vals, xerr=[np.maximum(lo, 0), np.maximum(hi, 0)], color=["tab:blue"] * len(measured) + ["tab:grey"],
            capsize=2)
    ax.set_yticks(np.arange(len(names)))
    ax.set_yticklabels(names, fontsize=8)
    for i, (label, s) in enumerate(zip(ax.get_yticklabels(), shares)):
        if s["share"] is None:
            label.set_color("grey")
            ax.text(0, i, f"  {s['not_measured']}", va="center", fontsize=7, color="grey")
    ax.invert_yaxis()
    ax.axvline(0, color="black", lw=0.8)
    ax.set_xlabel("share of the outcome's variance (%), 95% interval")
    ax.grid(axis="x", alpha=0.3)


def luck_figure(rec: dict):
    """One player count's luck report: each source group's share of outcome variance, and win rate by strategy.

    The layout is constrained and the titles are wrapped, so no title or label runs past the figure's edge.
    """
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.4), gridspec_kw={"width_ratios": [3, 2]}, layout="constrained")
    given = f" with {params_text(rec['params'])}" if rec.get("params") else ""  # never passed off as the defaults
    ax.set_title(_wrap(f"{count(rec['players'], 'player')}, {rec['strategy']}{given}:\nwhat each random source "
                       "decides alone", 6.0), fontsize=9)
    if rec.get("not_measured"):  # a win rate of 0% or 100%: no shares, the panel says why
        ax.set_xticks([])
        ax.set_yticks([])
        ax.text(0.5, 0.5, "no shares:\n" + "\n".join(textwrap.wrap(rec["not_measured"], 50)), ha="center",
                va="center", transform=ax.transAxes, fontsize=9, color="grey")
    else:
        _luck_share_bars(ax, rec)
    sk = rec["skill"]["strategies"]
    xs = np.arange(len(sk))
    p = np.array([v["win_rate"] for v in sk.values()]) * 100
    err = [p - np.array([v["ci_low"] for v in sk.values()]) * 100, np.array([v["ci_high"] for v in sk.values()]) * 100 - p]
    bx.bar(xs, p, yerr=np.maximum(err, 0), capsize=3, color="tab:green", alpha=0.7)
    bx.set_xticks(xs)
    # the studied strategy plays its given parameters in the ladder too: say so under its bar
    bx.set_xticklabels([k + (" (given params)" if v.get("params") else "") for k, v in sk.items()],
                       rotation=30, ha="right", fontsize=8)
    bx.set_ylabel("win rate (%)")
    bx.set_title(f"decisions: win rate by strategy\n(between-strategy share {100 * rec['skill']['between_share']:.1f}%)",
                 fontsize=9)
    bx.grid(axis="y", alpha=0.3)
    return fig


def luck_shares(rec: dict, path: Path) -> Path:
    """:func:`luck_figure` saved to ``path``."""
    fig = luck_figure(rec)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
