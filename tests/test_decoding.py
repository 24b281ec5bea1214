"""Decoding contracts: masks, greedy/sample/beam, exhaustive beam, scoring, probabilities."""

import itertools

import numpy as np
import pytest
import torch
from tiny_models import TRANSFORMER

from ptrnet.datasets.batching import IGNORE_INDEX, Batch, collate
from ptrnet.decoding.decode import decode, score_sequences
from ptrnet.decoding.options import DecodeOptions
from ptrnet.decoding.pointer_decoder import masked_log_probs
from ptrnet.model import ModelConfig, build_model
from ptrnet.tasks import POINT_TASKS, get_task
from ptrnet.tasks.constraints import DecodeState

torch.set_num_threads(1)

SORT = get_task("sort")


def spelled(strategy: str) -> dict:
    """The DecodeOptions fields of a strategy name: multistart is an option of its own."""
    return {"multistart": 1} if strategy == "multistart" else {"strategy": strategy}


def make_model(kind="pointer", input_dim=1, hidden=16, seed=0, scale=1.0, max_n=None):
    """A tiny model; ``kind`` ``transformer`` is the pointer model with :data:`TRANSFORMER`."""
    torch.manual_seed(seed)
    extra = TRANSFORMER if kind == "transformer" else {}
    kind = "pointer" if kind == "transformer" else kind
    cfg = ModelConfig(
        kind=kind,
        input_dim=input_dim,
        hidden=hidden,
        init="default",
        max_n=max_n if kind != "pointer" else None,
        **extra,
    )
    model = build_model(cfg).eval()
    with torch.no_grad():  # sharper distributions make ties and near-ties unlikely
        for p in model.parameters():
            p.mul_(scale)
    return model


def make_batch(sizes, dim=1, seed=0, extra_pad=0, pad_value=0.0):
    rng = np.random.default_rng(seed)
    batch = collate([rng.random((n, dim)) for n in sizes])
    pad = torch.full((batch.size, extra_pad, dim), pad_value)
    return Batch(torch.cat([batch.points, pad], dim=1), batch.lengths)


def constrained_log_prob(model, task, batch, tokens, mode):
    """(R,) log-likelihood of token rows (R, L) under the masked step distributions, by hand."""
    memory = model.encode(batch.points, batch.lengths)
    state, dstate = memory.state, task.decode_state(batch.lengths, mode)
    prev, total = torch.zeros_like(batch.lengths), torch.zeros(tokens.shape[0])
    for t in range(tokens.shape[1]):
        logits, state = model.step(memory, prev, state)
        logp = masked_log_probs(logits, dstate.allowed())
        total = total + logp.gather(1, tokens[:, t, None])[:, 0]
        dstate, prev = dstate.update(tokens[:, t]), tokens[:, t]
    return total


def end_to_ignore(tokens, limits):
    """Teacher-forcing targets from decoded tokens: everything after the first end ignored, and
    after a row's ``limits`` (B,) tokens, where a row cut off at its step limit has the end
    tokens of padding, not of its own choosing."""
    ended = torch.cumsum(tokens == 0, dim=1) - (tokens == 0).long()
    past = torch.arange(tokens.shape[1])[None, :] >= limits[:, None]
    return tokens.masked_fill((ended > 0) | past, IGNORE_INDEX)


# --- the masked step distribution (trap 3) ---


def test_masked_log_probs_only_end_allowed_and_no_mutation():
    logits = torch.tensor([[3.0, 50.0, -2.0, float("-inf")], [0.0, 1.0, 2.0, 3.0]])
    allowed = torch.tensor([[True, False, False, False], [False, True, True, False]])
    before = allowed.clone()
    logp = masked_log_probs(logits, allowed[:, :3])  # narrower mask: extra column disallowed
    assert not torch.isnan(logp).any() and torch.equal(allowed, before)
    assert logp[0].tolist() == [0.0, float("-inf"), float("-inf"), float("-inf")]
    torch.testing.assert_close(logp[1].exp().sum(), torch.tensor(1.0))
    assert torch.isneginf(logp[1, [0, 3]]).all()


def test_allowed_masks_are_never_mutated(monkeypatch):
    seen = []
    original = DecodeState.allowed

    def recording(self):
        mask = original(self)
        seen.append((mask, mask.clone()))
        return mask

    monkeypatch.setattr(DecodeState, "allowed", recording)
    decode(
        make_model(),
        SORT,
        make_batch([4, 2, 3]),
        DecodeOptions("beam", constraints="task", beam_width=3),
    )
    assert len(seen) >= 4
    assert all(torch.equal(mask, copy) for mask, copy in seen)


# --- constraints, padding and validity across strategies ---


