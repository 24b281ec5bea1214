"""The pointer heatmap: one row per decoding step, one column per input position and the end.

Column 0 is the end symbol ⇐ and column ``j`` is input ``j`` in 1-based numbering -- exactly the
model's token ``j`` (see :mod:`ptrnet.tasks.base`). The shade of a cell is the probability the
(masked) pointer distribution gave that token at that step. The chosen token of every step is
outlined where it agrees with the reference and crossed in red where it does not; the task says
what agreeing means (:meth:`ptrnet.tasks.base.Task.steps_as_reference`) and names both marks
(``Task.step_agreement``). By default it is the reference's token at the same step (sort,
Delaunay, knapsack); a hull or TSP step agrees when it travels an edge of the reference cycle
either way round, so a tour run the other way round from the reference, or a hull begun at
another vertex, agrees at every step, as the metrics count it right.
"""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.lines import Line2D

from ptrnet.tasks.base import END_TOKEN
from ptrnet.viz.draw import WRONG

RIGHT = "#1f77b4"
TICK_LIMIT = 30  # more columns or rows than this: thin the tick labels


def _ticks(count: int) -> np.ndarray:
    step = max(1, int(np.ceil(count / TICK_LIMIT)))
    return np.arange(0, count, step)


def draw_heatmap(
    ax: Axes,
    probs: np.ndarray,
    chosen: np.ndarray,
    agrees: np.ndarray | None = None,
    marks: tuple[str, str] = ("as reference", "differs from reference"),
):
    """Draw the pointer distributions of one decoded instance.

    Args:
        ax: the axes to draw on.
        probs: (T, n+1) probabilities per step (column 0 = end symbol).
        chosen: (T,) tokens the decoder emitted.
        agrees: (T,) bool, the steps that agree with the reference
            (:meth:`ptrnet.tasks.base.Task.steps_as_reference`), or None to mark no errors.
        marks: the legend's words for an agreeing step and for one that does not
            (``Task.step_agreement``).

    Returns:
        The image, for a colorbar.
    """
    probs = np.asarray(probs, dtype=np.float64)
    chosen = np.asarray(chosen, dtype=np.int64)
    steps, cols = probs.shape
    image = ax.imshow(
        probs, cmap="Greys", vmin=0.0, vmax=1.0, aspect="auto", interpolation="nearest"
    )
    wrong = np.zeros(steps, bool) if agrees is None else ~np.asarray(agrees, dtype=bool)
    rows = np.arange(steps)
    ax.scatter(
        chosen[~wrong],
        rows[~wrong],
        marker="s",
        s=60,
        facecolors="none",
        edgecolors=RIGHT,
        linewidths=1.5,
    )
    ax.scatter(chosen[wrong], rows[wrong], marker="x", s=50, color=WRONG, linewidths=1.8)
    xt, yt = _ticks(cols), _ticks(steps)
    ax.set_xticks(xt, ["⇐" if j == END_TOKEN else str(j) for j in xt], fontsize=7)
    ax.set_yticks(yt, [str(i + 1) for i in yt], fontsize=7)
    ax.set_xlabel("pointer target: ⇐ end symbol, then input 1..n")
    ax.set_ylabel("decoding step")
    handles = [
        Line2D([], [], ls="", marker="s", mfc="none", mec=RIGHT, label=f"chosen, {marks[0]}"),
        Line2D([], [], ls="", marker="x", color=WRONG, label=f"chosen, {marks[1]}"),
    ]
    ax.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.12),
        ncol=2,
        fontsize="small",
        frameon=False,
    )
    return image
