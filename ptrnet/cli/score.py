"""``ptrnet score``: the paper's metrics for predictions against reference labels.

PREDICTIONS is in the paper format (what ``ptrnet predict`` writes by default), one labelled
instance per line. REFERENCE holds the same instances in the same order, in any layout
``predict`` reads (``--format``, ``--columns``); its references are its labels (paper format),
else the task's solver's, as ``ptrnet solve`` writes them (said on stderr). Knapsack:
``--capacity`` replaces any capacity REFERENCE states (its labels then dropped for the
solver's), as ``predict --capacity`` does; PREDICTIONS must state the same one (``predict``
writes it on each line). See
:mod:`ptrnet.evaluation.score`. ``--json`` prints exactly one JSON object (NaN as null).
"""

from __future__ import annotations

import argparse
import json

from ptrnet.cli.common import add_task_argument, point_task_named
from ptrnet.cli.inputs import (
    add_capacity_argument,
    add_input_arguments,
    measured_task,
    read_args,
    references,
)
from ptrnet.evaluation.score import FAIL, check_aligned, json_safe, percent, score_examples
from ptrnet.tasks import get_task

NAME = "score"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        NAME, help="score predictions against reference labels", description=__doc__
    )
    add_task_argument(parser)
    parser.add_argument(
        "reference",
        metavar="REFERENCE",
        help="the instances, labelled or not, in any layout predict reads",
    )
    parser.add_argument(
        "predictions",
        metavar="PREDICTIONS",
        help="the same instances with predicted outputs, line for line",
    )
    add_input_arguments(parser)
    add_capacity_argument(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ptrnet.io.paper_format import Example, read_examples

    task = point_task_named(args.task, NAME)
    instances = read_args(args, args.reference, task, labels=True)
    task = measured_task(task, instances)  # great-circle km for latitude/longitude columns
    refs = [
        Example(inst.points, seq, inst.line or 1)
        for inst, seq in zip(
            instances, references(args, args.reference, task, instances), strict=True
        )
    ]
    preds = read_examples(args.predictions, task, "prediction")
    check_aligned(refs, preds, args.reference, args.predictions)
    metrics = score_examples(task, refs, preds)
    if args.json:
        print(json.dumps(json_safe(metrics)))
    else:
        print(format_table(task.name, metrics, task.length_unit))
    return 0


def format_table(task_name: str, metrics: dict, unit: str | None = None) -> str:
    """Aligned ``name  value`` rows: rates and gaps (``Task.rate_metrics``) in percent to 2
    decimals (``3.20%``, as ``demo`` and ``plot`` show them; ``--json`` keeps fractions),
    lengths to 4 decimals followed by ``unit`` when the lengths have one (``km``: the measuring
    task's :attr:`~ptrnet.tasks.base.Task.length_unit`), a length below 0.001 or from 1e15 to 6
    significant digits (an instance 1e-200 across has a length, not 0.0000); ``fail`` reads
    ``FAIL`` when set (more than 1% of the polygons not simple), else ``no``."""
    rates = get_task(task_name).rate_metrics
    rows = [("task", task_name)] + [
        (key, _format(value, key in rates) + _unit(key, unit)) for key, value in metrics.items()
    ]
    width = max(len(key) for key, _ in rows)
    return "\n".join(f"{key:<{width}}  {value}" for key, value in rows)


def _unit(key: str, unit: str | None) -> str:
    """`` km`` after a length metric (``mean_length``) measured in km; else nothing."""
    return f" {unit}" if unit and key.endswith("_length") else ""


def _format(value: bool | int | float, rate: bool) -> str:
    if isinstance(value, bool):
        return f"{FAIL} (more than 1% not simple)" if value else "no"
    if isinstance(value, int):
        return str(value)
    if rate:
        return percent(value, 2)
    if not rate and (0 < abs(value) < 1e-3 or abs(value) >= 1e15):
        return f"{value:.6g}"
    return f"{value:.4f}"
