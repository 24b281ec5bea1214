"""Multi-view decoding: one model read through several rotations of each instance at once.

A rotation of the unit square about its centre keeps a hull or an optimal tour, and for tasks
with ``rotation_invariant_labels`` it keeps the label sequence index for index. So the model's
step distributions on each rotated copy are distributions over the same next token, and their
product is a sharper one (a product of experts, as in test-time augmentation):

    log p(token | prefix) = log_softmax(mean_v log p_v(token | prefix))

:class:`ViewEnsemble` wraps a model so that its ``step`` returns that mean; the decoding loop
renormalises it over the allowed tokens, so greedy, sampling, beam search and multistart (most
likely or shortest output) all run unchanged on the combined distribution (``average_views``,
:func:`averaged`). The cost is one encoder and one decoder pass per view. Reflections are left
out: they turn a counter-clockwise label clockwise, so their step distributions are over a
different sequence. Eight-view search (``search_views=8``) brings them in after the search
(:func:`decode_eight_views`, :mod:`ptrnet.decoding.view_scores`). Multistart on several views
(``multistart`` 2, 4, 8) is POMO's augmentation: every start of every view searched on its own,
one pick among all of them (:func:`decode_multistart_views`).

Which view options a task can use is checked with the other options, by
:func:`ptrnet.decoding.checks.check_views`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ptrnet.datasets.batching import Batch
from ptrnet.decoding.beam import Reranker, pick_beams
from ptrnet.decoding.interface import Network, PointerModel
from ptrnet.decoding.multistart import multistart_rows
from ptrnet.decoding.options import DecodeOptions
from ptrnet.decoding.search import (
    SearchTrace,
    Strategy,
    batch_instances,
    search_batch,
)
from ptrnet.decoding.view_scores import image_tokens, mean_view_log_likelihood
from ptrnet.model.pointer import Memory, State
from ptrnet.tasks.base import Task
from ptrnet.tasks.symmetry import (
    search_starts,
    square_symmetry_tensor,
    symmetric_views,
    view_symmetries,
)


@dataclass(frozen=True)
class ViewMemory:
    """The members' memories, one per view, all with the same rows (R)."""

    members: tuple[Memory, ...]

    def index(self, rows: torch.Tensor) -> ViewMemory:
        """Re-select rows in every member (beam expansion)."""
        return ViewMemory(tuple(m.index(rows) for m in self.members))

    @property
    def state(self) -> State:
        """The members' initial states concatenated on dim 0: each (V * s0, R, ...)."""
        return join_states([m.state for m in self.members])


def join_states(states: list[State]) -> State:
    """V states, each a tuple of (s0, R, ...) tensors -> one tuple of (V * s0, R, ...) tensors.

    Rows stay on dim 1, so the decoding loop's ``s[:, parent]`` re-selects beams in every view.
    """
    return tuple(torch.cat(parts, dim=0) for parts in zip(*states, strict=True))


def split_state(state: State, views: int) -> list[State]:
    """Inverse of :func:`join_states`."""
    return [tuple(s.chunk(views, dim=0)[v] for s in state) for v in range(views)]


class ViewEnsemble(nn.Module):
    """``model`` decoded on several rotations of each instance, with the mean log-probabilities.

    It has the two methods the decoding loop calls, ``encode`` and ``step``; pass it to
    :func:`ptrnet.decoding.decode` in place of the model. Not for training.
    """

    def __init__(self, model: Network, views: int) -> None:
        super().__init__()
        self.model = model
        self.symmetries = view_symmetries(views)

    def encode(self, points: torch.Tensor, lengths: torch.Tensor) -> ViewMemory:
        """(B, n, 2), (B,) -> the memory of each rotated copy."""
        return ViewMemory(
            tuple(
                self.model.encode(square_symmetry_tensor(points, which), lengths)
                for which in self.symmetries
            )
        )

    def step(
        self, memory: ViewMemory, prev_token: torch.Tensor, state: State
    ) -> tuple[torch.Tensor, State]:
        """Previous token (R,) -> mean log-probabilities (R, V) float32 (-inf where no view has
        the column), next joined state."""
        logps, states = [], []
        for member, part in zip(
            memory.members, split_state(state, len(self.symmetries)), strict=True
        ):
            logits, new = self.model.step(member, prev_token, part)  # (R, V)
            logps.append(torch.log_softmax(logits.float(), dim=-1))
            states.append(new)
        return torch.stack(logps).mean(dim=0), join_states(states)


