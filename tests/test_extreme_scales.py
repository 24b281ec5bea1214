"""TSP lengths, gaps and tour searches at any scale: an instance 1e-200 or 1e100 across (1e200
where the front ends' coordinate bound does not apply) gets the tour of its unit-square image
and that tour's length times the scale, from the solver functions, ``predict --two-opt`` /
``--or-opt``, ``eval``, the Python API and the web page. Squared distances in the input's units
underflowed to 0 (a cost of 0.0, a 2-opt that never moved) or would overflow."""

import json

import numpy as np
import pytest
import torch

import ptrnet
from ptrnet.io.unit_square import UnitMap
from ptrnet.searches.run import local_search
from ptrnet.solvers.tsp import distance_matrix, tour_length
from ptrnet.tasks.tsp import OR_OPT, TWO_OPT

torch.set_num_threads(1)
RAW = np.random.default_rng(3).random((40, 2))
UNIT = UnitMap.fit(RAW).to_unit(RAW)  # spans [0, 1]: its scaled copies normalise back to it
SCALES = (1e-200, 1e100)  # the front ends refuse |coordinates| over 1e100


def write_points(path, points):
    path.write_text(" ".join(repr(float(v)) for v in points.ravel()) + "\n")


@pytest.mark.parametrize("scale", [1e-200, 1e-300, 1e200, 1e300])
def test_lengths_neither_underflow_nor_overflow(scale):
    tour = np.arange(len(UNIT))
    assert tour_length(UNIT * scale, tour) == pytest.approx(scale * tour_length(UNIT, tour), 1e-9)
    got = distance_matrix(UNIT * scale)
    np.testing.assert_allclose(got, scale * distance_matrix(UNIT), rtol=1e-9)


@pytest.mark.parametrize("or_opt", [False, True])
@pytest.mark.parametrize("scale", [1e-200, 1e200])
def test_two_opt_searches_a_scaled_copy_as_its_image(scale, or_opt):
    start = np.append(np.arange(len(UNIT)), 0)  # a poor tour: the search must move
    (want,) = local_search(OR_OPT if or_opt else TWO_OPT, [UNIT], [start])
    (got,) = local_search(OR_OPT if or_opt else TWO_OPT, [UNIT * scale], [start])
    np.testing.assert_array_equal(got, want)
    assert tour_length(UNIT, want) < tour_length(UNIT, start)


@pytest.mark.parametrize("search", ["--two-opt", "--or-opt"])
def test_predict_search_reports_the_unit_tour_and_cost_times_the_scale(
    cli, tmp_path, tiny_tsp_model, search
):
    answers = {}
    for scale in (1.0, *SCALES):
        write_points(tmp_path / "p.txt", UNIT * scale)
        args = ["predict", "tsp", "p.txt", "--model", tiny_tsp_model, search, "-o", "-"]
        status, out, err = cli(*args, "--output-format", "json", "--threads", "1", "-q")
        assert status == 0, err
        answers[scale] = json.loads(out)
    for scale in SCALES:
        assert answers[scale]["sequence"] == answers[1.0]["sequence"]
        assert answers[scale]["cost"] == pytest.approx(scale * answers[1.0]["cost"], rel=1e-9)


def test_eval_reports_the_mean_length_times_the_scale(cli, tmp_path, tiny_tsp_model):
    results = {}
    for scale in (1.0, *SCALES):
        write_points(tmp_path / "p.txt", UNIT[:12] * scale)  # an exact reference: n <= 20
        args = ["eval", "tsp", "p.txt", "--model", tiny_tsp_model, "--two-opt", "--threads", "1"]
        status, out, err = cli(*args, "--json", "-q")
        assert status == 0, err
        results[scale] = json.loads(out)
        status, table, _ = cli(*args)
        assert "mean_length  0.0000" not in table
    for scale in SCALES:
        assert results[scale]["mean_length"] == pytest.approx(
            scale * results[1.0]["mean_length"], rel=1e-9
        )
        assert results[scale]["mean_gap"] == pytest.approx(results[1.0]["mean_gap"], abs=1e-9)


def test_the_api_solves_a_scaled_copy_at_the_scaled_cost(tiny_tsp_model):
    solver = ptrnet.load(tiny_tsp_model, device="cpu")
    want = solver.solve(UNIT, or_opt=True)
    for scale in SCALES:
        got = solver.solve(UNIT * scale, or_opt=True)
        np.testing.assert_array_equal(got.sequence, want.sequence)
        assert got.cost == pytest.approx(scale * want.cost, rel=1e-9)


def test_the_web_page_reports_costs_times_the_scale(tiny_tsp_model):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from ptrnet.inference import load_model
    from ptrnet.web.app import create_app

    metrics = {}
    with TestClient(create_app({"tsp": load_model(tiny_tsp_model, "tsp")})) as client:
        for scale in (1.0, 1e-200, 1e6):  # the page's coordinate bound is 1e6
            body = {"task": "tsp", "points": (UNIT[:12] * scale).tolist()}
            response = client.post("/api/predict", json=body, headers={"host": "localhost"})
            assert response.status_code == 200, response.text
            metrics[scale] = response.json()["metrics"]
    for scale in (1e-200, 1e6):
        for key in ("mean_length", "optimal_cost"):
            assert metrics[scale][key] == pytest.approx(scale * metrics[1.0][key], rel=1e-9)
