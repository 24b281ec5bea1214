"""Draw one instance with its exact solution and, optionally, a model's output over it.

One drawer per kind of drawing, chosen by :func:`draw_solution` from the task's ``drawing``:

* ``hull`` (convex_hull) -- the true hull as a shaded polygon, the output as the path it traces.
* ``tour`` (tsp) -- the optimal tour, the output tour over it.
* ``triangles`` (delaunay) -- the true triangles; output triangles that are Delaunay in one
  colour, the others dashed in a second.
* ``bars`` (sort) -- the sorted values, and the values in the order the model emitted them.
* ``subset`` (a task whose answer is a set of chosen inputs) -- the exact choice as large pale
  rings, the output's as small dots, red where the exact answer does not choose it; no lines,
  since the order of a set means nothing.
* ``routes`` (vehicle routing: the first input is a depot, an answer's routes are separated by
  visits to it) -- the depot as a square, each route from the depot and back; the exact routes
  thick and pale, the output's thin, one colour per route (the exact ones too, without an
  output).

Sequences are 0-based index arrays (see :mod:`ptrnet.tasks.base`); a prediction is drawn as
emitted, so an open hull or a tour with repeats shows as such. Point labels are 1-based, the
numbering of the paper's files and of the model's tokens, unless the points have names. Points
are drawn in their own units (a map in km stays a map in km).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Polygon

from ptrnet.tasks import get_task
from ptrnet.tasks.delaunay import triangle_set
from ptrnet.viz.labels import MARKER_SIZE, add_labels

EXACT = "#2ca02c"
MODEL = "#1f77b4"
WRONG = "#d62728"
LABEL_LIMIT = 60  # more points than this: no labels (too many to set apart)
EXACT_GID, MODEL_GID = "exact", "model"  # the paths' artist ids, for a reader of the figure
MARGIN = 0.05  # the space around the points, a share of their largest extent
#: One colour per route (matplotlib's tab10 without its green and red, which mean exact and
#: wrong here), repeated past the eighth route.
ROUTE_COLOURS = (
    "#1f77b4",
    "#ff7f0e",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
DEPOT_GID = "depot"


def draw_solution(
    ax: Axes,
    task: str,
    points: np.ndarray,
    ref: np.ndarray,
    pred: np.ndarray | None = None,
    names: tuple[str, ...] | None = None,
    reference: str = "exact",
    legend_below: bool = False,
    answer: str = "model",
) -> None:
    """Draw ``points`` (n, dim) with the exact sequence ``ref`` and the model's ``pred``;
    ``task`` is the task's name. Planar drawings are in the points' own units with equal
    aspect and axes fitted to the points; they are labelled by ``names`` when given, else by
    1-based index (:func:`ptrnet.viz.labels.add_labels`, which
    :func:`~ptrnet.viz.labels.separate_labels` may then move apart). ``reference`` names
    ``ref`` in the legend (``exact``, or what else it is) and ``answer`` names ``pred``
    (``model``, or where else it came from); ``legend_below`` puts the legend under the axes,
    clear of the points and their labels, instead of where it covers least.

    Raises:
        ValueError: an unknown task, or one whose ``drawing`` has no drawer here.
    """
    kind = get_task(task).drawing
    try:
        drawer = DRAWERS[kind]
    except KeyError:
        raise ValueError(
            f"no drawing {kind!r} for task {task!r}; choose from {', '.join(DRAWERS)}"
        ) from None
    points = np.asarray(points, dtype=np.float64)
    drawer(ax, points, np.asarray(ref), _optional(pred))
    if kind != "bars":
        _plane(ax, points, names)
    handles = _legend(kind, pred is not None, reference, answer)
    if legend_below:
        ax.legend(
            handles=handles,
            loc="upper center",
            bbox_to_anchor=(0.5, -0.08),
            ncol=len(handles),
            fontsize="small",
            frameon=False,
        )
    else:
        ax.legend(handles=handles, loc="best", fontsize="small")


def _optional(seq: np.ndarray | None) -> np.ndarray | None:
    return None if seq is None else np.asarray(seq, dtype=np.int64)


def _legend(kind: str, with_model: bool, reference: str = "exact", answer: str = "model") -> list:
    if kind == "subset":
        return _subset_legend(with_model, reference, answer)
    if kind == "routes":
        return _routes_legend(with_model, reference, answer)
    if kind == "bars":
        handles = [Patch(color=EXACT, alpha=0.35, label=f"{reference} (sorted)")]
        if with_model:
            handles += [
                Patch(facecolor="none", edgecolor=MODEL, label=f"{answer}, right value"),
                Patch(facecolor="none", edgecolor=WRONG, label=f"{answer}, wrong value"),
            ]
        return handles
    handles = [Line2D([], [], color=EXACT, lw=4, alpha=0.5, label=reference)]
    if with_model:
        handles.append(Line2D([], [], color=MODEL, lw=1.5, label=answer))
        if kind == "triangles":
            handles.append(
                Line2D([], [], color=WRONG, lw=1.2, ls="--", label=f"{answer}, not Delaunay")
            )
    return handles


def _subset_legend(with_model: bool, reference: str = "exact", answer: str = "model") -> list:
    ring = {"ls": "", "marker": "o", "mfc": "none", "ms": 12, "mew": 3, "alpha": 0.6}
    handles = [Line2D([], [], color=EXACT, label=f"{reference} choice", **ring)]
    if with_model:
        dot = {"ls": "", "marker": "o", "ms": 6}
        handles += [
            Line2D([], [], color=MODEL, label=f"{answer}, also {reference}", **dot),
            Line2D([], [], color=WRONG, label=f"{answer}, not {reference}", **dot),
        ]
    return handles


def _routes_legend(with_model: bool, reference: str = "exact", answer: str = "model") -> list:
    depot = Line2D([], [], ls="", marker="s", color="black", ms=8, label="depot")
    if not with_model:
        colour = ROUTE_COLOURS[0]
        return [depot, Line2D([], [], color=colour, lw=4, alpha=0.5, label=f"{reference} routes")]
    return [
        depot,
        Line2D([], [], color=EXACT, lw=4, alpha=0.5, label=reference),
        Line2D([], [], color=ROUTE_COLOURS[0], lw=1.5, label=f"{answer}, a colour per route"),
    ]


def _plane(ax: Axes, points: np.ndarray, names: tuple[str, ...] | None) -> None:
    """Scatter the points with their labels (``names``, else 1-based indices), on equal-aspect
    axes that fit the points with a margin of :data:`MARGIN` of their extent."""
    ax.scatter(points[:, 0], points[:, 1], s=MARKER_SIZE, color="black", zorder=5)
    if len(points) <= LABEL_LIMIT:
        labels = names if names is not None else [str(i + 1) for i in range(len(points))]
        add_labels(ax, points[:, :2], labels)
    lo, hi = points.min(axis=0), points.max(axis=0)
    extent = float((hi - lo).max())
    pad = MARGIN * extent if extent > 0 else MARGIN * max(1.0, float(np.abs(points).max()))
    ax.set_xlim(lo[0] - pad, hi[0] + pad)
    ax.set_ylim(lo[1] - pad, hi[1] + pad)
    ax.set_aspect("equal", adjustable="box")


def _path(ax: Axes, points: np.ndarray, seq: np.ndarray, **style) -> None:
    """The polyline through ``points[seq]`` in order (closed only if ``seq`` repeats its start)."""
    if len(seq):
        ax.plot(points[seq, 0], points[seq, 1], **style)


def draw_hull(ax: Axes, points: np.ndarray, ref: np.ndarray, pred: np.ndarray | None) -> None:
    """True hull shaded, predicted vertex path drawn over it."""
    ax.add_patch(Polygon(points[ref], closed=True, color=EXACT, alpha=0.25, lw=0))
    _path(ax, points, ref, color=EXACT, lw=4, alpha=0.5, gid=EXACT_GID)
    if pred is not None:
        _path(ax, points, pred, color=MODEL, lw=1.5, marker="o", ms=3, gid=MODEL_GID)


def draw_tour(ax: Axes, points: np.ndarray, ref: np.ndarray, pred: np.ndarray | None) -> None:
    """Optimal tour thick and pale, predicted tour thin over it."""
    _path(ax, points, ref, color=EXACT, lw=4, alpha=0.5, gid=EXACT_GID)
    if pred is not None:
        _path(ax, points, pred, color=MODEL, lw=1.5, gid=MODEL_GID)


def _triangle_edges(points: np.ndarray, triangles: set[tuple[int, ...]]) -> np.ndarray:
    """(3m, 2, 2) segments of the given triangles' edges."""
    tri = np.array(sorted(triangles), dtype=np.int64).reshape(-1, 3)
    corners = points[tri]  # (m, 3, 2)
    return np.stack([corners, np.roll(corners, -1, axis=1)], axis=2).reshape(-1, 2, 2)


