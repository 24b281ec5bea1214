"""Tour searches from the Python API (Solver.solve's improve, iterations, two_opt): the same
tours as ``ptrnet predict tsp --improve rrc --iterations K --two-opt`` for the same file and
seed, no log-likelihood after a search, and each option refused by name where it cannot run."""

import json

import numpy as np
import pytest
import torch

import ptrnet
from ptrnet.io.paper_format import read_examples
from ptrnet.solvers.tsp import tour_length
from ptrnet.tasks import get_task

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def tsp():
    return ptrnet.load("tsp", device="cpu")


@pytest.fixture
def instances(cli):
    """Three 20-city instances written to i.txt in the test's directory, and their points."""
    assert cli("generate", "tsp", "-n", "20", "--count", "3", "--seed", "4", "-o", "i.txt")[0] == 0
    return [ex.points for ex in read_examples("i.txt", get_task("tsp"))]


def cli_tours(cli, *options: str) -> list[list[int]]:
    base = ["predict", "tsp", "i.txt", "-o", "-", "--output-format", "json", "--threads", "1"]
    status, out, err = cli(*base, "-q", *options)
    assert status == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert all("log_prob" not in row for row in rows)
    return [row["sequence"] for row in rows]


def no_two_opt_move(points: np.ndarray, tour: np.ndarray) -> bool:
    """No 2-opt move (reverse tour[i+1..j]) shortens the closed tour by more than 1e-9."""
    cities = tour[:-1]
    n = len(cities)
    d = np.linalg.norm(points[:, None] - points[None], axis=2)
    for i in range(n - 1):
        for j in range(i + 2, n if i else n - 1):
            a, b, c, e = cities[i], cities[i + 1], cities[j], cities[(j + 1) % n]
            if d[a, c] + d[b, e] < d[a, b] + d[c, e] - 1e-9:
                return False
    return True


@pytest.mark.parametrize("seed", [0, 3])
def test_rrc_then_two_opt_gives_the_command_lines_tours(tsp, cli, instances, seed):
    expected = cli_tours(cli, "--improve", "rrc", "--iterations", "5", "--two-opt", "--seed", seed)
    results = tsp.solve(instances, improve="rrc", iterations=5, two_opt=True, seed=seed)
    assert [r.sequence.tolist() for r in results] == expected
    greedy = tsp.solve(instances)
    for points, result, plain in zip(instances, results, greedy, strict=True):
        assert result.valid and result.log_prob is None and result.probs is None
        assert sorted(result.sequence[:-1]) == list(range(20))
        assert result.cost == pytest.approx(tour_length(points, result.sequence[:-1]))
        assert result.cost <= plain.cost + 1e-9
        assert no_two_opt_move(points, result.sequence)


def test_each_search_alone_gives_the_command_lines_tours(tsp, cli, instances):
    rrc = tsp.solve(instances, improve="rrc", iterations=3, seed=1)
    assert [r.sequence.tolist() for r in rrc] == cli_tours(
        cli, "--improve", "rrc", "--iterations", "3", "--seed", "1"
    )
    polished = tsp.solve(instances[0], two_opt=True)  # one instance: one result
    assert polished.sequence.tolist() == cli_tours(cli, "--two-opt")[0]
    assert polished.log_prob is None and no_two_opt_move(instances[0], polished.sequence)


def test_without_a_search_the_decoders_score_stays(tsp, instances):
    result = tsp.solve(instances[0], improve="none", two_opt=False)
    assert result.log_prob is not None and np.isfinite(result.log_prob)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (dict(iterations=5), "iterations=5: iterations need improve='rrc'"),
        (dict(improve="rrc", iterations=0), "iterations=0: an integer from 1 to 1,000"),
        (dict(improve="rrc", iterations=-2), "iterations=-2: an integer from 1 to 1,000"),
        (dict(improve="rrc", iterations=2.5), "iterations=2.5: an integer from 1 to 1,000"),
        (dict(improve="lkh"), "improve='lkh': 'rrc' or 'none'"),
        (dict(two_opt="yes"), "two_opt='yes': True or False"),
        (dict(two_opt=True, return_probs=True), "return_probs: the distributions"),
    ],
)
def test_bad_search_options_are_named(tsp, options, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        tsp.solve(np.random.default_rng(0).random((8, 2)), **options)


def test_a_search_for_another_task_is_refused_by_name():
    sort = ptrnet.load("sort", device="cpu")
    with pytest.raises(ValueError, match="improve='rrc': rebuilds tours, for task tsp, not sort"):
        sort.solve([0.3, 0.1, 0.2], improve="rrc")
    with pytest.raises(ValueError, match="two_opt=True: shortens tours, for task tsp, not sort"):
        sort.solve([0.3, 0.1, 0.2], two_opt=True)
