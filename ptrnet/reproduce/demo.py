"""``ptrnet demo``: the bundled models on fresh instances, beside the exact solvers and the paper.

For every task with a bundled model, fresh instances (a test stream no training run draws from)
are labelled by the exact reference solver, decoded greedily and by beam search (with view
options, ``average_views`` or ``search_views``, also by beam search over several views of each
instance), and scored with the
paper's metrics. Two tables come out. The first shows what a user gets (the ``valid``
protocol: every output obeys the task's rules), beside the exact solver on the same instances
(TSP: their optimal mean length; its time per instance excludes the solver's first, warm-up
call). The second decodes under the paper's protocol (hull and Delaunay unconstrained) for the
tasks the paper reports, beside the paper's Ptr-Net on its own test sets, other instances of
the same kind. A PNG gallery shows a few instances with the model's answer drawn over the exact
one.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from ptrnet.decoding.options import DEFAULT_BEAM_WIDTH, DecodeOptions
from ptrnet.evaluation.paper_numbers import paper_result
from ptrnet.evaluation.score import area_text
from ptrnet.inference import load_model, predict
from ptrnet.inference.load import bundled_model_dir
from ptrnet.tasks import POINT_TASKS, SizeRange, Stream, get_point_task
from ptrnet.tasks.base import DEMO_SEED
from ptrnet.viz.draw import draw_solution
from ptrnet.viz.figures import set_labels_apart

if TYPE_CHECKING:
    from matplotlib.figure import Figure

GALLERY_COLUMNS = 3  # instances drawn per task
GALLERY_DPI = 80  # the gallery's resolution: its labels are placed at it


@dataclass(frozen=True)
class DemoRow:
    """One line of the demo table: a task at one n with one decoding."""

    task: str
    n: int
    decode: str
    metrics: dict[str, float]
    exact: str
    paper: dict[str, float]
    seconds: float
    protocol: str = "valid"


@dataclass(frozen=True)
class Instances:
    """Fresh labelled instances of one task at one n, and what labelling them cost."""

    points: list[np.ndarray]
    refs: list[np.ndarray]
    seconds: float


def label(task_name: str, n: int, count: int, seed: int) -> Instances:
    """``count`` fresh instances of size n from the demo stream, with exact labels; the time
    excludes a first, untimed call (imports, compiled code warming up)."""
    task = get_point_task(task_name)
    points = task.generate(SizeRange(n, n), count, seed, stream=Stream.DEMO)
    task.solve(points[0])
    start = time.perf_counter()
    refs = [task.solve(p) for p in points]
    return Instances(points, refs, time.perf_counter() - start)


def exact_summary(task_name: str, data: Instances) -> str:
    """What the exact solver produced: for a task whose cost is its objective, the mean of the
    references' :meth:`Task.answer_cost` (TSP's optimal tour length), called optimal only where
    every reference is exact (:meth:`Task.reference_is_exact`), else a heuristic reference's;
    otherwise its speed."""
    per = 1e3 * data.seconds / len(data.points)
    task = get_point_task(task_name)
    if task.objective_cost:
        pairs = zip(data.points, data.refs, strict=True)
        mean = np.mean([task.answer_cost(p, r) for p, r in pairs])
        exact = all(task.reference_is_exact(len(p)) for p in data.points)
        return f"{'optimal' if exact else 'reference'} {mean:.3f} ({per:.1f} ms/inst)"
    return f"exact ({per:.2f} ms/inst)"


def decodings(task_name: str, beam_width: int, views: dict[str, int]) -> list[tuple[dict, str]]:
    """(DecodeOptions keywords, row label) of each row: greedy, beam, and with view options
    ``views`` (``average_views``, ``search_views``; none: no such row) a beam over those views
    for the tasks that can use them (:func:`ptrnet.decoding.checks.check_views`: averaging for
    hull and TSP, eight-view search also for Delaunay)."""

    beam = {"strategy": "beam", "beam_width": beam_width}
    rows = [({"strategy": "greedy"}, "greedy"), (beam, f"beam {beam_width}")]
    if not any(count > 1 for count in views.values()):
        return rows
    try:
        options = DecodeOptions(**beam, **views).for_task(get_point_task(task_name))
    except ValueError:
        return rows
    return [*rows, ({**beam, **views}, f"beam {beam_width}, {options.view_words}")]


def evaluate_rows(
    task_name: str,
    loaded,
    data: Instances,
    n: int,
    beam_width: int,
    views: dict[str, int] | None = None,
    protocol: str = "valid",
) -> list[DemoRow]:
    """The rows of :func:`decodings` for one task at one n under ``protocol``."""

    task = get_point_task(task_name)
    paper = paper_result(task_name, task.paper_model, n) if task.paper_model else {}
    rows = []
    for keywords, name in decodings(task_name, beam_width, views or {}):
        start = time.perf_counter()
        options = DecodeOptions(**keywords, protocol=protocol)
        preds = predict(loaded, task, data.points, options)
        seconds = time.perf_counter() - start
        metrics = task.metrics(data.points, data.refs, preds)
        exact = exact_summary(task_name, data)
        rows.append(DemoRow(task_name, n, name, metrics, exact, paper, seconds, protocol))
    return rows


def paper_rows(
    task_name: str, loaded, data: Instances, n: int, valid: Sequence[DemoRow], **decoding
) -> list[DemoRow]:
    """The paper-protocol rows of a task the paper reports (none for another): ``valid``'s
    rows again where the paper's mask is the task's rules (TSP), else decoded anew."""

    task = get_point_task(task_name)
    if task.paper_model is None:
        return []
    if DecodeOptions(protocol="paper").for_task(task).constraints == "task":
        return [replace(row, protocol="paper") for row in valid]
    return evaluate_rows(task_name, loaded, data, n, protocol="paper", **decoding)


def bundled_tasks() -> tuple[str, ...]:
    """The point tasks that ship a bundled model (``ptrnet/bundled/NAME/``), in registry order:
    the demo's default (a task registered without one, to be trained by its user, is left
    out)."""
    return tuple(name for name in POINT_TASKS if os.path.isdir(bundled_model_dir(name)))


def run_demo(
    tasks: Sequence[str] | None = None,
    count: int = 100,
    seed: int = DEMO_SEED,
    beam_width: int = DEFAULT_BEAM_WIDTH,
    models: dict[str, str | None] | None = None,
    gallery: str | os.PathLike[str] | None = None,
    views: dict[str, int] | None = None,
) -> list[DemoRow]:
    """Run the demo on ``tasks`` (None: :func:`bundled_tasks`); ``models`` maps a task to a
    model path (None or absent: the bundled one);
    ``views`` (``average_views``, ``search_views`` above 1) adds a beam row over those views
    where the task can use them.

    Returns the rows of both tables (:attr:`DemoRow.protocol` ``valid``, then ``paper``);
    writes the PNG gallery to ``gallery`` when given.
    """

    models = models or {}
    rows, paper, shown = [], [], {}
    for task_name in bundled_tasks() if tasks is None else tasks:
        loaded = load_model(models.get(task_name), task_name)
        sizes = get_point_task(task_name).demo_sizes
        for n in sizes:
            data = label(task_name, n, count, seed)
            decoding = {"beam_width": beam_width, "views": views or {}}
            valid = evaluate_rows(task_name, loaded, data, n, **decoding)
            rows += valid
            paper += paper_rows(task_name, loaded, data, n, valid, **decoding)
        shown[task_name] = (
            loaded,
            label(task_name, sizes[min(1, len(sizes) - 1)], GALLERY_COLUMNS, seed + 1),
        )
    if gallery is not None:
        write_gallery(shown, gallery)
    return rows + paper


def write_gallery(shown: dict, path: str | os.PathLike[str]) -> None:
    """A grid of instances: one row per task, the greedy answer drawn over the exact one
    (:func:`gallery_figure`), saved as a PNG at ``path``."""
    panels = []
    for task_name, (loaded, data) in shown.items():
        preds = predict(loaded, task_name, data.points)
        panels.append(
            [
                (task_name, x, ref, pred)
                for x, ref, pred in zip(data.points, data.refs, preds, strict=True)
            ]
        )
    gallery_figure(panels).savefig(path, dpi=GALLERY_DPI, format="png")


def gallery_figure(
    panels: Sequence[Sequence[tuple[str, np.ndarray, np.ndarray, np.ndarray]]],
) -> Figure:
    """The gallery: one row per entry of ``panels``, one panel per ``(task name, points,
    reference, answer)`` in it (at most :data:`GALLERY_COLUMNS`), each instance drawn by
    :func:`~ptrnet.viz.draw.draw_solution` with its point labels set apart as ``plot`` sets
    them (:func:`~ptrnet.viz.figures.set_labels_apart`). Returns the matplotlib Figure."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    size = (5 * GALLERY_COLUMNS, 4.6 * len(panels))
    fig = Figure(figsize=size, dpi=GALLERY_DPI, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(panels), GALLERY_COLUMNS, squeeze=False)
    for row, drawings in enumerate(panels):
        for col, (task_name, x, ref, pred) in enumerate(drawings):
            draw_solution(axes[row, col], task_name, x, ref, pred)
            n = get_point_task(task_name).size_of(x)  # a routing instance's customers
            axes[row, col].set_title(f"{task_name}, n = {n}")
    set_labels_apart(fig)
    return fig


