"""Decoding across every model kind (LSTM, transformer, heavy decoder, seq2seq, attention): a
row's output does not depend on its batch mates, beam search against exhaustive enumeration,
and the strategies' agreements."""

import itertools

import numpy as np
import pytest
import torch

from ptrnet.datasets.batching import collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.likelihood import masked_sequence_log_likelihood
from ptrnet.decoding.multistart import multistart_rows
from ptrnet.decoding.options import DecodeOptions
from ptrnet.model import ModelConfig, build_model
from ptrnet.tasks import get_task

torch.set_num_threads(1)

KINDS = {
    "lstm": dict(kind="pointer"),
    "transformer": dict(
        kind="pointer", encoder="transformer", encoder_layers=2, heads=2, glimpses=1,
        logit_clip=10.0,
    ),
    "heavy": dict(
        kind="pointer", encoder="transformer", encoder_layers=1, decoder="heavy",
        decoder_layers=2, heads=2,
    ),
    "light": dict(
        kind="pointer", encoder="transformer", encoder_layers=1, decoder="light", heads=2,
        logit_clip=10.0,
    ),
    "seq2seq": dict(kind="seq2seq", max_n=8),
    "attention": dict(kind="attention", max_n=8),
}  # fmt: skip


def spelled(strategy: str) -> dict:
    """The DecodeOptions fields of a strategy name: multistart is an option of its own."""
    return {"multistart": 1} if strategy == "multistart" else {"strategy": strategy}


def make_model(kind, dim, scale=2.0, seed=0):
    """A tiny untrained model of ``kind``, its weights scaled so that near-ties are rare."""
    torch.manual_seed(seed)
    config = ModelConfig(input_dim=dim, hidden=16, init="default", **KINDS[kind])
    model = build_model(config).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(scale)
    return model


def padded(tokens, steps):
    """(T,) tokens end-padded to ``steps``."""
    return torch.nn.functional.pad(tokens, (0, steps - len(tokens)))


def assert_alone_equals_batched(model, task, instances, options):
    batched = decode(model, task, collate(instances), options)
    for i, points in enumerate(instances):
        alone = decode(model, task, collate([points]), options)
        steps = max(alone.tokens.shape[1], batched.tokens.shape[1])
        assert torch.equal(padded(alone.tokens[0], steps), padded(batched.tokens[i], steps)), i
        torch.testing.assert_close(alone.log_prob[0], batched.log_prob[i], atol=1e-4, rtol=0)
        assert np.array_equal(alone.sequences[0], batched.sequences[i])


@pytest.mark.parametrize("constraints", ["none", "task"])
@pytest.mark.parametrize("strategy", ["greedy", "beam"])
@pytest.mark.parametrize("kind", ["lstm", "seq2seq", "attention"])
def test_a_row_decodes_alike_alone_and_beside_longer_rows(kind, strategy, constraints):
    """Without the task's output budget (constraints none) a short row beside a long one ran on
    to the long row's step limit, so its output and score changed with its batch mates."""
    task, rng = get_task("sort"), np.random.default_rng(0)
    instances = [rng.random((n, 1)) for n in (6, 3, 5, 8, 4)]
    options = DecodeOptions(strategy, beam_width=3, constraints=constraints)
    assert_alone_equals_batched(make_model(kind, 1), task, instances, options)


@pytest.mark.parametrize("strategy", ["greedy", "beam"])
@pytest.mark.parametrize("kind", ["seq2seq", "attention"])
def test_eight_views_decode_a_row_alike_alone_and_beside_longer_rows(kind, strategy):
    """The eight-view judge scored a row cut off at its step limit with the end token its batch
    padded it with, a choice the decoder never made, so the score depended on batch mates."""
    task, rng = get_task("tsp"), np.random.default_rng(2)
    instances = [rng.random((n, 2)) for n in (6, 4, 7, 5)]
    eight = {"search_views": 8, "average_views": 4}
    options = DecodeOptions(strategy, beam_width=2, constraints="none", **eight)
    assert_alone_equals_batched(make_model(kind, 2), task, instances, options)


