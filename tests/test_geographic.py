"""Cities given by latitude and longitude: great-circle kilometres against an independent oracle
(GeographicLib's geodesics on a sphere), the plane a model reads, CSV columns found by name (or
picked with --columns), every cost, reference, 2-opt/Or-opt and RRC step in great-circle km,
the antimeridian, and CSV files with decimal commas."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from ptrnet.cli.main import main
from ptrnet.io.errors import InputError
from ptrnet.io.instances import read_instances
from ptrnet.searches.run import local_search
from ptrnet.solvers.distances import EUCLIDEAN, GREAT_CIRCLE
from ptrnet.solvers.geodesy import (
    EARTH_RADIUS_KM,
    azimuthal_equidistant,
    centre,
    great_circle_edges,
    great_circle_matrix,
)
from ptrnet.solvers.tsp import distance_matrix
from ptrnet.tasks import get_point_task
from ptrnet.tasks.tsp import OR_OPT, TWO_OPT

TSP = get_point_task("tsp")
GEO_TSP = TSP.with_distances(GREAT_CIRCLE)
CAPITALS = """name,lat,lon
Paris,48.8566,2.3522
Berlin,52.52,13.405
Madrid,40.4168,-3.7038
Rome,41.9028,12.4964
London,51.5074,-0.1278
Vienna,48.2082,16.3738
Amsterdam,52.3676,4.9041
Warsaw,52.2297,21.0122
"""


def lon_lat(text: str) -> np.ndarray:
    """The (lon, lat) rows of a CAPITALS-like text."""
    rows = [line.split(",")[1:] for line in text.strip().splitlines()[1:]]
    return np.array([[float(lon), float(lat)] for lat, lon in rows])


def brute_force(dist: np.ndarray) -> tuple[float, tuple[int, ...]]:
    """The shortest closed tour from city 0 by trying every order (n <= 9)."""
    n = len(dist)
    best = (np.inf, ())
    for rest in itertools.permutations(range(1, n)):
        tour = (0, *rest)
        length = sum(dist[tour[k], tour[(k + 1) % n]] for k in range(n))
        best = min(best, (length, tour))
    return best


def cycle_length(dist: np.ndarray, tour) -> float:
    tour = list(tour)[: len(dist)]
    return float(sum(dist[tour[k], tour[(k + 1) % len(tour)]] for k in range(len(tour))))


def far_north(seed: int = 29) -> np.ndarray:
    """7 cities at 55-75 degrees north, where a degree of longitude is a third to a half of a
    degree of latitude: the shortest tour in planar degrees is 8% longer in km."""
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.uniform(-40, 40, 7), rng.uniform(55, 75, 7)])


# --- distances against GeographicLib -------------------------------------------------------


def test_great_circle_distances_match_geographiclib_on_the_mean_sphere():
    geodesic = pytest.importorskip("geographiclib.geodesic")
    sphere = geodesic.Geodesic(EARTH_RADIUS_KM * 1000, 0)  # f = 0: a sphere
    rng = np.random.default_rng(0)
    points = np.column_stack([rng.uniform(-180, 180, 40), rng.uniform(-90, 90, 40)])
    special = [[0, 0], [180, 0], [-180, 0], [179.9, -17], [-179.9, -17], [0, 90], [45, -90]]
    points = np.vstack([points, special, [[10, 20], [-170, -20]]])  # the last two antipodal
    dist = great_circle_matrix(points)
    for i, j in itertools.combinations(range(len(points)), 2):
        (lon1, lat1), (lon2, lat2) = points[i], points[j]
        oracle = sphere.Inverse(lat1, lon1, lat2, lon2)["s12"] / 1000
        assert dist[i, j] == pytest.approx(oracle, rel=1e-9, abs=1e-6)
    assert np.array_equal(dist, dist.T) and not dist.diagonal().any()
    assert dist[-2, -1] == pytest.approx(np.pi * EARTH_RADIUS_KM, rel=1e-12)  # antipodes
    tour = rng.permutation(len(points))
    edges = great_circle_edges(points, tour)
    np.testing.assert_allclose(edges, dist[tour, np.roll(tour, -1)], rtol=1e-12, atol=1e-9)


def haversine(lon1: float, lat1: float, lon2: float, lat2: float) -> float:
    """The textbook haversine formula in scalar floats: a second oracle, another formula."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    h = math.sin((p2 - p1) / 2) ** 2
    h += math.cos(p1) * math.cos(p2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(math.sqrt(h))


def test_known_city_pairs_without_geographiclib():
    """Paris-London 343.6 km, Paris-Berlin 877.5 km, Madrid-Warsaw 2,289.8 km."""
    cities = lon_lat(CAPITALS)
    dist = GREAT_CIRCLE.matrix(cities)
    assert dist[0, 4] == pytest.approx(343.557, abs=0.001)
    assert dist[0, 1] == pytest.approx(877.465, abs=0.001)
    assert dist[2, 7] == pytest.approx(2289.848, abs=0.001)
    for i, j in itertools.combinations(range(len(cities)), 2):
        assert dist[i, j] == pytest.approx(haversine(*cities[i], *cities[j]), rel=1e-12)


# --- the plane a model reads ---------------------------------------------------------------


def test_the_plane_keeps_distances_from_the_centre_and_nearly_every_other_in_a_continent():
    cities = lon_lat(CAPITALS)
    plane = azimuthal_equidistant(cities)
    origin = centre(cities)
    radial = great_circle_matrix(np.vstack([[origin], cities]))[0, 1:]
    np.testing.assert_allclose(np.hypot(*plane.T), radial, rtol=1e-12)
    flat = distance_matrix(plane)
    curved = GREAT_CIRCLE.matrix(cities)
    off = ~np.eye(len(cities), dtype=bool)
    assert np.abs(flat[off] / curved[off] - 1).max() < 0.01  # within 1% over Europe
    east, north = plane[1] - plane[0]  # Berlin from Paris: east and a little north
    assert east > 600 and 0 < north < 600


def test_cities_across_the_antimeridian_are_neighbours_in_the_plane():
    """Fiji, Tonga and Samoa straddle 180 degrees: 179.9 E and 179.9 W are 24 km apart here."""
    islands = np.array(
        [[178.4, -18.1], [179.9, -16.5], [-179.9, -16.6], [-178.1, -14.3], [-175.2, -21.1],
         [-171.8, -13.8], [177.4, -17.8]]
    )  # fmt: skip
    assert GREAT_CIRCLE.matrix(islands)[1, 2] == pytest.approx(24.043, abs=0.001)
    plane = GREAT_CIRCLE.plane(islands)
    assert np.ptp(plane, axis=0).max() < 1200  # km: one cluster, not split 40,000 km apart
    lon, _ = centre(islands)
    assert abs(lon) > 178  # the middle lies on the antimeridian, not at 0 degrees
    length, _ = brute_force(GREAT_CIRCLE.matrix(islands))
    solved = GEO_TSP.solve(islands)
    assert GEO_TSP.answer_cost(islands, solved) == pytest.approx(length, rel=1e-12)
    planar = brute_force(distance_matrix(islands))[1]  # in degrees, the date line a wall
    assert cycle_length(GREAT_CIRCLE.matrix(islands), planar) > 1.2 * length


# --- references and local searches in great-circle km --------------------------------------


def test_the_reference_tour_is_the_great_circle_optimum_not_the_planar_degrees_one():
    cities = far_north()
    dist = GREAT_CIRCLE.matrix(cities)
    length, _ = brute_force(dist)
    planar_length = cycle_length(dist, brute_force(distance_matrix(cities))[1])
    assert planar_length > 1.05 * length  # the instance tells the two apart
    solved = GEO_TSP.solve(cities)
    assert GEO_TSP.is_valid(cities, solved) and solved[0] == solved[-1] == 0
    assert GEO_TSP.answer_cost(cities, solved) == pytest.approx(length, rel=1e-12)
    reference = GEO_TSP.reference(cities).sequence
    assert np.array_equal(reference, solved)


def test_two_opt_and_or_opt_search_great_circle_km():
    cities = far_north()
    dist = GREAT_CIRCLE.matrix(cities)
    length, _ = brute_force(dist)
    start = np.array([0, 3, 1, 5, 2, 6, 4, 0])
    for or_opt in (False, True):
        (tour,) = local_search(OR_OPT if or_opt else TWO_OPT, [cities], [start], GREAT_CIRCLE)
        assert tour[0] == tour[-1] == 0 and sorted(tour[:-1]) == list(range(7))
        found = cycle_length(dist, tour)
        assert found <= cycle_length(dist, start)
        open_tour = list(tour[:-1])
        for i, j in itertools.combinations(range(1, 7), 2):  # no 2-opt move shortens it
            moved = open_tour[:i] + open_tour[i : j + 1][::-1] + open_tour[j + 1 :]
            assert cycle_length(dist, moved) >= found - 1e-9
    assert found == pytest.approx(length)  # n = 7: the local optimum is the optimum here


def test_metrics_and_gaps_are_great_circle():
    cities = far_north()
    reference = GEO_TSP.solve(cities)
    planar = np.array([*brute_force(distance_matrix(cities))[1], 0])
    metrics = GEO_TSP.metrics([cities], [reference], [planar])
    km = GREAT_CIRCLE.tour_length(cities, planar)
    assert metrics["mean_length"] == pytest.approx(km)
    assert metrics["mean_gap"] == pytest.approx(
        km / GREAT_CIRCLE.tour_length(cities, reference) - 1
    )


def test_cities_off_the_globe_are_refused():
    with pytest.raises(ValueError, match="latitude 95 is outside"):
        GEO_TSP.check_points(np.array([[0.0, 10.0], [1.0, 95.0], [2.0, 0.0]]))
    with pytest.raises(ValueError, match="longitude -190 is outside"):
        GEO_TSP.check_points(np.array([[-190.0, 10.0], [1.0, 5.0], [2.0, 0.0]]))
    with pytest.raises(ValueError, match="takes no distance rule"):
        get_point_task("convex_hull").with_distances(GREAT_CIRCLE)


# --- the CSV reader ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "lat, lon", [("lat", "lon"), ("LAT", "Lng"), ("Latitude", "LONGITUDE"), ("lat", "long")]
)
def test_latitude_and_longitude_columns_are_found_by_name_in_any_case(tmp_path, lat, lon):
    (tmp_path / "c.csv").write_text(CAPITALS.replace("lat,lon", f"{lat},{lon}"))
    (instance,) = read_instances(tmp_path / "c.csv", TSP)
    np.testing.assert_array_equal(instance.points, lon_lat(CAPITALS))  # x = lon, y = lat
    assert instance.distances == GREAT_CIRCLE and instance.names[:2] == ("Paris", "Berlin")
    assert instance.note == (
        f"columns {lat}, {lon} read as latitude/longitude; distances are great-circle km"
    )