def _ours(task_name: str, key: str, metrics: dict[str, float]) -> str:
    """One metric of ours; hull area coverage as the paper reports it (FAIL when flagged)."""

    if key == "area_coverage":
        return area_text(metrics)
    return format_value(task_name, key, metrics.get(key))


def format_value(task_name: str, key: str, value: float | None) -> str:
    """A metric of ``task_name``: a rate (``Task.rate_metrics``) as ``92.0%``, else ``2.123``;
    ``—`` when missing."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    rate = key in get_point_task(task_name).rate_metrics
    return f"{100 * value:.1f}%" if rate else f"{value:.3f}"


VALID_NOTE = (
    "What `ptrnet predict` and `ptrnet.load(task).solve` give: every output obeys the task's "
    "rules (a closed convex hull, a tour, a permutation). ours and exact solver: the same fresh "
    "instances (TSP: their optimal mean length)."
)
PAPER_NOTE = (
    "The paper's protocol (`--protocol paper`, `ptrnet eval`'s default): hull and Delaunay "
    "decoded unconstrained, as the paper did. published Ptr-Net: the published model on its "
    "own test sets, other instances of the same kind and size. FAIL is the paper's verdict on hull "
    "area coverage when more than 1% of the predicted polygons are not simple."
)


def _summary(row: DemoRow) -> str:
    """Ours: the task's two summary metrics."""
    keys = get_point_task(row.task).summary_metrics
    return " / ".join(f"{k} {_ours(row.task, k, row.metrics)}" for k in keys)


