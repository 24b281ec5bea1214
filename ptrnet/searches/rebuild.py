"""Random Re-Construct on a loaded model's tours (:mod:`ptrnet.searches.reconstruct`): the
network that rebuilds a segment of a given length (:func:`rebuilder_for_size`), and
:func:`improve_tours_of`, RRC on instances in any units under any distance rule, the rebuild
search that a task declaring :data:`ptrnet.tasks.searches.RANDOM_RECONSTRUCT` gets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch

from ptrnet.inference import LoadedModel
from ptrnet.io.errors import UsageError
from ptrnet.io.limits import MAX_MODEL_POINTS
from ptrnet.io.unit_square import model_image, to_unit_square
from ptrnet.model.config import PERMUTATION_DECODERS
from ptrnet.searches.reconstruct import improve_tours
from ptrnet.tasks import SizeRange, Task
from ptrnet.tasks.sequences import closed_from, closed_tour_problem

if TYPE_CHECKING:
    from torch import nn


def rebuilder_for_size(loaded: LoadedModel) -> Callable[[int], nn.Module]:
    """For :func:`ptrnet.searches.reconstruct.improve_tours`: the network that rebuilds a
    segment of L cities, a heavy- or light-decoder model (``PERMUTATION_DECODERS``): the one
    ``loaded`` routes L to when it is one, else the one whose sizes lie nearest L (the bundled
    TSP folder decodes n <= 10 with an LSTM pointer model, and its 11-37 heavy model rebuilds
    such short segments).

    Raises:
        UsageError: ``loaded`` routes no size to a heavy- or light-decoder model.
    """
    able = [
        (route.sizes, route.model)
        for route in loaded.routes
        if route.model.config.model.decoder in PERMUTATION_DECODERS
    ]
    if loaded.config.model.decoder in PERMUTATION_DECODERS:
        able.append((SizeRange(1, MAX_MODEL_POINTS), loaded))
    if not able:
        raise UsageError(
            f"--improve rrc rebuilds tour segments with a heavy- or light-decoder model "
            f"(--decoder heavy|light), and {loaded.path} routes no size to one"
        )

    def pick(length: int) -> nn.Module:
        served = loaded.for_size(length)
        if served.config.model.decoder in PERMUTATION_DECODERS:
            return served.model
        return min(able, key=lambda h: max(h[0].lo - length, length - h[0].hi, 0))[1].model

    return pick


MATRIX_CELLS = 2**24  # distances held for one RRC batch under a distance rule: 128 MiB


def improve_tours_of(
    loaded: LoadedModel,
    points_list: Sequence[np.ndarray],
    tours: Sequence[np.ndarray],
    iterations: int,
    seed: int = 0,
    batch_size: int = 64,
    task: Task | None = None,
) -> list[np.ndarray]:
    """Random Re-Construct (:mod:`ptrnet.searches.reconstruct`) on TSP tours, with the heavy-
    or light-decoder models of ``loaded`` (:func:`rebuilder_for_size`) on each instance as
    ``task``'s models read it (:func:`ptrnet.io.unit_square.model_image`).

    Args:
        points_list: (n, 2) arrays in any units.
        tours: one closed tour per instance, 0-based (``[c0, ..., c0]``, n + 1 indices).
        iterations: rounds per instance.
        seed: the search's only randomness: the same seed and batch size give the same tours.
        batch_size: instances of one size improved together.
        task: the measuring task: its images, and its distance rule's lengths
            (:mod:`ptrnet.solvers.distances`) decide which rebuilt segment is kept; None:
            Euclidean lengths on the instances' unit-square images.

    Returns:
        Closed tours (n + 1 indices) starting at the same city as the given ones, each no
        longer than the given one.

    Raises:
        UsageError: no heavy- or light-decoder model (:func:`rebuilder_for_size`).
        ValueError: a tour that is not a closed permutation of its instance.
    """

    model_for = rebuilder_for_size(loaded)
    device = next(loaded.model.parameters()).device
    generator = torch.Generator().manual_seed(seed)
    out: list[np.ndarray] = [np.asarray(t, dtype=np.int64) for t in tours]
    by_size: dict[int, list[int]] = {}
    for i, (points, tour) in enumerate(zip(points_list, out, strict=True)):
        problem = closed_tour_problem(len(points), tour)
        if problem is not None:
            raise ValueError(f"instance {i}: {problem}")
        by_size.setdefault(len(points), []).append(i)
    for size, rows in by_size.items():
        step = batch_size if task is None else max(1, min(batch_size, MATRIX_CELLS // size**2))
        for lo in range(0, len(rows), step):
            chunk = rows[lo : lo + step]
            units, matrices = _rrc_inputs([points_list[i] for i in chunk], task, device)
            opened = torch.as_tensor(np.stack([out[i][:-1] for i in chunk]))  # (B, n)
            better = improve_tours(
                model_for, units, opened.to(device), iterations, generator, distances=matrices
            ).cpu()
            for i, tour in zip(chunk, better.numpy(), strict=True):
                out[i] = closed_from(tour, out[i][0])
    return out


def _rrc_inputs(
    instances: Sequence[np.ndarray], task: Task | None, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """RRC's view of instances of one size: their images as ``task``'s models read them
    (:func:`model_image`) (B, n, 2) float32, and the task's distance rule's (B, n, n) float64
    lengths, which a kept segment must shorten (None, for no task or one without a rule: the
    unit-square images and their Euclidean lengths)."""
    if task is None or task.distances is None:
        units = np.stack([to_unit_square(p) for p in instances])
        return torch.as_tensor(units, dtype=torch.float32, device=device), None
    units = np.stack([model_image(task, p)[0] for p in instances])
    matrices = np.stack([task.distances.search_matrix(task.coordinates(p)) for p in instances])
    return (
        torch.as_tensor(units, dtype=torch.float32, device=device),
        torch.as_tensor(matrices, device=device),
    )
