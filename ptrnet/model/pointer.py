"""The Pointer Network (Vinyals, Fortunato & Jaitly 2015), in one file to read beside the paper.

Paper -> code (docs/model.md has the same map with every shape and mask):

* Sec. 2.1, the sequence-to-sequence model, p(C^P | P) = prod_i p(C_i | C_1..C_{i-1}, P):
  an encoder LSTM reads P_1..P_n into e_1..e_n (:meth:`EncoderDecoder.run_encoder`), a decoder
  LSTM reads the previous output's coordinates P_{C_{i-1}} into d_i
  (:meth:`EncoderDecoder.forward` for all i at once, :meth:`EncoderDecoder.step` for one).
* Sec. 2.2, content-based input attention, u^i_j = v^T tanh(W1 e_j + W2 d_i):
  :func:`pointer_scores`, written as that equation in plain torch.
* Sec. 2.3, the Ptr-Net: p(C_i | C_1..C_{i-1}, P) = softmax_j(u^i_j) over the inputs, with no
  context vector and no output vocabulary (:meth:`PointerNetwork.head`).
* Beyond the paper: glimpses (Bello et al. 2016, after the process block of Vinyals, Bengio &
  Kudlur 2016, "Order Matters"; :meth:`PointerNetwork.glimpse`), logit clipping, and a
  Transformer encoder (:mod:`ptrnet.model.transformer`). The defaults are the paper's model.

The model returns float32 logits u with -inf on columns a row does not have; the softmax is
applied once, by the loss (``F.cross_entropy``, :mod:`ptrnet.training.losses`) or by the
decoder (``log_softmax``, :func:`ptrnet.decoding.pointer_decoder.masked_log_probs`).

Choices the paper leaves open, made here:

* End symbol: an extra learned encoder vector e_0 at memory position 0, so the pointer attends
  over n+1 positions and token 0 (pointing at e_0) ends the output.
* Start symbol: a learned ``input_dim`` vector fed to the decoder at step 0. It is also the
  decoder input after the end token: a row that has ended repeats the end token and its
  teacher-forced steps are ignored by the loss, so "token 0 -> start symbol" is one rule.
* Padding: instances are right-padded; the encoder runs each row over its real length only
  (:mod:`ptrnet.model.ragged`, the same as a packed sequence), so the decoder starts from each
  row's state at its real last element; pad columns get u = -inf.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from ptrnet.model.attention import additive_scores, score_dtype
from ptrnet.model.config import ModelConfig
from ptrnet.model.features import model_inputs
from ptrnet.model.lstm import run_lstm
from ptrnet.model.ragged import ragged_lstm
from ptrnet.model.transformer import SetEncoder


def pointer_scores(
    w1e: torch.Tensor, w2d: torch.Tensor, v: torch.Tensor, fused: bool = True
) -> torch.Tensor:
    """u^i_j = v^T tanh(W1 e_j + W2 d_i) (Sec. 2.2; the Ptr-Net's pointer, Sec. 2.3).

    Args:
        w1e: (B, m, d) W1 e_j for the m encoder states, computed once per batch.
        w2d: (B, T, d) W2 d_i for T decoder steps.
        v: (d,).
        fused: compute it with :func:`ptrnet.model.attention.additive_scores`, a kernel that
            gives the same u and gradients (to 1e-6 in float64, tests/test_model_pointer.py)
            without building the (B, T, m, d) tensor; it measured 1.5-2.2x faster on CPU for a
            whole training step and 1.1-1.35x for greedy decoding (docs/model.md), so it is the
            default. False: the plain line below.

    Returns:
        u: (B, T, m), in float32 (float64 for float64 inputs), with autocast off: bf16 tanh is
        slower than float32 on CPUs without bf16 vector math, and the logits are float32 anyway.
    """
    if fused:
        return additive_scores(w1e, w2d, v)
    dtype = score_dtype(w1e, w2d, v)
    with torch.autocast(w1e.device.type, enabled=False):
        w1e, w2d, v = w1e.to(dtype), w2d.to(dtype), v.to(dtype)
        return torch.tanh(w1e[:, None] + w2d[:, :, None]) @ v  # (B, T, m, d) @ (d,) -> (B, T, m)


# Decoder state: the LSTM's (h, c), each (layers, B, d), and for the attention baseline also its
# context d' (1, B, d). Every member has the batch on dim 1, so beams re-select rows uniformly.
State = tuple[torch.Tensor, ...]


@dataclass(frozen=True)
class Memory:
    """What the decoder reads at every step, computed once per batch by ``encode``.

    Attributes:
        enc: (B, m, d) encoder states e_j the decoder attends over (Ptr-Net: m = n+1, the end
            vector e_0 first; attention baseline: m = n).
        enc_proj: (B, m, d) W1 e_j, precomputed for the pointer; None without attention.
        glimpse_proj: (B, m, d) the glimpse's W_ref e_j; None without glimpses.
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


def check_batch(points: torch.Tensor, lengths: torch.Tensor, input_dim: int) -> torch.Tensor:
    """What every encoder accepts: points (B, n, input_dim) and lengths (B,) in 1..n. Returns
    the lengths on the CPU; raises ValueError naming the shapes or the range."""
    batch, n, dim = points.shape
    if dim != input_dim or lengths.shape != (batch,):
        raise ValueError(
            f"expected points (B, n, {input_dim}) and lengths (B,), "
            f"got {tuple(points.shape)} and {tuple(lengths.shape)}"
        )
    lengths_cpu = lengths.cpu()
    if lengths_cpu.min() < 1 or lengths_cpu.max() > n:
        raise ValueError(f"lengths must lie in 1..{n}")
    return lengths_cpu


def previous_tokens(targets: torch.Tensor) -> torch.Tensor:
    """Teacher forcing: the token before each step, (B, T) -> (B, T); step 0 gets 0 (start).

    Ignored target pads (negative) also map to 0; their outputs are never scored.
    """
    start = torch.zeros_like(targets[:, :1])
    return torch.cat([start, targets[:, :-1]], dim=1).clamp(min=0)


class EncoderDecoder(nn.Module):
    """The LSTM encoder and LSTM decoder of Sec. 2.1, shared by the Ptr-Net and the Table 1
    baselines (:mod:`ptrnet.model.baselines`); for the Ptr-Net the encoder may instead be a
    Transformer (:mod:`ptrnet.model.transformer`).

    Subclasses define ``encode`` (building a :class:`Memory`) and ``head`` (decoder outputs d_i
    to masked logits). ``forward`` (teacher forcing) and ``step`` (one decoding step) run the
    same computation. A subclass whose recurrence reads its own previous attention (the
    attention baseline's input feeding) overrides both instead.

    ``fused`` (an attribute, not saved): compute :func:`pointer_scores` with the fused kernel
    (the default) or as the plain equation.
    """

    fused: bool = True

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        d = config.hidden
        if config.encoder == "transformer":
            self.encoder = SetEncoder(config)
        else:
            self.encoder = nn.LSTM(config.feature_dim, d, config.layers, batch_first=True)
        self.decoder = nn.LSTM(config.feature_dim, d, config.layers, batch_first=True)
        self.start = nn.Parameter(torch.empty(config.feature_dim))  # learned start symbol input
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
        """Sec. 2.1 encoder: e_1..e_n = LSTM(P_1..P_n). Right-padded (B, n, dim), (B,) ->
        states (B, n, d), zero at pads, and each row's final (h, c) at its real last element
        (a Transformer encoder: the mean state as h, zero c; :mod:`ptrnet.model.transformer`).

        ``points`` are what the network reads (:meth:`features`), ``feature_dim`` numbers each.

        Raises ValueError on bad shapes or lengths.
        """
        lengths_cpu = check_batch(points, lengths, self.config.feature_dim)
        n = points.shape[1]
        if self.config.encoder == "transformer":
            return self.encoder(points, lengths)
        if bool((lengths_cpu == n).all()):  # no padding: self.encoder(points), one fused call
            return run_lstm(self.encoder, points)
        return ragged_lstm(self.encoder, points, lengths_cpu)  # = the LSTM over a packed batch

    def features(self, points: torch.Tensor) -> torch.Tensor:
        """Instance rows (B, n, input_dim) -> what the network reads, (B, n, feature_dim)
        (``config.features``, :mod:`ptrnet.model.features`); raises ValueError on a row width
        other than ``input_dim``."""
        if points.dim() != 3 or points.shape[-1] != self.config.input_dim:
            raise ValueError(
                f"expected points (B, n, {self.config.input_dim}), got {tuple(points.shape)}"
            )
        return model_inputs(points, self.config.features)

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
        """Teacher-forced logits, the terms of log p(C^P | P) (Sec. 2.1; trained by maximum
        likelihood, Sec. 4).

        Args:
            points: (B, n, dim) float, right-padded. lengths: (B,) long in 1..n.
            targets: (B, T) long tokens; negative entries (ignored pads) are allowed.

        Returns:
            (B, T, V) float32 logits (float64 for a float64 model); logits[:, i] scores step i
            given targets[:, :i].
        """
        memory = self.encode(points, lengths)
        x = self.decoder_inputs(memory, previous_tokens(targets))  # (B, T, dim): P_{C_{i-1}}
        dec, _ = run_lstm(self.decoder, x, memory.state)  # (B, T, d): d_1..d_T, one LSTM call
        return self.head(memory, dec)

    def step(
        self, memory: Memory, prev_token: torch.Tensor, state: State
    ) -> tuple[torch.Tensor, State]:
        """One decoding step (Sec. 2.1): previous token (B,) and decoder state -> logits (B, V)
        of p(C_i | C_1..C_{i-1}, P), new state. Start with ``prev_token`` all 0 and
        ``state = memory.state``.
        """
        x = self.decoder_inputs(memory, prev_token[:, None])  # (B, 1, dim): P_{C_{i-1}}
        dec, state = run_lstm(self.decoder, x, state)  # (B, 1, d): d_i
        return self.head(memory, dec)[:, 0], state


class PointerNetwork(EncoderDecoder):
    """Ptr-Net (Sec. 2.3): p(C_i | C_1..C_{i-1}, P) = softmax(u^i), u^i_j = v^T tanh(W1 e_j +
    W2 d_i), over j = 0 (end symbol) and the n inputs. Output width V = n+1 follows the input.

    With ``glimpses`` = G > 0 the query d_i is first replaced G times by a glimpse
    (:meth:`glimpse`). With ``logit_clip`` = C > 0 the logits are C tanh(u^i) (Bello et al.
    2016, App. A.2).
    """

    def __init__(self, config: ModelConfig) -> None:
        if config.kind != "pointer":
            raise ValueError(f"PointerNetwork needs kind 'pointer', got {config.kind!r}")
        super().__init__(config)
        d = config.hidden
        self.end = nn.Parameter(torch.empty(d))  # e_0: the encoder vector of the end symbol
        self.w1 = nn.Linear(d, d, bias=False)  # W1
        self.w2 = nn.Linear(d, d, bias=False)  # W2
        self.v = nn.Parameter(torch.empty(d))  # v
        extra = [self.end, self.v]
        if config.glimpses:
            self.g_ref = nn.Linear(d, d, bias=False)  # W_ref: r_j = W_ref e_j
            self.g_w2 = nn.Linear(d, d, bias=False)  # W_q
            self.g_v = nn.Parameter(torch.empty(d))  # v_g
            extra.append(self.g_v)
        for p in extra:
            nn.init.uniform_(p, -1 / math.sqrt(d), 1 / math.sqrt(d))
        self.reset_parameters()

    def encode(self, points: torch.Tensor, lengths: torch.Tensor) -> Memory:
        """Encode a batch: (B, n, dim), (B,) -> Memory with m = V = n+1 (e_0, e_1..e_n)."""
        points = self.features(points)  # (B, n, feature_dim)
        out, state = self.run_encoder(points, lengths)  # (B, n, d): e_1..e_n
        end = self.end.to(out.dtype).expand(out.shape[0], 1, -1)  # (B, 1, d): e_0
        enc = torch.cat([end, out], dim=1)  # (B, n+1, d)
        valid = column_mask(lengths, enc.shape[1], offset=1)  # (B, n+1): end and real inputs
        return Memory(
            enc=enc,
            enc_proj=self.w1(enc),  # (B, n+1, d): W1 e_j, once per batch
            att_valid=valid,
            out_valid=valid,
            inputs=self.input_table(points),
            state=state,
            glimpse_proj=self.g_ref(enc) if self.config.glimpses else None,
        )

    def head(self, memory: Memory, dec: torch.Tensor) -> torch.Tensor:
        """Sec. 2.3: decoder outputs d_i (B, T, d) -> u^i (B, T, n+1) float32, -inf on pads."""
        query = dec  # (B, T, d)
        for _ in range(self.config.glimpses):
            query = self.glimpse(memory, query)
        u = pointer_scores(memory.enc_proj, self.w2(query), self.v, self.fused)  # (B, T, n+1)
        if self.config.logit_clip:
            u = self.config.logit_clip * torch.tanh(u)
        return u.masked_fill(~memory.out_valid[:, None], float("-inf"))  # u is >= float32

    def glimpse(self, memory: Memory, query: torch.Tensor) -> torch.Tensor:
        """One glimpse (Bello et al. 2016, App. A.1): the attention read of the process block
        of "Order Matters" (Vinyals, Bengio & Kudlur 2016, Sec. 4), without its LSTM.

        g = sum_j softmax_j(v_g^T tanh(r_j + W_q q)) r_j over the real positions, r_j = W_ref e_j:
        query q (B, T, d) -> g (B, T, d).
        """
        ref = memory.glimpse_proj  # (B, m, d): r_j
        scores = pointer_scores(ref, self.g_w2(query), self.g_v, self.fused)  # (B, T, m)
        scores = scores.masked_fill(~memory.att_valid[:, None], float("-inf"))
        weights = torch.softmax(scores, dim=-1).to(ref.dtype)  # (B, T, m)
        return torch.bmm(weights, ref)  # (B, T, d)
