"""The induction lesson (ptrnet/induction): its sequences, its stripe scores on hand-built
attention, its config's checks, determinism, and the effect itself on a tiny model."""

from __future__ import annotations

import json
import math

import pytest
import torch

from ptrnet.induction.config import InductionConfig
from ptrnet.induction.data import FIRST, REPEAT, UNSCORED, repeated_batch
from ptrnet.induction.measure import part_losses, previous_token_score, stripe_score
from ptrnet.induction.model import AttentionOnly
from ptrnet.induction.train import MEASUREMENTS, WEIGHTS, load_run, train_induction
from ptrnet.io.errors import InputError
from ptrnet.runs import RunDirError

torch.set_num_threads(1)


def causal_uniform(size: int) -> torch.Tensor:
    """(T, T): each query spreads its attention evenly over keys 0..query."""
    return torch.tril(torch.ones(size, size)) / torch.arange(1, size + 1)[:, None]


def test_stripe_score_of_a_perfect_induction_pattern_is_one():
    """BOS A A with L = 5: positions 0..10; the second copy, 6..10, looks at 2..6 (the last
    position's look is not scored: its next token is not in the sequence)."""
    half = 5
    pattern = torch.zeros(2 * half + 1, 2 * half + 1)
    pattern[0, 0] = 1
    for t in range(1, 2 * half + 1):
        pattern[t, t - half + 1 if t > half else t - 1] = 1  # induction, else previous token
    assert stripe_score(pattern, half).item() == pytest.approx(1.0)
    assert previous_token_score(pattern).item() == pytest.approx(
        half / (2 * half)  # queries 1..L of 1..2L look at t - 1
    )
    pattern[2 * half] = 0
    pattern[2 * half, 0] = 1  # the last query rests on BOS: not scored
    assert stripe_score(pattern, half).item() == pytest.approx(1.0)
    pattern[2 * half - 1] = 0
    pattern[2 * half - 1, 0] = 1  # the one before rests on BOS too: one of four misses
    assert stripe_score(pattern, half).item() == pytest.approx(0.75)


def test_stripe_score_of_uniform_attention_is_the_mean_of_one_over_t_plus_one():
    half, size = 4, 9
    expected = sum(1 / (t + 1) for t in range(size - half, size - 1)) / (half - 1)
    assert stripe_score(causal_uniform(size), half).item() == pytest.approx(expected)
    expected_prev = sum(1 / (t + 1) for t in range(1, size)) / (size - 1)
    assert previous_token_score(causal_uniform(size)).item() == pytest.approx(expected_prev)


def test_stripe_score_refuses_a_pattern_too_short_for_two_copies():
    with pytest.raises(ValueError, match="no second copy"):
        stripe_score(causal_uniform(5), 3)


def test_stripe_score_keeps_the_batch_and_head_axes():
    pattern = causal_uniform(6).expand(3, 2, 6, 6)
    assert stripe_score(pattern, 3).shape == (3, 2)


def test_the_measured_sequences_are_bos_then_a_then_a():
    tokens, parts = repeated_batch(torch.Generator().manual_seed(0), 50, 7, 6)
    assert tokens.shape == (50, 13) and parts.shape == (50, 12)
    assert (tokens[:, 0] == 7).all()
    assert torch.equal(tokens[:, 1:7], tokens[:, 7:])
    assert (parts[:, :7] == FIRST).all() and (parts[:, 7:] == REPEAT).all()
    assert tokens[:, 1:].min() >= 0 and tokens[:, 1:].max() < 7


def test_training_sequences_repeat_a_varying_length_and_score_only_the_repeat():
    tokens, parts = repeated_batch(torch.Generator().manual_seed(1), 200, 1000, 8, shortest=3)
    lengths = set()
    for row, part in zip(tokens.tolist(), parts.tolist(), strict=True):
        m = part.count(FIRST) - 1
        lengths.add(m)
        assert row[0] == 1000 and row[1 + m : 1 + 2 * m] == row[1 : 1 + m]
        assert part == [FIRST] * (m + 1) + [REPEAT] * (m - 1) + [UNSCORED] * (2 * 8 - 2 * m)
    assert lengths == set(range(3, 9))


