"""The front end of the induction-head lesson: what ``ptrnet train induction`` runs
(:mod:`ptrnet.cli.kinds`), and ``ptrnet plot induction RUN_DIR`` (:mod:`ptrnet.cli.plot`).

``induction`` is a lesson, not a task of the registry (:mod:`ptrnet.tasks`): it has no
instances to generate, solve, evaluate or predict (its sequences are drawn inside training and
its answers are attention maps), so it is not listed among the tasks and ``generate``, ``eval``
and ``predict`` refuse it with a pointer to the two commands that serve it. Its card
(:data:`CARD`, input kind ``sequences``) exists only for the dispatch of the generic commands.

``train induction --out RUN [--steps N] [--seed S] [--vocab V] [--length L] [--threads T]``
trains the two-layer attention-only Transformer of :mod:`ptrnet.induction` (defaults:
:class:`ptrnet.induction.config.InductionConfig`; one thread) and prints its measurements on
fresh sequences; ``--dry-run`` is a few steps of a tiny model.
"""

from __future__ import annotations

import argparse
import tempfile

from ptrnet.cli.common import note, positive_int
from ptrnet.io.errors import UsageError
from ptrnet.tasks.card import TaskCard

NAME = "induction"
DRY_RUN = {"steps": 20, "vocab": 16, "length": 6, "d_model": 16, "eval_count": 32}
#: train option (argparse dest) -> InductionConfig field.
FIELDS = {
    "steps": "steps",
    "seed": "seed",
    "vocab": "vocab",
    "length": "length",
    "threads": "threads",
}
#: The options of each command that the lesson takes (argparse ``dest``).
OPTIONS = {
    "generate": (),
    "train": ("out", "dry_run", "quiet", *FIELDS),
    "eval": (),
    "predict": (),
}
#: The options only the lesson takes.
EXTRA = {"generate": (), "train": ("vocab", "length"), "eval": (), "predict": ()}


class InductionCard(TaskCard):
    """What the generic commands' dispatch reads about the lesson (it is not registered)."""

    name = NAME
    input_kind = "sequences"
    archs = ("attention_only",)
    metric_keys = ("repeat_accuracy", "first_half_loss", "induction_score")
    validation_metric = "repeat_accuracy"
    rate_metrics = frozenset({"repeat_accuracy"})
    commands = ("train",)  # the generic commands that serve it

    def refusal(self, command: str) -> str:
        """Why ``ptrnet COMMAND induction`` does nothing, and what does."""
        return (
            f"induction is a lesson, not a task: ptrnet {command} has nothing to do for it; "
            "train it with ptrnet train induction --out RUN_DIR and draw it with "
            "ptrnet plot induction RUN_DIR -o FILE.png"
        )


CARD = InductionCard()


def add_arguments(command: str, parser: argparse.ArgumentParser) -> None:
    """Add the options of ``command`` that only the lesson takes (:data:`EXTRA`)."""
    if command == "train":
        parser.add_argument(
            "--vocab",
            type=positive_int,
            metavar="V",
            help="induction lesson: tokens 0..V-1 (default: 256)",
        )
        parser.add_argument(
            "--length",
            type=positive_int,
            metavar="L",
            help="induction lesson: half-length of the repeated sequences (default: 16)",
        )


def train(args: argparse.Namespace, task: TaskCard) -> int:
    from ptrnet.induction.config import InductionConfig
    from ptrnet.induction.train import train_induction
    from ptrnet.runs import RunDirError

    if args.out is None and not args.dry_run:
        raise UsageError("--out RUN_DIR is required")
    explicit = {field: getattr(args, dest) for dest, field in FIELDS.items()}
    options = {
        **(DRY_RUN if args.dry_run else {}),
        **{k: v for k, v in explicit.items() if v is not None},
    }
    try:
        config = InductionConfig(**options)
    except ValueError as err:
        raise UsageError(str(err)) from None
    out = args.out or tempfile.mkdtemp(prefix="ptrnet-dry-run-")
    try:
        result = train_induction(config, out, not args.quiet, lambda line: note(args, line))
    except RunDirError as err:  # checked before anything is written in out
        raise UsageError(str(err)) from None
    note(args, f"induction: {config.steps} steps in {result['wall_s']} s; run in {out}")
    return 0


#: What each generic command runs for the lesson (the others are refused: InductionCard).
RUNS = {"train": train}


def induction_figure_for(run_dir: str, index: int):
    """The figure of ``ptrnet plot induction RUN_DIR``: ``RUN_DIR`` or ``bundled``.

    Raises:
        UsageError: a negative index.
        InputError: no induction run in ``run_dir``, or a malformed log.
    """
    import torch

    from ptrnet.induction.train import BUNDLED_INDUCTION, load_run
    from ptrnet.inference import BUNDLED
    from ptrnet.viz.curves import read_log
    from ptrnet.viz.induction import induction_figure

    if index < 0:
        raise UsageError(f"--index must be >= 0, got {index}")
    torch.set_num_threads(1)  # one sequence through a tiny model: more threads only cost
    folder = BUNDLED_INDUCTION if run_dir == BUNDLED else run_dir
    return induction_figure(load_run(folder), read_log(folder), index)