@pytest.mark.parametrize("kind", ["pointer", "transformer"])
@pytest.mark.parametrize("strategy", ["greedy", "sample", "beam", "multistart"])
@pytest.mark.parametrize("mode", ["none", "task"])
def test_pad_columns_never_chosen(strategy, mode, kind):
    batch = make_batch([5, 2, 3, 1], extra_pad=2, pad_value=1e6)
    result = decode(
        make_model(kind),
        SORT,
        batch,
        DecodeOptions(**spelled(strategy), constraints=mode, beam_width=3),
        generator=torch.Generator().manual_seed(0),
        return_probs=True,
    )
    assert result.tokens.shape[0] == 4 and result.probs.shape[2] == 8
    assert (result.tokens <= batch.lengths[:, None]).all()
    assert not torch.isnan(result.log_prob).any() and torch.isfinite(result.log_prob).all()
    for seq, n in zip(result.sequences, batch.lengths.tolist(), strict=True):
        assert ((seq >= 0) & (seq < n)).all()
        if mode == "task":
            assert SORT.is_valid(np.zeros((n, 1)), seq)


@pytest.mark.parametrize("kind", ["pointer", "transformer"])
@pytest.mark.parametrize("name", sorted(POINT_TASKS))
@pytest.mark.parametrize("strategy", ["greedy", "beam", "multistart"])
def test_task_constraints_on_every_task(name, strategy, kind):
    task = POINT_TASKS[name]
    rng = np.random.default_rng(0)  # instances the task takes (a routing depot's row first)
    points = [task.sample_points(rng, n) for n in (max(task.min_n, 5), max(task.min_n, 4), 6)]
    sizes = [len(p) for p in points]
    batch = collate(points)
    model = make_model(kind, input_dim=task.dim, scale=3.0)
    options = DecodeOptions(**spelled(strategy), constraints="task", beam_width=3)
    result = decode(model, task, batch, options)
    assert result.tokens.shape[1] <= task.max_steps(max(sizes)) + 1
    for seq, n in zip(result.sequences, sizes, strict=True):
        assert ((seq >= 0) & (seq < n)).all() and len(seq) <= task.max_steps(n)
        if name in ("sort", "tsp"):  # their rules admit only valid outputs
            assert task.is_valid(np.zeros((n, task.dim)), seq)


def test_sampling_never_picks_masked_tokens():
    """Many draws at high temperature: every sample is a permutation (task mode)."""
    model = make_model(scale=0.1)  # near-uniform distributions
    rows = 400
    batch = make_batch([3] * rows + [5] * rows, extra_pad=1)
    gen = torch.Generator().manual_seed(0)
    result = decode(
        model,
        SORT,
        batch,
        DecodeOptions("sample", constraints="task", temperature=5.0),
        generator=gen,
    )
    firsts = {int(t) for t in result.tokens[:rows, 0]}
    assert firsts == {1, 2, 3}  # the sampler does explore every allowed token
    for seq, n in zip(result.sequences, batch.lengths.tolist(), strict=True):
        assert SORT.is_valid(np.zeros((n, 1)), seq)


def test_sampling_is_reproducible_with_a_generator():
    model, batch = make_model(scale=0.3), make_batch([6, 4] * 10)
    runs = [
        decode(
            model,
            SORT,
            batch,
            DecodeOptions("sample", constraints="none"),
            generator=torch.Generator().manual_seed(7),
        )
        for _ in range(2)
    ]
    assert torch.equal(runs[0].tokens, runs[1].tokens)


# --- beam search ---


@pytest.mark.parametrize("mode", ["none", "task"])
@pytest.mark.parametrize("kind", ["pointer", "attention", "transformer"])
def test_beam_width_one_equals_greedy(mode, kind):
    model = make_model(kind, scale=2.0, max_n=7)
    batch = make_batch([7, 3, 5, 1, 6], extra_pad=1)
    greedy = decode(
        model, SORT, batch, DecodeOptions("greedy", constraints=mode), return_probs=True
    )
    beam = decode(
        model, SORT, batch, DecodeOptions("beam", constraints=mode, beam_width=1), return_probs=True
    )
    assert torch.equal(greedy.tokens, beam.tokens)
    assert torch.equal(greedy.log_prob, beam.log_prob)
    assert torch.equal(greedy.probs, beam.probs)


def all_outputs(n, length):
    """Every token string of ``length`` over 0..n in which 0 only repeats after the first 0."""
    rows = [
        list(body) + [0] * (length - len(body))
        for size in range(length + 1)
        for body in itertools.product(range(1, n + 1), repeat=size)
    ]
    return torch.tensor(rows)