def test_part_losses_split_the_halves():
    tokens = torch.tensor([[0, 1, 0, 1]])
    parts = torch.tensor([[FIRST, FIRST, REPEAT]])
    logits = torch.zeros(1, 4, 2)
    logits[0, 2, 1] = 10.0  # position 2 predicts token 1 surely: right
    losses = part_losses(logits, tokens, parts)
    assert losses["first_half_loss"].item() == pytest.approx(math.log(2))
    assert losses["repeat_loss"].item() == pytest.approx(math.log1p(math.exp(-10)), rel=1e-3)
    assert losses["repeat_accuracy"].item() == 1.0


def test_attention_is_causal_and_rows_sum_to_one():
    model = AttentionOnly(InductionConfig(vocab=9, length=5, d_model=8, heads=2))
    logits, patterns = model(torch.randint(10, (3, 11)))  # token 9 is BOS
    assert logits.shape == (3, 11, 9) and len(patterns) == 2
    for pattern in patterns:
        assert pattern.shape == (3, 2, 11, 11)
        assert torch.allclose(pattern.sum(-1), torch.ones(3, 2, 11))
        assert (pattern.triu(1) == 0).all()


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"vocab": 1}, "vocab"),
        ({"length": 300}, "length"),
        ({"d_model": 30, "heads": 4}, "multiple of heads"),
        ({"min_length": 1}, "min_length"),
        ({"lr": 2.0}, "lr"),
    ],
)
def test_config_refuses_bad_values(bad, message):
    with pytest.raises(ValueError, match=message):
        InductionConfig(**bad)


def test_config_round_trips_and_refuses_unknown_keys():
    config = InductionConfig(vocab=12)
    assert InductionConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config
    with pytest.raises(ValueError, match="unknown keys"):
        InductionConfig.from_dict({**config.to_dict(), "mlp": 4})


TINY = {"vocab": 16, "length": 6, "d_model": 16, "steps": 6, "log_every": 3, "eval_count": 8}


def test_same_seed_same_weights_and_a_used_run_dir_is_refused(tmp_path):
    config = InductionConfig(**TINY)
    first = train_induction(config, str(tmp_path / "a"), progress=False, note=lambda _: None)
    second = train_induction(config, str(tmp_path / "b"), progress=False, note=lambda _: None)
    a, b = load_run(str(tmp_path / "a")), load_run(str(tmp_path / "b"))
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert torch.equal(x, y), name
    assert first["repeat_accuracy"] == second["repeat_accuracy"]
    assert json.loads((tmp_path / "a" / MEASUREMENTS).read_text())["threads"] == 1
    with pytest.raises(RunDirError, match="already holds a run"):
        train_induction(config, str(tmp_path / "a"), progress=False, note=lambda _: None)
    (tmp_path / "a" / WEIGHTS).write_bytes(b"not safetensors")
    with pytest.raises(InputError, match=WEIGHTS):
        load_run(str(tmp_path / "a"))


def test_a_tiny_model_learns_the_repeat_and_not_the_first_half(tmp_path):
    """A few hundred steps: the repeated half's accuracy is far above chance (1/V), the first
    half's loss stays near log V, and layer 2 looks at the stripe far more than uniform
    attention would."""
    config = InductionConfig(**EFFECT)
    result = train_induction(config, str(tmp_path), progress=False, note=lambda _: None)
    chance = 1 / config.vocab
    assert result["repeat_accuracy"] > 0.5 > 5 * chance
    assert abs(result["first_half_loss"] - math.log(config.vocab)) < 0.35
    uniform = stripe_score(causal_uniform(config.context), config.length).item()
    assert result["induction_score"] > 3 * uniform


EFFECT = {"vocab": 32, "length": 8, "d_model": 32, "steps": 400, "batch_size": 32, "lr": 0.01}
