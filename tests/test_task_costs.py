"""The costs of sort and convex hull (REINFORCE's training signal), each against a brute-force
oracle over every valid output of small instances, and REINFORCE on sort from scratch."""

import itertools
import math

import numpy as np
import pytest
import torch
from scipy import stats
from test_reinforce import flat_grad

from ptrnet.datasets.batching import collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.likelihood import masked_sequence_log_likelihood
from ptrnet.decoding.options import DecodeOptionError, DecodeOptions
from ptrnet.model import ModelConfig, build_model
from ptrnet.runs.config import TrainConfig
from ptrnet.tasks import POINT_TASKS, SizeRange, Task, get_task
from ptrnet.training.baselines import make_baseline
from ptrnet.training.losses import reinforce_loss, sample_generator
from ptrnet.training.steps import build_optimizer, train_step

torch.set_num_threads(1)
SORT, HULL = get_task("sort"), get_task("convex_hull")


# --- sort: the normalised Kendall tau distance ---


def test_sort_cost_is_the_kendall_distance_of_every_permutation():
    """Against scipy's Kendall tau over all 5! outputs: cost = (1 - tau) / 2 for distinct
    values, so 0 exactly at the sorted label and 1 at the descending order."""
    points = np.random.default_rng(0).random((5, 1))
    label = SORT.solve(points)
    for perm in itertools.permutations(range(5)):
        seq = np.array(perm)
        tau = stats.kendalltau(np.arange(5), points[seq, 0]).statistic
        cost = SORT.sequence_cost(points, seq)
        assert cost == pytest.approx((1 - tau) / 2)
        assert (cost == 0) == np.array_equal(seq, label)
    assert SORT.sequence_cost(points, label[::-1]) == 1.0


def test_sort_cost_ignores_the_order_of_equal_values():
    points = np.array([[0.5], [0.2], [0.5], [0.2]])
    assert SORT.sequence_cost(points, np.array([3, 1, 2, 0])) == 0.0
    assert SORT.sequence_cost(points, np.array([0, 1, 2, 3])) == pytest.approx(3 / 6)
    assert SORT.sequence_cost(np.array([[0.3]]), np.array([0])) == 0.0


@pytest.mark.parametrize("task", [SORT, HULL], ids=lambda t: t.name)
def test_an_output_that_is_not_valid_costs_infinity(task):
    points = task.generate(SizeRange(6, 6), 1, seed=2)[0]
    assert task.sequence_cost(points, np.array([0, 1, 1, 0])) == math.inf


def padded_outputs(task, rng, count=12):
    """Random valid outputs of instances of mixed sizes, collated with padding."""
    points = task.generate(SizeRange(3, 9), count, seed=int(rng.integers(1000)))
    seqs = []
    for p in points:
        if task is SORT:
            seqs.append(rng.permutation(len(p)))
        else:
            cycle = rng.permutation(len(p))[: rng.integers(3, len(p) + 1)]
            seqs.append(np.append(cycle, cycle[0]))
    return points, seqs


@pytest.mark.parametrize("task", [SORT, HULL], ids=lambda t: t.name)
def test_batch_cost_is_the_sequence_cost_of_every_padded_row(task):
    points, seqs = padded_outputs(task, np.random.default_rng(5))
    batch = collate(points, seqs)
    tokens = batch.targets.clamp(min=0)  # pads past the end token read as end tokens
    cost = task.batch_cost(batch.points.double(), tokens, batch.lengths)
    expected = [task.sequence_cost(p, s) for p, s in zip(points, seqs, strict=True)]
    np.testing.assert_allclose(cost.numpy(), expected, rtol=1e-12)
    # The row-by-row default every task inherits gives the same (sort overrides it).
    generic = Task.batch_cost(task, batch.points.double(), tokens, batch.lengths)
    np.testing.assert_allclose(generic.numpy(), expected, rtol=1e-12)


# --- convex hull: broken hull edges plus the start ---


def brute_force_hull_edges(points):
    """The counter-clockwise hull's directed edges a -> b, without a hull solver: every other
    point lies to the left of a -> b, or on the segment between them."""
    edges = set()
    for a, b in itertools.permutations(range(len(points)), 2):
        d = points[b] - points[a]
        ok = True
        for p in range(len(points)):
            v = points[p] - points[a]
            cross = d[0] * v[1] - d[1] * v[0]
            inside = 0 <= v @ d <= d @ d
            ok &= cross > 0 or (cross == 0 and inside)
        if ok:
            edges.add((a, b))
    return edges


def every_closed_cycle(n):
    """Every valid hull output for n points: 3..n distinct vertices, closed."""
    for m in range(3, n + 1):
        for cycle in itertools.permutations(range(n), m):
            yield np.array([*cycle, cycle[0]])


SQUARE_AND_CENTRE = np.array([[0.1, 0.1], [0.9, 0.1], [0.5, 0.5], [0.9, 0.9], [0.1, 0.9]])


@pytest.mark.parametrize("instance", range(4))
def test_hull_cost_against_brute_force_over_every_output(instance):
    """Every closed cycle of 5-6 points: the cost equals the formula on brute-force hull edges
    and is 0 exactly at the label, the unique minimum."""
    rng = np.random.default_rng(instance)
    points = SQUARE_AND_CENTRE if instance == 0 else rng.random((4 + instance % 3, 2))
    edges = brute_force_hull_edges(points)
    label = HULL.solve(points)
    h, start = len(edges), min(a for a, _ in edges)
    for seq in every_closed_cycle(len(points)):
        cycle = seq[:-1]
        found = sum((a, b) in edges for a, b in zip(cycle, np.roll(cycle, -1), strict=True))
        size = max(len(cycle), h)
        expected = (size - found + (cycle[0] != start)) / (size + 1)
        cost = HULL.sequence_cost(points, seq)
        assert cost == pytest.approx(expected)
        assert (cost == 0) == np.array_equal(seq, label), seq


