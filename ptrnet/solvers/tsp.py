"""TSP reference solvers behind one entry point, plus distances and tour length.

Solvers (``TSP_SOLVERS``; details and licences in docs/solvers.md):

* ``exact``: fast-tsp's Held–Karp on integer-scaled distances, n <= 20 (the paper's exact labels).
* ``held_karp``: our numpy Held–Karp on float distances, n <= 20 (slower; the oracle).
* ``near_exact``: fast-tsp's time-budgeted local search, any n; exact for n <= 20.
* ``local``: ``near_exact``, but searching rather than solving at 16 <= n <= 20 (50 times
  faster at n = 20; fast training labels).
* ``a1``, ``a2``, ``a3``: the paper's comparators (greedy edge / nearest neighbour /
  Christofides, each with 2-opt).
* ``lkh``: LKH-3 through the optional ``elkai`` package.
* ``auto``: ``exact`` for n <= 20, ``near_exact`` beyond.

A tour is an int64 permutation of ``0..n-1`` without the closing index, in any rotation and
direction; the TSP task picks the canonical one. Instances of n <= 3 have only one cycle and
get ``0..n-1`` from every solver.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ptrnet.quoting import quote
from ptrnet.solvers import tsp_exact, tsp_heuristics
from ptrnet.solvers.geometry import safe_range, safe_scaled

TSP_SOLVERS: tuple[str, ...] = (
    "auto",
    "exact",
    "held_karp",
    "near_exact",
    "local",
    "a1",
    "a2",
    "a3",
    "lkh",
)

_SOLVERS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "exact": tsp_exact.fast_tsp_exact,
    "held_karp": tsp_exact.held_karp,
    "near_exact": tsp_exact.fast_tsp_near_exact,
    "local": tsp_exact.fast_tsp_local,
    "a1": tsp_heuristics.a1_tour,
    "a2": tsp_heuristics.a2_tour,
    "a3": tsp_heuristics.a3_tour,
    "lkh": tsp_heuristics.lkh_tour,
}


MAX_N: dict[str, int] = {
    "exact": tsp_exact.EXACT_MAX_N,
    "held_karp": tsp_exact.EXACT_MAX_N,
    "near_exact": 5_000,
    "local": 5_000,
    "lkh": 5_000,
    "a1": 2_000,
    "a3": 1_000,
    "a2": 200,
}
"""Largest instance per solver: exact ones by their O(2^n n^2) cost, the others so that the
(n, n) distance matrix stays under 200 MB and one instance within minutes (docs/reliability.md)."""


def check_solver_size(solver: str, n: int) -> None:
    """Raise ValueError when ``solver`` (not ``auto``) cannot take ``n`` cities, naming one that
    can."""
    limit = MAX_N.get(solver)
    if limit is not None and n > limit:
        larger = [name for name, size in MAX_N.items() if size >= n]
        hint = f"; use --solver {larger[0]} (n <= {MAX_N[larger[0]]})" if larger else ""
        raise ValueError(f"TSP solver {solver!r} handles n <= {limit}, got n = {n}{hint}")


def distance_matrix(points: np.ndarray) -> np.ndarray:
    """Euclidean distances between all pairs of ``points`` (n, dim): (n, n) float64, exactly
    symmetric with a zero diagonal, in the points' units. Measured on :func:`safe_scaled`'s
    image and scaled back, so no finite instance's distances underflow to 0 or overflow;
    a search on the distances runs on ``distance_matrix(safe_range(points))``, whose values
    are near 1 (a relative move threshold cannot tell apart sub-normal differences)."""
    image, scale = safe_scaled(points)
    return scale * np.linalg.norm(image[:, None, :] - image[None, :, :], axis=-1)


def tour_length(points: np.ndarray, tour: np.ndarray) -> float:
    """Length of the closed tour through ``points`` (n, dim), the return edge included, in the
    points' units (measured on :func:`safe_scaled`'s image: finite and non-zero at any scale).

    Args:
        points: (n, dim) coordinates.
        tour: a permutation of ``0..n-1``, with or without the closing index repeated at the end.

    Raises:
        ValueError: if ``tour`` (closing index removed) is not a permutation of ``0..n-1``.
    """
    points = np.asarray(points, dtype=np.float64)
    tour = np.asarray(tour, dtype=np.int64)
    n = len(points)
    if len(tour) == n + 1 and n > 0 and tour[0] == tour[-1]:
        tour = tour[:-1]
    if not np.array_equal(np.sort(tour), np.arange(n)):
        raise ValueError(f"not a tour of {n} cities: {tour.tolist()}")
    image, scale = safe_scaled(points)  # in range, then back to the points' units
    return scale * float(np.linalg.norm(image[tour] - image[np.roll(tour, -1)], axis=1).sum())


def solve_tour(
    points: np.ndarray, solver: str = "auto", *, seed: int = 0, dist: np.ndarray | None = None
) -> np.ndarray:
    """A tour through ``points`` by ``solver`` (one of ``TSP_SOLVERS``).

    Args:
        points: (n, dim) float coordinates, n >= 0; duplicates allowed.
        solver: solver name; ``auto`` = ``exact`` for n <= 20, else ``near_exact``.
        seed: reserved for solvers that draw random numbers; every current solver is
            deterministic given its input except ``near_exact`` at n > 20, whose time
            budget fast-tsp does not let us seed.
        dist: (n, n) distances to solve on instead of the points' Euclidean ones (another
            rule's, :meth:`ptrnet.solvers.distances.Distances.search_matrix`).

    Returns:
        (n,) int64 permutation of ``0..n-1``, no closing index, any rotation and direction.

    Raises:
        ValueError: on an unknown solver, malformed points or ``dist``, or n over the
            solver's ``MAX_N`` (``auto`` over near_exact's).
        ImportError: for ``lkh`` without the optional elkai package.
    """
    points = np.asarray(points, dtype=np.float64)
    solver = _checked_solver(solver, points, len(points))
    return _SOLVERS[solver](_search_matrix(points, dist))


def _search_matrix(points: np.ndarray, dist: np.ndarray | None) -> np.ndarray:
    """The distances a solver works on: ``dist``, or when None the Euclidean distances of
    :func:`~ptrnet.solvers.geometry.safe_range`'s image of ``points``.

    Raises:
        ValueError: ``dist`` that is not a finite (n, n) matrix for the n points.
    """
    if dist is None:
        return distance_matrix(safe_range(points))
    dist = np.asarray(dist, dtype=np.float64)
    if dist.shape != (len(points), len(points)) or not np.all(np.isfinite(dist)):
        raise ValueError(f"dist must be a finite ({len(points)}, {len(points)}) matrix")
    return dist


def _checked_solver(solver: str, points: np.ndarray, cities: int) -> str:
    """``solver`` for an instance of ``cities`` cities (``auto`` resolved: ``exact`` up to
    20, else ``near_exact``), after checking it and ``points`` (float64).

    Raises:
        ValueError: an unknown solver, points that are not a finite (n, dim) array, or
            ``cities`` over the solver's ``MAX_N``.
    """
    if solver not in TSP_SOLVERS:
        raise ValueError(
            f"unknown TSP solver {quote(solver)}; choose from {', '.join(TSP_SOLVERS)}"
        )
    if points.ndim != 2 or not np.all(np.isfinite(points)):
        raise ValueError(f"points must be a finite (n, dim) array, got shape {points.shape}")
    if solver == "auto":
        solver = "exact" if cities <= tsp_exact.EXACT_MAX_N else "near_exact"
    check_solver_size(solver, cities)
    return solver


def solve_path(
    points: np.ndarray,
    first: int,
    last: int,
    solver: str = "auto",
    dist: np.ndarray | None = None,
) -> np.ndarray:
    """A short Hamiltonian path through every point of ``points`` from ``first`` to ``last``
    (``first != last``), by ``solver`` on the instance plus one dummy city.

    The dummy sits at distance 0 from ``first`` and ``last`` and ``3 * max distance`` from
    every other city (every distance is scaled to the largest, so the dummy costs the integer
    solvers two thirds of their resolution, at any scale). A tour that visits the dummy
    between ``first`` and ``last`` is a path from one to the other at the tour's length, and
    an optimal tour does: a path from u to v, closed into a cycle and opened again by
    :func:`path_between`, becomes a path from ``first`` to ``last`` at most two longest
    distances longer, so a dummy beside another city costs more than it saves. With
    ``exact`` (n + 1 <= 20) the path is thus optimal up to the rounding of the integer
    solvers. Where a heuristic returns a tour with the dummy elsewhere, the tour without it
    becomes a path by :func:`path_between`. ``dist`` (n, n): distances to solve on instead of
    the points' Euclidean ones, as :func:`solve_tour` takes them.

    Returns:
        (n,) int64 permutation of ``0..n-1`` starting at ``first`` and ending at ``last``.

    Raises:
        ValueError: as :func:`solve_tour` (the dummy counts towards the solver's size), or
            ``first``/``last`` equal or outside ``0..n-1``.
        ImportError: for ``lkh`` without the optional elkai package.
    """
    points = np.asarray(points, dtype=np.float64)
    n = len(points)
    solver = _checked_solver(solver, points, n + 1)  # the dummy is a city
    if not (0 <= first < n and 0 <= last < n) or first == last:
        raise ValueError(f"path ends must be two different cities of {n}, got {first}, {last}")
    if n == 2:
        return np.array([first, last], dtype=np.int64)
    dist = _search_matrix(points, dist)
    # Any value over two longest distances keeps the dummy between the ends; a multiple of the
    # longest, not an absolute margin, so small instances keep the integer solvers' resolution.
    dummy = np.full(n, 3.0 * dist.max())
    dummy[[first, last]] = 0.0
    extended = np.zeros((n + 1, n + 1))
    extended[:n, :n], extended[n, :n], extended[:n, n] = dist, dummy, dummy
    tour = _SOLVERS[solver](extended)
    tour = np.roll(tour, -int(np.flatnonzero(tour == n)[0]))  # (n+1,) from the dummy
    if {int(tour[1]), int(tour[-1])} == {first, last}:
        path = tour[1:] if tour[1] == first else tour[:0:-1]
        return path.astype(np.int64)
    return path_between(tour[1:], first, last)


def path_between(cycle: np.ndarray, first: int, last: int) -> np.ndarray:
    """A path from ``first`` to ``last`` through the cities of ``cycle`` (a tour, no closing
    index): walk from ``first`` along the cycle to just before ``last``, jump to the city
    before ``first``, and walk the other way round to ``last``. The cycle loses two edges and
    gains one, so the path is at most the cycle's length plus the longest distance."""
    cycle = np.roll(np.asarray(cycle, dtype=np.int64), -int(np.flatnonzero(cycle == first)[0]))
    j = int(np.flatnonzero(cycle == last)[0])
    return np.concatenate([cycle[:j], cycle[: j - 1 : -1]])