def test_a_cut_off_rows_likelihood_is_its_decoded_score():
    """A row that never ends is cut after max_steps(n) + 1 tokens; the end tokens after it in a
    batch are padding and add nothing to its likelihood."""
    task, rng = get_task("sort"), np.random.default_rng(0)
    batch = collate([rng.random((n, 1)) for n in (6, 3, 5, 8, 4)])
    model = make_model("lstm", 1)
    result = decode(model, task, batch, DecodeOptions(constraints="none"))
    sizes = batch.lengths.tolist()
    cut = [len(s) == task.max_steps(n) + 1 for s, n in zip(result.sequences, sizes, strict=True)]
    assert sum(cut) >= 2  # the untrained model runs on; the test needs such rows
    with torch.no_grad():
        scored = masked_sequence_log_likelihood(
            model, task, batch.points, batch.lengths, result.tokens, "none"
        )
    torch.testing.assert_close(scored, result.log_prob, atol=1e-4, rtol=0)


@pytest.mark.parametrize("kind", ["transformer", "heavy"])
@pytest.mark.parametrize("strategy", ["greedy", "beam", "multistart"])
def test_set_encoders_decode_a_row_alike_alone_and_in_a_batch(kind, strategy):
    task, rng = get_task("tsp"), np.random.default_rng(1)
    instances = [rng.random((n, 2)) for n in (6, 3, 7, 4)]
    options = DecodeOptions(**spelled(strategy), beam_width=3)
    assert_alone_equals_batched(make_model(kind, 2), task, instances, options)


def every_output(task_name, n):
    """Every output the task's masks allow for n inputs, as 0-based lists."""
    if task_name == "tsp":  # a tour from city 0, closed
        return [[0, *p, 0] for p in itertools.permutations(range(1, n))]
    return [list(p) for p in itertools.permutations(range(n))]


@pytest.mark.parametrize("task_name, n", [("tsp", 5), ("sort", 4)])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_beam_as_wide_as_the_outputs_finds_the_likeliest_of_all(kind, task_name, n):
    """Oracle: enumerate every output the masks allow and score each by teacher forcing."""
    task, rng = get_task(task_name), np.random.default_rng(1)
    points = rng.random((n, task.dim))
    outputs = every_output(task_name, n)
    tokens = torch.tensor([[i + 1 for i in seq] + [0] for seq in outputs])
    model = make_model(kind, task.dim)
    batch = collate([points] * len(outputs))
    with torch.no_grad():
        scores = masked_sequence_log_likelihood(
            model, task, batch.points, batch.lengths, tokens, "task"
        )
    beam = decode(model, task, collate([points]), DecodeOptions("beam", beam_width=len(outputs)))
    assert beam.sequences[0].tolist() == outputs[int(scores.argmax())]
    torch.testing.assert_close(beam.log_prob[0], scores.max(), atol=1e-4, rtol=0)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_greedy_is_a_beam_of_one_and_the_multistart_run_from_the_first_input(kind):
    task, rng = get_task("tsp"), np.random.default_rng(4)
    batch = collate([rng.random((n, 2)) for n in (6, 4, 7)])
    model = make_model(kind, 2)
    greedy = decode(model, task, batch, DecodeOptions(), return_probs=True)
    beam = decode(model, task, batch, DecodeOptions("beam", beam_width=1), return_probs=True)
    assert torch.equal(greedy.tokens, beam.tokens)
    assert torch.equal(greedy.log_prob, beam.log_prob) and torch.equal(greedy.probs, beam.probs)
    with torch.no_grad():
        runs, starts = multistart_rows(model, task, batch, "task")
    first = torch.arange(batch.size) * starts  # each instance's run from input 0
    assert torch.equal(runs.tokens[first, : greedy.tokens.shape[1]], greedy.tokens)
    torch.testing.assert_close(runs.scores[first], greedy.log_prob, atol=1e-5, rtol=0)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_model_kind_is_the_network_the_decoders_take(kind):
    """The decoders are typed against the ``Network`` protocol, not ``EncoderDecoder``, which
    the heavy and light decoders do not subclass: every kind build_model makes satisfies it."""
    from ptrnet.decoding.interface import Network
    from ptrnet.model.pointer import EncoderDecoder

    model = make_model(kind, 2)
    assert isinstance(model, Network)
    assert isinstance(model, EncoderDecoder) == (kind not in ("heavy", "light"))
