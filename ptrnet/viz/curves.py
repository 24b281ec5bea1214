"""Training curves from a run directory's ``log.csv``.

The log (written by :mod:`ptrnet.runs.csvlog`) has one row per logged step and a header
naming the columns. Up to four panels are drawn against ``step``, each from the columns present:

* loss -- every column whose name contains ``loss`` (``loss``, ``val_tf_loss``: teacher-forced);
* decoded validation rates -- the ``val_`` columns of the task's rates and gaps
  (``TaskCard.rate_metrics``: ``val_accuracy``, ``val_mean_gap``), in percent, measured on
  decoded outputs (the metric that picks checkpoints);
* other decoded validation metrics -- every other ``val_`` column (``val_mean_length``, the
  ``val_fail`` flag) on its own axis, drawn only when there is one (flags alone: ``no``/``yes``);
* throughput -- ``examples_per_s``.

The log keeps fractions; only the figure shows percent (docs/commands.md). Empty cells (a
metric logged only every few steps) are skipped, not drawn as zeros.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

from ptrnet.io.errors import InputError
from ptrnet.quoting import quote
from ptrnet.runs import CONFIG_JSON, LOG_CSV
from ptrnet.runs.csvlog import read_rows

STEP = "step"
THROUGHPUT = "examples_per_s"
FLAGS = {"True": 1.0, "False": 0.0}
LOSS, RATES, OTHERS, SPEED = (
    "loss",
    "decoded validation rates",
    "other decoded validation metrics",
    "throughput",
)
#: Each panel's y-axis label, in words with its unit (the others' is their names).
Y_LABELS = {LOSS: "loss", RATES: "percent", SPEED: "examples per second"}
#: Legend words for the columns the log always has (the others': the name in words).
COLUMN_WORDS = {
    "loss": "training loss",
    "val_tf_loss": "validation loss, teacher-forced (nats)",
    THROUGHPUT: "training examples per second",
}


def read_log(path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """Columns of a ``log.csv`` (or of ``RUN_DIR/log.csv``) as float arrays.

    Empty cells become NaN and ``True``/``False`` (flags such as ``val_fail``) 1/0. Blank lines
    are skipped; line numbers in errors count them (the header is line 1).

    Raises:
        FileNotFoundError: no log at ``path``.
        InputError: not UTF-8 or not CSV, no ``step`` column, no rows, a row whose count of
            cells differs from the header's count of columns, or a cell that is not a number.
    """
    path = Path(path)
    if path.is_dir():
        path = path / LOG_CSV
    header, rows = read_rows(path)
    if STEP not in header or not rows:
        raise InputError(path, None, f"need a header with a {STEP!r} column and at least one row")
    for line, cells in rows:
        if len(cells) != len(header):
            cells_text = f"{len(cells)} cell" + ("s" if len(cells) != 1 else "")
            raise InputError(path, line, f"{cells_text}, but the header has {len(header)} columns")
    return {
        name: np.array([_number(path, line, name, cells[col]) for line, cells in rows])
        for col, name in enumerate(header)
    }


def _number(path: Path, line: int, column: str, cell: str) -> float:
    """A cell as a float (module rules); ``line``: its 1-based line, the header being line 1.

    Raises:
        InputError: the cell is neither empty, a flag nor a number.
    """
    if not cell.strip():
        return math.nan
    try:
        return float(FLAGS.get(cell.strip(), cell))
    except ValueError:
        raise InputError(
            path, line, f"column {quote(column)}: {quote(cell)} is not a number"
        ) from None


def run_rates(path: str | os.PathLike[str]) -> frozenset[str]:
    """The rate metrics (``TaskCard.rate_metrics``) of the run whose ``log.csv`` is ``path``
    (or in directory ``path``): its task's, named by ``train.task`` in the ``config.json``
    beside the log; where that is missing, unreadable or names no registered task, every
    task's (no metric is a rate for one task and not for another)."""
    from ptrnet.tasks import TASKS

    path = Path(path)
    folder = path if path.is_dir() else path.parent
    try:
        task = json.loads((folder / CONFIG_JSON).read_text(encoding="utf-8"))["train"]["task"]
        return TASKS[task].rate_metrics
    except (OSError, ValueError, KeyError, TypeError):
        return frozenset().union(*(t.rate_metrics for t in TASKS.values()))


def panel_columns(
    log: dict[str, np.ndarray], rates: frozenset[str] = frozenset()
) -> dict[str, list[str]]:
    """Which columns go in which panel (title -> column names), by the rules above; ``rates``:
    the metric names (without ``val_``) that are rates or gaps. The panel of other metrics is
    left out when it has none."""
    numeric = [c for c in log if c != STEP and not np.all(np.isnan(log[c]))]
    losses = [c for c in numeric if "loss" in c]
    metrics = [c for c in numeric if c.startswith("val_") and c not in losses]
    panels = {
        LOSS: losses,
        RATES: [c for c in metrics if c.removeprefix("val_") in rates],
        OTHERS: [c for c in metrics if c.removeprefix("val_") not in rates],
        SPEED: [c for c in numeric if c == THROUGHPUT],
    }
    if not panels[OTHERS]:
        del panels[OTHERS]
    return panels


def words(column: str) -> str:
    """A column's name in words for a legend or label (``val_mean_gap`` -> ``mean gap``)."""
    return COLUMN_WORDS.get(column, column.removeprefix("val_").replace("_", " "))


def _panel(ax: Axes, log: dict[str, np.ndarray], title: str, columns: list[str]) -> None:
    scale = 100.0 if title == RATES else 1.0  # the log's fractions as percent
    for name in columns:
        keep = ~np.isnan(log[name])
        ax.plot(
            log[STEP][keep],
            scale * log[name][keep],
            marker="." if keep.sum() < 30 else None,
            label=words(name),
        )
    if columns:
        ax.legend(fontsize="small")
    else:
        ax.text(0.5, 0.5, "not in log.csv", ha="center", va="center", transform=ax.transAxes)
    ax.set_title(title)
    ax.set_xlabel("training step")
    ax.set_ylabel(Y_LABELS.get(title) or ", ".join(map(words, columns)))
    if title == OTHERS and all(_is_flag(log[c]) for c in columns):
        ax.set_yticks([0.0, 1.0], ["no", "yes"])
        ax.set_ylim(-0.1, 1.1)
    ax.grid(alpha=0.3)


def _is_flag(values: np.ndarray) -> bool:
    """Whether a column holds only 0 and 1 besides gaps (a flag such as ``val_fail``)."""
    return bool(np.isin(values[~np.isnan(values)], (0.0, 1.0)).all())


def curves_figure(
    log: dict[str, np.ndarray], title: str = "", rates: frozenset[str] = frozenset()
) -> Figure:
    """A figure with the panels side by side (:func:`panel_columns`, ``rates`` as there); the
    loss axis is logarithmic when positive."""
    panels = panel_columns(log, rates)
    fig = Figure(figsize=(5 * len(panels), 4.2), layout="constrained")
    axes = fig.subplots(1, len(panels))
    for ax, (name, columns) in zip(axes, panels.items(), strict=True):
        _panel(ax, log, name, columns)
    losses = [log[c] for c in panels[LOSS]]
    if losses and all(np.nanmin(v) > 0 for v in losses):
        axes[0].set_yscale("log")
        axes[0].yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        axes[0].yaxis.set_major_formatter(FormatStrFormatter("%g"))
        axes[0].yaxis.set_minor_formatter(NullFormatter())
    if title:
        fig.suptitle(title)
    return fig
