"""Label-preserving training augmentation: a new view of an instance whose label stays exact.

Two transformations keep a correct label correct without solving again:

* **Input order.** A pointer network reads its inputs in order, but the problems do not depend on
  it: relabelling the inputs by a permutation relabels the solution the same way; a task whose
  first input has a role of its own (``rotated_starts`` false: a routing instance's depot)
  keeps it first and permutes the others.
* **Symmetries of the unit square** (tasks with ``square_symmetric``: hull, Delaunay, TSP,
  vehicle routing; :mod:`ptrnet.tasks.symmetry`, on x and y only, a routing row's demand and
  capacity kept): they keep hulls, Delaunay triangles, optimal tours and routes; a flip turns a
  counter-clockwise cycle clockwise, which :meth:`Task.canonical` folds back into the label
  form.

This matters for file data with expensive labels (exact TSP tours): every epoch sees each
instance in one of ``8 * n!`` forms. Generated data is fresh anyway.
"""

from __future__ import annotations

import numpy as np

from ptrnet.tasks import Task
from ptrnet.tasks.symmetry import SQUARE_SYMMETRIES, square_symmetry


def augment(
    task: Task, points: np.ndarray, seq: np.ndarray | None, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray | None]:
    """A random relabelled (and, where the task allows, reflected) view of one instance.

    Args:
        task: the task ``seq`` solves.
        points: (n, dim) instance.
        seq: a correct 0-based label for ``points``, or None (unlabelled: None is returned).
        rng: draws the input order and the symmetry.

    Returns:
        ``(points', seq')``: ``points'[i]`` is a transformed ``points[order[i]]`` and ``seq'`` is
        the label of ``points'`` in the task's canonical form.
    """
    if task.rotated_starts:
        order = rng.permutation(len(points))  # (n,) new position -> old index
    else:  # the first input keeps its place and role (a depot)
        order = np.concatenate([[0], 1 + rng.permutation(len(points) - 1)])
    moved = np.asarray(points, dtype=np.float64)[order]
    if task.square_symmetric:
        moved = square_symmetry(moved, int(rng.integers(SQUARE_SYMMETRIES)))
    if seq is None:
        return moved, None
    new_index = np.argsort(order)  # old index -> new position
    return moved, task.canonical(moved, new_index[np.asarray(seq, dtype=np.int64)])
