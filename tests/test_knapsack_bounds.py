"""The knapsack solver's bound on work: adversarial items (value = weight, value = weight + a
constant) stop the exact search at a counted number of partial solutions, one line on the
command line; solver ``near_exact`` and the web page answer them with a labelled set within its
stated bound of the optimum (checked against brute force), and a fuzz run over generated item
sets gets an answer or a clean refusal from the solver and the page."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st

import ptrnet.solvers.knapsack as knapsack_solver
from ptrnet.solvers.errors import SearchBoundError
from ptrnet.solvers.knapsack import MAX_STATES, WIDE_SHARE, search_knapsack, solve_knapsack
from ptrnet.tasks import DegenerateInstanceError, get_task
from ptrnet.tasks.knapsack import capacity, item_weights
from ptrnet.web.app import create_app
from tests.fuzzing import cases
from tests.test_knapsack import brute_force, exact_value, exact_weight

KNAPSACK = get_task("knapsack")


def adversarial(kind: str, n: int, seed: int = 0) -> np.ndarray:
    """(n, 2) items: value = weight, or value = weight + 0.1 (strongly correlated)."""
    w = np.random.default_rng(seed).random(n, dtype=np.float32).astype(np.float64)
    return np.c_[w, w if kind == "equal" else w + 0.1]


def test_value_equal_to_weight_stops_the_exact_search_at_its_bound():
    """32 items of value = weight: 4.6 GB and a MemoryError before the bound; now the exact
    search stops at 2,097,152 partial solutions and near_exact answers within 1e-5 of it."""
    points = adversarial("equal", 32)
    args = item_weights(points), points[:, 1], capacity(32)
    with pytest.raises(SearchBoundError, match="bound of 2,097,152 partial solutions") as err:
        solve_knapsack(*args)
    assert err.value.solver == "near_exact"
    found = search_knapsack(*args, exact=False)
    value = exact_value(points[:, 1], found.chosen)
    assert not found.optimal and found.states <= MAX_STATES
    assert exact_weight(args[0], found.chosen) <= Fraction(args[2])
    assert value <= Fraction(found.bound) <= value * (1 + Fraction(1, 10**5))


@pytest.mark.parametrize("n", [60, 100])
def test_correlated_items_are_answered_within_the_stated_bound(n):
    """value = weight + 0.1: sums in Python integers, so the bound is 1/8 of the states."""
    points = adversarial("correlated", n)
    with pytest.raises(SearchBoundError, match=f"{MAX_STATES // WIDE_SHARE:,} partial"):
        KNAPSACK.solve(points)
    reference = KNAPSACK.reference(points, "near_exact")
    assert KNAPSACK.is_valid(points, reference.sequence)
    assert "not proved optimal" in reference.note and "the optimum at most" in reference.note
    found = search_knapsack(item_weights(points), points[:, 1], capacity(n), exact=False)
    assert found.states <= MAX_STATES // WIDE_SHARE
    value = exact_value(points[:, 1], found.chosen)
    assert value <= Fraction(found.bound) <= value * Fraction(101, 100)


def test_random_instances_keep_exact_labels_far_below_the_bound():
    """Bello et al.'s instances are solved exactly by every solver name that claims it."""
    for seed, n in ((0, 50), (1, 100), (2, 200)):
        points = KNAPSACK.sample_points(np.random.default_rng(seed), n)
        found = search_knapsack(item_weights(points), points[:, 1], capacity(n), exact=False)
        assert found.optimal and found.states < MAX_STATES // 100
        reference = KNAPSACK.reference(points, "near_exact")
        assert reference.note is None
        assert np.array_equal(reference.sequence, KNAPSACK.solve(points))


@pytest.mark.parametrize("kind", ["equal", "correlated", "random"])
def test_the_bounded_search_is_within_its_bound_of_brute_force(kind):
    """With a bound of 8 partial solutions every front is trimmed: the set still fits, and
    its value <= the optimum <= the reported bound."""
    rng = np.random.default_rng(5)
    for _ in range(30):
        n = int(rng.integers(2, 12))
        weights = rng.random(n)
        values = {"equal": weights, "correlated": weights + 0.1, "random": rng.random(n)}[kind]
        cap = float(rng.uniform(0.5, n / 3))
        found = search_knapsack(weights, values, cap, exact=False, max_states=8)
        best = brute_force(weights, values, cap)
        assert exact_weight(weights, found.chosen) <= Fraction(cap)
        assert exact_value(values, found.chosen) <= best <= Fraction(found.bound)
        assert found.states <= max(8, 2 * n)
        if found.optimal:
            assert exact_value(values, found.chosen) == best


