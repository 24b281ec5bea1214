"""A TSP model on TSPLIB instances: tour lengths under TSPLIB's EUC_2D rule (a GEO or ATT
file: its own rule, :attr:`ptrnet.io.tsplib.TSPLibInstance.distances`) against the proven
optima (``optimal.txt``), optionally after the searches a task offers (TSP's RRC, 2-opt and
Or-opt, :mod:`ptrnet.searches`) over the model's tour, its local searches on those lengths.

The model sees each instance scaled into the unit square (aspect ratio kept); lengths are
measured on the file's own coordinates with TSPLIB's rounding, so they compare directly with the
published optima. A published optimum is used only for a file with the published instance's
cities (:mod:`ptrnet.io.tsplib_optima`); a file without a usable optimum is reported with its
length, no gap, and a note.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np

from ptrnet.inference import predict
from ptrnet.io.tsplib import read_tsplib
from ptrnet.io.tsplib_optima import Optimum, optimum_for
from ptrnet.searches.plan import SearchPlan
from ptrnet.searches.run import run_searches
from ptrnet.tasks import Task, get_task

if TYPE_CHECKING:
    from ptrnet.decoding.options import DecodeOptions


@dataclass(frozen=True)
class TSPLibResult:
    """One instance: its size, the proven optimum, the model's tour length and the gap
    (``length / optimum - 1``); ``optimum`` and ``gap`` are None where no optimum is known, and
    ``note`` then says why ('' otherwise)."""

    name: str
    n: int
    optimum: int | None
    length: int
    gap: float | None
    note: str = ""

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def evaluate_tsplib(
    loaded,
    paths: Sequence[str | os.PathLike[str]],
    optimal: dict[str, int],
    *,
    source: str = "the optima file",
    task: Task | None = None,
    options: DecodeOptions | None = None,
    search: SearchPlan | None = None,
) -> list[TSPLibResult]:
    """Decode each TSPLIB file with ``loaded`` (a model of a task that reads them: TSP) and
    compare with its optimum.

    Args:
        optimal: optima by instance name, as stated in the file named ``source``; which one a
            file is measured against is :func:`ptrnet.io.tsplib_optima.optimum_for`'s rule, and
            an optimum longer than the model's tour (so not this file's) is dropped too.
        task: the model's task (None: ``loaded.task``).
        options: how to decode (:func:`ptrnet.inference.predict`; None = its defaults).
        search: the searches after decoding, checked for ``task``
            (:func:`ptrnet.searches.run.run_searches`): a rebuild on the file's own rule (GEO,
            ATT; EUC_2D: the Euclidean lengths), local searches on its rounded lengths
            (``tsplib_matrix``); None: none.

    Raises:
        InputError: a malformed file.
    """

    task = get_task(loaded.task) if task is None else task
    results = []
    for path in paths:
        instance = read_tsplib(path)
        optimum = optimum_for(path, instance, optimal, source)
        (seq,) = predict(loaded, task, [instance.points], options)
        if search:
            rule = instance.distances  # GEO and ATT: searched on the file's own lengths
            cities, measured = instance.coords, task.with_distances(rule)
            if rule is None:
                cities, measured = instance.points, task
            lengths = [instance.tsplib_matrix()]
            (seq,) = run_searches(loaded, measured, [cities], [seq], search, lengths)
        length = instance.tsplib_length(seq)
        optimum = _undercut(optimum, length, path, source)
        gap = None if optimum.value is None else length / optimum.value - 1.0
        results.append(
            TSPLibResult(
                instance.name, len(instance.points), optimum.value, length, gap, optimum.note
            )
        )
    return results


def _undercut(optimum: Optimum, length: int, path: str | os.PathLike[str], source: str) -> Optimum:
    """``optimum``, or none where the model's tour (``length``, a valid tour) is shorter: a
    stated optimum that a tour undercuts is not the optimum of this file."""
    if optimum.value is None or length >= optimum.value:
        return optimum
    return Optimum(
        None,
        f"{os.fspath(path)}: the tour found ({length}) is shorter than the optimum stated in "
        f"{source} ({optimum.value}), which is not this file's; no gap is computed",
    )


def format_results(results: Sequence[TSPLibResult]) -> str:
    """A Markdown table of the results with the mean gap as its last line; an instance without
    an optimum shows ``n/a`` and is left out of the mean, whose label then counts those in it."""
    lines = ["| instance | n | optimum | ptrnet | gap |", "|---|---|---|---|---|"]
    for r in results:
        optimum, gap = ("n/a", "n/a") if r.gap is None else (r.optimum, f"{100 * r.gap:.2f}%")
        lines.append(f"| {r.name} | {r.n} | {optimum} | {r.length} | {gap} |")
    gaps = [r.gap for r in results if r.gap is not None]
    mean = f"{100 * float(np.mean(gaps)):.2f}%" if gaps else "n/a"
    label = "mean" if len(gaps) == len(results) else f"mean of {len(gaps)} with an optimum"
    lines.append(f"| **{label}** | | | | **{mean}** |")
    return "\n".join(lines)
