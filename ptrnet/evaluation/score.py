"""Score predictions in the paper's format against reference labels (the paper's metrics).

Any implementation can be scored: its predictions file must hold the same instances as the
reference file, line for line, each with an ``output`` part (1-based indices, see
:mod:`ptrnet.io.paper_format`). Points must agree within ``POINT_TOL`` (relative and absolute),
so predictions written with five or more decimals are accepted; the metrics use the reference's
points. Predictions may be structurally invalid (an open hull, a tour with a repeat): that is
what the metrics measure; they must still consist of integer indices in 1..n.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

import numpy as np

from ptrnet.io.errors import InputError
from ptrnet.io.paper_format import Example, read_examples
from ptrnet.tasks import Task, get_point_task
from ptrnet.tasks.card import TaskCard

POINT_TOL = 1e-5  # covers coordinates re-printed with >= 5 decimals; real mismatches are larger


def check_aligned(
    refs: Sequence[Example],
    preds: Sequence[Example],
    ref_path: str | os.PathLike[str],
    pred_path: str | os.PathLike[str],
) -> None:
    """Raise unless ``preds`` hold the instances of ``refs``, one for one, in the same order.

    Raises:
        InputError: at the first prediction line whose points differ, or where the counts part.
    """
    for ref, pred in zip(refs, preds, strict=False):  # counts checked below
        problem = _points_problem(ref.points, pred.points)
        if problem:
            raise InputError(
                pred_path,
                pred.line,
                f"points differ from {os.fspath(ref_path)}:{ref.line}: {problem}",
            )
    if len(preds) != len(refs):
        line = preds[len(refs)].line if len(preds) > len(refs) else preds[-1].line + 1
        raise InputError(
            pred_path,
            line,
            f"{len(preds)} predictions for {len(refs)} reference "
            f"instances in {os.fspath(ref_path)}",
        )


def _points_problem(ref: np.ndarray, pred: np.ndarray) -> str | None:
    """How two instances differ, or None when equal within ``POINT_TOL``."""
    if len(ref) != len(pred):
        return f"{len(pred)} points, reference has {len(ref)}"
    if ref.shape != pred.shape:  # a knapsack's capacity column (n, 3) on one side only
        sides = ("the prediction", "the reference")
        stated, bare = sides if pred.shape[1] > ref.shape[1] else sides[::-1]
        return f"{stated} states a capacity, {bare} none (give both the same, e.g. --capacity)"
    close = np.isclose(pred, ref, rtol=POINT_TOL, atol=POINT_TOL).ravel()
    if close.all():
        return None
    k = int(np.flatnonzero(~close)[0])
    return f"coordinate {k + 1} is {float(pred.ravel()[k])!r}, reference {float(ref.ravel()[k])!r}"


def score_examples(task: Task, refs: Sequence[Example], preds: Sequence[Example]) -> dict:
    """The task's metrics over aligned examples (see :func:`check_aligned`).

    Returns ``{metric: value}`` with ``task.metric_keys`` then ``count``, as plain Python
    numbers (rates are fractions in [0, 1]; ``fail`` is a bool; NaN where a mean is undefined).
    """
    result = task.metrics([r.points for r in refs], [r.seq for r in refs], [p.seq for p in preds])
    return {key: _plain(result[key]) for key in (*task.metric_keys, "count")}


def _plain(value: object) -> bool | int | float:
    """numpy scalars -> Python bool, int or float (so callers can serialise them)."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    return float(value)


def score_files(
    task: Task | str, ref_path: str | os.PathLike[str], pred_path: str | os.PathLike[str]
) -> dict:
    """Read a reference and a predictions file and return the paper's metrics for ``task``.

    Raises:
        InputError: a malformed line in either file, an invalid reference label, or files
            whose instances do not match line for line.
        ValueError: an unknown task name.
    """
    task = get_point_task(task, "scoring") if isinstance(task, str) else task
    refs = read_examples(ref_path, task, "reference")
    preds = read_examples(pred_path, task, "prediction")
    check_aligned(refs, preds, ref_path, pred_path)
    return score_examples(task, refs, preds)


FAIL = "FAIL"  # the paper's flag, spelled as the paper spells it in every human-readable output


def area_text(metrics: dict) -> str:
    """Hull area coverage as the paper reports it: ``99.6%``, or ``FAIL`` when the flag is set,
    followed by the area over the simple polygons and the share not simple where both are
    known: ``FAIL (99.7%; 1.1% not simple)``."""
    area = metrics.get("area_coverage")
    if not metrics.get("fail"):
        return percent(area)
    bad = metrics.get("non_simple_rate")
    known = not (_undefined(area) or _undefined(bad))
    return f"{FAIL} ({percent(area)}; {percent(bad)} not simple)" if known else FAIL


def percent(value: float | None, decimals: int = 1) -> str:
    """A rate or gap as a fraction (0.123) in percent with ``decimals`` decimals (``12.3%``);
    ``—`` when undefined. Every human-readable table and title shows rates and gaps so
    (``ptrnet demo``, ``eval``, ``score``, ``plot``, training's progress lines); JSON keeps
    the fraction."""
    return "—" if _undefined(value) else f"{100 * value:.{decimals}f}%"


def metric_text(task: TaskCard, key: str, value: float | None) -> str:
    """``value`` of ``task``'s metric ``key`` for a person to read: a rate or gap
    (``task.rate_metrics``) in percent to 2 decimals (``3.20%``), another number to 4
    significant digits; ``—`` when undefined. Training's progress and summary lines show
    metrics so; ``log.csv`` and ``best.json`` keep the fractions."""
    if key in task.rate_metrics:
        return percent(value, 2)
    return "—" if _undefined(value) else f"{value:.4g}"


def _undefined(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def json_safe(metrics: dict) -> dict:
    """``metrics`` with NaN replaced by None, since JSON has no NaN."""
    return {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in metrics.items()}
