"""A reproduction run's compute record (``compute.json`` beside its checkpoints): wall time,
steps, training pairs seen, threads, data workers, device and processor, so a table can state
what each row cost."""

from __future__ import annotations

import contextlib
import json
import os
import platform
from typing import Any

from ptrnet.compute.devices import resolve_device
from ptrnet.io.atomic import atomic_write
from ptrnet.io.json_file import read_json_file
from ptrnet.reproduce.plans import ModelPlan, Scale, epoch_length
from ptrnet.runs.config import RunConfig
from ptrnet.training.cpu import cpu_plan

COMPUTE_JSON = "compute.json"


def examples_seen(steps: int, per_epoch: int, batch_size: int) -> int:
    """Training pairs in the first ``steps`` batches when an epoch of ``per_epoch`` pairs is
    cut into batches of ``batch_size`` (the last batch of an epoch may be short)."""
    per_step_epoch = -(-per_epoch // batch_size)
    epochs, rest = divmod(steps, per_step_epoch)
    return epochs * per_epoch + min(rest * batch_size, per_epoch)


def read_compute(run_dir: str) -> dict[str, Any]:
    """The run's compute record, or {} when it has none; InputError for one that is not a
    regular file of bounded JSON (:mod:`ptrnet.io.json_file`)."""
    path = os.path.join(run_dir, COMPUTE_JSON)
    if not os.path.lexists(path):
        return {}
    return read_json_file(path)


def write_compute(
    run_dir: str, model: ModelPlan, scale: Scale, config: RunConfig, step: int, wall_s: float
) -> None:
    """Record the compute a run has used after ``step`` steps and ``wall_s`` seconds."""

    threads, workers = cpu_plan(config.train.threads, config.train.workers)
    record = {
        "train_wall_s": round(wall_s, 1),
        "steps": step,
        "examples": examples_seen(step, epoch_length(model, scale), config.train.batch_size),
        "threads": threads,
        "data_workers": workers,
        "device": str(resolve_device(config.train.device)),
        "processor": processor(),
    }
    with atomic_write(os.path.join(run_dir, COMPUTE_JSON)) as stream:
        json.dump(record, stream, indent=2)


def processor() -> str:
    """The CPU's model name (Linux), else the machine type."""
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8") as stream:
        for line in stream:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.machine()
