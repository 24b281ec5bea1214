"""Trap: inconsistent label order.

A hull is the same polygon from any start vertex, in either direction, but a model trained by
maximum likelihood must learn *one* sequence per input. ptrnet's labels are canonical
(counter-clockwise from the lowest index, :mod:`ptrnet.tasks.convex_hull`). Labels written from
a random start vertex in a random direction ask the model to predict a coin toss at the first
two steps: its probability is spread over the 2h ways of writing one hull of h vertices, so
even a perfect model gives its best answer at most 1/(2h). Two models are trained here on
hulls of ``TRAIN_SIZES`` points, one on each labelling, and scored by the same rule (the right
polygon whatever its start and direction) on fresh instances of ``TEST_N`` points, beside the
mean probability each gives its own greedy answer. The full size is past the plateau a hull's
loss sits on for its first 1,500 steps or so, where the canonical model is the more often
right (docs/traps.md); the quick size is not, and shows the spread only.
"""

from __future__ import annotations

import numpy as np

from ptrnet.datasets.batching import collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.options import DecodeOptions
from ptrnet.lessons.traps.common import Size, fresh_instances, train_model
from ptrnet.model import ModelConfig, build_model
from ptrnet.tasks import TASKS
from ptrnet.tasks.sequences import open_cycle

TRAIN_SIZES, TEST_N = (5, 5), 5
#: The figures that are shares, printed in percent (``p(own answer)``, a mean probability,
#: is printed as the number it is).
RATES = frozenset({"accuracy (task mask)", "accuracy (none mask)"})
SIZES = {"quick": Size(steps=600, batch=64, hidden=64, tests=200),
         "full": Size(steps=3000, batch=64, hidden=64, tests=1000)}  # fmt: skip


def random_order(points: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The hull label of ``points`` from a random vertex, in a random direction, closed."""
    cycle = open_cycle(TASKS["convex_hull"].solve(points))
    cycle = np.roll(cycle, -int(rng.integers(len(cycle))))
    if rng.random() < 0.5:
        cycle = cycle[::-1]
    return np.append(cycle, cycle[0])


def run(size: Size, seed: int) -> dict[str, dict[str, float]]:
    """Per labelling (``canonical``, ``random start and direction``): accuracy of greedy
    decoding under the hull's mask (``task``: a closed convex polygon) and without one
    (``none``, the paper's), and the mean probability of the greedy answer (task mask)."""
    hull = TASKS["convex_hull"]
    points, refs = fresh_instances(hull, TEST_N, size.tests, seed)
    figures = {}
    for name, labeler in (("canonical", None), ("random start and direction", random_order)):
        # the paper's uniform init, as the bundled hull model's (the figures in docs/traps.md)
        config = ModelConfig(input_dim=2, hidden=size.hidden, init="paper")
        # no mask in the loss: the hull's mask allows only counter-clockwise polygons
        model = train_model(build_model(config), hull, TRAIN_SIZES, size, seed, labeler, False)
        figures[name] = {}
        for mask in ("task", "none"):
            options = DecodeOptions(strategy="greedy", constraints=mask)
            found = decode(model, hull, collate(points), options)
            accuracy = hull.dataset_metrics(points, refs, found.sequences)["accuracy"]
            figures[name][f"accuracy ({mask} mask)"] = round(accuracy, 4)
            if mask == "task":
                figures[name]["p(own answer)"] = round(float(found.log_prob.exp().mean()), 4)
    return figures
