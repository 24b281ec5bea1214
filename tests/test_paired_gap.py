"""benchmarks/paired_gap.py: two models' greedy gaps on the same instances, paired."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptrnet
from benchmarks.paired_gap import main, paired
from ptrnet.inference import bundled_model_dir
from ptrnet.io.paper_format import write_examples
from ptrnet.solvers.cvrp import sample_instance
from ptrnet.solvers.tsp import tour_length
from ptrnet.tasks import get_task
from ptrnet.tasks.cvrp import instance_rows

HEAVY = Path(bundled_model_dir("tsp"), "heavy10-30", "best.safetensors")
OTHER = Path(bundled_model_dir("tsp"), "heavy20-100", "best.safetensors")


def printed_gaps(out: str) -> list[float]:
    """The mean gaps of A and B, in percent, as ``main`` printed them on one line."""
    return [float(out.split(f" {m} ")[1].split("%")[0]) for m in ("A", "B")]


def test_paired_takes_the_mean_and_standard_error_of_the_differences():
    result = paired(np.array([0.01, 0.02, 0.03]), np.array([0.00, 0.02, 0.01]))
    assert (result.count, result.gap_a, result.gap_b) == (3, pytest.approx(0.02), 0.01)
    differences = np.array([0.01, 0.0, 0.02])
    assert result.diff == pytest.approx(differences.mean())
    assert result.stderr == pytest.approx(differences.std(ddof=1) / np.sqrt(3))
    assert np.isnan(paired(np.array([0.1]), np.array([0.0])).stderr)


@pytest.fixture
def exact_file(tmp_path):
    rng = np.random.default_rng(5)
    points = [rng.random((12, 2)) for _ in range(6)]
    path = tmp_path / "tsp12.txt"
    tours = [get_task("tsp").solve(p, "exact") for p in points]
    write_examples(path, zip(points, tours, strict=True))
    return path, points, tours


def test_one_model_against_itself_differs_by_nothing(exact_file, capsys):
    path, _, _ = exact_file
    assert main([str(HEAVY), str(HEAVY), str(path)]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"{path}: 6 instances, A ") and "A - B +0.00% +- 0.00%" in line


def test_the_gaps_are_each_models_greedy_tours_against_the_exact_ones(exact_file, capsys):
    path, points, tours = exact_file
    assert main([str(HEAVY), str(OTHER), str(path)]) == 0
    printed = printed_gaps(capsys.readouterr().out)
    for model, shown in zip((HEAVY, OTHER), printed, strict=True):
        solver = ptrnet.load(str(model), task="tsp")
        gaps = [
            tour_length(p, solver.solve(p).sequence) / tour_length(p, t) - 1
            for p, t in zip(points, tours, strict=True)
        ]
        assert min(gaps) >= -1e-9  # none beats the optimum
        assert shown == pytest.approx(100 * np.mean(gaps), abs=0.006)  # printed to 0.01%


def test_a_file_without_reference_tours_is_a_one_line_error(tmp_path, capsys):
    path = tmp_path / "bare.txt"
    path.write_text("0.1 0.2 0.3 0.4 0.5 0.9\n")
    assert main([str(HEAVY), str(HEAVY), str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"paired_gap: error: {path}:1: ") and err.count("\n") == 1


def test_with_task_cvrp_the_gaps_are_each_models_route_lengths_against_the_exact_ones(
    tmp_path, capsys
):
    """The CVRP folder's two models (the measurement behind its size route): each printed gap
    is the mean of the model's greedy route lengths (the API's answers) over the exact ones."""
    cvrp = get_task("cvrp")
    rng = np.random.default_rng(3)
    points = [instance_rows(*sample_instance(rng, 8)) for _ in range(5)]
    optima = [cvrp.solve(p, "exact") for p in points]
    path = tmp_path / "cvrp8.txt"
    write_examples(path, zip(points, optima, strict=True))
    models = [
        Path(bundled_model_dir("cvrp"), *parts)
        for parts in (["best.safetensors"], ["n50", "best.safetensors"])
    ]
    assert main(["--task", "cvrp", *map(str, models), str(path)]) == 0
    printed = printed_gaps(capsys.readouterr().out)
    for model, shown in zip(models, printed, strict=True):
        solver = ptrnet.load(str(model), task="cvrp")
        gaps = [
            cvrp.sequence_cost(p, solver.solve(p).sequence) / cvrp.sequence_cost(p, best) - 1
            for p, best in zip(points, optima, strict=True)
        ]
        assert min(gaps) >= -1e-9  # none beats the optimum
        assert shown == pytest.approx(100 * np.mean(gaps), abs=0.006)  # printed to 0.01%
