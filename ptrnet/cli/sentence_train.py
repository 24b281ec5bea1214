"""``ptrnet train TASK`` for a sentence task (``copy``): train (one thread unless ``--threads``)
in the loop and run directory of every task (:mod:`ptrnet.text.train`); the options shared with
the point tasks keep their names (``--clip-norm``, ``--log-every`` ...), the defaults are
:class:`ptrnet.text.config.CopyTrainConfig`'s; ``--resume`` continues a run exactly, and
SIGTERM and Ctrl-C stop it as they stop any training (:mod:`ptrnet.cli.interrupts`)."""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable
from typing import TYPE_CHECKING

from ptrnet.cli.common import note
from ptrnet.io.errors import UsageError

if TYPE_CHECKING:
    from ptrnet.tasks import SentenceTask
    from ptrnet.text.config import CopyTrainConfig
    from ptrnet.training.runloop import TrainResult

DRY_RUN = {"steps": 4, "val_every": 2, "val_count": 8, "hidden": 8, "embed": 4}
TRAIN_OPTIONS = (
    "steps",
    "batch_size",
    "lr",
    "clip_norm",
    "embed",
    "hidden",
    "seed",
    "val_every",
    "val_count",
    "log_every",
    "keep_every",
)


def train(args: argparse.Namespace, task: SentenceTask) -> int:
    import torch

    from ptrnet.cli.interrupts import run_stoppable
    from ptrnet.text.train import train_copy

    if args.out is None and (args.resume or not args.dry_run):
        raise UsageError("--out RUN_DIR is required")
    torch.set_num_threads(args.threads or 1)
    try:
        config = _resumed_config(args, task) if args.resume else _fresh_config(args, task)
    except ValueError as err:  # an impossible option value (the config checks them)
        raise UsageError(str(err)) from None
    out = args.out or tempfile.mkdtemp(prefix="ptrnet-dry-run-")

    def run(stop: Callable[[], bool]) -> TrainResult:
        log, progress = (lambda line: note(args, line)), not args.quiet
        return train_copy(config, out, log, progress, resume=args.resume, should_stop=stop)

    result = run_stoppable(run, task.name, out)
    if isinstance(result, int):
        return result
    best, metric = result.best, task.validation_metric
    note(args, f"best validation {metric} {best['value']:.4f} at step {best['step']}; run in {out}")
    return 0


def _explicit(args: argparse.Namespace) -> dict[str, object]:
    """The training options given on the command line."""
    return {k: getattr(args, k) for k in TRAIN_OPTIONS if getattr(args, k) is not None}


def _fresh_config(args: argparse.Namespace, task: SentenceTask) -> CopyTrainConfig:
    """A new run's configuration: the ``--dry-run`` preset < the options given."""
    from ptrnet.text.config import CopyTrainConfig

    options = {**(DRY_RUN if args.dry_run else {}), **_explicit(args)}
    return CopyTrainConfig(args.arch or task.archs[0], task.name, **options)


def _resumed_config(args: argparse.Namespace, task: SentenceTask) -> CopyTrainConfig:
    """The configuration saved in ``--out``'s ``last`` with the options given: UsageError if
    there is none or it is another task's; ValueError for a change that is not resumable."""
    from ptrnet.runs import LAST
    from ptrnet.runs.resume import resumed_train
    from ptrnet.text.checkpoint import load_copy_model
    from ptrnet.text.config import CopyTrainConfig

    path = os.path.join(args.out, LAST)
    if not os.path.exists(path):
        raise UsageError(f"nothing to resume: {path} does not exist")
    saved = CopyTrainConfig.from_dict(load_copy_model(path).train)
    if saved.task != task.name:
        raise UsageError(f"the run in {args.out} trains {saved.task}, not {task.name}")
    given = {**_explicit(args), **({"arch": args.arch} if args.arch else {})}
    return resumed_train(saved, given)
