"""The composed figures ``ptrnet plot`` saves: a prediction with its heatmap, and curves."""

from __future__ import annotations

import math
import os

import numpy as np
from matplotlib.figure import Figure

from ptrnet.tasks import Task, to_tokens
from ptrnet.tasks.base import trim_steps
from ptrnet.viz.draw import draw_solution
from ptrnet.viz.heatmap import draw_heatmap


def metrics_line(task: Task, points: np.ndarray, ref: np.ndarray, pred: np.ndarray) -> str:
    """The task's metrics for one prediction as ``key value`` pairs, e.g. for a title."""
    values = task.metrics([points], [ref], [pred])
    parts = []
    for key in task.metric_keys:
        value = float(values[key])
        parts.append(f"{key} {'n/a' if math.isnan(value) else f'{value:.3g}'}")
    return ", ".join(parts)


def prediction_figure(
    task: Task,
    points: np.ndarray,
    ref: np.ndarray,
    pred: np.ndarray | None = None,
    probs: np.ndarray | None = None,
    tokens: np.ndarray | None = None,
    title: str = "",
    names: tuple[str, ...] | None = None,
) -> Figure:
    """The instance with the exact solution (and the model's output), plus the heatmap.

    Args:
        task: the task the instance belongs to.
        points: (n, dim) instance. ref: exact 0-based sequence. pred: model's 0-based sequence.
        probs: (T, >= n+1) pointer distributions per step, with ``tokens`` (T,) the emitted
            model tokens; both or neither. Steps after the first end token are not drawn.
        title: a first title line; the metrics follow on a second when ``pred`` is given.
        names: the points' names, which label them instead of their 1-based indices.
    """
    if (probs is None) != (tokens is None):
        raise ValueError("probs and tokens go together")
    heat = probs is not None
    fig = Figure(figsize=(14, 6.5) if heat else (7, 6.5), layout="constrained")
    axes = fig.subplots(1, 2 if heat else 1, squeeze=False)[0]
    draw_solution(axes[0], task.name, points, ref, pred, names)
    if heat:
        steps = trim_steps(tokens)
        n = len(points)
        image = draw_heatmap(axes[1], probs[:steps, : n + 1], tokens[:steps], to_tokens(ref))
        fig.colorbar(image, ax=axes[1], label="pointer probability")
    lines = [title] if title else []
    if pred is not None:
        lines.append(metrics_line(task, points, ref, pred))
    if lines:
        fig.suptitle("\n".join(lines))
    return fig


def save_png(fig: Figure, path: str | os.PathLike[str]) -> None:
    """Render ``fig`` with Agg to a PNG at ``path``."""
    fig.savefig(path, dpi=110, format="png")
