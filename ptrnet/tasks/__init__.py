"""The task registry: one stateless instance per task, looked up by name.

:data:`TASKS` holds every task, whatever its input kind (:mod:`ptrnet.tasks.card`);
:data:`POINT_TASKS` is the part of it whose instances are point sets, for the commands and pages
that only handle those (solvers, scoring, drawings, the demo, the web page).
"""

from __future__ import annotations

from ptrnet.solvers.errors import DegenerateInstanceError
from ptrnet.tasks.base import (
    END_TOKEN,
    SizeRange,
    Stream,
    Task,
    from_tokens,
    instance_rng,
    to_tokens,
)
from ptrnet.tasks.card import INPUT_KINDS, TaskCard
from ptrnet.tasks.convex_hull import ConvexHullTask
from ptrnet.tasks.copy import CopyTask
from ptrnet.tasks.delaunay import DelaunayTask
from ptrnet.tasks.sentences import Pair, SentenceTask
from ptrnet.tasks.sort import SortTask
from ptrnet.tasks.tsp import TSPTask

TASKS: dict[str, TaskCard] = {
    t.name: t for t in (SortTask(), ConvexHullTask(), DelaunayTask(), TSPTask(), CopyTask())
}
POINT_TASKS: dict[str, Task] = {
    name: task for name, task in TASKS.items() if isinstance(task, Task)
}


def get_task(name: str) -> TaskCard:
    """The task called ``name``; raises ValueError listing the known names otherwise."""
    try:
        return TASKS[name]
    except KeyError:
        raise ValueError(f"unknown task {name!r}; choose from {', '.join(TASKS)}") from None


def get_point_task(name: str, purpose: str = "this") -> Task:
    """The point task called ``name``, for ``purpose`` (e.g. ``"ptrnet solve"``).

    Raises:
        ValueError: an unknown name, or a task of another input kind (the message names the
            point tasks).
    """
    task = get_task(name)
    if not isinstance(task, Task):
        raise ValueError(
            f"{purpose} needs a task whose inputs are points ({', '.join(POINT_TASKS)}); "
            f"task {name} takes {task.input_kind}"
        )
    return task


__all__ = [
    "END_TOKEN",
    "INPUT_KINDS",
    "POINT_TASKS",
    "TASKS",
    "DegenerateInstanceError",
    "Pair",
    "SentenceTask",
    "SizeRange",
    "Stream",
    "Task",
    "TaskCard",
    "from_tokens",
    "get_point_task",
    "get_task",
    "instance_rng",
    "to_tokens",
]
