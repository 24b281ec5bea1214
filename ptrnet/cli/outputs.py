"""What ``predict`` and ``solve`` write (``--output-format``), one answer per instance.

* ``paper`` (default): the paper's format in the input's coordinates with the 1-based output
  indices (:mod:`ptrnet.io.paper_format`), which ``ptrnet score`` reads back.
* ``json``: one JSON object per line and instance: ``sequence`` (0-based, as
  :meth:`ptrnet.api.Solver.solve` returns it), ``names`` (the sequence by point name, when the
  input named its points), ``cost`` (the task's measure in the input's units,
  :mod:`ptrnet.api.results`; null for an invalid output), ``units`` (only where the cost is not
  in the input's units: ``"km"`` for cities given by latitude and longitude), ``log_prob``
  (``predict`` only: the model's log-likelihood of the sequence; null when it is minus
  infinity) and ``valid``.
* ``csv``: a header, then one row per instance with the same fields, always the columns of
  :data:`CSV_COLUMNS` in that order, whatever the command, task or options: ``instance``
  (1-based), ``n``, ``cost`` (empty for an invalid output), ``log_prob`` (empty where there
  is none: ``solve``'s answers, tours from ``--improve``/``--two-opt``/``--or-opt``, minus
  infinity), ``valid``, ``sequence`` (0-based indices separated by spaces) and ``names``
  (separated by `` > ``, empty when the input named none), then ``units`` (empty where the
  cost is in the input's units), so a reader may take them by position.

Every form is written atomically (``-``: standard output).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ptrnet.api.results import output_cost
from ptrnet.io.atomic import atomic_write
from ptrnet.io.paper_format import format_line
from ptrnet.tasks import Task

OUTPUT_FORMATS = ("paper", "json", "csv")
NAME_SEPARATOR = " > "
#: The ``csv`` form's columns: one schema for every command, task and option.
CSV_COLUMNS = ("instance", "n", "cost", "log_prob", "valid", "sequence", "names", "units")


class Answer(NamedTuple):
    """One instance's answer: ``points`` in the input's units, its 0-based ``sequence``, the
    points' ``names`` (or None) and the model's ``log_prob`` (None for a solver's answer)."""

    points: np.ndarray
    sequence: np.ndarray
    names: tuple[str, ...] | None = None
    log_prob: float | None = None


def add_output_format_argument(parser: argparse.ArgumentParser) -> None:
    """``--output-format`` (module docstring)."""
    parser.add_argument(
        "--output-format",
        choices=OUTPUT_FORMATS,
        default="paper",
        help="what to write: paper (default; the paper's format, which ptrnet score reads), "
        "json (one object per line and instance: sequence, names, cost in the input's "
        "units, log_prob, valid) or csv (one row per instance, always the columns "
        f"{','.join(CSV_COLUMNS)}, empty where undefined)",
    )


def record(task: Task, answer: Answer) -> dict:
    """The fields of ``answer`` (module docstring), ``log_prob`` only when it has one."""
    seq = np.asarray(answer.sequence, dtype=np.int64)
    cost = output_cost(task, answer.points, seq)
    fields: dict = {"sequence": seq.tolist()}
    if answer.names is not None:
        fields["names"] = [answer.names[i] for i in seq.tolist()]
    fields["cost"] = _finite(cost)
    if (unit := task.length_unit) is not None:
        fields["units"] = unit
    if answer.log_prob is not None:
        fields["log_prob"] = _finite(answer.log_prob)
    fields["valid"] = bool(task.is_valid(answer.points, seq))
    return fields


def _finite(value: float) -> float | None:
    """``value``, or None (JSON's null) when it is not finite: JSON has no NaN or infinity."""
    return float(value) if math.isfinite(value) else None


def write_answers(path: str, fmt: str, task: Task, answers: Sequence[Answer]) -> int:
    """Write ``answers`` to ``path`` in ``fmt`` (one of :data:`OUTPUT_FORMATS`); returns how
    many were written."""
    with atomic_write(path) as stream:
        if fmt == "paper":
            stream.writelines(format_line(a.points, a.sequence, task) + "\n" for a in answers)
        elif fmt == "json":
            stream.writelines(json.dumps(record(task, a), allow_nan=False) + "\n" for a in answers)
        else:
            _write_csv(stream, task, answers)
    return len(answers)


def _write_csv(stream, task: Task, answers: Sequence[Answer]) -> None:
    """The ``csv`` form of the module docstring: the :data:`CSV_COLUMNS`, empty cells where a
    field is undefined."""
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for k, answer in enumerate(answers, 1):
        fields = record(task, answer)
        cells = {
            **fields,
            "instance": k,
            "n": len(answer.points),
            "sequence": " ".join(map(str, fields["sequence"])),
            "names": NAME_SEPARATOR.join(fields.get("names", [])),
        }
        writer.writerow([_cell(cells.get(column)) for column in CSV_COLUMNS])


def _cell(value: object) -> object:
    """A CSV cell: empty for None, ``true``/``false`` as in the JSON form."""
    if value is None:
        return ""
    return str(value).lower() if isinstance(value, bool) else value
