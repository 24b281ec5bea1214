"""Trap: decoding without the mask.

A pointer network can point at any input at any step; nothing in the network stops it from
naming an input twice or ending early. The mask (-inf on the inputs already output, on the end
symbol before the last) is what makes every output a permutation. A sorter is trained here on
lists of ``TRAIN_SIZES`` numbers and decoded greedily on lists of each ``TEST_SIZES``, with the
sort task's mask and without any.
"""

from __future__ import annotations

import numpy as np

from ptrnet.lessons.traps.common import Size, fresh_instances, greedy_outputs, train_model
from ptrnet.model import ModelConfig, build_model
from ptrnet.tasks import TASKS

TRAIN_SIZES, TEST_SIZES = (5, 8), (8, 12)
SIZES = {"quick": Size(steps=300, batch=64, hidden=64, tests=200),
         "full": Size(steps=1500, batch=64, hidden=64, tests=1000)}  # fmt: skip


def run(size: Size, seed: int) -> dict[str, dict[str, float]]:
    """Per test size and mask (``task`` or ``none``): the share of outputs that are not
    permutations, the mean count of repeated indices per output, and exact matches."""
    sort = TASKS["sort"]
    config = ModelConfig(input_dim=1, hidden=size.hidden, init="default")
    model = train_model(build_model(config), sort, TRAIN_SIZES, size, seed)
    figures = {}
    for n in TEST_SIZES:
        points, refs = fresh_instances(sort, n, size.tests, seed)
        for constraints in ("task", "none"):
            preds = greedy_outputs(model, sort, points, constraints)
            metrics = sort.dataset_metrics(points, refs, preds)
            figures[f"n={n} mask={constraints}"] = {
                "invalid": round(1 - metrics["valid_rate"], 4),
                "repeats_per_output": round(float(np.mean([repeats(p) for p in preds])), 4),
                "exact_match": round(metrics["exact_match"], 4),
            }
    return figures


def repeats(seq: np.ndarray) -> int:
    """How many indices of ``seq`` repeat an earlier one."""
    return len(seq) - len(np.unique(seq))
