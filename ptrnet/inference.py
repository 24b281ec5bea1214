"""The one inference API: load a trained model, decode instances. The CLI (``ptrnet eval``,
``ptrnet predict``) and the web page are thin shells over :func:`load_model` and :func:`predict`.

A model is named by a run directory (its ``best.safetensors``, else ``last.safetensors``) or a
checkpoint file; no name (``None``) means the task's bundled default model, shipped inside the
package in ``ptrnet/bundled/<task>/``. :func:`resolve_checkpoint` is the single place that turns a
name into a file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ptrnet.io.errors import InputError, UsageError
from ptrnet.io.limits import MAX_MODEL_POINTS
from ptrnet.runs import CHECKPOINT_NAMES
from ptrnet.tasks import Task, get_point_task

if TYPE_CHECKING:
    from torch import nn

    from ptrnet.decoding.options import DecodeOptions
    from ptrnet.runs.config import RunConfig

BUNDLED = "bundled"  # the name of a task's bundled model wherever a model is named
BUNDLED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bundled")


def bundled_model_dir(task: Task | str) -> str:
    """The folder of the bundled default model for ``task`` (it may not exist)."""
    return os.path.join(BUNDLED_DIR, task if isinstance(task, str) else task.name)


@dataclass(frozen=True)
class LoadedModel:
    """A model ready for decoding.

    Attributes:
        model: the network, in eval mode, on the device it was loaded to (the CPU unless
            :func:`load_model` was given another).
        config: the run configuration it was trained with.
        path: the checkpoint file it was read from.
        step: optimiser steps it had been trained for.
        info: the checkpoint's record (e.g. ``info["best"]``: validation metrics).
    """

    model: nn.Module
    config: RunConfig
    path: str
    step: int
    info: dict[str, Any]

    @property
    def task(self) -> str:
        """Name of the task the model was trained on."""
        return self.config.train.task


def resolve_checkpoint(path: str | os.PathLike[str] | None, task: Task | str | None = None) -> str:
    """The checkpoint file that ``path`` (a run directory or a file) names.

    With ``path`` None or ``"bundled"``, the bundled default model of ``task`` (write
    ``./bundled`` for a directory of that name).

    Raises:
        UsageError: no path given and no bundled model for ``task``.
        InputError: the path does not exist, or a directory holds no checkpoint.
    """
    if path is None or path == BUNDLED:
        bundled = None if task is None else bundled_model_dir(task)
        if bundled is None or not os.path.isdir(bundled):
            raise UsageError("no bundled model for this task: pass --model RUN_DIR_OR_CHECKPOINT")
        path = bundled
    path = os.fspath(path)
    if os.path.isdir(path):
        for name in CHECKPOINT_NAMES:
            if os.path.isfile(os.path.join(path, name)):
                return os.path.join(path, name)
        raise InputError(
            path,
            None,
            f"no checkpoint in this directory (expected {' or '.join(CHECKPOINT_NAMES)})",
        )
    if not os.path.exists(path):
        raise InputError(path, None, "no such model directory or checkpoint file")
    return path


def load_model(
    path: str | os.PathLike[str] | None, task: Task | str | None = None, device: str = "cpu"
) -> LoadedModel:
    """Load the model at ``path`` (run directory or checkpoint file) for inference.

    Checkpoints hold CPU tensors whatever device trained them, so any of them loads anywhere.

    Args:
        path: run directory or checkpoint file; None = the bundled default model for ``task``.
        task: if given, the task the model must have been trained on.
        device: where the model decodes: ``cpu`` (default), ``auto``, ``cuda`` or ``cuda:N``
            (:mod:`ptrnet.devices`); decoding follows the model's device.

    Raises:
        UsageError: no path, the model was trained on another task, a task whose inputs are not
            points, or an unknown or absent device.
        InputError: missing path, or an unreadable or inconsistent checkpoint.
    """
    from ptrnet.devices import resolve_device
    from ptrnet.model import build_model
    from ptrnet.runs.checkpoint import CheckpointError, load_checkpoint

    try:
        target = resolve_device(device)
        task = get_point_task(task, "a Ptr-Net model") if isinstance(task, str) else task
    except ValueError as err:
        raise UsageError(str(err)) from None

    file = resolve_checkpoint(path, task)
    ckpt = load_checkpoint(file)
    model = build_model(ckpt.config.model)
    try:
        model.load_state_dict(ckpt.model_state)
    except RuntimeError as err:
        first = str(err).strip().splitlines()[0]
        raise CheckpointError(file, f"weights do not fit the configuration: {first}") from None
    model.to(target).eval()
    loaded = LoadedModel(model, ckpt.config, file, ckpt.step, ckpt.info)
    if task is not None:
        check_task(loaded, task)
    return loaded


def check_task(loaded: LoadedModel, task: Task | str) -> Task:
    """``task`` as a Task; raises UsageError unless the model was trained on it."""
    task = get_point_task(task, "a Ptr-Net model") if isinstance(task, str) else task
    if task.name != loaded.task:
        raise UsageError(
            f"the model at {loaded.path} was trained on {loaded.task}, not {task.name}"
        )
    return task


def predict(
    loaded: LoadedModel,
    task: Task | str,
    points_list: Sequence[np.ndarray],
    options: DecodeOptions | None = None,
) -> list[np.ndarray]:
    """Decode each instance of ``points_list`` ((n, dim) arrays) with ``loaded``.

    Args:
        options: how to decode (:class:`ptrnet.decoding.options.DecodeOptions`); None = the
            defaults: greedy, with the task's own constraints.

    Returns:
        0-based index sequences in the order of ``points_list`` (paper format minus 1).

    Raises:
        UsageError: the model was trained on another task, an instance is over
            :data:`~ptrnet.io.limits.MAX_MODEL_POINTS`, or a baseline meets an instance larger
            than its fixed output vocabulary (``max_n``).
        DecodeOptionError: options the task cannot use (a ValueError).
        ValueError: an instance of the wrong dimension.
    """
    from ptrnet.decoding.dataset import decode_all
    from ptrnet.decoding.options import DecodeOptions

    task = check_task(loaded, task)
    largest = max((len(p) for p in points_list), default=0)
    if largest > MAX_MODEL_POINTS:
        raise UsageError(f"an instance has {largest} points; models decode n <= {MAX_MODEL_POINTS}")
    max_n = loaded.config.model.max_n
    if max_n is not None and largest > max_n:
        raise UsageError(
            f"the {loaded.config.model.kind} model at {loaded.path} handles "
            f"n <= {max_n}; an instance has {largest} points"
        )
    return decode_all(loaded.model, task, points_list, options or DecodeOptions())
