"""Markdown for a reproduced table: the paper's numbers beside ours, with the compute per row.

:func:`format_table` is a pure function of the JSON report that
:meth:`ptrnet.reproduce.run.Reproduction.run` writes, so a table can be re-rendered from
``DIR/<table>.json`` alone. Rates print as percentages (one decimal, as in the paper), tour
lengths with two decimals for the paper and three for ours; ``FAIL`` marks area coverage when
more than 1% of the predicted polygons are not simple (the paper's rule; our cells add the area
and that share); ``—`` marks a number that is not there.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ptrnet.evaluation.score import area_text

COMPUTE_HEADER = ("scale · budget", "train time", "steps", "examples", "threads")
NAMES = {"optimal": "optimal", "a1": "A1", "a2": "A2", "a3": "A3"}


def format_table(report: dict[str, Any]) -> str:
    """The report as a Markdown section: title, table, notes (ends with a newline)."""
    rows = report["rows"]
    lines = _tour_table(report, rows) if _tours(rows) else _metric_table(report, rows)
    return "\n".join([f"## {report['title']}", "", *lines, "", *_notes(report, rows), ""])


def _metric_table(report: dict[str, Any], rows: Sequence[dict]) -> list[str]:
    """Hull and Delaunay: one cell of paper numbers and one of ours, metrics joined by ' / '."""
    metrics = report["metrics"]
    names = " / ".join(m.replace("_", " ") for m in metrics)
    header = ["method", "tested n", f"paper ({names})", "ours", "test set", *COMPUTE_HEADER]
    lines = [_line(header), _line(["---"] * len(header))]
    for r in rows:
        paper, ours = _cell(r["paper"], metrics), _cell(r["metrics"], metrics)
        lines.append(_line([r["label"], r["n"], paper, ours, _test(r), *_compute(r)]))
    return lines


def _tour_table(report: dict[str, Any], rows: Sequence[dict]) -> list[str]:
    """TSP: mean tour length, paper / ours, for each comparator and the Ptr-Net."""
    solvers = list(rows[0]["paper_comparators"])
    header = ["method", "n", *(NAMES.get(s, s) for s in solvers), "Ptr-Net", "valid tours"]
    header += ["test set", *COMPUTE_HEADER]
    lines = [_line(header), _line(["---"] * len(header))]
    for r in rows:
        lengths = [(r["paper_comparators"][s], r["comparators"][s]) for s in solvers]
        lengths.append((r["paper"].get("mean_length"), r["metrics"].get("mean_length")))
        cells = [f"{_length(paper, 2)} / {_length(ours, 3)}" for paper, ours in lengths]
        valid = _rate(r["metrics"].get("valid_rate"))
        lines.append(_line([r["label"], r["n"], *cells, valid, _test(r), *_compute(r)]))
    return lines


def _notes(report: dict[str, Any], rows: Sequence[dict]) -> list[str]:
    """What every row shares: scale, decoding, test data, cells, compute, extra notes."""
    notes = [
        f"Scale `{report['scale']}`; decoding: {report['decoding']['text']}.",
        f"Generated test sets: seed {report['test_data']['seed']}, stream "
        f"{report['test_data']['stream']} (training draws stream 0, validation stream 1).",
    ]
    if _tours(rows):
        notes.append(
            "Cells are paper / ours. optimal = the test set's reference tours: exact "
            "(fast-tsp Held–Karp) for n ≤ 20, near-exact (fast-tsp local search on a time "
            "budget) beyond, the file's own optimal tours for the paper's file. A1 = greedy "
            "edge + 3 2-opt passes, A2 = nearest neighbour + 2-opt from every city, A3 = "
            "Christofides + 2-opt (ptrnet's solvers). Ptr-Net lengths average valid tours."
        )
    notes.append(_compute_note(rows))
    return [f"- {note}" for note in (*notes, *report["notes"])]


def _compute_note(rows: Sequence[dict]) -> str:
    """What the compute columns mean and the devices the runs trained on; when no row has a
    run (a partial report before any validation) it says so instead of naming no device."""
    computes = [r["compute"] for r in rows if r["compute"].get("trained") is not False]
    if not computes:
        return "No model has a run with a checkpoint yet: no train time or device to report."
    devices = sorted({_device(c) for c in computes if c.get("device")})
    where = f"device {'; '.join(devices)}" if devices else "device not recorded"
    return (
        f"Train time is wall-clock over all sessions of the run, validation included; {where}. "
        "Rows marked (reused) evaluate a finished run."
    )


def _device(compute: dict[str, Any]) -> str:
    """``cpu: AMD EPYC 7B13``, or the device alone when the processor is not recorded."""
    processor = compute.get("processor")
    return f"{compute['device']}: {processor}" if processor else compute["device"]


def _tours(rows: Sequence[dict]) -> bool:
    """Whether the rows are TSP rows with comparator columns."""
    return bool(rows) and "comparators" in rows[0]


def _cell(values: dict[str, Any], metrics: Sequence[str]) -> str:
    """``92.0% / 99.6%``; ``FAIL`` for area coverage when the FAIL flag is set, followed by the
    area over the simple polygons and the share not simple where they are known (ours):
    ``89.3% / FAIL (99.7%; 1.1% not simple)``."""
    return " / ".join(
        area_text(values) if key == "area_coverage" else _rate(values.get(key)) for key in metrics
    )


def _test(row: dict[str, Any]) -> str:
    """``10,000, generated (...)``; ``—`` for a row whose test set was not built (no run)."""
    test = row["test"]
    return "—" if test is None else f"{test['count']:,}, {test['source']}"


def _compute(row: dict[str, Any]) -> list[str]:
    """The compute cells: budget, train time (``(reused)`` if not trained now, ``not trained``
    in a partial report), steps (``taken of planned`` for an unfinished run), ..."""
    c = row["compute"]
    if c.get("trained") is False:
        return [row["budget"], "not trained", "—", "—", "—"]
    reused = " (reused)" if c.get("reused") else ""
    steps, planned = c.get("steps"), c.get("planned_steps")
    unfinished = steps is not None and planned is not None and steps < planned
    return [
        row["budget"],
        f"{_duration(c.get('train_wall_s'))}{reused}",
        f"{_count(steps)} of {_count(planned)}" if unfinished else _count(steps),
        _count(c.get("examples")),
        str(c.get("threads", "—")),
    ]


def _line(cells: Sequence[object]) -> str:
    return "| " + " | ".join(map(str, cells)) + " |"


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _rate(value: float | None) -> str:
    return "—" if _missing(value) else f"{100 * value:.1f}%"


def _length(value: float | None, decimals: int) -> str:
    return "—" if _missing(value) else f"{value:.{decimals}f}"


def _count(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def _duration(seconds: float | None) -> str:
    """``4.2 s``, ``42 s``, ``12.5 min`` or ``3.2 h``."""
    if seconds is None:
        return "—"
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"
