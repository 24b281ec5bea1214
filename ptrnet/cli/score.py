"""``ptrnet score``: the paper's metrics for predictions against reference labels.

Both files are in the paper format and hold the same instances line for line; see
:mod:`ptrnet.evaluation.score`. ``--json`` prints exactly one JSON object (NaN as null).
"""

from __future__ import annotations

import argparse
import json

from ptrnet.cli.common import add_task_argument, point_task_named
from ptrnet.evaluation.score import FAIL, json_safe, score_files

NAME = "score"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        NAME, help="score predictions against reference labels", description=__doc__
    )
    add_task_argument(parser)
    parser.add_argument("reference", metavar="REFERENCE", help="labelled instances")
    parser.add_argument(
        "predictions",
        metavar="PREDICTIONS",
        help="the same instances with predicted outputs, line for line",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    task = point_task_named(args.task, NAME)
    metrics = score_files(task, args.reference, args.predictions)
    if args.json:
        print(json.dumps(json_safe(metrics)))
    else:
        print(format_table(task.name, metrics))
    return 0


def format_table(task_name: str, metrics: dict) -> str:
    """Aligned ``name  value`` rows: rates and lengths to 4 decimals; ``fail`` reads ``FAIL``
    when set (more than 1% of the polygons not simple), else ``no``."""
    rows = [("task", task_name)] + [(key, _format(value)) for key, value in metrics.items()]
    width = max(len(key) for key, _ in rows)
    return "\n".join(f"{key:<{width}}  {value}" for key, value in rows)


def _format(value: bool | int | float) -> str:
    if isinstance(value, bool):
        return f"{FAIL} (more than 1% not simple)" if value else "no"
    if isinstance(value, int):
        return str(value)
    return f"{value:.4f}"
