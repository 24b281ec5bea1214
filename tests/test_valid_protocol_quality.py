"""The default decoding is never worse than the paper's: for every bundled model folder, every
model its sizes route to and every size ``ptrnet demo`` shows, the ``valid`` protocol (what every
front end gives by default) scores at least what the ``paper`` protocol does, within noise.

Both protocols decode the same fresh instances (the demo's stream, a fixed seed), greedily and
by beam search as the demo does. Per instance, the task's validation metric and its tiebreak
metric are compared in pairs: the valid protocol's mean may fall short of the paper's by at most
two standard errors of the paired differences (none when they all agree). An instance counts
alone, so the convex hull's area coverage of a non-simple polygon is 0, where the paper's
dataset figure leaves that instance out. Where both protocols name the same mask (TSP, sort,
knapsack: the paper's own mask is the task's rules), they are one decoding, and that is checked
instead of decoding twice.
"""

import math
import os

import numpy as np
import pytest
import torch

from ptrnet.decoding.options import DEFAULT_BEAM_WIDTH, DecodeOptions
from ptrnet.inference import bundled_model_dir, load_model, predict
from ptrnet.tasks import POINT_TASKS, SizeRange, Stream, get_point_task

torch.set_num_threads(1)
SEED, COUNT = 54, 40  # fresh demo-stream instances (the demo itself draws seed 2026)
BUNDLED = [name for name in POINT_TASKS if os.path.isdir(bundled_model_dir(name))]
DECODINGS = {"greedy": {}, "beam": {"strategy": "beam", "beam_width": DEFAULT_BEAM_WIDTH}}


def sizes_to_check(task, loaded) -> list[int]:
    """The demo's sizes, the smallest size of every route, and a size the folder's own model
    serves (the first from the smallest demo size up that no route lists)."""
    sizes = {*task.demo_sizes, *(route.sizes.lo for route in loaded.routes)}
    own = min(task.demo_sizes)
    while loaded.for_size(own) is not loaded:
        own += 1
    return sorted(sizes | {own})


def same_mask(task) -> bool:
    """Whether the two protocols decode under one mask (and so give the same outputs)."""
    valid, paper = (DecodeOptions(protocol=p).for_task(task) for p in ("valid", "paper"))
    return valid.constraints == paper.constraints


def per_instance(task, points, refs, preds, key) -> np.ndarray:
    """(count,) the metric ``key`` of each instance on its own, oriented higher = better."""
    sign = -1.0 if key == task.validation_metric and task.lower_is_better else 1.0
    values = [task.metrics([x], [r], [p])[key] for x, r, p in zip(points, refs, preds, strict=True)]
    return sign * np.array(values, dtype=float)


def shortfall(valid: np.ndarray, paper: np.ndarray) -> tuple[float, float]:
    """(mean shortfall of valid below paper, two standard errors of the paired differences)."""
    diff = valid - paper
    spread = 2 * diff.std(ddof=1) / math.sqrt(len(diff)) if len(diff) > 1 else 0.0
    return float(-diff.mean()), float(spread)


CASES = [(name, decoding) for name in BUNDLED for decoding in DECODINGS]


@pytest.mark.parametrize(("name", "decoding"), CASES)
def test_valid_protocol_is_at_least_the_papers_on_every_route_and_demo_size(name, decoding):
    task = get_point_task(name)
    if same_mask(task):
        return  # one mask, one decoding: nothing can differ
    loaded = load_model(None, name)
    keys = [k for k in (task.validation_metric, task.tiebreak_metric) if k]
    problems = []
    for n in sizes_to_check(task, loaded):
        points = task.generate(SizeRange(n, n), COUNT, SEED, stream=Stream.DEMO)
        refs = [task.solve(x) for x in points]
        preds = {
            protocol: predict(
                loaded, task, points, DecodeOptions(**DECODINGS[decoding], protocol=protocol)
            )
            for protocol in ("valid", "paper")
        }
        for key in keys:
            scores = {p: per_instance(task, points, refs, preds[p], key) for p in preds}
            short, noise = shortfall(scores["valid"], scores["paper"])
            if short > noise + 1e-9:
                problems.append(
                    f"n = {n} {key}: valid {scores['valid'].mean():.4f} < paper "
                    f"{scores['paper'].mean():.4f} by {short:.4f} (noise {noise:.4f})"
                )
    assert not problems, f"{name} {decoding}: " + "; ".join(problems)
