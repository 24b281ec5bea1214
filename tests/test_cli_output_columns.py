"""One CSV schema: ``predict`` and ``solve`` write the same columns in the same order whatever
the task and options, empty where a field is undefined; tables show rates and gaps in percent
and ``--json`` keeps fractions."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
import torch

from ptrnet.cli.main import main
from ptrnet.cli.outputs import CSV_COLUMNS
from ptrnet.cli.score import format_table
from ptrnet.io.paper_format import write_examples
from ptrnet.tasks import get_task

torch.set_num_threads(1)
FIRST = ["instance", "n", "cost", "log_prob", "valid", "sequence", "names"]  # in this order


@pytest.fixture
def named_cities(tmp_path):
    """Twelve named cities in km, as a CSV file."""
    rng = np.random.default_rng(4)
    rows = [f"c{i},{x:.3f},{y:.3f}" for i, (x, y) in enumerate(rng.uniform(0, 500, (12, 2)))]
    path = tmp_path / "cities.csv"
    path.write_text("name,x,y\n" + "\n".join(rows) + "\n")
    return path


def csv_rows(capsys, *argv) -> list[list[str]]:
    assert main([*map(str, argv), "-o", "-", "--output-format", "csv", "-q"]) == 0
    return list(csv.reader(io.StringIO(capsys.readouterr().out)))


@pytest.mark.parametrize(
    "flags",
    [(), ("--two-opt",), ("--or-opt",), ("--improve", "rrc", "--iterations", "2")],
)
def test_predict_writes_the_same_columns_with_or_without_a_search(named_cities, capsys, flags):
    header, row = csv_rows(capsys, "predict", "tsp", named_cities, *flags)
    assert tuple(header) == CSV_COLUMNS and header[: len(FIRST)] == FIRST
    assert len(row) == len(header)
    cells = dict(zip(header, row, strict=True))
    assert cells["instance"] == "1" and cells["n"] == "12" and cells["valid"] == "true"
    assert float(cells["cost"]) > 0 and cells["names"].startswith("c0 > ")
    # a searched tour is not the model's output: no log-likelihood, an empty cell in its place
    assert (cells["log_prob"] == "") == bool(flags)
    if not flags:
        assert float(cells["log_prob"]) <= 0


@pytest.mark.parametrize("task_name", ["tsp", "convex_hull", "sort", "knapsack"])
def test_solve_writes_the_columns_predict_writes_with_an_empty_log_prob(
    task_name, tmp_path, capsys
):
    task = get_task(task_name)
    points = task.sample_points(np.random.default_rng(2), 8)
    path = tmp_path / "one.txt"
    write_examples(path, [(points, None)])
    header, row = csv_rows(capsys, "solve", task_name, path)
    assert tuple(header) == CSV_COLUMNS and len(row) == len(header)
    cells = dict(zip(header, row, strict=True))
    assert cells["log_prob"] == "" and cells["names"] == "" and cells["valid"] == "true"


def test_eval_prints_rates_and_gaps_in_percent_and_json_keeps_fractions(named_cities, capsys):
    argv = ["eval", "tsp", str(named_cities), "--threads", "1", "-q"]
    assert main([*argv, "--json"]) == 0
    fractions = json.loads(capsys.readouterr().out)
    assert main(argv) == 0
    table = dict(line.split(None, 1) for line in capsys.readouterr().out.splitlines()[:5])
    assert table["mean_gap"] == f"{100 * fractions['mean_gap']:.2f}%"
    assert table["valid_rate"] == "100.00%" and fractions["valid_rate"] == 1.0
    assert table["mean_length"] == f"{fractions['mean_length']:.4f}"  # a length, not a rate


def test_score_tables_show_every_rate_in_percent():
    table = format_table("convex_hull", {"accuracy": 0.5, "area_coverage": 0.99971, "count": 4})
    assert table.splitlines()[1:] == [
        "accuracy       50.00%",
        "area_coverage  99.97%",
        "count          4",
    ]
    assert format_table("tsp", {"mean_gap": float("nan")}).endswith("mean_gap  —")
