"""Trap: decoding without the mask.

A pointer network can point at any input at any step; nothing in the network stops it from
naming an input twice or ending early. The mask (-inf on the inputs already output, on the end
symbol before the last) is what makes every output a permutation. Two sorters are trained here
on lists of ``TRAIN_SIZES`` numbers: one as the paper trains (the loss's softmax over every
token, so the model itself must learn not to repeat), one with the mask in the loss too
(``--train-constraints task``: it never learns to avoid a repeat). Each is decoded greedily on
lists of each ``TEST_SIZES``, with the sort task's mask and without any.
"""

from __future__ import annotations

import numpy as np

from ptrnet.lessons.traps.common import Size, fresh_instances, greedy_outputs, train_model
from ptrnet.model import ModelConfig, build_model
from ptrnet.tasks import TASKS

TRAIN_SIZES, TEST_SIZES = (5, 8), (8, 12)
#: The figures that are shares (``repeats_per_output`` is a count), printed in percent.
RATES = frozenset({"invalid", "exact_match"})
SIZES = {"quick": Size(steps=300, batch=64, hidden=64, tests=200),
         "full": Size(steps=1500, batch=64, hidden=64, tests=1000)}  # fmt: skip


def run(size: Size, seed: int) -> dict[str, dict[str, float]]:
    """Per training loss (``plain``, ``masked``), test size and decoding mask (``task`` or
    ``none``): the share of outputs that are not permutations, the mean count of repeated
    indices per output, and exact matches."""
    sort = TASKS["sort"]
    config = ModelConfig(input_dim=1, hidden=size.hidden, init="default")
    figures = {}
    for loss, mask_loss in (("plain", False), ("masked", True)):
        model = train_model(build_model(config), sort, TRAIN_SIZES, size, seed, None, mask_loss)
        figures.update(_decoded(model, f"{loss} loss", size, seed))
    return figures


def _decoded(model, name: str, size: Size, seed: int) -> dict[str, dict[str, float]]:
    sort = TASKS["sort"]
    figures = {}
    for n in TEST_SIZES:
        points, refs = fresh_instances(sort, n, size.tests, seed)
        for constraints in ("task", "none"):
            preds = greedy_outputs(model, sort, points, constraints)
            metrics = sort.dataset_metrics(points, refs, preds)
            figures[f"{name}, n={n}, decoded mask={constraints}"] = {
                "invalid": round(1 - metrics["valid_rate"], 4),
                "repeats_per_output": round(float(np.mean([repeats(p) for p in preds])), 4),
                "exact_match": round(metrics["exact_match"], 4),
            }
    return figures


def repeats(seq: np.ndarray) -> int:
    """How many indices of ``seq`` repeat an earlier one."""
    return len(seq) - len(np.unique(seq))