def format_valid_table(rows: Sequence[DemoRow]) -> str:
    """What a user gets, as a Markdown table: ours beside the exact solver (:data:`VALID_NOTE`)."""
    lines = [
        "| task | n | decoding | ours | exact solver, same instances | time |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.task} | {r.n} | {r.decode} | {_summary(r)} | {r.exact} | {r.seconds:.2f} s |"
        )
    return "\n".join(lines)


def format_paper_table(rows: Sequence[DemoRow]) -> str:
    """The paper-protocol rows as a Markdown table: ours beside the paper's Ptr-Net on its own
    test sets (:data:`PAPER_NOTE`)."""
    lines = [
        "| task | n | decoding | ours, paper's protocol | published Ptr-Net, its test sets |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        keys = get_point_task(r.task).summary_metrics
        paper = " / ".join(format_value(r.task, k, r.paper.get(k)) for k in keys if k in r.paper)
        lines.append(f"| {r.task} | {r.n} | {r.decode} | {_summary(r)} | {paper or '—'} |")
    return "\n".join(lines)


def _sources(rows: Sequence[DemoRow]) -> str:
    """ " Published figures: TASK from SOURCE; ..." for the tasks of ``rows`` (in row order)."""
    tasks = dict.fromkeys(r.task for r in rows)
    named = [f"{t} from {get_point_task(t).paper_source}" for t in tasks]
    return f" Published figures: {'; '.join(named)}." if named else ""


def format_report(rows: Sequence[DemoRow]) -> str:
    """Both tables with their headings and notes: what a user gets first, the paper's
    protocol second (that one left out when no row has it)."""
    valid = [r for r in rows if r.protocol == "valid"]
    paper = [r for r in rows if r.protocol == "paper"]
    parts = ["## What you get", format_valid_table(valid), VALID_NOTE]
    if paper:
        parts += ["## Against the paper", format_paper_table(paper), PAPER_NOTE + _sources(paper)]
    return "\n\n".join(parts)
