"""The pure half of benchmarks/bench_frontier.py: gaps, references, ptrnet's time-quality
frontier, the reading by time budget, the Markdown tables and the plots. No model, no solver.

A *point* is ``(seconds, gap)``: seconds per instance on one thread and the mean gap in percent.
The reading: within a time budget, the best gap a family reaches is that of its best row no
slower than the budget (:func:`best_within`); at each row of a peer (Kool et al., a classic
heuristic, a solver), ptrnet's best gap within that row's own time is compared with the row's
(:func:`budget_rows`). A row added to ptrnet can only lower ptrnet's best gap at every budget,
so the reading only improves as methods are added (a check of "some ptrnet point beaten on
both axes" could turn against ptrnet when a fast, rough row joined).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

Point = tuple[float, float]


def gaps_pct(lengths: Sequence[float], refs: Sequence[float]) -> np.ndarray:
    """Per-instance gap in percent, ``100 (length / ref - 1)``.

    Raises:
        ValueError: different counts, no instance, or a reference that is not positive.
    """
    lengths, refs = np.asarray(lengths, float), np.asarray(refs, float)
    if lengths.shape != refs.shape or not len(refs) or (refs <= 0).any():
        raise ValueError("gaps need as many positive references as lengths")
    return 100.0 * (lengths / refs - 1.0)


def best_reference(candidates: dict[str, Sequence[float]]) -> tuple[np.ndarray, dict[str, int]]:
    """The per-instance shortest of several solvers' lengths, and on how many instances each
    solver's length is that shortest (ties count for every solver within 1e-9 relative):
    ``({"lkh": [...], "fast-tsp": [...]}) -> (refs, {"lkh": 3, "fast-tsp": 5})``."""
    table = np.array([np.asarray(v, float) for v in candidates.values()])  # (solvers, count)
    refs = table.min(axis=0)  # (count,)
    at_best = table <= refs * (1 + 1e-9)  # (solvers, count)
    return refs, {k: int(at_best[i].sum()) for i, k in enumerate(candidates)}


def frontier(points: Sequence[Point]) -> list[Point]:
    """The points no other point beats (at most as slow and at most the gap, one strictly),
    sorted by time; the gaps then fall strictly as time grows."""
    kept: list[Point] = []
    for t, g in sorted(points, key=lambda p: (p[0], p[1])):
        if not kept or g < kept[-1][1]:
            kept.append((float(t), float(g)))
    return kept


def best_within(points: Sequence[Point], budget: float) -> Point | None:
    """The point of smallest gap among those taking at most ``budget`` seconds (ties: the
    faster), None where none is that fast. It can only improve as points are added."""
    within = [p for p in points if p[0] <= budget * (1 + 1e-9)]
    return min(within, key=lambda p: (p[1], p[0])) if within else None


def budget_rows(rows: Sequence[dict], family: str, key: str = "s_single") -> list[dict]:
    """For each row of ``family`` (a peer's point), ptrnet's best row within the peer's time:
    ``{"peer": row, "ours": row or None, "verdict": "ahead" | "level" | "behind" | "none as
    fast"}`` (level: the gaps within 0.005 points, what the tables print alike)."""
    ours = [r for r in rows if r["family"] == "ptrnet"]
    points = {(r[key], r["gap"]): r for r in ours}
    found = []
    for peer in (r for r in rows if r["family"] == family):
        best = best_within(list(points), peer[key])
        mine = points[best] if best else None
        if mine is None:
            verdict = "none as fast"
        elif abs(mine["gap"] - peer["gap"]) < 0.005:
            verdict = "level"
        else:
            verdict = "ahead" if mine["gap"] < peer["gap"] else "behind"
        found.append(dict(peer=peer, ours=mine, verdict=verdict))
    return found


def budget_lines(rows: Sequence[dict]) -> list[str]:
    """Per test set and per family other than ptrnet, at batch-of-1 time and at batch time
    (1 / throughput): at each of the family's rows, ptrnet's best gap within the same time,
    and how many of its rows ptrnet is ahead of or level with."""
    out = []
    for name in dict.fromkeys(r["set"] for r in rows):
        group = [dict(r, s_batch=1 / r["per_s_batch"]) for r in rows if r["set"] == name]
        for family in dict.fromkeys(r["family"] for r in group if r["family"] != "ptrnet"):
            for key, label in (("s_single", "batch of 1"), ("s_batch", "batch")):
                found = budget_rows(group, family, key)
                good = sum(f["verdict"] in ("ahead", "level") for f in found)
                parts = "; ".join(budget_text(f, key) for f in found)
                out.append(f"{name}, {family} ({label}): ptrnet ahead or level within the "
                           f"same time at {good} of {len(found)}: {parts}")  # fmt: skip
    return out


def budget_text(found: dict, key: str) -> str:
    """``kool greedy 1.38% in 0.0245 s vs greedy 2.90% in 0.0107 s: behind``."""
    peer, mine = found["peer"], found["ours"]
    text = f"{peer['method']} {gap_text(peer['gap'])} in {short(peer[key])} s"
    if mine is None:
        return f"{text}: none as fast"
    ours = f"{mine['method']} {gap_text(mine['gap'])} in {short(mine[key])} s"
    return f"{text} vs {ours}: {found['verdict']}"


BUDGETS = (1e-4, 1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0)  # seconds per instance


def budget_table(rows: Sequence[dict], name: str, key: str = "s_single") -> str:
    """Markdown for test set ``name``: one line per time budget (:data:`BUDGETS`), one column
    per family, each cell the family's best gap within the budget and its method."""
    group = [dict(r, s_batch=1 / r["per_s_batch"]) for r in rows if r["set"] == name]
    families = list(dict.fromkeys(r["family"] for r in group))
    lines = ["| budget | " + " | ".join(families) + " |", "|---:|" + "---|" * len(families)]
    for budget in BUDGETS:
        cells = []
        for family in families:
            found = {(r[key], r["gap"]): r for r in group if r["family"] == family}
            best = best_within(list(found), budget)
            cells.append(f"{gap_text(best[1])} ({found[best]['method']})" if best else "")
        lines.append(f"| {short(budget)} s | " + " | ".join(cells) + " |")
    return "\n".join(lines)


HEADER = (
    "| instances | method | count | mean gap | s / instance (batch of 1) | instances / s (batch) |",
    "|---|---|---:|---:|---:|---:|",
)


def markdown_table(rows: Sequence[dict]) -> str:
    """One Markdown line per row: the test set, method, instance count (``count`` / the
    ``single`` instances timed alone), gap, seconds per instance alone, throughput."""
    lines = list(HEADER)
    for r in rows:
        lines.append(
            f"| {r['set']} | {r['method']} | {r['count']} / {r['single']} | {gap_text(r['gap'])} | "
            f"{r['s_single']:.4g} | {r['per_s_batch']:.4g} |"
        )
    return "\n".join(lines)


def pivot_table(rows: Sequence[dict]) -> str:
    """One line per method, one column per test set, each cell ``gap; s alone; per s batch``
    (blank where the method did not run); the instance counts in the column heads."""
    sets = list(dict.fromkeys(r["set"] for r in rows))
    counts = {r["set"]: r["count"] for r in rows if r["family"] == "ptrnet"}
    cells = {(r["method"], r["set"]): r for r in rows}
    heads = [f"{s} ({counts[s]})" if s in counts else s for s in sets]
    lines = ["| method | " + " | ".join(heads) + " |", "|---|" + "---:|" * len(sets)]
    for method in dict.fromkeys(r["method"] for r in rows):
        found = [cells.get((method, s)) for s in sets]
        text = [cell(r) if r else "" for r in found]
        lines.append(f"| {method} | " + " | ".join(text) + " |")
    return "\n".join(lines)


def cell(row: dict) -> str:
    """``gap; seconds alone; instances per second in the batch`` of one row."""
    return f"{gap_text(row['gap'])}; {short(row['s_single'])} s; {short(row['per_s_batch'])}/s"


def short(x: float) -> str:
    """Three significant digits, no exponent: ``0.000123`` -> ``0.000123``, ``4321.5`` ->
    ``4,322``, ``12.345`` -> ``12.3``."""
    if x >= 100:
        return f"{x:,.0f}"
    return f"{float(f'{x:.3g}'):g}" if x >= 1e-4 else f"{x:.6f}"


def gap_text(gap: float) -> str:
    """``1.234`` -> ``1.23%``; a gap that rounds to zero prints ``0.00%``, never ``-0.00%``."""
    return f"{round(gap, 2) + 0.0:.2f}%"


def plot_set(rows: Sequence[dict], name: str, path: Path) -> None:
    """Gap against seconds per instance (batch of 1, log x, symlog y) for the rows of test set
    ``name``: one marker per method; ptrnet's and Kool's best gap within each time budget
    drawn as staircases (each falls where a better row comes within the budget)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    group = [r for r in rows if r["set"] == name]
    fig, ax = plt.subplots(figsize=(8, 5.5))
    markers = {"ptrnet": "o", "kool": "s", "classic": "^", "fast-tsp": "D", "lkh": "*"}
    for r in group:
        ax.scatter(r["s_single"], r["gap"], marker=markers.get(r["family"], "x"), s=45)
        ax.annotate(r["method"], (r["s_single"], r["gap"]), fontsize=7, xytext=(3, 3),
                    textcoords="offset points")  # fmt: skip
    right = max((r["s_single"] for r in group), default=1.0) * 2
    for family, style in (("ptrnet", "-"), ("kool", "--")):
        steps = frontier([(r["s_single"], r["gap"]) for r in group if r["family"] == family])
        if steps:
            times, gaps = zip(*[*steps, (right, steps[-1][1])], strict=True)
            ax.step(times, gaps, style, where="post", label=f"{family}: best within the time")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper right")
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=0.1)
    ax.set_ylim(bottom=min([0.0, *(r["gap"] for r in group)]))
    ax.set_xlabel("CPU seconds per instance, batch of 1, one thread (log)")
    ax.set_ylabel("mean gap to the reference, % (symlog)")
    count = group[0]["count"] if group else 0
    ax.set_title(f"TSP {name}: gap against time ({count} instances)")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