def test_solve_past_the_bound_is_one_line_and_near_exact_is_labelled(cli, tmp_path):
    points = adversarial("equal", 30)
    (tmp_path / "items.txt").write_text(" ".join(map(repr, points.ravel().tolist())) + "\n")
    status, _, err = cli("solve", "knapsack", "items.txt", "-o", "s.txt")
    assert status == 1 and not (tmp_path / "s.txt").exists()
    assert err.count("\n") == 1 and err.startswith("ptrnet: error: items.txt:1: cannot solve: ")
    assert "2,097,152 partial solutions" in err and "near_exact" in err
    status, _, err = cli("solve", "knapsack", "items.txt", "--solver", "near_exact", "-o", "n.txt")
    assert status == 0 and "items.txt:1: near_exact: not proved optimal" in err
    assert "output" in (tmp_path / "n.txt").read_text()


def test_the_page_labels_a_bounded_reference_and_never_fails():
    """The page's reference for 32 items of value = weight (6.9 GB and a 500 before)."""
    client = TestClient(create_app({}), base_url="http://localhost")
    points = adversarial("equal", 32)
    answer = client.post("/api/predict", json={"task": "knapsack", "points": points.tolist()})
    assert answer.status_code == 200
    body = answer.json()
    assert body["reference_exact"] is False and "not proved optimal" in body["reference_note"]
    assert "not proved optimal" in body["message"]
    assert KNAPSACK.is_valid(points, np.array(body["reference"]))
    plain = client.post("/api/predict", json={"task": "knapsack", "points": [[0.5, 0.5]]})
    assert plain.status_code == 200 and plain.json()["reference_note"] is None


SPECIAL = st.sampled_from([0.0, 5e-324, 1e-300, 1e-8, 0.5, 1.0, 3.0, 25.0, 1e6])
NUMBER = st.one_of(SPECIAL, st.floats(0, 1e6, allow_nan=False), st.floats(0, 1))


@st.composite
def item_sets(draw: st.DrawFn, max_n: int) -> np.ndarray:
    """(n, 2) items: random, equal value and weight, correlated, duplicated, huge or tiny."""
    n = draw(st.integers(1, max_n))
    weights = np.array(draw(st.lists(NUMBER, min_size=n, max_size=n)))
    kind = draw(st.sampled_from(["random", "equal", "correlated", "duplicates"]))
    if kind == "random":
        values = np.array(draw(st.lists(NUMBER, min_size=n, max_size=n)))
    elif kind == "equal":
        values = weights.copy()
    elif kind == "correlated":
        values = weights + draw(SPECIAL)
    else:
        weights = np.resize(weights[: max(1, n // 3)], n)
        values = np.resize(np.array(draw(st.lists(NUMBER, min_size=n, max_size=n))), n)
    if draw(st.booleans()):
        values = -values if draw(st.booleans()) else np.where(values > 1, np.inf, values)
    return np.c_[weights, values]


@cases(200)
@given(points=item_sets(40))
def test_any_item_set_gets_a_bounded_answer_or_a_clean_refusal(points):
    """Through the solver functions, within 64 partial solutions (2 per item at least)."""
    args = points[:, 0], points[:, 1], capacity(len(points))
    try:
        found = search_knapsack(*args, exact=False, max_states=64)
    except DegenerateInstanceError as err:
        assert not np.isfinite(points).all() or (points < 0).any(), err
        return
    assert found.states <= max(64, 2 * len(points))
    assert exact_weight(args[0], found.chosen) <= Fraction(args[2])
    assert exact_value(args[1], found.chosen) <= Fraction(found.bound)
    try:
        assert np.array_equal(search_knapsack(*args, max_states=64).chosen, found.chosen)
        assert found.optimal
    except SearchBoundError as err:
        assert "64 partial solutions" in str(err) or "8 partial solutions" in str(err)


@pytest.fixture(scope="module")
def page():
    return TestClient(create_app({}), base_url="http://localhost")


@cases(60)
@given(points=item_sets(60))
def test_the_page_answers_any_item_set_with_a_labelled_reference_or_422(page, points):
    """The page's knapsack route under a bound of 4,096 partial solutions, so adversarial sets
    of 60 items pass it quickly: 200 with a reference (noted where not proved optimal) or 422."""
    body = {"task": "knapsack", "points": points.tolist()}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(knapsack_solver, "MAX_STATES", 4096)
        answer = page.post(
            "/api/predict",
            content=json.dumps(body),
            headers={"content-type": "application/json"},
        )
    assert answer.status_code in (200, 422), answer.text
    if answer.status_code == 422:
        assert isinstance(answer.json()["detail"], str)
        return
    result = answer.json()
    assert KNAPSACK.is_valid(points, np.array(result["reference"], dtype=np.int64))
    assert (result["reference_note"] is None) == (result.get("reference_exact", True) is True)
