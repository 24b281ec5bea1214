"""What a pointer search reads of a network: the :class:`PointerModel` protocol; and what the
decoders read of a trained network, :class:`Network` (every model :func:`ptrnet.model.build_model`
makes satisfies it: the LSTM pointer models and baselines, the heavy and the light decoder).

:func:`ptrnet.decoding.search.search_batch` calls only ``encode`` and ``step`` (through
:class:`ptrnet.decoding.pointer_decoder.PointerDecoder`, the loop's
:class:`~ptrnet.decoding.decoder.Decoder` for pointer models); a plain
:class:`~ptrnet.model.pointer.EncoderDecoder`, :class:`ptrnet.decoding.views.ViewEnsemble` and
:class:`ptrnet.decoding.window.LocalWindow` all have them. Typing the search with this protocol
instead of those classes keeps the imports inside :mod:`ptrnet.decoding` one way: the modules
that wrap a network import the search, and the search imports none of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol, runtime_checkable

import torch

# A network's recurrent state: tensors with the rows on dim 1, so ``s[:, parent]`` re-selects
# beams (the same alias as ptrnet.model.pointer.State).
State = tuple[torch.Tensor, ...]


class PointerMemory(Protocol):
    """What a network reads at every step, computed once per batch by ``encode``."""

    @property
    def state(self) -> State:
        """The initial recurrent state, each tensor (s0, R, ...)."""
        ...

    def index(self, rows: torch.Tensor) -> PointerMemory:
        """The memory of rows ``rows`` (R',) long: beam expansion."""
        ...


class PointerModel(Protocol):
    """A network a pointer search can run: ``encode`` once, then ``step`` per output token."""

    def encode(self, points: torch.Tensor, lengths: torch.Tensor) -> PointerMemory:
        """(B, n, dim) points, (B,) lengths -> the memory of the B rows."""
        ...

    def step(
        self, memory: PointerMemory, prev_token: torch.Tensor, state: State
    ) -> tuple[torch.Tensor, State]:
        """Previous token (R,) and state -> logits (R, V) over the end and the inputs, next
        state."""
        ...


@runtime_checkable
class Network(PointerModel, Protocol):
    """A trained network as the decoders read it (:func:`ptrnet.decoding.decode.decode`,
    :func:`~ptrnet.decoding.decode.score_sequences`, the likelihoods, the views): a pointer
    search's ``encode`` and ``step``, the teacher-forced pass (called), and its parameters
    (whose device the batch moves to). :class:`~ptrnet.model.pointer.EncoderDecoder` and its
    subclasses, :class:`~ptrnet.model.heavy.HeavyPointer` and
    :class:`~ptrnet.model.light.LightPointer` all are one, though the last two subclass no
    common class."""

    def __call__(
        self, points: torch.Tensor, lengths: torch.Tensor, targets: torch.Tensor
    ) -> torch.Tensor:
        """(B, n, dim) points, (B,) lengths, (B, T) target tokens -> (B, T, V) logits, each
        step teacher-forced on the targets before it."""
        ...

    def parameters(self, recurse: bool = True) -> Iterator[torch.nn.Parameter]:
        """The weights (their device is the model's)."""
        ...
