"""The web page's tour search (POST /api/predict, decoding improve/iterations/two_opt/seed) through
FastAPI's TestClient: the Python API's tours (and so ``ptrnet predict``'s) for the same points and
options, no log-likelihood or trace after a search, the API's refusals, each a 422 naming
the option, and ``GET /api/tasks``'s ``searches`` saying which searches each task takes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("fastapi", reason="the web extra is not installed")
from fastapi.testclient import TestClient  # noqa: E402

import ptrnet  # noqa: E402
from ptrnet.solvers.tsp import tour_length  # noqa: E402
from ptrnet.web.app import create_app  # noqa: E402
from ptrnet.web.schemas import RRC_BUDGET  # noqa: E402
from tests.test_viz import tiny_model  # noqa: E402

torch.set_num_threads(1)
POINTS = np.random.default_rng(11).random((20, 2))


@pytest.fixture(scope="module")
def solver():
    return ptrnet.load("tsp", device="cpu")


@pytest.fixture(scope="module")
def bundled(solver):
    with TestClient(create_app({"tsp": solver.loaded}), base_url="http://localhost") as c:
        yield c


@pytest.fixture(scope="module")
def tiny():
    models = {name: tiny_model(name) for name in ("tsp", "convex_hull")}
    with TestClient(create_app(models), base_url="http://localhost") as c:
        yield c


def predict(client, points=POINTS, task="tsp", **decoding):
    body = {"task": task, "points": np.asarray(points).tolist(), "decoding": decoding}
    return client.post("/api/predict", json=body)


def test_a_searched_tour_is_the_python_apis(bundled, solver):
    response = predict(bundled, improve="rrc", iterations=4, two_opt=True, seed=2)
    assert response.status_code == 200, response.text
    model = response.json()["model"]
    same = solver.solve(POINTS, improve="rrc", iterations=4, two_opt=True, seed=2)
    assert model["sequence"] == same.sequence.tolist()
    assert model["decoded_sequence"] == solver.solve(POINTS).sequence.tolist()
    assert model["log_prob"] is None and model["trace"] is None
    search = {"improve": "rrc", "iterations": 4, "two_opt": True, "or_opt": False, "seed": 2}
    assert model["search"] == search | {"words": "RRC 4 rounds, then 2-opt"}
    cost = tour_length(POINTS, np.array(model["sequence"][:-1]))
    assert cost <= tour_length(POINTS, np.array(model["decoded_sequence"][:-1])) + 1e-9


def test_two_opt_alone_needs_no_heavy_decoder(tiny, solver):
    data = predict(tiny, two_opt=True).json()
    tour = data["model"]["sequence"]
    assert sorted(tour[:-1]) == list(range(20)) and tour[0] == tour[-1]
    assert data["metrics"]["valid"] is True and data["model"]["log_prob"] is None
    decoded = np.array(data["model"]["decoded_sequence"][:-1])
    assert tour_length(POINTS, np.array(tour[:-1])) <= tour_length(POINTS, decoded) + 1e-9


def test_or_opt_gives_the_python_apis_tour_no_longer_than_two_opts(bundled, solver):
    model = predict(bundled, or_opt=True).json()["model"]
    assert model["sequence"] == solver.solve(POINTS, or_opt=True).sequence.tolist()
    assert model["search"]["or_opt"] is True and model["log_prob"] is None
    two_opted = predict(bundled, two_opt=True).json()["model"]["sequence"]
    length = tour_length(POINTS, np.array(model["sequence"][:-1]))
    assert length <= tour_length(POINTS, np.array(two_opted[:-1])) + 1e-9


def test_without_a_search_the_answer_is_unchanged(tiny):
    model = predict(tiny, improve="none", two_opt=False).json()["model"]
    assert model["log_prob"] is not None and model["trace"] is not None
    assert "search" not in model


@pytest.mark.parametrize(
    ("task", "decoding", "message"),
    [
        ("tsp", {"iterations": 5}, "iterations=5: iterations need improve='rrc'"),
        ("tsp", {"improve": "rrc", "iterations": 0}, "greater than or equal to 1"),
        ("tsp", {"improve": "lkh"}, "decoding.improve"),
        ("tsp", {"two_opt": "yes"}, "decoding.local.two_opt: Input should be a valid boolean"),
        ("tsp", {"local": {"two_opt": True}}, "local: not a decoding field"),
        ("tsp", {"three_opt": True}, "decoding.three_opt: Extra inputs are not permitted"),
        ("tsp", {"improve": "rrc", "seed": -1}, "decoding.seed"),
        ("convex_hull", {"improve": "rrc"}, "improve='rrc': rebuilds tours, for task tsp, not"),
        ("convex_hull", {"two_opt": True}, "two_opt=True: shortens tours, for task tsp, not"),
        ("convex_hull", {"or_opt": True}, "or_opt=True: shortens tours, for task tsp, not"),
        ("tsp", {"or_opt": 2}, "decoding.local.or_opt"),
        ("tsp", {"improve": "rrc"}, "routes no size to one"),  # the tiny model is an LSTM's
    ],
)
def test_bad_searches_are_422_naming_the_option(tiny, task, decoding, message):
    response = predict(tiny, task=task, **decoding)
    assert response.status_code == 422
    assert message in response.json()["detail"]


def test_a_search_over_the_budget_is_refused(tiny):
    n = RRC_BUDGET // 100 + 1
    points = np.random.default_rng(0).random((n, 2))
    response = predict(tiny, points, improve="rrc")  # 100 rounds by default
    assert response.status_code == 422 and "too much search work" in response.json()["detail"]
    within = predict(tiny, points[:20], improve="rrc", iterations=2)  # past the budget check
    assert "routes no size to one" in within.json()["detail"]  # the tiny model is an LSTM's


def test_the_tasks_say_which_take_a_search(tiny):
    """``GET /api/tasks``'s ``searches`` (the page shows its Search controls by them) name a
    local search exactly for the tasks whose predictions accept it."""
    rng = np.random.default_rng(3)
    for entry in tiny.get("/api/tasks").json()["tasks"]:
        points = rng.random((max(entry["min_n"], 8), entry["dim"]))
        response = predict(tiny, points, task=entry["name"], two_opt=True)
        refused = response.status_code == 422 and "shortens tours" in response.json()["detail"]
        offered = {s["name"] for s in entry["searches"] if s["kind"] == "local"}
        assert ("two_opt" in offered) is not refused, (entry["name"], response.text)
        assert response.status_code == (422 if refused else 200), response.text
