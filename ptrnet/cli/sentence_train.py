"""``ptrnet train TASK`` for a sentence task (``copy``, ``span``): train (one thread unless
``--threads``) in the loop and run directory of every task (:mod:`ptrnet.text.sentence_run`);
the options shared with the point tasks keep their names (``--clip-norm``, ``--log-every``
...), the defaults are the task's training configuration's (copy:
:class:`ptrnet.text.config.CopyTrainConfig`); ``--resume`` continues a run exactly, and
SIGTERM and Ctrl-C stop it as they stop any training (:mod:`ptrnet.cli.interrupts`).

Each kind of sentence task is a :class:`TrainKind`: its trainer (imported when used: torch)
and its ``--dry-run`` preset; :data:`COPY` is the copy task's, ``ptrnet.cli.spans.SPAN`` the
span task's.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ptrnet.cli.common import note
from ptrnet.io.errors import UsageError

if TYPE_CHECKING:
    from ptrnet.tasks import SentenceTask
    from ptrnet.text.sentence_run import SentenceTrainer
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


@dataclass(frozen=True)
class TrainKind:
    """What ``ptrnet train`` needs of one kind of sentence task: ``trainer()`` imports and
    returns its :class:`~ptrnet.text.sentence_run.SentenceTrainer` class; ``dry_run``: the
    options ``--dry-run`` presets (those given on the command line win)."""

    trainer: Callable[[], type[SentenceTrainer]]
    dry_run: dict[str, Any]


def _copy_trainer() -> type[SentenceTrainer]:
    from ptrnet.text.train import CopyTrainer

    return CopyTrainer


COPY = TrainKind(_copy_trainer, DRY_RUN)


def train(args: argparse.Namespace, task: SentenceTask, kind: TrainKind = COPY) -> int:
    """Run ``ptrnet train TASK`` for a task of ``kind``; 0, or the status of a stopped run.

    Raises:
        UsageError: no ``--out`` (unless ``--dry-run``), an impossible option value, or a
            ``--resume`` without a run of this task in ``--out``.
    """
    import torch

    from ptrnet.cli.interrupts import run_stoppable
    from ptrnet.evaluation.score import metric_text

    if args.out is None and (args.resume or not args.dry_run):
        raise UsageError("--out RUN_DIR is required")
    torch.set_num_threads(args.threads or 1)
    trainer = kind.trainer()
    try:
        config = (
            _resumed_config(args, task, trainer)
            if args.resume
            else _fresh_config(args, task, trainer, kind.dry_run)
        )
    except ValueError as err:  # an impossible option value (the config checks them)
        raise UsageError(str(err)) from None
    out = args.out or tempfile.mkdtemp(prefix="ptrnet-dry-run-")

    def run(stop: Callable[[], bool]) -> TrainResult:
        log, progress = (lambda line: note(args, line)), not args.quiet
        return trainer.train_run(config, out, log, progress, resume=args.resume, should_stop=stop)

    result = run_stoppable(run, task.name, out)
    if isinstance(result, int):
        return result
    best, metric = result.best, task.validation_metric
    shown = metric_text(task, metric, best["value"])
    note(args, f"best validation {metric} {shown} at step {best['step']}; run in {out}")
    return 0


def _explicit(args: argparse.Namespace) -> dict[str, object]:
    """The training options given on the command line."""
    return {k: getattr(args, k) for k in TRAIN_OPTIONS if getattr(args, k) is not None}


def _fresh_config(
    args: argparse.Namespace,
    task: SentenceTask,
    trainer: type[SentenceTrainer],
    dry_run: dict[str, Any],
) -> Any:
    """A new run's configuration: the ``--dry-run`` preset < the options given."""
    options = {**(dry_run if args.dry_run else {}), **_explicit(args)}
    return trainer.run_config_class.train_class(args.arch or task.archs[0], task.name, **options)


def _resumed_config(
    args: argparse.Namespace, task: SentenceTask, trainer: type[SentenceTrainer]
) -> Any:
    """The configuration saved in ``--out``'s ``last`` with the options given: UsageError if
    there is none or it is another task's; ValueError for a change that is not resumable."""
    from ptrnet.runs import LAST
    from ptrnet.runs.resume import resumed_train

    path = os.path.join(args.out, LAST)
    if not os.path.exists(path):
        raise UsageError(f"nothing to resume: {path} does not exist")
    train_class = trainer.run_config_class.train_class
    saved = train_class.from_dict(trainer.load_file(path).train)
    if saved.task != task.name:
        raise UsageError(f"the run in {args.out} trains {saved.task}, not {task.name}")
    given = {**_explicit(args), **({"arch": args.arch} if args.arch else {})}
    return resumed_train(saved, given)
