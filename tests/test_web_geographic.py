"""The page answers a geographic file as the command line does (issue 54 items 2 and 7), through
FastAPI's TestClient with the bundled TSP model: cities read by ``POST /api/read`` and sent back
to ``POST /api/predict`` in degrees with their ``distances`` rule get the tour, costs, reference,
gap and searched tours of ``ptrnet.load('tsp').solve(points, geo=True)`` and of
``ptrnet predict``, in great-circle km (``units``); the model decodes the cities' projection,
mapped once; a Euclidean file's lengths come in its own units; bad coordinates and rules are
one-line 422s."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

pytest.importorskip("fastapi", reason="the web extra is not installed")
from fastapi.testclient import TestClient  # noqa: E402

import ptrnet  # noqa: E402
from ptrnet.cli.main import main  # noqa: E402
from ptrnet.io.unit_square import to_unit_square  # noqa: E402
from ptrnet.solvers.distances import GREAT_CIRCLE, RULES, TSPLIB_GEO  # noqa: E402
from ptrnet.solvers.geodesy import azimuthal_equidistant  # noqa: E402
from ptrnet.web.app import create_app  # noqa: E402
from tests.test_geographic import CAPITALS, brute_force, far_north, lon_lat  # noqa: E402
from tests.test_tsplib_geo_att import DATA  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def solver():
    return ptrnet.load("tsp", device="cpu")


@pytest.fixture(scope="module")
def client(solver):
    with TestClient(create_app({"tsp": solver.loaded}), base_url="http://localhost") as c:
        yield c


def predict(client, points, distances=None, **decoding):
    body = {"task": "tsp", "points": np.asarray(points).tolist(), "decoding": decoding}
    if distances is not None:
        body["distances"] = distances
    return client.post("/api/predict", json=body)


def cli_json(capsys, path, *options) -> dict:
    argv = ["predict", "tsp", str(path), "-o", "-", "--output-format", "json", "-q", *options]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_a_read_city_file_is_answered_in_km_as_the_api_and_the_cli_answer_it(
    client, solver, tmp_path, capsys
):
    read = client.post("/api/read", json={"task": "tsp", "text": CAPITALS}).json()
    cities = lon_lat(CAPITALS)
    np.testing.assert_array_equal(read["points"], cities)
    assert read["distances"] == "great_circle" and read["projected"]
    response = predict(client, read["points"], read["distances"])
    assert response.status_code == 200, response.text
    answer = response.json()
    api = solver.solve(cities, geo=True)
    path = tmp_path / "cities.csv"
    path.write_text(CAPITALS)
    cli = cli_json(capsys, path)
    assert answer["model"]["sequence"] == api.sequence.tolist() == cli["sequence"]
    assert answer["units"] == "km" == cli["units"] and answer["distances"] == "great_circle"
    length = answer["metrics"]["mean_length"]
    assert length == pytest.approx(api.cost, rel=1e-12) and length == pytest.approx(cli["cost"])
    optimum = brute_force(GREAT_CIRCLE.matrix(cities))[0]
    assert answer["reference_cost"] == pytest.approx(optimum) and optimum > 4000  # km
    assert answer["metrics"]["reference_cost"] == answer["reference_cost"]
    assert answer["metrics"]["mean_gap"] == pytest.approx(length / optimum - 1)


def test_the_model_decodes_the_projection_once_and_the_page_draws_that_image(client, solver):
    """The seam: the degrees reach the decoder, which projects and maps them once; the unit
    square the page draws (``unit`` of the read) is that image, and its map is the plane's."""
    cities = far_north()
    text = "lon,lat\n" + "".join(f"{x},{y}\n" for x, y in cities)
    read = client.post("/api/read", json={"task": "tsp", "text": text}).json()
    image = to_unit_square(azimuthal_equidistant(cities))
    np.testing.assert_allclose(read["unit"], image, atol=1e-12)
    answer = predict(client, cities, "great_circle").json()
    assert answer["unit_square"] == read["mapping"]["text"]  # the plane's map, in km
    on_image = solver.solve(image)  # the same image, given as planar points
    assert answer["model"]["sequence"] == on_image.sequence.tolist()
    probs = predict(client, image).json()["model"]["trace"]["probs"]
    assert answer["model"]["trace"]["probs"] == probs  # every step as on the image


