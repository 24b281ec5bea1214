"""``ptrnet solve``: label the instances of a file with a reference solver.

Input: the paper format (any ``output`` part is ignored, one instance per line), one point per line
(one instance per file), CSV, .npy, or, for ``tsp``, a TSPLIB ``.tsp`` file (EUC_2D, GEO, ATT);
see ``--format``. Instances outside the unit square are solved on their image in it (aspect ratio
kept; unlike ``predict``, no note says so: a solver's answer does not depend on the map) and
written in their own coordinates. Output: the paper format (``-o -``: standard
output), or with ``--output-format json`` one object per instance (``sequence`` 0-based, ``names``
when a CSV names the points, ``cost`` in the input's units, ``valid``), with ``csv`` one row per
instance. For a TSPLIB file the tour's length in the instance's own units, exact and under TSPLIB's
rounded EUC_2D rule, is reported on stderr (for GEO and ATT files, under their own integer rule).
Cities given by latitude and longitude (CSV columns ``lat``/``lon`` and their spellings) are
solved and measured in great-circle kilometres (docs/commands.md).

Limits: 100,000 points per instance read (1 MiB per line, 4 GiB per file), and as many as a
labelled line ptrnet reads back holds (hull and TSP 18,724, Delaunay 12,192, sort 33,824); TSP
solvers: exact and held_karp n <= 20, a2 n <= 200, a3 n <= 1000, a1 n <= 2000, near_exact and
lkh n <= 5000 (auto: exact up to 20, near_exact beyond); knapsack exact: at most 2,097,152
partial solutions (262,144 where sums need Python integers), beyond which it names near_exact,
whose sets past that bound are noted on stderr with their distance from the optimum. Collinear
or coincident points have no hull or triangulation: an error naming the line.
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
    output_name,
    point_task_named,
    progress,
    task_solver,
)
from ptrnet.cli.inputs import (
    add_capacity_argument,
    add_input_arguments,
    check_size,
    measured_task,
    read_args,
    report,
    solved,
)
from ptrnet.cli.outputs import Answer, add_output_format_argument, write_answers
from ptrnet.io.instances import is_tsplib
from ptrnet.io.paper_format import largest_readable_n
from ptrnet.io.text import hold_input
from ptrnet.io.tsplib import read_tsplib

NAME = "solve"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        NAME, help="label instances from a file with a solver", description=__doc__
    )
    add_task_argument(parser)
    parser.add_argument(
        "input",
        metavar="INPUT",
        help="paper-format file, one point per line, .csv, .npy, or TSPLIB .tsp (task tsp)",
    )
    add_input_arguments(parser)
    add_capacity_argument(parser)
    add_solver_argument(parser)
    add_output_format_argument(parser)
    add_output_argument(parser)
    add_quiet_argument(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    task = point_task_named(args.task, NAME)
    solver = task_solver(task, args.solver)
    source = hold_input(args.input)  # a pipe is read once, for the instances and the TSPLIB note
    instances = read_args(args, source, task)
    task = measured_task(task, instances)  # great-circle km for latitude/longitude columns
    if args.output_format == "paper":  # the output's line, labels included, must read back
        check_size(args.input, instances, largest_readable_n(task), "a line ptrnet reads back")
    refs = [
        solved(task, args.input, inst, solver)
        for inst in progress(instances, len(instances), args.quiet, f"solve {task.name}")
    ]
    answers = [
        Answer(inst.points, ref.sequence, inst.names)
        for inst, ref in zip(instances, refs, strict=True)
    ]
    written = write_answers(args.output, args.output_format, task, answers)
    report(args, args.input, task, instances, degenerate=False, unit_square=False)
    for inst, ref in zip(instances, refs, strict=True):
        if ref.note is not None:
            where = f"{args.input}:{inst.line}" if inst.line else args.input
            note(args, f"{where}: {solver}: {ref.note}")
    note(args, f"wrote {written} {task.name} instances to {output_name(args.output)}")
    if task.reads_tsplib and is_tsplib(source):
        _note_tsplib(args, source, answers[0].sequence)
    return 0


def _note_tsplib(args: argparse.Namespace, source: str, tour: np.ndarray) -> None:
    """The tour's length in the TSPLIB file ``source``'s own units, exact and under EUC_2D
    rounding; for GEO and ATT, under the file's rule."""
    instance = read_tsplib(source)
    if instance.distances is not None:
        kind = instance.edge_weight_type
        note(args, f"{instance.name}: tour length {instance.tsplib_length(tour)} (TSPLIB {kind})")
        return
    note(
        args,
        f"{instance.name}: tour length {instance.length(tour):.10g} "
        f"(TSPLIB EUC_2D: {instance.tsplib_length(tour)})",
    )
