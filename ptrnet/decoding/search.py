"""The one autoregressive loop every model and decoding strategy shares (:func:`run_search`),
and the pointer models' batch search through it (:func:`search_batch`).

A model takes part through a :class:`~ptrnet.decoding.decoder.Decoder` (the pointer models'
is :class:`~ptrnet.decoding.pointer_decoder.PointerDecoder`, the pointer-generator's
:class:`ptrnet.text.decoder.SentenceDecoder`): state in, log-probabilities of the next outputs
out. A strategy only chooses tokens: given those log-probabilities of every row it returns the
next tokens, the row each continues (its parent; None = the same row) and the running scores.
The loop owns the order of calls and the history.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Protocol

import numpy as np
import torch

from ptrnet.datasets.batching import Batch
from ptrnet.decoding.beam import Reranker, pick_beams
from ptrnet.decoding.decoder import Decoder, S
from ptrnet.decoding.interface import PointerModel
from ptrnet.decoding.pointer_decoder import PointerDecoder
from ptrnet.io.errors import UsageError
from ptrnet.tasks.base import Task


class DecodingError(UsageError, ValueError):
    """An instance the decoder has no trustworthy output for: the model's scores are not finite
    numbers, or the output breaks the constraints it was decoded under. ``str`` is one line,
    ``instance I: problem`` (I 1-based, counted in the batch or dataset the caller passed).

    A :class:`~ptrnet.io.errors.UsageError`, so the command line prints its line, and a
    ValueError, as the Python API raises for bad input.
    """

    def __init__(self, instance: int, problem: str) -> None:
        self.instance = instance  # 0-based
        self.problem = problem
        super().__init__(f"instance {instance + 1}: {problem}")

    def renumbered(self, instance: int) -> DecodingError:
        """The same problem, for instance ``instance`` (0-based) of a larger collection."""
        return DecodingError(instance, self.problem)


class Strategy(Protocol):
    """Chooses tokens from masked log-probabilities."""

    def initial_scores(self, rows: int, device: torch.device) -> torch.Tensor:
        """(R,) float32 scores before the first step."""
        ...

    def select(
        self, logp: torch.Tensor, scores: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]:
        """(R, V) log-probs, (R,) scores -> tokens (R,), parent rows (R,) or None, scores (R,)."""
        ...


@dataclass(frozen=True)
class SearchTrace:
    """What one pointer-model search (:func:`search_batch`) produced, per row (R rows).

    Attributes:
        tokens: (R, T) long, the end token repeated after a row has finished.
        scores: (R,) float32, the strategy's running score (total log-likelihood of ``tokens``).
        probs: (R, T, V) float32 masked distribution at every step, or None.
        done: (R,) bool, whether the row emitted the end token (not cut off at its limit).
    """

    tokens: torch.Tensor
    scores: torch.Tensor
    probs: torch.Tensor | None
    done: torch.Tensor


@dataclass(frozen=True)
class SearchResult(Generic[S]):
    """What :func:`run_search` found for R rows.

    Attributes:
        tokens: (R, T) long, each row's outputs (a finished row's filler repeated after it).
        scores: (R,) float32, the strategy's running score (total log-probability of ``tokens``).
        probs: (R, T, V) float32, ``exp`` of every step's log-probabilities, or None.
        state: the decoder's state after the last step, rows in the order of ``tokens``.
    """

    tokens: torch.Tensor
    scores: torch.Tensor
    probs: torch.Tensor | None
    state: S


def run_search(
    decoder: Decoder[S], max_steps: int, strategy: Strategy, keep_probs: bool = False
) -> SearchResult[S]:
    """Decode at most ``max_steps`` outputs for every row of ``decoder``, stopping early when
    all rows are finished: the one loop of every model and strategy.

    When the strategy reorders rows (beam search) the decoder re-selects its state by parent
    (:meth:`Decoder.reorder`); histories are rebuilt at the end by following parent pointers.

    Raises:
        DecodingError: a row whose log-probabilities hold NaN (:func:`check_finite`), naming
            the row as ``instance``.
    """
    state = decoder.start()
    first = decoder.finished(state)  # (R,)
    rows, device = first.shape[0], first.device
    scores = strategy.initial_scores(rows, device)
    history = []  # per step: (tokens (R,), parents (R,) or None, log-probs (R, V) or None)
    for step in range(max_steps):
        if bool(decoder.finished(state).all()):
            break
        logp, state = decoder.step(state)  # (R, V)
        check_finite(logp, step)
        token, parent, scores = strategy.select(logp, scores)
        if parent is not None:
            state = decoder.reorder(state, parent)
        history.append((token, parent, logp if keep_probs else None))
        state = decoder.advance(state, token)
    tokens, probs = _backtrack(history, rows, device)
    return SearchResult(tokens=tokens, scores=scores, probs=probs, state=state)


def check_finite(logp: torch.Tensor, step: int) -> None:
    """Raise DecodingError, naming the first row (as ``instance``), when a row of the masked
    log-probabilities (R, V) holds NaN: its logits were NaN or infinite at an allowed token (a
    model whose weights overflow float32 on this input), so no output of it can be trusted."""
    if bool(torch.isnan(logp).any()):
        row = int(torch.isnan(logp).any(dim=1).nonzero()[0, 0])  # the first broken row
        raise DecodingError(
            row,
            f"the model's scores are not finite numbers (NaN or infinity) at output step "
            f"{step + 1}: its weights overflow float32 on this input, so it has no output",
        )


def _backtrack(
    history: list, rows: int, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Follow parent pointers from the last step: -> tokens (R, T), probs (R, T, V) or None."""
    row = None  # each row its own until a step reordered rows (no index to take before then)
    tokens, probs = [], []
    for token, parent, logp in reversed(history):
        # the row the step's input came from
        source = row if parent is None else parent if row is None else parent[row]
        tokens.append(token if row is None else token[row])
        if logp is not None:
            probs.append((logp if source is None else logp[source]).exp())
        row = source
    if not tokens:
        return torch.zeros(rows, 0, dtype=torch.long, device=device), None
    stacked = torch.stack(probs[::-1], dim=1) if probs else None  # (R, T, V)
    return torch.stack(tokens[::-1], dim=1), stacked


