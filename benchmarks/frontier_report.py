"""The pure half of benchmarks/bench_frontier.py: gaps, references, ptrnet's time-quality
frontier, the below-left check, the Markdown table and the plots. No model, no solver.

A *point* is ``(seconds, gap)``: seconds per instance on one thread and the mean gap in percent.
A method A *lies below-left of* ptrnet's curve when some point of the curve is at least as slow
and has a strictly larger gap than A: A is as good for less time, or better for the same time.
The curve is ptrnet's frontier (its points no other ptrnet point beats on both axes), joined by
straight segments on a log time axis, so a point under a segment counts too.
"""

from __future__ import annotations

import math
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


def curve_gap_at(curve: Sequence[Point], t: float) -> float:
    """The largest gap of the curve (points sorted by time, joined by segments in log time) at
    any time >= ``t``; -inf when ``t`` is past the curve's slowest point."""
    best = -math.inf
    for (t0, g0), (t1, g1) in zip(curve, curve[1:], strict=False):
        if t0 <= t <= t1 and t1 > t0:
            share = (math.log(t) - math.log(t0)) / (math.log(t1) - math.log(t0))
            best = max(best, g0 + share * (g1 - g0))
    later = [g for tb, g in curve if tb >= t]
    return max([best, *later])


def below_left(point: Point, curve: Sequence[Point]) -> bool:
    """Whether ``point`` lies below-left of ``curve`` (see the module docstring): its gap is
    strictly smaller than the curve's at its own time or at some later time."""
    t, g = point
    return g < curve_gap_at(frontier(curve), t)


def dominance(rows: Sequence[dict], family: str, key: str = "s_single") -> list[str]:
    """The ``method`` names of the rows of ``family`` that lie below-left of the ptrnet rows'
    curve, each row a point ``(row[key], row["gap"])``."""
    curve = [(r[key], r["gap"]) for r in rows if r["family"] == "ptrnet"]
    if not curve:
        return []
    return [
        r["method"] for r in rows if r["family"] == family and below_left((r[key], r["gap"]), curve)
    ]


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


def dominance_lines(rows: Sequence[dict]) -> list[str]:
    """Per test set and per family other than ptrnet (Kool, LKH-3, fast-tsp, the classic
    heuristics), the rows that lie below-left of ptrnet's curve, at batch-of-1 time and at
    batch time (1 / throughput)."""
    out = []
    for name in dict.fromkeys(r["set"] for r in rows):
        group = [dict(r, s_batch=1 / r["per_s_batch"]) for r in rows if r["set"] == name]
        parts = []
        for family in dict.fromkeys(r["family"] for r in group if r["family"] != "ptrnet"):
            for key, label in (("s_single", "batch of 1"), ("s_batch", "batch")):
                found = dominance(group, family, key)
                parts.append(f"{family} below-left ({label}): {', '.join(found) or 'none'}")
        out.append(f"{name}: " + "; ".join(parts))
    return out


def plot_set(rows: Sequence[dict], name: str, path: Path) -> None:
    """Gap against seconds per instance (batch of 1, log x, symlog y) for the rows of test set
    ``name``: one marker per method, ptrnet's frontier joined as a curve."""
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
    curve = frontier([(r["s_single"], r["gap"]) for r in group if r["family"] == "ptrnet"])
    if curve:
        ax.plot(*zip(*curve, strict=True), "-", color="tab:blue", label="ptrnet frontier")
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
