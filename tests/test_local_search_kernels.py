"""The compiled 2-opt and Or-opt (``ptrnet.solvers.local_search_kernels``) against the numpy code
they replaced (benchmarks/reference_local_search.py): the same tour, move for move, on random
and tie-heavy instances (cities on a small grid, rounded distances), from any start tour, with
and without a pass limit."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import reference_local_search as reference
from ptrnet.solvers.or_opt import or_opt, two_opt_or_opt
from ptrnet.solvers.tsp_heuristics import two_opt


def instance(seed: int, n: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """(dist, start tour): uniform cities, cities on a 4 x 4 grid (many equal moves), or
    uniform cities with distances rounded to integers as TSPLIB's are."""
    rng = np.random.default_rng(seed)
    points = rng.integers(0, 4, (n, 2)).astype(float) if kind == "grid" else rng.random((n, 2))
    dist = np.sqrt(((points[:, None] - points[None]) ** 2).sum(-1))
    if kind == "rounded":
        dist = np.round(dist * 5)
    return dist, rng.permutation(n)


SEARCHES = [
    pytest.param(two_opt, reference.two_opt, id="two_opt"),
    pytest.param(or_opt, reference.or_opt, id="or_opt"),
    pytest.param(two_opt_or_opt, reference.two_opt_or_opt, id="two_opt_or_opt"),
]


@pytest.mark.parametrize(("search", "oracle"), SEARCHES)
@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(0, 40),
    kind=st.sampled_from(["uniform", "grid", "rounded"]),
)
def test_kernel_reaches_the_numpy_searchs_tour(search, oracle, seed, n, kind):
    dist, tour = instance(seed, n, kind)
    np.testing.assert_array_equal(search(dist, tour), oracle(dist, tour))


@pytest.mark.parametrize(("search", "oracle"), SEARCHES[:2])
@pytest.mark.parametrize("passes", [0, 1, 2])
def test_pass_limit_stops_where_the_numpy_search_stops(search, oracle, passes):
    dist, tour = instance(7, 60, "uniform")
    np.testing.assert_array_equal(search(dist, tour, passes), oracle(dist, tour, passes))


@pytest.mark.parametrize(("search", "oracle"), SEARCHES)
def test_kernel_reaches_the_numpy_searchs_tour_at_200_cities(search, oracle):
    dist, tour = instance(3, 200, "uniform")
    np.testing.assert_array_equal(search(dist, tour), oracle(dist, tour))


@pytest.mark.parametrize("search", [two_opt, or_opt, two_opt_or_opt])
def test_caller_tour_and_odd_types_are_accepted_and_left_alone(search):
    dist, tour = instance(1, 12, "uniform")
    given_tour = tour.astype(np.int32)
    kept = given_tour.copy()
    found = search(np.asfortranarray(dist.astype(np.float32)), given_tour)
    np.testing.assert_array_equal(given_tour, kept)
    assert found.dtype == np.int64 and sorted(found) == list(range(12))
