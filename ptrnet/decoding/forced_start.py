"""A network whose first output is chosen for it: multi-start on a task whose first input keeps
its place.

Multi-start (:mod:`ptrnet.decoding.multistart`) makes a TSP run start at city s by reading the
instance rotated so that city s comes first. A routing instance keeps its depot first
(``Task.rotated_starts`` false) and its first output is free, any customer; so run s is made to
serve customer s first by :class:`ForcedStart`: at the first step every logit but that token's
is -inf, so the decoder's masked distribution puts all its mass there, and the step adds
log 1 = 0 to the run's score (POMO's forced first action, which its policy gradient does not
train either). Later steps are the network's own. The wrapper reads nothing of a task or a
model kind: anything with ``encode`` / ``step`` and the teacher-forced call (a network, a view
ensemble, a window) is wrapped alike.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ptrnet.decoding.interface import PointerMemory, State


def forced_logits(logits: torch.Tensor, openings: torch.Tensor) -> torch.Tensor:
    """(R, V) logits -> (R, V): each row's logit at token ``openings[r]`` kept, -inf elsewhere."""
    keep = torch.zeros_like(logits, dtype=torch.bool).scatter_(1, openings[:, None], True)
    return logits.masked_fill(~keep, float("-inf"))


@dataclass(frozen=True)
class OpeningMemory:
    """The wrapped network's memory of R rows and each row's forced first token (R,)."""

    inner: PointerMemory
    openings: torch.Tensor

    @property
    def state(self) -> State:
        """The network's initial state and a (1, R) bool flag, False until the first step."""
        rows = self.openings.shape[0]
        started = torch.zeros(1, rows, dtype=torch.bool, device=self.openings.device)
        return (*self.inner.state, started)

    def index(self, rows: torch.Tensor) -> OpeningMemory:
        """Re-select rows (beam expansion)."""
        return OpeningMemory(self.inner.index(rows), self.openings[rows])


class ForcedStart(nn.Module):
    """``model`` with row r's first output forced to token ``openings[r]`` (R,) long, a real
    input's token (>= 1): in a search (``encode`` of the R rows, then ``step``) and under
    teacher forcing (called on R rows, the first target step's logits forced). ``model`` may
    be a wrapper whose teacher-forced call takes more arguments: they are passed on.

    Its recurrent state is the network's with a (1, R) flag appended (rows on dim 1, as the
    decoding loop reorders them), set once a row has made its first step.
    """

    def __init__(self, model: nn.Module, openings: torch.Tensor) -> None:
        super().__init__()
        self.model, self.openings = model, openings

    def encode(self, points: torch.Tensor, lengths: torch.Tensor) -> OpeningMemory:
        self._check(points)
        return OpeningMemory(self.model.encode(points, lengths), self.openings)

    def step(
        self, memory: OpeningMemory, prev_token: torch.Tensor, state: State
    ) -> tuple[torch.Tensor, State]:
        """Previous token (R,) -> logits (R, V), forced where a row has not started yet."""
        *inner, started = state
        logits, new = self.model.step(memory.inner, prev_token, tuple(inner))  # (R, V)
        first = ~started[0]  # (R,)
        if bool(first.any()):
            forced = forced_logits(logits, memory.openings)
            logits = torch.where(first[:, None], forced, logits)
        return logits, (*new, torch.ones_like(started))

    def forward(
        self, points: torch.Tensor, lengths: torch.Tensor, targets: torch.Tensor, *args, **kwargs
    ) -> torch.Tensor:
        """(R, n, dim), (R,), (R, T) -> (R, T, V) teacher-forced logits, step 0's forced."""
        self._check(points)
        logits = self.model(points, lengths, targets, *args, **kwargs)  # (R, T, V)
        if logits.shape[1] == 0:
            return logits
        first = forced_logits(logits[:, 0], self.openings)  # (R, V)
        return torch.cat([first[:, None], logits[:, 1:]], dim=1)

    def _check(self, points: torch.Tensor) -> None:
        if points.shape[0] != self.openings.shape[0]:
            rows = self.openings.shape[0]
            raise ValueError(f"{points.shape[0]} rows: the forced starts are for {rows}")
