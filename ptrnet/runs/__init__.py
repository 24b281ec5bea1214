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


#: The folder holding the ``ptrnet`` package (a clone's root, or site-packages): a start
#: checkpoint inside it is named from there (``ptrnet/bundled/tsp/best.safetensors``).
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def recorded_path(path: str | os.PathLike[str], run_dir: str | os.PathLike[str]) -> str:
    """How a run's configuration names the checkpoint ``path`` it starts from (``init_from``):
    relative to the run directory's parent when the file lies inside it (``run/best.safetensors``
    for ``--init-from run --out run2``), else relative to :data:`PACKAGE_PARENT` when inside that
    (a bundled model), else absolute (a file outside both, which no relative name would find).
    So a committed run names no folder of the machine it was trained on, and
    :func:`recorded_file` finds the file again from the run directory."""
    full = os.path.abspath(path)
    for base in _bases(run_dir):
        if _inside(full, base):
            return os.path.relpath(full, base)
    return full


def recorded_file(recorded: str, run_dir: str | os.PathLike[str]) -> str:
    """The file a :func:`recorded_path` names, for the run in ``run_dir``: an absolute name as
    it is; a relative one under the run directory's parent, else under :data:`PACKAGE_PARENT`
    (the first that exists; the first when neither does, for the error to name)."""
    if os.path.isabs(recorded):
        return recorded
    candidates = [os.path.join(base, recorded) for base in _bases(run_dir)]
    return next((path for path in candidates if os.path.exists(path)), candidates[0])


def _bases(run_dir: str | os.PathLike[str]) -> tuple[str, str]:
    """The folders a recorded name is relative to, in order: the run directory's parent, then
    :data:`PACKAGE_PARENT`."""
    return os.path.dirname(os.path.abspath(run_dir)), PACKAGE_PARENT


def _inside(path: str, folder: str) -> bool:
    """Whether the absolute ``path`` lies inside ``folder`` (not through ``..``)."""
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:  # another drive (Windows)
        return False