def test_columns_override_the_names_and_a_lat_lon_pick_is_geographic(tmp_path):
    rows = ["name,lat,lon,x,y", "a,48.9,2.4,0.1,0.2", "b,52.5,13.4,0.3,0.4", "c,40.4,-3.7,0.5,0.9"]
    (tmp_path / "c.csv").write_text("\n".join(rows) + "\n")
    (planar,) = read_instances(tmp_path / "c.csv", TSP, columns=("x", "y"))
    np.testing.assert_array_equal(planar.points, [[0.1, 0.2], [0.3, 0.4], [0.5, 0.9]])
    assert planar.distances is None and planar.note is None
    for columns in (("lat", "lon"), ("2", "1"), ("lon", "lat")):
        (geo,) = read_instances(tmp_path / "c.csv", TSP, columns=columns)
        np.testing.assert_array_equal(geo.points, [[2.4, 48.9], [13.4, 52.5], [-3.7, 40.4]])
        assert geo.distances == GREAT_CIRCLE


def test_another_planar_task_reads_lat_lon_as_a_map_in_degrees(tmp_path):
    (tmp_path / "c.csv").write_text(CAPITALS)
    (instance,) = read_instances(tmp_path / "c.csv", get_point_task("convex_hull"))
    np.testing.assert_array_equal(instance.points, lon_lat(CAPITALS))
    assert instance.distances is None and "a plane in degrees" in instance.note