def averaged(model: PointerModel, views: int) -> PointerModel:
    """What a search reads with ``average_views=views``: ``model`` itself for 1, else the
    :class:`ViewEnsemble` of that many rotations."""
    return model if views == 1 else ViewEnsemble(model, views)


def decode_eight_views(
    model: PointerModel,
    task: Task,
    batch: Batch,
    strategy: Strategy,
    options: DecodeOptions,
    rerank: Reranker | None,
    keep_probs: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, None]:
    """``search_views=8``: search from every symmetry of the square, map each search's outputs
    back into the instance's own label form, then pick among all of them, per instance, the one
    with the highest mean log-likelihood over the eight symmetries
    (:mod:`ptrnet.decoding.view_scores`), or with ``rerank`` the lowest cost. Each search
    averages ``options.average_views`` rotations, so symmetries those rotations join share one
    search (:func:`ptrnet.tasks.symmetry.search_starts`): with 4 (hull, TSP), two searches, on
    the instance and on its mirror image; with 1 (Delaunay), eight. ``options`` already checked
    against ``task``. Returns tokens (B, T), scores (B,) and None (no distributions).

    Raises:
        ValueError: ``keep_probs`` (the eight views' score has no step distributions).
    """
    if keep_probs:
        raise ValueError("return_probs needs search_views 1")
    reader = averaged(model, options.average_views)
    symmetries = search_starts(options.average_views)
    width, constraints = options.width, options.constraints
    instances = batch_instances(batch)
    traces = [
        search_batch(reader, task, _transformed(batch, which), strategy, constraints, width)
        for which in symmetries
    ]
    tokens, done = _pool(task, instances, symmetries, traces, width)  # (B * S * w, T), (B*S*w,)
    found = _interleave([trace.scores.isfinite() for trace in traces], width)  # (B * S * w,)
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
    return tokens[keep], scores[keep], None


def decode_multistart_views(
    model: PointerModel,
    task: Task,
    batch: Batch,
    views: int,
    constraints: str,
    rerank: Reranker | None,
    keep_probs: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, None]:
    """Multistart on ``views`` (2, 4 or 8) symmetric copies of each instance, POMO's
    augmentation (Kwon et al. 2020): the greedy runs of ``model`` (the network, or a
    :class:`ViewEnsemble` with ``average_views``) from every start of the rotations (2 or 4) or
    of all eight symmetries of the square (8), each searched on its own, mapped back
    into the instance's label form; per instance, the most likely of all views x starts runs
    (each scored in its own view) or, with ``rerank``, the lowest-cost finished one. Returns
    tokens (B, T), scores (B,) and None (no distributions).

    Raises:
        ValueError: ``keep_probs`` (each view's distributions are over its own reading).
    """
    if keep_probs:
        raise ValueError("return_probs needs multistart 1 (one view)")
    symmetries = symmetric_views(views)
    instances = batch_instances(batch)
    runs = [multistart_rows(model, task, _transformed(batch, which), constraints)
            for which in symmetries]  # fmt: skip
    traces, starts = [trace for trace, _ in runs], runs[0][1]
    tokens, done = _pool(task, instances, symmetries, traces, starts)  # (B * V * S, T), (B*V*S,)
    scores = _interleave([trace.scores for trace in traces], starts)
    keep = pick_beams(scores, tokens, done, len(traces) * starts, instances if rerank else None,
                      rerank)  # fmt: skip
    return tokens[keep], scores[keep], None


def _pool(
    task: Task,
    instances: list[np.ndarray],
    symmetries: Sequence[int],
    traces: list[SearchTrace],
    width: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """S searches of the same B instances, search s on their images under ``symmetries[s]``
    with ``width`` rows per instance (instance-major) -> all their outputs (B * S * w, T) in each
    instance's own label form, end-padded to the longest, and (B * S * w,) done: each
    instance's w rows of the first search, then its w rows of the second, and so on."""
    steps = max(trace.tokens.shape[1] for trace in traces)
    owners = [points for points in instances for _ in range(width)]  # row b*w + j: instance b
    images = [
        image_tokens(task, owners, _pad_end(trace.tokens, steps), which)
        for which, trace in zip(symmetries, traces, strict=True)
    ]
    return _interleave(images, width), _interleave([trace.done for trace in traces], width)


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
