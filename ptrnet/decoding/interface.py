"""What the decoding loop needs of the network it runs: the :class:`Decoder` protocol.

The loop (:mod:`ptrnet.decoding.search`) calls only ``encode`` and ``step``; a plain
:class:`~ptrnet.model.pointer.EncoderDecoder`, :class:`ptrnet.decoding.views.ViewEnsemble` and
:class:`ptrnet.decoding.window.LocalWindow` all have them. Typing the loop with this protocol
instead of those classes keeps the imports inside :mod:`ptrnet.decoding` one way: the modules
that wrap a network import the loop, and the loop imports none of them.
"""

from __future__ import annotations

from typing import Protocol

import torch

# A decoder's recurrent state: tensors with the rows on dim 1, so ``s[:, parent]`` re-selects
# beams (the same alias as ptrnet.model.pointer.State).
State = tuple[torch.Tensor, ...]


class DecoderMemory(Protocol):
    """What a decoder reads at every step, computed once per batch by ``encode``."""

    @property
    def state(self) -> State:
        """The initial decoder state, each tensor (s0, R, ...)."""
        ...

    def index(self, rows: torch.Tensor) -> DecoderMemory:
        """The memory of rows ``rows`` (R',) long: beam expansion."""
        ...


class Decoder(Protocol):
    """A network the decoding loop can run: ``encode`` once, then ``step`` per output token."""

    def encode(self, points: torch.Tensor, lengths: torch.Tensor) -> DecoderMemory:
        """(B, n, dim) points, (B,) lengths -> the memory of the B rows."""
        ...

    def step(
        self, memory: DecoderMemory, prev_token: torch.Tensor, state: State
    ) -> tuple[torch.Tensor, State]:
        """Previous token (R,) and state -> logits (R, V) over the end and the inputs, next
        state."""
        ...
