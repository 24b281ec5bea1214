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
from ptrnet.solvers.tsp import distance_matrix, solve_path, solve_tour, tour_length
from ptrnet.solvers.tsp_exact import fast_tsp_near_exact
from ptrnet.tasks import POINT_TASKS, get_task
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


# --- metrics on invalid predictions ---------------------------------------------------------

SQUARE = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.5, 0.4]])


def test_hull_output_cut_before_its_closing_index_is_wrong_and_not_simple():
    ref = HULL.solve(SQUARE)  # [0, 1, 2, 3, 0]
    scores = HULL.metrics([SQUARE] * 2, [ref] * 2, [ref[:-1], ref])
    assert scores["accuracy"] == 0.5
    assert scores["non_simple_rate"] == 0.5 and scores["area_coverage"] == 1.0


def test_hull_metrics_read_a_duplicated_vertex_by_either_copy():
    points = np.vstack([SQUARE, SQUARE[2:3]])  # point 5 is a copy of vertex 2
    ref = HULL.solve(points)
    assert ref.tolist() == [0, 1, 2, 3, 0]
    pred = np.array([0, 1, 5, 3, 0])
    assert HULL.sequence_cost(points, pred) == 0.0  # the cost already agrees
    assert HULL.metrics([points], [ref], [pred])["accuracy"] == 1.0
    twice = np.array([0, 1, 2, 5, 3, 0])  # the vertex visited by both copies
    assert HULL.metrics([points], [ref], [twice])["accuracy"] == 0.0


def test_delaunay_metrics_read_a_duplicated_vertex_by_either_copy():
    points = np.vstack([SQUARE, SQUARE[4:5]])  # point 5 is a copy of the inner point 4
    ref = DELAUNAY.solve(points)
    pred = np.where(ref == 4, 5, ref)
    scores = DELAUNAY.metrics([points], [ref], [pred])
    assert scores == {"accuracy": 1.0, "triangle_coverage": 1.0, "count": 1}


def invalid_outputs(ref: np.ndarray, n: int) -> list[np.ndarray]:
    return [
        np.zeros(0, dtype=np.int64),
        ref[:1],
        ref[: len(ref) // 2],
        ref[:-1],
        np.concatenate([ref, ref]),
        np.full(len(ref), ref[0]),
        np.append(ref, n),  # an index past the last input
        np.append(ref[:-1], -1),
    ]


@pytest.mark.parametrize("name", POINT_TASKS)
def test_invalid_outputs_never_crash_and_never_score_full(name):
    task = get_task(name)
    rng = np.random.default_rng(3)
    for _ in range(10):
        points = task.sample_points(rng, 7)
        ref = task.solve(points)
        perfect = task.metrics([points], [ref], [ref])
        for pred in invalid_outputs(ref, len(points)):
            if task.is_valid(points, pred):
                continue  # e.g. a Delaunay output with a triangle dropped is well formed
            scores = task.metrics([points], [ref], [pred])
            assert scores["count"] == 1
            headline = task.validation_metric
            if task.lower_is_better:
                assert scores["valid_rate"] == 0.0
            else:
                assert scores[headline] <= perfect[headline]
                if name != "delaunay":  # coverage ignores extra triangles, by the paper's rule
                    assert scores[headline] < perfect[headline], pred


def test_metrics_are_means_over_instances_not_over_points():
    rng = np.random.default_rng(4)
    small, large = rng.random((5, 2)), rng.random((40, 2))
    refs = [HULL.solve(small), HULL.solve(large)]
    assert HULL.metrics([small, large], refs, [refs[0], refs[1][:2]])["accuracy"] == 0.5
    refs = [DELAUNAY.solve(small), DELAUNAY.solve(large)]
    half = DELAUNAY.metrics([small, large], refs, [refs[0], refs[1][: 3 * (len(refs[1]) // 6)]])
    coverage = (1 + (len(refs[1]) // 6) / (len(refs[1]) // 3)) / 2
    assert half["triangle_coverage"] == pytest.approx(coverage)
    values = [rng.random((3, 1)), rng.random((30, 1))]
    refs = [SORT.solve(v) for v in values]
    scores = SORT.metrics(values, refs, [refs[0], refs[1][::-1]])
    assert scores["exact_match"] == 0.5 and scores["valid_rate"] == 1.0


def test_sort_ties_keep_index_order_and_any_tie_order_scores_full():
    values = np.array([[0.5], [0.2], [0.5], [0.2], [0.9]])
    ref = SORT.solve(values)
    assert ref.tolist() == [1, 3, 0, 2, 4]
    swapped = np.array([3, 1, 2, 0, 4])
    assert SORT.canonical(values, swapped).tolist() == ref.tolist()
    assert SORT.metrics([values], [ref], [swapped])["exact_match"] == 1.0
    repeated = np.array([1, 1, 0, 2, 4])  # equal values, but index 1 twice
    assert SORT.metrics([values], [ref], [repeated])["exact_match"] == 0.0


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
