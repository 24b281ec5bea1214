"""Multi-start on a task whose first input keeps its place (vehicle routing's depot): every run
forced to serve its own customer first, against a plain-Python check of the routes and an
independent greedy loop per forced start; and POMO training on it."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from ptrnet.datasets.batching import collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.forced_start import ForcedStart, forced_logits
from ptrnet.decoding.multistart import multistart_rows, openings, start_layout
from ptrnet.decoding.options import DecodeOptions
from ptrnet.decoding.search import DecodingError
from ptrnet.model import ModelConfig, build_model
from ptrnet.runs.config import TrainConfig
from ptrnet.tasks import SizeRange, from_tokens, get_task
from ptrnet.tasks.sort import SortTask
from ptrnet.training.baselines import PomoBaseline, make_baseline
from ptrnet.training.loop import build_optimizer, train_step
from ptrnet.training.losses import reinforce_loss, sample_generator, sampled_rows

torch.set_num_threads(1)
CVRP = get_task("cvrp")


def pointer(seed: int = 0) -> torch.nn.Module:
    """An untrained LSTM Ptr-Net reading the routing features (depot flag, demand share)."""
    torch.manual_seed(seed)
    config = ModelConfig(input_dim=4, hidden=16, features="demand", init="default")
    return build_model(config).eval()


def tight_instances(sizes, seed):
    """Protocol instances with a small capacity (several routes each)."""
    rng = np.random.default_rng(seed)
    out = []
    for n in sizes:
        points = CVRP.sample_points(rng, n)
        points[:, 3] = 12.0
        out.append(points)
    return out


def routes_ok(points: np.ndarray, seq: np.ndarray) -> bool:
    """Plain Python: every customer served once, no route's load over the capacity, the depot
    (0) only between two routes."""
    seq = [int(i) for i in seq]
    twice = any(a == b == 0 for a, b in zip(seq, seq[1:], strict=False))
    if not seq or seq[0] == 0 or seq[-1] == 0 or twice:
        return False
    customers = [i for i in seq if i]
    if sorted(customers) != list(range(1, len(points))):
        return False
    load = 0.0
    for i in seq + [0]:
        if i == 0:
            if load > points[0, 3]:
                return False
            load = 0.0
        load += points[i, 2]
    return True


def forced_greedy(model, points: np.ndarray, first: int) -> tuple[list[int], float]:
    """The oracle: a greedy loop of its own over ``model``'s encode and step under the task's
    rule, choosing input ``first`` at step 0 and the most likely allowed token after; the score
    sums the later steps' masked log-probabilities (the forced step's is log 1)."""
    x = torch.tensor(points, dtype=torch.float32)[None]
    lengths = torch.tensor([len(points)])
    memory = model.encode(x, lengths)
    state, prev = memory.state, torch.zeros(1, dtype=torch.long)
    rules = CVRP.decode_state(lengths, "task", x)
    tokens, score = [], 0.0
    with torch.no_grad():
        for step in range(CVRP.max_steps(len(points)) + 1):
            logits, state = model.step(memory, prev, state)
            allowed = rules.allowed()[0]
            logp = torch.log_softmax(logits[0].masked_fill(~allowed, -math.inf), dim=0)
            token = first + 1 if step == 0 else int(logp.argmax())
            assert allowed[token]
            score += 0.0 if step == 0 else float(logp[token])
            tokens.append(token)
            if token == 0:
                break
            prev = torch.tensor([token])
            rules = rules.update(prev)
    return tokens, score


def test_openings_name_every_other_input_in_turn_and_repeat_on_short_instances():
    assert openings(torch.tensor([4, 2]), 3).tolist() == [2, 3, 4, 2, 2, 2]
    layout = start_layout(CVRP, collate(tight_instances((3, 1), 0)))  # 4 and 2 rows
    assert layout.width == 3 and layout.openings.tolist() == [2, 3, 4, 2, 2, 2]
    assert layout.order.tolist() == [[0, 1, 2, 3]] * 6  # read as given: the depot stays first
    assert start_layout(get_task("tsp"), collate([np.zeros((3, 2))])).openings is None


def test_forced_logits_keep_one_column_and_the_wrapper_forces_only_the_first_step():
    logits = torch.arange(8.0).view(2, 4)
    forced = forced_logits(logits, torch.tensor([2, 1]))
    assert forced.isfinite().tolist() == [[False, False, True, False], [False, True, False, False]]
    assert forced[0, 2] == 2.0 and forced[1, 1] == 5.0
    model = pointer()
    points = collate(tight_instances((4, 4), 1))
    targets = torch.tensor([[3, 1, 2, 0], [5, 4, 1, 0]])
    wrapped = ForcedStart(model, torch.tensor([3, 4]))(points.points, points.lengths, targets)
    plain = model(points.points, points.lengths, targets)
    assert torch.equal(wrapped[:, 1:], plain[:, 1:])
    assert wrapped[:, 0].isfinite().sum(dim=1).tolist() == [1, 1]
    assert wrapped[0, 0, 3] == plain[0, 0, 3] and wrapped[1, 0, 4] == plain[1, 0, 4]
    with pytest.raises(ValueError, match="the forced starts are for 2"):
        ForcedStart(model, torch.tensor([3, 4]))(points.points[:1], points.lengths[:1], targets)


@pytest.mark.parametrize("seed", range(3))
def test_every_run_starts_at_its_customer_and_every_output_is_valid_routes(seed):
    sizes = (1, 2, 3, 5, 4)
    points = tight_instances(sizes, seed)
    for constraints in ("task", "none"):
        trace, width = multistart_rows(pointer(seed), CVRP, collate(points), constraints)
        assert width == max(sizes)
        for row, tokens in enumerate(trace.tokens.tolist()):
            b, s = divmod(row, width)
            assert tokens[0] == 2 + s % sizes[b]  # customer s (mod the instance's count)
            if constraints == "task":
                assert routes_ok(points[b], from_tokens(tokens)) and trace.done[row]


@pytest.mark.parametrize("seed", range(3))
def test_best_of_all_starts_is_the_best_of_separate_forced_greedy_runs(seed):
    sizes = (5, 3, 6)
    points = tight_instances(sizes, 10 + seed)
    model = pointer(seed)
    runs = [[forced_greedy(model, p, first) for first in range(1, len(p))] for p in points]
    batch = collate(points)
    likely = decode(model, CVRP, batch, DecodeOptions(multistart=1))
    shortest = decode(model, CVRP, batch, DecodeOptions(multistart=1, pick="shortest"))
    for b, (p, own) in enumerate(zip(points, runs, strict=True)):
        scores = [score for _, score in own]
        costs = [CVRP.sequence_cost(p, from_tokens(tokens)) for tokens, _ in own]
        assert likely.log_prob[b].item() == pytest.approx(max(scores), abs=1e-4)
        best = own[int(np.argmax(scores))][0]
        assert likely.tokens[b, : len(best)].tolist() == best
        assert CVRP.sequence_cost(p, shortest.sequences[b]) == pytest.approx(min(costs))
        assert routes_ok(p, likely.sequences[b]) and routes_ok(p, shortest.sequences[b])


def test_a_customer_the_rule_cannot_serve_first_is_named_in_one_line():
    points = tight_instances((3, 3), 4)
    points[1][2, 2] = 13.0  # over the capacity 12: the task refuses such instances elsewhere
    with pytest.raises(DecodingError, match="instance 2: .* do not allow input 3 first"):
        decode(pointer(), CVRP, collate(points), DecodeOptions(multistart=1))


def test_pomo_samples_one_run_from_each_customer():
    points = tight_instances((4, 2), 3)
    batch = collate(points)
    model = pointer()
    sampler, scorer, copies = sampled_rows(model, model, CVRP, batch, 7, True)
    assert copies.size == 2 * 4 and isinstance(sampler, ForcedStart)
    drawn = decode(sampler, CVRP, copies, DecodeOptions("sample", constraints="task"),
                   generator=torch.Generator().manual_seed(0))  # fmt: skip
    assert drawn.tokens[:, 0].tolist() == [2, 3, 4, 5, 2, 3, 2, 3]
    for row, seq in enumerate(drawn.sequences):
        assert routes_ok(points[row // 4], seq)


def test_pomo_training_takes_three_finite_steps_on_six_customers():
    cfg = TrainConfig(task="cvrp", sizes="6", steps=3, batch_size=4, objective="reinforce",
                      baseline="pomo", precision="fp32", threads=1)  # fmt: skip
    model = pointer()
    optimizer = build_optimizer(model, cfg)
    baseline = make_baseline(cfg, model, CVRP)
    batch = collate(CVRP.generate(SizeRange(6, 6), 4, seed=5))
    before = [p.detach().clone() for p in model.parameters()]
    model.train()
    costs = [train_step(model, optimizer, batch, cfg, step, baseline=baseline) for step in range(3)]
    assert all(math.isfinite(c) and c > 0 for c in costs)
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    loss, _ = reinforce_loss(model, CVRP, batch, 2, sample_generator(0, 9), baseline=baseline)
    assert torch.isfinite(loss)


class FirstKept(SortTask):
    """Sort with its first input kept in place for multi-start (as a depot is): any input may
    still come first, so every forced start is one the rule allows."""

    name = "toy_first_kept"
    rotated_starts = False


SET_ENCODERS = {  # networks that encode each instance once for all its starts (encodes_orders)
    "heavy": dict(encoder="transformer", encoder_layers=1, decoder="heavy", decoder_layers=2),
    "light": dict(encoder="transformer", encoder_layers=1, decoder="light", logit_clip=10.0),
}


@pytest.mark.parametrize("kind", sorted(SET_ENCODERS))
def test_forced_starts_over_a_set_encoder_match_encoding_every_copy(kind):
    """A set encoder reads the starts' copies through one encoding per instance: the same runs,
    POMO loss and gradients as encoding every copy, each run forced to its own first input."""
    task = FirstKept()
    torch.manual_seed(3)
    config = ModelConfig(input_dim=1, hidden=16, heads=2, init="default", **SET_ENCODERS[kind])
    model = build_model(config)
    rng = np.random.default_rng(0)
    batch = collate([rng.random((n, 1)) for n in (6, 4, 5)])
    found = []
    for shared in (True, False):
        model.encodes_orders = shared
        model.eval()
        runs = decode(model, task, batch, DecodeOptions(multistart=1))
        trace, width = multistart_rows(model, task, batch, "task")
        model.train()
        model.zero_grad()
        loss, cost = reinforce_loss(
            model, task, batch, 2, torch.Generator().manual_seed(1), baseline=PomoBaseline()
        )
        loss.backward()
        grads = [p.grad.clone() for p in model.parameters() if p.grad is not None]
        found.append((runs, trace, loss, cost, grads))
    del model.encodes_orders
    (runs, trace, loss, cost, grads), (want_runs, want_trace, want_loss, want_cost, want) = found
    firsts = [2, 3, 4, 5, 6] + [2, 3, 4, 2, 3] + [2, 3, 4, 5, 2]  # 5, 3 and 4 others in turn
    assert width == 5 and trace.tokens[:, 0].tolist() == firsts
    assert torch.equal(trace.tokens, want_trace.tokens)
    torch.testing.assert_close(runs.log_prob, want_runs.log_prob, atol=1e-5, rtol=1e-5)
    assert cost == pytest.approx(want_cost) and len(grads) == len(want) > 0
    torch.testing.assert_close(loss, want_loss, atol=1e-6, rtol=1e-5)
    for got, expected in zip(grads, want, strict=True):
        torch.testing.assert_close(got, expected, atol=1e-6, rtol=1e-4)
