"""The CVRP route search (ptrnet/solvers/cvrp_search.py, declared by ptrnet/tasks/cvrp.py):
it never lengthens routes and keeps them valid, its routes are each as short as a brute-force
TSP of their customers on tiny instances, and the runner measures on x and y only."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ptrnet.searches.run import local_search
from ptrnet.solvers import cvrp as solver
from ptrnet.solvers.cvrp_search import improve_routes
from ptrnet.tasks import SizeRange, get_task
from ptrnet.tasks.cvrp import ROUTE_SEARCH, instance_rows

CVRP = get_task("cvrp")


def route_optimum(coords: np.ndarray, route: np.ndarray) -> float:
    """The shortest depot -> customers of ``route`` -> depot, over every order (brute force)."""
    return min(solver.route_length(coords, order) for order in itertools.permutations(route))


def random_answer(rng: np.random.Generator, points: np.ndarray) -> np.ndarray:
    """A valid answer: the customers shuffled, a new route wherever the next one does not fit."""
    demands, capacity = points[:, 2], points[0, 3]
    routes, load = [[]], 0.0
    for c in rng.permutation(np.arange(1, len(points))).tolist():
        if load + demands[c] > capacity:
            routes.append([])
            load = 0.0
        routes[-1].append(c)
        load += demands[c]
    return solver.join_routes(routes)


def searched(points: np.ndarray, answer: np.ndarray) -> np.ndarray:
    """The route search through the runner, as every front end runs it."""
    (found,) = local_search(ROUTE_SEARCH, [points], [answer], None, None, CVRP.coordinates)
    return found


@pytest.mark.parametrize("seed", range(4))
def test_the_search_never_lengthens_routes_and_keeps_them_valid(seed):
    rng = np.random.default_rng(seed)
    for points in CVRP.generate(SizeRange(5, 30), 6, seed):
        start = random_answer(rng, points)
        found = searched(points, start)
        assert CVRP.is_valid(points, found), found
        assert CVRP.sequence_cost(points, found) <= CVRP.sequence_cost(points, start) + 1e-12
        again = searched(points, found)  # a local optimum: nothing left to move
        np.testing.assert_array_equal(again, found)


@pytest.mark.parametrize("seed", range(6))
def test_from_the_optimum_s_routes_scrambled_each_route_is_its_brute_force_optimum(seed):
    """Demands 4..6 against capacity 14 keep routes to three customers, where a 2-opt local
    optimum is the route's optimum: the search restores the exact solver's total."""
    rng = np.random.default_rng(seed)
    coords = rng.random((9, 2))
    demands = np.concatenate([[0], rng.integers(4, 7, size=8)])
    points = instance_rows(coords, demands, 14)
    best = solver.exact_routes(coords, demands, 14)
    scrambled = solver.join_routes([rng.permutation(route) for route in best])
    found = searched(points, scrambled)
    assert CVRP.is_valid(points, found)
    for route in solver.split_routes(found):
        assert solver.route_length(coords, route) == pytest.approx(route_optimum(coords, route))
    total = solver.routes_length(coords, best)
    assert CVRP.sequence_cost(points, found) == pytest.approx(total)


def test_relocation_and_swap_respect_the_capacity():
    """Customers 1 and 2 side by side in two routes, 3 far away: their loads (6 + 6 over a
    capacity of 10) keep them apart whatever moves; with room, they share a route."""
    coords = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 0.01], [-1.0, 0.0]])
    dist = solver.distance_matrix(coords)
    start = [[1, 3], [2]]
    tight = np.array([0, 6, 6, 4])
    found = improve_routes(dist, tight, 10, start)
    assert all(tight[r].sum() <= 10 for r in found)
    assert not any({1, 2} <= set(r.tolist()) for r in found)
    assert solver.routes_length(coords, found) <= solver.routes_length(coords, start)
    roomy = improve_routes(dist, np.array([0, 1, 1, 1]), 10, start)
    assert any({1, 2} <= set(r.tolist()) for r in roomy)
    assert solver.routes_length(coords, roomy) < 4.02  # from 6.0001


def test_lengths_are_measured_on_x_and_y_only():
    """Demands in the hundreds would swamp the lengths if measured with the coordinates: the
    runner's answer is the search's on the x-y distances."""
    rng = np.random.default_rng(3)
    coords = rng.random((12, 2))
    demands = np.concatenate([[0], rng.integers(100, 300, size=11)])
    points = instance_rows(coords, demands, 900)
    start = random_answer(rng, points)
    expected = ROUTE_SEARCH.moves(points, start, solver.distance_matrix(coords))
    np.testing.assert_array_equal(searched(points, start), expected)
    assert CVRP.coordinates(points).shape == (12, 2)
    tsp_points = rng.random((5, 2))
    assert get_task("tsp").coordinates(tsp_points) is tsp_points  # every column, as given


@pytest.mark.parametrize(
    ("answer", "problem"),
    [([1, 0, 2], "customer 3 is not served"), ([0, 1, 2, 3], "depot"), ([1, 2, 2, 3], "twice")],
)
def test_an_answer_that_is_not_routes_is_refused_naming_the_instance(answer, problem):
    points = instance_rows(np.random.default_rng(0).random((4, 2)), [0, 1, 1, 1], 5)
    with pytest.raises(ValueError, match=f"instance 0: .*{problem}"):
        searched(points, np.array(answer))


@pytest.mark.parametrize("seed", range(3))
def test_augmentation_keeps_the_depot_first_and_the_label_exact(seed):
    """Training augmentation permutes the customers and moves x and y by one of the square's
    symmetries: the depot stays row 0 (its image), each customer keeps its demand, and the
    relabelled routes are as long and as valid."""
    from ptrnet.tasks.symmetry import SQUARE_SYMMETRIES, square_symmetry
    from ptrnet.training.augment import augment

    (points,) = CVRP.generate(SizeRange(8, 8), 1, seed)
    label = CVRP.solve(points)
    moved, seq = augment(CVRP, points, label, np.random.default_rng(seed))
    images = [square_symmetry(points, k) for k in range(SQUARE_SYMMETRIES)]
    image = next(i for i in images if np.allclose(i[0], moved[0]))  # the depot's image
    assert sorted(map(tuple, moved.tolist())) == sorted(map(tuple, image.tolist()))
    assert CVRP.is_valid(moved, seq)
    assert CVRP.sequence_cost(moved, seq) == pytest.approx(CVRP.sequence_cost(points, label))
