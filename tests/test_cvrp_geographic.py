"""Customers given by latitude and longitude: a CVRP instance read from a CSV whose header names
``lat`` and ``lon`` (beside ``demand`` and ``capacity``) is measured in great-circle kilometres
as a TSP one is. Its references, costs, metrics and route search use those lengths, and the
model routes the customers' projection (demands kept). Oracles: a brute force over every
customer order split optimally into routes, the textbook haversine formula, and the planar
reading of the same file."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
import torch

import ptrnet
from ptrnet.cli.main import main
from ptrnet.io.errors import InputError
from ptrnet.io.instances import read_instances
from ptrnet.solvers.cvrp import split_routes
from ptrnet.solvers.distances import EUCLIDEAN, GREAT_CIRCLE, TSPLIB_ATT, TSPLIB_GEO
from ptrnet.solvers.geodesy import azimuthal_equidistant
from ptrnet.solvers.tsp import distance_matrix
from ptrnet.tasks import get_task
from tests.test_geographic import haversine

torch.set_num_threads(1)
CVRP = get_task("cvrp")
GEO_CVRP = CVRP.with_distances(GREAT_CIRCLE)


def far_north_customers(n: int = 7, seed: int = 21) -> np.ndarray:
    """Rows (lon, lat, demand, capacity): a depot and ``n`` customers at 55-75 degrees north,
    where a degree of longitude is a third to a half of one of latitude, capacity 15."""
    rng = np.random.default_rng(seed)
    places = np.column_stack([rng.uniform(-40, 40, n + 1), rng.uniform(55, 75, n + 1)])
    demands = np.concatenate([[0], rng.integers(2, 8, n)])
    return np.column_stack([places, demands, np.full(n + 1, 15.0)])


def haversine_walk(rows: np.ndarray, seq) -> float:
    """km driven by the answer ``seq`` (routes joined by the depot 0), leg by leg."""
    stops = [0, *[int(s) for s in seq], 0]
    return sum(haversine(*rows[a, :2], *rows[b, :2]) for a, b in itertools.pairwise(stops))


def brute_force_routes(dist: np.ndarray, demands: np.ndarray, capacity: int) -> float:
    """The shortest routes by trying every customer order, each split into routes optimally
    (the split of a giant tour by shortest path over its cut points): every set of routes is
    one order split somewhere, so the minimum is the optimum (n <= 8)."""
    n = len(dist) - 1
    best = np.inf
    for order in itertools.permutations(range(1, n + 1)):
        cost = [0.0] + [np.inf] * n  # cost[k]: the first k customers of the order served
        for i in range(n):
            load, inside = 0, 0.0
            for j in range(i, n):
                load += demands[order[j]]
                if load > capacity:
                    break
                inside += dist[order[j - 1], order[j]] if j > i else 0.0
                route = dist[0, order[i]] + inside + dist[order[j], 0]
                cost[j + 1] = min(cost[j + 1], cost[i] + route)
        best = min(best, cost[n])
    return best


COLUMNS = {"lat": 1, "latitude": 1, "lon": 0, "longitude": 0, "demand": 2, "q": 2}
COLUMNS.update(capacity=3, cap=3)


def write_csv(path, rows: np.ndarray, header: str = "name,lat,lon,demand,capacity") -> str:
    """The rows as a CSV under ``header``, each column by its name (in any case: latitude,
    longitude, demand or q, capacity or cap; any other name holds the row's name)."""
    names = [c.lower() for c in header.split(",")]
    lines = [header]
    for k, row in enumerate(rows):
        cells = [repr(float(row[COLUMNS[c]])) if c in COLUMNS else f"site{k}" for c in names]
        lines.append(",".join(cells))
    path.write_text("\n".join(lines) + "\n")
    return str(path)


# --- lengths ----------------------------------------------------------------------------------


def test_a_walk_through_the_depot_is_measured_leg_by_leg_under_every_rule():
    rows = far_north_customers()
    seq = np.array([3, 1, 0, 2, 5, 4, 0, 7, 6])
    walk = np.array([0, *seq])
    assert GREAT_CIRCLE.walk_length(rows[:, :2], walk) == pytest.approx(
        haversine_walk(rows, seq), rel=1e-12
    )
    planar = rows[:, :2]
    stops = [0, *seq, 0]
    euclid = sum(np.hypot(*(planar[b] - planar[a])) for a, b in itertools.pairwise(stops))
    assert EUCLIDEAN.walk_length(planar, walk) == pytest.approx(euclid, rel=1e-12)
    for rule in (GREAT_CIRCLE, TSPLIB_GEO, TSPLIB_ATT, EUCLIDEAN):  # a tour is a walk too
        tour = np.array([0, 4, 2, 7, 1, 6, 3, 5])
        assert rule.walk_length(planar, tour) == pytest.approx(rule.tour_length(planar, tour))
    assert GREAT_CIRCLE.walk_length(planar, np.array([3])) == 0.0


def test_the_exact_reference_is_the_great_circle_optimum_not_the_planar_degrees_one():
    rows = far_north_customers()
    demands, capacity = rows[:, 2].astype(int), 15
    optimum = brute_force_routes(GREAT_CIRCLE.matrix(rows[:, :2]), demands, capacity)
    planar = CVRP.reference(rows, "exact").sequence  # the same rows read as a plane in degrees
    assert haversine_walk(rows, planar) > 1.15 * optimum  # the instance tells the two apart
    reference = GEO_CVRP.reference(rows, "exact").sequence
    assert GEO_CVRP.is_valid(rows, reference)
    assert haversine_walk(rows, reference) == pytest.approx(optimum, rel=1e-9)
    assert GEO_CVRP.sequence_cost(rows, reference) == pytest.approx(optimum, rel=1e-12)
    assert brute_force_routes(distance_matrix(rows[:, :2]), demands, capacity) == pytest.approx(
        CVRP.sequence_cost(rows, planar)
    )  # the planar oracle agrees with the planar solver: the split is right


def test_pyvrp_searches_the_great_circle_lengths():
    rows = far_north_customers(n=8, seed=6)
    optimum = brute_force_routes(GEO_CVRP.distances.matrix(rows[:, :2]), rows[:, 2], 15)
    found = GEO_CVRP.reference(rows, "pyvrp").sequence
    assert GEO_CVRP.is_valid(rows, found)
    assert haversine_walk(rows, found) == pytest.approx(optimum, rel=1e-6)


def test_a_customer_off_the_globe_or_a_bad_matrix_is_refused():
    rows = far_north_customers()
    rows[3, 1] = 95.0
    with pytest.raises(ValueError, match="latitude 95 is outside"):
        GEO_CVRP.check_points(rows)
    from ptrnet.solvers.cvrp import exact_routes

    good = far_north_customers()
    with pytest.raises(ValueError, match=r"\(8, 8\)"):
        exact_routes(good[:, :2], good[:, 2], 15, dist=np.zeros((3, 3)))


# --- reading a file ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "header",
    [
        "name,lat,lon,demand,capacity",
        "Capacity,LON,name,Demand,Latitude",  # any order, any case: placed by name
        "site,latitude,longitude,q,cap",  # unnamed numbers: in file order, demand first
    ],
)
def test_a_csv_of_customers_by_latitude_and_longitude_reads_as_lon_lat_demand_capacity(
    tmp_path, header
):
    rows = far_north_customers()
    path = write_csv(tmp_path / "sites.csv", rows, header)
    (instance,) = read_instances(path, CVRP, "auto")
    np.testing.assert_allclose(instance.points, rows)
    assert instance.distances == GREAT_CIRCLE
    assert "read as latitude/longitude; distances are great-circle km" in instance.note
    assert instance.names == tuple(f"site{k}" for k in range(len(rows)))


