"""A TSP model on TSPLIB instances: tour lengths under TSPLIB's EUC_2D rule against the proven
optima (``optimal.txt``), optionally after 2-opt over the model's tour on those rounded lengths.

The model sees each instance scaled into the unit square (aspect ratio kept); lengths are
measured on the file's own coordinates with TSPLIB's rounding, so they compare directly with the
published optima.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np

from ptrnet.inference import improve_tours_of, predict
from ptrnet.io.errors import InputError
from ptrnet.io.tsplib import read_tsplib, tsplib_distances
from ptrnet.quoting import quote
from ptrnet.solvers.or_opt import two_opt_or_opt
from ptrnet.solvers.tsp_heuristics import two_opt
from ptrnet.tasks import get_task
from ptrnet.tasks.convex_hull import open_cycle

if TYPE_CHECKING:
    from ptrnet.decoding.options import DecodeOptions


@dataclass(frozen=True)
class TSPLibResult:
    """One instance: its size, the proven optimum, the model's tour length and the gap."""

    name: str
    n: int
    optimum: int
    length: int
    gap: float

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def evaluate_tsplib(
    loaded,
    paths: Sequence[str | os.PathLike[str]],
    optimal: dict[str, int],
    *,
    improve: bool = False,
    or_opt: bool = False,
    options: DecodeOptions | None = None,
    rrc_iterations: int = 0,
    seed: int = 0,
) -> list[TSPLibResult]:
    """Decode each TSPLIB file with ``loaded`` (a TSP model) and compare with ``optimal``.

    Args:
        improve: run 2-opt to a local optimum from the model's tour before measuring.
        or_opt: with ``improve``, 2-opt and Or-opt moves together to a local optimum of both
            (:func:`ptrnet.solvers.or_opt.two_opt_or_opt`).
        rrc_iterations: rounds of Random Re-Construct after decoding, before any 2-opt
            (:func:`ptrnet.inference.improve_tours_of`, seeded by ``seed``); 0 = none.
        options: how to decode (:func:`ptrnet.inference.predict`; None = its defaults).

    Raises:
        InputError: a file without an entry in ``optimal``, or a malformed file.
    """

    results = []
    for path in paths:
        instance = read_tsplib(path)
        if instance.name not in optimal:
            raise InputError(
                path, None, f"no optimum for {quote(instance.name)} in the optima file"
            )
        (seq,) = predict(loaded, get_task("tsp"), [instance.points], options)
        if rrc_iterations:
            (seq,) = improve_tours_of(loaded, [instance.points], [seq], rrc_iterations, seed)
        tour = open_cycle(seq)
        if improve:
            polish = two_opt_or_opt if or_opt else two_opt
            tour = polish(tsplib_distances(instance.coords), tour)
        length, best = instance.tsplib_length(tour), optimal[instance.name]
        results.append(
            TSPLibResult(instance.name, len(instance.points), best, length, length / best - 1.0)
        )
    return results


def format_results(results: Sequence[TSPLibResult]) -> str:
    """A Markdown table of the results with the mean gap as its last line."""
    lines = ["| instance | n | optimum | ptrnet | gap |", "|---|---|---|---|---|"]
    lines += [
        f"| {r.name} | {r.n} | {r.optimum} | {r.length} | {100 * r.gap:.2f}% |" for r in results
    ]
    mean = float(np.mean([r.gap for r in results])) if results else float("nan")
    lines.append(f"| **mean** | | | | **{100 * mean:.2f}%** |")
    return "\n".join(lines)
