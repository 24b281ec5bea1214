"""CVRP solvers and routes (ptrnet/solvers/cvrp.py): the exact solver against enumeration of
every sequence, PyVRP against the exact one, costs by hand, validity, the protocol."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ptrnet.solvers import cvrp
from ptrnet.solvers.errors import DegenerateInstanceError

pytest.importorskip("pyvrp")  # a core dependency where Python >= 3.11


def instance(seed: int, n: int, capacity: int | None = None):
    coords, demands, protocol = cvrp.sample_instance(np.random.default_rng([11, seed]), n)
    return coords, demands, protocol if capacity is None else capacity


def enumerated_optimum(coords, demands, capacity) -> float:
    """The least length over every ordering of the customers cut into routes at every set of
    places (each route's load within the capacity): all solutions, a route in either
    direction included."""
    n = len(coords) - 1
    best = math.inf
    for order in itertools.permutations(range(1, n + 1)):
        for cuts in itertools.product((False, True), repeat=n - 1):
            routes, route = [], [order[0]]
            for customer, cut in zip(order[1:], cuts, strict=True):
                if cut:
                    routes.append(route)
                    route = []
                route.append(customer)
            routes.append(route)
            if all(sum(demands[c] for c in r) <= capacity for r in routes):
                best = min(best, cvrp.routes_length(coords, routes))
    return best


@pytest.mark.parametrize("seed", range(12))
def test_the_exact_solver_matches_enumeration_of_every_solution(seed):
    n = 1 + seed % 5  # 1..5 customers: 5! * 2^4 solutions at most
    coords, demands, _ = instance(seed, n)
    capacity = int(np.random.default_rng(seed).integers(9, 20))
    routes = cvrp.exact_routes(coords, demands, capacity)
    assert cvrp.routes_problem(demands, capacity, routes) is None
    expected = enumerated_optimum(coords, demands, capacity)
    assert cvrp.routes_length(coords, routes) == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_pyvrp_finds_the_exact_optimum_on_tiny_instances(seed):
    n = 4 + seed % 5  # 4..8 customers
    coords, demands, _ = instance(100 + seed, n)
    capacity = 10 + seed  # tight: two routes or more
    exact = cvrp.exact_routes(coords, demands, capacity)
    found = cvrp.pyvrp_routes(coords, demands, capacity, iterations=500)
    assert cvrp.routes_problem(demands, capacity, found) is None
    slack = cvrp.rounding_bound(coords)
    assert abs(cvrp.routes_length(coords, found) - cvrp.routes_length(coords, exact)) <= slack


def test_pyvrp_is_deterministic_under_its_seed():
    coords, demands, capacity = instance(5, 30)
    first = cvrp.pyvrp_routes(coords, demands, capacity, iterations=300)
    again = cvrp.pyvrp_routes(coords, demands, capacity, iterations=300)
    assert [r.tolist() for r in first] == [r.tolist() for r in again]
    assert cvrp.routes_problem(demands, capacity, first) is None


@pytest.mark.parametrize("seed", range(3))
def test_the_rounding_bound_is_under_3e_4_of_the_optimum_at_100_customers(seed):
    coords, demands, capacity = instance(seed, 100)
    # Haimovich and Rinnooy Kan's lower bound: a route serving S drives at least twice its
    # farthest customer's distance r, >= 2 * sum(d_i r_i) / capacity over S
    radius = np.hypot(*(coords[1:] - coords[0]).T)
    lower = 2 * float(demands[1:] @ radius) / capacity
    assert cvrp.rounding_bound(coords) < 3e-4 * lower


def test_costs_match_a_hand_computed_example():
    # depot at the origin; customers on a 3-4-5 triangle and on the axes
    coords = np.array([[0, 0], [3, 0], [3, 4], [0, 4], [0, 1]], dtype=float)
    assert cvrp.route_length(coords, [1, 2]) == 3 + 4 + 5
    assert cvrp.route_length(coords, [4]) == 2
    assert cvrp.routes_length(coords, [[1, 2], [3, 4]]) == 12 + (4 + 3 + 1)
    assert cvrp.routes_length(coords, []) == 0


def test_sequences_join_routes_with_the_depot_between_them_only():
    assert cvrp.join_routes([[3, 1], [2, 5, 4]]).tolist() == [3, 1, 0, 2, 5, 4]
    assert cvrp.join_routes([]).tolist() == []
    parts = cvrp.split_routes([0, 3, 1, 0, 0, 2, 5, 4, 0])
    assert [p.tolist() for p in parts] == [[3, 1], [2, 5, 4]]


def test_validity_names_the_first_problem():
    demands = np.array([0, 5, 5, 5])
    assert cvrp.routes_problem(demands, 10, [[1, 2], [3]]) is None
    assert "carries 15, over the capacity 10" in cvrp.routes_problem(demands, 10, [[1, 2, 3]])
    assert "customer 3 is not served" in cvrp.routes_problem(demands, 10, [[1, 2]])
    assert "customer 2 is served twice" in cvrp.routes_problem(demands, 10, [[1, 2], [2, 3]])
    assert "route 2 is empty" in cvrp.routes_problem(demands, 10, [[1, 2], [], [3]])
    assert "customers are 1..3" in cvrp.routes_problem(demands, 10, [[0, 1], [2, 3]])


def test_the_label_form_drives_each_route_from_its_lower_end_routes_by_first_customer():
    routes = cvrp.canonical_routes([[5, 2], [4, 1, 3], [6]])
    assert [r.tolist() for r in routes] == [[2, 5], [3, 1, 4], [6]]


def test_the_protocol_capacities_and_the_rule_between_them():
    assert [cvrp.protocol_capacity(n) for n in (10, 20, 50, 100)] == [20, 30, 40, 50]
    assert cvrp.protocol_capacity(1) == 11 and cvrp.protocol_capacity(35) == 35
    assert cvrp.protocol_capacity(75) == 45 and cvrp.protocol_capacity(200) == 70
    caps = [cvrp.protocol_capacity(n) for n in range(1, 300)]
    assert caps == sorted(caps) and min(caps) > cvrp.MAX_DEMAND
    with pytest.raises(ValueError, match="n >= 1 customers"):
        cvrp.protocol_capacity(0)


def test_sampled_instances_follow_the_protocol():
    coords, demands, capacity = instance(0, 50)
    assert coords.shape == (51, 2) and ((coords >= 0) & (coords < 1)).all()
    assert demands[0] == 0 and set(demands[1:].tolist()) <= set(range(1, 10))
    assert capacity == 40


def test_instances_the_solvers_refuse_are_named_in_one_line():
    coords = np.zeros((3, 2))
    with pytest.raises(DegenerateInstanceError, match="customer 2 has 12"):
        cvrp.exact_routes(coords, np.array([0, 3, 12]), 10)
    with pytest.raises(DegenerateInstanceError, match="depot's demand is 0"):
        cvrp.exact_routes(coords, np.array([1, 3, 3]), 10)
    with pytest.raises(DegenerateInstanceError, match="capacity is an integer >= 1"):
        cvrp.exact_routes(coords, np.array([0, 3, 3]), 2.5)
    with pytest.raises(ValueError, match="n <= 10 customers"):
        cvrp.exact_routes(np.zeros((12, 2)), np.array([0] + [1] * 11), 10)


def test_customers_on_one_spot_have_routes_of_length_zero():
    coords = np.zeros((5, 2))
    demands = np.array([0, 4, 4, 4, 4])
    for routes in (cvrp.exact_routes(coords, demands, 8), cvrp.pyvrp_routes(coords, demands, 8)):
        assert cvrp.routes_problem(demands, 8, routes) is None
        assert cvrp.routes_length(coords, routes) == 0
