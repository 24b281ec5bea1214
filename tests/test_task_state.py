"""A task's own decoding state (:mod:`ptrnet.tasks.state_fields`): a toy task registered here
keeps the fuel left on a walk along a line as a field of its own, and greedy, sampled and beam
decoding give outputs its rule allows, checked against a plain-Python walk and against every
valid output enumerated on tiny instances."""

from collections.abc import Sequence

import numpy as np
import pytest
import torch

from ptrnet.datasets.batching import Batch, collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.likelihood import masked_sequence_log_likelihood
from ptrnet.decoding.options import DecodeOptions
from ptrnet.decoding.pointer_decoder import masked_log_probs
from ptrnet.model import ModelConfig, build_model
from ptrnet.tasks import POINT_TASKS, TASKS, Task, get_task, register
from ptrnet.tasks.constraints import NO_FIELDS, DecodeState, replay_masks
from ptrnet.tasks.state_fields import StateField, fixed

torch.set_num_threads(1)
FUEL = 1.0  # the walk's budget: inputs at x in [0, 1), the walk starting at x = 0


def _fuel_left(fuel, state, token, moved):
    x = state.own["x"]  # (B, n+1), the end column at the origin
    here, there = x.gather(1, state.last[:, None])[:, 0], x.gather(1, token[:, None])[:, 0]
    return (fuel - (there - here).abs()).where(moved, fuel)


class FuelTask(Task):
    """Toy task with a running sum of its own: walk from x = 0 to inputs on a line, each once,
    while the distance walked stays within :data:`FUEL`; stop only once no input left is within
    reach. The fuel left depends on the order of the walk, not only on the inputs visited."""

    name = "toy_fuel"
    dim = 1
    min_n = 1
    metric_keys = ("valid_rate",)
    validation_metric = "valid_rate"
    summary_metrics = ("valid_rate", "valid_rate")
    demo_sizes = (5,)
    drawing = "bars"
    shape_invariant = False  # the fuel is a distance in the inputs' own units
    state_fields = (
        StateField("x", lambda state: state.located()[..., 0], fixed),  # (B, n+1)
        StateField(
            "fuel",
            lambda state: torch.full_like(state.lengths, FUEL, dtype=torch.float64),
            _fuel_left,
        ),
    )

    def solve(self, points: np.ndarray, solver: str | None = None) -> np.ndarray:
        self.check_solver(solver)
        return np.asarray(max(valid_outputs(points[:, 0]), key=len), dtype=np.int64) - 1

    def canonical(self, points: np.ndarray, seq: np.ndarray) -> np.ndarray:
        return np.asarray(seq, dtype=np.int64)

    def is_valid(self, points: np.ndarray, seq: np.ndarray) -> bool:
        return tuple(np.asarray(seq) + 1) in valid_outputs(points[:, 0])

    def max_steps(self, n: int) -> int:
        return n

    def allowed_next(self, state):
        x, fuel = state.own["x"], state.own["fuel"]  # (B, n+1), (B,)
        here = x.gather(1, state.last[:, None])  # (B, 1)
        reach = state.unvisited() & ((x - here).abs() <= fuel[:, None])
        return reach | state.end_if(~reach.any(dim=1))

    def dataset_metrics(
        self, points: Sequence[np.ndarray], refs: Sequence[np.ndarray], preds: Sequence[np.ndarray]
    ) -> dict[str, float]:
        valid = sum(self.is_valid(x, p) for x, p in zip(points, preds, strict=True))
        return {"valid_rate": valid / len(preds), "count": len(preds)}


def allowed_tokens(x: Sequence[float], prefix: Sequence[int]) -> set[int]:
    """The rule in plain Python: the tokens allowed after the 1-based tokens ``prefix``."""
    fuel, here = FUEL, 0.0
    for token in prefix:
        fuel, here = fuel - abs(x[token - 1] - here), x[token - 1]
    reach = {j + 1 for j in range(len(x)) if j + 1 not in prefix and abs(x[j] - here) <= fuel}
    return reach or {0}


def valid_outputs(x: Sequence[float], prefix: tuple[int, ...] = ()) -> set[tuple[int, ...]]:
    """Every complete output (1-based tokens, the end left out) the rule allows, by brute force."""
    allowed = allowed_tokens(list(x), prefix)
    if allowed == {0}:
        return {prefix}
    return set().union(*(valid_outputs(x, (*prefix, t)) for t in allowed))


def prefix_count(x: Sequence[float]) -> int:
    """How many distinct prefixes the valid outputs have (the empty one and complete ones
    included): a beam at least this wide searches them all."""
    return len({out[:k] for out in valid_outputs(x) for k in range(len(out) + 1)})


def instances(sizes, seed):
    """Float32 numbers as float64 (n, 1) arrays, so the plain-Python walk reads what the model
    and the decoding state read."""
    rng = np.random.default_rng(seed)
    return [rng.random((n, 1)).astype(np.float32).astype(np.float64) for n in sizes]


def tiny_model(seed=0):
    torch.manual_seed(seed)
    model = build_model(ModelConfig(kind="pointer", input_dim=1, hidden=16, init="default"))
    with torch.no_grad():  # sharper distributions: beams part ways
        for p in model.parameters():
            p.mul_(2.0)
    return model.eval()


@pytest.fixture
def fuel():
    """The toy task, registered for one test and taken out again."""
    register(FuelTask())
    yield get_task("toy_fuel")
    TASKS.pop("toy_fuel")
    POINT_TASKS.pop("toy_fuel", None)


def padded(outputs, length):
    """Token rows (R, length): each output, its end, and end tokens after it."""
    return torch.tensor([[*out, *[0] * (length - len(out))] for out in outputs])


