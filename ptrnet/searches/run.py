"""The one entry point of the searches after decoding: :func:`run_searches` runs a checked
:class:`~ptrnet.searches.plan.SearchPlan` on decoded answers, for ``ptrnet predict|eval|plot``,
the Python API and the page alike, so the same points, answers, plan and seed give the same
answers at every door.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ptrnet.inference import LoadedModel
from ptrnet.searches.plan import SearchPlan
from ptrnet.searches.rebuild import improve_tours_of
from ptrnet.solvers.distances import EUCLIDEAN, Distances
from ptrnet.tasks import Task
from ptrnet.tasks.searches import LocalSearch, Rebuild

#: The runner of each rebuild search a task may declare, by the declaration's name: (the
#: model, the instances, their answers, rounds, seed, the measuring task) -> answers.
REBUILDS: dict[str, Callable[..., list[np.ndarray]]] = {"rrc": improve_tours_of}


def run_searches(
    loaded: LoadedModel,
    task: Task,
    points_list: Sequence[np.ndarray],
    answers: Sequence[np.ndarray],
    plan: SearchPlan,
    lengths: Sequence[np.ndarray] | None = None,
) -> list[np.ndarray]:
    """``answers`` (one decoded answer per instance, 0-based) after ``plan``'s searches, in
    order (:meth:`SearchPlan.stages`), each on ``task``'s lengths (its ``distances``: great-circle
    kilometres for cities on the sphere; Euclidean for a task without them) between its
    :meth:`~ptrnet.tasks.base.Task.coordinates`; each answer is no worse than the one given.

    Args:
        loaded: the model that decoded them (a rebuild search's networks).
        task: the measuring task; ``plan`` checked against it (:meth:`SearchPlan.for_task`).
        lengths: (n, n) lengths a local search measures, one per instance, in place of the
            task's (a TSPLIB file's rounded ones); None: the task's.

    Raises:
        UsageError: a rebuild search with a model it cannot use (RRC: no heavy or light
            decoder).
        ValueError: an answer a search cannot take (a tour that is not closed over its
            instance), naming the instance.
    """
    found = [np.asarray(answer, dtype=np.int64) for answer in answers]
    for search in plan.stages(task):
        if isinstance(search, Rebuild):
            run = REBUILDS[search.name]
            found = run(loaded, points_list, found, plan.rounds, plan.seed, task=task)
        elif isinstance(search, LocalSearch):
            found = local_search(
                search, points_list, found, task.distances, lengths, task.coordinates
            )
    return found


def local_search(
    search: LocalSearch,
    points_list: Sequence[np.ndarray],
    answers: Sequence[np.ndarray],
    distances: Distances | None = None,
    lengths: Sequence[np.ndarray] | None = None,
    coordinates: Callable[[np.ndarray], np.ndarray] | None = None,
) -> list[np.ndarray]:
    """Each answer after ``search``'s moves on its instance's ``lengths`` (None: the
    ``distances`` rule's ``search_matrix``, Euclidean when None, of the instance's
    ``coordinates``: a task's :meth:`~ptrnet.tasks.base.Task.coordinates`, a routing
    instance's x and y without its demands; None: every column). The moves get the whole
    instance.

    Raises:
        ValueError: an answer the search cannot take, naming the instance.
    """
    rule = EUCLIDEAN if distances is None else distances
    out = []
    for i, (points, answer) in enumerate(zip(points_list, answers, strict=True)):
        try:
            placed = points if coordinates is None else coordinates(points)
            matrix = rule.search_matrix(placed) if lengths is None else lengths[i]
            out.append(np.asarray(search.moves(points, answer, matrix), dtype=np.int64))
        except ValueError as err:
            raise ValueError(f"instance {i}: {err}") from None
    return out
