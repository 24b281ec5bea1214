"""``ptrnet predict``: decode instances with a trained model and write the predictions.

INPUT is the paper format (any ``output`` part is ignored), plain point lists, one instance
per line, or a TSPLIB ``.tsp`` file (task tsp; its points scaled into the unit square). The
output file is the paper format with the predicted 1-based indices, written atomically, so
``ptrnet score TASK REFERENCE PREDICTIONS`` can score it. Constraints default to the paper's
choice per task (see ``ptrnet eval --help``). ``--dry-run`` predicts only the first 16
instances.
"""

from __future__ import annotations

import argparse

from ptrnet.cli.common import (
    DRY_RUN_COUNT,
    add_model_arguments,
    add_output_argument,
    add_quiet_argument,
    add_task_argument,
    decode_options,
    load_model_on,
    note,
    set_threads,
    task_named,
)

NAME = "predict"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        NAME, help="write a trained model's predictions (paper format)", description=__doc__
    )
    add_task_argument(parser)
    parser.add_argument(
        "input", metavar="INPUT", help="instances (paper format, point lists or TSPLIB .tsp)"
    )
    add_output_argument(parser)
    add_model_arguments(parser)
    parser.add_argument(
        "--dry-run", action="store_true", help=f"only the first {DRY_RUN_COUNT} instances"
    )
    add_quiet_argument(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ptrnet.inference import predict
    from ptrnet.io.instances import read_points
    from ptrnet.io.paper_format import write_examples

    set_threads(args.threads)
    task = task_named(args.task)
    options = decode_options(args, task)  # option errors before any file is read
    loaded = load_model_on(args.model, task, args.device)
    limit = DRY_RUN_COUNT if args.dry_run else None
    points = read_points(args.input, task)[:limit]
    seqs = predict(loaded, task, points, options)
    written = write_examples(args.output, zip(points, seqs, strict=True))
    note(args, f"wrote {written} {task.name} predictions to {args.output}")
    return 0
