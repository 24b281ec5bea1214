"""Trap: mixing instead of pointing.

Ordinary attention mixes: its softmax weights average the encoder states into a context, and a
classifier of fixed size reads the answer from it (the paper's attention baseline, Sec. 2.2,
:class:`ptrnet.model.baselines.AttentionSeq2Seq`; the web page's mixing panel draws the same
average). Such a classifier has one output class per position, so a class it never saw as an
answer in training stays untrained. A pointer's output *is* the attention over the inputs, so
it names position 9 as it names position 3. Both are trained here to sort lists of
4 to ``TRAIN_N`` numbers (the classifier built with room for ``TEST_N`` classes) and tested on lists
of ``TRAIN_N`` and ``TEST_N``.
"""

from __future__ import annotations

import numpy as np

from ptrnet.lessons.traps.common import Size, fresh_instances, greedy_outputs, train_model
from ptrnet.model import ModelConfig, build_model
from ptrnet.tasks import TASKS

TRAIN_N, TEST_N = 6, 8
#: The figures that are shares, which ``ptrnet lesson`` prints in percent.
RATES = frozenset({"positions_right", "beyond_training_right"})
SIZES = {"quick": Size(steps=600, batch=64, hidden=64, tests=200),
         "full": Size(steps=1500, batch=64, hidden=64, tests=1000)}  # fmt: skip


def run(size: Size, seed: int) -> dict[str, dict[str, float]]:
    """Per model (``pointer``, ``attention``) and test size: the share of output positions
    right, and the share right among those whose answer is an input beyond ``TRAIN_N``."""
    sort = TASKS["sort"]
    configs = {
        "pointer": ModelConfig(input_dim=1, hidden=size.hidden, init="default"),
        "attention": ModelConfig(
            kind="attention", input_dim=1, hidden=size.hidden, max_n=TEST_N, init="default"
        ),
    }
    figures = {}
    for name, config in configs.items():
        model = train_model(build_model(config), sort, (TRAIN_N - 2, TRAIN_N), size, seed)
        for n in (TRAIN_N, TEST_N):
            points, refs = fresh_instances(sort, n, size.tests, seed)
            preds = greedy_outputs(model, sort, points, constraints="task")
            figures[f"{name} n={n}"] = positions_right(refs, preds, TRAIN_N)
    return figures


def positions_right(refs: list, preds: list, seen: int) -> dict[str, float]:
    """Share of output steps whose index is right, over all steps and over the steps whose
    right answer is an input beyond the first ``seen`` (None when there are none)."""
    ref = np.concatenate([np.asarray(r) for r in refs])
    pred = np.concatenate([np.asarray(p)[: len(r)] for r, p in zip(refs, preds, strict=True)])
    right = pred == ref
    beyond = ref >= seen
    return {
        "positions_right": round(float(right.mean()), 4),
        "beyond_training_right": round(float(right[beyond].mean()), 4) if beyond.any() else None,
    }
