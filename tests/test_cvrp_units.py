"""Customers in the user's units (kilometres, a CVRPLIB file's hundreds): every front end
routes them on their image in the unit square, x and y mapped and the demands and capacity
kept, so the routes are those of the image and every cost is in the user's units."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import ptrnet
from ptrnet.cli.main import main
from ptrnet.io.cvrplib import read_vrp
from ptrnet.io.unit_square import UnitMap, fit_unit_square
from ptrnet.solvers.cvrp import routes_length, split_routes
from ptrnet.tasks import get_task
from tests.test_cvrplib import DATA

torch.set_num_threads(1)
CVRP = get_task("cvrp")
SCALE, SHIFT = 1000.0, np.array([5000.0, -2000.0])


def instance_pair(n: int = 25) -> tuple[np.ndarray, np.ndarray]:
    """A protocol instance (unit square) and the same customers in km: x, y times 1000 and
    shifted, demands and capacity as they were; the unit one spans [0, 1] on its longer side
    (so that it is the image of the km one)."""
    rows = CVRP.sample_points(np.random.default_rng(11), n)
    rows[:, :2] = UnitMap.fit(rows, 2).to_unit(rows)[:, :2]
    km = rows.copy()
    km[:, :2] = rows[:, :2] * SCALE + SHIFT
    return rows, km


def write_csv(path, rows: np.ndarray) -> str:
    lines = ["x,y,demand,capacity", *(",".join(repr(float(v)) for v in row) for row in rows)]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def predicted(capsys, path: str) -> dict:
    assert main(["predict", "cvrp", path, "-o", "-", "--output-format", "json", "-q"]) == 0
    return json.loads(capsys.readouterr().out.splitlines()[0])


def test_the_map_moves_x_and_y_only_and_inverts_exactly():
    unit, km = instance_pair()
    mapping = fit_unit_square(km, columns=CVRP.unit_columns)
    assert mapping.scale == pytest.approx(SCALE) and mapping.offset == pytest.approx(SHIFT)
    image = mapping.to_unit(km)
    np.testing.assert_allclose(image, unit, atol=1e-12)  # demand and capacity columns kept
    assert (image[:, 2:] == km[:, 2:]).all()
    np.testing.assert_allclose(mapping.to_input(image), km)
    assert fit_unit_square(unit, columns=CVRP.unit_columns) is None  # inside: left alone


def test_predict_eval_the_api_and_the_page_route_km_customers_as_their_image(tmp_path, capsys):
    unit, km = instance_pair()
    on_unit = predicted(capsys, write_csv(tmp_path / "unit.csv", unit))
    on_km = predicted(capsys, write_csv(tmp_path / "km.csv", km))
    assert on_km["sequence"] == on_unit["sequence"] and on_km["valid"]
    routes = split_routes(on_km["sequence"])
    assert on_km["cost"] == pytest.approx(routes_length(km[:, :2], routes))
    assert on_km["cost"] == pytest.approx(SCALE * on_unit["cost"])

    result = ptrnet.load("cvrp", device="cpu").solve(km)
    assert result.sequence.tolist() == on_km["sequence"]
    assert result.cost == pytest.approx(on_km["cost"])

    assert main(["eval", "cvrp", str(tmp_path / "km.csv"), "--json", "--threads", "1"]) == 0
    evaluated = json.loads(capsys.readouterr().out)
    assert evaluated["mean_length"] == pytest.approx(on_km["cost"])
    assert 0 <= evaluated["mean_gap"] < 0.25  # the raw km decoding was over three times longer

    from fastapi.testclient import TestClient

    from ptrnet.inference import load_model
    from ptrnet.web.app import create_app

    app = create_app({"cvrp": load_model(None, CVRP)})
    body = {"task": "cvrp", "points": km.tolist(), "decoding": {"strategy": "greedy"}}
    with TestClient(app, base_url="http://localhost") as client:
        page = client.post("/api/predict", json=body)
    assert page.status_code == 200, page.text
    assert page.json()["model"]["sequence"] == on_km["sequence"]
    assert page.json()["metrics"]["mean_length"] == pytest.approx(on_km["cost"])


def test_a_cvrplib_files_cost_is_in_its_own_units(capsys):
    path = DATA / "E-n22-k4.vrp"
    answer = predicted(capsys, str(path))
    coords = read_vrp(path).coords
    assert answer["cost"] == pytest.approx(routes_length(coords, split_routes(answer["sequence"])))
    assert 375 <= answer["cost"] < 1.1 * 375  # the published optimum, in the file's units