def test_hull_cost_charges_direction_and_start():
    points = SQUARE_AND_CENTRE  # hull 0 1 3 4 counter-clockwise; 2 is inside
    assert HULL.sequence_cost(points, np.array([0, 1, 3, 4, 0])) == 0.0
    assert HULL.sequence_cost(points, np.array([1, 3, 4, 0, 1])) == pytest.approx(1 / 5)
    assert HULL.sequence_cost(points, np.array([0, 4, 3, 1, 0])) == pytest.approx(4 / 5)
    assert HULL.sequence_cost(points, np.array([0, 1, 2, 3, 4, 0])) == pytest.approx(2 / 6)


# --- which tasks have a cost, and what it may be used for ---


def test_tasks_with_a_cost_and_delaunay_without():
    costed = {
        name for name in ("sort", "convex_hull", "delaunay", "tsp") if get_task(name).has_cost
    }
    assert costed == {"sort", "convex_hull", "tsp"}
    with pytest.raises(ValueError, match=r"needs a task with a cost \(.*\); delaunay has none"):
        TrainConfig(task="delaunay", sizes="5", steps=1, objective="reinforce")


@pytest.mark.parametrize("name", ["sort", "convex_hull"])
def test_a_distance_from_the_answer_never_picks_among_candidates(name):
    """Only an objective measured without the answer (TSP's length) may rerank beams."""
    assert not get_task(name).objective_cost
    costed = " or ".join(n for n, task in POINT_TASKS.items() if task.objective_cost)
    assert costed.startswith("tsp")
    with pytest.raises(DecodeOptionError, match=rf"which {name} has not \(only {costed}\)"):
        DecodeOptions("beam", pick="shortest").for_task(get_task(name))


# --- REINFORCE on sort: the exact policy gradient, and learning from scratch ---


def exact_expected_cost(model, task, points):
    """E[cost] under the model's constrained distribution over all n! sort outputs
    (differentiable)."""
    perms = [np.array(p) for p in itertools.permutations(range(len(points)))]
    batch = collate([points] * len(perms), perms)
    logp = masked_sequence_log_likelihood(
        model, task, batch.points, batch.lengths, batch.targets, "task"
    )
    assert abs(float(logp.detach().exp().sum()) - 1.0) < 1e-4  # every output enumerated
    costs = torch.tensor([task.sequence_cost(points, p) for p in perms], dtype=logp.dtype)
    return (logp.exp() * costs).sum()


def test_the_reinforce_gradient_on_sort_estimates_the_exact_policy_gradient():
    """As tests/test_reinforce.py for TSP: all 4! outputs of n = 4 enumerated; the estimator
    is unbiased, so with many samples it points along the exact gradient."""
    rng = np.random.default_rng(3)
    instances = [rng.random((4, 1)) for _ in range(4)]
    torch.manual_seed(2)
    model = build_model(ModelConfig(input_dim=1, hidden=16))
    with torch.no_grad():  # a less uniform policy than the initial one
        for q in model.parameters():
            q.mul_(10)
    exact = torch.stack([exact_expected_cost(model, SORT, p) for p in instances]).mean()
    g_exact = flat_grad(model, exact)
    loss, _ = reinforce_loss(model, SORT, collate(instances), 2048, sample_generator(0, 0))
    g_estimate = flat_grad(model, loss)
    assert torch.nn.functional.cosine_similarity(g_exact, g_estimate, dim=0) > 0.95
    assert float(g_estimate.norm() / g_exact.norm()) == pytest.approx(1.0, abs=0.15)


def greedy_sort_cost(model, batch):
    model.eval()
    with torch.no_grad():
        found = decode(model, SORT, batch, DecodeOptions("greedy"))
    return float(SORT.batch_cost(batch.points, found.tokens, batch.lengths).mean())


def test_reinforce_from_scratch_lowers_the_sort_cost():
    """80 steps on fresh n = 5 instances through the training step (no labels): the greedy
    outputs' share of pairs out of order falls from a random policy's ~0.5 (measured 0.48 ->
    0.05 at 100 steps of 32)."""
    cfg = TrainConfig(
        task="sort",
        sizes="5",
        steps=80,
        batch_size=16,
        objective="reinforce",
        rl_samples=8,
        lr=3e-3,
        precision="fp32",
        threads=1,
    )
    torch.manual_seed(0)
    model = build_model(ModelConfig(input_dim=1, hidden=32, init="default"))
    test = collate(SORT.generate(SizeRange(5, 5), 256, seed=1, stream=5))
    before = greedy_sort_cost(model, test)
    optimizer, baseline = build_optimizer(model, cfg), make_baseline(cfg, model, SORT)
    for step in range(cfg.steps):
        batch = collate(SORT.generate(SizeRange(5, 5), 16, seed=0, start=16 * step))
        model.train()
        train_step(model, optimizer, batch, cfg, step, baseline=baseline)
    after = greedy_sort_cost(model, test)
    assert before > 0.3 and after < 0.5 * before, (before, after)
