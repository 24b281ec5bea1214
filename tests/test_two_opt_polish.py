"""``--two-opt`` on any TSP file (``eval``, ``predict``) and
:func:`ptrnet.searches.run.local_search` with TSP's 2-opt: closed tours from the same city, never
longer, and a 2-opt local optimum by brute force."""

import json

import numpy as np
import pytest
import torch

from ptrnet.searches.run import local_search
from ptrnet.tasks.tsp import TWO_OPT

torch.set_num_threads(1)


def closed_length(points: np.ndarray, tour: np.ndarray) -> float:
    return float(np.linalg.norm(points[tour[1:]] - points[tour[:-1]], axis=1).sum())


def best_two_opt_gain(points: np.ndarray, tour: np.ndarray) -> float:
    """The largest length saved by any one reversal of tour[i+1..j] (brute force)."""
    cycle, n, best = tour[:-1], len(tour) - 1, 0.0
    for i in range(n - 1):
        for j in range(i + 2, n):
            turned = np.concatenate([cycle[: i + 1], cycle[i + 1 : j + 1][::-1], cycle[j + 1 :]])
            after = closed_length(points, np.append(turned, turned[0]))
            best = max(best, closed_length(points, tour) - after)
    return best


def test_two_opt_tours_are_closed_no_longer_and_locally_optimal():
    rng = np.random.default_rng(3)
    points = [rng.random((n, 2)) * 100 for n in (5, 9, 12, 12, 15)]  # any units
    tours = [np.append(order, order[0]) for order in (rng.permutation(len(p)) for p in points)]
    for pts, before, after in zip(points, tours, local_search(TWO_OPT, points, tours), strict=True):
        assert after[0] == after[-1] == before[0]
        assert sorted(after[:-1]) == list(range(len(pts)))
        assert closed_length(pts, after) <= closed_length(pts, before) + 1e-9
        assert best_two_opt_gain(pts, after) <= 1e-9


def test_two_opt_tours_refuses_an_open_tour():
    with pytest.raises(ValueError, match="instance 0: a closed tour of 4 cities expected"):
        local_search(TWO_OPT, [np.zeros((4, 2))], [np.arange(4)])


def test_predict_two_opt_shortens_each_tour_and_drops_its_likelihood(
    cli, tsp12_file, tiny_tsp_model
):
    def answers(*flags):
        status, out, _ = cli("predict", "tsp", tsp12_file, "--model", tiny_tsp_model, "-o", "-",
                             "--output-format", "json", *flags)  # fmt: skip
        assert status == 0
        return [json.loads(line) for line in out.splitlines()]

    plain, polished = answers(), answers("--two-opt")
    assert all(a["log_prob"] is not None for a in plain)
    for before, after in zip(plain, polished, strict=True):
        assert "log_prob" not in after and after["cost"] <= before["cost"] + 1e-9
    assert sum(a["cost"] for a in polished) < sum(a["cost"] for a in plain)  # an untrained model


def test_eval_two_opt_on_a_point_file_says_so(cli, tsp12_file, tiny_tsp_model):
    status, out, _ = cli(
        "eval", "tsp", tsp12_file, "--model", tiny_tsp_model, "--two-opt", "--threads", "1"
    )
    assert status == 0 and "then 2-opt (a search on tour lengths)" in out


def test_two_opt_is_refused_for_a_task_without_tours(cli, tmp_path):
    (tmp_path / "sort.txt").write_text("0.3 0.1 0.2\n")
    status, _, err = cli("predict", "sort", "sort.txt", "-o", "-", "--two-opt")
    assert status == 2 and "--two-opt: shortens tours, for task tsp, not sort" in err
