"""REINFORCE baselines (samples, ema, rollout, pomo): their values on hand cases, the rollout
update rule, the objective's gradient against the exact policy gradient, and short runs that
lower the tour length."""

from dataclasses import replace

import numpy as np
import pytest
import torch
from test_reinforce import exact_expected_length, flat_grad

from ptrnet.datasets.batching import collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.options import DecodeOptions
from ptrnet.model import ModelConfig, build_model
from ptrnet.runs.config import TrainConfig
from ptrnet.solvers.tsp import tour_length
from ptrnet.tasks import SizeRange, get_task
from ptrnet.training import baselines
from ptrnet.training.baselines import (
    EmaBaseline,
    PomoBaseline,
    RolloutBaseline,
    make_baseline,
    rollout_improved,
)
from ptrnet.training.loop import build_optimizer, train_step
from ptrnet.training.losses import reinforce_loss, sample_generator

torch.set_num_threads(1)

TSP = get_task("tsp")


def tiny_model(seed=0, hidden=16, **kw):
    torch.manual_seed(seed)
    return build_model(ModelConfig(input_dim=2, hidden=hidden, **kw))


def rl_config(**changes):
    base = dict(task="tsp", sizes="5", steps=4, batch_size=8, val_count=8, threads=1)
    base.update(objective="reinforce", rl_samples=4, precision="fp32", baseline_count=16)
    return TrainConfig(**{**base, **changes})


def greedy_lengths(model, points):
    model.eval()
    found = decode(model, TSP, collate(points), DecodeOptions("greedy"))
    return np.array([tour_length(p, s) for p, s in zip(points, found.sequences, strict=True)])


# --- values on hand cases ---


def test_ema_baseline_averages_the_batch_means_current_batch_included():
    ema = EmaBaseline(0.8)
    first = ema.values(torch.tensor([[9.0, 11.0], [10.0, 10.0]]), None)  # mean 10
    assert torch.equal(first, torch.full((2, 2), 10.0))
    second = ema.values(torch.tensor([[5.0, 5.0]]), None)  # 0.8 * 10 + 0.2 * 5
    assert torch.allclose(second, torch.full((1, 2), 9.0))
    third = ema.values(torch.tensor([[0.0]]), None)  # 0.8 * 9
    assert third.item() == pytest.approx(7.2)


def test_pomo_baseline_is_the_mean_over_the_instances_starts():
    cost = torch.tensor([[1.0, 2.0, 6.0], [4.0, 4.0, 4.0]])
    want = torch.tensor([[3.0, 3.0, 3.0], [4.0, 4.0, 4.0]])
    assert torch.equal(PomoBaseline().values(cost, None), want)
    assert PomoBaseline.multistart and not EmaBaseline.multistart


def test_rollout_baseline_is_the_frozen_copys_greedy_tour_length():
    model = tiny_model(seed=1)
    rollout = RolloutBaseline(model, TSP, rl_config())
    points = TSP.generate(SizeRange.parse("4-7"), 5, seed=2)
    value = rollout.values(torch.zeros(5, 3), collate(points))
    assert value.shape == (5, 3) and torch.equal(value[:, 0], value[:, 2])
    np.testing.assert_allclose(value[:, 0].numpy(), greedy_lengths(model, points), rtol=1e-5)
    with torch.no_grad():  # the copy is frozen: training the policy does not move it
        next(model.parameters()).add_(1.0)
    again = rollout.values(torch.zeros(5, 3), collate(points))
    assert torch.equal(again, value)


# --- the rollout update rule ---


def test_rollout_improved_needs_a_lower_mean_and_a_significant_paired_test():
    frozen = np.array([5.0, 6.0, 7.0, 5.5, 6.5, 6.0])
    assert rollout_improved(frozen - [1.0, 1.2, 0.8, 1.1, 0.9, 1.0], frozen)  # t = -24
    assert not rollout_improved(frozen + 0.5, frozen)  # worse
    assert not rollout_improved(frozen, frozen)  # equal
    noisy = frozen + [-1.0, 1.5, -1.0, 1.0, -1.0, -0.2]  # mean -0.117, t = -0.24, p = 0.41
    assert not rollout_improved(noisy, frozen)
    assert rollout_improved(frozen - 0.1, frozen)  # every instance better by the same amount


def test_rollout_copy_is_replaced_only_when_the_rule_says_and_only_on_schedule(monkeypatch):
    model = tiny_model(seed=1)
    rollout = RolloutBaseline(model, TSP, rl_config(baseline_every=3))
    first_set = [p.copy() for p in rollout.points]
    rollout.after_step(model, 2)  # on schedule, but the policy is the copy: no improvement
    assert rollout.updates == 0
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05)
    monkeypatch.setattr(baselines, "rollout_improved", lambda policy, frozen: True)
    rollout.after_step(model, 3)  # off schedule (steps 2, 5, 8, ...)
    assert rollout.updates == 0
    rollout.after_step(model, 5)
    assert rollout.updates == 1
    for a, b in zip(rollout.frozen.parameters(), model.parameters(), strict=True):
        assert torch.equal(a, b) and a is not b and not a.requires_grad
    assert not all(np.array_equal(a, b) for a, b in zip(first_set, rollout.points, strict=True))


