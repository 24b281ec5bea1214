"""The task registry: one stateless instance per task, looked up by name."""

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
from ptrnet.tasks.convex_hull import ConvexHullTask
from ptrnet.tasks.delaunay import DelaunayTask
from ptrnet.tasks.sort import SortTask
from ptrnet.tasks.tsp import TSPTask

TASKS: dict[str, Task] = {
    t.name: t for t in (SortTask(), ConvexHullTask(), DelaunayTask(), TSPTask())
}


def get_task(name: str) -> Task:
    """The task called ``name``; raises ValueError listing the known names otherwise."""
    try:
        return TASKS[name]
    except KeyError:
        raise ValueError(f"unknown task {name!r}; choose from {', '.join(TASKS)}") from None


__all__ = [
    "END_TOKEN",
    "TASKS",
    "DegenerateInstanceError",
    "SizeRange",
    "Stream",
    "Task",
    "from_tokens",
    "get_task",
    "instance_rng",
    "to_tokens",
]
