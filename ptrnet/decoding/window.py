"""Decoding a heavy-decoder model through a local window: the k nearest inputs left.

A model trained on small instances meets, on a large one, more inputs than it has ever seen and
packed more densely. The heavy decoder (:mod:`ptrnet.model.heavy`) re-encodes what is left at
every step, so each step can be shown a small instance instead: the first and the last chosen
input and the ``k`` remaining inputs nearest the last one, rescaled so that they fill the unit
square, as the training instances did. The model points at one of those k; the others are out
of reach for this step (logit -inf) and come back into the window as the tour moves. An
instance of at most k inputs is decoded by the model itself, unchanged, so the window only
ever changes instances larger than it, and a row's output never depends on its batch mates.
The idea is the "local view" of later work on generalising neural TSP solvers (e.g. INViT,
Fang et al. 2024); here it is an inference-time wrapper, not a new model. Measured in
docs/results.md ("Far larger instances: a local window").

:class:`LocalWindow` has the ``encode`` / ``step`` / ``forward`` interface of the models, so
greedy, sampling, beam search, multi-start, views and likelihood scoring run through it
unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ptrnet.decoding.options import DecodeOptionError
from ptrnet.model.heavy import HeavyMemory, HeavyPointer, State, advance
from ptrnet.model.pointer import column_mask, previous_tokens
from ptrnet.quoting import quote


@dataclass(frozen=True)
class WindowMemory:
    """The instance as given, kept for every step's window.

    Attributes:
        points: (B, n, 2) right-padded inputs.
        real: (B, n) bool, True = a real input.
        state: the initial decoder state, as :class:`ptrnet.model.heavy.HeavyMemory`'s.
        whole: the model's own memory of every row, for the rows it decodes without a window
            (no more inputs than the window holds); None when there are none.
    """

    points: torch.Tensor
    real: torch.Tensor
    state: State
    whole: HeavyMemory | None

    def index(self, rows: torch.Tensor) -> WindowMemory:
        """Re-select batch rows (beam expansion, multi-start)."""
        whole = None if self.whole is None else self.whole.index(rows)
        state = tuple(s[:, rows] for s in self.state)
        return WindowMemory(self.points[rows], self.real[rows], state, whole)


class LocalWindow(nn.Module):
    """``model`` (a :class:`HeavyPointer` on 2-d points) decoded through windows of ``size``
    remaining inputs (module docstring). Not for training.

    Raises:
        DecodeOptionError: (option ``window``) a model without the heavy decoder, inputs that
            are not 2-d points, or a size below 2.
    """

    def __init__(self, model: nn.Module, size: int) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 2:
            raise DecodeOptionError(
                "window", f"the window must hold >= 2 inputs, got {quote(size)}"
            )
        if not isinstance(model, HeavyPointer) or model.config.input_dim != 2:
            decoder = getattr(getattr(model, "config", None), "decoder", "another")
            raise DecodeOptionError(
                "window",
                f"a window needs a heavy-decoder model on 2-d points (it re-encodes the inputs "
                f"left at every step); this model has the {decoder} decoder",
            )
        super().__init__()
        self.model = model
        self.size = size

    def encode(self, points: torch.Tensor, lengths: torch.Tensor) -> WindowMemory:
        """(B, n, 2) right-padded, (B,) lengths in 1..n -> the memory the steps read.
        Raises ValueError on bad shapes or lengths."""
        batch, n, dim = points.shape
        if dim != 2 or lengths.shape != (batch,):
            raise ValueError(
                f"expected points (B, n, 2) and lengths (B,), got {tuple(points.shape)} and "
                f"{tuple(lengths.shape)}"
            )
        if int(lengths.min()) < 1 or int(lengths.max()) > n:
            raise ValueError(f"lengths must lie in 1..{n}")
        whole = self.model.encode(points, lengths) if bool((lengths <= self.size).any()) else None
        chosen = torch.zeros(1, batch, n + 1, dtype=torch.bool, device=points.device)
        first = torch.zeros(1, batch, dtype=torch.long, device=points.device)
        return WindowMemory(points, column_mask(lengths, n, offset=0), (chosen, first), whole)

    def forward(
        self, points: torch.Tensor, lengths: torch.Tensor, targets: torch.Tensor
    ) -> torch.Tensor:
        """Teacher-forced logits through the windows, (B, n, 2), (B,), targets (B, T) ->
        (B, T, n+1) float32: logits[:, i] is what :meth:`step` gives after targets[:, :i]
        (one step at a time: each step's window depends on the prefix)."""
        memory = self.encode(points, lengths)
        prev = previous_tokens(targets)  # (B, T)
        state, out = memory.state, []
        for i in range(prev.shape[1]):
            logits, state = self.step(memory, prev[:, i], state)  # (B, n+1)
            out.append(logits)
        return (
            torch.stack(out, dim=1)
            if out
            else points.new_zeros(len(lengths), 0, points.shape[1] + 1)
        )

    def step(
        self, memory: WindowMemory, prev_token: torch.Tensor, state: State
    ) -> tuple[torch.Tensor, State]:
        """One step, as :meth:`HeavyPointer.step`: previous token (R,) and state -> float32
        logits (R, n+1), -inf outside the window, and the new state."""
        chosen, first = advance(state, prev_token)  # (1, R, n+1), (1, R)
        small = memory.real.sum(dim=1) <= self.size  # (R,): no window
        logits = torch.empty(len(small), chosen.shape[-1], device=small.device)
        if bool(small.any()):
            whole = memory.whole
            logits[small] = self.model.logits(
                whole.nodes[small],
                whole.real[small],
                chosen[0, small],
                first[0, small],
                prev_token[small],
                None if whole.qkv is None else whole.qkv[small],
            )
        if not bool(small.all()):
            big = ~small
            logits[big] = self.windowed(
                memory.points[big],
                memory.real[big],
                chosen[0, big],
                first[0, big],
                prev_token[big],
            )
        return logits, (chosen, first)

    def windowed(
        self,
        points: torch.Tensor,
        real: torch.Tensor,
        chosen: torch.Tensor,
        first: torch.Tensor,
        last: torch.Tensor,
    ) -> torch.Tensor:
        """Points (R, n, 2), real (R, n), chosen (R, n+1), first and last tokens (R,) ->
        float32 logits (R, n+1): the model's pass over each row's window, rescaled to the unit
        square, mapped back to the row's tokens; -inf outside the window."""
        inputs, length = self.window(points, real, chosen, first, last)  # (R, m), (R,)
        m = inputs.shape[1]
        slots = column_mask(length, m, offset=0)  # (R, m): real slots
        sub_points = points.gather(1, inputs[..., None].expand(-1, -1, 2))  # (R, m, 2)
        sub = self.model.encode(unit_square(sub_points, slots), length)
        has_first = first > 0
        has_last = has_first & (last != first)
        sub_first = has_first.long()  # slot 0 = token 1 is the first chosen input, if any
        sub_last = torch.where(has_last, 2, sub_first)  # slot 1 = token 2 the last, if another
        sub_chosen = torch.zeros(len(length), m + 1, dtype=torch.bool, device=length.device)
        sub_chosen[:, 1] = has_first
        sub_chosen[:, 2] = has_last
        logits = self.model.logits(
            sub.nodes, sub.real, sub_chosen, sub_first, sub_last, sub.qkv
        )  # (R, m+1)
        full = logits.new_full((len(length), real.shape[1] + 1), float("-inf"))
        full[:, 0] = logits[:, 0]  # the end token
        tokens = torch.where(slots, inputs + 1, 0)  # (R, m): each slot's token in the row
        return full.scatter(1, tokens, torch.where(slots, logits[:, 1:], logits[:, :1]))

    def window(
        self,
        points: torch.Tensor,
        real: torch.Tensor,
        chosen: torch.Tensor,
        first: torch.Tensor,
        last: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The inputs each row's step sees, left-packed: (R, m) long input indices, m <=
        ``size`` + 2, and (R,) lengths. In order: the first chosen input, the last (when
        another), then up to ``size`` remaining inputs, nearest the last first, ties by lower
        index (nearest input 0, where a TSP tour starts, before any is chosen)."""
        remaining = real & ~chosen[:, 1:]  # (R, n)
        anchor = points.gather(1, (last - 1).clamp(min=0)[:, None, None].expand(-1, 1, 2))
        distance = (points - anchor).square().sum(dim=-1)  # (R, n)
        distance = distance.masked_fill(~remaining, float("inf"))
        # A stable sort, not topk: among equal distances (coincident inputs) the lower index
        # comes first, so input 0 is in the first step's window however many share its place.
        near = distance.sort(dim=1, stable=True).indices[:, : self.size]  # (R, k)
        has_first = first > 0
        has_last = has_first & (last != first)
        ends = torch.stack([first, last], dim=1).sub(1).clamp(min=0)  # (R, 2)
        slots = torch.cat([ends, near], dim=1)  # (R, k+2)
        keep = torch.cat([has_first[:, None], has_last[:, None], remaining.gather(1, near)], 1)
        order = (~keep).long().argsort(dim=1, stable=True)  # the kept slots first, in order
        return slots.gather(1, order), keep.sum(dim=1)


def through_window(model: nn.Module, window: int | None, largest: int) -> nn.Module:
    """``model`` as it decodes instances of up to ``largest`` inputs with ``window`` (0 or
    None = off; a size route's default window is resolved before, in ``ptrnet.inference``):
    wrapped in :class:`LocalWindow` when one of them is larger than the window, else itself.

    Raises:
        DecodeOptionError: such instances with a model that has no heavy decoder.
    """
    return LocalWindow(model, window) if window and largest > window else model


def unit_square(points: torch.Tensor, real: torch.Tensor) -> torch.Tensor:
    """(R, m, 2) points, (R, m) real mask -> the same points moved and scaled (one factor for
    both axes) so that the real ones span [0, 1] on their longer side; pads become 0."""
    big = torch.finfo(points.dtype).max
    low = points.masked_fill(~real[..., None], big).amin(dim=1, keepdim=True)  # (R, 1, 2)
    high = points.masked_fill(~real[..., None], -big).amax(dim=1, keepdim=True)
    span = (high - low).amax(dim=2, keepdim=True).clamp(min=1e-9)  # (R, 1, 1)
    return ((points - low) / span).masked_fill(~real[..., None], 0.0)
