"""A pointer model with a Transformer encoder and a light context decoder (Kool et al. 2019).

Kool, van Hoof & Welling ("Attention, Learn to Solve Routing Problems!", ICLR 2019) encode the
inputs once and decode with one query per step: the query is a projection of a context (the
mean of the input vectors, the first and the last chosen input), refined by one multi-head
glimpse over the inputs still allowed, and the logits are the clipped compatibilities
``C tanh(q . k_j / sqrt(d))`` with a projection k_j of each input. Every key and value is
computed once per batch, so a step costs O(n d) per row where the heavy decoder
(:mod:`ptrnet.model.heavy`) re-encodes the remaining inputs, O(n d^2 L) per row.

Tokens and state are the heavy decoder's (:mod:`ptrnet.model.heavy`): 0 = end, j = input j-1;
the state is the chosen set and the first token; the same structural mask (a remaining input,
the first input once all others are chosen, the end token) so the same tasks, decoders, beams,
multi-start and views run it. The end token has its own learned key and glimpse key/value,
which also keeps the glimpse's softmax non-empty when every input is chosen.

Teacher forcing: a step's context depends only on the label prefix (its first and last token
and the chosen set), so all T steps of a batch run at once as T queries per instance over the
same keys (:meth:`LightPointer.forward`, through :meth:`LightPointer.scores`). ``step`` computes
the same numbers, bit for bit, one query per row, with fewer tensor operations (a decoding step's
time is their fixed cost when one instance is decoded alone, docs/speed.md): the graph part of
the query added to the first-token table once per batch, its rows picked by one index each,
the mask built in place of the chosen set (:func:`step_mask`); so the teacher-forced likelihood
equals the decoded one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from torch import nn
from torch.nn import functional as F

from ptrnet.model.config import ModelConfig
from ptrnet.model.heavy import State, structural_mask
from ptrnet.model.pointer import check_batch, column_mask, previous_tokens
from ptrnet.model.transformer import SetEncoder, reordered_lengths


@dataclass(frozen=True)
class StepTables:
    """What only a decoding step reads, built once per batch by ``encode`` (B rows).

    Attributes:
        rows: (B,) long, 0..B-1 (a row's own index, to pick its table rows in one index).
        inputs: (B, n+1) bool, the real inputs' tokens (the end token and padding False).
        end: (n+1,) bool, the end token alone.
        graph_first: (B, n+1, d) the graph part plus each token's first-token part (the sum
            the query starts with, as :meth:`LightPointer.scores` adds them).
        logit_kt: (B, d, n+1) the pointer's keys, transposed (a view).
        masked: 0-dim tensors, 0 and -inf in the keys' dtype (the glimpse's additive mask)
            and -inf in float32 (a logit the model cannot point at).
        scale, clip: 0-dim float32 tensors, sqrt(d) and the logit clip C (None for 0): the
            constants as tensors, each worth a tensor operation less than a Python number in
            an operation's arguments.
    """

    rows: torch.Tensor
    inputs: torch.Tensor
    end: torch.Tensor
    graph_first: torch.Tensor
    logit_kt: torch.Tensor
    masked: tuple[torch.Tensor, torch.Tensor, torch.Tensor]
    scale: torch.Tensor
    clip: torch.Tensor | None

    def index(self, rows: torch.Tensor) -> StepTables:
        """Re-select batch rows, as :meth:`LightMemory.index`."""
        return replace(
            self,
            rows=torch.arange(len(rows), device=rows.device),
            inputs=self.inputs[rows],
            graph_first=self.graph_first[rows],
            logit_kt=self.logit_kt[rows],
        )


@dataclass(frozen=True)
class LightMemory:
    """What the light decoder reads at every step, computed once per batch by ``encode``.

    Attributes:
        real: (B, n) bool, True = a real input (not padding).
        state: the initial decoder state: nothing chosen, no first token.
        graph: (B, d) the context's fixed part, W_graph (mean of the real input vectors).
        first_keys, last_keys: (B, n+1, d) the context's part for each token as the first or
            the last chosen one (row 0: the learned stand-in before anything is chosen).
        glimpse_k, glimpse_v: (B, heads, n+1, d / heads) the glimpse's keys and values per
            head, contiguous (a step reads them whole); logit_k: (B, n+1, d) the pointer's keys;
            the end token's first.
        tables: what a decoding step reads besides (:class:`StepTables`); None where only the
            teacher-forced pass reads the memory.
    """

    real: torch.Tensor
    state: State
    graph: torch.Tensor
    first_keys: torch.Tensor
    last_keys: torch.Tensor
    glimpse_k: torch.Tensor
    glimpse_v: torch.Tensor
    logit_k: torch.Tensor
    tables: StepTables | None = None

    def index(self, rows: torch.Tensor) -> LightMemory:
        """Re-select batch rows, e.g. ``arange(B).repeat_interleave(k)`` to expand for beams."""
        state = tuple(s[:, rows] for s in self.state)
        return LightMemory(
            self.real[rows],
            state,
            self.graph[rows],
            self.first_keys[rows],
            self.last_keys[rows],
            self.glimpse_k[rows],
            self.glimpse_v[rows],
            self.logit_k[rows],
            None if self.tables is None else self.tables.index(rows),
        )


class LightPointer(nn.Module):
    """Transformer encoder + light context decoder (module docstring); ``config.decoder`` =
    ``light``. ``config.heads`` heads in the encoder and the glimpse; ``config.logit_clip`` = C
    (0 = no clipping)."""

    encodes_orders = True  # encode and forward take order=: reordered copies, encoded once

    def __init__(self, config: ModelConfig) -> None:
        if config.kind != "pointer" or config.decoder != "light":
            raise ValueError("LightPointer needs kind 'pointer' and decoder 'light'")
        super().__init__()
        self.config = config
        d = config.hidden
        self.encoder = SetEncoder(config)
        self.graph_proj = nn.Linear(d, d, bias=False)  # the context's three parts: W_c split
        self.first_proj = nn.Linear(d, d, bias=False)
        self.last_proj = nn.Linear(d, d, bias=False)
        self.first_start = nn.Parameter(torch.empty(d))  # stand-ins before anything is chosen
        self.last_start = nn.Parameter(torch.empty(d))
        self.keys = nn.Linear(d, 3 * d, bias=False)  # glimpse key, glimpse value, logit key
        self.end_keys = nn.Parameter(torch.empty(3, d))  # the same three for the end token
        self.glimpse_out = nn.Linear(d, d, bias=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """:func:`reset_decoder` (Kool et al.'s rule)."""
        reset_decoder(self)

    def encode(
        self, points: torch.Tensor, lengths: torch.Tensor, order: torch.Tensor | None = None
    ) -> LightMemory:
        """(B, n, dim) right-padded, (B,) lengths in 1..n, ``order`` None or (R, n) reordered
        copies -> memory, as :meth:`ptrnet.model.heavy.HeavyPointer.encode`, with the tables
        a decoding step reads."""
        memory = self.encode_keys(points, lengths, order)
        return replace(memory, tables=step_tables(memory, self.config.logit_clip))

    def encode_keys(
        self, points: torch.Tensor, lengths: torch.Tensor, order: torch.Tensor | None = None
    ) -> LightMemory:
        """:meth:`encode` without the step tables (what the teacher-forced pass reads)."""
        check_batch(points, lengths, self.config.input_dim)
        nodes, (h, _) = self.encoder(points, lengths, order)  # (B or R, n, d); h[0]: the mean
        lengths = lengths if order is None else reordered_lengths(lengths, order)
        batch, n, _ = nodes.shape
        glimpse_k, glimpse_v, logit_k = token_keys(
            self.keys(nodes), self.end_keys, self.config.heads
        )
        chosen = torch.zeros(1, batch, n + 1, dtype=torch.bool, device=points.device)
        first = torch.zeros(1, batch, dtype=torch.long, device=points.device)
        return LightMemory(
            real=column_mask(lengths, n, offset=0),
            state=(chosen, first),
            graph=self.graph_proj(h[0]),
            first_keys=with_start(self.first_proj(nodes), self.first_start),
            last_keys=with_start(self.last_proj(nodes), self.last_start),
            glimpse_k=glimpse_k,
            glimpse_v=glimpse_v,
            logit_k=logit_k,
        )

    def step(
        self, memory: LightMemory, prev_token: torch.Tensor, state: State
    ) -> tuple[torch.Tensor, State]:
        """One decoding step: previous token (B,) and state -> float32 logits (B, n+1), new
        state. Start with ``prev_token`` all 0 and ``state = memory.state``; a state's chosen
        set holds its first token (as :func:`ptrnet.model.heavy.advance` keeps it).

        The logits of :meth:`scores` with T = 1, bit for bit (module docstring)."""
        chosen, first = state  # (1, B, n+1), (1, B)
        chosen = chosen.scatter(-1, prev_token.view(1, -1, 1), True)
        first = torch.where(first.logical_not(), prev_token, first)  # the first, once chosen
        tables = memory.tables or step_tables(memory, self.config.logit_clip)
        batch, width = tables.inputs.shape
        can_point = step_mask(tables.inputs, tables.end, chosen, first, prev_token)  # (1, B, n+1)
        query = (
            tables.graph_first[tables.rows, first] + memory.last_keys[tables.rows, prev_token]
        )  # (1, B, d): one query per row, as scores adds them
        zero, minus_inf, logit_minus_inf = tables.masked
        out = F.scaled_dot_product_attention(
            query.view(batch, memory.glimpse_k.shape[1], 1, -1),
            memory.glimpse_k,
            memory.glimpse_v,
            attn_mask=torch.where(can_point, zero, minus_inf).view(batch, 1, 1, width),
        )  # (B, heads, 1, d / heads); the additive mask is the one a bool mask becomes
        glimpse = F.linear(out.reshape(batch, 1, -1), self.glimpse_out.weight)  # (B, 1, d)
        u = torch.bmm(glimpse, tables.logit_kt).view(batch, width)  # (B, n+1)
        u = (u if u.dtype == torch.float32 else u.float()) / tables.scale
        if tables.clip is not None:
            u = tables.clip * torch.tanh(u)
        logits = torch.where(can_point.view(batch, width), u, logit_minus_inf)
        return logits, (chosen, first)

    def forward(
        self,
        points: torch.Tensor,
        lengths: torch.Tensor,
        targets: torch.Tensor,
        order: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Teacher-forced logits: (B, n, dim), (B,), targets (B, T) long (negative = ignored
        pad) -> (B, T, n+1) float32; logits[:, i] scores step i given targets[:, :i], as
        ``step`` would after decoding targets[:, :i]. ``order`` (R, n): targets (R, T) of R
        reordered copies, as :meth:`encode`."""
        memory = self.encode_keys(points, lengths, order)
        prev = previous_tokens(targets)  # (B, T)
        onehot = F.one_hot(prev, points.shape[1] + 1)  # (B, T, n+1)
        chosen = onehot.cummax(dim=1).values.bool()  # (B, T, n+1): chosen up to step i
        seen = (prev > 0).long().cummax(dim=1).values  # (B, T): a token chosen by step i
        first_at = (prev > 0).long().argmax(dim=1, keepdim=True)  # (B, 1) its step
        first = prev.gather(1, first_at).expand_as(prev) * seen  # (B, T)
        return self.scores(memory, chosen, first, prev)

    def scores(
        self,
        memory: LightMemory,
        chosen: torch.Tensor,
        first: torch.Tensor,
        last: torch.Tensor,
    ) -> torch.Tensor:
        """T queries per row: chosen (B, T, n+1) bool, first and last tokens (B, T) -> float32
        logits (B, T, n+1), -inf where the model cannot point (module docstring)."""
        can_point, _ = structural_mask(memory.real[:, None], chosen, first, last)  # (B, T, n+1)
        query = (
            memory.graph[:, None]
            + pick_rows(memory.first_keys, first)
            + pick_rows(memory.last_keys, last)
        )  # (B, T, d)
        glimpse = self.glimpse_out(self.glimpse(memory, query, can_point))  # (B, T, d)
        return clipped_logits(glimpse, memory.logit_k, self.config.logit_clip, can_point)

    def glimpse(
        self, memory: LightMemory, query: torch.Tensor, can_point: torch.Tensor
    ) -> torch.Tensor:
        """Multi-head attention of the queries (B, T, d) over the allowed tokens' glimpse keys
        and values -> (B, T, d), heads concatenated."""
        return glimpse_attention(query, memory.glimpse_k, memory.glimpse_v, can_point)


def step_tables(memory: LightMemory, clip: float) -> StepTables:
    """The step tables of ``memory`` (B rows; :class:`StepTables`) for logit clip ``clip``."""
    batch, width, d = memory.first_keys.shape
    device, dtype = memory.real.device, memory.glimpse_k.dtype
    end = torch.zeros(width, dtype=torch.bool, device=device)
    end[0] = True
    float32 = dict(dtype=torch.float32, device=device)
    return StepTables(
        rows=torch.arange(batch, device=device),
        inputs=F.pad(memory.real, (1, 0), value=False),
        end=end,
        graph_first=memory.graph[:, None] + memory.first_keys,
        logit_kt=memory.logit_k.transpose(1, 2),
        masked=(
            torch.tensor(0.0, dtype=dtype, device=device),
            torch.tensor(float("-inf"), dtype=dtype, device=device),
            torch.tensor(float("-inf"), **float32),
        ),
        scale=torch.tensor(d**0.5, **float32),
        clip=torch.tensor(clip, **float32) if clip else None,
    )


def step_mask(
    inputs: torch.Tensor,
    end: torch.Tensor,
    chosen: torch.Tensor,
    first: torch.Tensor,
    last: torch.Tensor,
) -> torch.Tensor:
    """:func:`ptrnet.model.heavy.structural_mask`'s can_point for one step, in fewer
    operations: inputs (B, n+1) bool (the real inputs' tokens), end (n+1,) bool (the end token
    alone), chosen (1, B, n+1) bool holding ``first`` (1, B) where it is > 0, last (B,) ->
    (1, B, n+1) bool. The first token's column of ``remaining`` is False (chosen, or the end
    token's when none is), so writing ``closes`` there is structural_mask's ``| is_first``;
    with no first token, last = first = 0 and ``closes`` is False."""
    remaining = inputs & ~chosen  # (1, B, n+1)
    closes = (last != first) > remaining.any(dim=-1)  # (1, B): a > b is a and not b
    return remaining.scatter(-1, first.unsqueeze(-1), closes.unsqueeze(-1)) | end


def glimpse_attention(
    query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, can_point: torch.Tensor
) -> torch.Tensor:
    """Multi-head attention of queries (B, T, d) over keys and values (B, heads, m, d / heads)
    where can_point (B, T, m) allows -> (B, T, d), heads concatenated."""
    q = split_heads(query, keys.shape[1])  # (B, heads, T, d / heads)
    out = F.scaled_dot_product_attention(q, keys, values, attn_mask=can_point[:, None])
    return out.transpose(1, 2).flatten(2)  # (B, T, d)


def reset_decoder(model: nn.Module) -> None:
    """uniform(-1/sqrt(d), 1/sqrt(d)) on the parameters of ``model`` outside its ``encoder``
    (Kool et al.'s rule; ``config.init`` = ``paper`` uses uniform(-0.08, 0.08) instead); the
    encoder keeps PyTorch's defaults, as the pointer's Transformer. For the light and the route
    decoder."""
    d = model.config.hidden
    bound = 0.08 if model.config.init == "paper" else 1 / d**0.5
    own = {id(p) for p in model.encoder.parameters()}
    for p in model.parameters():
        if id(p) not in own:
            nn.init.uniform_(p, -bound, bound)


def token_keys(
    projected: torch.Tensor, end_keys: torch.Tensor, heads: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Each input's three projections (B, n, 3d) and the end token's (3, d) -> per token (the
    end token first) the glimpse's keys and values (B, heads, n+1, d / heads), contiguous,
    and the pointer's keys (B, n+1, d)."""
    batch = projected.shape[0]
    parts = projected.chunk(3, dim=-1)  # 3 x (B, n, d)
    ends = end_keys.to(projected.dtype)  # (3, d)
    keys = [torch.cat([e.expand(batch, 1, -1), k], dim=1) for e, k in zip(ends, parts, strict=True)]
    glimpse_k, glimpse_v = (split_heads(k, heads).contiguous() for k in keys[:2])
    return glimpse_k, glimpse_v, keys[2]


def clipped_logits(
    glimpse: torch.Tensor, logit_k: torch.Tensor, clip: float, can_point: torch.Tensor
) -> torch.Tensor:
    """Glimpses (B, T, d), keys (B, m, d) -> float32 logits (B, T, m): ``C tanh(q . k / sqrt(d))``
    (no tanh when ``clip`` C is 0), -inf where can_point (B, T, m) is False."""
    u = torch.bmm(glimpse, logit_k.transpose(1, 2))  # (B, T, m)
    u = (u if u.dtype == torch.float32 else u.float()) / glimpse.shape[-1] ** 0.5
    if clip:
        u = clip * torch.tanh(u)
    return u.masked_fill(~can_point, float("-inf"))


def with_start(vectors: torch.Tensor, start: torch.Tensor) -> torch.Tensor:
    """(B, n, d), (d,) -> (B, n+1, d): the stand-in as token 0, input j-1 as token j."""
    return torch.cat([start.to(vectors.dtype).expand(vectors.shape[0], 1, -1), vectors], dim=1)


def pick_rows(table: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """table (B, n+1, d), tokens (B, T) -> (B, T, d)."""
    return table.gather(1, tokens[..., None].expand(-1, -1, table.shape[-1]))


def split_heads(x: torch.Tensor, heads: int) -> torch.Tensor:
    """(B, m, d) -> (B, heads, m, d / heads)."""
    b, m, d = x.shape
    return x.view(b, m, heads, d // heads).transpose(1, 2)