def test_the_fields_start_in_task_mode_only_and_cost_a_task_without_them_nothing(fuel):
    lengths, points = torch.tensor([3, 2]), torch.tensor(np.zeros((2, 3, 1)))
    state = DecodeState.start(fuel, lengths, "task", points)
    assert list(state.own) == ["x", "fuel"] and state.own["fuel"].tolist() == [FUEL, FUEL]
    assert DecodeState.start(fuel, lengths, "none", points).own == {}
    tsp = DecodeState.start(get_task("tsp"), lengths, "task")
    assert tsp.own is NO_FIELDS and tsp.update(torch.tensor([1, 1])).own is NO_FIELDS
    with pytest.raises(TypeError):
        state.own["fuel"] = torch.zeros(2)  # read-only: a rule cannot change its state aside


def test_the_state_refuses_a_field_of_the_wrong_rows_or_a_name_given_twice(fuel, monkeypatch):
    lengths, points = torch.tensor([3, 2]), torch.tensor(np.zeros((2, 3, 1)))
    x = FuelTask.state_fields[0]
    one = StateField("spent", lambda state: torch.zeros(1), fixed)
    monkeypatch.setattr(FuelTask, "state_fields", (one,))
    with pytest.raises(ValueError, match=r"toy_fuel task's field 'spent' starts as \(1,\), not"):
        DecodeState.start(fuel, lengths, "task", points)
    monkeypatch.setattr(FuelTask, "state_fields", (x, x))
    with pytest.raises(ValueError, match="toy_fuel task declares field 'x' twice"):
        DecodeState.start(fuel, lengths, "task", points)


@pytest.mark.parametrize("n, seed", [(3, 0), (4, 1), (5, 2)])
def test_replayed_masks_match_the_plain_python_rule_along_every_valid_output(fuel, n, seed):
    x = instances([n], seed)[0]
    outputs = sorted(valid_outputs(x[:, 0]))
    assert len(outputs) > 2
    tokens = padded(outputs, n + 1)  # (R, n+1)
    rows = len(outputs)
    points = torch.tensor(x, dtype=torch.float32).expand(rows, -1, -1)
    masks = replay_masks(fuel, torch.full((rows,), n), tokens, "task", points)  # (R, n+1, n+1)
    for r, out in enumerate(outputs):
        for t in range(len(out) + 1):
            want = torch.zeros(n + 1, dtype=torch.bool)
            want[sorted(allowed_tokens(x[:, 0], out[:t]))] = True
            assert torch.equal(masks[r, t], want), (out, t)


@pytest.mark.parametrize(
    "options",
    [
        DecodeOptions("greedy"),
        DecodeOptions("sample", samples=4),
        DecodeOptions("beam", beam_width=3),
        DecodeOptions("beam", beam_width=6),
    ],
)
def test_every_decoded_row_is_a_valid_output(fuel, options):
    """Rows of several sizes side by side (padding), every beam checked, not only the one
    picked (the rerank sees each finished one): a beam whose field was not reordered with it
    walks on another beam's fuel."""
    points = instances([5, 2, 4, 5, 3, 1, 5], seed=4)
    seen = []

    def every(x, seq):
        seen.append((x[:, 0].tolist(), tuple(np.asarray(seq) + 1)))
        return 0.0  # ties: the most likely one

    rerank = every if options.several else None
    result = decode(tiny_model(), fuel, collate(points), options, rerank=rerank)
    for x, seq in zip(points, result.sequences, strict=True):
        assert tuple(seq + 1) in valid_outputs(x[:, 0])
    if options.strategy == "beam":  # as many beams finish as there are outputs, up to the width
        counts = [min(options.width, len(valid_outputs(x[:, 0]))) for x in points]
        assert len(seen) == sum(counts) and max(counts) == options.width
    for x, out in seen:
        assert out in valid_outputs(x)


@pytest.mark.parametrize("n, seed", [(4, 5), (5, 6)])
def test_a_beam_as_wide_as_the_prefixes_finds_the_most_likely_valid_output(fuel, n, seed):
    """Every valid output scored by hand (the model's teacher-forced logits under the
    plain-Python rule's masks): the widest beam returns the best of them, and the engine's
    replayed likelihood agrees with the hand score on every one."""
    x = instances([n], seed)[0]
    outputs = sorted(valid_outputs(x[:, 0]))
    tokens = padded(outputs, n + 1)  # (R, n+1)
    rows = len(outputs)
    points = torch.tensor(x, dtype=torch.float32).expand(rows, -1, -1).contiguous()
    lengths = torch.full((rows,), n)
    model = tiny_model(seed)
    with torch.no_grad():
        logits = model(points, lengths, tokens)  # (R, n+1, V)
        masks = torch.zeros(rows, n + 1, n + 1, dtype=torch.bool)
        for r, out in enumerate(outputs):
            for t in range(n + 1):
                masks[r, t, sorted(allowed_tokens(x[:, 0], out[:t]) if t <= len(out) else {0})] = (
                    True
                )
        by_hand = masked_log_probs(logits, masks).gather(2, tokens[..., None])[..., 0].sum(1)
        replayed = masked_sequence_log_likelihood(model, fuel, points, lengths, tokens)
    torch.testing.assert_close(replayed, by_hand, atol=1e-5, rtol=0)
    width = prefix_count(x[:, 0])
    assert width >= 3
    beam = decode(
        model, fuel, Batch(points[:1], lengths[:1]), DecodeOptions("beam", beam_width=width)
    )
    assert tuple(beam.sequences[0] + 1) in outputs
    torch.testing.assert_close(beam.log_prob[0], by_hand.max(), atol=1e-5, rtol=0)
