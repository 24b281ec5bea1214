"""Training curves from a run directory's ``log.csv``.

The log (written by :mod:`ptrnet.runs.csvlog`) has one row per logged step and a header
naming the columns. Three panels are drawn
against ``step``, each from the columns present:

* loss -- every column whose name contains ``loss`` (``loss``, ``val_tf_loss``: teacher-forced);
* decoded metrics -- every other ``val_`` column (e.g. ``val_accuracy``, ``val_mean_gap``),
  measured on decoded outputs (the metric that picks checkpoints);
* throughput -- ``examples_per_s``.

Empty cells (a metric logged only every few steps) are skipped, not drawn as zeros.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

from ptrnet.io.errors import InputError
from ptrnet.quoting import quote
from ptrnet.runs import LOG_CSV
from ptrnet.runs.csvlog import read_rows

STEP = "step"
THROUGHPUT = "examples_per_s"
FLAGS = {"True": 1.0, "False": 0.0}


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


def panel_columns(log: dict[str, np.ndarray]) -> dict[str, list[str]]:
    """Which columns go in which panel (title -> column names), by the rules above."""
    numeric = [c for c in log if c != STEP and not np.all(np.isnan(log[c]))]
    losses = [c for c in numeric if "loss" in c]
    metrics = [c for c in numeric if c.startswith("val_") and c not in losses]
    return {
        "loss": losses,
        "decoded validation metrics": metrics,
        "throughput (examples/s)": [c for c in numeric if c == THROUGHPUT],
    }


def _panel(ax: Axes, log: dict[str, np.ndarray], title: str, columns: list[str]) -> None:
    for name in columns:
        keep = ~np.isnan(log[name])
        ax.plot(
            log[STEP][keep], log[name][keep], marker="." if keep.sum() < 30 else None, label=name
        )
    if columns:
        ax.legend(fontsize="small")
    else:
        ax.text(0.5, 0.5, "not in log.csv", ha="center", va="center", transform=ax.transAxes)
    ax.set_title(title)
    ax.set_xlabel(STEP)
    ax.grid(alpha=0.3)


def curves_figure(log: dict[str, np.ndarray], title: str = "") -> Figure:
    """A figure with the three panels side by side; the loss axis is logarithmic when positive."""
    fig = Figure(figsize=(15, 4.2), layout="constrained")
    axes = fig.subplots(1, 3)
    for ax, (name, columns) in zip(axes, panel_columns(log).items(), strict=True):
        _panel(ax, log, name, columns)
    losses = [log[c] for c in panel_columns(log)["loss"]]
    if losses and all(np.nanmin(v) > 0 for v in losses):
        axes[0].set_yscale("log")
        axes[0].yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        axes[0].yaxis.set_major_formatter(FormatStrFormatter("%g"))
        axes[0].yaxis.set_minor_formatter(NullFormatter())
    if title:
        fig.suptitle(title)
    return fig
