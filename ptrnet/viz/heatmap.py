"""The pointer heatmap: one row per decoding step, one column per input position and the end.

Column 0 is the end symbol ⇐ and column ``j`` is input ``j`` in 1-based numbering -- exactly the
model's token ``j`` (see :mod:`ptrnet.tasks.base`). The shade of a cell is the probability the
(masked) pointer distribution gave that token at that step. The chosen token of every step is
outlined; where it differs from the reference token at the same step it gets a red cross
instead. The comparison is step by step, so a hull emitted in another rotation counts as wrong
even if it is the same polygon.
"""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.lines import Line2D

from ptrnet.tasks.base import END_TOKEN
from ptrnet.viz.draw import WRONG

RIGHT = "#1f77b4"
TICK_LIMIT = 30  # more columns or rows than this: thin the tick labels


def wrong_steps(chosen: np.ndarray, ref_tokens: np.ndarray) -> np.ndarray:
    """(T,) bool: steps whose chosen token differs from the reference token at that step.

    Steps beyond the end of the reference are all wrong.
    """
    chosen = np.asarray(chosen, dtype=np.int64)
    ref = np.full(len(chosen), -1, dtype=np.int64)
    k = min(len(chosen), len(ref_tokens))
    ref[:k] = np.asarray(ref_tokens, dtype=np.int64)[:k]
    return chosen != ref


def _ticks(count: int) -> np.ndarray:
    step = max(1, int(np.ceil(count / TICK_LIMIT)))
    return np.arange(0, count, step)


def draw_heatmap(
    ax: Axes, probs: np.ndarray, chosen: np.ndarray, ref_tokens: np.ndarray | None = None
):
    """Draw the pointer distributions of one decoded instance.

    Args:
        ax: the axes to draw on.
        probs: (T, n+1) probabilities per step (column 0 = end symbol).
        chosen: (T,) tokens the decoder emitted.
        ref_tokens: reference tokens (end symbol included), or None to mark no errors.

    Returns:
        The image, for a colorbar.
    """
    probs = np.asarray(probs, dtype=np.float64)
    steps, cols = probs.shape
    image = ax.imshow(
        probs, cmap="Greys", vmin=0.0, vmax=1.0, aspect="auto", interpolation="nearest"
    )
    wrong = np.zeros(steps, bool) if ref_tokens is None else wrong_steps(chosen, ref_tokens)
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
        Line2D([], [], ls="", marker="s", mfc="none", mec=RIGHT, label="chosen, as reference"),
        Line2D([], [], ls="", marker="x", color=WRONG, label="chosen, differs from reference"),
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
