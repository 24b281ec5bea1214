"""Pointer Network (Vinyals, Fortunato & Jaitly 2015, Sec. 2.3), plus the encoder-decoder core
that the Table 1 baselines in :mod:`ptrnet.model.baselines` share.

Read top to bottom: the decoder-side memory, shared helpers, the recurrent encoder-decoder core,
then the Ptr-Net head. The model is pure: tensors in, float32 logits out. No softmax, sampling or
task rules live here (the loss applies the only softmax; a second one, a known bug elsewhere,
flattens the gradients).

Choices the paper leaves open, made here:

* End symbol: an extra learned encoder vector at memory position 0, so the pointer attends over
  n+1 positions and token 0 (pointing at it) ends the output.
* Start symbol: a learned ``input_dim`` vector fed to the decoder at step 0. The same vector is the
  decoder input after the end token: a row that has ended is forced to repeat the end token by the
  decoding state and its teacher-forced steps are ignored by the loss, so that input only needs to
  be well defined, and "token 0 -> start symbol" is one rule for both cases.
* Beyond the paper (``ModelConfig``): a Transformer encoder in place of the LSTM
  (:mod:`ptrnet.model.transformer`), glimpses that refine the pointer's query, and logit
  clipping (Bello et al. 2016). The defaults are the paper's model.
* Padding: instances are right-padded; the encoder runs each row over its real length only
  (:mod:`ptrnet.model.ragged`), so pads never enter it and the decoder starts from each row's
  state at its real last element. Pad columns get logit -inf (in float32, so no bf16 overflow).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from ptrnet.model.attention import additive_scores
from ptrnet.model.config import ModelConfig
from ptrnet.model.lstm import run_lstm
from ptrnet.model.ragged import ragged_lstm
from ptrnet.model.transformer import SetEncoder

# Decoder state: the LSTM's (h, c), each (layers, B, d), and for the attention baseline also its
# context d' (1, B, d). Every member has the batch on dim 1, so beams re-select rows uniformly.
State = tuple[torch.Tensor, ...]


@dataclass(frozen=True)
class Memory:
    """What the decoder reads at every step, computed once per batch by ``encode``.

    Attributes:
        enc: (B, m, d) encoder states the decoder attends over (Ptr-Net: m = n+1, end vector
            first; attention baseline: m = n).
        enc_proj: (B, m, d) W1 enc, precomputed for additive attention; None without attention.
        glimpse_proj: (B, m, d) the glimpse's projection of enc; None without glimpses.
        att_valid: (B, m) bool, True = a real attention position (not padding).
        out_valid: (B, V) bool, True = an output column that exists for this row (end or a real
            input); V = n+1 for the Ptr-Net, max_n+1 for the baselines.
        inputs: (B, n+1, input_dim) decoder input for each previous token: row 0 is the start
            symbol, row j the coordinates of input j-1 (Sec. 2: the input element P_{C_{i-1}}).
        state: initial decoder state, the encoder's final (h, c) at each row's real last step
            (the attention baseline appends its zero initial context).
    """

    enc: torch.Tensor
    enc_proj: torch.Tensor | None
    att_valid: torch.Tensor
    out_valid: torch.Tensor
    inputs: torch.Tensor
    state: State
    glimpse_proj: torch.Tensor | None = None

    def index(self, rows: torch.Tensor) -> Memory:
        """Re-select batch rows, e.g. ``arange(B).repeat_interleave(k)`` to expand for beams."""
        return Memory(
            enc=self.enc[rows],
            enc_proj=None if self.enc_proj is None else self.enc_proj[rows],
            att_valid=self.att_valid[rows],
            out_valid=self.out_valid[rows],
            inputs=self.inputs[rows],
            state=tuple(s[:, rows] for s in self.state),
            glimpse_proj=None if self.glimpse_proj is None else self.glimpse_proj[rows],
        )


def column_mask(lengths: torch.Tensor, width: int, offset: int) -> torch.Tensor:
    """(B, width) bool, True where column index < lengths + offset."""
    cols = torch.arange(width, device=lengths.device)
    return cols[None, :] < (lengths[:, None] + offset)


def previous_tokens(targets: torch.Tensor) -> torch.Tensor:
    """Teacher forcing: the token before each step, (B, T) -> (B, T); step 0 gets 0 (start).

    Ignored target pads (negative) also map to 0; their outputs are never scored.
    """
    start = torch.zeros_like(targets[:, :1])
    return torch.cat([start, targets[:, :-1]], dim=1).clamp(min=0)


class EncoderDecoder(nn.Module):
    """LSTM encoder (or, for the Ptr-Net, a Transformer one) and LSTM decoder (Sec. 2.1) shared
    by the Ptr-Net and the baselines.

    Subclasses define ``encode`` (building a :class:`Memory`) and ``head`` (decoder outputs to
    masked logits). ``forward`` (teacher forcing) and ``step`` (one autoregressive step) are
    shared so that both paths run the exact same computation. A subclass whose recurrence reads
    its own previous attention (the attention baseline's input feeding) overrides both instead,
    each through one per-step function.
    """

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        d = config.hidden
        if config.encoder == "transformer":
            self.encoder = SetEncoder(config)
        else:
            self.encoder = nn.LSTM(config.input_dim, d, config.layers, batch_first=True)
        self.decoder = nn.LSTM(config.input_dim, d, config.layers, batch_first=True)
        self.start = nn.Parameter(torch.empty(config.input_dim))  # learned start symbol input
        nn.init.uniform_(self.start, -1 / math.sqrt(d), 1 / math.sqrt(d))

    def reset_parameters(self) -> None:
        """Apply ``config.init``: ``paper`` = uniform(-0.08, 0.08) on every parameter (Sec. 4).

        ``default`` keeps PyTorch's layer defaults; the extra vectors (start, end, v) use the LSTM
        rule uniform(-1/sqrt(d), 1/sqrt(d)), set when they are created. A Transformer encoder
        always keeps PyTorch's defaults (a layer norm's gain near 0 would silence it).
        """
        if self.config.init == "paper":
            own = {id(p) for p in self.encoder.parameters()}
            for p in self.parameters():
                if self.config.encoder == "lstm" or id(p) not in own:
                    nn.init.uniform_(p, -0.08, 0.08)

    def run_encoder(
        self, points: torch.Tensor, lengths: torch.Tensor
    ) -> tuple[torch.Tensor, State]:
        """Encode right-padded inputs: (B, n, dim), (B,) -> states (B, n, d), final (h, c)
        (a Transformer encoder: the mean state as h, zero c; :mod:`ptrnet.model.transformer`).

        Pad positions of the returned states are zero. Raises ValueError on bad lengths.
        """
        batch, n, dim = points.shape
        if dim != self.config.input_dim or lengths.shape != (batch,):
            raise ValueError(
                f"expected points (B, n, {self.config.input_dim}) and lengths (B,), "
                f"got {tuple(points.shape)} and {tuple(lengths.shape)}"
            )
        lengths_cpu = lengths.cpu()
        if lengths_cpu.min() < 1 or lengths_cpu.max() > n:
            raise ValueError(f"lengths must lie in 1..{n}")
        if self.config.encoder == "transformer":
            return self.encoder(points, lengths)
        if bool((lengths_cpu == n).all()):  # no padding: one fused LSTM call
            return run_lstm(self.encoder, points)
        return ragged_lstm(self.encoder, points, lengths_cpu)  # each row's own final (h, c)

    def input_table(self, points: torch.Tensor) -> torch.Tensor:
        """(B, n, dim) -> (B, n+1, dim): decoder input per previous token (start symbol first)."""
        start = self.start.to(points.dtype).expand(points.shape[0], 1, -1)  # (B, 1, dim)
        return torch.cat([start, points], dim=1)

    def decoder_inputs(self, memory: Memory, prev: torch.Tensor) -> torch.Tensor:
        """Coordinates of each previous token (Sec. 2, P_{C_{i-1}}): (B, T) -> (B, T, dim)."""
        index = prev[..., None].expand(-1, -1, memory.inputs.shape[-1])  # (B, T, dim)
        return memory.inputs.gather(1, index)

    def encode(self, points: torch.Tensor, lengths: torch.Tensor) -> Memory:
        raise NotImplementedError

    def head(self, memory: Memory, dec: torch.Tensor) -> torch.Tensor:
        """Decoder outputs (B, T, d) -> float32 logits (B, T, V), -inf where not out_valid."""
        raise NotImplementedError

    def forward(
        self, points: torch.Tensor, lengths: torch.Tensor, targets: torch.Tensor
    ) -> torch.Tensor:
        """Teacher-forced logits (Sec. 4, maximum likelihood).

        Args:
            points: (B, n, dim) float, right-padded. lengths: (B,) long in 1..n.
            targets: (B, T) long tokens; negative entries (ignored pads) are allowed.

        Returns:
            (B, T, V) float32 logits; logits[:, i] scores step i given targets[:, :i].
        """
        memory = self.encode(points, lengths)
        x = self.decoder_inputs(memory, previous_tokens(targets))  # (B, T, dim)
        dec, _ = run_lstm(self.decoder, x, memory.state)  # (B, T, d): all T steps in one LSTM call
        return self.head(memory, dec)

    def step(
        self, memory: Memory, prev_token: torch.Tensor, state: State
    ) -> tuple[torch.Tensor, State]:
        """One decoding step: previous token (B,) and decoder state -> logits (B, V), new state.

        Start with ``prev_token`` all 0 and ``state = memory.state``.
        """
        x = self.decoder_inputs(memory, prev_token[:, None])  # (B, 1, dim)
        dec, state = run_lstm(self.decoder, x, state)  # (B, 1, d)
        return self.head(memory, dec)[:, 0], state


class PointerNetwork(EncoderDecoder):
    """Ptr-Net (Sec. 2.3): p(C_i | C_<i, P) = softmax(u^i), u^i_j = v^T tanh(W1 e_j + W2 d_i),
    over j = 0 (end symbol) and the n inputs. Output width V = n+1 follows the input size.

    With ``glimpses`` = G > 0 the query d_i is first replaced G times by a glimpse (Bello et al.
    2016): g = sum_j softmax_j(v_g^T tanh(r_j + W_q q)) r_j over the real positions, with
    r_j = W_r e_j; the pointer then scores with W2 g. With ``logit_clip`` = C > 0 the logits
    are C tanh(u^i).
    """

    def __init__(self, config: ModelConfig) -> None:
        if config.kind != "pointer":
            raise ValueError(f"PointerNetwork needs kind 'pointer', got {config.kind!r}")
        super().__init__(config)
        d = config.hidden
        self.end = nn.Parameter(torch.empty(d))  # encoder vector standing for the end symbol
        self.w1 = nn.Linear(d, d, bias=False)
        self.w2 = nn.Linear(d, d, bias=False)
        self.v = nn.Parameter(torch.empty(d))
        extra = [self.end, self.v]
        if config.glimpses:
            self.g_ref = nn.Linear(d, d, bias=False)  # r_j = W_r e_j
            self.g_w2 = nn.Linear(d, d, bias=False)
            self.g_v = nn.Parameter(torch.empty(d))
            extra.append(self.g_v)
        for p in extra:
            nn.init.uniform_(p, -1 / math.sqrt(d), 1 / math.sqrt(d))
        self.reset_parameters()

    def encode(self, points: torch.Tensor, lengths: torch.Tensor) -> Memory:
        """Encode a batch: (B, n, dim), (B,) -> Memory with m = V = n+1."""
        out, state = self.run_encoder(points, lengths)  # (B, n, d)
        end = self.end.to(out.dtype).expand(out.shape[0], 1, -1)  # (B, 1, d)
        enc = torch.cat([end, out], dim=1)  # (B, n+1, d)
        valid = column_mask(lengths, enc.shape[1], offset=1)  # (B, n+1): end and real inputs
        return Memory(
            enc=enc,
            enc_proj=self.w1(enc),
            att_valid=valid,
            out_valid=valid,
            inputs=self.input_table(points),
            state=state,
            glimpse_proj=self.g_ref(enc) if self.config.glimpses else None,
        )

    def head(self, memory: Memory, dec: torch.Tensor) -> torch.Tensor:
        query = dec  # (B, T, d)
        for _ in range(self.config.glimpses):
            query = self.glimpse(memory, query)
        u = additive_scores(memory.enc_proj, self.w2(query), self.v)  # (B, T, n+1)
        if self.config.logit_clip:
            u = self.config.logit_clip * torch.tanh(u)
        return u.float().masked_fill(~memory.out_valid[:, None], float("-inf"))

    def glimpse(self, memory: Memory, query: torch.Tensor) -> torch.Tensor:
        """One glimpse: query (B, T, d) -> attention-weighted sum of r_j over real positions."""
        ref = memory.glimpse_proj  # (B, m, d)
        scores = additive_scores(ref, self.g_w2(query), self.g_v)  # (B, T, m)
        scores = scores.masked_fill(~memory.att_valid[:, None], float("-inf"))
        weights = torch.softmax(scores, dim=-1).to(ref.dtype)  # (B, T, m)
        return torch.bmm(weights, ref)  # (B, T, d)
