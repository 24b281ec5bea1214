"""Exercise 4: tour cost.

A travelling-salesman tour visits every city once and comes back to where it started. Its cost
is its length, and the way back counts: around the unit square [0, 1, 2, 3] costs 4, not 3.
"""

import numpy as np


def tour_length(points: np.ndarray, tour: np.ndarray) -> float:
    """Length of the closed tour through ``points`` in the order ``tour``.

    Args:
        points: (n, 2) float64 city coordinates.
        tour: (n,) int array, a permutation of 0..n-1, or the same with the first city
            repeated at the end, (n + 1,) (both mean the same closed tour).

    Returns:
        The sum of the Euclidean lengths of the n edges, the edge from the last city back to
        the first included, as a Python float.

    Raises:
        ValueError: if ``tour`` (without its closing repeat) is not a permutation of 0..n-1.
    """
    # solution: begin
    points = np.asarray(points, dtype=np.float64)
    tour = np.asarray(tour, dtype=np.int64)
    if len(tour) == len(points) + 1 and tour[0] == tour[-1]:
        tour = tour[:-1]
    if sorted(tour.tolist()) != list(range(len(points))):
        raise ValueError(f"not a tour of {len(points)} cities: {tour.tolist()}")
    steps = points[np.roll(tour, -1)] - points[tour]  # (n, 2): edge i runs tour[i] -> tour[i+1]
    return float(np.linalg.norm(steps, axis=1).sum())
    # solution: end