def test_columns_picked_by_name_put_longitude_first_and_keep_the_rest(tmp_path):
    rows = far_north_customers()
    path = write_csv(tmp_path / "sites.csv", rows, "name,lat,lon,demand,capacity")
    (instance,) = read_instances(path, CVRP, "csv", columns=["lat", "lon", "demand", "capacity"])
    np.testing.assert_allclose(instance.points, rows)
    assert instance.distances == GREAT_CIRCLE


def test_more_numbers_than_a_customer_has_name_the_columns_option(tmp_path):
    rows = far_north_customers()
    lines = ["id,lat,lon,q,cap", *(f"{k},{r[1]},{r[0]},{r[2]},{r[3]}" for k, r in enumerate(rows))]
    (tmp_path / "ids.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"ids.csv:2: 5 numbers; a cvrp point has 4.*--columns"):
        read_instances(str(tmp_path / "ids.csv"), CVRP, "auto")
    picked = read_instances(
        str(tmp_path / "ids.csv"), CVRP, "csv", columns=["lon", "lat", "q", "cap"]
    )
    np.testing.assert_allclose(picked[0].points, rows)


def test_a_customer_off_the_globe_is_an_error_at_its_line(tmp_path):
    rows = far_north_customers()
    rows[4, 1] = -91.0
    path = write_csv(tmp_path / "sites.csv", rows)
    with pytest.raises(InputError, match=r"sites.csv:6: latitude -91 is outside \[-90, 90\]"):
        read_instances(path, CVRP, "auto")


# --- the front ends -----------------------------------------------------------------------------


def predicted(capsys, path: str, *options) -> dict:
    argv = ["predict", "cvrp", path, "-o", "-", "--output-format", "json", "-q", *options]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out.splitlines()[0])


