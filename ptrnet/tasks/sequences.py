"""Index sequences, the form every point task's answers take (:mod:`ptrnet.tasks.base`), and
the helpers tasks share on them: permutations, cycles (open or closed by repeating their first
index, any start, either direction), the area a cycle encloses. A task module imports them from
here, not from another task's module.
"""

from __future__ import annotations

import numpy as np

from ptrnet.tasks.base import check_indices


def is_permutation(seq: np.ndarray, n: int) -> bool:
    """``seq`` holds each of 0..n-1 exactly once."""
    return len(seq) == n and check_indices(seq, n) and len(np.unique(seq)) == n


def canonical_cycle(cycle: np.ndarray) -> np.ndarray:
    """Rotate a cycle (no closing index) to start at its lowest index."""
    cycle = np.asarray(cycle, dtype=np.int64)
    if cycle.size == 0:  # an empty prediction (the end symbol first) has no lowest index
        return cycle
    return np.roll(cycle, -int(np.argmin(cycle)))


def restart_closed_cycle(seq: np.ndarray) -> np.ndarray:
    """A closed cycle ``[a, ..., a]`` of distinct indices rotated to start (and end) at its
    lowest index, direction kept; anything else unchanged."""
    seq = np.asarray(seq, dtype=np.int64)
    cycle = seq[:-1]
    if len(seq) < 3 or seq[0] != seq[-1] or len(np.unique(cycle)) != len(cycle):
        return seq
    cycle = canonical_cycle(cycle)
    return np.append(cycle, cycle[0])


def open_cycle(seq: np.ndarray) -> np.ndarray:
    """Drop the closing index of a closed sequence (``[a, b, c, a]`` -> ``[a, b, c]``)."""
    seq = np.asarray(seq, dtype=np.int64)
    return seq[:-1] if len(seq) > 1 and seq[0] == seq[-1] else seq


def same_cycle(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two sequences describe the same polygon, whatever their start and direction."""
    a, b = canonical_cycle(open_cycle(a)), canonical_cycle(open_cycle(b))
    return len(a) == len(b) and bool(
        np.array_equal(a, b) or np.array_equal(a, canonical_cycle(b[::-1]))
    )


def signed_area(points: np.ndarray, cycle: np.ndarray) -> float:
    """Shoelace area of the polygon through ``points[cycle]``: > 0 when counter-clockwise.
    Computed on the vertices relative to the first, exactly the same polygon: far from the
    origin, a small polygon's area would otherwise vanish in the rounding of the products."""
    local = points[cycle] - points[cycle[:1]]  # (k, 2)
    x, y = local[:, 0], local[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def closed_tour_problem(n: int, tour: np.ndarray) -> str | None:
    """Why ``tour`` is not a closed tour of ``n`` cities as a search takes it (n + 1 indices,
    the last the first), or None."""
    if len(tour) != n + 1 or tour[0] != tour[-1]:
        return f"a closed tour of {n} cities expected"
    return None


def closed_from(cycle: np.ndarray, first: int) -> np.ndarray:
    """The open ``cycle`` (n,) turned to start at city ``first`` and closed: (n + 1,)."""
    turned = np.roll(cycle, -int(np.flatnonzero(cycle == first)[0]))
    return np.append(turned, turned[0])
