"""The span pointer's :class:`~ptrnet.decoding.decoder.Decoder`: two outputs per row, the
answer's first and last passage position, for the shared search of
:func:`ptrnet.decoding.search.run_search` (every strategy of :mod:`ptrnet.decoding.strategies`).

Step 1 points at the start over the passage; step 2, fed the start, points at the end over
``start .. start + max_length - 1`` only (end >= start is a mask of the decoding, renormalised
over the allowed ends like every ptrnet mask). Every row is finished after the two steps.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ptrnet.decoding.options import DecodeOptions
from ptrnet.decoding.search import run_search
from ptrnet.decoding.strategies import chooser
from ptrnet.model.span import SpanInputs, SpanMemory, SpanPointer

MAX_ANSWER_TOKENS = 16  #: the longest span the decoding allows (SQuAD readers use 15-30)


@dataclass(frozen=True)
class SpanState:
    """Where R rows stand: ``step`` outputs given (0, 1 or 2), the decoder cell's (h, c) after
    the first step (each (R, 2H)) and the start chosen ((R,) long; -1 before)."""

    step: int
    cell: tuple[torch.Tensor, torch.Tensor] | None
    start: torch.Tensor


class SpanDecoder:
    """``model`` decoding the passages of ``inputs``, ``width`` consecutive rows per passage
    (beams or samples); encoded once, here."""

    def __init__(
        self,
        model: SpanPointer,
        inputs: SpanInputs,
        width: int,
        max_length: int = MAX_ANSWER_TOKENS,
    ) -> None:
        memory = model.encode(inputs)
        self.model, self.max_length = model, max_length
        self.memory = SpanMemory(*(t.repeat_interleave(width, 0) for t in vars(memory).values()))
        self.rows = self.memory.mask.shape[0]
        self.positions = torch.arange(self.memory.mask.shape[1])  # (P,)

    def start(self) -> SpanState:
        return SpanState(0, None, torch.full((self.rows,), -1, dtype=torch.long))

    def step(self, state: SpanState) -> tuple[torch.Tensor, SpanState]:
        if state.step == 0:
            logits, cell = self.model.first_step(self.memory)  # (R, P)
            return logits.log_softmax(-1), SpanState(0, cell, state.start)
        if state.step == 1:
            offset = self.positions.unsqueeze(0) - state.start.unsqueeze(1)  # (R, P)
            outside = (offset < 0) | (offset >= self.max_length)
            logits = self.model.second_step(self.memory, state.cell, state.start)
            return logits.masked_fill(outside, float("-inf")).log_softmax(-1), state
        filler = torch.full((self.rows, len(self.positions)), float("-inf"))
        filler[:, 0] = 0.0  # a finished row repeats position 0 at no cost
        return filler, state

    def reorder(self, state: SpanState, rows: torch.Tensor) -> SpanState:
        cell = None if state.cell is None else (state.cell[0][rows], state.cell[1][rows])
        return SpanState(state.step, cell, state.start[rows])

    def advance(self, state: SpanState, token: torch.Tensor) -> SpanState:
        start = token if state.step == 0 else state.start
        return SpanState(state.step + 1, state.cell, start)

    def finished(self, state: SpanState) -> torch.Tensor:
        return torch.full((self.rows,), state.step >= 2)


def decode_spans(
    model: SpanPointer,
    inputs: SpanInputs,
    options: DecodeOptions | None = None,
    generator: torch.Generator | None = None,
    max_length: int = MAX_ANSWER_TOKENS,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(B,) starts, (B,) ends and (B,) log-probabilities of the best span of each passage found
    by ``options.strategy`` (None: greedy) in ``options.width`` rows per passage (beams,
    samples drawn with ``generator``), the most likely kept."""
    options = options or DecodeOptions()
    width = options.width
    size = inputs.passage.shape[0]
    choose = chooser(options, size, generator)
    found = run_search(SpanDecoder(model, inputs, width, max_length), 2, choose)
    scores = found.scores.view(size, width)  # (B, K)
    best = scores.argmax(1) + torch.arange(size) * width  # (B,) rows
    return found.tokens[best, 0], found.tokens[best, 1], found.scores[best]
