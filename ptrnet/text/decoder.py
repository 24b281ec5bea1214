"""The pointer-generator's :class:`~ptrnet.decoding.decoder.Decoder`: the log of its mixture
P(w) over a sentence's extended vocabulary, for the shared search of
:func:`ptrnet.decoding.search.run_search` (greedy, sampling, beam).

A row may output every fixed word but ``<pad>`` and ``<s>`` (never a target, so only an
untrained model gives them weight, and ``<pad>`` would end the words early), and its own
out-of-vocabulary words, not those past them that only a batch mate has, so a row decodes alike
alone and in a batch. The log-probabilities are the mixture's own, not renormalised over what
is allowed (a trained model leaves next to no mass outside it). A row that gave END continues
with ``<pad>`` at no cost. The state keeps the p_gen of every step, which the outputs report.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from ptrnet.model.pointer_generator import Memory, PointerGenerator
from ptrnet.text.batch import Batch
from ptrnet.text.vocab import END_ID, PAD_ID, START_ID


@dataclass(frozen=True)
class SentenceState:
    """Where the decoding of R rows stands.

    Attributes:
        hidden: the decoder LSTM's (h, c), each (1, R, d).
        previous: (R, 1) long, the last extended id output (``<s>`` before the first).
        done: (R,) bool, rows that gave END.
        gates: (R, t) p_gen used at each of the t steps so far.
    """

    hidden: tuple[torch.Tensor, torch.Tensor]
    previous: torch.Tensor
    done: torch.Tensor
    gates: torch.Tensor


class SentenceDecoder:
    """``model`` decoding the sources of ``batch``, ``width`` consecutive rows per source
    (beams or samples), p_gen replaced by ``p_gen`` at every step when given. The sources are
    encoded once, here."""

    def __init__(
        self, model: PointerGenerator, batch: Batch, width: int, p_gen: float | None = None
    ) -> None:
        memory, hidden = model.encode(batch.ids, batch.extended, batch.lengths)
        self.model, self.extra, self.p_gen = model, batch.extra, p_gen
        self.memory = Memory(*(t.repeat_interleave(width, 0) for t in memory))  # (R, ...)
        self.hidden = tuple(s.repeat_interleave(width, 1) for s in hidden)  # (1, R, d) each
        self.allowed = output_ids(batch).repeat_interleave(width, 0)  # (R, V + X)
        self.filler = torch.full((1, self.allowed.shape[1]), float("-inf"))  # (1, V + X)
        self.filler[0, PAD_ID] = 0.0

    def start(self) -> SentenceState:
        rows = self.allowed.shape[0]
        return SentenceState(
            hidden=self.hidden,
            previous=torch.full((rows, 1), START_ID, dtype=torch.long),
            done=torch.zeros(rows, dtype=torch.bool),
            gates=torch.zeros(rows, 0),
        )

    def step(self, state: SentenceState) -> tuple[torch.Tensor, SentenceState]:
        out = self.model.decode(self.memory, state.previous, state.hidden, self.extra, self.p_gen)
        logp = out.log_probs[:, 0].masked_fill(~self.allowed, float("-inf"))  # (R, V + X)
        logp = torch.where(state.done.unsqueeze(1), self.filler, logp)
        gates = torch.cat([state.gates, out.p_gen[:, :1]], 1)  # (R, t + 1)
        return logp, replace(state, hidden=out.state, gates=gates)

    def reorder(self, state: SentenceState, rows: torch.Tensor) -> SentenceState:
        return SentenceState(
            hidden=tuple(s[:, rows] for s in state.hidden),
            previous=state.previous[rows],
            done=state.done[rows],
            gates=state.gates[rows],
        )

    def advance(self, state: SentenceState, token: torch.Tensor) -> SentenceState:
        return replace(state, previous=token.unsqueeze(1), done=state.done | (token == END_ID))

    def finished(self, state: SentenceState) -> torch.Tensor:
        return state.done


def output_ids(batch: Batch) -> torch.Tensor:
    """(B, V + X) True where a row may output the id (module docstring)."""
    size = len(batch.vocab)
    own = torch.tensor([size + len(e.oovs) for e in batch.encoded])  # (B,)
    allowed = torch.arange(size + batch.extra) < own.unsqueeze(1)  # (B, V + X)
    allowed[:, [PAD_ID, START_ID]] = False
    return allowed
