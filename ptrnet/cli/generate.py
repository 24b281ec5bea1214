"""``ptrnet generate``: a labelled dataset in the paper's format, from a seed.

For a point task (sort, convex_hull, delaunay, tsp, knapsack) ``-n/--sizes`` is required;
knapsack takes ``--capacity`` (a number, a share of each instance's total weight, or a range of
shares drawn per instance), and each line then states its capacity (``capacity C``). A sentence task
(copy) takes ``--count``, ``--seed``, ``--stream`` and ``-o`` only, and writes its text format
(``SOURCE<TAB>TARGET`` per line).

Output is byte-identical for a given seed whatever ``--workers`` is, and the shards
``--shard 1/K .. K/K`` concatenated equal the unsharded file (see
:mod:`ptrnet.datasets.generation`).
"""

from __future__ import annotations

import argparse

from ptrnet.cli.common import (
    add_output_argument,
    add_quiet_argument,
    add_solver_argument,
    add_task_argument,
    note,
    positive_int,
    progress,
    seed_int,
    shard,
    size_range,
    task_solver,
)
from ptrnet.cli.inputs import add_capacity_argument
from ptrnet.cli.kinds import add_kind_arguments, finish
from ptrnet.datasets.generation import generate_dataset, shard_range
from ptrnet.io.errors import UsageError
from ptrnet.io.limits import MAX_LINE_BYTES, MAX_POINTS
from ptrnet.io.paper_format import largest_readable_n, write_examples
from ptrnet.tasks import SizeRange, Task
from ptrnet.tasks.knapsack import CapacitySpec, KnapsackTask

NAME = "generate"
DEFAULT_SEED = 2015


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        NAME, help="generate a labelled dataset (paper format)", description=__doc__
    )
    add_task_argument(parser)
    parser.add_argument(
        "-n",
        "--sizes",
        type=size_range,
        metavar="N|LO-HI",
        help="instance size, or a range drawn uniformly per instance, e.g. 5-50 (point tasks: "
        "required, no default)",
    )
    parser.add_argument(
        "--count",
        required=True,
        type=positive_int,
        metavar="N",
        help="instances in the whole (unsharded) dataset",
    )
    parser.add_argument(
        "--seed",
        type=seed_int,
        default=DEFAULT_SEED,
        help=f"random seed (default: {DEFAULT_SEED}; not train's default seed 0, so a dataset "
        "generated with the defaults is not a model's training data)",
    )
    parser.add_argument(
        "--stream",
        type=seed_int,
        help="sub-stream under the seed; use distinct streams for train/valid/test (default: 0; "
        "span: 5, its test stream of held-out names)",
    )
    add_solver_argument(parser)
    add_capacity_argument(parser, ranges=True)
    parser.add_argument(
        "--workers",
        type=positive_int,
        metavar="W",
        help="worker processes (default: all available cores)",
    )
    parser.add_argument(
        "--shard",
        type=shard,
        metavar="I/K",
        help="write only the I-th of K contiguous blocks (1-based; default: the whole dataset)",
    )
    add_output_argument(parser)
    add_quiet_argument(parser)
    add_kind_arguments(NAME, parser)
    finish(parser, NAME, run)


def run(args: argparse.Namespace, task: Task) -> int:
    if args.sizes is None:
        raise UsageError("-n/--sizes is required for a point task, e.g. -n 5-50")
    check_readable_sizes(task, args.sizes)
    task = generating_task(task, args.capacity)
    solver = task_solver(task, args.solver)
    total = len(shard_range(args.count, args.shard))
    try:
        examples = generate_dataset(
            task,
            args.sizes,
            args.count,
            args.seed,
            solver=solver,
            workers=args.workers,
            shard=args.shard,
            stream=args.stream or 0,
        )
        shown = progress(examples, total, args.quiet, f"generate {task.name}")
        written = write_examples(args.output, shown, task)
    except ValueError as err:
        # Bad sizes for the task, or a solver refusing an instance (exact TSP above n = 20).
        raise UsageError(str(err)) from None
    note(args, f"wrote {written} {task.name} instances to {args.output}")
    return 0


def generating_task(task: Task, capacity: CapacitySpec | None) -> Task:
    """``task`` drawing instances under ``--capacity`` (knapsack; each line then states its
    capacity, ``capacity C``), or ``task`` itself without one.

    Raises:
        UsageError: a capacity for a task without one.
    """
    if capacity is None:
        return task
    if not isinstance(task, KnapsackTask):
        raise UsageError(f"--capacity: task {task.name} has no capacity (knapsack has)")
    return task.with_capacities(capacity)


def check_readable_sizes(task: Task, sizes: SizeRange) -> None:
    """Refuse sizes whose lines the readers could not take back (before any work).

    Raises:
        UsageError: ``sizes.hi`` over :func:`~ptrnet.io.paper_format.largest_readable_n`, naming
            the flag and the largest n allowed.
    """
    largest = largest_readable_n(task)
    if sizes.hi > largest:
        raise UsageError(
            f"-n/--sizes {sizes}: a {task.name} line of n = {sizes.hi} points could exceed what "
            f"the readers take back ({MAX_LINE_BYTES} bytes a line, {MAX_POINTS} points); "
            f"the largest n allowed is {largest}"
        )
