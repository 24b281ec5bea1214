"""Which optimum a TSPLIB file is measured against (ptrnet/io/tsplib_optima.py) and how optima
files are read (read_optimal): by content, not by name; a bad or repeated line is an error.

Issue 55: a user's eil51.tsp with other cities was reported at a gap of -85.21% against TSPLIB's
426, an optima file with ``mine : 0`` raised ZeroDivisionError, and a repeated name was silently
the last one given.
"""

import json

import numpy as np
import pytest
import torch
from shared_data import TSPLIB

from ptrnet.evaluation import tsplib_eval
from ptrnet.evaluation.tsplib_eval import evaluate_tsplib, format_results
from ptrnet.io.errors import InputError
from ptrnet.io.tsplib import read_optimal, read_tsplib
from ptrnet.io.tsplib_optima import optimum_for, same_instance
from ptrnet.tasks import get_task

torch.set_num_threads(1)
SHIPPED = sorted(TSPLIB.glob("*.tsp"))
SOURCE = "optimal.txt"


def rewrite_nodes(name: str, change) -> str:
    """The shipped ``name``.tsp with each node line ``(id, x, y)`` replaced by ``change(...)``."""
    lines, section = [], False
    for text in (TSPLIB / f"{name}.tsp").read_text().splitlines():
        if section and text.strip() not in ("", "EOF"):
            node, x, y = text.split()
            text = " ".join(str(v) for v in change(int(node), float(x), float(y)))
        section = section or text.startswith("NODE_COORD_SECTION")
        lines.append(text)
    return "\n".join(lines) + "\n"


@pytest.fixture()
def shrunk_eil51(tmp_path):
    """The issue's file: named eil51 (file name and NAME), its cities eil51's divided by 10."""
    path = tmp_path / "eil51.tsp"
    path.write_text(rewrite_nodes("eil51", lambda i, x, y: (i, x / 10, y / 10)))
    return path


# --- read_optimal ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("a : 5\nmine : 0\n", 2, "the optimum of 'mine' must be a positive integer"),
        ("mine : -3\n", 1, "got '-3'"),
        ("mine : 1.5\n", 1, "got '1.5'"),
        ("mine : nan\n", 1, "got 'nan'"),
        ("mine : inf\n", 1, "got 'inf'"),
        ("mine : \n", 1, "got ''"),
        ("mine : " + "9" * 5000 + "\n", 1, "at most 18 digits"),
        (" : 5\n", 1, "expected 'name : length'"),
        ("mine 5\n", 1, "expected 'name : length'"),
        (
            "eil51 : 426\n\nberlin52 : 7542\neil51 : 426\n",
            4,
            "'eil51' again, already given on line 1",
        ),
    ],
)
def test_a_bad_or_repeated_optimum_is_an_error_naming_file_and_line(tmp_path, text, line, words):
    path = tmp_path / SOURCE
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        read_optimal(path)
    assert str(caught.value).startswith(f"{path}:{line}: ") and words in str(caught.value)


def test_the_shipped_optima_read_as_29_positive_integers():
    optimal = read_optimal(TSPLIB / SOURCE)
    assert len(optimal) == len(SHIPPED) == 29
    assert all(isinstance(v, int) and v > 0 for v in optimal.values())


# --- optimum_for ----------------------------------------------------------------------------


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_shipped_file_gets_its_published_optimum(path):
    """Ground truth: the shipped optimal.txt, line by line, for the shipped file of that name."""
    published = read_optimal(TSPLIB / SOURCE)
    instance = read_tsplib(path)
    assert instance.name == path.stem
    assert optimum_for(path, instance, published, SOURCE).value == published[path.stem]
    assert optimum_for(path, instance, published, SOURCE).note == ""
    assert optimum_for(path, instance, {}, SOURCE).value == published[path.stem]


def test_shipped_instances_are_told_apart():
    instances = [read_tsplib(path) for path in SHIPPED]
    for i, a in enumerate(instances):
        assert [same_instance(a, b) for b in instances] == [j == i for j in range(len(instances))]


def test_a_file_named_eil51_with_other_cities_gets_no_optimum(shrunk_eil51):
    published = read_optimal(TSPLIB / SOURCE)
    instance = read_tsplib(shrunk_eil51)
    assert instance.name == "eil51"
    found = optimum_for(shrunk_eil51, instance, published, SOURCE)
    assert found.value is None
    assert found.note == (
        f"{shrunk_eil51}: its cities differ from TSPLIB's eil51; TSPLIB's proven optimum (426) "
        "is not used and no gap is computed"
    )


def test_one_moved_city_is_enough_to_differ(tmp_path):
    path = tmp_path / "eil51.tsp"
    path.write_text(rewrite_nodes("eil51", lambda i, x, y: (i, x + (i == 7), y)))
    assert optimum_for(path, read_tsplib(path), {"eil51": 426}, SOURCE).value is None


def test_renumbered_cities_are_the_same_instance(tmp_path):
    """Numbering the cities otherwise changes no tour's length, so the optimum still holds."""
    path = tmp_path / "eil51.tsp"
    path.write_text(rewrite_nodes("eil51", lambda i, x, y: (52 - i, f"{x:.3f}", y)))
    instance = read_tsplib(path)
    assert not np.array_equal(instance.coords, read_tsplib(TSPLIB / "eil51.tsp").coords)
    assert optimum_for(path, instance, {}, SOURCE).value == 426


