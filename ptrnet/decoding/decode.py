"""Decoding entry points: :func:`decode` (greedy, sampling, beam) and :func:`score_sequences`.

Strategies are chosen by argument and run in the one loop of :mod:`ptrnet.decoding.search`; the
model only supplies logits and the task only supplies the allowed-token masks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ptrnet.batching import Batch
from ptrnet.decoding.beam import BeamSearch, Reranker, pick_beams
from ptrnet.decoding.search import Trace, run_search
from ptrnet.decoding.view_scores import image_tokens, mean_view_log_likelihood
from ptrnet.decoding.views import ViewEnsemble, check_views
from ptrnet.model.pointer import EncoderDecoder
from ptrnet.tasks.base import Task, from_tokens
from ptrnet.tasks.symmetry import (
    MIRROR,
    MIRRORED_VIEWS,
    ROTATION_VIEWS,
    SQUARE_SYMMETRIES,
    square_symmetry_tensor,
)

STRATEGIES = ("greedy", "sample", "beam")


@dataclass(frozen=True)
class DecodeResult:
    """Decoded outputs for a batch of B instances over T executed steps.

    Attributes:
        tokens: (B, T) long model tokens, end token 0 repeated after a row finished (a row may
            lack the end token if it hit the step limit without emitting it).
        log_prob: (B,) float32 log-likelihood of ``tokens`` under the masked step distributions
            (temperature 1, whatever temperature sampled them).
        sequences: B 0-based int64 arrays (:func:`ptrnet.tasks.base.from_tokens`).
        probs: (B, T, n+1) float32 masked distribution at every step (rows sum to 1, zero on
            disallowed tokens), or None unless requested.
    """

    tokens: torch.Tensor
    log_prob: torch.Tensor
    sequences: list[np.ndarray]
    probs: torch.Tensor | None = None


class Greedy:
    """The most likely allowed token at every step."""

    def initial_scores(self, rows: int, device: torch.device) -> torch.Tensor:
        return torch.zeros(rows, device=device)

    def select(
        self, logp: torch.Tensor, scores: torch.Tensor
    ) -> tuple[torch.Tensor, None, torch.Tensor]:
        token = logp.argmax(dim=1)  # (R,)
        return token, None, scores + logp.gather(1, token[:, None])[:, 0]


class Sampling(Greedy):
    """Draws from softmax(masked log-probs / temperature); disallowed tokens have probability 0."""

    def __init__(self, temperature: float, generator: torch.Generator | None) -> None:
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        self.temperature, self.generator = temperature, generator

    def select(
        self, logp: torch.Tensor, scores: torch.Tensor
    ) -> tuple[torch.Tensor, None, torch.Tensor]:
        p = torch.softmax(logp / self.temperature, dim=1)  # (R, V), exactly 0 where masked
        token = torch.multinomial(p, 1, generator=self.generator)[:, 0]  # (R,)
        return token, None, scores + logp.gather(1, token[:, None])[:, 0]


def step_limit(task: Task, lengths: torch.Tensor) -> int:
    """Steps to run: the longest output any row may have, plus one for the end token."""
    return max(task.max_steps(int(n)) for n in lengths.unique().tolist()) + 1


@torch.no_grad()
def decode(
    model: EncoderDecoder,
    task: Task,
    batch: Batch,
    strategy: str = "greedy",
    *,
    constraints: str = "none",
    beam_width: int = 5,
    temperature: float = 1.0,
    generator: torch.Generator | None = None,
    rerank: Reranker | None = None,
    return_probs: bool = False,
    views: int = 1,
) -> DecodeResult:
    """Decode every instance of ``batch`` with ``model``.

    Args:
        strategy: ``greedy``, ``sample`` (``temperature``, ``generator``) or ``beam``
            (``beam_width``; optional ``rerank(points (n, dim), sequence) -> cost``, lower is
            better, applied to the finished beams, e.g. tour length for TSP).
        constraints: ``none`` (only real inputs or end; the paper's hull/Delaunay decoding) or
            ``task`` (the task's legal-next-token rule, e.g. valid tours for TSP).
        return_probs: also return the masked step distributions (B, T, n+1).
        views: 1; 2 or 4 to decode with the model's mean log-probabilities over that many
            rotations of each instance (:mod:`ptrnet.decoding.views`); 8 to do so on the
            instance and on its mirror image and pick by the mean log-likelihood over all eight
            symmetries (:mod:`ptrnet.decoding.view_scores`). 2 or 4 need rotation-invariant
            labels (hull, TSP), 8 a square-symmetric task (also Delaunay:
            :func:`_decode_eight_views`). ``log_prob`` is then the combined score: under the
            product distribution for 2 or 4 views, the eight-view mean for 8.

    Raises:
        ValueError: on an unknown strategy or constraint mode, beam_width < 1, temperature <= 0,
            rerank without beam search, a view count the task cannot use, or return_probs
            with 8 views.
    """
    chooser = _strategy(strategy, batch.size, beam_width, temperature, generator, rerank)
    check_views(task, views)
    width = beam_width if strategy == "beam" else 1
    batch = batch.to(next(model.parameters()).device)
    if views == MIRRORED_VIEWS:
        if return_probs:
            raise ValueError(f"return_probs needs views {', '.join(map(str, ROTATION_VIEWS))}")
        return _decode_eight_views(model, task, batch, chooser, constraints, width, rerank)
    if views > 1:
        model = ViewEnsemble(model, views)
    trace = _search(model, task, batch, chooser, constraints, width, return_probs)
    keep = torch.arange(batch.size, device=batch.points.device)
    if strategy == "beam":
        instances = _instances(batch) if rerank else None
        keep = pick_beams(trace.scores, trace.tokens, trace.done, width, instances, rerank)
    probs = None if trace.probs is None else trace.probs[keep][..., : batch.points.shape[1] + 1]
    return _result(trace.tokens[keep], trace.scores[keep], probs)


def _search(
    model: EncoderDecoder | ViewEnsemble,
    task: Task,
    batch: Batch,
    chooser: Greedy | Sampling | BeamSearch,
    constraints: str,
    width: int,
    keep_probs: bool = False,
) -> Trace:
    """One run of the decoding loop over B instances with ``width`` rows each: (B * width) rows,
    instance-major."""
    rows = torch.arange(batch.size, device=batch.points.device).repeat_interleave(width)
    memory = model.encode(batch.points, batch.lengths)
    if width > 1:
        memory = memory.index(rows)
    dstate = task.decode_state(batch.lengths[rows], constraints)
    limit = step_limit(task, batch.lengths)
    return run_search(model, memory, dstate, limit, chooser, keep_probs=keep_probs)


def _decode_eight_views(
    model: EncoderDecoder,
    task: Task,
    batch: Batch,
    chooser: Greedy | Sampling | BeamSearch,
    constraints: str,
    width: int,
    rerank: Reranker | None,
) -> DecodeResult:
    """``views=8``: search, map each search's outputs back into the instance's own label form,
    then pick among all of them, per instance, the one with the highest mean log-likelihood over
    the eight symmetries (:mod:`ptrnet.decoding.view_scores`), or with ``rerank`` the lowest
    cost. Rotation-invariant labels (hull, TSP): two four-rotation searches, on the instance and
    on its mirror image. Others (Delaunay): one search in each of the eight views."""
    if task.rotation_invariant_labels:
        searches = [(0, ViewEnsemble(model, 4)), (MIRROR, ViewEnsemble(model, 4))]
    else:
        searches = [(which, model) for which in range(SQUARE_SYMMETRIES)]
    instances = _instances(batch)
    traces = [
        _search(member, task, _transformed(batch, which), chooser, constraints, width)
        for which, member in searches
    ]
    steps = max(trace.tokens.shape[1] for trace in traces)
    found = _interleave([trace.scores.isfinite() for trace in traces], width)  # (B * S * w,)
    done = _interleave([trace.done for trace in traces], width)
    rows = torch.arange(batch.size, device=batch.points.device).repeat_interleave(width)
    tokens = _interleave(
        [
            image_tokens(task, [instances[r] for r in rows], _pad_end(t.tokens, steps), which)
            for (which, _), t in zip(searches, traces, strict=True)
        ],
        width,
    )  # (B * S * w, T): each instance's S searches' w outputs, in its own label form
    owner = torch.arange(batch.size, device=tokens.device).repeat_interleave(len(traces) * width)
    # Searches share some outputs (about a tenth of them for TSP at n = 20): score each
    # distinct (instance, output) pair once.
    distinct, inverse = torch.unique(
        torch.cat([owner[:, None], tokens], dim=1), dim=0, return_inverse=True
    )
    scores = mean_view_log_likelihood(
        model, task, batch.points[distinct[:, 0]], batch.lengths[distinct[:, 0]],
        distinct[:, 1:], constraints,
    )[inverse].masked_fill(~found, float("-inf"))  # fmt: skip
    keep = pick_beams(scores, tokens, done, len(traces) * width, instances if rerank else None,
                      rerank)  # fmt: skip
    return _result(tokens[keep], scores[keep], None)


def _transformed(batch: Batch, which: int) -> Batch:
    """The batch's instances under square symmetry ``which`` (same lengths)."""
    return Batch(square_symmetry_tensor(batch.points, which), batch.lengths)


def _pad_end(tokens: torch.Tensor, steps: int) -> torch.Tensor:
    """(R, t) -> (R, steps) with end tokens appended (a finished row repeats its end token)."""
    return torch.nn.functional.pad(tokens, (0, steps - tokens.shape[1]), value=0)


def _interleave(parts: list[torch.Tensor], width: int) -> torch.Tensor:
    """S tensors of (B * w, ...) rows, instance-major -> (B * S * w, ...): each instance's w rows
    of the first, then its w rows of the second, and so on."""
    batch = parts[0].shape[0] // width
    grouped = [p.reshape(batch, width, *p.shape[1:]) for p in parts]
    return torch.cat(grouped, dim=1).reshape(batch * len(parts) * width, *parts[0].shape[1:])


def _result(
    tokens: torch.Tensor, log_prob: torch.Tensor, probs: torch.Tensor | None
) -> DecodeResult:
    return DecodeResult(
        tokens=tokens,
        log_prob=log_prob,
        sequences=[from_tokens(t) for t in tokens.cpu().numpy()],
        probs=probs,
    )


def _strategy(
    strategy: str,
    size: int,
    beam_width: int,
    temperature: float,
    generator: torch.Generator | None,
    rerank: Reranker | None,
) -> Greedy | Sampling | BeamSearch:
    """The token chooser for ``strategy``; rejects options that would be silently ignored."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; choose from {', '.join(STRATEGIES)}")
    if rerank is not None and strategy != "beam":
        raise ValueError("rerank applies to beam search only")
    if strategy == "beam":
        return BeamSearch(size, beam_width)
    if strategy == "sample":
        return Sampling(temperature, generator)
    return Greedy()


def _instances(batch: Batch) -> list[np.ndarray]:
    """Each row's real points (the batch's float32 values) as a float64 (n_b, dim) array."""
    points = batch.points.cpu().double().numpy()
    return [points[b, :n] for b, n in enumerate(batch.lengths.tolist())]


def score_sequences(model: EncoderDecoder, batch: Batch) -> torch.Tensor:
    """(B,) teacher-forced log-likelihood of ``batch.targets`` (pads ignored), no task masks.

    Differentiable; wrap in ``torch.no_grad()`` for evaluation.
    """
    if batch.targets is None:
        raise ValueError("score_sequences needs a batch with targets")
    logp = torch.log_softmax(model(batch.points, batch.lengths, batch.targets), dim=-1)
    targets = batch.targets
    picked = logp.gather(2, targets.clamp(min=0)[..., None])[..., 0]  # (B, T)
    return picked.masked_fill(targets < 0, 0.0).sum(dim=1)
