"""Training the first choice that POMO forces (``learn_opening``): the later steps scored as
the forced scorer scores them, the opening term the exact expected advantage over the network's
own first choice, and a network that learns to open with the cheapest start from it alone."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from ptrnet.cli.main import main
from ptrnet.datasets.batching import collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.likelihood import masked_sequence_log_likelihood
from ptrnet.decoding.multistart import multistart_rows
from ptrnet.decoding.options import DecodeOptions
from ptrnet.inference import load_model
from ptrnet.runs.config import TrainConfig
from ptrnet.tasks import SizeRange, from_tokens, get_task
from ptrnet.training.baselines import make_baseline
from ptrnet.training.loop import build_optimizer, train_step
from ptrnet.training.losses import (
    greedy_advantage,
    opening_loss,
    reinforce_loss,
    sample_generator,
    sampled_rows,
    tokens_as_targets,
)
from tests.test_multistart_forced import pointer
from tests.test_multistart_forced import tight_instances as instances

torch.set_num_threads(1)
CVRP = get_task("cvrp")
SAMPLE = DecodeOptions("sample", constraints="task")


def pomo_config(**extra) -> TrainConfig:
    return TrainConfig(task="cvrp", sizes="6", steps=3, batch_size=4, objective="reinforce",
                       baseline="pomo", precision="fp32", threads=1, **extra)  # fmt: skip


def test_unforced_scoring_gives_the_forced_scores_after_the_first_step_and_a_first_choice():
    batch = collate(instances((4, 2), 3))  # 4 and 2 customers: the second repeats its starts
    model = pointer()
    sampler, scorer, copies = sampled_rows(model, model, CVRP, batch, 2, True)
    drawn = decode(sampler, CVRP, copies, SAMPLE, generator=torch.Generator().manual_seed(1))
    targets = tokens_as_targets(drawn.tokens)
    with torch.no_grad():
        forced = masked_sequence_log_likelihood(
            scorer, CVRP, copies.points, copies.lengths, targets
        )
        steps = masked_sequence_log_likelihood(
            scorer.model,
            CVRP,
            copies.points,
            copies.lengths,
            targets,
            per_step=True,
        )  # (8, T)
    torch.testing.assert_close(steps[:, 1:].sum(dim=1), forced)
    first = steps[:, 0].exp()  # pi(customer s) of each run's forced opening
    assert drawn.tokens[:, 0].tolist() == [2, 3, 4, 5, 2, 3, 2, 3]
    assert math.isclose(float(first[:4].sum()), 1.0, rel_tol=1e-5)  # every customer once
    assert math.isclose(float(first[4:6].sum()), 1.0, rel_tol=1e-5)  # two customers, twice
    torch.testing.assert_close(first[4:6], first[6:8])


def test_the_opening_loss_is_the_expected_advantage_and_counts_a_repeated_start_once():
    pi = torch.tensor([0.5, 0.3, 0.2, 0.6, 0.4, 0.6, 0.4])
    advantage = torch.tensor([1.0, -1.0, 2.0, 3.0, -2.0, 3.0, -2.0])
    openings = torch.tensor([1, 2, 3, 1, 2, 1, 2])  # instance 2 has two customers, in 4 runs
    with pytest.raises(RuntimeError):  # 7 rows are not whole instances of 2
        opening_loss(pi.log(), advantage, openings, 2)
    rows = torch.cat([pi[:3], torch.tensor([0.0]), pi[3:]])  # pad instance 1 to 4 runs ...
    opened = torch.cat([openings[:3], torch.tensor([3]), openings[3:]])  # ... repeating start 3
    gaps = torch.cat([advantage[:3], torch.tensor([2.0]), advantage[3:]])
    loss = opening_loss(rows.clamp(min=1e-30).log(), gaps, opened, 2)
    expected = ((0.5 * 1 - 0.3 * 1 + 0.2 * 2 / 2) + (0.6 * 3 - 0.4 * 2)) / 2
    assert math.isclose(float(loss), expected, rel_tol=1e-6)


def test_its_gradient_is_that_of_the_expected_cost_of_the_first_choice():
    logits = torch.tensor([[0.3, -1.0, 0.8, 0.1]], requires_grad=True)
    cost = torch.tensor([[4.0, 3.0, 5.0, 2.0]])
    logp = torch.log_softmax(logits, dim=1)
    advantage = cost - cost.mean()  # any baseline: sum_s grad pi(s) = 0
    opening_loss(logp.view(-1), advantage.view(-1), torch.arange(1, 5), 1).backward()
    expected = torch.autograd.grad((torch.softmax(logits, 1) * cost).sum(), logits)[0]
    torch.testing.assert_close(logits.grad, expected)


def test_a_network_learns_from_the_opening_loss_alone_to_open_with_the_cheapest_start():
    points = instances((5, 5), 7)
    batch = collate(points)
    model = pointer(2)
    with torch.no_grad():
        trace, width = multistart_rows(model, CVRP, batch, "task")  # a run from each customer
        untrained = decode(model, CVRP, batch, DecodeOptions(constraints="task")).tokens[:, 0]
    rows = batch.points.repeat_interleave(width, 0), batch.lengths.repeat_interleave(width)
    # A start's cost, made up: its customer's distance from the depot (the nearest is cheapest)
    cost = torch.tensor(np.array([np.hypot(*(p[1:, :2] - p[0, :2]).T) for p in points])).float()
    cheapest = (cost.argmin(dim=1) + 2).tolist()  # customer s (input s >= 1) is token s + 1
    advantage = (cost - cost.mean(dim=1, keepdim=True)).view(-1)
    targets = tokens_as_targets(trace.tokens)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    model.train()
    for _ in range(100):
        steps = masked_sequence_log_likelihood(model, CVRP, *rows, targets, per_step=True)
        loss = opening_loss(steps[:, 0], advantage, trace.tokens[:, 0], 2)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    assert untrained.tolist() != cheapest  # or the test proves nothing
    with torch.no_grad():
        greedy = decode(model, CVRP, batch, DecodeOptions(constraints="task"))
    assert greedy.tokens[:, 0].tolist() == cheapest


def test_pomo_training_with_the_opening_takes_finite_steps_and_adds_the_opening_term():
    cfg = pomo_config(learn_opening=True)
    model = pointer()
    baseline = make_baseline(cfg, model, CVRP)
    batch = collate(CVRP.generate(SizeRange(6, 6), 4, seed=5))
    plain, _ = reinforce_loss(model, CVRP, batch, 2, sample_generator(0, 9), baseline=baseline)
    both, _ = reinforce_loss(
        model, CVRP, batch, 2, sample_generator(0, 9), baseline=baseline, opening="sampled"
    )
    assert torch.isfinite(both) and not torch.isclose(plain, both)
    optimizer = build_optimizer(model, cfg)
    model.train()
    costs = [train_step(model, optimizer, batch, cfg, step, baseline=baseline) for step in range(3)]
    assert all(math.isfinite(c) and c > 0 for c in costs)


def test_greedy_opening_costs_are_each_starts_greedy_run_against_the_instances_mean():
    batch = collate(instances((4, 3), 6))  # 3 customers: start 1 repeated in the fourth row
    model = pointer(3)
    sampler, _, copies = sampled_rows(model, model, CVRP, batch, 2, True)
    advantage = greedy_advantage(model, sampler, CVRP, copies, 2)  # (8,)
    with torch.no_grad():
        trace, width = multistart_rows(model, CVRP, batch, "task")  # decode's own multistart
    for b, points in enumerate(instances((4, 3), 6)):
        rows = trace.tokens[b * width : (b + 1) * width]
        cost = [CVRP.sequence_cost(points, from_tokens(row)) for row in rows.numpy()]
        np.testing.assert_allclose(advantage[b * 4 : b * 4 + 4], np.array(cost) - np.mean(cost),
                                   rtol=1e-5, atol=1e-6)  # fmt: skip
    cfg = pomo_config(learn_opening=True, opening_rollouts="greedy")
    model.train()
    optimizer = build_optimizer(model, cfg)
    baseline = make_baseline(cfg, model, CVRP)
    assert math.isfinite(train_step(model, optimizer, batch, cfg, 0, baseline=baseline))


@pytest.mark.parametrize(
    "extra, problem",
    [
        (dict(task="tsp", sizes="6"), "on tsp"),
        (dict(baseline="samples"), "baseline 'samples'"),
        (dict(objective="likelihood"), "objective 'likelihood'"),
    ],
)
def test_learning_the_opening_needs_pomo_reinforce_and_a_first_input_kept_in_place(extra, problem):
    base = dict(task="cvrp", sizes="6", steps=3, objective="reinforce", baseline="pomo")
    with pytest.raises(ValueError, match=f"learn_opening .*{problem}"):
        TrainConfig(**{**base, **extra, "learn_opening": True})
    with pytest.raises(ValueError, match="opening_rollouts needs learn_opening"):
        TrainConfig(**base, opening_rollouts="greedy")
    with pytest.raises(ValueError, match="opening_rollouts"):
        TrainConfig(**base, learn_opening=True, opening_rollouts="best")


def test_ptrnet_train_takes_learn_opening_and_records_it(tmp_path):
    args = ["train", "cvrp", "--dry-run", "-n", "6", "--objective", "reinforce", "--baseline",
            "pomo", "--threads", "1", "-q"]  # fmt: skip
    on = ["--learn-opening", "--opening-rollouts", "greedy", "--out", str(tmp_path / "on")]
    assert main([*args, *on]) == 0
    train = load_model(tmp_path / "on", "cvrp").config.train
    assert train.learn_opening and train.opening_rollouts == "greedy"
    assert main([*args, "--out", str(tmp_path / "off")]) == 0
    assert not load_model(tmp_path / "off", "cvrp").config.train.learn_opening
