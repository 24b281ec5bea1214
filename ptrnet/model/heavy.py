"""A pointer model with a light encoder and a heavy decoder (the LEHD idea, beyond the paper).

Luo et al. 2023 ("Neural Combinatorial Optimization with Heavy Decoder") move the model's depth
from the encoder to the decoder: the encoder only embeds the inputs (here the Transformer set
encoder with few layers, :mod:`ptrnet.model.transformer`), and at every step the decoder
re-encodes the inputs not chosen yet, together with the first and the last chosen input, through
``decoder_layers`` self-attention layers without positional encoding, then points at one of the
remaining inputs. The representation of what is left is thus rebuilt for the partial solution
at hand, which is what lets a model trained on small instances generalise to large ones.

Tokens are the Ptr-Net's: 0 = end, j = input j-1, so the decoders, masks, beams, multi-start
and views of :mod:`ptrnet.decoding` run this model unchanged through the same ``encode`` /
``step`` / ``forward`` interface as :class:`ptrnet.model.pointer.EncoderDecoder`. The decoder
state is the set of chosen tokens and the first one; the last one is the step's previous token.

The output columns at a step (the model's structural mask, whatever the task's mask adds):

* an input not chosen yet: scored from its own re-encoded vector;
* the first chosen input, once all others are chosen and unless the last step returned to it:
  scored from the re-encoded first-input token, the return that closes a TSP tour
  ``[0, c1, ..., 0]``;
* the end token: scored from the re-encoded last-input token;
* any other chosen input, and pads: -inf. So the model outputs a permutation of its inputs,
  optionally closed by the first one, or a prefix of one, then the end token; only tasks whose
  output is such a permutation can use it.

Teacher forcing: step i of a label sees the set its prefix has chosen, and no recurrence links
the steps, so all T steps of a batch run in one call (:meth:`HeavyPointer.forward`): B * T rows,
grouped by how many inputs remain, each group one attention pass over exactly its first, last
and remaining inputs (no padding; a step with c inputs left costs a pass over c+2 vectors, so a
label of n inputs costs about n^2/2 vector-passes per layer, the price of the heavy decoder).
Both paths call the same :meth:`HeavyPointer.logits`, so the teacher-forced likelihood equals
the sum of the decoded step log-probabilities. LEHD instead trains on random sub-paths of the
labelled tours, which makes a pass cheaper at n = 100 but changes what a training step sees;
it is left out here, where the training sizes are small enough to take every step.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ptrnet.model import heavy_pass
from ptrnet.model.config import ModelConfig
from ptrnet.model.heavy_pass import can_run, decoder_pass, first_layer_qkv
from ptrnet.model.pointer import check_batch, column_mask, previous_tokens
from ptrnet.model.transformer import SetEncoder, reordered_lengths

# Decoder state: chosen (1, R, n+1) bool over tokens (column 0 unused) and first (1, R) long,
# the first chosen token (0 = none yet). Rows on dim 1, as the decoding loop and views expect.
State = tuple[torch.Tensor, torch.Tensor]


@dataclass(frozen=True)
class HeavyMemory:
    """What the heavy decoder reads at every step, computed once per batch by ``encode``.

    Attributes:
        nodes: (B, n, d) the light encoder's input vectors, zero at pads.
        real: (B, n) bool, True = a real input (not padding).
        state: the initial decoder state: nothing chosen, no first token.
        qkv: (B, n, 3d) the decoder's first-layer projections of ``nodes``
            (:meth:`HeavyPointer.node_qkv`), or None (not cached: decoding with gradients, or
            :attr:`HeavyPointer.fast` off).
    """

    nodes: torch.Tensor
    real: torch.Tensor
    state: State
    qkv: torch.Tensor | None = None

    def index(self, rows: torch.Tensor) -> HeavyMemory:
        """Re-select batch rows, e.g. ``arange(B).repeat_interleave(k)`` to expand for beams."""
        state = tuple(s[:, rows] for s in self.state)
        qkv = None if self.qkv is None else self.qkv[rows]
        return HeavyMemory(self.nodes[rows], self.real[rows], state, qkv)


class HeavyPointer(nn.Module):
    """Light encoder + heavy decoder (module docstring); ``config.decoder`` = ``heavy``.

    Parameters beyond the encoder: projections of the first and last chosen inputs and a learned
    vector for each that stands in before anything is chosen (LEHD's W_first, W_last), the
    decoder's pre-norm attention layers, and three linear scores (remaining input, return to the
    first input, end).

    ``fast`` (default True): without gradients, run the decoder op by op
    (:func:`ptrnet.model.heavy_pass.decoder_pass`) with the first layer's projections of the
    inputs cached per batch, on rows of at least ``heavy_pass.FAST_FROM`` vectors; False keeps
    PyTorch's own encoder layers (the reference path the tests compare against).
    Both compute the same function up to float rounding.
    """

    fast: bool = True

    encodes_orders = True  # encode and forward take order=: reordered copies, encoded once

    def __init__(self, config: ModelConfig) -> None:
        if config.kind != "pointer" or config.decoder != "heavy":
            raise ValueError("HeavyPointer needs kind 'pointer' and decoder 'heavy'")
        super().__init__()
        self.config = config
        d = config.hidden
        self.encoder = SetEncoder(config)
        self.first_proj = nn.Linear(d, d)
        self.last_proj = nn.Linear(d, d)
        self.first_start = nn.Parameter(torch.empty(d))
        self.last_start = nn.Parameter(torch.empty(d))
        layer = nn.TransformerEncoderLayer(
            d, config.heads, dim_feedforward=4 * d, dropout=0.0, batch_first=True, norm_first=True
        )
        self.decoder = nn.TransformerEncoder(
            layer, config.decoder_layers, norm=nn.LayerNorm(d), enable_nested_tensor=False
        )
        self.point = nn.Linear(d, 1)  # a remaining input's logit
        self.close = nn.Linear(d, 1)  # the first input's logit, from the first-input token
        self.stop = nn.Linear(d, 1)  # the end token's logit, from the last-input token
        for p in (self.first_start, self.last_start):
            nn.init.uniform_(p, -1 / d**0.5, 1 / d**0.5)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """``init`` = ``paper``: uniform(-0.08, 0.08) on the projections, start vectors and
        scores; the attention stacks keep PyTorch's defaults (as the pointer's Transformer)."""
        if self.config.init == "paper":
            stacks = {id(p) for m in (self.encoder, self.decoder) for p in m.parameters()}
            for p in self.parameters():
                if id(p) not in stacks:
                    nn.init.uniform_(p, -0.08, 0.08)

    def encode(
        self, points: torch.Tensor, lengths: torch.Tensor, order: torch.Tensor | None = None
    ) -> HeavyMemory:
        """(B, n, dim) right-padded, (B,) lengths in 1..n -> memory. ``order`` (R, n): the
        memory of R = B * S reordered copies instead, each instance encoded once
        (:meth:`ptrnet.model.transformer.SetEncoder.forward`). Raises ValueError on bad shapes
        or lengths."""
        check_batch(points, lengths, self.config.input_dim)
        nodes, _ = self.encoder(points, lengths, order)  # (B or R, n, d); LSTM state unused
        lengths = lengths if order is None else reordered_lengths(lengths, order)
        batch, n, _ = nodes.shape
        chosen = torch.zeros(1, batch, n + 1, dtype=torch.bool, device=points.device)
        first = torch.zeros(1, batch, dtype=torch.long, device=points.device)
        real = column_mask(lengths, n, offset=0)  # (B, n)
        return HeavyMemory(nodes, real, (chosen, first), self.node_qkv(nodes))

    def node_qkv(self, nodes: torch.Tensor) -> torch.Tensor | None:
        """(R, n, d) input vectors -> (R, n, 3d), the decoder's first-layer projections of them
        for :meth:`logits` to reuse at every step, or None where the fast path does not run
        (``fast`` off, or gradients recorded)."""
        if not (self.fast and can_run(self.decoder)):
            return None
        return first_layer_qkv(self.decoder, nodes)

    def step(
        self, memory: HeavyMemory, prev_token: torch.Tensor, state: State
    ) -> tuple[torch.Tensor, State]:
        """One decoding step: previous token (B,) and state -> float32 logits (B, n+1), new
        state. Start with ``prev_token`` all 0 and ``state = memory.state``."""
        chosen, first = advance(state, prev_token)  # (1, B, n+1), (1, B)
        logits = self.logits(
            memory.nodes, memory.real, chosen[0], first[0], prev_token, memory.qkv
        )  # (B, n+1)
        return logits, (chosen, first)

    def forward(
        self,
        points: torch.Tensor,
        lengths: torch.Tensor,
        targets: torch.Tensor,
        active: torch.Tensor | None = None,
        order: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Teacher-forced logits: (B, n, dim), (B,), targets (B, T) long (negative = ignored
        pad) -> (B, T, n+1) float32; logits[:, i] scores step i given targets[:, :i], as
        ``step`` would after decoding targets[:, :i].

        ``active`` (B, T) bool, optional: run the decoder only for these steps (the label steps
        a training step samples, :func:`ptrnet.training.losses.sample_label_steps`); the other
        steps' logits are 0 and carry no gradient, so a loss must ignore them. ``order``
        (R, n): targets (R, T) of R reordered copies, as :meth:`encode`.
        """
        memory = self.encode(points, lengths, order)
        prev = previous_tokens(targets)  # (B, T)
        batch, steps = prev.shape
        onehot = nn.functional.one_hot(prev, points.shape[1] + 1)  # (B, T, n+1)
        chosen = onehot.cummax(dim=1).values.bool()  # (B, T, n+1): chosen up to step i
        seen = (prev > 0).long().cummax(dim=1).values  # (B, T): a token chosen by step i
        first_at = (prev > 0).long().argmax(dim=1, keepdim=True)  # (B, 1) its step
        first = prev.gather(1, first_at).expand(-1, steps) * seen  # (B, T)
        if active is None:
            active = torch.ones_like(prev, dtype=torch.bool)
        rows, step_of = active.nonzero(as_tuple=True)  # (R,), (R,): the steps to run
        logits = self.logits(
            memory.nodes[rows],
            memory.real[rows],
            chosen[rows, step_of],
            first[rows, step_of],
            prev[rows, step_of],
        )  # (R, n+1)
        out = logits.new_zeros(batch, steps, logits.shape[1])
        return out.index_put((rows, step_of), logits)  # (B, T, n+1)

    def logits(
        self,
        nodes: torch.Tensor,
        real: torch.Tensor,
        chosen: torch.Tensor,
        first: torch.Tensor,
        last: torch.Tensor,
        qkv: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The heavy decoder's pass: nodes (R, n, d), real (R, n), chosen (R, n+1) bool, first
        and last tokens (R,) -> float32 logits (R, n+1), -inf where the model cannot point.
        ``qkv`` (R, n, 3d), optional: :meth:`node_qkv` of ``nodes``, computed once.

        Rows are grouped by how many inputs remain, so each group runs without padding: c
        remaining inputs cost an attention pass over c+2 vectors, not n+2.
        """
        fast = self.fast and can_run(self.decoder)
        rows, n = real.shape
        remaining = real & ~chosen[:, 1:]  # (R, n)
        first_vec = self.chosen_vector(nodes, first, self.first_proj, self.first_start)  # (R, d)
        last_vec = self.chosen_vector(nodes, last, self.last_proj, self.last_start)  # (R, d)
        count = remaining.sum(dim=1)  # (R,)
        parts, order = [], []
        for c in count.unique().tolist():
            group = (count == c).nonzero()[:, 0]  # (r,)
            where = (~remaining[group]).long().argsort(dim=1, stable=True)[:, :c]  # (r, c)
            x = torch.cat(
                [
                    first_vec[group, None],
                    last_vec[group, None],
                    _rows(nodes, group, where),
                ],
                dim=1,
            )  # (r, c+2, d): the first, the last and the remaining inputs
            if fast and c + 2 >= heavy_pass.FAST_FROM:  # first-layer projections from the cache
                cached = None if qkv is None else _rows(qkv, group, where)  # (r, c, 3d)
                out = decoder_pass(self.decoder, x, cached)  # (r, c+2, d)
            else:
                out = self.decoder(x)  # (r, c+2, d)
            point = out.new_full((len(group), n), float("-inf"))
            point = point.scatter(1, where, self.point(out[:, 2:])[..., 0])  # (r, n)
            parts.append(torch.cat([self.close(out[:, 0]), self.stop(out[:, 1]), point], dim=1))
            order.append(group)
        back = torch.empty_like(count)
        back[torch.cat(order)] = torch.arange(rows, device=count.device)
        scores = torch.cat(parts)[back].float()  # (R, n+2): close, end, the n inputs
        logits = scores[:, 1:]  # (R, n+1)
        can_point, is_first = structural_mask(real, chosen, first, last)  # (R, n+1) each
        logits = torch.where(is_first, scores[:, :1], logits)
        if self.config.logit_clip:
            logits = self.config.logit_clip * torch.tanh(logits)
        return logits.masked_fill(~can_point, float("-inf"))

    @staticmethod
    def chosen_vector(
        nodes: torch.Tensor, token: torch.Tensor, proj: nn.Linear, start: torch.Tensor
    ) -> torch.Tensor:
        """(R, n, d), tokens (R,) -> (R, d): proj(input vector of the token), or ``start`` for
        token 0 (nothing chosen yet)."""
        index = (token - 1).clamp(min=0)[:, None, None].expand(-1, 1, nodes.shape[2])
        vector = proj(nodes.gather(1, index)[:, 0])  # (R, d)
        return torch.where(token[:, None] > 0, vector, start.to(vector.dtype))


def _rows(values: torch.Tensor, group: torch.Tensor, where: torch.Tensor) -> torch.Tensor:
    """values (R, n, k), group (r,) rows, where (r, c) long -> (r, c, k): row ``group[i]``'s
    vectors at ``where[i]``, one copy of just those (not of the group's whole rows first)."""
    rows, n, k = values.shape
    flat = (group[:, None] * n + where).reshape(-1)  # (r * c,)
    return values.reshape(rows * n, k).index_select(0, flat).view(*where.shape, k)


def structural_mask(
    real: torch.Tensor, chosen: torch.Tensor, first: torch.Tensor, last: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The columns a heavy or light decoder can point at after a prefix (the module docstring's
    list), over any leading dims: real (..., n) bool (broadcast against chosen's), chosen
    (..., n+1) bool, first and last tokens (...) -> can_point (..., n+1) bool (the end token,
    every real input not chosen, the first input once all others are chosen unless the last
    step returned to it) and is_first (..., n+1) bool, True at the first input's column when it
    may close the tour now."""
    remaining = real & ~chosen[..., 1:]  # (..., n)
    closes = (first > 0) & ~remaining.any(dim=-1) & (last != first)  # (...)
    # One scatter, not one_hot(first) & closes: decoding calls this at every step, where each
    # tensor operation's fixed cost counts (docs/speed.md).
    is_first = torch.zeros_like(chosen).scatter(-1, first[..., None], closes[..., None])
    can_point = nn.functional.pad(remaining, (1, 0), value=True)  # the end token: column 0
    return can_point | is_first, is_first


def advance(state: State, prev_token: torch.Tensor) -> State:
    """The decoder state after ``prev_token`` (R,): it joins the chosen set, and becomes the
    first token if none was chosen yet. State: chosen (1, R, n+1) bool, first (1, R) long."""
    chosen, first = state
    chosen = chosen.scatter(-1, prev_token[None, :, None], True)  # (1, R, n+1)
    return chosen, torch.where(first == 0, prev_token[None], first)
