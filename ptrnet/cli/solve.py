"""``ptrnet solve``: label the instances of a file with a reference solver.

Input: the paper format (any ``output`` part is ignored), a plain point list (one instance per
line, coordinates separated by whitespace), or, for ``tsp``, a TSPLIB ``.tsp`` file (EUC_2D).
Output: the paper format. A TSPLIB instance is written as its points scaled into the unit square
(see :mod:`ptrnet.io.tsplib`); the tour's length in the instance's own units, exact and under
TSPLIB's rounded EUC_2D rule, is reported on stderr.
"""

from __future__ import annotations

import argparse

import numpy as np

from ptrnet.cli.common import (
    add_output_argument,
    add_quiet_argument,
    add_solver_argument,
    add_task_argument,
    note,
    progress,
    task_and_solver,
)
from ptrnet.io.errors import InputError, UsageError
from ptrnet.io.paper_format import read_examples, write_examples
from ptrnet.io.tsplib import read_tsplib
from ptrnet.tasks import DegenerateInstanceError, Task

NAME = "solve"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        NAME, help="label instances from a file with a solver", description=__doc__
    )
    add_task_argument(parser)
    parser.add_argument(
        "input",
        metavar="INPUT",
        help="paper-format file, plain point list, or TSPLIB .tsp (task tsp)",
    )
    add_solver_argument(parser)
    add_output_argument(parser)
    add_quiet_argument(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    task, solver = task_and_solver(args)
    if args.input.lower().endswith(".tsp"):
        return _solve_tsplib(args, task, solver)
    examples = read_examples(args.input, task, labels="ignore")
    labelled = (
        (ex.points, _solve(task, solver, ex.points, args.input, ex.line)) for ex in examples
    )
    written = write_examples(args.output, progress(labelled, len(examples), args.quiet, task.name))
    note(args, f"wrote {written} {task.name} instances to {args.output}")
    return 0


def _solve(task: Task, solver: str, points: np.ndarray, path: str, line: int | None) -> np.ndarray:
    """The label of ``points``; a solver's refusal becomes an error at the instance's line."""
    try:
        return task.solve(points, solver)
    except (DegenerateInstanceError, ValueError) as err:
        raise InputError(path, line, f"cannot solve: {err}") from None


def _solve_tsplib(args: argparse.Namespace, task: Task, solver: str) -> int:
    if task.name != "tsp":
        raise UsageError(f"a TSPLIB .tsp file is a tsp instance, not a {task.name} one")
    instance = read_tsplib(args.input)
    tour = _solve(task, solver, instance.points, args.input, None)
    write_examples(args.output, [(instance.points, tour)])
    note(
        args,
        f"{instance.name}: tour length {instance.length(tour):.10g} "
        f"(TSPLIB EUC_2D: {instance.tsplib_length(tour)}) written to {args.output}",
    )
    return 0
