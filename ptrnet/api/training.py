"""Training from Python: :func:`train` builds the run configuration ``ptrnet train`` would and
runs it (docs/api.md).

Training and validation data may be files (the paper's format) or arrays; arrays are written
into the run directory first (``train-data.txt``, ``val-data.txt``), so the run directory holds
everything its configuration names and ``--resume`` works on it.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from ptrnet.api.solver import as_instances
from ptrnet.io.instances import read_instances
from ptrnet.io.paper_format import write_examples
from ptrnet.io.text import check_regular_file
from ptrnet.model import ModelConfig
from ptrnet.model.config import DEFAULT_HIDDEN
from ptrnet.runs import holds_run
from ptrnet.runs.config import DEFAULT_STEPS, RunConfig, TrainConfig
from ptrnet.tasks import SizeRange, get_point_task
from ptrnet.training.loop import RunDirError
from ptrnet.training.loop import train as run_training

DATA_FILES = {"data": "train-data.txt", "val_data": "val-data.txt"}


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
    **options: Any,
) -> str:
    """Train a Ptr-Net on ``task``; returns the run directory (load it with
    :func:`ptrnet.load`).

    Args:
        task: ``sort``, ``convex_hull``, ``delaunay`` or ``tsp``.
        data: training instances: a paper-format file, or instances in any form
            :meth:`ptrnet.api.Solver.solve` takes (labelled by the task's exact solver); None =
            fresh generated instances of ``sizes``.
        val_data: validation instances, the same forms; None = ``val_count`` generated ones.
        out: the run directory (created; must not hold a run); None = a new temporary one.
        sizes: instance sizes, ``"5-50"`` or ``10``; None = the sizes found in ``data``.
        hidden: LSTM units of the new model.
        steps: optimiser steps (default 10,000, unless ``epochs`` is given).
        progress: show a progress bar on stderr.
        **options: any other field of :class:`ptrnet.runs.config.TrainConfig` (``lr``,
            ``batch_size``, ``epochs``, ``val_every``, ``device``, ``seed`` ...).

    Raises:
        ValueError: an impossible option, or neither ``data`` nor ``sizes``.
        InputError: an unreadable or malformed data file.
        RunDirError: ``out`` already holds a run (checked before anything is written there;
            ``ptrnet train --resume --out OUT`` continues it).
    """

    spec = get_point_task(task, "ptrnet.train (the copy task: ptrnet train copy)")
    out = os.fspath(out) if out is not None else tempfile.mkdtemp(prefix="ptrnet-run-")
    if holds_run(out):  # before its data files are written over
        raise RunDirError(
            f"{out} already holds a run; give another out (ptrnet train --resume --out {out} "
            "continues it)"
        )
    os.makedirs(out, exist_ok=True)
    files = {
        key: data_file(spec, value, os.path.join(out, DATA_FILES[key]))
        for key, value in (("data", data), ("val_data", val_data))
    }
    if sizes is None:
        if files["data"] is None:
            raise ValueError("give training data or sizes, e.g. sizes='5-20'")
        sizes = file_sizes(spec, files["data"])
    if steps is None and options.get("epochs") is None:
        steps = DEFAULT_STEPS
    model = ModelConfig(kind="pointer", input_dim=spec.dim, hidden=hidden)
    train_cfg = TrainConfig(task=task, sizes=str(SizeRange.parse(sizes)), steps=steps, **files,
                            **options)  # fmt: skip
    run_training(RunConfig(model, train_cfg), out, progress=progress)
    return out


def data_file(task, data: Any, path: str) -> str | None:
    """The paper-format file holding ``data``: ``data`` itself if it is a path, else the
    instances written (unlabelled) to ``path``; None for None."""

    if data is None or isinstance(data, (str, os.PathLike)):
        return None if data is None else os.fspath(data)
    instances, single = as_instances(task, data)
    if single or not instances:
        raise ValueError("training and validation data need several instances")
    write_examples(path, ((points, None) for points in instances))
    return path


def file_sizes(task, path: str | os.PathLike[str]) -> SizeRange:
    """The smallest and largest instance size in the instance file ``path`` (any layout,
    :func:`ptrnet.io.instances.read_instances`).

    Raises:
        InputError: a missing or malformed file, or one that is not a regular file.
    """

    check_regular_file(path)  # training reads it again: a pipe would block
    sizes = [len(instance.points) for instance in read_instances(path, task)]
    return SizeRange(min(sizes), max(sizes))
