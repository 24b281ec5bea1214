"""Unlabelled instances from any input ptrnet accepts: the paper format (its ``output`` part is
ignored), plain point lists, or a TSPLIB ``.tsp`` file (task ``tsp``, scaled into the unit
square as :func:`ptrnet.io.tsplib.read_tsplib` describes)."""

from __future__ import annotations

import os

import numpy as np

from ptrnet.io.errors import UsageError
from ptrnet.io.paper_format import iter_examples
from ptrnet.io.tsplib import read_tsplib
from ptrnet.tasks import Task


def is_tsplib(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a TSPLIB file (by its ``.tsp`` extension)."""
    return os.fspath(path).lower().endswith(".tsp")


def read_points(path: str | os.PathLike[str], task: Task) -> list[np.ndarray]:
    """The instances in ``path`` as (n, dim) arrays, in file order.

    Raises:
        UsageError: a TSPLIB file given for a task other than tsp.
        InputError: a malformed file (names the file and line).
    """
    if is_tsplib(path):
        if task.name != "tsp":
            raise UsageError(f"a TSPLIB .tsp file is a tsp instance, not a {task.name} one")
        return [read_tsplib(path).points]
    return [ex.points for ex in iter_examples(path, task, "ignore")]
