"""Decode instances with a loaded model: :func:`predict_outputs` is the one decoding pass every
front end goes through (each output with its log-likelihood and, when asked, its step
distributions), on the unit-square image of each instance; a size-routing folder decodes each
instance with the model that serves its size. :func:`improve_tours_of` runs Random Re-Construct
with the folder's heavy models, :func:`two_opt_tours` 2-opt (and Or-opt), and
:func:`search_tours` the two in the order every front end runs them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch

from ptrnet.decoding.dataset import decode_outputs
from ptrnet.decoding.options import DecodeOptions
from ptrnet.decoding.reconstruct import improve_tours
from ptrnet.decoding.search import DecodingError
from ptrnet.inference.load import LoadedModel, check_task
from ptrnet.io.errors import UsageError
from ptrnet.io.limits import MAX_MODEL_POINTS
from ptrnet.io.unit_square import to_unit_square
from ptrnet.model.config import PERMUTATION_DECODERS
from ptrnet.solvers.distances import EUCLIDEAN, Distances
from ptrnet.solvers.or_opt import two_opt_or_opt
from ptrnet.solvers.tsp_heuristics import two_opt
from ptrnet.tasks import SizeRange, Task

if TYPE_CHECKING:
    from torch import nn

    from ptrnet.decoding.dataset import Decoded
    from ptrnet.decoding.options import DecodeOptions


def predict(
    loaded: LoadedModel,
    task: Task | str,
    points_list: Sequence[np.ndarray],
    options: DecodeOptions | None = None,
    on_decoded: Callable[[int], None] | None = None,
) -> list[np.ndarray]:
    """The output sequences of :func:`predict_outputs`: 0-based index sequences in the order
    of ``points_list`` (paper format minus 1)."""
    found = predict_outputs(loaded, task, points_list, options, on_decoded)
    return [item.sequence for item in found]


def predict_outputs(
    loaded: LoadedModel,
    task: Task | str,
    points_list: Sequence[np.ndarray],
    options: DecodeOptions | None = None,
    on_decoded: Callable[[int], None] | None = None,
    *,
    return_probs: bool = False,
) -> list[Decoded]:
    """Decode each instance of ``points_list`` ((n, dim) arrays, in any units) with ``loaded``,
    once, on the unit-square image (:func:`ptrnet.io.unit_square.to_unit_square`) of its plane
    (:meth:`Task.plane`: itself, or the projection of cities ``task`` measures on the sphere):
    each output with its log-likelihood, and its step distributions with ``return_probs``.

    Args:
        options: how to decode (:class:`ptrnet.decoding.options.DecodeOptions`); None = the
            defaults: greedy, under the task's rules. A ``window`` of None takes the window of
            the model that serves each instance's size (:attr:`LoadedModel.window`).
        on_decoded: called with the number of instances each batch decoded (progress).
        return_probs: keep every step's distribution (:attr:`Decoded.probs`).

    Returns:
        One :class:`ptrnet.decoding.dataset.Decoded` per instance, in the order of
        ``points_list``.

    Raises:
        UsageError: the model was trained on another task, an instance is over
            :data:`~ptrnet.io.limits.MAX_MODEL_POINTS`, or a baseline meets an instance larger
            than its fixed output vocabulary (``max_n``).
        DecodeOptionError: options the task cannot use (a ValueError).
        ValueError: an instance of the wrong dimension, or ``return_probs`` with options whose
            decoder cannot return them (eight-view search, multistart on several views).
    """

    task = check_task(loaded, task)
    points_list = [to_unit_square(task.plane(p), task.shape_invariant) for p in points_list]
    largest = max((len(p) for p in points_list), default=0)
    if largest > MAX_MODEL_POINTS:
        raise UsageError(f"an instance has {largest} points; models decode n <= {MAX_MODEL_POINTS}")
    out: list[Decoded | None] = [None] * len(points_list)
    for model, rows in size_groups(loaded, points_list, task):
        group = model_rows(model, task, [points_list[i] for i in rows])
        served = served_options(model, options)
        check_vocabulary(model, max(len(p) for p in group))
        _check_window(model, served, max(len(p) for p in group))
        try:
            found = decode_outputs(
                model.model, task, group, served, on_decoded, return_probs=return_probs
            )
        except DecodingError as err:  # numbered within the size group: renumber in the input's
            raise err.renumbered(rows[err.instance]) from None
        for i, item in zip(rows, found, strict=True):
            out[i] = item
    return out


def served_options(model: LoadedModel, options: DecodeOptions | None) -> DecodeOptions:
    """The options ``model`` (the one :meth:`LoadedModel.for_size` picked) decodes with:
    ``options`` (None = the defaults) with a ``window`` of None resolved to the model's own
    (:attr:`LoadedModel.window`). The one place that default is resolved, for every front end.
    """

    return (options or DecodeOptions()).with_window(model.window)


def size_groups(
    loaded: LoadedModel, points_list: Sequence[np.ndarray], task: Task | None = None
) -> list[tuple[LoadedModel, list[int]]]:
    """The indices of ``points_list`` grouped by the model that serves their size and, with
    ``task``, whether they state a capacity (:meth:`LoadedModel.for_size`), in input order
    within a group; one group without routes."""
    groups: dict[int, tuple[LoadedModel, list[int]]] = {}
    for i, points in enumerate(points_list):
        stated = task is not None and task.stated_capacity(points) is not None
        model = loaded.for_size(len(points), stated)
        groups.setdefault(id(model), (model, []))[1].append(i)
    return list(groups.values())


def model_rows(
    loaded: LoadedModel, task: Task, points_list: Sequence[np.ndarray]
) -> list[np.ndarray]:
    """Each instance as rows ``loaded``'s model reads (:meth:`Task.model_rows`: a knapsack
    capacity model gets Bello et al.'s capacity stated where an instance states none).

    Raises:
        UsageError: an instance the model cannot read (a stated capacity for a model that
            reads none), naming the model.
    """
    width = loaded.config.model.input_dim
    try:
        return [task.model_rows(points, width) for points in points_list]
    except ValueError as err:
        raise UsageError(f"{err} (model {loaded.path})") from None


def _check_window(loaded: LoadedModel, options: DecodeOptions, largest: int) -> None:
    """Raises UsageError when instances larger than ``options.window`` meet a model that cannot
    be decoded through a window (:mod:`ptrnet.decoding.window`)."""
    window = options.window
    decoder = loaded.config.model.decoder
    if window and largest > window and decoder != "heavy":
        raise UsageError(
            f"window {window}: a window needs a heavy-decoder model, and the model at "
            f"{loaded.path} that serves n = {largest} has the {decoder} decoder"
        )


def check_vocabulary(loaded: LoadedModel, largest: int) -> None:
    """Raises UsageError when a fixed-vocabulary baseline meets more points than it has outputs."""
    max_n = loaded.config.model.max_n
    if max_n is not None and largest > max_n:
        raise UsageError(
            f"the {loaded.config.model.kind} model at {loaded.path} handles "
            f"n <= {max_n}; an instance has {largest} points"
        )


def rebuilder_for_size(loaded: LoadedModel) -> Callable[[int], nn.Module]:
    """For :func:`ptrnet.decoding.reconstruct.improve_tours`: the network that rebuilds a
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
    distances: Distances | None = None,
) -> list[np.ndarray]:
    """Random Re-Construct (:mod:`ptrnet.decoding.reconstruct`) on TSP tours, with the heavy-
    or light-decoder models of ``loaded`` (:func:`rebuilder_for_size`) on each instance's
    unit-square image (of its plane under ``distances``).

    Args:
        points_list: (n, 2) arrays in any units.
        tours: one closed tour per instance, 0-based (``[c0, ..., c0]``, n + 1 indices).
        iterations: rounds per instance.
        seed: the search's only randomness: the same seed and batch size give the same tours.
        batch_size: instances of one size improved together.
        distances: the instances' distance rule (:mod:`ptrnet.solvers.distances`), whose
            lengths decide which rebuilt segment is kept; None: Euclidean on the unit image.

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
    for i, points in enumerate(_check_closed(points_list, out)):
        by_size.setdefault(len(points), []).append(i)
    for size, rows in by_size.items():
        step = batch_size if distances is None else max(1, min(batch_size, MATRIX_CELLS // size**2))
        for lo in range(0, len(rows), step):
            chunk = rows[lo : lo + step]
            units, matrices = _rrc_inputs([points_list[i] for i in chunk], distances, device)
            opened = torch.as_tensor(np.stack([out[i][:-1] for i in chunk]))  # (B, n)
            better = improve_tours(
                model_for, units, opened.to(device), iterations, generator, distances=matrices
            ).cpu()
            for i, tour in zip(chunk, better.numpy(), strict=True):
                out[i] = _closed_from(tour, out[i][0])
    return out


def _rrc_inputs(
    instances: Sequence[np.ndarray], distances: Distances | None, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """RRC's view of instances of one size: their planes' unit images (B, n, 2) float32, and
    under a distance rule its (B, n, n) float64 distances, which a kept segment must shorten
    (None: the Euclidean lengths of the unit images)."""
    planes = [p if distances is None else distances.plane(p) for p in instances]
    units = np.stack([to_unit_square(plane) for plane in planes])
    if distances is None:
        return torch.as_tensor(units, dtype=torch.float32, device=device), None
    matrices = np.stack([distances.search_matrix(p) for p in instances])
    return (
        torch.as_tensor(units, dtype=torch.float32, device=device),
        torch.as_tensor(matrices, device=device),
    )


def two_opt_tours(
    points_list: Sequence[np.ndarray],
    tours: Sequence[np.ndarray],
    or_opt: bool = False,
    distances: Distances | None = None,
) -> list[np.ndarray]:
    """Each closed tour (n + 1 indices, 0-based) 2-opted to a local optimum on the Euclidean
    distances of its instance, on its :func:`~ptrnet.solvers.geometry.safe_range` image (the
    instance itself unless 1e-100 or 1e100 across: the same tour, no underflow)
    (:func:`ptrnet.solvers.two_opt`),
    or with ``or_opt`` to a local optimum of 2-opt and Or-opt moves together
    (:func:`ptrnet.solvers.or_opt.two_opt_or_opt`): still closed, from the same city, never
    longer. A search on tour lengths, like RRC. Under ``distances`` (another rule than
    Euclidean, :mod:`ptrnet.solvers.distances`), on its ``search_matrix``: great-circle km
    for cities on the sphere.

    Raises:
        ValueError: a tour that is not a closed permutation of its instance.
    """
    tours = [np.asarray(t, dtype=np.int64) for t in tours]
    _check_closed(points_list, tours)
    polish = two_opt_or_opt if or_opt else two_opt
    rule = EUCLIDEAN if distances is None else distances
    return [
        _closed_from(polish(rule.search_matrix(points), tour[:-1]), tour[0])
        for points, tour in zip(points_list, tours, strict=True)
    ]


def _check_closed(
    points_list: Sequence[np.ndarray], tours: Sequence[np.ndarray]
) -> Sequence[np.ndarray]:
    """``points_list``, after a ValueError for any tour that is not closed over its instance
    (n + 1 indices, the last the first)."""
    for i, (points, tour) in enumerate(zip(points_list, tours, strict=True)):
        if len(tour) != len(points) + 1 or tour[0] != tour[-1]:
            raise ValueError(f"instance {i}: a closed tour of {len(points)} cities expected")
    return points_list


def _closed_from(cycle: np.ndarray, first: int) -> np.ndarray:
    """The open ``cycle`` (n,) turned to start at city ``first`` and closed: (n + 1,)."""
    turned = np.roll(cycle, -int(np.flatnonzero(cycle == first)[0]))
    return np.append(turned, turned[0])


def search_tours(
    loaded: LoadedModel,
    points_list: Sequence[np.ndarray],
    tours: Sequence[np.ndarray],
    iterations: int = 0,
    two_opt: bool = False,
    seed: int = 0,
    or_opt: bool = False,
    distances: Distances | None = None,
) -> list[np.ndarray]:
    """The tour search of ``--improve rrc --iterations K --two-opt [--or-opt]``: ``iterations``
    rounds of :func:`improve_tours_of` (seeded by ``seed``; 0 = none), then
    :func:`two_opt_tours` when ``two_opt`` or ``or_opt`` (2-opt and Or-opt together), both on
    the instances' ``distances`` (the measuring task's :attr:`Task.distances`; None:
    Euclidean). The one road of the command line, the Python API and the web page: the same
    points, tours, options and seed give the same tours, each no longer than the given one.

    Raises:
        UsageError: RRC with a model that routes no size to a heavy decoder.
        ValueError: a tour that is not a closed permutation of its instance.
    """
    found = [np.asarray(t, dtype=np.int64) for t in tours]
    if iterations:
        found = improve_tours_of(loaded, points_list, found, iterations, seed, distances=distances)
    if two_opt or or_opt:
        found = two_opt_tours(points_list, found, or_opt=or_opt, distances=distances)
    return found
