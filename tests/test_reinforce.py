"""REINFORCE fine-tuning (objective "reinforce"): costs, baselines, scores and the gradient's
direction, each against an independent computation."""

import itertools
from dataclasses import replace

import numpy as np
import pytest
import torch

from ptrnet.datasets.batching import IGNORE_INDEX, Batch, collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.likelihood import masked_sequence_log_likelihood
from ptrnet.decoding.options import DecodeOptions
from ptrnet.model import ModelConfig, build_model
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.solvers.tsp import tour_length
from ptrnet.tasks import SizeRange, get_task
from ptrnet.training.baselines import leave_one_out_baseline
from ptrnet.training.data import TrainingData
from ptrnet.training.losses import (
    reinforce_loss,
    sample_generator,
    tokens_as_targets,
)

TSP = get_task("tsp")


def tiny_model(hidden=16, seed=0):
    torch.manual_seed(seed)
    return build_model(ModelConfig(input_dim=2, hidden=hidden))


def rl_config(**changes):
    base = dict(task="tsp", sizes="4-7", steps=4, batch_size=8, val_count=8, threads=1)
    base.update(objective="reinforce", rl_samples=4, precision="fp32")
    return TrainConfig(**{**base, **changes})


def test_batch_cost_is_the_closed_tour_length_of_every_padded_row():
    rng = np.random.default_rng(0)
    instances = [rng.random((n, 2)) for n in (2, 3, 5, 8, 8, 13)]
    tours = [np.append(np.append(0, 1 + rng.permutation(len(p) - 1)), 0) for p in instances]
    batch = collate(instances, tours)
    tokens = batch.targets.clamp(min=0)  # pads past the end token read as end tokens
    cost = TSP.batch_cost(batch.points.double(), tokens, batch.lengths)
    expected = [tour_length(p, t) for p, t in zip(instances, tours, strict=True)]
    np.testing.assert_allclose(cost.numpy(), expected, rtol=1e-6)


def test_a_task_without_a_cost_refuses_reinforce():
    assert not get_task("delaunay").has_cost
    with pytest.raises(ValueError, match="needs a task with a cost"):
        TrainConfig(task="delaunay", sizes="5", steps=1, objective="reinforce")
    with pytest.raises(ValueError, match="rl_samples must be at least 2"):
        rl_config(rl_samples=1)
    with pytest.raises(ValueError, match="unknown objective"):
        rl_config(objective="ppo")


def test_leave_one_out_baseline_is_the_mean_of_the_other_samples():
    cost = torch.tensor([[1.0, 2.0, 6.0], [3.0, 3.0, 3.0]])
    expected = torch.tensor([[4.0, 3.5, 1.5], [3.0, 3.0, 3.0]])
    assert torch.allclose(leave_one_out_baseline(cost), expected)


def test_tokens_after_the_first_end_token_are_ignored():
    tokens = torch.tensor([[1, 3, 2, 1, 0, 0, 0], [1, 2, 1, 0, 0, 0, 0]])
    targets = tokens_as_targets(tokens)
    i = IGNORE_INDEX
    assert targets.tolist() == [[1, 3, 2, 1, 0, i, i], [1, 2, 1, 0, i, i, i]]


def test_rescored_samples_match_the_sampler_log_likelihood():
    """The teacher-forced, rule-masked score of each sampled tour equals the log-probability
    the constrained sampler accumulated while drawing it."""
    model = tiny_model().eval()
    points = TSP.generate(SizeRange.parse("3-9"), 24, seed=1)
    batch = collate(points)
    drawn = decode(
        model,
        TSP,
        batch,
        DecodeOptions("sample", constraints="task"),
        generator=sample_generator(0, 0),
    )
    scored = Batch(batch.points, batch.lengths, tokens_as_targets(drawn.tokens))
    with torch.no_grad():
        logp = sequence_log_likelihood(model, scored, TSP)
    assert torch.allclose(logp, drawn.log_prob, atol=1e-5)
    assert all(TSP.is_valid(p, s) for p, s in zip(points, drawn.sequences, strict=True))


