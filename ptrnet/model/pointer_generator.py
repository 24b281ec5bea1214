"""The pointer-generator (See, Liu & Manning 2017, "Get To The Point", section 2.2).

An LSTM encoder-decoder with additive attention over the source. The decoder LSTM reads only the
previous words (attention after it, without input feeding), so teacher forcing runs all steps in
one LSTM call. At each output step t the decoder state s_t and the context
c_t = sum_i a_ti h_i give a vocabulary distribution ``P_vocab = softmax(V'(V[s_t; c_t] + b) + b')``
and a switch ``p_gen = sigmoid(w_c.c_t + w_s.s_t + w_x.x_t + b_ptr)``; the output distribution
over the sentence's extended vocabulary (fixed words, then its out-of-vocabulary source words) is

    P(w) = p_gen * P_vocab(w) + (1 - p_gen) * sum_{i: w_i = w} a_ti,

formed in probability space with ``scatter_add`` and logged with a clamp (:data:`EPS`), so a
word the mixture gives no mass to costs ``-log EPS`` with zero gradient instead of ``inf``.

The config's ``p_gen`` switches a path off: 1 fixes p_gen = 1 (the seq2seq: vocabulary only;
attention still feeds P_vocab), 0 fixes p_gen = 0 (the pure pointer: copy only), None learns
it. Any model also takes a ``p_gen`` override per call, the same mechanism, so one can ask what
each path alone would output. (The names of the three, ``--arch``, are in
:mod:`ptrnet.text.config`.)

The model is pure: tensors in, probabilities out. Shapes: ``B`` batch, ``n`` source positions
(padded), ``T`` output steps, ``V`` fixed vocabulary, ``X`` extra (out-of-vocabulary) ids of
the batch's widest sentence, ``e`` embedding, ``d`` hidden.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, NamedTuple

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

EPS = 1e-12
UNK_ID = 1  # the embedding's input for extended ids (ptrnet.text.vocab.UNK_ID)


@dataclass(frozen=True)
class PointerGeneratorConfig:
    """What rebuilds a :class:`PointerGenerator`.

    Attributes:
        vocab_size: V, the fixed vocabulary (ids 0 .. V-1; 0 padding, 1 unknown).
        p_gen: None (learned), or the value it is fixed at: 1 (vocabulary only) or 0 (copy
            only); any value in [0, 1] is accepted.
        embed: e, word embedding size (shared by encoder and decoder).
        hidden: d, decoder state size; the encoder is bidirectional with d/2 per direction.
    """

    vocab_size: int
    p_gen: float | None = None
    embed: int = 64
    hidden: int = 128

    def __post_init__(self) -> None:
        _check_p_gen(self.p_gen)
        if self.vocab_size < 2 or self.embed < 1 or self.hidden < 2 or self.hidden % 2:
            raise ValueError("vocab_size >= 2, embed >= 1 and an even hidden >= 2 are required")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PointerGeneratorConfig:
        """Inverse of :meth:`to_dict`. Raises ValueError on unknown keys."""
        unknown = set(data) - {f.name for f in fields(cls)}
        if unknown:
            raise ValueError(f"unknown pointer-generator keys: {', '.join(sorted(unknown))}")
        return cls(**data)


class Memory(NamedTuple):
    """The encoded source: outputs (B, n, d), their attention keys W_h h (B, n, d), the
    allowed mask (B, n) (True = a real position), and extended ids (B, n)."""

    outputs: torch.Tensor
    keys: torch.Tensor
    mask: torch.Tensor
    extended: torch.Tensor


class Step(NamedTuple):
    """The decoder's distributions for T steps.

    Attributes:
        log_probs: (B, T, V + X) log of the mixture P(w), clamped at log(EPS).
        probs: (B, T, V + X) the mixture itself.
        p_vocab: (B, T, V) the vocabulary distribution.
        attention: (B, T, n) attention over the source (0 at padding).
        p_gen: (B, T) the generation probability used in the mixture.
        state: the decoder LSTM's (h, c), each (1, B, d), after the last step.
    """

    log_probs: torch.Tensor
    probs: torch.Tensor
    p_vocab: torch.Tensor
    attention: torch.Tensor
    p_gen: torch.Tensor
    state: tuple[torch.Tensor, torch.Tensor]


def mixture(
    p_vocab: torch.Tensor,
    attention: torch.Tensor,
    p_gen: torch.Tensor,
    extended: torch.Tensor,
    extra: int,
) -> torch.Tensor:
    """P(w) = p_gen P_vocab(w) + (1 - p_gen) sum_{i: ext_i = w} a_i over the extended vocabulary.

    Args:
        p_vocab: (B, T, V); attention: (B, T, n); p_gen: (B, T); extended: (B, n) ids < V + X;
        extra: X, the number of extended ids past V.
    Returns:
        (B, T, V + X) probabilities; each row sums to 1 when its inputs do.
    """
    gen = nn.functional.pad(p_gen.unsqueeze(-1) * p_vocab, (0, extra))  # (B, T, V + X)
    copy = (1.0 - p_gen).unsqueeze(-1) * attention  # (B, T, n)
    index = extended.unsqueeze(1).expand(-1, attention.shape[1], -1)  # (B, T, n)
    return gen.scatter_add(2, index, copy)


class PointerGenerator(nn.Module):
    """See the module docstring; build from a :class:`PointerGeneratorConfig`."""

    def __init__(self, config: PointerGeneratorConfig) -> None:
        super().__init__()
        self.config = config
        v, e, d = config.vocab_size, config.embed, config.hidden
        self.embedding = nn.Embedding(v, e, padding_idx=0)
        self.encoder = nn.LSTM(e, d // 2, batch_first=True, bidirectional=True)
        self.decoder = nn.LSTM(e, d, batch_first=True)
        self.key = nn.Linear(d, d, bias=False)  # W_h
        self.query = nn.Linear(d, d)  # W_s and b_attn
        self.score = nn.Linear(d, 1, bias=False)  # v
        self.vocab = nn.Sequential(nn.Linear(2 * d, d), nn.Linear(d, v))  # V, V'
        self.switch = nn.Linear(2 * d + e, 1)  # w_c, w_s, w_x, b_ptr

    def encode(
        self, ids: torch.Tensor, extended: torch.Tensor, lengths: torch.Tensor
    ) -> tuple[Memory, tuple[torch.Tensor, torch.Tensor]]:
        """Encode padded sources: ids, extended (B, n), lengths (B,) -> memory and the decoder's
        initial (h, c), each (1, B, d): the two directions' final states side by side."""
        x = self.embedding(ids)  # (B, n, e)
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, (h, c) = self.encoder(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=ids.shape[1])  # (B, n, d)
        mask = torch.arange(ids.shape[1], device=ids.device) < lengths.unsqueeze(1)  # (B, n)
        state = (_join(h), _join(c))  # (1, B, d) each
        return Memory(out, self.key(out), mask, extended), state

    def decode(
        self,
        memory: Memory,
        previous: torch.Tensor,
        state: tuple[torch.Tensor, torch.Tensor],
        extra: int,
        p_gen: float | None = None,
    ) -> Step:
        """Run T decoder steps on the previous words ``previous`` (B, T) (extended ids; those
        past V enter as unknown), from ``state``. ``p_gen`` overrides the switch (and the config's
        fixed value) when given; ``extra`` is X."""
        x = self.embedding(previous.masked_fill(previous >= self.config.vocab_size, UNK_ID))
        s, state = self.decoder(x, state)  # (B, T, d)
        q = self.query(s).unsqueeze(2)  # (B, T, 1, d)
        scores = self.score(torch.tanh(memory.keys.unsqueeze(1) + q)).squeeze(-1)  # (B, T, n)
        scores = scores.masked_fill(~memory.mask.unsqueeze(1), float("-inf"))
        attention = torch.softmax(scores, dim=-1)  # (B, T, n)
        context = attention @ memory.outputs  # (B, T, d)
        p_vocab = torch.softmax(self.vocab(torch.cat([s, context], -1)), dim=-1)  # (B, T, V)
        gate = self._p_gen(torch.cat([context, s, x], -1), p_gen)  # (B, T)
        probs = mixture(p_vocab, attention, gate, memory.extended, extra)
        return Step(probs.clamp_min(EPS).log(), probs, p_vocab, attention, gate, state)

    def forward(
        self,
        ids: torch.Tensor,
        extended: torch.Tensor,
        lengths: torch.Tensor,
        previous: torch.Tensor,
        extra: int,
        p_gen: float | None = None,
    ) -> Step:
        """Teacher forcing: sources (B, n) and the shifted targets ``previous`` (B, T) -> the
        step distributions for all T steps at once."""
        memory, state = self.encode(ids, extended, lengths)
        return self.decode(memory, previous, state, extra, p_gen)

    def _p_gen(self, features: torch.Tensor, override: float | None) -> torch.Tensor:
        """(B, T, 2d + e) -> (B, T): the override, else the config's fixed value, else learned."""
        fixed = override if override is not None else self.config.p_gen
        if fixed is None:
            return torch.sigmoid(self.switch(features)).squeeze(-1)
        _check_p_gen(fixed)
        return features.new_full(features.shape[:-1], float(fixed))


def _check_p_gen(value: float | None) -> None:
    """Raises ValueError unless ``value`` is None or in [0, 1]."""
    if value is not None and not 0.0 <= value <= 1.0:
        raise ValueError(f"p_gen must be in [0, 1], got {value}")


def _join(state: torch.Tensor) -> torch.Tensor:
    """(2, B, d/2) forward and backward final states -> (1, B, d)."""
    return torch.cat([state[0], state[1]], dim=-1).unsqueeze(0)
