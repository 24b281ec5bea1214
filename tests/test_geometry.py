"""Oracle tests for the geometric reference solvers and the hull / Delaunay targets."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptrnet.solvers.geometry import convex_hull, delaunay_triangles, incenters
from ptrnet.tasks import DegenerateInstanceError, get_task
from ptrnet.tasks.convex_hull import simple_polygon_area
from ptrnet.tasks.sequences import same_cycle
from tests.fuzzing import cases

HULL = get_task("convex_hull")
DELAUNAY = get_task("delaunay")


def regular_polygon(k: int, start: float = 0.3) -> np.ndarray:
    angles = start + 2 * np.pi * np.arange(k) / k
    return 0.5 + 0.4 * np.stack([np.cos(angles), np.sin(angles)], axis=1)


def test_regular_polygon_keeps_every_point_and_drops_an_interior_one():
    points = np.vstack([regular_polygon(7), [[0.5, 0.5]]])
    assert HULL.solve(points).tolist() == [0, 1, 2, 3, 4, 5, 6, 0]


def test_hull_is_counter_clockwise_from_lowest_index():
    points = regular_polygon(6)[::-1].copy()  # clockwise input order
    target = HULL.solve(points)
    assert target[0] == 0 and target[-1] == 0
    assert target.tolist() == [0, 5, 4, 3, 2, 1, 0]


def test_collinear_boundary_points_are_not_vertices():
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0], [1, 0.25], [0.5, 0.5]], float)
    assert sorted(HULL.solve(square)[:-1].tolist()) == [0, 1, 2, 3]


def test_duplicate_vertex_is_represented_by_lowest_index():
    points = np.array([[0.5, 0.5], [0, 0], [1, 0], [0, 1], [1, 1], [1, 0]], float)
    target = HULL.solve(points)
    assert 5 not in target.tolist() and sorted(target[:-1].tolist()) == [1, 2, 3, 4]


@pytest.mark.parametrize(
    "points",
    [
        np.array([[0, 0], [1, 1], [2, 2], [3, 3]], float),
        np.array([[0.2, 0.2]] * 5, float),
        np.array([[0, 0], [1, 1]], float),
    ],
)
def test_degenerate_inputs_raise_clear_errors(points):
    with pytest.raises(DegenerateInstanceError, match="collinear|distinct"):
        HULL.solve(points)
    with pytest.raises(DegenerateInstanceError, match="collinear|distinct"):
        DELAUNAY.solve(points)


def test_hull_agrees_with_monotone_chain_oracle():
    rng = np.random.default_rng(1)
    for _ in range(200):
        points = rng.random((rng.integers(3, 40), 2))
        assert sorted(convex_hull(points).tolist()) == sorted(monotone_chain(points))


def monotone_chain(points: np.ndarray) -> list[int]:
    """Andrew's monotone chain, strict turns only: an independent hull oracle for tests."""
    order = sorted(range(len(points)), key=lambda i: (points[i, 0], points[i, 1]))

    def cross(o, a, b):
        return (points[a, 0] - points[o, 0]) * (points[b, 1] - points[o, 1]) - (
            points[a, 1] - points[o, 1]
        ) * (points[b, 0] - points[o, 0])

    def chain(idx):
        out = []
        for i in idx:
            while len(out) >= 2 and cross(out[-2], out[-1], i) <= 0:
                out.pop()
            out.append(i)
        return out[:-1]

    return chain(order) + chain(order[::-1])


def circumcircle_is_empty(points: np.ndarray, tri: np.ndarray) -> bool:
    a, b, c = points[tri]
    d = 2 * (a[0] * (b[1] - c[1]) + b[0] * (c[1] - a[1]) + c[0] * (a[1] - b[1]))
    ux = (a @ a * (b[1] - c[1]) + b @ b * (c[1] - a[1]) + c @ c * (a[1] - b[1])) / d
    uy = (a @ a * (c[0] - b[0]) + b @ b * (a[0] - c[0]) + c @ c * (b[0] - a[0])) / d
    radius2 = (a[0] - ux) ** 2 + (a[1] - uy) ** 2
    dist2 = (points[:, 0] - ux) ** 2 + (points[:, 1] - uy) ** 2
    others = np.setdiff1d(np.arange(len(points)), tri)
    return bool(np.all(dist2[others] >= radius2 * (1 - 1e-9)))


@cases(60)
@given(st.integers(3, 30), st.integers(0, 2**32 - 1))
def test_delaunay_triangles_have_empty_circumcircles(n, seed):
    points = np.random.default_rng(seed).random((n, 2))
    triangles = delaunay_triangles(points)
    assert all(circumcircle_is_empty(points, t) for t in triangles)
    hull_size = len(convex_hull(points))
    assert len(triangles) == 2 * n - 2 - hull_size  # Euler: points in general position


def test_delaunay_target_is_ascending_triples_ordered_by_incenter():
    points = np.random.default_rng(3).random((20, 2))
    triples = DELAUNAY.solve(points).reshape(-1, 3)
    assert np.all(np.diff(triples, axis=1) > 0)
    centers = incenters(points, triples)
    keys = [tuple(c) for c in centers]
    assert keys == sorted(keys)


def test_incenter_of_right_triangle():
    points = np.array([[0, 0], [3, 0], [0, 4]], float)
    np.testing.assert_allclose(incenters(points, np.array([[0, 1, 2]])), [[1.0, 1.0]])


def test_delaunay_duplicates_use_lowest_index():
    points = np.array([[0, 0], [1, 0], [0, 1], [1, 0], [1, 1]], float)
    assert 3 not in DELAUNAY.solve(points).tolist()


def test_cocircular_points_are_deterministic():
    points = regular_polygon(8)
    first = DELAUNAY.solve(points)
    assert all(np.array_equal(first, DELAUNAY.solve(points.copy())) for _ in range(5))
    assert len(first) == 3 * 6


def test_same_cycle_ignores_start_and_direction():
    assert same_cycle(np.array([0, 1, 2, 3, 0]), np.array([2, 1, 0, 3, 2]))
    assert same_cycle(np.array([0, 1, 2, 3, 0]), np.array([1, 2, 3, 0]))
    assert not same_cycle(np.array([0, 1, 2, 3, 0]), np.array([0, 2, 1, 3, 0]))


def test_bow_tie_is_not_simple():
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], float)
    assert simple_polygon_area(square, np.array([0, 1, 2, 3, 0])) == pytest.approx(1.0)
    assert simple_polygon_area(square, np.array([0, 2, 1, 3, 0])) is None
    assert simple_polygon_area(square, np.array([0, 1, 0])) is None


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
