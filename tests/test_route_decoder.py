"""The route decoder (Kool et al.'s light decoder for vehicle routing, ptrnet.model.route): one
step against a slow reference written out by hand, its own mask against the task's plain rule,
the teacher-forced pass against the decoded steps, every search giving valid routes, its
refusals, and training from the command line."""

import numpy as np
import pytest
import torch
from test_cvrp_task import rule
from test_light_decoder import reference_pointer

from ptrnet.cli.main import main
from ptrnet.datasets.batching import collate
from ptrnet.decoding.dataset import decode_all
from ptrnet.decoding.options import DecodeOptions
from ptrnet.inference import load_model
from ptrnet.model import ModelConfig, build_model
from ptrnet.model.route import RoutePointer, used_since_depot
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.tasks import SizeRange, get_task

pytest.importorskip("pyvrp")  # the task's references; a core dependency where Python >= 3.11
torch.set_num_threads(1)
CVRP = get_task("cvrp")
ROUTE = dict(
    input_dim=4,
    hidden=16,
    heads=2,
    encoder="transformer",
    encoder_layers=1,
    decoder="route",
    features="demand",
    logit_clip=10.0,
    init="default",
)


def model(seed: int = 0) -> RoutePointer:
    torch.manual_seed(seed)
    return build_model(ModelConfig(**ROUTE)).eval()


def tight(seed: int, count: int, n: int, capacity: int = 12) -> list[np.ndarray]:
    """Protocol instances with a small capacity, so that routes are many and loads bind."""
    points = CVRP.generate(SizeRange(n, n), count, seed)
    for p in points:
        p[:, 3] = capacity
    return points


