"""The task registry: one stateless instance per task, looked up by name.

:data:`TASKS` holds every task, whatever its input kind (:mod:`ptrnet.tasks.card`);
:data:`POINT_TASKS` is the part of it whose instances are point sets, for the commands and pages
that only handle those (solvers, scoring, drawings, the demo, the web page).
"""

from __future__ import annotations

from collections.abc import Iterable

from ptrnet.quoting import did_you_mean, quote
from ptrnet.solvers.errors import DegenerateInstanceError
from ptrnet.tasks.base import (
    DRAWINGS,
    END_TOKEN,
    SizeRange,
    Task,
    from_tokens,
    instance_rng,
    to_tokens,
)
from ptrnet.tasks.card import INPUT_KINDS, TaskCard
from ptrnet.tasks.convex_hull import ConvexHullTask
from ptrnet.tasks.copy import CopyTask
from ptrnet.tasks.cvrp import CVRPTask
from ptrnet.tasks.delaunay import DelaunayTask
from ptrnet.tasks.knapsack import KnapsackTask
from ptrnet.tasks.sentences import Pair, SentenceTask
from ptrnet.tasks.sort import SortTask
from ptrnet.tasks.span import SpanTask
from ptrnet.tasks.streams import Stream
from ptrnet.tasks.tsp import TSPTask

TASKS: dict[str, TaskCard] = {}
POINT_TASKS: dict[str, Task] = {}


def register(task: TaskCard) -> TaskCard:
    """Add ``task`` to the registry (to :data:`POINT_TASKS` too if its inputs are points).

    Raises:
        ValueError: a name already registered, an input kind not in :data:`INPUT_KINDS`, or a
            point task whose drawing kind is not in :data:`DRAWINGS`.
    """
    if task.name in TASKS:
        raise ValueError(f"task {task.name!r} is already registered")
    if task.input_kind not in INPUT_KINDS:
        raise ValueError(f"task {task.name}: unknown input kind {task.input_kind!r}")
    if isinstance(task, Task) and task.drawing not in DRAWINGS:
        raise ValueError(
            f"task {task.name}: unknown drawing {task.drawing!r}; choose from {', '.join(DRAWINGS)}"
        )
    TASKS[task.name] = task
    if isinstance(task, Task):
        POINT_TASKS[task.name] = task
    return task


for _task in (SortTask(), ConvexHullTask(), DelaunayTask(), TSPTask(), CopyTask(), SpanTask()):
    register(_task)
del _task
register(KnapsackTask())
register(CVRPTask())


def get_task(name: str) -> TaskCard:
    """The task called ``name``; raises ValueError otherwise, with the registered name closest
    to ``name`` (:func:`ptrnet.quoting.did_you_mean`) and every known name."""
    try:
        return TASKS[name]
    except KeyError:
        hint = did_you_mean(name, TASKS)
        raise ValueError(
            f"unknown task {quote(name)}; choose from {', '.join(TASKS)}{hint}"
        ) from None


def task_spelled(name: str, others: Iterable[str] = ()) -> str:
    """The registered task name, or one of ``others``, that ``name`` spells in any case
    (``TSP``: ``tsp``); ``name`` itself when it spells none (for :func:`get_task`'s error)."""
    names = {known.lower(): known for known in (*TASKS, *others)}
    return names.get(name.lower(), name)


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
    "DRAWINGS",
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
    "register",
    "task_spelled",
    "to_tokens",
]
