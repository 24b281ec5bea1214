"""The small teacher-forced training loop and the greedy evaluation every trap shares."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from ptrnet.datasets.batching import collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.options import DecodeOptions
from ptrnet.tasks.base import Task
from ptrnet.training.losses import teacher_forced_loss

Labeler = Callable[[np.ndarray, np.random.Generator], np.ndarray]


@dataclass(frozen=True)
class Size:
    """One experiment's size: training steps, batch, hidden units, test instances per size."""

    steps: int
    batch: int
    hidden: int
    tests: int


def train_model(
    model: torch.nn.Module,
    task: Task,
    sizes: tuple[int, int],
    size: Size,
    seed: int,
    labeler: Labeler | None = None,
    mask_loss: bool = True,
    lr: float = 3e-3,
    pool: int | None = None,
) -> torch.nn.Module:
    """Teacher-force ``model`` on fresh instances of ``task`` (each batch one n drawn from
    ``sizes``, inclusive) for ``size.steps`` Adam steps; labels from ``labeler(points, rng)``
    (default: the task's solver). With ``mask_loss`` each step's softmax runs over the tokens
    the task allows (``ptrnet train``'s ``--train-constraints task``). With ``pool``, batches
    are drawn from ``pool`` instances per size labelled once (for labels slow to compute).
    Returns the model in eval mode."""
    rng = np.random.default_rng(seed)
    pools: dict[int, tuple[list, list]] = {}
    pool = min(pool, size.steps * size.batch) if pool else None  # never more than training reads
    torch.manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for _ in range(size.steps):
        n = int(rng.integers(sizes[0], sizes[1] + 1))
        if pool:
            if n not in pools:
                pools[n] = _instances(task, n, pool, rng, labeler)
            rows = rng.integers(pool, size=size.batch)
            points, labels = ([items[i] for i in rows] for items in pools[n])
        else:
            points, labels = _instances(task, n, size.batch, rng, labeler)
        batch = collate(points, labels)
        loss = teacher_forced_loss(model, batch, mask_task=task if mask_loss else None)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model.eval()


def _instances(
    task: Task, n: int, count: int, rng: np.random.Generator, labeler: Labeler | None
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    points = [task.sample_points(rng, n) for _ in range(count)]
    return points, [task.solve(x) if labeler is None else labeler(x, rng) for x in points]


def fresh_instances(task: Task, n: int, count: int, seed: int) -> tuple[list[np.ndarray], list]:
    """``count`` fresh instances of size ``n`` and their labels (the task's solver)."""
    rng = np.random.default_rng([seed, n])
    points = [task.sample_points(rng, n) for _ in range(count)]
    return points, [task.solve(x) for x in points]


def greedy_outputs(
    model: torch.nn.Module, task: Task, points: list[np.ndarray], constraints: str
) -> list[np.ndarray]:
    """The model's greedy outputs (0-based) under the task's mask (``task``) or none."""
    options = DecodeOptions(strategy="greedy", constraints=constraints)
    return decode(model, task, collate(points), options).sequences


def evaluate(
    model: torch.nn.Module, task: Task, n: int, count: int, seed: int, constraints: str
) -> dict[str, float]:
    """The task's metrics of greedy decoding on ``count`` fresh instances of size ``n``."""
    points, refs = fresh_instances(task, n, count, seed)
    preds = greedy_outputs(model, task, points, constraints)
    metrics = task.dataset_metrics(points, refs, preds)
    return {key: round(float(value), 4) for key, value in metrics.items() if key != "count"}
