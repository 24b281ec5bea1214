"""Decode instances with a loaded model: :func:`predict_outputs` is the one decoding pass every
front end goes through (each output with its log-likelihood and, when asked, its step
distributions), on the unit-square image of each instance; a size-routing folder decodes each
instance with the model that serves its size. The searches after decoding that start from its
outputs are :mod:`ptrnet.searches`'.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ptrnet.decoding.dataset import decode_outputs
from ptrnet.decoding.options import DecodeOptions
from ptrnet.decoding.search import DecodingError
from ptrnet.inference.load import LoadedModel, check_task
from ptrnet.io.errors import UsageError
from ptrnet.io.limits import MAX_MODEL_POINTS
from ptrnet.io.unit_square import model_image
from ptrnet.tasks import Task

if TYPE_CHECKING:
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
    once, on the unit-square image (:func:`ptrnet.io.unit_square.model_image`) of its plane
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
    points_list = [model_image(task, p)[0] for p in points_list]
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