def exact_expected_length(model, points):
    """E[tour length] under the model's constrained distribution, by enumerating every tour
    (differentiable)."""
    n = len(points)
    tours = [np.array([0, *rest, 0]) for rest in itertools.permutations(range(1, n))]
    batch = collate([points] * len(tours), tours)
    p = sequence_log_likelihood(model, batch, TSP).exp()
    lengths = torch.tensor([tour_length(points, t) for t in tours], dtype=p.dtype)
    assert (
        abs(float(p.detach().sum()) - 1.0) < 1e-4
    )  # the enumeration covers the whole distribution
    return (p * lengths).sum()


def flat_grad(model, loss):
    model.zero_grad()
    loss.backward()
    return torch.cat([q.grad.flatten() for q in model.parameters() if q.grad is not None])


def test_the_reinforce_gradient_estimates_the_exact_policy_gradient():
    """Against the gradient of the exact expected tour length (all 4! tours of n = 5 enumerated):
    the estimator is unbiased, so with many samples it points the same way."""
    rng = np.random.default_rng(3)
    instances = [rng.random((5, 2)) for _ in range(4)]
    model = tiny_model(seed=2)
    with torch.no_grad():  # a less uniform policy than the initial one
        for q in model.parameters():
            q.mul_(10)
    exact = torch.stack([exact_expected_length(model, p) for p in instances]).mean()
    g_exact = flat_grad(model, exact)
    loss, _ = reinforce_loss(model, TSP, collate(instances), 2048, sample_generator(0, 0))
    g_estimate = flat_grad(model, loss)
    cosine = torch.nn.functional.cosine_similarity(g_exact, g_estimate, dim=0)
    assert cosine > 0.95  # measured 0.996; a flipped sign gives about -1
    assert float(g_estimate.norm() / g_exact.norm()) == pytest.approx(1.0, abs=0.15)


def sequence_log_likelihood(model, batch, task):
    return masked_sequence_log_likelihood(model, task, batch.points, batch.lengths, batch.targets)


def test_reinforce_loss_reports_the_mean_sampled_cost():
    model = tiny_model()
    points = TSP.generate(SizeRange.parse("5"), 6, seed=4)
    loss, mean_cost = reinforce_loss(model, TSP, collate(points), 3, sample_generator(0, 7))
    assert loss.requires_grad and model.training
    repeated = collate([p for p in points for _ in range(3)])
    drawn = decode(
        model,
        TSP,
        repeated,
        DecodeOptions("sample", constraints="task"),
        generator=sample_generator(0, 7),
    )
    lengths = [tour_length(points[i // 3], s) for i, s in enumerate(drawn.sequences)]
    assert mean_cost == pytest.approx(np.mean(lengths), rel=1e-5)


def test_reinforce_batches_carry_the_same_instances_without_labels():
    cfg = rl_config(bucket=True, bucket_pool=2)
    unlabelled = TrainingData(TSP, cfg, []).batch(3)
    labelled = TrainingData(TSP, replace(cfg, objective="likelihood"), []).batch(3)
    assert unlabelled.targets is None and labelled.targets is not None
    assert torch.equal(unlabelled.points, labelled.points)


@pytest.mark.parametrize("name", ["tsp", "sort", "convex_hull"])
def test_a_reinforce_run_trains_validates_and_keeps_the_best(tmp_path, name):
    """Every task with a cost trains through the same loop, loss and baseline code."""
    from ptrnet.training.loop import train

    task = get_task(name)
    cfg = rl_config(task=name, sizes="4-7", val_every=2, baseline="ema")
    config = RunConfig(ModelConfig(input_dim=task.dim, hidden=16), cfg)
    result = train(config, tmp_path / "run", progress=False)
    assert result.step == 4 and result.best["metric"] == task.validation_metric
    if name == "tsp":
        assert result.best["metrics"]["valid_rate"] == 1.0
