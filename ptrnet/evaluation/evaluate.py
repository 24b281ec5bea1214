"""Decode a dataset with a model and score it with the task's metrics.

The metrics are ``task.metrics`` on the decoded sequences (through
:func:`ptrnet.evaluation.score.score_examples`), so the keys are exactly those of ``ptrnet
score`` on a prediction file. Decoding is :func:`ptrnet.decoding.dataset.decode_all` with one
:class:`ptrnet.decoding.options.DecodeOptions`; by default greedy under the task's rules (the
``valid`` protocol); ``protocol="paper"`` decodes as the paper does (Sec. 4).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ptrnet.decoding.dataset import decode_all
from ptrnet.evaluation.score import score_examples
from ptrnet.io.paper_format import Example
from ptrnet.tasks import Task

if TYPE_CHECKING:
    from torch import nn

    from ptrnet.decoding.options import DecodeOptions


def evaluate(
    model: nn.Module,
    task: Task,
    points_list: Sequence[np.ndarray],
    refs: Sequence[np.ndarray],
    options: DecodeOptions | None = None,
) -> dict[str, float]:
    """The metrics of the decoded ``points_list`` against ``refs`` (0-based sequences).

    Computed by :func:`ptrnet.evaluation.score.score_examples`, the function behind
    ``ptrnet score``, so the keys and value types are the same. ``options`` None decodes
    with the defaults (greedy, the task's rules).
    """

    preds = decode_all(model, task, points_list, options)
    lines = range(1, len(points_list) + 1)
    return score_examples(
        task,
        [Example(p, r, i) for p, r, i in zip(points_list, refs, lines, strict=True)],
        [Example(p, s, i) for p, s, i in zip(points_list, preds, lines, strict=True)],
    )
