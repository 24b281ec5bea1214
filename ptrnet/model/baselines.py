"""The Table 1 baselines: LSTM sequence-to-sequence (Sec. 2.1) and the same with content-based
input attention (Sec. 2.2).

Both predict over a fixed output vocabulary of ``max_n + 1`` classes (class 0 = end, class j =
input j), so they only work at the sizes they were trained on -- the point of the comparison.
They share the Ptr-Net's encoder, decoder, start symbol and decoder input (the coordinates of the
previous output, Sec. 2), as well as its forward/encode/step API, so the same decoding strategies
and loss apply. For a row with n < max_n, classes n+1..max_n get logit -inf.
"""

from __future__ import annotations

import math
from dataclasses import replace

import torch
from torch import nn

from ptrnet.model.attention import score_dtype
from ptrnet.model.config import ModelConfig
from ptrnet.model.lstm import run_lstm
from ptrnet.model.pointer import (
    EncoderDecoder,
    Memory,
    State,
    column_mask,
    pointer_scores,
    previous_tokens,
)


class _FixedVocabulary(EncoderDecoder):
    """Encoder-decoder whose output is a fixed softmax over ``max_n + 1`` classes."""

    kind: str

    def __init__(self, config: ModelConfig) -> None:
        if config.kind != self.kind:
            raise ValueError(f"{type(self).__name__} needs kind {self.kind!r}, got {config.kind!r}")
        super().__init__(config)
        self.vocab = config.max_n + 1

    def encode(self, points: torch.Tensor, lengths: torch.Tensor) -> Memory:
        """Encode a batch: (B, n, dim), (B,) -> Memory with m = n, V = max_n+1.

        Raises ValueError if a row is longer than max_n: the vocabulary has no class for it.
        """
        longest = int(lengths.max())
        if longest > self.config.max_n:
            raise ValueError(
                f"{type(self).__name__} was built for n <= {self.config.max_n}, got n = {longest}"
            )
        enc, state = self.run_encoder(points, lengths)  # (B, n, d)
        return Memory(
            enc=enc,
            enc_proj=self.project(enc),
            att_valid=column_mask(lengths, enc.shape[1], offset=0),  # (B, n)
            out_valid=column_mask(lengths, self.vocab, offset=1),  # (B, max_n+1)
            inputs=self.input_table(points),
            state=state,
        )

    def project(self, enc: torch.Tensor) -> torch.Tensor | None:
        """W1 enc for attention, or None."""
        return None

    def mask(self, memory: Memory, logits: torch.Tensor) -> torch.Tensor:
        """(B, T, V) -> float32 (float64 for a float64 model), -inf on classes this row does not
        have."""
        return logits.to(score_dtype(logits)).masked_fill(~memory.out_valid[:, None], float("-inf"))


class Seq2Seq(_FixedVocabulary):
    """LSTM encoder-decoder (Sutskever et al. 2014; Sec. 2.1): logits = W_out d_i."""

    kind = "seq2seq"

    def __init__(self, config: ModelConfig) -> None:
        super().__init__(config)
        self.out = nn.Linear(config.hidden, self.vocab)
        self.reset_parameters()

    def head(self, memory: Memory, dec: torch.Tensor) -> torch.Tensor:
        return self.mask(memory, self.out(dec))  # (B, T, max_n+1)


class AttentionSeq2Seq(_FixedVocabulary):
    """LSTM encoder-decoder with content-based input attention (Sec. 2.2).

    a^i = softmax_j(v^T tanh(W1 e_j + W2 d_i)) over the real inputs, d'_i = sum_j a^i_j e_j, and
    logits = W_out [d_i; d'_i]. The paper also feeds the concatenation [d_i; d'_i] to the next
    step of the recurrence; an LSTM whose gates read [d_{i-1}; d'_{i-1}] is the same as one that
    reads d'_{i-1} beside its input, so step i's decoder input is [P_{C_{i-1}}; d'_{i-1}] with
    d'_0 = 0 ("input feeding"). The context therefore travels in the decoder state, which is
    (h, c, d') here, d' shaped (1, B, d); teacher forcing runs the decoder one step at a time.
    """

    kind = "attention"

    def __init__(self, config: ModelConfig) -> None:
        super().__init__(config)
        d = config.hidden
        self.decoder = nn.LSTM(config.feature_dim + d, d, config.layers, batch_first=True)
        self.w1 = nn.Linear(d, d, bias=False)
        self.w2 = nn.Linear(d, d, bias=False)
        self.v = nn.Parameter(torch.empty(d))
        nn.init.uniform_(self.v, -1 / math.sqrt(d), 1 / math.sqrt(d))
        self.out = nn.Linear(2 * d, self.vocab)
        self.reset_parameters()

    def project(self, enc: torch.Tensor) -> torch.Tensor:
        return self.w1(enc).to(score_dtype(enc))  # (B, n, d), float32 once, not every step

    def encode(self, points: torch.Tensor, lengths: torch.Tensor) -> Memory:
        """As the baseline's, with the initial context d'_0 = 0 added to the decoder state."""
        memory = super().encode(points, lengths)
        h, c = memory.state  # (layers, B, d) each
        context = h.new_zeros(1, h.shape[1], h.shape[2])  # (1, B, d)
        return replace(memory, state=(h, c, context))

    def forward(
        self, points: torch.Tensor, lengths: torch.Tensor, targets: torch.Tensor
    ) -> torch.Tensor:
        """Teacher-forced logits (B, T, max_n+1), one decoder step at a time (input feeding)."""
        memory = self.encode(points, lengths)
        x = self.decoder_inputs(memory, previous_tokens(targets))  # (B, T, dim)
        state, logits = memory.state, []
        for i in range(x.shape[1]):
            step_logits, state = self.feed(memory, x[:, i : i + 1], state)
            logits.append(step_logits)
        return torch.stack(logits, dim=1)

    def step(
        self, memory: Memory, prev_token: torch.Tensor, state: State
    ) -> tuple[torch.Tensor, State]:
        """One decoding step: previous token (B,), state (h, c, d') -> logits (B, V), state."""
        return self.feed(memory, self.decoder_inputs(memory, prev_token[:, None]), state)

    def feed(self, memory: Memory, x: torch.Tensor, state: State) -> tuple[torch.Tensor, State]:
        """Decoder input (B, 1, dim) and state (h, c, d') -> logits (B, V), next state."""
        h, c, context = state
        fed = torch.cat([x, context.transpose(0, 1).to(x.dtype)], dim=-1)  # (B, 1, dim+d)
        dec, (h, c) = run_lstm(self.decoder, fed, (h, c))  # (B, 1, d)
        u = pointer_scores(memory.enc_proj, self.w2(dec), self.v, self.fused)  # (B, 1, n)
        u = u.masked_fill(~memory.att_valid[:, None], float("-inf"))
        a = torch.softmax(u, dim=-1)  # (B, 1, n); every row has >= 1 real input
        context = a.to(memory.enc.dtype) @ memory.enc  # (B, 1, d): d'_i
        logits = self.out(torch.cat([dec, context.to(dec.dtype)], dim=-1))  # (B, 1, V)
        return self.mask(memory, logits)[:, 0], (h, c, context.transpose(0, 1))