def draw_triangles(ax: Axes, points: np.ndarray, ref: np.ndarray, pred: np.ndarray | None) -> None:
    """True triangles thick and pale; predicted ones thin, dashed red where not Delaunay."""
    truth = triangle_set(ref)
    ax.add_collection(LineCollection(_triangle_edges(points, truth), color=EXACT, lw=4, alpha=0.4))
    if pred is not None:
        found = triangle_set(pred)
        for triangles, style in (
            (found & truth, {"color": MODEL, "lw": 1.5}),
            (found - truth, {"color": WRONG, "lw": 1.2, "ls": "--"}),
        ):
            if triangles:
                ax.add_collection(LineCollection(_triangle_edges(points, triangles), **style))


def draw_sort(ax: Axes, points: np.ndarray, ref: np.ndarray, pred: np.ndarray | None) -> None:
    """Bars per output position: sorted values shaded, emitted values outlined.

    An outlined bar is blue where it holds the right value for its position, red otherwise.
    """
    values = points[:, 0]
    ax.bar(np.arange(1, len(ref) + 1), values[ref], width=0.9, color=EXACT, alpha=0.35)
    if pred is not None and len(pred):
        got = values[pred]
        want = np.append(values[ref], np.full(max(0, len(pred) - len(ref)), np.nan))[: len(pred)]
        colors = [MODEL if ok else WRONG for ok in got == want]
        ax.bar(
            np.arange(1, len(pred) + 1), got, width=0.6, facecolor="none", edgecolor=colors, lw=1.5
        )
    ax.set_xlabel("output position (1-based)")
    ax.set_ylabel("value")