def step_limit(task: Task, lengths: torch.Tensor) -> int:
    """Steps to run: the longest output any row may have, plus one for the end token."""
    return max(task.max_steps(int(n)) for n in lengths.unique().tolist()) + 1


def search_batch(
    model: PointerModel,
    task: Task,
    batch: Batch,
    strategy: Strategy,
    constraints: str,
    width: int,
    keep_probs: bool = False,
) -> SearchTrace:
    """One run of the decoding loop over B instances with ``width`` rows each: (B * width) rows,
    instance-major.

    Raises:
        DecodingError: an instance whose model scores are not finite (:func:`check_finite`),
            naming its index in ``batch``.
    """
    rows = torch.arange(batch.size, device=batch.points.device).repeat_interleave(width)
    memory = model.encode(batch.points, batch.lengths)
    if width > 1:
        memory = memory.index(rows)
    rules = task.decode_state(batch.lengths[rows], constraints, batch.points[rows])
    limit = step_limit(task, batch.lengths)
    try:
        found = run_search(PointerDecoder(model, memory, rules), limit, strategy, keep_probs)
    except DecodingError as err:  # beams reorder rows within an instance only
        raise err.renumbered(err.instance // width) from None
    return SearchTrace(found.tokens, found.scores, found.probs, found.state.ended)


def pick_rows(
    trace: SearchTrace, batch: Batch, width: int, rerank: Reranker | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """One row per instance of a :func:`search_batch` trace: the best of its ``width`` beams
    (:func:`ptrnet.decoding.beam.pick_beams`). Returns tokens (B, T), scores (B,) and the
    masked distributions (B, T, n+1) or None."""
    keep = torch.arange(batch.size, device=batch.points.device)
    if width > 1:
        instances = batch_instances(batch) if rerank else None
        keep = pick_beams(trace.scores, trace.tokens, trace.done, width, instances, rerank)
    probs = None if trace.probs is None else trace.probs[keep][..., : batch.points.shape[1] + 1]
    return trace.tokens[keep], trace.scores[keep], probs


def batch_instances(batch: Batch) -> list[np.ndarray]:
    """Each row's real points (the batch's float32 values) as a float64 (n_b, dim) array."""
    points = batch.points.cpu().double().numpy()
    return [points[b, :n] for b, n in enumerate(batch.lengths.tolist())]
