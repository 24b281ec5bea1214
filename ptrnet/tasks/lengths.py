"""The metrics of a task whose answer has a length to minimise (TSP, vehicle routing): the
share of valid answers, their mean length and their mean gap to the reference's length."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

#: (points, answer) -> the answer's length.
Length = Callable[[np.ndarray, np.ndarray], float]


def relative_gap(length: float, reference: float) -> float:
    """``length / reference - 1``; for a reference of length 0 (every point at one place, or
    distances below float resolution), 0 when ``length`` is 0 too, else infinity."""
    if reference > 0:
        return length / reference - 1.0
    return 0.0 if length == 0 else math.inf


def length_metrics(
    points: Sequence[np.ndarray],
    refs: Sequence[np.ndarray],
    preds: Sequence[np.ndarray],
    is_valid: Callable[[np.ndarray, np.ndarray], bool],
    length: Length,
) -> dict[str, float]:
    """``valid_rate`` over every instance; ``mean_length`` and ``mean_gap`` (to the reference
    answer's length) over the valid predictions, NaN when none is valid; ``count``."""
    lengths, gaps = [], []
    for x, ref, pred in zip(points, refs, preds, strict=True):
        if is_valid(x, pred):
            lengths.append(length(x, pred))
            gaps.append(relative_gap(lengths[-1], length(x, ref)))
    count = len(refs)
    return {
        "valid_rate": len(lengths) / count,
        "mean_length": float(np.mean(lengths)) if lengths else math.nan,
        "mean_gap": float(np.mean(gaps)) if gaps else math.nan,
        "count": count,
    }
