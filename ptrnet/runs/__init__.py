"""A run directory and the files in it: the one place that names them.

A training run (``ptrnet train RUN_DIR``) writes:

* :data:`CONFIG_JSON`: the :class:`ptrnet.runs.config.RunConfig`, as JSON;
* :data:`LOG_CSV`: the CSV log (:mod:`ptrnet.runs.csvlog`);
* :data:`LAST`: the latest resumable checkpoint (:mod:`ptrnet.runs.checkpoint`);
* :data:`BEST` and :data:`BEST_JSON`: the weights and the validation record at the best decoded
  validation metric;
* with ``keep_every``: :func:`kept_path` files under :data:`KEPT_DIR`, the weights of every
  validation at a multiple of that many steps;
* while it runs: :data:`LOCK_FILE`, its claim on the directory (:mod:`ptrnet.runs.lock`).

Modules: :mod:`ptrnet.runs.config` (the run's frozen configuration), :mod:`ptrnet.runs.checkpoint`
(the checkpoint file format), :mod:`ptrnet.runs.config_file` (``config.json``, checked against
the checkpoint on resume), :mod:`ptrnet.runs.csvlog` (the log), :mod:`ptrnet.runs.lock` (one
training at a time in a directory). They sit above the model and
decoding layers and below training, evaluation and inference, which all read or write runs.
"""

import os

LAST, BEST, BEST_JSON, CONFIG_JSON, LOG_CSV = (
    "last.safetensors",
    "best.safetensors",
    "best.json",
    "config.json",
    "log.csv",
)
KEPT_DIR = "kept"
#: The claim a training holds on its run directory while it runs (:mod:`ptrnet.runs.lock`).
LOCK_FILE = "run.lock"


class RunDirError(ValueError):
    """A run directory that cannot be started (already used, or in use by another training)
    or resumed (no or other run)."""


def kept_path(run_dir: str, step: int) -> str:
    """Where a run keeps the weights of its validation at ``step``: ``kept/step-STEP...``."""
    return os.path.join(run_dir, KEPT_DIR, f"step-{step}.safetensors")


def holds_run(run_dir: str | os.PathLike[str], names: tuple[str, ...] = (LAST, BEST)) -> bool:
    """Whether ``run_dir`` holds a run of any task: by default a point task's :data:`LAST`, or
    the :data:`BEST` checkpoint every task's runs write (the copy task's runs write only that);
    a stricter caller names more of a run's files."""
    return any(os.path.lexists(os.path.join(run_dir, name)) for name in names)


#: The checkpoints a run directory names as its model, in order of preference.
CHECKPOINT_NAMES = (BEST, LAST)
