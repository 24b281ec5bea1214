"""The composed figures ``ptrnet plot`` saves: a prediction with its heatmap, and curves."""

from __future__ import annotations

import math
import os

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ptrnet.evaluation.score import percent
from ptrnet.tasks import Task, to_tokens
from ptrnet.tasks.base import trim_steps
from ptrnet.viz.draw import draw_solution
from ptrnet.viz.heatmap import draw_heatmap
from ptrnet.viz.labels import separate_labels

DPI = 110  # the figures' resolution, on screen and in the PNG: labels are placed at it


def metrics_line(task: Task, points: np.ndarray, ref: np.ndarray, pred: np.ndarray) -> str:
    """The task's metrics for one prediction in words, e.g. for a title: ``valid rate
    100.00%, length 197.9, gap 0.41%``. Rates and gaps (``Task.rate_metrics``) are in percent
    as every table shows them (:func:`ptrnet.evaluation.score.percent`), other values to 4
    significant digits; a key's underscores are spaces, without the ``mean`` of a dataset
    metric (one instance has no mean)."""
    values = task.metrics([points], [ref], [pred])
    parts = []
    for key in task.metric_keys:
        words = key.replace("_", " ").removeprefix("mean ")
        value = values[key]
        if isinstance(value, bool | np.bool_):
            parts.append(f"{words} {'yes' if value else 'no'}")
        elif math.isnan(float(value)):
            parts.append(f"{words} n/a")
        elif key in task.rate_metrics:
            parts.append(f"{words} {percent(float(value), 2)}")
        else:
            parts.append(f"{words} {float(value):.4g}")
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
    reference: str = "exact",
    decoded: np.ndarray | None = None,
    answer: str = "model",
) -> Figure:
    """The instance with the reference (and the model's output), plus the heatmap; point
    labels set apart so that none overlaps another (:mod:`ptrnet.viz.labels`).

    Args:
        task: the task the instance belongs to.
        points: (n, dim) instance. ref: reference 0-based sequence. pred: the output drawn,
            0-based (the model's, or the tour a search made of it).
        probs: (T, >= n+1) pointer distributions per step, with ``tokens`` (T,) the emitted
            model tokens; both or neither. Steps after the first end token are not drawn.
            Each step is marked as agreeing with ``ref`` or not as the task compares them
            (:meth:`ptrnet.tasks.base.Task.steps_as_reference`: TSP by undirected edges).
        title: the first title lines; the metrics of ``pred`` follow on the next.
        names: the points' names, which label them instead of their 1-based indices.
        reference: what ``ref`` is, in the legend (``exact``, ``heuristic reference`` ...).
        decoded: the model's own output when ``pred`` is a search's tour made from it: the
            heatmap, which shows the model's steps, is titled with its metrics.
        answer: what ``pred`` is, in the legend (``model``; ``model, then the search`` with
            ``decoded``; ``prediction`` for a file's).
    """
    if (probs is None) != (tokens is None):
        raise ValueError("probs and tokens go together")
    heat = probs is not None
    fig = Figure(figsize=(15, 6.5) if heat else (7.5, 6.5), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(
        1, 2 if heat else 1, squeeze=False, width_ratios=[1.25, 1] if heat else None
    )[0]
    if decoded is not None and answer == "model":
        answer = "model, then the search"
    draw_solution(
        axes[0], task.name, points, ref, pred, names, reference, legend_below=True, answer=answer
    )
    if heat:
        steps = trim_steps(tokens)
        n = len(points)
        image = draw_heatmap(
            axes[1],
            probs[:steps, : n + 1],
            tokens[:steps],
            task.steps_as_reference(tokens[:steps], to_tokens(ref)),
            task.step_agreement,
        )
        fig.colorbar(image, ax=axes[1], label="pointer probability")
        if decoded is not None:
            axes[1].set_title(
                f"the model's own steps, before the search: "
                f"{metrics_line(task, points, ref, decoded)}",
                fontsize="medium",
            )
    lines = [title] if title else []
    if pred is not None:
        lines.append(metrics_line(task, points, ref, pred))
    if lines:
        fig.suptitle("\n".join(lines))
    set_labels_apart(fig)
    return fig


def set_labels_apart(fig: Figure) -> None:
    """Fix ``fig``'s layout (:func:`fix_layout`), then move the point labels of each of its
    axes apart (:func:`ptrnet.viz.labels.separate_labels`); axes without labels are left
    alone. Call it once everything is drawn; ``fig`` must have a canvas."""
    fix_layout(fig)
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        separate_labels(ax, renderer)


def fix_layout(fig: Figure) -> None:
    """Lay ``fig`` out once (its layout engine placing axes, legends, colorbar and title) and
    keep that layout: labels are then placed against axes that no longer move."""
    fig.draw_without_rendering()
    fig.set_layout_engine("none")


def save_png(fig: Figure, path: str | os.PathLike[str]) -> None:
    """Render ``fig`` with Agg to a PNG at ``path``."""
    fig.savefig(path, dpi=DPI, format="png")
