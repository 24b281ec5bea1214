"""CVRPLIB .vrp files (ptrnet/io/cvrplib.py): a published instance and its optimum, the round
trip through vrplib's writer, the depot moved first, and one-line errors naming the file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ptrnet.io.cvrplib import cvrplib_cost, read_vrp, write_vrp
from ptrnet.io.errors import InputError
from ptrnet.solvers import cvrp

DATA = Path(__file__).parent / "data" / "cvrplib"
HEADER = "NAME : t\nTYPE : CVRP\nDIMENSION : 3\nEDGE_WEIGHT_TYPE : EUC_2D\nCAPACITY : 10\n"
NODES = "NODE_COORD_SECTION\n1 0 0\n2 3 4\n3 6 0\n"
DEMANDS = "DEMAND_SECTION\n1 0\n2 4\n3 5\n"
DEPOT = "DEPOT_SECTION\n1\n-1\nEOF\n"


def test_e_n22_k4_reads_and_pyvrp_reaches_its_published_optimum_375():
    instance = read_vrp(DATA / "E-n22-k4.vrp")
    assert instance.name == "E-n22-k4" and instance.capacity == 6000
    assert instance.coords.shape == (22, 2) and instance.demands[0] == 0
    assert instance.coords[0].tolist() == [145, 215] and instance.demands[1] == 1100
    assert instance.unit.min() == 0 and instance.unit.max() == 1
    np.testing.assert_allclose(instance.unit * instance.scale + instance.offset, instance.coords)
    routes = cvrp.pyvrp_routes(instance.unit, instance.demands, instance.capacity)
    assert cvrp.routes_problem(instance.demands, instance.capacity, routes) is None
    assert cvrplib_cost(instance.coords, cvrp.join_routes(routes)) == 375
    rows = instance.rows()
    assert rows.shape == (22, 4) and (rows[:, 3] == 6000).all()


def test_written_files_read_back_exactly(tmp_path):
    coords, demands, capacity = cvrp.sample_instance(np.random.default_rng(3), 12)
    path = tmp_path / "x.vrp"
    write_vrp(path, coords, demands, capacity, name="x12", comment="ptrnet test")
    back = read_vrp(path)
    assert back.name == "x12" and back.capacity == capacity
    assert (back.coords == coords).all() and (back.demands == demands).all()
    assert "EDGE_WEIGHT_TYPE: EUC_2D" in path.read_text()


def test_a_depot_listed_later_comes_first(tmp_path):
    path = tmp_path / "d.vrp"
    path.write_text(HEADER + NODES + "DEMAND_SECTION\n1 4\n2 0\n3 5\nDEPOT_SECTION\n2\n-1\nEOF\n")
    instance = read_vrp(path)
    assert instance.coords.tolist() == [[3, 4], [0, 0], [6, 0]]
    assert instance.demands.tolist() == [0, 4, 5]


def test_cvrplib_cost_rounds_each_edge():
    coords = np.array([[0, 0], [3, 4], [6, 0], [0, 1.4]])
    # depot-1-2-depot: 5 + 5 + 6 = 16; depot-3-depot: 1.4 rounds to 1, twice
    assert cvrplib_cost(coords, [1, 2, 0, 3]) == 16 + 2


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("just words\n", "not a CVRPLIB instance"),
        (HEADER.replace("CVRP", "TSP", 1) + NODES + DEMANDS + DEPOT, "TYPE 'TSP' is not supported"),
        (HEADER.replace("EUC_2D", "GEO") + NODES + DEMANDS + DEPOT, "EDGE_WEIGHT_TYPE 'GEO'"),
        (HEADER + NODES + DEPOT, "no DEMAND_SECTION"),
        (HEADER.replace("CAPACITY : 10\n", "") + NODES + DEMANDS + DEPOT, "no CAPACITY"),
        (HEADER.replace(": 3", ": 4") + NODES + DEMANDS + DEPOT, "DIMENSION is 4 but 3 nodes"),
        (HEADER + NODES + "DEMAND_SECTION\n1 0\n2 4\n" + DEPOT, "3 nodes have coordinates, 2"),
        (HEADER + NODES + DEMANDS.replace("3 5", "3 11") + DEPOT, "customer 2 has 11"),
        (HEADER + NODES + DEMANDS.replace("2 4", "2 4.5") + DEPOT, "demands are integers"),
        (HEADER + NODES + DEMANDS + "DEPOT_SECTION\n1\n2\n-1\nEOF\n", "DEPOT_SECTION lists 2"),
        (HEADER + NODES + DEMANDS + "DEPOT_SECTION\n7\n-1\nEOF\n", "names node 7"),
    ],
)
def test_bad_files_are_refused_in_one_line_naming_the_file(tmp_path, text, problem):
    path = tmp_path / "bad.vrp"
    path.write_text(text)
    with pytest.raises(InputError, match=problem) as err:
        read_vrp(path)
    assert str(err.value).startswith(f"{path}: ") and "\n" not in str(err.value)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(InputError, match="missing.vrp"):
        read_vrp(tmp_path / "missing.vrp")


def test_every_reader_takes_a_vrp_file_as_rows_in_the_files_units():
    """``read_instances`` (what every command reads with) takes ``.vrp`` by its extension or
    ``--format cvrplib``, for a task whose points are rows (x, y, demand, capacity), in the
    file's units (the one map into the unit square comes after, as for any file), and says
    that its lengths are unrounded; a task of other points is refused in one line."""
    from ptrnet.io.errors import UsageError
    from ptrnet.io.instances import read_instances
    from ptrnet.tasks import get_task
    from tests.test_model_features import RowsTask

    path = DATA / "E-n22-k4.vrp"
    (instance,) = read_instances(path, RowsTask())
    expected = read_vrp(path)
    assert (instance.points == expected.rows(unit=False)).all()  # the file's units: mapped later
    assert "21 customers, capacity 6000; lengths in the file's units, each edge unrounded" in (
        instance.note
    )
    with pytest.raises(UsageError, match="rows \\(x, y, demand, capacity\\); task tsp's points"):
        read_instances(path, get_task("tsp"))
    with pytest.raises(UsageError, match="task tsp's points have 2"):
        read_instances(path, get_task("tsp"), "cvrplib")
