"""Or-opt (``ptrnet.solvers.or_opt``) and ``--or-opt`` on every front end: a permutation no longer
than the start, no improving Or-opt or 2-opt move left (checked by brute force over every run,
place and direction), the same tours from the command line, the Python API and the page."""

import json

import numpy as np
import pytest
import torch
from shared_data import TSPLIB

import ptrnet
from ptrnet.cli.main import main
from ptrnet.searches.run import local_search
from ptrnet.solvers.or_opt import OR_OPT_RUNS, or_opt, two_opt_or_opt
from ptrnet.solvers.tsp import distance_matrix
from ptrnet.solvers.tsp_exact import cycle_cost
from ptrnet.solvers.tsp_heuristics import two_opt
from ptrnet.tasks.tsp import OR_OPT

torch.set_num_threads(1)


def or_opt_neighbours(tour: np.ndarray):
    """Every tour one Or-opt move away (brute force): each run of 1-3 cities taken out and put
    back, either way round, between any two other neighbouring cities."""
    n = len(tour)
    for run in OR_OPT_RUNS:
        if n < run + 3:
            continue
        for start in range(n):
            turned = np.roll(tour, -start)
            cities, rest = turned[:run], turned[run:]
            for where in range(len(rest) - 1):
                for piece in (cities, cities[::-1]):
                    yield np.concatenate([rest[: where + 1], piece, rest[where + 1 :]])


def two_opt_neighbours(tour: np.ndarray):
    n = len(tour)
    for i in range(n - 1):
        for j in range(i + 2, n):
            yield np.concatenate([tour[: i + 1], tour[i + 1 : j + 1][::-1], tour[j + 1 :]])


def best_gain(dist: np.ndarray, tour: np.ndarray, neighbours) -> float:
    before = cycle_cost(dist, tour)
    return max(before - cycle_cost(dist, other) for other in neighbours(tour))


def instances(count: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.random((int(rng.integers(5, 16)), 2)) * 50 for _ in range(count)]


def test_or_opt_leaves_no_shorter_tour_one_move_away():
    rng = np.random.default_rng(1)
    for points in instances(12):
        dist = distance_matrix(points)
        start = rng.permutation(len(points))
        found = or_opt(dist, start)
        assert sorted(found) == list(range(len(points)))
        assert cycle_cost(dist, found) <= cycle_cost(dist, start) + 1e-9
        assert best_gain(dist, found, or_opt_neighbours) <= 1e-9


def test_or_opt_with_too_few_cities_returns_the_tour():
    dist = distance_matrix(np.random.default_rng(2).random((3, 2)))
    assert or_opt(dist, np.array([2, 0, 1])).tolist() == [2, 0, 1]


def test_two_opt_or_opt_is_a_local_optimum_of_both_and_beats_two_opt_alone():
    rng = np.random.default_rng(3)
    shorter = 0
    for points in instances(30, seed=4):
        dist = distance_matrix(points)
        start = rng.permutation(len(points))
        both, alone = two_opt_or_opt(dist, start), two_opt(dist, start)
        assert sorted(both) == list(range(len(points)))
        assert best_gain(dist, both, or_opt_neighbours) <= 1e-9
        assert best_gain(dist, both, two_opt_neighbours) <= 1e-9
        assert cycle_cost(dist, both) <= cycle_cost(dist, alone) + 1e-9  # it starts from 2-opt's
        shorter += cycle_cost(dist, both) < cycle_cost(dist, alone) - 1e-9
    assert shorter >= 3  # Or-opt finds moves 2-opt cannot


def test_two_opt_tours_with_or_opt_keeps_closed_tours_from_the_same_city():
    rng = np.random.default_rng(5)
    points = instances(6, seed=6)
    tours = [np.append(order, order[0]) for order in (rng.permutation(len(p)) for p in points)]
    for pts, before, after in zip(points, tours, local_search(OR_OPT, points, tours), strict=True):
        assert after[0] == after[-1] == before[0]
        dist = distance_matrix(pts)
        assert best_gain(dist, after[:-1], or_opt_neighbours) <= 1e-9


def predicted(cli, path, model, *flags):
    status, out, err = cli("predict", "tsp", path, "--model", model, "-o", "-",
                           "--output-format", "json", "--threads", "1", *flags)  # fmt: skip
    assert status == 0, err
    return [json.loads(line) for line in out.splitlines()]


def test_predict_or_opt_is_no_longer_than_two_opt_on_each_tour(cli, tsp12_file, tiny_tsp_model):
    polished, both = (
        predicted(cli, tsp12_file, tiny_tsp_model, "--two-opt"),
        predicted(cli, tsp12_file, tiny_tsp_model, "--or-opt"),
    )
    assert predicted(cli, tsp12_file, tiny_tsp_model, "--two-opt", "--or-opt") == both
    for a, b in zip(polished, both, strict=True):
        assert "log_prob" not in b and b["cost"] <= a["cost"] + 1e-9
        assert b["sequence"][0] == a["sequence"][0] == b["sequence"][-1]


def test_eval_names_or_opt_on_point_files_and_tsplib(cli, tsp12_file, tiny_tsp_model, capsys):
    status, out, _ = cli(
        "eval", "tsp", tsp12_file, "--model", tiny_tsp_model, "--or-opt", "--threads", "1"
    )
    assert status == 0 and "then 2-opt and Or-opt (a search on tour lengths)" in out
    eil51 = str(TSPLIB / "eil51.tsp")
    assert (
        main(["eval", "tsp", eil51, "--model", tiny_tsp_model, "--or-opt", "--threads", "1"]) == 0
    )
    assert "then 2-opt and Or-opt on TSPLIB lengths" in capsys.readouterr().out


def test_tsplib_or_opt_is_no_longer_than_two_opt(tiny_tsp_model, capsys):
    def rows(*flags):
        args = [
            "eval",
            "tsp",
            str(TSPLIB / "eil51.tsp"),
            "--model",
            tiny_tsp_model,
            "--json",
            *flags,
        ]
        assert main([*args, "--threads", "1"]) == 0
        return json.loads(capsys.readouterr().out)["instances"]

    (polished,), (both,) = rows("--two-opt"), rows("--or-opt")
    assert polished["optimum"] <= both["length"] <= polished["length"]


def test_or_opt_is_refused_for_a_task_without_tours(cli, tmp_path):
    (tmp_path / "sort.txt").write_text("0.3 0.1 0.2\n")
    status, _, err = cli("predict", "sort", "sort.txt", "-o", "-", "--or-opt")
    assert status == 2 and "--or-opt: shortens tours, for task tsp, not sort" in err


def test_the_api_gives_the_command_lines_or_opt_tours(cli, tsp12_file, tiny_tsp_model):
    solver = ptrnet.load(tiny_tsp_model, task="tsp", device="cpu")
    points = [
        np.array(line.split(), dtype=float).reshape(-1, 2)
        for line in tsp12_file.read_text().splitlines()
    ]
    expected = [row["sequence"] for row in predicted(cli, tsp12_file, tiny_tsp_model, "--or-opt")]
    assert [r.sequence.tolist() for r in solver.solve(points, or_opt=True)] == expected
    with pytest.raises(ValueError, match="or_opt='yes': True or False"):
        solver.solve(points, or_opt="yes")