def test_a_users_own_number_for_a_tsplib_name_is_the_users_claim(shrunk_eil51):
    found = optimum_for(shrunk_eil51, read_tsplib(shrunk_eil51), {"eil51": 42}, SOURCE)
    assert found.value == 42 and found.note == ""


def test_another_number_for_the_shipped_cities_gives_way_to_the_published_one():
    path = TSPLIB / "eil51.tsp"
    found = optimum_for(path, read_tsplib(path), {"eil51": 500}, SOURCE)
    assert found.value == 426 and "the 500 stated in optimal.txt is not used" in found.note


def test_a_name_without_an_optimum_is_said(tmp_path):
    path = tmp_path / "mine.tsp"
    path.write_text(rewrite_nodes("eil51", lambda i, x, y: (i, x, y)).replace("eil51", "mine"))
    found = optimum_for(path, read_tsplib(path), {"eil51": 426}, SOURCE)
    assert found.value is None
    assert found.note == f"{path}: no optimum for 'mine' in optimal.txt; no gap is computed"


def test_a_name_never_becomes_a_path(tmp_path):
    path = tmp_path / "x.tsp"
    path.write_text(rewrite_nodes("eil51", lambda i, x, y: (i, x, y)).replace("eil51", "../eil51"))
    assert optimum_for(path, read_tsplib(path), {}, SOURCE).value is None


# --- evaluate_tsplib and ptrnet eval ---------------------------------------------------------


@pytest.fixture()
def identity_tours(monkeypatch):
    """The model replaced by one that visits the cities in file order."""
    monkeypatch.setattr(
        tsplib_eval, "predict", lambda loaded, task, points, options: [np.arange(len(points[0]))]
    )


def test_the_wrong_cities_are_not_compared_with_the_published_optimum(shrunk_eil51, identity_tours):
    """Before: length / 426 - 1, a gap near -85%."""
    optima = read_optimal(TSPLIB / SOURCE)
    (row,) = evaluate_tsplib(None, [shrunk_eil51], optima, source=SOURCE, task=get_task("tsp"))
    assert row.name == "eil51" and row.length < 426
    assert row.optimum is None and row.gap is None and "differ from TSPLIB's eil51" in row.note


def test_an_optimum_the_tour_undercuts_is_dropped(tmp_path, identity_tours):
    path = tmp_path / "mine.tsp"
    path.write_text(rewrite_nodes("eil51", lambda i, x, y: (i, x, y)).replace("eil51", "mine"))
    (row,) = evaluate_tsplib(None, [path], {"mine": 10**6}, source=SOURCE, task=get_task("tsp"))
    assert row.optimum is None and row.gap is None
    assert f"shorter than the optimum stated in {SOURCE} (1000000)" in row.note
    (kept,) = evaluate_tsplib(None, [path], {"mine": 400}, source=SOURCE, task=get_task("tsp"))
    assert kept.optimum == 400 and kept.gap == pytest.approx(kept.length / 400 - 1)


def test_the_table_leaves_rows_without_an_optimum_out_of_the_mean():
    rows = [
        tsplib_eval.TSPLibResult("a", 5, 100, 110, 0.10),
        tsplib_eval.TSPLibResult("b", 5, None, 50, None, "why"),
        tsplib_eval.TSPLibResult("c", 5, 100, 130, 0.30),
    ]
    table = format_results(rows).splitlines()
    assert "| b | 5 | n/a | 50 | n/a |" in table
    assert table[-1] == "| **mean of 2 with an optimum** | | | | **20.00%** |"
    assert format_results(rows[1:2]).splitlines()[-1] == (
        "| **mean of 0 with an optimum** | | | | **n/a** |"
    )


def test_eval_on_a_copied_folder_with_one_changed_file(cli, tiny_tsp_model, tmp_path, shrunk_eil51):
    """The optimal.txt beside the files is a copy of TSPLIB's: berlin52 (unchanged) keeps its
    optimum, the changed eil51 gets none, and stderr says why in one line."""
    (tmp_path / SOURCE).write_bytes((TSPLIB / SOURCE).read_bytes())
    (tmp_path / "berlin52.tsp").write_bytes((TSPLIB / "berlin52.tsp").read_bytes())
    files = [shrunk_eil51, tmp_path / "berlin52.tsp"]
    status, out, err = cli("eval", "tsp", *files, "--model", tiny_tsp_model, "--json")
    assert status == 0
    eil51, berlin52 = json.loads(out)["instances"]
    assert (eil51["optimum"], eil51["gap"]) == (None, None)
    assert berlin52["optimum"] == 7542 and berlin52["gap"] >= 0 and berlin52["note"] == ""
    assert f"ptrnet: {shrunk_eil51}: its cities differ from TSPLIB's eil51;" in err
    status, out, err = cli("eval", "tsp", shrunk_eil51, "--model", tiny_tsp_model)
    (row,) = [line for line in out.splitlines() if line.startswith("| eil51 |")]
    assert status == 0 and row.startswith("| eil51 | 51 | n/a |") and row.endswith("| n/a |")


def test_eval_with_a_zero_optimum_is_one_line_error(cli, tiny_tsp_model, tmp_path):
    optima = tmp_path / "optima.txt"
    optima.write_text("mine : 0\n")
    status, _, err = cli(
        "eval", "tsp", TSPLIB / "eil51.tsp", "--model", tiny_tsp_model, "--optimal", optima
    )
    assert status == 1 and "ZeroDivisionError" not in err
    assert err == (
        f"ptrnet: error: {optima}:1: the optimum of 'mine' must be a positive integer "
        "(at most 18 digits), got '0'\n"
    )
