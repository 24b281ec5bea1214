"""Multi-start greedy decoding: one greedy run from every input, the best one kept.

POMO (Kwon et al. 2020) starts a TSP tour at every city and keeps the shortest. Here a start is
made generic by reading the instance in a rotated order: run s reads inputs ``s, s+1, ...,
n-1, 0, ..., s-1``, so input s comes first, and the task's own rules apply unchanged (a TSP tour
starts at the first input it reads, so run s is a tour from city s). For a Transformer encoder
the rotation changes nothing but the start; for the paper's LSTM it is also another input order,
as a view is. Each run's tokens are mapped back to the original inputs, and ``pick`` keeps, per
instance, the run the model scores highest (``likely``) or the lowest-cost one (``shortest``).
"""

from __future__ import annotations

import torch
from torch import nn

from ptrnet.datasets.batching import Batch
from ptrnet.decoding.beam import Reranker, pick_beams
from ptrnet.decoding.interface import PointerMemory, PointerModel, State
from ptrnet.decoding.search import DecodingError, SearchTrace, batch_instances, search_batch
from ptrnet.decoding.strategies.greedy import Greedy
from ptrnet.model.transformer import copy_rows
from ptrnet.tasks.base import Task


def rotations(lengths: torch.Tensor, width: int) -> torch.Tensor:
    """(B,) lengths -> (B * S, width) long, S = ``width``: row ``b * S + s`` lists which input
    of instance b sits at each position when start s comes first, ``(j + s) % n_b`` for the real
    positions j < n_b (a start s >= n_b repeats start s % n_b) and j itself at the pads."""
    starts = torch.arange(width, device=lengths.device)
    cols = torch.arange(width, device=lengths.device)
    n = lengths.repeat_interleave(width)[:, None]  # (B*S, 1)
    s = starts.repeat(lengths.shape[0])[:, None]  # (B*S, 1)
    rolled = (cols[None, :] + s) % n  # (B*S, width)
    return torch.where(cols[None, :] < n, rolled, cols[None, :].expand_as(rolled))


def rotate(batch: Batch, order: torch.Tensor) -> Batch:
    """The B * S rotated copies of ``batch`` that ``order`` (from :func:`rotations`) lists."""
    rows = copy_rows(batch.size, order)  # (B*S,)
    points = batch.points[rows].gather(1, order[..., None].expand(-1, -1, batch.points.shape[2]))
    return Batch(points, batch.lengths[rows])


class Reordered(nn.Module):
    """``model`` reading the reordered copies ``rotate(batch, order)`` of ``batch`` with each
    instance encoded once, for a network whose encoder reads a set (``encodes_orders``: a
    copy's encoding is the instance's, reordered; ``model`` may wrap it, as
    DistributedDataParallel does, and passes ``order=`` on). ``encode`` and the teacher-forced
    call take those copies, as the search and the likelihood pass them, and read ``batch``
    instead."""

    def __init__(self, model: nn.Module, batch: Batch, order: torch.Tensor) -> None:
        super().__init__()
        self.model, self.batch, self.order = model, batch, order

    def _check(self, points: torch.Tensor) -> None:
        if points.shape[0] != self.order.shape[0]:
            copies = self.order.shape[0]
            raise ValueError(f"{points.shape[0]} rows: these are not the {copies} copies")

    def encode(self, points: torch.Tensor, lengths: torch.Tensor) -> PointerMemory:
        self._check(points)
        return self.model.encode(self.batch.points, self.batch.lengths, order=self.order)

    def step(
        self, memory: PointerMemory, prev_token: torch.Tensor, state: State
    ) -> tuple[torch.Tensor, State]:
        return self.model.step(memory, prev_token, state)

    def forward(
        self, points: torch.Tensor, lengths: torch.Tensor, targets: torch.Tensor
    ) -> torch.Tensor:
        self._check(points)
        return self.model(self.batch.points, self.batch.lengths, targets, order=self.order)


def reordered(model: nn.Module, batch: Batch, order: torch.Tensor) -> tuple[nn.Module, Batch]:
    """The copies ``rotate(batch, order)`` (R rows) and what reads them: :class:`Reordered`
    when the network has ``encodes_orders``, else ``model`` itself."""
    copies = rotate(batch, order)
    if getattr(model, "encodes_orders", False):
        return Reordered(model, batch, order), copies
    return model, copies


def unrotate_tokens(tokens: torch.Tensor, order: torch.Tensor) -> torch.Tensor:
    """Tokens (R, T) over rotated inputs -> the same outputs as tokens over the original ones
    (token j >= 1 = rotated input j - 1 = original input ``order[j - 1]``; 0 stays the end)."""
    original = order.gather(1, (tokens - 1).clamp(min=0)) + 1  # (R, T)
    return torch.where(tokens > 0, original, tokens)


def unrotate_probs(probs: torch.Tensor, order: torch.Tensor) -> torch.Tensor:
    """Step distributions (R, T, V) over rotated tokens -> over the original tokens."""
    columns = torch.cat([torch.zeros_like(order[:, :1]), order + 1], dim=1)  # (R, n+1)
    index = columns[:, None, :].expand(-1, probs.shape[1], -1)
    out = probs.clone()
    out[..., : columns.shape[1]] = 0.0
    return out.scatter_(2, index, probs[..., : columns.shape[1]])


def multistart_rows(
    model: PointerModel,
    task: Task,
    batch: Batch,
    constraints: str,
    keep_probs: bool = False,
) -> tuple[SearchTrace, int]:
    """Greedy runs of ``model`` (the network, or a view ensemble with ``average_views``) from
    every start of every instance: a trace of B * S rows (instance-major) whose tokens and
    distributions are over the original inputs, and S = the longest n."""
    width = batch.points.shape[1]
    order = rotations(batch.lengths, width)  # (B*S, N)
    reader, copies = reordered(model, batch, order)
    try:
        trace = search_batch(reader, task, copies, Greedy(), constraints, 1, keep_probs)
    except DecodingError as err:  # a rotated copy of instance err.instance // width
        raise err.renumbered(err.instance // width) from None
    probs = None if trace.probs is None else unrotate_probs(trace.probs, order)
    tokens = unrotate_tokens(trace.tokens, order)
    return SearchTrace(tokens=tokens, scores=trace.scores, probs=probs, done=trace.done), width


def decode_multistart(
    model: PointerModel,
    task: Task,
    batch: Batch,
    constraints: str,
    rerank: Reranker | None,
    keep_probs: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """One output per instance: the best start by the model's score, or by ``rerank`` (a cost,
    lower is better) among the finished runs. Returns tokens (B, T), their scores (B,) and the
    masked distributions (B, T, n+1) or None."""
    trace, width = multistart_rows(model, task, batch, constraints, keep_probs)
    instances = batch_instances(batch) if rerank else None
    keep = pick_beams(trace.scores, trace.tokens, trace.done, width, instances, rerank)
    probs = None if trace.probs is None else trace.probs[keep][..., : batch.points.shape[1] + 1]
    return trace.tokens[keep], trace.scores[keep], probs
