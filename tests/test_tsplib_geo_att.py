"""TSPLIB GEO and ATT files: read, solved and measured by TSPLIB's own integer rules, which
reproduce the published optima of ulysses16 (GEO, 6859) and att48 (ATT, 10628) on their
published optimal tours (tests/data/tsplib, with provenance in its README)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from ptrnet.cli.main import main
from ptrnet.io.errors import InputError
from ptrnet.io.instances import read_instances
from ptrnet.io.tsplib import read_tsplib
from ptrnet.solvers.distances import TSPLIB_ATT, TSPLIB_GEO, tsplib_att_matrix, tsplib_geo_matrix
from ptrnet.tasks import get_point_task

DATA = Path(__file__).resolve().parent / "data" / "tsplib"
TSP = get_point_task("tsp")


def opt_tour(name: str) -> np.ndarray:
    """The 0-based tour of ``DATA/NAME.opt.tour`` (TSPLIB's TOUR_SECTION, ended by -1)."""
    lines = (DATA / f"{name}.opt.tour").read_text().split("TOUR_SECTION")[1].split()
    return np.array([int(x) - 1 for x in itertools.takewhile(lambda x: x != "-1", lines)])


def brute_force_length(dist: np.ndarray) -> float:
    n = len(dist)
    return min(
        sum(dist[t[k], t[(k + 1) % n]] for k in range(n))
        for t in ((0, *rest) for rest in itertools.permutations(range(1, n)))
    )


@pytest.mark.parametrize(
    "name, kind, rule, optimum",
    [("ulysses16", "GEO", TSPLIB_GEO, 6859), ("att48", "ATT", TSPLIB_ATT, 10628)],
)
def test_the_published_optimal_tours_measure_the_published_optima(name, kind, rule, optimum):
    instance = read_tsplib(DATA / f"{name}.tsp")
    assert instance.edge_weight_type == kind and instance.distances == rule
    tour = opt_tour(name)
    assert instance.tsplib_length(tour) == optimum
    assert rule.tour_length(instance.coords, tour) == optimum
    matrix = instance.tsplib_matrix()
    assert matrix[tour, np.roll(tour, -1)].sum() == optimum
    assert np.array_equal(matrix, matrix.T) and not matrix.diagonal().any()
    assert np.array_equal(matrix, np.round(matrix))  # integers, as TSPLIB's rules give
    assert np.ptp(instance.points, axis=0).max() == pytest.approx(1.0)  # the model's frame


def test_tsplib_rules_on_hand_computed_pairs():
    """ATT: (0, 0)-(10, 0) is sqrt(10) = 3.16, rounded to 3, below r: 4; (0, 0)-(30, 10) is
    sqrt(100) = 10 exactly: 10. GEO: 0.00 and 1.00 (one degree of longitude on the equator)
    is int(6378.388 * 3.141592 / 180 + 1) = 112 km."""
    att = tsplib_att_matrix(np.array([[0.0, 0.0], [10.0, 0.0], [30.0, 10.0]]))
    assert att[0, 1] == 4 and att[0, 2] == 10
    geo = tsplib_geo_matrix(np.array([[0.0, 0.0], [0.0, 1.0], [0.30, 0.0]]))
    assert geo[0, 1] == 112
    assert geo[0, 2] == 56  # 30 minutes of latitude: int(6378.388 * 0.5 * pi / 180 + 1)


def test_ulysses16_is_solved_to_its_optimum_on_geo_distances(capsys):
    path = str(DATA / "ulysses16.tsp")
    assert main(["solve", "tsp", path, "-o", "-", "--output-format", "json"]) == 0
    out, err = capsys.readouterr()
    answer = json.loads(out)
    assert answer["cost"] == 6859 and answer["units"] == "km"
    assert (
        f"ptrnet: {path}: EDGE_WEIGHT_TYPE GEO: latitude/longitude (DDD.MM); distances are " in err
    )
    assert "ulysses16.tsp: tour length 6859 (TSPLIB GEO)" in err


def test_a_small_att_instance_is_solved_to_its_brute_force_optimum(tmp_path):
    coords = read_tsplib(DATA / "att48.tsp").coords[:8]
    nodes = "".join(f"{k + 1} {x:g} {y:g}\n" for k, (x, y) in enumerate(coords))
    header = "NAME : att8\nTYPE : TSP\nDIMENSION : 8\nEDGE_WEIGHT_TYPE : ATT\n"
    (tmp_path / "att8.tsp").write_text(f"{header}NODE_COORD_SECTION\n{nodes}EOF\n")
    (instance,) = read_instances(tmp_path / "att8.tsp", TSP)
    task = TSP.with_distances(instance.distances)
    tour = task.solve(instance.points)
    optimum = brute_force_length(tsplib_att_matrix(coords))
    assert task.answer_cost(instance.points, tour) == optimum
    euclidean = TSP.solve(instance.points)  # the planar optimum need not be ATT's
    assert TSPLIB_ATT.tour_length(coords, euclidean) >= optimum


def test_predict_decodes_geo_cities_and_measures_tsplib_km(capsys):
    path = str(DATA / "ulysses16.tsp")
    argv = ["predict", "tsp", path, "-o", "-", "--output-format", "json", "-q"]
    assert main([*argv, "--or-opt"]) == 0
    answer = json.loads(capsys.readouterr().out)
    coords = read_tsplib(path).coords
    assert answer["cost"] == TSPLIB_GEO.tour_length(coords, answer["sequence"])
    assert 6859 <= answer["cost"] < 6859 * 1.05


def test_a_geo_city_off_the_globe_is_refused_naming_its_node(tmp_path):
    text = (DATA / "ulysses16.tsp").read_text().replace(" 5 33.48 10.54", " 5 95.10 10.54")
    (tmp_path / "bad.tsp").write_text(text)
    with pytest.raises(InputError, match=r"bad\.tsp: node 5: latitude 95.1667 is outside"):
        read_tsplib(tmp_path / "bad.tsp")


def test_eval_polishes_and_measures_geo_and_att_files_by_their_own_rules():
    """``eval --two-opt`` 2-opted GEO files on EUC_2D's rounding of their DDD.MM degrees:
    ulysses16 stopped at 6911; on GEO's own lengths it reaches 6859."""
    from ptrnet.evaluation.tsplib_eval import evaluate_tsplib
    from ptrnet.inference import load_model

    loaded = load_model("bundled", "tsp")
    paths = [DATA / "ulysses16.tsp", DATA / "att48.tsp"]
    optimal = {"ulysses16.tsp": 6859, "att48": 10628}
    from ptrnet.searches.plan import SearchPlan

    results = evaluate_tsplib(loaded, paths, optimal, search=SearchPlan(local=("two_opt",)))
    assert [r.optimum for r in results] == [6859, 10628]
    assert results[0].length == 6859 and 10628 <= results[1].length < 10628 * 1.05
