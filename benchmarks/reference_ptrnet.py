"""The straightforward Ptr-Net that speed-ups are measured against (benchmarks/bench_speed.py).

The same model as :class:`ptrnet.model.pointer.PointerNetwork` (same parameters, same logits),
written the way public pointer networks are: an ``nn.LSTM`` encoder, then a Python loop over
decoder steps with an ``nn.LSTMCell`` and the pointer u = v^T tanh(W1 e + W2 d) of that step,
in float32. It is a fair baseline, not a strawman: W1 e is computed once per batch (as in the
better public code), masks are built once, and decoding is batched across instances.

Beam search is the usual per-instance loop (k hypotheses of one instance as a batch of k),
as public implementations write it.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ptrnet.model.pointer import PointerNetwork


class ReferencePointerNetwork(nn.Module):
    """Step-by-step Ptr-Net; ``from_model`` copies the weights of a fast PointerNetwork."""

    def __init__(self, input_dim: int = 2, hidden: int = 256) -> None:
        super().__init__()
        self.encoder = nn.LSTM(input_dim, hidden, batch_first=True)
        self.cell = nn.LSTMCell(input_dim, hidden)
        self.start = nn.Parameter(torch.zeros(input_dim))
        self.end = nn.Parameter(torch.zeros(hidden))
        self.w1 = nn.Linear(hidden, hidden, bias=False)
        self.w2 = nn.Linear(hidden, hidden, bias=False)
        self.v = nn.Parameter(torch.zeros(hidden))

    @classmethod
    def from_model(cls, model: PointerNetwork) -> ReferencePointerNetwork:
        """A reference network with exactly ``model``'s parameters (single layer only)."""
        cfg = model.config
        ref = cls(cfg.input_dim, cfg.hidden)
        state = {k: v for k, v in model.state_dict().items() if not k.startswith("decoder.")}
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            state[f"cell.{name}"] = model.state_dict()[f"decoder.{name}_l0"]
        ref.load_state_dict(state)
        return ref

    def encode(
        self, points: torch.Tensor, lengths: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """(B, n, dim), (B,) -> enc (B, n+1, d) with the end vector first, W1 enc, (h, c)."""
        packed = pack_padded_sequence(points, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, (h, c) = self.encoder(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=points.shape[1])
        enc = torch.cat([self.end.expand(out.shape[0], 1, -1), out], dim=1)
        return enc, self.w1(enc), (h[0], c[0])

    def pointer(self, enc_proj: torch.Tensor, h: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        """One step's masked scores: (B, n+1, d), (B, d), (B, n+1) -> (B, n+1)."""
        u = torch.tanh(enc_proj + self.w2(h)[:, None]) @ self.v
        return u.masked_fill(~valid, float("-inf"))

    def forward(
        self, points: torch.Tensor, lengths: torch.Tensor, targets: torch.Tensor
    ) -> torch.Tensor:
        """Teacher-forced logits (B, T, n+1), like ``PointerNetwork.forward``."""
        enc, enc_proj, (h, c) = self.encode(points, lengths)
        valid = torch.arange(enc.shape[1])[None] <= lengths[:, None]  # (B, n+1)
        table = torch.cat([self.start.expand(points.shape[0], 1, -1), points], dim=1)
        prev = torch.zeros_like(lengths)
        logits = []
        for t in range(targets.shape[1]):
            h, c = self.cell(table[torch.arange(len(prev)), prev], (h, c))
            logits.append(self.pointer(enc_proj, h, valid))
            prev = targets[:, t].clamp(min=0)
        return torch.stack(logits, dim=1)

    @torch.no_grad()
    def greedy(self, points: torch.Tensor, lengths: torch.Tensor, steps: int) -> torch.Tensor:
        """Batched unconstrained greedy decoding: (B, <= steps) tokens, 0 = end (then repeated).

        Stops early once every row has emitted the end token.
        """
        enc, enc_proj, (h, c) = self.encode(points, lengths)
        valid = torch.arange(enc.shape[1])[None] <= lengths[:, None]  # (B, n+1)
        table = torch.cat([self.start.expand(points.shape[0], 1, -1), points], dim=1)
        prev, rows, out = torch.zeros_like(lengths), torch.arange(len(lengths)), []
        done = torch.zeros(len(lengths), dtype=torch.bool)
        for _ in range(steps):
            h, c = self.cell(table[rows, prev], (h, c))
            prev = self.pointer(enc_proj, h, valid).argmax(dim=1).masked_fill(done, 0)
            done = done | (prev == 0)
            out.append(prev)
            if bool(done.all()):
                break
        return torch.stack(out, dim=1)

    @torch.no_grad()
    def beam(self, points: torch.Tensor, steps: int, width: int) -> torch.Tensor:
        """Unconstrained beam search for one instance (n, dim): the most likely of ``width``
        beams as (<= steps,) tokens. A beam that has ended may only repeat the end token."""
        enc, enc_proj, (h, c) = self.encode(points[None], torch.tensor([points.shape[0]]))
        enc_proj, h, c = enc_proj.expand(width, -1, -1), h.expand(width, -1), c.expand(width, -1)
        valid = torch.ones(width, enc.shape[1], dtype=torch.bool)
        end_only = torch.zeros_like(valid)
        end_only[:, 0] = True
        table = torch.cat([self.start[None], points], dim=0)  # (n+1, dim)
        scores = torch.full((width,), float("-inf"))
        scores[0] = 0.0
        prev, history = torch.zeros(width, dtype=torch.long), []
        for step in range(steps):
            h, c = self.cell(table[prev], (h, c))
            allowed = torch.where((prev == 0)[:, None] & (step > 0), end_only, valid)
            logp = torch.log_softmax(self.pointer(enc_proj, h, allowed), dim=1)
            scores, flat = (scores[:, None] + logp).view(-1).topk(width)
            parent, prev = flat // logp.shape[1], flat % logp.shape[1]
            h, c = h[parent], c[parent]
            history = [seq[parent] for seq in history] + [prev]
            if bool((prev == 0).all()):
                break
        return torch.stack(history, dim=1)[0]
