"""DAgger training: the path solver, TSP completion and the relabelled batches, against brute
force and the greedy decoder."""

import itertools
from dataclasses import replace

import numpy as np
import pytest
import torch

from ptrnet.cli.main import main
from ptrnet.datasets.batching import IGNORE_INDEX
from ptrnet.decoding.decode import decode
from ptrnet.decoding.options import DecodeOptions
from ptrnet.inference import load_model
from ptrnet.model import ModelConfig, build_model
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.solvers.tsp import distance_matrix, path_between, solve_path, tour_length
from ptrnet.tasks import Stream, get_task
from ptrnet.training.dagger import choice_steps, dagger_batch
from ptrnet.training.data import TrainingData
from ptrnet.training.losses import sample_generator, tokens_as_targets

torch.set_num_threads(1)
TSP = get_task("tsp")
HEAVY = dict(encoder="transformer", encoder_layers=1, decoder="heavy", decoder_layers=1, heads=2)


def path_length(points, path):
    return float(np.linalg.norm(points[path[1:]] - points[path[:-1]], axis=1).sum())


def brute_force_path(points, first, last):
    middle = [i for i in range(len(points)) if i not in (first, last)]
    return min(
        path_length(points, np.array([first, *m, last])) for m in itertools.permutations(middle)
    )


@pytest.mark.parametrize("solver", ["auto", "exact", "held_karp", "near_exact", "local"])
def test_solve_path_is_a_shortest_path_between_its_two_ends(solver):
    rng = np.random.default_rng(3)
    for _ in range(40):
        n = int(rng.integers(2, 9))
        points = rng.random((n, 2))
        first, last = (int(i) for i in rng.choice(n, 2, replace=False))
        path = solve_path(points, first, last, solver)
        assert (path[0], path[-1]) == (first, last) and sorted(path) == list(range(n))
        # the integer solvers round distances to 1 / 40,000 of twice the largest
        assert path_length(points, path) <= brute_force_path(points, first, last) * (1 + 1e-3)


def test_solve_path_runs_past_the_exact_sizes():
    points = np.random.default_rng(0).random((60, 2))
    path = solve_path(points, 5, 17, "local")
    assert (path[0], path[-1]) == (5, 17) and sorted(path) == list(range(60))
    # no longer than the cycle through the same order, opened at the worst place
    assert path_length(points, path) < tour_length(points, path) + 1e-9


def test_path_between_opens_any_cycle_between_two_cities_at_bounded_cost():
    rng = np.random.default_rng(1)
    for _ in range(50):
        n = int(rng.integers(3, 12))
        points, cycle = rng.random((n, 2)), rng.permutation(n)
        first, last = (int(i) for i in rng.choice(n, 2, replace=False))
        path = path_between(cycle, first, last)
        assert (path[0], path[-1]) == (first, last) and sorted(path) == list(range(n))
        bound = tour_length(points, cycle) + distance_matrix(points).max()
        assert path_length(points, path) <= bound + 1e-12


def test_solve_path_refuses_bad_ends_and_sizes():
    points = np.random.default_rng(0).random((5, 2))
    for first, last in [(1, 1), (-1, 2), (0, 5)]:
        with pytest.raises(ValueError, match="path ends"):
            solve_path(points, first, last)
    with pytest.raises(ValueError, match="handles n <= 20"):
        solve_path(np.random.default_rng(0).random((20, 2)), 0, 1, "exact")  # 21 with the dummy


def test_tsp_completion_keeps_the_prefix_and_is_the_shortest_tour_that_does():
    rng = np.random.default_rng(2)
    for _ in range(60):
        n = int(rng.integers(4, 9))
        points = rng.random((n, 2))
        k = int(rng.integers(2, n + 1))
        prefix = np.concatenate([[0], rng.permutation(np.arange(1, n))])[:k]
        label = TSP.complete(points, prefix, "exact")
        assert TSP.is_valid(points, label) and label[-1] == 0
        assert label[:k].tolist() == prefix.tolist()
        rest = [i for i in range(n) if i not in prefix]
        best = min(tour_length(points, [*prefix, *m]) for m in itertools.permutations(rest))
        assert tour_length(points, label) <= best * (1 + 1e-3)


def test_tsp_completion_of_the_start_alone_is_the_label():
    points = np.random.default_rng(4).random((9, 2))
    for prefix in ([], [0]):
        assert TSP.complete(points, np.array(prefix, dtype=np.int64)).tolist() == (
            TSP.solve(points).tolist()
        )


@pytest.mark.parametrize("prefix", [[1, 2], [0, 0], [0, 9], [0, -1]])
def test_tsp_completion_refuses_a_prefix_no_tour_starts_with(prefix):
    with pytest.raises(ValueError, match="not a tour prefix from city 0 of 5 cities"):
        TSP.complete(np.random.default_rng(0).random((5, 2)), np.array(prefix))


