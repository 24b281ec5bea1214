"""Decode a dataset with a model and score it with the task's metrics.

The metrics are ``task.metrics`` on the decoded sequences, so the keys are exactly those of
``ptrnet score`` on a prediction file. Instances are decoded in batches sorted by n, which keeps
padding small when a dataset mixes sizes; predictions come back in the original order.

Default decoding constraints follow the paper (Sec. 4, Inference): hull and Delaunay decoders are
unconstrained, the TSP beam is restricted to valid tours; sort (not in the paper) is constrained
to permutations like TSP.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ptrnet.tasks import Task

if TYPE_CHECKING:
    from torch import nn

DEFAULT_CONSTRAINTS = {"sort": "task", "convex_hull": "none", "delaunay": "none", "tsp": "task"}
# The decoded metric that picks the best checkpoint (never the teacher-forced loss, trap 7).
PRIMARY_METRIC = {
    "sort": "exact_match",
    "convex_hull": "accuracy",
    "delaunay": "triangle_coverage",
    "tsp": "mean_length",
}
# Breaks ties on the primary metric; TSP's mean length is continuous and needs none.
SECONDARY_METRIC = {
    "sort": "position_accuracy",
    "convex_hull": "area_coverage",
    "delaunay": "accuracy",
    "tsp": None,
}
LOWER_IS_BETTER = frozenset({"mean_length"})
# Which beam a beam search returns: the most likely one (the paper's), or for TSP the shortest
# closed tour among the finished beams (the task's own objective, a cheap rerank).
PICKS = ("likely", "shortest")


def default_constraints(task_name: str) -> str:
    """The paper's decoding constraints for ``task_name``: ``task`` or ``none``."""
    return DEFAULT_CONSTRAINTS[task_name]


def shortest_tour(points: np.ndarray, sequence: np.ndarray) -> float:
    """The rerank cost of ``pick="shortest"``: the closed tour's length; inf for a sequence that
    is not a tour (possible in unconstrained decoding), so such a beam is never picked."""
    from ptrnet.solvers.tsp import tour_length

    try:
        return tour_length(points, sequence)
    except ValueError:
        return math.inf


def beam_reranker(task: Task, strategy: str, pick: str):
    """The ``rerank`` function of :func:`ptrnet.decoding.decode` for ``pick``; None for
    ``likely``.

    Raises:
        ValueError: an unknown pick, or ``shortest`` without beam search or for a task other
            than TSP.
    """
    if pick not in PICKS:
        raise ValueError(f"unknown pick {pick!r}; choose from {', '.join(PICKS)}")
    if pick == "likely":
        return None
    if task.name != "tsp" or strategy != "beam":
        raise ValueError("pick 'shortest' needs beam search on the tsp task")
    return shortest_tour


def selection_key(task_name: str, metrics: dict[str, float]) -> tuple[float, ...]:
    """Sort key of decoded validation metrics: smaller is better.

    The task's primary metric decides; for TSP the share of valid tours comes first, since
    ``mean_length`` averages over valid tours only (with ``task`` constraints every tour is).
    Ties on it are broken by :data:`SECONDARY_METRIC` (a short run whose validations all score
    hull accuracy 0 still improves in area coverage). An undefined or missing value (NaN, or
    None in a JSON record) ranks last. Equal keys are left to the caller: training keeps the
    later checkpoint.
    """
    name = PRIMARY_METRIC[task_name]
    key = (_ranked(name, metrics),)
    if name in LOWER_IS_BETTER:
        key = (-float(metrics.get("valid_rate", 1.0)), *key)
    secondary = SECONDARY_METRIC[task_name]
    return key if secondary is None else (*key, _ranked(secondary, metrics))


def _ranked(name: str, metrics: dict[str, float]) -> float:
    """Metric ``name`` as a smaller-is-better number; inf when missing or undefined."""
    raw = metrics.get(name)  # None stands for NaN in JSON-safe records
    value = math.nan if raw is None else float(raw)
    if not math.isfinite(value):
        return math.inf
    return value if name in LOWER_IS_BETTER else -value


def decode_all(
    model: nn.Module,
    task: Task,
    points_list: Sequence[np.ndarray],
    *,
    strategy: str = "greedy",
    beam_width: int = 5,
    constraints: str | None = None,
    batch_size: int = 256,
    seed: int = 0,
    pick: str = "likely",
    views: int = 1,
) -> list[np.ndarray]:
    """Decode every instance; returns 0-based sequences in the order of ``points_list``.

    Args:
        model: a network taking (B, n, dim) points; put in eval mode for the call.
        points_list: instances, each (n, dim).
        strategy, beam_width: passed to :func:`ptrnet.decoding.decode`.
        constraints: ``none`` or ``task``; None = :func:`default_constraints`.
        batch_size: instances per decoding batch.
        seed: seeds the generator of ``sample`` decoding (same seed, same samples).
        pick: which beam to return, one of :data:`PICKS` (:func:`beam_reranker`).
        views: views of each instance the model decodes (1, 2, 4 or 8; see
            :func:`ptrnet.decoding.decode`).
    """
    import torch

    from ptrnet.batching import collate
    from ptrnet.decoding import decode

    rerank = beam_reranker(task, strategy, pick)
    constraints = constraints or default_constraints(task.name)
    device = next(model.parameters()).device
    generator = torch.Generator(device).manual_seed(seed) if strategy == "sample" else None
    order = np.argsort([len(p) for p in points_list], kind="stable")
    out: list[np.ndarray | None] = [None] * len(points_list)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            for lo in range(0, len(order), batch_size):
                rows = order[lo : lo + batch_size]
                batch = collate([points_list[i] for i in rows]).to(device)
                result = decode(
                    model,
                    task,
                    batch,
                    strategy,
                    constraints=constraints,
                    beam_width=beam_width,
                    generator=generator,
                    rerank=rerank,
                    views=views,
                )
                for i, seq in zip(rows, result.sequences, strict=True):
                    out[i] = np.asarray(seq, dtype=np.int64)
    finally:
        model.train(was_training)
    return out


def evaluate(
    model: nn.Module,
    task: Task,
    points_list: Sequence[np.ndarray],
    refs: Sequence[np.ndarray],
    **decode_options: object,
) -> dict[str, float]:
    """The metrics of the decoded ``points_list`` against ``refs`` (0-based sequences).

    Computed by :func:`ptrnet.evaluation.score.score_examples`, the function behind
    ``ptrnet score``, so the keys and value types are the same. ``decode_options`` are those of
    :func:`decode_all`.
    """
    from ptrnet.evaluation.score import score_examples
    from ptrnet.io.paper_format import Example

    preds = decode_all(model, task, points_list, **decode_options)
    lines = range(1, len(points_list) + 1)
    return score_examples(
        task,
        [Example(p, r, i) for p, r, i in zip(points_list, refs, lines, strict=True)],
        [Example(p, s, i) for p, s, i in zip(points_list, preds, lines, strict=True)],
    )


def evaluate_file(
    model: nn.Module,
    task: Task,
    path: str | os.PathLike[str],
    *,
    limit: int | None = None,
    **decode_options: object,
) -> dict[str, float]:
    """Evaluate on a labelled paper-format file (its first ``limit`` lines if set).

    Raises:
        InputError: if the file is missing, malformed or unlabelled.
    """
    from itertools import islice

    from ptrnet.io.paper_format import iter_examples

    examples = list(islice(iter_examples(path, task, "reference"), limit))
    return evaluate(
        model, task, [e.points for e in examples], [e.seq for e in examples], **decode_options
    )
