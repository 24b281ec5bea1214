"""Training from Python: :func:`train` builds the run configuration ``ptrnet train`` would and
runs it (docs/api.md).

Training and validation data may be files (the paper's format) or arrays; arrays are written
into the run directory first (``train-data.txt``, ``val-data.txt``), so the run directory holds
everything its configuration names and ``--resume`` works on it.

A knapsack model for capacities of the user's own (``ptrnet train knapsack --capacity
10%-50%``): ``capacity`` is the run's :attr:`~ptrnet.runs.config.TrainConfig.capacity`, stated
by every generated instance, and by every array instance given (drawn per instance, from the
run's ``seed``); the model then reads it (``features="capacity"``).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from typing import Any

import numpy as np

from ptrnet.api.solver import as_instances
from ptrnet.inference import resolve_checkpoint
from ptrnet.io.instances import read_instances
from ptrnet.io.paper_format import write_examples
from ptrnet.io.text import check_regular_file
from ptrnet.model import ModelConfig
from ptrnet.model.config import DEFAULT_HIDDEN
from ptrnet.model.features import ROW_WIDTH
from ptrnet.runs import holds_run, recorded_path
from ptrnet.runs.config import DEFAULT_STEPS, RunConfig, TrainConfig, capacity_text
from ptrnet.tasks import SizeRange, get_point_task
from ptrnet.tasks.knapsack import CapacitySpec, item_weights
from ptrnet.training.loop import RunDirError
from ptrnet.training.loop import train as run_training

DATA_FILES = {"data": "train-data.txt", "val_data": "val-data.txt"}
ARRAY_STREAM = 7  # the generators drawing capacities for array data: [seed, 7, 0 or 1]


def train(
    task: str,
    data: Any = None,
    *,
    val_data: Any = None,
    out: str | os.PathLike[str] | None = None,
    sizes: str | int | None = None,
    hidden: int = DEFAULT_HIDDEN,
    steps: int | None = None,
    progress: bool = False,
    capacity: str | float | None = None,
    features: str | None = None,
    **options: Any,
) -> str:
    """Train a Ptr-Net on ``task``; returns the run directory (load it with
    :func:`ptrnet.load`).

    Args:
        task: a point task: ``sort``, ``convex_hull``, ``delaunay``, ``tsp`` or ``knapsack``.
        data: training instances: a paper-format file, or instances in any form
            :meth:`ptrnet.api.Solver.solve` takes (labelled by the task's exact solver); None =
            fresh generated instances of ``sizes``.
        val_data: validation instances, the same forms; None = ``val_count`` generated ones.
        out: the run directory (created; must not hold a run); None = a new temporary one.
        sizes: instance sizes, ``"5-50"`` or ``10``; None = the sizes found in ``data``.
        hidden: LSTM units of the new model.
        steps: optimiser steps (default 10,000, unless ``epochs`` is given).
        progress: show a progress bar on stderr.
        capacity: knapsack: the capacity the instances state, as ``ptrnet train --capacity``
            takes it: a number, a share of each instance's total weight (``"30%"``) or a range
            of shares drawn per instance (``"10%-50%"``); generated instances and array
            ``data``/``val_data`` state it, files state their own. None = Bello et al.'s
            ``min(n / 4, 25)``, stated by none.
        features: what the model reads of each input (``ptrnet train --features``): ``raw``,
            ``capacity`` (knapsack instances that state a capacity) or ``demand`` (a routing
            instance's rows); None = ``capacity`` with ``capacity``, else the task's own
            (``Task.features``: ``raw`` but for routing).
        **options: any other field of :class:`ptrnet.runs.config.TrainConfig` (``lr``,
            ``batch_size``, ``epochs``, ``val_every``, ``device``, ``seed`` ...); ``init_from``
            (a checkpoint, run directory or ``bundled``, as ``ptrnet train --init-from`` takes
            it) is recorded as :func:`ptrnet.runs.recorded_path` names it.

    Raises:
        ValueError: an impossible option (one line naming it: ``capacity`` for a task without
            one, or beside ``features="raw"``), or neither ``data`` nor ``sizes``.
        InputError: an unreadable or malformed data file.
        RunDirError: ``out`` already holds a run (checked before anything is written there;
            ``ptrnet train --resume --out OUT`` continues it).
    """

    spec = get_point_task(task, "ptrnet.train (the copy task: ptrnet train copy)")
    capacity = capacity_text(spec, capacity)  # before any array instance states it
    features = features or (spec.features if capacity is None else "capacity")
    model = ModelConfig(
        kind="pointer",
        input_dim=ROW_WIDTH.get(features) or spec.dim,
        hidden=hidden,
        features=features,
    )
    out = os.fspath(out) if out is not None else tempfile.mkdtemp(prefix="ptrnet-run-")
    if holds_run(out):  # before its data files are written over
        raise RunDirError(
            f"{out} already holds a run; give another out (ptrnet train --resume --out {out} "
            "continues it)"
        )
    os.makedirs(out, exist_ok=True)
    if options.get("init_from") is not None:  # named from the run directory's parent
        source = None if options["init_from"] == "bundled" else options["init_from"]
        options["init_from"] = recorded_path(resolve_checkpoint(source, spec), out)
    drawn = drawing(spec, capacity, options.get("seed", 0))
    files = {
        key: data_file(spec, value, os.path.join(out, DATA_FILES[key]), drawn(stream))
        for stream, (key, value) in enumerate((("data", data), ("val_data", val_data)))
    }
    if sizes is None:
        if files["data"] is None:
            raise ValueError("give training data or sizes, e.g. sizes='5-20'")
        sizes = file_sizes(spec, files["data"])
    if steps is None and options.get("epochs") is None:
        steps = DEFAULT_STEPS
    train_cfg = TrainConfig(task=task, sizes=str(SizeRange.parse(sizes)), steps=steps, **files,
                            capacity=capacity, **options)  # fmt: skip
    run_training(RunConfig(model, train_cfg), out, progress=progress)
    return out


def data_file(
    task, data: Any, path: str, state: Callable[[np.ndarray], np.ndarray] | None = None
) -> str | None:
    """The paper-format file holding ``data``: ``data`` itself if it is a path, else the
    instances written (unlabelled) to ``path``, each as ``state`` makes it (a knapsack
    capacity stated); None for None.

    Raises:
        ValueError: one instance, none, or one ``state`` refuses (a share of items that weigh
            nothing), naming it.
    """

    if data is None or isinstance(data, (str, os.PathLike)):
        return None if data is None else os.fspath(data)
    instances, single = as_instances(task, data)
    if single or not instances:
        raise ValueError("training and validation data need several instances")
    if state is not None:
        try:
            instances = [state(points) for points in instances]
        except ValueError as err:
            raise ValueError(f"capacity: {err}") from None
    write_examples(path, ((points, None) for points in instances), task)
    return path


def drawing(task, capacity: str | None, seed: int):
    """``stream -> state``: for the array instances of ``data`` (stream 0) and ``val_data``
    (1), a function stating on each items (n, 2) a capacity drawn from ``capacity`` (a range
    of shares: from one generator per stream of ``seed``, in instance order); None for each
    without a capacity."""

    if capacity is None:
        return lambda stream: None
    spec = CapacitySpec.parse(capacity)

    def for_stream(stream: int) -> Callable[[np.ndarray], np.ndarray]:
        rng = np.random.default_rng([seed, ARRAY_STREAM, stream])
        return lambda points: task.with_capacity(points, spec.draw(item_weights(points), rng))

    return for_stream


def file_sizes(task, path: str | os.PathLike[str]) -> SizeRange:
    """The smallest and largest instance size in the instance file ``path`` (any layout,
    :func:`ptrnet.io.instances.read_instances`), as the task's sizes count them
    (:meth:`Task.size_of`), so generated validation instances are of the file's sizes.

    Raises:
        InputError: a missing or malformed file, or one that is not a regular file.
    """

    check_regular_file(path)  # training reads it again: a pipe would block
    sizes = [task.size_of(instance.points) for instance in read_instances(path, task)]
    return SizeRange(min(sizes), max(sizes))