def test_a_task_that_cannot_complete_refuses_dagger():
    with pytest.raises(NotImplementedError, match="sort cannot complete"):
        get_task("sort").complete(np.zeros((3, 1)), np.array([0]))
    with pytest.raises(ValueError, match=r"objective 'dagger' needs .*\(tsp\); sort cannot"):
        TrainConfig(task="sort", sizes="5", steps=1, objective="dagger")
    with pytest.raises(ValueError, match="dagger' needs n >= 3"):
        TrainConfig(task="tsp", sizes="2-9", steps=1, objective="dagger")


def test_choice_steps_are_the_steps_with_two_inputs_left_at_most_k_per_row():
    lengths = torch.tensor([9, 9, 7, 3])
    outputs = torch.ones(4, 11, dtype=torch.long)
    index = torch.arange(11)
    every = choice_steps(outputs, lengths, 0, torch.Generator().manual_seed(0))
    assert torch.equal(every, (index >= 1) & (index <= lengths[:, None] - 2))
    for shared in (False, True):
        for seed in range(6):
            draw = choice_steps(outputs, lengths, 3, torch.Generator().manual_seed(seed), shared)
            assert not (draw & ~every).any()
            assert draw.sum(dim=1).tolist()[:2] == [3, 3] and int(draw[3].sum()) <= 1
            if shared:  # the same distances from each row's last choice
                far = [
                    {int(lengths[b]) - 2 - t for t in row.nonzero()[:, 0].tolist()}
                    for b, row in enumerate(draw)
                ]
                assert far[0] == far[1] and far[2] <= far[0] and far[3] <= far[0]
            else:  # a row with fewer choices than k takes them all
                assert int(draw[2].sum()) == 3 and int(draw[3].sum()) == 1


def dagger_config(**changes):
    base = dict(task="tsp", sizes="6-9", steps=4, batch_size=6, val_count=8, val_every=2)
    return TrainConfig(**{**base, "objective": "dagger", "threads": 1, **changes})


def test_dagger_batches_feed_the_models_greedy_tours_and_score_the_experts_next_move():
    torch.manual_seed(0)
    model = build_model(ModelConfig(input_dim=2, hidden=16, **HEAVY)).eval()
    cfg = dagger_config(label_steps=3)
    batch = TrainingData(TSP, cfg, []).batch(0)
    assert batch.targets is None  # dagger labels its own batches
    greedy = tokens_as_targets(decode(model, TSP, batch, DecodeOptions()).tokens)
    drawn_steps = set()
    for step in range(4):
        drawn = dagger_batch(
            model, TSP, batch, cfg, sample_generator(cfg.seed, step, stream=Stream.DAGGER)
        )
        assert torch.equal(drawn.batch.points, batch.points)
        assert torch.equal(drawn.batch.targets, greedy)  # the model's own states, as inputs
        assert torch.equal(drawn.labels != IGNORE_INDEX, drawn.active)
        for b, n in enumerate(batch.lengths.tolist()):
            points = batch.points[b, :n].double().numpy()
            steps = drawn.active[b].nonzero()[:, 0].tolist()
            assert len(steps) == 3 and all(1 <= t <= n - 2 for t in steps)
            for t in steps:  # the first move of the shortest tour from the model's prefix
                prefix = greedy[b, :t].numpy() - 1
                rest = [i for i in range(n) if i not in prefix]
                best = min(
                    itertools.permutations(rest),
                    key=lambda m, p=prefix: tour_length(points, [*p, *m]),
                )
                move = int(drawn.labels[b, t]) - 1
                shortest = tour_length(points, [*prefix, *best])
                via = TSP.complete(points, np.append(prefix, move), "exact")
                assert tour_length(points, via) <= shortest * (1 + 1e-3)
                drawn_steps.add(t)
    assert len(drawn_steps) > 3  # the drawn steps move from step to step


def test_a_dagger_run_trains_validates_and_loads(tmp_path):
    from ptrnet.training.loop import train

    cfg = dagger_config(label_steps=2, shared_label_steps=True, bucket=True)
    result = train(RunConfig(ModelConfig(input_dim=2, hidden=16, **HEAVY), cfg), tmp_path / "run")
    assert result.step == 4 and result.best["metrics"]["valid_rate"] == 1.0
    lstm = replace(cfg, label_steps=0, shared_label_steps=False)  # any model can take it
    result = train(RunConfig(ModelConfig(input_dim=2, hidden=16), lstm), tmp_path / "lstm")
    assert result.step == 4


def test_ptrnet_train_takes_the_dagger_objective(tmp_path):
    out = tmp_path / "run"
    args = ["train", "tsp", "--dry-run", "--decoder", "heavy", "--heads", "2", "-q"]
    extra = ["--objective", "dagger", "--label-steps", "2", "--threads", "1"]
    assert main([*args, *extra, "--out", str(out)]) == 0
    assert load_model(out, "tsp").config.train.objective == "dagger"