def batch_of(points: list[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
    batch = collate([torch.tensor(p, dtype=torch.float32) for p in points])
    return batch.points, batch.lengths


def reference_logits(net, points, prefix):
    """One step for one instance written out: allowed tokens from integer loads (the task's
    plain rule), the context of the mean, the last input and the load left, a glimpse per head
    over the allowed tokens, the clipped compatibilities."""
    n = len(points)
    rows = torch.tensor(points, dtype=torch.float32)
    feats = torch.cat([rows[:, :2], (rows[:, 2] / rows[:, 3])[:, None], torch.zeros(n, 1)], 1)
    feats[0, 3] = 1.0  # the depot's flag
    nodes = net.encoder(feats[None], torch.tensor([n]))[0][0]  # (n, d)
    zero_based = [t - 1 for t in prefix]
    allowed = sorted(rule(points, zero_based))
    back = zero_based[::-1].index(0) if 0 in zero_based else len(zero_based)
    since = zero_based[len(zero_based) - back :]  # customers since the last depot visit
    load_left = 1 - sum(points[i, 2] for i in since) / points[0, 3]
    last = prefix[-1] if prefix else 0
    query = net.graph_proj(nodes.mean(dim=0)) + net.load_proj(torch.tensor([load_left]).float())
    query = query + (net.last_proj(nodes[last - 1]) if last else net.last_start)
    return reference_pointer(net, nodes, query, allowed)


def walk(net, points, seed):
    """A random walk of the decoder over one instance: (tokens, the step logits)."""
    rng = np.random.default_rng(seed)
    p, lengths = batch_of([points])
    memory = net.encode(p, lengths)
    state, prev, tokens, steps = memory.state, torch.zeros(1, dtype=torch.long), [], []
    while not tokens or tokens[-1]:
        logits, state = net.step(memory, prev, state)
        steps.append(logits[0])
        tokens.append(int(rng.choice(np.flatnonzero(torch.isfinite(logits[0]).numpy()))))
        prev = torch.tensor(tokens[-1:])
    return tokens, torch.stack(steps)


@pytest.mark.parametrize("seed", range(4))
def test_each_step_is_the_hand_written_reference_and_the_mask_the_task_s_rule(seed):
    net = model(seed)
    points = tight(seed, 1, int(np.random.default_rng(seed).integers(3, 10)))[0]
    with torch.no_grad():
        tokens, steps = walk(net, points, seed)
        for i, logits in enumerate(steps):
            want = reference_logits(net, points, tokens[:i])
            assert torch.equal(torch.isfinite(logits), torch.isfinite(want)), tokens[:i]
            torch.testing.assert_close(logits, want, atol=1e-5, rtol=1e-5)
    assert CVRP.is_valid(points, np.array(tokens[:-1]) - 1)


def test_teacher_forcing_equals_the_decoded_steps_batched_and_padded():
    net = model(3)
    points = [*tight(5, 2, 4), *tight(6, 2, 9)]
    walks = [walk(net, p, seed) for seed, p in enumerate(points)]
    width = max(len(t) for t, _ in walks)
    targets = torch.full((len(points), width), -100)
    for b, (tokens, _) in enumerate(walks):
        targets[b, : len(tokens)] = torch.tensor(tokens)
    with torch.no_grad():
        forced = net(*batch_of(points), targets)  # (B, T, n+1)
    for b, (tokens, steps) in enumerate(walks):
        got = forced[b, : len(tokens), : steps.shape[1]]
        assert torch.equal(torch.isfinite(got), torch.isfinite(steps))
        torch.testing.assert_close(got, steps, atol=1e-5, rtol=1e-5)


def test_copies_read_in_an_order_are_encoded_once_as_each_copy_alone():
    """encode and forward with ``order`` (the S readings per instance that sampling and
    forced starts use) equal encoding every reordered copy on its own; an order that moves a
    depot is refused."""
    net = model(4)
    points, lengths = batch_of([*tight(10, 1, 5), *tight(11, 1, 7)])
    order = torch.tensor([[0, 1, 2, 3, 4, 5, 6, 7], [0, 3, 1, 2, 4, 5, 6, 7]]).repeat(2, 1)
    order[2:, 1:7] = torch.tensor([[6, 5, 4, 3, 2, 1], [2, 1, 4, 3, 6, 5]])
    rows = torch.tensor([0, 0, 1, 1])
    copies = points[rows].gather(1, order[..., None].expand(-1, -1, 4))
    targets = torch.tensor([[2, 1, 3, 0], [3, 4, 0, -100], [5, 1, 2, 0], [7, 0, -100, -100]])
    with torch.no_grad():
        shared = net(points, lengths, targets, order=order)
        alone = net(copies, lengths[rows], targets)
    torch.testing.assert_close(shared, alone, atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="reads every copy with its depot first"):
        net.encode(points, lengths, order=order.flip(1))


def test_the_load_used_restarts_at_every_depot_visit():
    demand = torch.tensor([[0.0, 0.0, 0.25, 0.5, 0.125]])  # end, depot, three customers
    prev = torch.tensor([[0, 2, 3, 1, 4, 1, 0]])
    want = torch.tensor([[0.0, 0.25, 0.75, 0.0, 0.125, 0.0, 0.0]])
    torch.testing.assert_close(used_since_depot(demand, prev), want)


@pytest.mark.parametrize(
    "options",
    [
        DecodeOptions(strategy="greedy"),
        DecodeOptions(strategy="beam", beam_width=5),
        DecodeOptions(strategy="sample", samples=6, seed=2),
        DecodeOptions(strategy="greedy", constraints="none"),
    ],
    ids=["greedy", "beam", "sample", "unconstrained"],
)
def test_every_search_gives_valid_routes_even_without_the_task_s_mask(options):
    """The model's own mask is the task's rule: decoded without the task's constraints too,
    every output is valid routes (load within capacity, each customer once)."""
    points = [*tight(7, 3, 8, capacity=10), *tight(8, 2, 13, capacity=15)]
    for p, seq in zip(points, decode_all(model(1), CVRP, points, options), strict=True):
        assert CVRP.is_valid(p, seq), (options.strategy, seq)


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"features": "raw"}, "the route decoder reads .* features demand, not raw"),
        ({"encoder": "lstm"}, "the route decoder needs the transformer encoder"),
        ({"glimpses": 1}, "glimpses apply to the lstm decoder only, not to the route one"),
        ({"decoder": "light"}, "features demand apply to .* the lstm or route decoder"),
    ],
)
def test_bad_route_choices_are_refused(kw, message):
    with pytest.raises(ValueError, match=message):
        ModelConfig(**{**ROUTE, **kw})


def test_a_task_without_depot_rows_is_refused():
    with pytest.raises(ValueError, match="task tsp has 2-D inputs, the model expects 4-D"):
        RunConfig(ModelConfig(**ROUTE), TrainConfig(task="tsp", sizes="5", steps=1))


def test_ptrnet_train_runs_it_with_kools_defaults(tmp_path):
    """--decoder route brings the transformer encoder and logit clipping at 10 unless given,
    trains by REINFORCE and decodes valid routes from the saved run."""
    out = tmp_path / "run"
    args = ["train", "cvrp", "-n", "6", "--decoder", "route", "--hidden", "16", "--heads", "2"]
    args += ["--objective", "reinforce", "--steps", "4", "--batch-size", "8", "--val-count", "8"]
    assert main([*args, "--threads", "1", "-q", "--out", str(out)]) == 0
    loaded = load_model(out, "cvrp")
    assert isinstance(loaded.model, RoutePointer)
    assert (loaded.config.model.encoder, loaded.config.model.logit_clip) == ("transformer", 10.0)
    points = tight(9, 3, 6)
    seqs = decode_all(loaded.model, CVRP, points, DecodeOptions(strategy="greedy"))
    assert all(CVRP.is_valid(p, s) for p, s in zip(points, seqs, strict=True))
