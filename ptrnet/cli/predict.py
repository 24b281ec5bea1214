"""``ptrnet predict``: decode instances with a trained model and write the predictions.

INPUT is the paper format (any ``output`` part is ignored, one instance per line), one point per
line (one instance per file), CSV, .npy, or a TSPLIB ``.tsp`` file (task tsp); see ``--format``.
Instances outside the unit square are decoded on their image in it (aspect ratio kept, stated on
stderr); planar instances without 2-D extent (collinear or coincident points) are decoded with a
warning. The output is the paper format in the input's coordinates with the predicted 1-based
indices, written atomically (``-o -``: standard output), so ``ptrnet score TASK REFERENCE
PREDICTIONS`` can score it. A model decodes instances of at most 1000 points. Every output
obeys the task's rules by default (a closed convex hull, a tour, a permutation); ``--protocol
paper`` decodes as the paper does. ``--dry-run`` predicts only the first 16 instances.

For a sentence task (copy), INPUT is a sentence or a file of them (``SOURCE[<TAB>TARGET]`` lines)
and the outputs go to standard output one per line, or with ``-o FILE`` as ``SOURCE<TAB>OUTPUT``
lines; ``--explain`` prints, per output word, p_gen and what each path favoured. INPUT ``-`` is
standard input; otherwise INPUT is read as a file when that path exists (``/dev/stdin`` and pipes
included; a directory is an error), and is a sentence otherwise, unless it looks like a file
name: it starts with ``/``, ``./``, ``../`` or ``~/``, or is one word ending in a data file's
extension (``.txt``, ``.tsv``, ``.json``: a dot and 2-5 letters) or naming an entry of a
directory that exists; such an INPUT that does not exist is the error ``INPUT: no such file``.
``24/7``, ``and/or``, ``e.g.`` and ``v1.2`` are sentences; ``--text`` makes INPUT a sentence
whatever it looks like.
"""

from __future__ import annotations

import argparse

from ptrnet.cli.common import (
    DRY_RUN_COUNT,
    add_format_argument,
    add_model_arguments,
    add_quiet_argument,
    add_task_argument,
    decode_options,
    load_model_on,
    note,
    output_file,
    output_name,
    set_threads,
)
from ptrnet.cli.kinds import add_kind_arguments, finish
from ptrnet.io.errors import UsageError
from ptrnet.tasks import Task

NAME = "predict"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        NAME, help="write a trained model's predictions (paper format)", description=__doc__
    )
    add_task_argument(parser)
    parser.add_argument(
        "input",
        metavar="INPUT",
        help="instances (paper format, points, .csv, .npy, .tsp); copy: a file if that path "
        "exists, else a sentence, but a missing file name (one word ending in an extension "
        "such as .txt or in a directory that exists, or a path from /, ./, ../ or ~/) is an "
        "error; --text: always a sentence",
    )
    add_format_argument(parser)
    parser.add_argument(
        "-o",
        "--output",
        type=output_file,
        metavar="FILE",
        help="output file, written atomically; - for standard output (point tasks: required, "
        "no default; copy: default standard output, one output per line)",
    )
    add_model_arguments(parser)
    parser.add_argument(
        "--dry-run", action="store_true", help=f"only the first {DRY_RUN_COUNT} instances"
    )
    add_quiet_argument(parser)
    add_kind_arguments(NAME, parser)
    finish(parser, NAME, run)


def run(args: argparse.Namespace, task: Task) -> int:
    from ptrnet.cli.inputs import read_prepared, report
    from ptrnet.inference import predict
    from ptrnet.io.limits import MAX_MODEL_POINTS
    from ptrnet.io.paper_format import write_examples

    if args.output is None:
        raise UsageError("-o/--output is required for a point task (- for standard output)")
    set_threads(args.threads)
    options = decode_options(args, task)  # option errors before any file is read
    loaded = load_model_on(args.model, task, args.device)
    limit = DRY_RUN_COUNT if args.dry_run else None
    instances = read_prepared(args.input, task, args.format, MAX_MODEL_POINTS)[:limit]
    seqs = predict(loaded, task, [inst.unit for inst in instances], options)
    points = [inst.points for inst in instances]
    written = write_examples(args.output, zip(points, seqs, strict=True))
    report(args, args.input, task, instances)
    note(args, f"wrote {written} {task.name} predictions to {output_name(args.output)}")
    return 0
