"""Multi-start greedy decoding: one greedy run from every input, the best one kept.

POMO (Kwon et al. 2020) starts a TSP tour at every city and keeps the shortest. Here a start is
made generic by reading the instance in a rotated order: run s reads inputs ``s, s+1, ...,
n-1, 0, ..., s-1``, so input s comes first, and the task's own rules apply unchanged (a TSP tour
starts at the first input it reads, so run s is a tour from city s). For a Transformer encoder
the rotation changes nothing but the start; for the paper's LSTM it is also another input order,
as a view is. Each run's tokens are mapped back to the original inputs, and ``pick`` keeps, per
instance, the run the model scores highest (``likely``) or the lowest-cost one (``shortest``).

A task whose first input keeps its place (``Task.rotated_starts`` false: a routing instance's
depot) is read as given, once per other input, and run s is made to choose input s + 1 first
(:class:`~ptrnet.decoding.forced_start.ForcedStart`): S = n - 1 runs, one from each customer.
:func:`start_layout` says which of the two a task gets; decoding and the ``pomo`` training
baseline (:mod:`ptrnet.training.losses`) both read it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ptrnet.datasets.batching import Batch
from ptrnet.decoding.beam import Reranker, pick_beams
from ptrnet.decoding.forced_start import ForcedStart
from ptrnet.decoding.interface import PointerMemory, PointerModel, State
from ptrnet.decoding.search import DecodingError, SearchTrace, batch_instances, search_batch
from ptrnet.decoding.strategies.greedy import Greedy
from ptrnet.model.transformer import reordered_inputs, reordered_lengths
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
    return Batch(reordered_inputs(batch.points, order), reordered_lengths(batch.lengths, order))


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


def openings(lengths: torch.Tensor, width: int) -> torch.Tensor:
    """(B,) lengths -> (B * S,) long, S = ``width``: the token run ``b * S + s`` must choose
    first when input 0 keeps its place, input ``1 + s % (n_b - 1)`` (token one more): every
    other input in turn, a start s >= n_b - 1 repeating start s % (n_b - 1). Needs n_b >= 2."""
    others = (lengths - 1).clamp(min=1).repeat_interleave(width)  # (B*S,)
    s = torch.arange(width, device=lengths.device).repeat(lengths.shape[0])  # (B*S,)
    return 2 + s % others


@dataclass(frozen=True)
class Starts:
    """How a task's instances are read once per start (:func:`start_layout`).

    Attributes:
        order: (B * S, N) long, which input copy r reads at each position (:func:`rotations`,
            or the identity where the first input keeps its place).
        openings: (B * S,) long, the token each copy's first step is forced to
            (:func:`openings`), or None: the rotation itself starts each run.
        width: S, the starts per instance.
    """

    order: torch.Tensor
    openings: torch.Tensor | None
    width: int


def start_layout(task: Task, batch: Batch) -> Starts:
    """The starts of ``batch``'s instances (B of them, padded to N inputs): N rotations, or,
    for a task whose first input keeps its place (``rotated_starts`` false), N - 1 readings as
    given, run s forced to choose input ``1 + s`` first (a depot's instance: customer s + 1)."""
    width = batch.points.shape[1]
    if task.rotated_starts:
        return Starts(rotations(batch.lengths, width), None, width)
    starts = max(width - 1, 1)
    order = torch.arange(width, device=batch.points.device).repeat(batch.size * starts, 1)
    return Starts(order, openings(batch.lengths, starts), starts)


def start_readers(
    model: nn.Module, batch: Batch, starts: Starts, scorer: nn.Module | None = None
) -> tuple[nn.Module, nn.Module | None, Batch]:
    """The copies ``rotate(batch, starts.order)`` (B * S rows), what reads them
    (:func:`reordered`, then :class:`ForcedStart` with ``starts.openings``) and, given a
    ``scorer`` (the module the training loss scores through: ``model`` or its
    DistributedDataParallel wrapper), what scores them the same way (None without one)."""
    reader, copies = reordered(model, batch, starts.order)
    if scorer is not None and reader is not model:  # a set encoder: share it with the scorer
        scorer = Reordered(scorer, batch, starts.order)
    if starts.openings is not None:
        reader = ForcedStart(reader, starts.openings)
        scorer = None if scorer is None else ForcedStart(scorer, starts.openings)
    return reader, scorer, copies


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
    every start of every instance (:func:`start_layout`): a trace of B * S rows
    (instance-major) whose tokens and distributions are over the original inputs, and S (the
    longest n, or one less where the first input keeps its place)."""
    starts = start_layout(task, batch)
    width, order = starts.width, starts.order  # S, (B*S, N)
    reader, _, copies = start_readers(model, batch, starts)
    check_openings(task, copies, starts, constraints)
    try:
        trace = search_batch(reader, task, copies, Greedy(), constraints, 1, keep_probs)
    except DecodingError as err:  # a rotated copy of instance err.instance // width
        raise err.renumbered(err.instance // width) from None
    probs = None if trace.probs is None else unrotate_probs(trace.probs, order)
    tokens = unrotate_tokens(trace.tokens, order)
    return SearchTrace(tokens=tokens, scores=trace.scores, probs=probs, done=trace.done), width


def check_openings(task: Task, copies: Batch, starts: Starts, constraints: str) -> None:
    """Raises DecodingError, naming the first instance (its index among the B), when the
    task's rules under ``constraints`` do not allow one of the inputs its runs are forced to
    choose first (a routing customer whose demand is over the capacity); else nothing."""
    if starts.openings is None:
        return
    state = task.decode_state(copies.lengths, constraints, copies.points)
    fits = state.allowed().gather(1, starts.openings[:, None])[:, 0]  # (B*S,)
    if not bool(fits.all()):
        row = int((~fits).nonzero()[0, 0])
        raise DecodingError(
            row // starts.width,
            f"multistart starts a run at every input but the first, and the {task.name} "
            f"task's rules do not allow input {int(starts.openings[row])} first",
        )


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