def test_searched_tours_and_the_models_own_are_measured_in_km(client, solver, tmp_path, capsys):
    cities = np.vstack([far_north(seed) for seed in range(3)])  # 21 cities, far north
    search = {"improve": "rrc", "iterations": 3, "or_opt": True, "seed": 1}
    answer = predict(client, cities, "great_circle", **search).json()
    model = answer["model"]
    api = solver.solve(cities, geo=True, **search)
    path = tmp_path / "north.csv"
    path.write_text("lon,lat\n" + "".join(f"{x},{y}\n" for x, y in cities))
    cli = cli_json(capsys, path, "--improve", "rrc", "--iterations", "3", "--or-opt", "--seed", "1")
    assert model["sequence"] == api.sequence.tolist() == cli["sequence"]
    assert answer["metrics"]["mean_length"] == pytest.approx(api.cost, rel=1e-12)
    own = solver.solve(cities, geo=True)
    assert model["decoded_sequence"] == own.sequence.tolist()
    assert model["decoded_cost"] == pytest.approx(own.cost, rel=1e-12)
    assert answer["metrics"]["mean_length"] <= model["decoded_cost"] + 1e-9
    planar = predict(client, cities, **search).json()["model"]  # degrees as a plane
    assert planar["decoded_cost"] == pytest.approx(solver.solve(cities).cost, rel=1e-12)


def test_a_tsplib_geo_file_is_answered_by_tsplibs_rule(client, capsys):
    path = DATA / "ulysses16.tsp"
    read = client.post(
        "/api/read", json={"task": "tsp", "text": path.read_text(), "name": path.name}
    ).json()
    assert read["distances"] == "tsplib_geo" and read["projected"]
    answer = predict(client, read["points"], "tsplib_geo", two_opt=True).json()
    cli = cli_json(capsys, path, "--two-opt")
    assert answer["model"]["sequence"] == cli["sequence"]
    assert answer["metrics"]["mean_length"] == cli["cost"]
    assert answer["reference_cost"] == TSPLIB_GEO.tour_length(read["points"], answer["reference"])
    assert answer["reference_cost"] >= 6859  # the published optimum, in TSPLIB's integer km


def test_a_euclidean_file_is_measured_in_its_own_units(client, solver, tmp_path, capsys):
    rng = np.random.default_rng(5)
    metres = rng.random((12, 2)) * 2500 + [300, 7000]
    path = tmp_path / "m.csv"
    path.write_text("x,y\n" + "".join(f"{float(x)!r},{float(y)!r}\n" for x, y in metres))
    read = client.post("/api/read", json={"task": "tsp", "text": path.read_text()}).json()
    assert read["distances"] is None and not read["projected"]
    answer = predict(client, read["points"], two_opt=True).json()
    cli = cli_json(capsys, path, "--two-opt")
    assert answer["units"] is None and answer["distances"] == "euclidean" and "units" not in cli
    assert answer["model"]["sequence"] == cli["sequence"]
    length = answer["metrics"]["mean_length"]
    assert length == pytest.approx(cli["cost"], rel=1e-12) and length > 1000
    unit = predict(client, read["unit"], two_opt=True).json()  # what the page drew
    assert unit["model"]["sequence"] == answer["model"]["sequence"]
    scale = read["mapping"]["scale"]
    assert unit["metrics"]["mean_length"] * scale == pytest.approx(answer["metrics"]["mean_length"])


def test_tasks_say_which_take_a_distance_rule(client):
    entries = {t["name"]: t for t in client.get("/api/tasks").json()["tasks"]}
    assert entries["tsp"]["distances"] == list(RULES)
    assert entries["convex_hull"]["distances"] is None


@pytest.mark.parametrize(
    "points, distances, task, message",
    [
        ([[0, 10], [1, 95], [2, 0]], "great_circle", "tsp", "point 1: latitude 95 is outside"),
        ([[0, 10], [181, 5], [2, 0]], "great_circle", "tsp", "point 1: longitude 181 is outside"),
        ([[0, 10], [1, 5], [2, 0]], "haversine", "tsp", "'haversine' is not a distance rule"),
        ([[0, 0], [1, 0], [0, 1]], "great_circle", "convex_hull", "measures no distances"),
    ],
)
def test_coordinates_and_rules_the_rule_cannot_take_are_one_line_422s(
    client, points, distances, task, message
):
    body = {"task": task, "points": points, "distances": distances}
    response = client.post("/api/predict", json=body)
    detail = response.json()["detail"]
    assert response.status_code == 422 and message in detail and "\n" not in detail