def draw_subset(ax: Axes, points: np.ndarray, ref: np.ndarray, pred: np.ndarray | None) -> None:
    """The exact choice as pale rings; the output's choices as dots over them, blue where the
    exact answer chooses the same input and red where it does not. Inputs are drawn as the
    points they are (their first two numbers); the order of a choice is not drawn."""
    ring = {"marker": "o", "facecolors": "none", "s": 160, "linewidths": 3, "alpha": 0.6}
    if len(ref):
        ax.scatter(points[ref, 0], points[ref, 1], edgecolors=EXACT, gid=EXACT_GID, **ring)
    if pred is not None and len(pred):
        chosen = np.isin(pred, ref)
        colors = [MODEL if ok else WRONG for ok in chosen]
        ax.scatter(points[pred, 0], points[pred, 1], s=40, c=colors, zorder=6, gid=MODEL_GID)


def route_stops(seq: np.ndarray) -> list[np.ndarray]:
    """The routes of ``seq`` (indices, 0 the depot between two routes) each as the stops driven:
    ``[0, ..., 0]``; a route left empty by two depot visits in a row is dropped."""
    parts = np.split(np.asarray(seq, dtype=np.int64), np.flatnonzero(np.asarray(seq) == 0))
    return [np.concatenate([[0], p[p != 0], [0]]) for p in parts if (p != 0).any()]


def draw_routes(ax: Axes, points: np.ndarray, ref: np.ndarray, pred: np.ndarray | None) -> None:
    """The depot (the first input) as a black square; each route from the depot and back, the
    exact ones thick and pale (in one colour beside an output, else a colour each), the
    output's thin, a colour each (:data:`ROUTE_COLOURS`)."""
    ax.scatter(
        points[:1, 0], points[:1, 1], marker="s", s=90, color="black", zorder=6, gid=DEPOT_GID
    )
    for k, stops in enumerate(route_stops(ref)):
        colour = EXACT if pred is not None else ROUTE_COLOURS[k % len(ROUTE_COLOURS)]
        _path(ax, points, stops, color=colour, lw=4, alpha=0.5, gid=EXACT_GID)
    for k, stops in enumerate(route_stops(pred) if pred is not None else []):
        colour = ROUTE_COLOURS[k % len(ROUTE_COLOURS)]
        _path(ax, points, stops, color=colour, lw=1.5, gid=MODEL_GID)


DRAWERS: dict[str, Callable[[Axes, np.ndarray, np.ndarray, np.ndarray | None], None]] = {
    "hull": draw_hull,
    "tour": draw_tour,
    "triangles": draw_triangles,
    "bars": draw_sort,
    "subset": draw_subset,
    "routes": draw_routes,
}
