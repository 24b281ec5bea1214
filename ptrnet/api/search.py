"""Tour searches after decoding, for :meth:`ptrnet.api.Solver.solve`: the options
``improve="rrc"``, ``iterations``, ``two_opt`` and ``or_opt`` of ``ptrnet predict|eval tsp``
(``--improve rrc``, ``--iterations``, ``--two-opt``, ``--or-opt``), run by the command line's
own function (:func:`ptrnet.inference.search_tours`), so a tour from the API equals the command
line's for the same instances, options and seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ptrnet.decoding.options import DEFAULT_RRC_ITERATIONS
from ptrnet.inference import LoadedModel, search_tours
from ptrnet.io.limits import MAX_ITERATIONS
from ptrnet.solvers.distances import Distances
from ptrnet.tasks import Task

__all__ = ["TourSearch", "tour_search"]

ROUNDS = f"an integer from 1 to {MAX_ITERATIONS:,}"  # what iterations= must be


@dataclass(frozen=True)
class TourSearch:
    """A checked search: ``iterations`` rounds of Random Re-Construct (0 = none), then 2-opt
    when ``two_opt``, 2-opt and Or-opt together when ``or_opt``."""

    iterations: int = 0
    two_opt: bool = False
    or_opt: bool = False

    def __bool__(self) -> bool:
        return bool(self.iterations or self.two_opt or self.or_opt)

    def run(
        self,
        loaded: LoadedModel,
        points_list: Sequence[np.ndarray],
        tours: Sequence[np.ndarray],
        seed: int,
        distances: Distances | None = None,
    ) -> list[np.ndarray]:
        """The tours (closed, 0-based, n + 1 indices) after the search, in the command line's
        order (RRC seeded by ``seed``, then 2-opt or 2-opt and Or-opt), each no longer than
        the given one under ``distances`` (the task's rule; None: Euclidean).

        Raises:
            UsageError: RRC with a model that routes no size to a heavy or light decoder.
        """
        return search_tours(
            loaded,
            points_list,
            tours,
            self.iterations,
            self.two_opt,
            seed,
            or_opt=self.or_opt,
            distances=distances,
        )


def tour_search(
    task: Task,
    improve: str | None = None,
    iterations: int | None = None,
    two_opt: bool = False,
    or_opt: bool = False,
    constraints: str | None = None,
) -> TourSearch:
    """The search ``improve`` (``"rrc"`` or ``"none"``/None), ``iterations`` (rounds of RRC;
    None = :data:`DEFAULT_RRC_ITERATIONS`), ``two_opt`` and ``or_opt`` describe, checked as the
    command line checks ``--improve``, ``--iterations``, ``--two-opt`` and ``--or-opt``;
    ``constraints`` is the decoding's (a search needs tours, which ``"none"`` may not give).

    Raises:
        ValueError: naming the option: an ``improve`` other than "rrc"/"none", a search for a
            task other than tsp or with ``constraints="none"``, ``iterations`` without
            ``improve="rrc"``, ``iterations`` that is not an integer from 1 to
            :data:`~ptrnet.io.limits.MAX_ITERATIONS`, a ``two_opt`` or ``or_opt`` that is not
            a bool.
    """
    improve = "none" if improve is None else improve
    if improve not in ("none", "rrc"):
        raise ValueError(f"improve={improve!r}: 'rrc' or 'none'")
    for name, value in (("two_opt", two_opt), ("or_opt", or_opt)):
        if not isinstance(value, bool | np.bool_):
            raise ValueError(f"{name}={value!r}: True or False")
    if improve == "rrc" and task.name != "tsp":
        raise ValueError(f"improve='rrc': rebuilds tours, for task tsp, not {task.name}")
    for name, value in (("two_opt", two_opt), ("or_opt", or_opt)):
        if value and task.name != "tsp":
            raise ValueError(f"{name}=True: shortens tours, for task tsp, not {task.name}")
    if iterations is not None:
        if improve != "rrc":
            raise ValueError(f"iterations={iterations!r}: iterations need improve='rrc'")
        if isinstance(iterations, bool) or not isinstance(iterations, int | np.integer):
            raise ValueError(f"iterations={iterations!r}: {ROUNDS}")
        if not 1 <= iterations <= MAX_ITERATIONS:
            raise ValueError(f"iterations={iterations}: {ROUNDS}")
    search = TourSearch(
        0 if improve == "none" else int(iterations or DEFAULT_RRC_ITERATIONS),
        bool(two_opt),
        bool(or_opt),
    )
    if search and constraints == "none":
        name = "improve='rrc'" if search.iterations else "or_opt=True" if or_opt else "two_opt=True"
        raise ValueError(
            f"{name}: searches tours, and constraints='none' may decode outputs that are not "
            "tours; use constraints='task'"
        )
    return search
