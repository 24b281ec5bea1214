"""The TSP solvers against brute force over every order of the cities: the exact solvers on
degenerate instances (one city, twins, collinear cities), the near-exact search and the
comparators never shorter than the optimum, and shortest paths at any scale."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ptrnet.solvers.tsp import distance_matrix, solve_path, solve_tour, tour_length
from ptrnet.tasks import get_task

TSP = get_task("tsp")
EXACT_SOLVERS = ("exact", "held_karp", "near_exact", "local")


def brute_force_length(points: np.ndarray) -> float:
    """The optimal closed-tour length by trying every order of the cities after city 0."""
    n = len(points)
    return min(tour_length(points, [0, *rest]) for rest in itertools.permutations(range(1, n)))


def degenerate_instances() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    line = np.c_[rng.random(7), np.zeros(7)]
    diagonal = np.repeat(rng.random((7, 1)), 2, axis=1)
    twins = rng.random((4, 2)).repeat(2, axis=0)  # every city twice
    return [
        np.zeros((1, 2)),
        rng.random((2, 2)),
        rng.random((3, 2)),
        np.full((6, 2), 0.3),
        line,
        diagonal,
        twins,
        np.vstack([rng.random((5, 2)), [[0.5, 0.5]] * 3]),
    ]


@pytest.mark.parametrize("points", degenerate_instances(), ids=lambda p: f"n{len(p)}")
def test_exact_solvers_match_brute_force_on_degenerate_instances(points):
    best = brute_force_length(points)
    for solver in EXACT_SOLVERS:
        label = TSP.solve(points, solver)
        assert label[0] == label[-1] == 0 and TSP.is_valid(points, label)
        # fast-tsp's integer rounding costs at most n * max distance / 40,000.
        assert tour_length(points, label) == pytest.approx(best, rel=1e-3, abs=1e-12), solver


def test_near_exact_is_never_shorter_than_exact():
    rng = np.random.default_rng(1)
    for n in (5, 8, 12):
        for _ in range(5):
            points = rng.random((n, 2))
            exact = tour_length(points, solve_tour(points, "held_karp"))
            assert tour_length(points, solve_tour(points, "near_exact")) >= exact - 1e-12
            for comparator in ("a1", "a2", "a3"):
                assert tour_length(points, solve_tour(points, comparator)) >= exact - 1e-12


@pytest.mark.parametrize("scale", [1e-4, 1.0, 1e4])
def test_shortest_path_between_two_cities_is_optimal_at_any_scale(scale):
    """solve_path's dummy city sat an absolute 1 above two longest distances: on an instance
    1e-4 across it took the integer solver's resolution and paths came out 26% too long."""
    rng = np.random.default_rng(5)
    for _ in range(20):
        points = rng.random((8, 2)) * scale
        dist = distance_matrix(points)
        inner = itertools.permutations(range(1, 7))
        best = min(dist[[0, *p], [*p, 7]].sum() for p in (list(q) for q in inner))
        for solver in ("exact", "held_karp"):
            path = solve_path(points, 0, 7, solver)
            assert path[0] == 0 and path[-1] == 7 and sorted(path.tolist()) == list(range(8))
            assert dist[path[:-1], path[1:]].sum() == pytest.approx(best, rel=1e-3)
