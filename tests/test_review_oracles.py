"""Independent oracles for the reference solvers, the label forms and the paper's metrics.

Brute force over every permutation (TSP), exact rational arithmetic (hull), the proven TSPLIB
optima, and hand-made invalid predictions that must count as failures without crashing.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from shared_data import TSPLIB

from ptrnet.io.tsplib import read_optimal, read_tsplib, tsplib_length
from ptrnet.solvers.geometry import convex_hull
from ptrnet.solvers.tsp import distance_matrix, solve_tour, tour_length
from ptrnet.solvers.tsp_exact import fast_tsp_near_exact
from ptrnet.tasks import get_task
from ptrnet.tasks.tsp import canonical_tour

TSP = get_task("tsp")
HULL = get_task("convex_hull")
DELAUNAY = get_task("delaunay")
SORT = get_task("sort")
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


def test_canonical_tour_does_not_depend_on_the_direction_given():
    """On collinear cities the shoelace area is float noise of either sign; the label form must
    still be one per undirected cycle (a reversed tour once kept its own direction)."""
    rng = np.random.default_rng(0)
    for _ in range(1000):
        n = int(rng.integers(3, 9))
        a, b = rng.random(2), rng.random(2)
        points = a + rng.random(n)[:, None] * (b - a)  # on one line, up to rounding
        tour = np.r_[0, rng.permutation(np.arange(1, n))]
        want = canonical_tour(points, tour)
        assert canonical_tour(points, tour[::-1]).tolist() == want.tolist()
        assert canonical_tour(points, np.roll(tour, 3)).tolist() == want.tolist()
        assert TSP.canonical(points, want).tolist() == want.tolist()


@pytest.mark.parametrize("name", ["eil51", "berlin52", "st70"])
def test_tsplib_optimum_is_reproduced_under_nint(name):
    """A strong search on TSPLIB's rounded distances meets the published optimum exactly and
    never beats it: the optimum file and the EUC_2D rounding agree."""
    optimum = read_optimal(TSPLIB / "optimal.txt")[name]
    coords = read_tsplib(TSPLIB / f"{name}.tsp").coords
    rounded = np.floor(distance_matrix(coords) + 0.5)
    tour = fast_tsp_near_exact(rounded, budget_s=0.5)
    assert tsplib_length(coords, tour) == optimum
    assert tsplib_length(coords, np.append(tour, tour[0])) == optimum  # closing index tolerated


def test_tsplib_rounding_is_nint_not_banker():
    # Edges of exactly 0.5 and 2.5 round up (nint(d) = int(d + 0.5)), as TSPLIB defines.
    coords = np.array([[0.0, 0.0], [0.5, 0.0], [0.5, 2.5]])
    assert tsplib_length(coords, [0, 1]) == 2  # 0.5 there and back: 1 + 1
    assert tsplib_length(coords, [1, 2]) == 6


def exact_hull(points: np.ndarray) -> list[int]:
    """Andrew's monotone chain in exact rational arithmetic; duplicates as the lowest index."""
    exact = [(Fraction(float(x)), Fraction(float(y))) for x, y in points]
    first: dict[tuple, int] = {}
    for i, p in enumerate(exact):
        first.setdefault(p, i)
    order = sorted(first.values(), key=lambda i: exact[i])

    def cross(o: int, a: int, b: int) -> Fraction:
        (ox, oy), (ax, ay), (bx, by) = exact[o], exact[a], exact[b]
        return (ax - ox) * (by - oy) - (ay - oy) * (bx - ox)

    def chain(indices: list[int]) -> list[int]:
        out: list[int] = []
        for i in indices:
            while len(out) >= 2 and cross(out[-2], out[-1], i) <= 0:
                out.pop()
            out.append(i)
        return out[:-1]

    return chain(order) + chain(order[::-1])


def test_hull_matches_exact_arithmetic_on_duplicates_and_boundary_points():
    rng = np.random.default_rng(2)
    grid = np.linspace(0, 1, 5)
    for _ in range(100):
        points = rng.choice(grid, size=(int(rng.integers(4, 25)), 2))  # many collinear, twins
        if len(np.unique(points, axis=0)) < 3 or np.linalg.matrix_rank(points - points[0]) < 2:
            continue
        cycle = exact_hull(points)
        start = cycle.index(min(cycle))
        want = [*cycle[start:], *cycle[:start], min(cycle)]
        assert HULL.solve(points).tolist() == want
        assert sorted(convex_hull(points).tolist()) == sorted(cycle)
