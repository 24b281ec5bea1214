"""Reference solvers for the geometric tasks: convex hull and Delaunay triangulation via Qhull.

Pure functions, numpy in, 0-based indices out. scipy is imported where used so that
``import ptrnet`` stays light. Qhull runs with scipy's default options: joggling (``QJ``) would
turn duplicated and mid-edge points into hull vertices and give wrong labels.
"""

from __future__ import annotations

import numpy as np

from ptrnet.solvers.errors import DegenerateInstanceError


def unique_points(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct points and, for each, the lowest index it occurs at.

    Returns ``(uniq, first)`` with ``uniq`` (m, dim) and ``first`` (m,) sorted ascending, so
    ``points[first] == uniq``; duplicates are represented by their lowest index.
    """
    _, first = np.unique(points, axis=0, return_index=True)
    first = np.sort(first)
    return points[first], first


def normalized(points: np.ndarray) -> np.ndarray:
    """``points`` (n, dim) moved and scaled uniformly so the longest side spans [0, 1].

    Hulls, triangulations and optimal tours are invariant under this map, and it keeps the
    solvers' arithmetic in range: at 1e300 squared distances overflow (Qhull then calls every
    instance collinear) and at 5e-324 they underflow to zero. Non-finite results (an extent
    beyond the largest float) raise ValueError.
    """
    points = np.asarray(points, dtype=np.float64)
    if len(points) == 0:
        return points
    low = points.min(axis=0)
    with np.errstate(over="ignore", invalid="ignore"):
        extent = float((points.max(axis=0) - low).max())
        scaled = (points - low) / (extent if extent > 0 else 1.0)
    if not np.all(np.isfinite(scaled)):
        raise ValueError("coordinates too large: their extent is not a finite number")
    return scaled


SAFE_MAGNITUDE = 1e100
"""Coordinates and extents between 1/SAFE_MAGNITUDE and SAFE_MAGNITUDE square without overflow
or underflow; instances outside are solved on their :func:`normalized` image."""


def safe_range(points: np.ndarray) -> np.ndarray:
    """``points`` unchanged when their arithmetic is safe (every |coordinate| and the extent
    within :data:`SAFE_MAGNITUDE`, so ordinary instances keep their exact labels), else
    :func:`normalized`."""
    return safe_scaled(points)[0]


def safe_scaled(points: np.ndarray) -> tuple[np.ndarray, float]:
    """``(safe_range(points), scale)``: a length measured on the first is ``scale`` times
    smaller than on ``points`` (1.0 when they are unchanged, else their extent), so lengths
    computed on the image and multiplied by ``scale`` neither underflow (an instance 1e-200
    across: its squared distances are 0) nor overflow (1e200: infinity).

    Raises:
        ValueError: an extent beyond the largest float (:func:`normalized`).
    """
    points = np.asarray(points, dtype=np.float64)
    if len(points) == 0:
        return points, 1.0
    extent = float(np.ptp(points, axis=0).max()) if np.all(np.isfinite(points)) else np.inf
    big = not float(np.abs(points).max()) <= SAFE_MAGNITUDE
    tiny = 0 < extent < 1 / SAFE_MAGNITUDE
    if big or tiny or not np.isfinite(extent):
        return normalized(points), extent
    return points, 1.0


def first_copies(points: np.ndarray) -> np.ndarray:
    """(n,) int64: for each point, the lowest index holding the same coordinates."""
    points = np.asarray(points, dtype=np.float64)
    if len(points) == 0:
        return np.zeros(0, dtype=np.int64)
    _, first, inverse = np.unique(points, axis=0, return_index=True, return_inverse=True)
    return first[inverse.reshape(-1)].astype(np.int64)


def convex_hull(points: np.ndarray) -> np.ndarray:
    """Extreme vertices of the 2-D convex hull, counter-clockwise, as indices into ``points``.

    Collinear boundary points are not vertices; a duplicated vertex is represented by its lowest
    index. The order starts anywhere (see :func:`ptrnet.tasks.convex_hull.canonical_cycle`).

    Raises:
        DegenerateInstanceError: fewer than three distinct points, or all points collinear.
    """
    from scipy.spatial import ConvexHull

    hull, first = _qhull(ConvexHull, points, "convex hull")
    return first[hull.vertices]  # scipy: 2-D hull vertices are counter-clockwise


def delaunay_triangles(points: np.ndarray) -> np.ndarray:
    """Delaunay triangles as ascending index triples, (m, 3) int64, in no particular order.

    Duplicated points are represented by their lowest index (Qhull would silently drop the
    others). For cocircular points Qhull picks one of the valid triangulations; the choice is
    deterministic for a given input.

    Raises:
        DegenerateInstanceError: fewer than three distinct points, or all points collinear.
    """
    from scipy.spatial import Delaunay

    tri, first = _qhull(Delaunay, points, "Delaunay triangulation")
    return np.sort(first[tri.simplices], axis=1).astype(np.int64)


def _qhull(build, points: np.ndarray, what: str):
    """Run the Qhull structure ``build`` on the distinct points; returns (result, first).

    ``first`` maps the distinct points back to their lowest indices (see :func:`unique_points`).

    Raises:
        DegenerateInstanceError: fewer than three distinct points, or all points collinear.
    """
    from scipy.spatial import QhullError

    uniq, first = unique_points(np.asarray(points, dtype=np.float64))
    uniq = safe_range(uniq)
    if len(uniq) < 3:
        raise DegenerateInstanceError(f"{what} needs at least 3 distinct points")
    try:
        return build(uniq), first
    except QhullError as err:
        raise DegenerateInstanceError(f"{what} undefined: all points are collinear") from err


def planar_degeneracy(points: np.ndarray) -> str | None:
    """Why a planar instance has no 2-D extent ("fewer than 3 distinct points", "all points
    collinear"), or None: the inputs on which hulls and triangulations are undefined."""
    try:
        _qhull(_no_structure, points, "instance")
    except DegenerateInstanceError as err:
        return str(err).removeprefix("instance ").removeprefix("undefined: ")
    return None


def _no_structure(uniq: np.ndarray):
    """Qhull's cheapest full-dimensionality test (a convex hull), for :func:`planar_degeneracy`."""
    from scipy.spatial import ConvexHull

    return ConvexHull(uniq)


def incenters(points: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """Incenter of each triangle: (m, 3) indices -> (m, 2) coordinates.

    The incenter is the side-length-weighted mean of the vertices, each vertex weighted by the
    length of the side opposite it.
    """
    a, b, c = (points[triangles[:, k]] for k in range(3))
    wa = np.linalg.norm(b - c, axis=1)
    wb = np.linalg.norm(c - a, axis=1)
    wc = np.linalg.norm(a - b, axis=1)
    total = wa + wb + wc
    return (wa[:, None] * a + wb[:, None] * b + wc[:, None] * c) / total[:, None]