@pytest.mark.parametrize("mode, n, width", [("task", 4, 24), ("none", 2, 64)])
def test_beam_is_exhaustive_when_wide_enough(mode, n, width):
    """With k at least the number of prefixes, beam search returns the most likely output."""
    model = make_model(scale=2.0)
    batch = make_batch([n], seed=3)
    beam = decode(model, SORT, batch, DecodeOptions("beam", constraints=mode, beam_width=width))
    candidates = all_outputs(n, SORT.max_steps(n) + 1)
    rows = torch.zeros(len(candidates), dtype=torch.long)
    scores = constrained_log_prob(
        model, SORT, Batch(batch.points[rows], batch.lengths[rows]), candidates, mode
    )
    assert torch.isfinite(scores).sum() > 1
    torch.testing.assert_close(beam.log_prob[0], scores.max(), atol=1e-5, rtol=0)
    greedy = decode(model, SORT, batch, DecodeOptions("greedy", constraints=mode))
    assert beam.log_prob[0] >= greedy.log_prob[0] - 1e-6


def test_beam_log_prob_and_probs_match_its_tokens():
    model, batch = make_model(scale=2.0), make_batch([6, 3, 5], extra_pad=1)
    beam = decode(
        model,
        SORT,
        batch,
        DecodeOptions("beam", constraints="task", beam_width=4),
        return_probs=True,
    )
    recomputed = constrained_log_prob(model, SORT, batch, beam.tokens, "task")
    torch.testing.assert_close(beam.log_prob, recomputed, atol=1e-5, rtol=0)
    chosen = beam.probs.gather(2, beam.tokens[..., None])[..., 0].log().sum(dim=1)
    torch.testing.assert_close(chosen, beam.log_prob, atol=1e-5, rtol=0)
    torch.testing.assert_close(beam.probs.sum(-1), torch.ones(beam.probs.shape[:2]))


def test_beam_rerank_chooses_lowest_cost_finished_beam():
    model, batch = make_model(scale=2.0), make_batch([4, 3], seed=5)
    seen = []

    def cost(points, seq):  # prefer the reversed order; check the contract on the way
        seen.append(points.shape)
        return 0.0 if np.array_equal(seq, np.arange(len(points))[::-1]) else 1.0

    result = decode(
        model, SORT, batch, DecodeOptions("beam", constraints="task", beam_width=24), rerank=cost
    )
    assert np.array_equal(result.sequences[0], [3, 2, 1, 0])
    assert np.array_equal(result.sequences[1], [2, 1, 0])
    assert set(seen) == {(4, 1), (3, 1)}


# --- scoring and probabilities ---


@pytest.mark.parametrize("kind", ["pointer", "seq2seq", "attention"])
def test_score_sequences_matches_stepwise_decoding(kind):
    model = make_model(kind, max_n=6)
    rng = np.random.default_rng(4)
    points = [rng.random((n, 1)) for n in (6, 2, 4)]
    batch = collate(points, [rng.permutation(len(p)) for p in points])
    teacher = score_sequences(model, batch)
    by_step = constrained_log_prob(model, SORT, batch, batch.targets.clamp(min=0), "none")
    torch.testing.assert_close(teacher, by_step, atol=1e-5, rtol=0)


def test_greedy_log_prob_equals_score_of_its_output():
    model, batch = make_model(), make_batch([5, 3, 4])
    result = decode(
        model, SORT, batch, DecodeOptions("greedy", constraints="none"), return_probs=True
    )
    limits = SORT.max_steps(batch.lengths) + 1
    scored = score_sequences(
        model, Batch(batch.points, batch.lengths, end_to_ignore(result.tokens, limits))
    )
    torch.testing.assert_close(result.log_prob, scored, atol=1e-5, rtol=0)
    assert torch.equal(result.probs.argmax(dim=2), result.tokens)


def test_unknown_options_raise():
    model, batch = make_model(), make_batch([3])
    with pytest.raises(ValueError, match="strategy"):
        decode(model, SORT, batch, DecodeOptions("topk", constraints="none"))
    with pytest.raises(ValueError):
        decode(model, SORT, batch, DecodeOptions("greedy", constraints="strict"))
    with pytest.raises(ValueError):
        decode(model, SORT, batch, DecodeOptions("beam", beam_width=0, constraints="none"))
    with pytest.raises(ValueError):
        decode(model, SORT, batch, DecodeOptions("sample", temperature=0.0, constraints="none"))
    with pytest.raises(ValueError, match="rerank"):
        decode(
            model,
            SORT,
            batch,
            DecodeOptions("greedy", constraints="none"),
            rerank=lambda points, seq: 0.0,
        )


@pytest.mark.parametrize("strategy", ["greedy", "sample", "beam"])
def test_extreme_logits_give_no_nan(strategy):
    model, batch = make_model(scale=100.0), make_batch([5, 2, 4])
    for mode in ("none", "task"):
        result = decode(
            model,
            SORT,
            batch,
            DecodeOptions(strategy, constraints=mode),
            return_probs=True,
            generator=torch.Generator().manual_seed(0),
        )
        assert torch.isfinite(result.log_prob).all() and not torch.isnan(result.probs).any()