def test_predict_and_the_api_route_the_projection_and_report_great_circle_km(tmp_path, capsys):
    rows = far_north_customers(n=20, seed=8)
    rows[:, 3] = 30
    path = write_csv(tmp_path / "sites.csv", rows)
    answer = predicted(capsys, path)
    assert answer["valid"] and answer["units"] == "km"
    assert answer["cost"] == pytest.approx(haversine_walk(rows, answer["sequence"]), rel=1e-9)
    assert len(split_routes(answer["sequence"])) >= 3  # 20 customers of 2-7 in loads of 30

    solver = ptrnet.load("cvrp", device="cpu")
    result = solver.solve(rows, geo=True)
    assert result.sequence.tolist() == answer["sequence"]
    assert result.cost == pytest.approx(answer["cost"], rel=1e-12)
    image = np.column_stack([azimuthal_equidistant(rows[:, :2]), rows[:, 2:]])  # km, demand
    assert solver.solve(image).sequence.tolist() == answer["sequence"]  # the projection decoded

    searched = predicted(capsys, path, "--route-search")
    assert searched["valid"] and searched["cost"] <= answer["cost"] + 1e-9
    assert searched["cost"] == pytest.approx(haversine_walk(rows, searched["sequence"]), rel=1e-9)

    assert main(["eval", "cvrp", path, "--json", "--threads", "1"]) == 0
    evaluated = json.loads(capsys.readouterr().out)
    assert evaluated["mean_length"] == pytest.approx(answer["cost"])
    assert 0 <= evaluated["mean_gap"] < 0.3


def test_the_page_reads_customers_on_the_globe_and_answers_in_km(tmp_path, capsys):
    pytest.importorskip("fastapi", reason="the web extra is not installed")
    from fastapi.testclient import TestClient

    from ptrnet.inference import load_model
    from ptrnet.web.app import create_app

    rows = far_north_customers(n=12, seed=9)
    rows[:, 3] = 25
    path = write_csv(tmp_path / "sites.csv", rows)
    cli = predicted(capsys, path)
    app = create_app({"cvrp": load_model(None, CVRP)})
    with TestClient(app, base_url="http://localhost") as client:
        text = Path(path).read_text()
        read = client.post("/api/read", json={"task": "cvrp", "text": text}).json()
        assert read["distances"] == "great_circle" and read["units"] == "km" and read["projected"]
        np.testing.assert_allclose(read["points"], rows)
        assert read["projection"]["form"] == "lon_lat" and len(read["projection"]["centre"]) == 2
        assert np.asarray(read["unit"])[:, 2:].tolist() == rows[:, 2:].tolist()  # demand kept
        body = {"task": "cvrp", "points": read["points"], "distances": "great_circle"}
        answer = client.post("/api/predict", json={**body, "decoding": {}}).json()
        tasks = {t["name"]: t for t in client.get("/api/tasks").json()["tasks"]}
    assert answer["model"]["sequence"] == cli["sequence"] and answer["units"] == "km"
    assert answer["metrics"]["mean_length"] == pytest.approx(cli["cost"])
    assert "great_circle" in tasks["cvrp"]["distances"]
