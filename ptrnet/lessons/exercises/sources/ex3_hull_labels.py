"""Exercise 3: convex-hull labels in the canonical order.

A model learns one answer per input, so the label must be written one way only. ptrnet (like
the paper's data files) writes a hull as its vertices **counter-clockwise, starting at the
lowest input index, closed by repeating that index**: for the points

    0 (0.9, 0.1)   1 (0.5, 0.5)   2 (0.1, 0.1)   3 (0.5, 0.9)

the label is [0, 3, 2, 0] (point 1 is inside). Any hull algorithm will do (Andrew's monotone
chain is short); the work is in the order.
"""

import numpy as np


def hull_label(points: np.ndarray) -> np.ndarray:
    """The canonical convex-hull label of ``points``.

    Args:
        points: (n, 2) float64 array, n >= 3, in general position (distinct points, no three
            collinear).

    Returns:
        (h + 1,) int64 array: the h hull vertices' 0-based indices counter-clockwise (positive
        shoelace area), the first the lowest index of the h, then that index again.

    Raises:
        ValueError: if ``points`` is not an (n, 2) array with n >= 3.
    """
    # solution: begin
    points = np.asarray(points, dtype=np.float64)
    if points.ndim != 2 or points.shape[1] != 2 or len(points) < 3:
        raise ValueError(f"expected (n, 2) points with n >= 3, got shape {points.shape}")
    order = sorted(range(len(points)), key=lambda i: (points[i, 0], points[i, 1]))

    def cross(o: int, a: int, b: int) -> float:
        (ox, oy), (ax, ay), (bx, by) = points[o], points[a], points[b]
        return (ax - ox) * (by - oy) - (ay - oy) * (bx - ox)

    def chain(indices: list[int]) -> list[int]:
        kept: list[int] = []
        for i in indices:
            while len(kept) >= 2 and cross(kept[-2], kept[-1], i) <= 0:
                kept.pop()
            kept.append(i)
        return kept[:-1]

    cycle = chain(order) + chain(order[::-1])  # lower then upper chain: counter-clockwise
    start = cycle.index(min(cycle))
    cycle = cycle[start:] + cycle[:start]
    return np.array([*cycle, cycle[0]], dtype=np.int64)
    # solution: end
