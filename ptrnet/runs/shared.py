"""The training options every run's configuration shares, a point task's
(:class:`ptrnet.runs.config.TrainConfig`) or a sentence task's
(:class:`ptrnet.text.config.CopyTrainConfig`): one name and one check each, and one default
where the two recipes agree, so ``clip_norm`` is ``clip_norm`` in every ``config.json`` and
``--clip-norm`` on every command line.

The shared fields (:data:`SHARED_FIELDS`): ``task``, ``steps``, ``batch_size``, ``lr``,
``clip_norm``, ``seed``, ``val_count``, ``val_every``, ``log_every`` and ``keep_every``; their
meaning is :class:`~ptrnet.runs.config.TrainConfig`'s. A config that has them is checked by
:func:`check_shared` (each bad value one line naming the field) and run by the one training
loop (:mod:`ptrnet.training.runloop`).
"""

from __future__ import annotations

import sys
from typing import Any

from ptrnet.io.limits import MAX_THREADS  # torch threads and data workers
from ptrnet.quoting import quote

SHARED_FIELDS = (
    "task",
    "steps",
    "batch_size",
    "lr",
    "clip_norm",
    "seed",
    "val_count",
    "val_every",
    "log_every",
    "keep_every",
)
#: The defaults both recipes use (the others are each recipe's own: the point tasks' in
#: TrainConfig, the sentence tasks' in CopyTrainConfig).
DEFAULTS: dict[str, Any] = {"clip_norm": 2.0, "log_every": 50, "keep_every": 0}
# Changing these on resume leaves the data order, the optimiser and the model untouched; a
# config without one of them has nothing to change there.
RESUMABLE = frozenset(
    {
        "device",
        "steps",
        "epochs",
        "threads",
        "workers",
        "precision",
        "val_every",
        "log_every",
        "keep_every",
    }
)
#: The largest value of each count option: far above any run's, below what overflows torch or
#: exhausts memory allocating a batch.
UPPER_BOUNDS = {
    "threads": MAX_THREADS,
    "batch_size": 2**20,
    "val_count": 10**7,
    "epoch_size": 10**12,
    "bucket_pool": 10**4,
    "rl_samples": 10**4,
    "baseline_count": 10**7,
    "steps": 10**12,
    "epochs": 10**9,
    "vocab_pairs": 10**7,
    "answer_pairs": 10**7,
}


def check_shared(cfg: Any) -> None:
    """Raise ValueError, one line naming the field and its value, for the first shared field of
    ``cfg`` (a TrainConfig or CopyTrainConfig, ``lr`` resolved) whose value is impossible."""
    positive_float("lr", cfg.lr)
    positive_float("clip_norm", cfg.clip_norm)
    for name in ("batch_size", "val_count", "val_every", "log_every"):
        positive_int(name, getattr(cfg, name))
    if cfg.steps is not None:
        positive_int("steps", cfg.steps)
    keep_every = cfg.keep_every
    if not is_int(keep_every) or keep_every < 0 or keep_every % cfg.val_every:
        raise ValueError(
            f"keep_every must be 0 (off) or a multiple of val_every ({cfg.val_every}): "
            f"weights are kept at validations; got {quote(keep_every)}"
        )
    if not is_int(cfg.seed) or cfg.seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {quote(cfg.seed)}")


def is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def positive_int(name: str, value: object) -> None:
    """Raise ValueError unless ``value`` is an integer from 1 to its :data:`UPPER_BOUNDS`."""
    if not is_int(value) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {quote(value)}")
    if name in UPPER_BOUNDS and value > UPPER_BOUNDS[name]:
        raise ValueError(f"{name} must be at most {UPPER_BOUNDS[name]:,}, got {quote(value)}")


def is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def positive_float(name: str, value: object) -> None:
    """Raise ValueError unless ``value`` is a positive finite number."""
    # Compared, not math.isfinite: an int past the largest float (JSON has them) would overflow.
    if not is_number(value) or not 0 < value <= sys.float_info.max:
        raise ValueError(f"{name} must be a positive number, got {quote(value)}")
