"""Oracle tests for the TSP reference solvers (ptrnet.solvers.tsp*)."""

from __future__ import annotations

import importlib.util
import sys
import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.spatial.distance import cdist
from shared_data import PAPER_DATA

from ptrnet.solvers import tsp_exact
from ptrnet.solvers.tsp import TSP_SOLVERS, distance_matrix, solve_tour, tour_length
from ptrnet.solvers.tsp_exact import (
    INTEGER_SCALE,
    brute_force,
    cycle_cost,
    fast_tsp_exact,
    fast_tsp_near_exact,
    held_karp,
)
from ptrnet.solvers.tsp_heuristics import (
    christofides_tour,
    greedy_edge_tour,
    nearest_neighbour_tours,
    two_opt,
)
from tests.fuzzing import cases

PAPER_TSP5 = PAPER_DATA / "tsp5_test.txt"
HAVE_ELKAI = importlib.util.find_spec("elkai") is not None
AVAILABLE = tuple(s for s in TSP_SOLVERS if s != "lkh" or HAVE_ELKAI)
EXACT_NAMES = ("auto", "exact", "held_karp")
REL = 1e-9


def random_instances(n: int, count: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng([seed, n])
    return [rng.random((n, 2)) for _ in range(count)]


def rounding_bound(points: np.ndarray) -> float:
    """The documented worst case by which an integer-scaled solver's tour can exceed the optimum."""
    return len(points) * float(distance_matrix(points).max(initial=0.0)) / INTEGER_SCALE


def is_permutation(tour: np.ndarray, n: int) -> bool:
    return tour.dtype == np.int64 and np.array_equal(np.sort(tour), np.arange(n))


def optimal_length(points: np.ndarray) -> float:
    return tour_length(points, held_karp(distance_matrix(points)))


# --- distances and tour length -------------------------------------------------------------


def test_distance_matrix_matches_scipy():
    points = np.random.default_rng(0).random((17, 2))
    dist = distance_matrix(points)
    np.testing.assert_allclose(dist, cdist(points, points), rtol=0, atol=1e-15)
    assert np.array_equal(dist, dist.T) and not dist.diagonal().any()


def test_tour_length_counts_return_edge():
    square = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    assert tour_length(square, np.array([0, 1, 2, 3])) == pytest.approx(4.0)
    assert tour_length(square, np.array([2, 3, 0, 1, 2])) == pytest.approx(4.0)
    assert tour_length(square, np.array([0, 2, 1, 3])) == pytest.approx(2 + 2 * np.sqrt(2))


@pytest.mark.parametrize("bad", [[0, 1, 2], [0, 1, 2, 2], [1, 2, 3, 4], [0, 1, 2, 3, 1]])
def test_tour_length_rejects_non_tours(bad):
    with pytest.raises(ValueError, match="not a tour"):
        tour_length(np.zeros((4, 2)), np.array(bad))


# --- exact solvers against independent oracles --------------------------------------------


@pytest.mark.parametrize("n", range(4, 10))
def test_held_karp_matches_brute_force(n):
    for points in random_instances(n, 30 if n < 9 else 8, seed=1):
        dist = distance_matrix(points)
        expected = cycle_cost(dist, brute_force(dist))
        assert cycle_cost(dist, held_karp(dist)) == pytest.approx(expected, rel=REL)


@pytest.mark.parametrize("n", range(4, 15))
def test_fast_tsp_exact_matches_held_karp(n):
    # On uniform instances the integer rounding never changed the optimum in our measurements.
    for points in random_instances(n, 60, seed=2):
        dist = distance_matrix(points)
        expected = cycle_cost(dist, held_karp(dist))
        assert cycle_cost(dist, fast_tsp_exact(dist)) == pytest.approx(expected, rel=REL)


def test_fast_tsp_exact_rounding_stays_within_bound():
    """Near-ties below 1 / INTEGER_SCALE (a jittered grid) can make the integer optimum longer
    in floats; the excess must stay within n * max_distance / INTEGER_SCALE."""
    rng = np.random.default_rng(3)
    grid = np.stack(np.meshgrid(np.arange(3), np.arange(4)), axis=-1).reshape(-1, 2) / 3
    for _ in range(40):
        points = grid + rng.normal(0.0, 1e-5, grid.shape)
        dist = distance_matrix(points)
        excess = cycle_cost(dist, fast_tsp_exact(dist)) - cycle_cost(dist, held_karp(dist))
        assert -1e-12 <= excess <= rounding_bound(points)


def test_exact_is_invariant_to_scale_and_offset():
    for points in random_instances(11, 10, seed=4):
        moved = points * 1e4 - 3e5
        assert tour_length(moved, solve_tour(moved, "exact")) == pytest.approx(
            optimal_length(moved), rel=REL
        )


@pytest.mark.parametrize("n", [15, 20])
def test_near_exact_is_exact_up_to_20(n):
    for points in random_instances(n, 2, seed=5):
        got = tour_length(points, solve_tour(points, "near_exact"))
        assert got == pytest.approx(optimal_length(points), rel=REL)


def test_near_exact_beats_comparators_at_50():
    for points in random_instances(50, 2, seed=6):
        best = min(tour_length(points, solve_tour(points, s)) for s in ("a2", "a3"))
        assert tour_length(points, solve_tour(points, "near_exact")) <= best * (1 + REL)


def starving_find_tour(starved_calls, durations):
    """A stand-in for fast_tsp.find_tour: the first ``starved_calls`` calls sleep through
    their duration (the process descheduled: wall time passes, no CPU) and return the input
    order; later calls run the real search and then spin until this thread has had the
    duration's CPU, so they count as fed however loaded the machine running the test is."""
    real = tsp_exact.fast_tsp.find_tour

    def find_tour(dist, duration_seconds):
        durations.append(duration_seconds)
        if len(durations) <= starved_calls:
            time.sleep(duration_seconds)
            return list(range(len(dist)))
        start = time.thread_time()
        tour = real(dist, duration_seconds=duration_seconds)
        while time.thread_time() - start < duration_seconds:
            pass
        return tour

    return find_tour


def test_near_exact_repeats_a_search_starved_of_cpu(monkeypatch):
    points = random_instances(50, 1, seed=8)[0]
    dist = distance_matrix(points)
    fed = tour_length(points, fast_tsp_near_exact(dist))
    durations = []
    monkeypatch.setattr(tsp_exact.fast_tsp, "find_tour", starving_find_tour(2, durations))
    got = tour_length(points, fast_tsp_near_exact(dist, budget_s=0.005))
    assert durations == [0.005, 0.01, 0.02]  # doubled after each starved call
    assert got == pytest.approx(fed, rel=1e-3)
    assert got < tour_length(points, np.arange(50)) * 0.5


def test_near_exact_gives_up_after_its_tries_and_keeps_the_shortest(monkeypatch):
    points = random_instances(30, 1, seed=9)[0]
    durations = []
    monkeypatch.setattr(tsp_exact.fast_tsp, "find_tour", starving_find_tour(99, durations))
    tour = fast_tsp_near_exact(distance_matrix(points), budget_s=1e-3)  # 0.26 s asleep
    assert len(durations) == tsp_exact.NEAR_EXACT_TRIES
    assert sorted(tour.tolist()) == list(range(30))


def test_paper_tsp5_tours_are_optimal():
    """The released n = 5 file (1-based, closing index): every tour optimal, mean 2.1228."""
    if not PAPER_TSP5.exists():
        pytest.skip(f"{PAPER_TSP5} not present")
    lengths = []
    for line in PAPER_TSP5.read_text().splitlines():
        coords, indices = line.split("output")
        points = np.array(coords.split(), dtype=np.float64).reshape(-1, 2)
        tour = np.array(indices.split(), dtype=np.int64) - 1
        assert len(points) == 5 and len(tour) == 6
        lengths.append(tour_length(points, tour))
        assert lengths[-1] == pytest.approx(optimal_length(points), rel=REL)
    assert len(lengths) == 10_000
    assert np.mean(lengths) == pytest.approx(2.1228, abs=5e-4)


# --- comparators ------------------------------------------------------------------------------


@pytest.mark.parametrize("n", range(10, 16))
def test_comparators_bounded_by_optimum(n):
    for points in random_instances(n, 4, seed=7):
        dist = distance_matrix(points)
        opt = optimal_length(points)
        assert tour_length(points, christofides_tour(dist)) <= 1.5 * opt * (1 + REL)
        for solver in ("a1", "a2", "a3"):
            length = tour_length(points, solve_tour(points, solver))
            assert opt * (1 - REL) <= length
            if solver == "a3":
                assert length <= 1.5 * opt * (1 + REL)


def all_two_opt_deltas(dist: np.ndarray, tour: np.ndarray) -> np.ndarray:
    """Length change of every 2-opt move (i, j) with non-adjacent edges, computed pairwise."""
    n = len(tour)
    deltas = []
    for i in range(n):
        for j in range(i + 2, n):
            if i == 0 and j == n - 1:
                continue
            a, b, c, e = tour[i], tour[i + 1], tour[j], tour[(j + 1) % n]
            deltas.append(dist[a, c] + dist[b, e] - dist[a, b] - dist[c, e])
    return np.array(deltas)


@pytest.mark.parametrize("n", [4, 5, 12, 30])
def test_two_opt_reaches_local_optimum(n):
    rng = np.random.default_rng(8)
    for points in random_instances(n, 5, seed=8):
        dist = distance_matrix(points)
        start = rng.permutation(n)
        tour = two_opt(dist, start)
        assert is_permutation(tour, n)
        assert all_two_opt_deltas(dist, tour).min() >= -1e-12
        assert cycle_cost(dist, tour) <= cycle_cost(dist, start) + 1e-12
        assert np.array_equal(two_opt(dist, start, max_passes=0), start)


def test_constructions_are_optimal_on_a_line():
    """On collinear points the optimal tour is twice the span; greedy edge finds it, and so does
    nearest neighbour started from an end point."""
    xs = np.random.default_rng(9).permutation(np.linspace(0.0, 1.0, 12))
    points = np.stack([xs, np.zeros_like(xs)], axis=1)
    dist = distance_matrix(points)
    assert cycle_cost(dist, greedy_edge_tour(dist)) == pytest.approx(2.0)
    tours = nearest_neighbour_tours(dist)
    assert all(is_permutation(t, 12) and t[0] == s for s, t in enumerate(tours))
    assert cycle_cost(dist, tours[int(np.argmin(xs))]) == pytest.approx(2.0)


def counting_find_tour(monkeypatch) -> list[int]:
    """Let fast_tsp.find_tour run as usual but record the size of every instance it gets."""
    calls = []
    real = tsp_exact.fast_tsp.find_tour
    monkeypatch.setattr(
        tsp_exact.fast_tsp,
        "find_tour",
        lambda dist, duration_seconds: calls.append(len(dist)) or real(dist, duration_seconds),
    )
    return calls


@pytest.mark.parametrize("n", [16, 18, 20])
def test_local_searches_at_16_to_20_and_finds_the_optimum(n, monkeypatch):
    calls = counting_find_tour(monkeypatch)
    for points in random_instances(n, 3, seed=13):
        tour = solve_tour(points, "local")
        assert is_permutation(tour, n)
        assert tour_length(points, tour) == pytest.approx(optimal_length(points), rel=1e-6)
    assert calls and set(calls) == {21}  # padded with copies of city 0, then searched


def test_local_is_exact_up_to_15_and_near_exact_beyond_20(monkeypatch):
    points = random_instances(15, 1, seed=14)[0]
    assert tour_length(points, solve_tour(points, "local")) == pytest.approx(
        optimal_length(points), rel=REL
    )
    calls = counting_find_tour(monkeypatch)
    solve_tour(points, "local")
    assert calls == []  # solved, not searched
    big = random_instances(40, 1, seed=15)[0]
    assert is_permutation(solve_tour(big, "local"), 40)
    assert calls and set(calls) == {40}  # searched; near_exact repeats a call starved of CPU


# --- the public entry point ---------------------------------------------------------------


@st.composite
def point_sets(draw, max_n: int = 8) -> np.ndarray:
    """Small point sets on a coarse grid, so duplicates and collinear points are common."""
    n = draw(st.integers(0, max_n))
    coords = st.sampled_from([0.0, 0.25, 0.5, 1.0])
    return np.array(
        draw(st.lists(st.tuples(coords, coords), min_size=n, max_size=n)), dtype=np.float64
    ).reshape(n, 2)


@cases(100)
@given(point_sets())
def test_every_solver_returns_a_valid_tour(points):
    n = len(points)
    opt = cycle_cost(distance_matrix(points), brute_force(distance_matrix(points)))
    for solver in AVAILABLE:
        tour = solve_tour(points, solver)
        assert is_permutation(tour, n), solver
        length = tour_length(points, tour)
        assert length >= opt - 1e-9, solver
        if solver in EXACT_NAMES or solver in ("near_exact", "local"):
            assert length <= opt + rounding_bound(points) + 1e-9, solver


@pytest.mark.parametrize("solver", AVAILABLE)
def test_larger_instances_and_duplicates(solver):
    n = 20 if solver in EXACT_NAMES else 40
    points = np.random.default_rng(10).random((n, 2))
    points[n // 2 :] = points[: n - n // 2]  # every point twice
    assert is_permutation(solve_tour(points, solver), n)


@pytest.mark.parametrize("solver", ["exact", "held_karp"])
def test_exact_solvers_refuse_large_n(solver):
    with pytest.raises(ValueError, match=solver):
        solve_tour(np.zeros((21, 2)), solver)


def test_auto_switches_to_near_exact_beyond_20():
    assert is_permutation(solve_tour(np.random.default_rng(11).random((21, 2))), 21)


def test_unknown_solver_and_bad_points_raise():
    with pytest.raises(ValueError, match="'nope'"):
        solve_tour(np.zeros((4, 2)), "nope")
    with pytest.raises(ValueError, match="finite"):
        solve_tour(np.array([[0.0, np.nan], [1.0, 1.0]]))
    with pytest.raises(ValueError, match="brute_force"):
        brute_force(np.zeros((10, 10)))


def test_lkh_without_elkai_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "elkai", None)  # makes `import elkai` raise ImportError
    with pytest.raises(ImportError, match=r"pip install ptrnet\[lkh\]"):
        solve_tour(np.random.default_rng(12).random((6, 2)), "lkh")


def test_lkh_matches_exact():
    pytest.importorskip("elkai")
    for points in random_instances(12, 10, seed=13):
        got = tour_length(points, solve_tour(points, "lkh"))
        assert got <= optimal_length(points) + rounding_bound(points)
