"""The one autoregressive loop every decoding strategy shares, and the masked step distribution.

A strategy only chooses tokens: given the masked log-probabilities of every live row it returns
the next tokens, the row each continues (its parent; None = the same row) and the running
scores. The loop owns the model calls, the task's :class:`DecodeState` and the history.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch

from ptrnet.datasets.batching import Batch
from ptrnet.decoding.beam import Reranker, pick_beams
from ptrnet.decoding.interface import Decoder, DecoderMemory
from ptrnet.io.errors import UsageError
from ptrnet.tasks.base import Task
from ptrnet.tasks.constraints import DecodeState


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


def fit_mask(allowed: torch.Tensor, width: int) -> torch.Tensor:
    """Widen a (..., w) allowed mask to (..., width) with False columns (w <= width).

    The decoding state is as wide as the longest row + 1; the model's output can be wider
    (extra padding columns, or a baseline's fixed vocabulary). Those columns are never allowed.
    """
    extra = width - allowed.shape[-1]
    if extra < 0:
        raise ValueError(f"allowed mask has {allowed.shape[-1]} columns, logits only {width}")
    if extra == 0:  # the usual Ptr-Net case: no copy at every step
        return allowed
    return torch.nn.functional.pad(allowed, (0, extra), value=False)


def masked_log_probs(logits: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
    """log-softmax over the allowed tokens: (..., V) logits, (..., <=V) bool -> (..., V) float32.

    Disallowed entries are -inf. A new tensor is built every call; ``allowed`` is never
    modified (masks mutated in place across steps are a known bug of public implementations).
    Every row of a DecodeState mask has an allowed entry, so a row is NaN only when the model's
    logits are not finite numbers where they are allowed (weights that overflow float32):
    :func:`run_search` refuses such rows (:func:`check_finite`).
    """
    keep = fit_mask(allowed, logits.shape[-1])
    return torch.log_softmax(logits.float().masked_fill(~keep, float("-inf")), dim=-1)


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
    """What one decoding run produced, per row (R rows).

    Attributes:
        tokens: (R, T) long, the end token repeated after a row has finished.
        scores: (R,) float32, the strategy's running score (total log-likelihood of ``tokens``).
        probs: (R, T, V) float32 masked distribution at every step, or None.
        done: (R,) bool, whether the row emitted the end token.
    """

    tokens: torch.Tensor
    scores: torch.Tensor
    probs: torch.Tensor | None
    done: torch.Tensor


def run_search(
    model: Decoder,
    memory: DecoderMemory,
    dstate: DecodeState,
    max_steps: int,
    strategy: Strategy,
    keep_probs: bool = False,
) -> SearchTrace:
    """Decode at most ``max_steps`` tokens for every row of ``memory``, stopping early when all
    rows are done. ``dstate`` must have the same rows as ``memory``.

    Each row also stops after its own limit, ``task.max_steps(n_b) + 1`` tokens: past it the
    row may only repeat the end token, at no cost, and counts as not done (cut off). So a row's
    output and score never depend on how long its batch mates are (without the task's budget,
    constraints ``none``, a short row beside a long one would otherwise run on).

    When the strategy reorders rows (beam search), the decoder state and the decoding state are
    gathered by parent; the memory is not, because a strategy only picks parents among rows that
    share one instance's memory. Histories are rebuilt at the end by following parent pointers.
    """
    rows = dstate.done.shape[0]
    device = dstate.done.device
    prev = torch.zeros(rows, dtype=torch.long, device=device)  # token 0 -> start symbol input
    state = memory.state
    scores = strategy.initial_scores(rows, device)
    # Beams only reorder rows of one instance, which share its limit: no re-indexing needed.
    limits = dstate.task.max_steps(dstate.lengths) + 1  # (R,)
    ended = dstate.done  # (R,) emitted the end token before its limit
    history = []  # per step: (tokens (R,), parents (R,) or None, log-probs (R, V) or None)
    for step in range(max_steps):
        if bool(dstate.done.all()):
            break
        logits, state = model.step(memory, prev, state)  # (R, V)
        cut = limits <= step  # (R,)
        logp = masked_log_probs(logits, _end_only(dstate.allowed(), cut))  # (R, V)
        check_finite(logp, step)
        token, parent, scores = strategy.select(logp, scores)
        if parent is not None:
            state = tuple(s[:, parent] for s in state)
            dstate = dstate.index(parent)
            ended = ended[parent]
        history.append((token, parent, logp if keep_probs else None))
        ended = ended | ((token == 0) & ~cut)
        dstate = dstate.update(token)
        prev = token
    tokens, probs = _backtrack(history, rows, device)
    return SearchTrace(tokens=tokens, scores=scores, probs=probs, done=ended)


def check_finite(logp: torch.Tensor, step: int) -> None:
    """Raise DecodingError, naming the first row (as ``instance``), when a row of the masked
    log-probabilities (R, V) holds NaN: its logits were NaN or infinite at an allowed token (a
    model whose weights overflow float32 on this input), so no output of it can be trusted."""
    broken = torch.isnan(logp).any(dim=1)  # (R,)
    if bool(broken.any()):
        row = int(broken.nonzero()[0, 0])
        raise DecodingError(
            row,
            f"the model's scores are not finite numbers (NaN or infinity) at output step "
            f"{step + 1}: its weights overflow float32 on this input, so it has no output",
        )


def _end_only(allowed: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """(R, n+1) allowed mask with only the end token allowed in ``rows`` (R,) bool."""
    if not bool(rows.any()):
        return allowed
    end = torch.zeros_like(allowed)
    end[:, 0] = True
    return torch.where(rows[:, None], end, allowed)


def _backtrack(
    history: list, rows: int, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Follow parent pointers from the last step: -> tokens (R, T), probs (R, T, V) or None."""
    row = torch.arange(rows, device=device)
    tokens, probs = [], []
    for token, parent, logp in reversed(history):
        source = row if parent is None else parent[row]  # the row the step's input came from
        tokens.append(token[row])
        if logp is not None:
            probs.append(logp[source].exp())
        row = source
    if not tokens:
        return torch.zeros(rows, 0, dtype=torch.long, device=device), None
    stacked = torch.stack(probs[::-1], dim=1) if probs else None  # (R, T, V)
    return torch.stack(tokens[::-1], dim=1), stacked


def step_limit(task: Task, lengths: torch.Tensor) -> int:
    """Steps to run: the longest output any row may have, plus one for the end token."""
    return max(task.max_steps(int(n)) for n in lengths.unique().tolist()) + 1


def search_batch(
    model: Decoder,
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
    dstate = task.decode_state(batch.lengths[rows], constraints, batch.points[rows])
    limit = step_limit(task, batch.lengths)
    try:
        return run_search(model, memory, dstate, limit, strategy, keep_probs=keep_probs)
    except DecodingError as err:  # beams reorder rows within an instance only
        raise err.renumbered(err.instance // width) from None


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
