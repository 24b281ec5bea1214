"""Multi-view decoding: one model read through several rotations of each instance at once.

A rotation of the unit square about its centre keeps a hull or an optimal tour, and for tasks
with ``rotation_invariant_labels`` it keeps the label sequence index for index. So the model's
step distributions on each rotated copy are distributions over the same next token, and their
product is a sharper one (a product of experts, as in test-time augmentation):

    log p(token | prefix) = log_softmax(mean_v log p_v(token | prefix))

:class:`ViewEnsemble` wraps a model so that its ``step`` returns that mean; the decoding loop
renormalises it over the allowed tokens, so greedy, sampling and beam search (most likely or
shortest beam) all run unchanged on the combined distribution. The cost is one encoder and one
decoder pass per view. Reflections are left out: they turn a counter-clockwise label clockwise,
so their step distributions are over a different sequence (``views=8`` brings them in after the
search: :mod:`ptrnet.decoding.view_scores`).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ptrnet.model.pointer import EncoderDecoder, Memory, State
from ptrnet.tasks.base import Task
from ptrnet.tasks.symmetry import (
    MIRRORED_VIEWS,
    VIEW_COUNTS,
    square_symmetry_tensor,
    view_symmetries,
)


def check_views(task: Task, views: int) -> None:
    """Raises ValueError unless ``task`` can be decoded with ``views`` views (1, 2, 4 or 8)."""
    if views not in VIEW_COUNTS:
        raise ValueError(f"views must be one of {', '.join(map(str, VIEW_COUNTS))}, got {views}")
    if views == MIRRORED_VIEWS and not task.square_symmetric:
        raise ValueError(
            f"8 views need a task whose answers the square's symmetries keep; {task.name}'s "
            "do not (a flip reverses a sorted order)"
        )
    if 1 < views < MIRRORED_VIEWS and not task.rotation_invariant_labels:
        raise ValueError(
            f"2 or 4 views need labels that rotations keep (convex_hull, tsp); "
            f"{task.name}'s label order depends on the coordinates (8 views work)"
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

    def __init__(self, model: EncoderDecoder, views: int) -> None:
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