def test_two_latitude_columns_ask_for_columns(tmp_path):
    (tmp_path / "c.csv").write_text("lat,latitude,lon\n1,2,3\n4,5,6\n7,8,9\n")
    with pytest.raises(InputError, match=r"c\.csv:1: columns 'lat', 'latitude' all name the "):
        read_instances(tmp_path / "c.csv", TSP)


@pytest.mark.parametrize(
    "row, problem", [("Oslo,95.0,10.7", "latitude 95 is outside"), ("Oslo,59.9,-190", "longitude")]
)
def test_a_city_off_the_globe_is_an_error_at_its_line(tmp_path, row, problem):
    (tmp_path / "c.csv").write_text(CAPITALS + "\n" + row + "\n")
    with pytest.raises(InputError, match=rf"c\.csv:11: {problem}"):
        read_instances(tmp_path / "c.csv", TSP)


# --- command line and Python API ------------------------------------------------------------


def test_predict_and_solve_report_great_circle_km_with_units_and_one_note(tmp_path, capsys):
    path = tmp_path / "cities.csv"
    path.write_text(CAPITALS)
    cities = lon_lat(CAPITALS)
    argv = ["predict", "tsp", str(path), "-o", "-", "--output-format", "json"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    answer = json.loads(out)
    assert answer["units"] == "km" and answer["names"][0] == "Paris"
    assert answer["cost"] == pytest.approx(GREAT_CIRCLE.tour_length(cities, answer["sequence"]))
    note = "columns lat, lon read as latitude/longitude; distances are great-circle km"
    assert err.splitlines()[0] == f"ptrnet: {path}: {note}" and "unit square" not in err
    assert main(["solve", "tsp", str(path), "-o", "-", "--output-format", "csv", "-q"]) == 0
    header, row = capsys.readouterr().out.splitlines()
    cells = dict(zip(header.split(","), row.split(","), strict=True))
    assert cells["units"] == "km"
    assert float(cells["cost"]) == pytest.approx(brute_force(GREAT_CIRCLE.matrix(cities))[0])


def test_score_measures_a_prediction_of_cities_in_great_circle_km(tmp_path, capsys):
    path = tmp_path / "cities.csv"
    path.write_text(CAPITALS)
    predicted = tmp_path / "pred.txt"
    assert main(["predict", "tsp", str(path), "-o", str(predicted), "-q"]) == 0
    assert main(["score", "tsp", str(path), str(predicted), "--json"]) == 0
    metrics = json.loads(capsys.readouterr().out)
    cities = lon_lat(CAPITALS)
    optimum = brute_force(GREAT_CIRCLE.matrix(cities))[0]
    assert metrics["mean_length"] == pytest.approx(optimum * (1 + metrics["mean_gap"]))
    assert metrics["mean_length"] > 4000  # km, not degrees


def test_eval_and_score_tables_name_km_for_cities_and_no_unit_for_a_plane(tmp_path, capsys):
    path, plane = tmp_path / "cities.csv", tmp_path / "plane.csv"
    path.write_text(CAPITALS)
    plane.write_text("x,y\n" + "".join(f"{x},{y}\n" for x, y in lon_lat(CAPITALS)))
    predicted = tmp_path / "pred.txt"
    assert main(["predict", "tsp", str(path), "-o", str(predicted), "-q"]) == 0
    for argv in (["eval", "tsp", str(path)], ["score", "tsp", str(path), str(predicted)]):
        assert main(argv) == 0
        (row,) = [r for r in capsys.readouterr().out.splitlines() if r.startswith("mean_length")]
        assert row.endswith(" km") and float(row.split()[1]) > 4000
    assert main(["eval", "tsp", str(plane)]) == 0
    (row,) = [r for r in capsys.readouterr().out.splitlines() if r.startswith("mean_length")]
    assert row.split()[1:] == [f"{float(row.split()[1]):.4f}"]  # degrees as given, no unit


def test_rrc_reads_cities_as_the_model_does_and_keeps_segments_by_great_circle_km():
    import torch

    from ptrnet.io.unit_square import model_image
    from ptrnet.searches.rebuild import _rrc_inputs

    cities = [far_north(seed) for seed in range(2)]  # (7, 2) each, lon, lat
    units, matrices = _rrc_inputs(cities, GEO_TSP, torch.device("cpu"))
    for i, city in enumerate(cities):
        assert np.allclose(units[i].numpy(), model_image(GEO_TSP, city)[0], atol=1e-6)
        assert np.allclose(matrices[i].numpy(), great_circle_matrix(city))
    planar, none = _rrc_inputs(cities, None, torch.device("cpu"))
    assert none is None and not np.allclose(planar.numpy(), units.numpy(), atol=1e-3)


def test_predict_searches_rrc_and_or_opt_on_great_circle_km(tmp_path, capsys):
    cities = np.vstack([far_north(seed) for seed in range(3)])  # 21 cities, far north
    path = tmp_path / "north.csv"
    path.write_text("lon,lat\n" + "".join(f"{x},{y}\n" for x, y in cities))
    argv = ["predict", "tsp", str(path), "-o", "-", "--output-format", "json", "-q"]
    assert main(argv) == 0
    greedy = json.loads(capsys.readouterr().out)
    assert main([*argv, "--improve", "rrc", "--iterations", "5", "--or-opt"]) == 0
    searched = json.loads(capsys.readouterr().out)
    assert searched["cost"] <= greedy["cost"] + 1e-9
    assert searched["cost"] == pytest.approx(GEO_TSP.answer_cost(cities, searched["sequence"]))
    (polished,) = local_search(OR_OPT, [cities], [np.array(searched["sequence"])], GREAT_CIRCLE)
    assert np.array_equal(polished, searched["sequence"])  # a local optimum in km already


def test_the_api_solves_cities_with_geo_true():
    import ptrnet

    solver = ptrnet.load("tsp")
    cities = far_north()
    result = solver.solve(cities, geo=True)
    assert result.valid and result.cost == pytest.approx(
        GREAT_CIRCLE.tour_length(cities, result.sequence)
    )
    polished = solver.solve(cities, geo=True, or_opt=True)
    assert polished.cost == pytest.approx(brute_force(GREAT_CIRCLE.matrix(cities))[0])
    planar = solver.solve(cities)  # degrees as a plane: the same numbers, another measure
    assert planar.cost == pytest.approx(EUCLIDEAN.tour_length(cities, planar.sequence))
    with pytest.raises(ValueError, match="latitude 95"):
        solver.solve(np.array([[0.0, 10.0], [1.0, 95.0], [2.0, 0.0]]), geo=True)
    with pytest.raises(ValueError, match="geo='yes': True or False"):
        solver.solve(cities, geo="yes")
    with pytest.raises(ValueError, match="geo=True: task sort measures no distances"):
        ptrnet.load("sort").solve(np.random.rand(5), geo=True)


# --- decimal commas ----------------------------------------------------------------------------


EUROPEAN = 'name;lat;lon\n"Paris, FR";48,8566;2,3522\nLyon;45,764;4,8357\nNice;43,7102;7,262\n'


def test_a_semicolon_csv_with_decimal_commas_is_read(tmp_path):
    (tmp_path / "c.csv").write_text(EUROPEAN)
    (instance,) = read_instances(tmp_path / "c.csv", TSP)
    np.testing.assert_array_equal(
        instance.points, [[2.3522, 48.8566], [4.8357, 45.764], [7.262, 43.7102]]
    )
    assert instance.names == ("Paris, FR", "Lyon", "Nice")
    assert instance.note.startswith("semicolon-separated with decimal commas; columns lat, lon")


def test_decimal_commas_without_a_header_and_with_tabs(tmp_path):
    """Without a header the sniffer takes the decimal commas for the delimiter."""
    (tmp_path / "a.csv").write_text("Paris;48,9;2,4\nLyon;45,8;4,8\nNice;43,7;7,3\n")
    (tab,) = read_instances(tmp_path / "a.csv", TSP)
    np.testing.assert_array_equal(tab.points, [[48.9, 2.4], [45.8, 4.8], [43.7, 7.3]])
    (tmp_path / "b.csv").write_text("x\ty\n0,5\t1\n2\t-1,25\n3,\t,5\n")
    (instance,) = read_instances(tmp_path / "b.csv", TSP)
    np.testing.assert_array_equal(instance.points, [[0.5, 1], [2, -1.25], [3, 0.5]])
    assert instance.note == "tab-separated with decimal commas"


def test_a_thousands_separator_in_a_decimal_comma_file_is_one_line_naming_the_fix(tmp_path):
    (tmp_path / "c.csv").write_text("x;y\n1,5;2\n3;1.234,5\n4;5\n")
    with pytest.raises(InputError) as caught:
        read_instances(tmp_path / "c.csv", TSP)
    assert str(caught.value) == (
        f"{tmp_path / 'c.csv'}:3: '1.234,5': this file writes decimal commas, and a number with "
        "dots between groups of three digits may have thousands separators; write it without "
        "them (1234,5)"
    )


def test_comma_separated_files_are_never_read_with_decimal_commas(tmp_path):
    (tmp_path / "c.csv").write_text('name,x,y\na,"1,5",2\nb,3,4\nc,5,6\n')
    with pytest.raises(InputError, match=r"c\.csv:2: "):
        read_instances(tmp_path / "c.csv", TSP)