def test_baseline_options_are_validated():
    with pytest.raises(ValueError, match="unknown baseline 'critic'"):
        rl_config(baseline="critic")
    with pytest.raises(ValueError, match="baseline_beta must be in"):
        rl_config(baseline="ema", baseline_beta=1.0)
    with pytest.raises(ValueError, match="baseline_every must be a positive integer"):
        rl_config(baseline_every=0)
    assert rl_config().baseline == "samples"  # a config saved before the choice existed


# --- the objective's gradient ---


def sharp_model(seed=2):
    model = tiny_model(seed=seed)
    with torch.no_grad():  # a less uniform policy than the initial one
        for q in model.parameters():
            q.mul_(10)
    return model


@pytest.mark.parametrize("name", ["ema", "rollout"])
def test_ema_and_rollout_give_the_exact_policy_gradient_in_expectation(name):
    """Neither baseline depends on the sample it is compared with (ema: 1 / (B K) of it), so
    the estimate points along the exact gradient of the expected length (n = 5, 4! tours)."""
    rng = np.random.default_rng(3)
    instances = [rng.random((5, 2)) for _ in range(4)]
    model = sharp_model()
    g_exact = flat_grad(
        model, torch.stack([exact_expected_length(model, p) for p in instances]).mean()
    )
    baseline = make_baseline(rl_config(baseline=name), model, TSP)
    loss, _ = reinforce_loss(
        model, TSP, collate(instances), 2048, sample_generator(0, 0), baseline=baseline
    )
    g_estimate = flat_grad(model, loss)
    assert torch.nn.functional.cosine_similarity(g_exact, g_estimate, dim=0) > 0.95
    assert float(g_estimate.norm() / g_exact.norm()) == pytest.approx(1.0, abs=0.15)


def test_pomo_gradient_is_the_exact_gradient_over_starts_scaled_by_one_minus_one_over_n():
    """POMO samples one tour per start s (the instance read from city s) and compares it with
    the mean of all n starts, its own included, so the estimate's expectation is (1 - 1/n) times
    the gradient of the mean over starts of E_s[length] (n = 5: 0.8)."""
    rng = np.random.default_rng(3)
    instances = [rng.random((5, 2)) for _ in range(3)]
    model = sharp_model()
    rotated = [np.roll(p, -s, axis=0) for p in instances for s in range(5)]
    g_exact = flat_grad(
        model, torch.stack([exact_expected_length(model, p) for p in rotated]).mean()
    )
    copies = collate([p for p in instances for _ in range(600)])
    loss, _ = reinforce_loss(model, TSP, copies, 2, sample_generator(0, 0), baseline=PomoBaseline())
    g_estimate = flat_grad(model, loss)
    assert torch.nn.functional.cosine_similarity(g_exact, g_estimate, dim=0) > 0.95
    assert float(g_estimate.norm() / g_exact.norm()) == pytest.approx(0.8, abs=0.12)


# --- a few steps lower the cost ---


@pytest.mark.parametrize("name", ["samples", "ema", "rollout", "pomo"])
def test_a_few_steps_with_each_baseline_shorten_the_greedy_tours(name):
    """40 steps on 32 fixed n = 8 instances: the greedy tours get shorter (loose bound)."""
    cfg = rl_config(sizes="8", baseline=name, lr=3e-3, baseline_every=10, rl_samples=8)
    points = TSP.generate(SizeRange.parse("8"), 32, seed=9)
    model = tiny_model(seed=0, hidden=32, init="default")
    before = greedy_lengths(model, points).mean()
    optimizer = build_optimizer(model, cfg)
    baseline = make_baseline(cfg, model, TSP)
    batch = collate(points)
    model.train()
    for step in range(40):
        train_step(model, optimizer, batch, cfg, step, baseline=baseline)
    after = greedy_lengths(model, points).mean()
    assert after < before - 0.1, (before, after)


# --- any task with a cost ---


@pytest.mark.parametrize("name", ["samples", "pomo"])
def test_reinforce_lowers_the_cost_of_a_task_it_knows_only_by_its_cost(name):
    """Sort, whose cost (the share of output pairs out of order) is all REINFORCE reads."""
    task = get_task("sort")
    points = task.generate(SizeRange.parse("6"), 32, seed=1)
    batch = collate(points)
    torch.manual_seed(0)
    model = build_model(ModelConfig(input_dim=1, hidden=32, init="default"))
    cfg = TrainConfig(task="sort", sizes="6", steps=1, lr=3e-3, precision="fp32")

    def greedy_cost():
        model.eval()
        found = decode(model, task, batch, DecodeOptions("greedy"))
        return float(task.batch_cost(batch.points, found.tokens, batch.lengths).mean())

    before = greedy_cost()
    optimizer = build_optimizer(model, cfg)
    baseline = make_baseline(replace(cfg, baseline=name), model, task)
    model.train()
    for step in range(40):
        optimizer.zero_grad()
        loss, _ = reinforce_loss(
            model, task, batch, 8, sample_generator(0, step), baseline=baseline
        )
        loss.backward()
        optimizer.step()
    after = greedy_cost()
    assert after < before - 0.1, (before, after)
