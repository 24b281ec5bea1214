"""The straightforward Ptr-Net that speed-ups are measured against (benchmarks/bench_speed.py).

The same model as :class:`ptrnet.model.pointer.PointerNetwork` (same parameters, same logits),
written the way public pointer networks are: an ``nn.LSTM`` encoder, then a Python loop over
decoder steps with an ``nn.LSTMCell`` and the pointer u = v^T tanh(W1 e + W2 d) of that step,
in float32. It is a fair baseline, not a strawman: W1 e is computed once per batch (as in the
better public code), masks are built once, and decoding is batched across instances.

Decoding uses the task's :class:`DecodeState` masks, so both implementations decode exactly the
same tokens and steps. Greedy decoding is batched across instances; beam search is the usual
per-instance loop (the k hypotheses of one instance as a batch of k).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ptrnet.model.pointer import PointerNetwork, State
from ptrnet.tasks.constraints import DecodeState


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
    ) -> tuple[torch.Tensor, torch.Tensor, State]:
        """(B, n, dim), (B,) -> enc (B, n+1, d) with the end vector first, W1 enc, (h, c)."""
        if bool((lengths == points.shape[1]).all()):  # no padding: no packing
            out, (h, c) = self.encoder(points)
        else:
            packed = pack_padded_sequence(points, lengths.cpu(), True, enforce_sorted=False)
            out, (h, c) = self.encoder(packed)
            out, _ = pad_packed_sequence(out, batch_first=True, total_length=points.shape[1])
        enc = torch.cat([self.end.expand(out.shape[0], 1, -1), out], dim=1)
        return enc, self.w1(enc), (h[0], c[0])

    def forward(
        self, points: torch.Tensor, lengths: torch.Tensor, targets: torch.Tensor
    ) -> torch.Tensor:
        """Teacher-forced logits (B, T, n+1), like ``PointerNetwork.forward``."""
        enc, enc_proj, (h, c) = self.encode(points, lengths)
        valid = torch.arange(enc.shape[1])[None] <= lengths[:, None]  # (B, n+1)
        table = torch.cat([self.start.expand(points.shape[0], 1, -1), points], dim=1)
        prev, state, logits = torch.zeros_like(lengths), (h, c), []
        for t in range(targets.shape[1]):
            scores, state = self.step(table, enc_proj, prev, state)
            logits.append(scores.masked_fill(~valid, float("-inf")))
            prev = targets[:, t].clamp(min=0)
        return torch.stack(logits, dim=1)

    def step(
        self, table: torch.Tensor, enc_proj: torch.Tensor, prev: torch.Tensor, state: State
    ) -> tuple[torch.Tensor, State]:
        """One decoding step: decoder input table (R, n+1, dim), previous tokens (R,) ->
        unmasked scores (R, n+1) and the new (h, c)."""
        h, c = self.cell(table[torch.arange(len(prev)), prev], state)
        return torch.tanh(enc_proj + self.w2(h)[:, None]) @ self.v, (h, c)

    @torch.no_grad()
    def greedy(self, points: torch.Tensor, lengths: torch.Tensor, dstate: DecodeState, steps: int):
        """Batched greedy decoding under the masks of ``dstate``: (B, <= steps) tokens.

        Stops once every row has emitted the end token.
        """
        enc, enc_proj, state = self.encode(points, lengths)
        table = torch.cat([self.start.expand(points.shape[0], 1, -1), points], dim=1)
        prev, out = torch.zeros_like(lengths), []
        for _ in range(steps):
            if bool(dstate.done.all()):
                break
            scores, state = self.step(table, enc_proj, prev, state)
            prev = scores.masked_fill(~dstate.allowed(), float("-inf")).argmax(dim=1)
            dstate = dstate.update(prev)
            out.append(prev)
        return torch.stack(out, dim=1)

    @torch.no_grad()
    def beam(self, points: torch.Tensor, dstate: DecodeState, steps: int) -> torch.Tensor:
        """Beam search for one instance (n, dim), ``dstate`` holding one row per beam: the most
        likely beam's tokens (<= steps,)."""
        width = dstate.done.shape[0]
        enc, enc_proj, (h, c) = self.encode(points[None], torch.tensor([points.shape[0]]))
        enc_proj, state = enc_proj.expand(width, -1, -1), (h.expand(width, -1), c.expand(width, -1))
        table = torch.cat([self.start[None], points], dim=0).expand(width, -1, -1)
        scores = torch.full((width,), float("-inf"))
        scores[0] = 0.0
        prev, history = torch.zeros(width, dtype=torch.long), []
        for _ in range(steps):
            if bool(dstate.done.all()):
                break
            u, (h, c) = self.step(table, enc_proj, prev, state)
            logp = torch.log_softmax(u.masked_fill(~dstate.allowed(), float("-inf")), dim=1)
            scores, flat = (scores[:, None] + logp).view(-1).topk(width)
            parent, prev = flat // logp.shape[1], flat % logp.shape[1]
            state, dstate = (h[parent], c[parent]), dstate.index(parent).update(prev)
            history = [seq[parent] for seq in history] + [prev]
        return torch.stack(history, dim=1)[0]
