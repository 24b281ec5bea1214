"""The light decoder for vehicle routing: the depot revisited, the load left in the context.

Kool, van Hoof & Welling (ICLR 2019, Sec. 5 "VRP") decode the capacitated VRP with the light
decoder of :mod:`ptrnet.model.light` changed in two places, kept here:

* **Context**: the mean of the input vectors, the last chosen input, and the share of the
  vehicle's capacity still free, ``W_graph h_mean + W_last h_last + w_load (1 - used)`` (no
  first input: a route's start is the depot).
* **What can be pointed at** (:func:`route_mask`): a customer not served yet whose demand fits
  the load left; the depot after a customer while customers remain (never first, never twice in
  a row); the end token once every customer is served. So the model alone outputs the task's
  answer form (:mod:`ptrnet.tasks.cvrp`), and the task's own rule, exact in integers, agrees.

The model reads ``demand`` features (:func:`ptrnet.model.features.depot_and_demands`): rows
(x, y, demand / capacity, depot flag), the depot first. Tokens are the Ptr-Net's: 0 = end,
j = input j-1, so 1 = the depot. The state is the chosen set and ``used``, the share of the
capacity delivered since the vehicle last left the depot; the load left is ``1 - used``.

Teacher forcing: ``used`` at step i depends only on the label's prefix (what it delivered since
its last depot visit), so all T steps run at once, as in the light decoder; ``step`` runs the
same :meth:`RoutePointer.scores` with T = 1. ``used`` is summed in the step's order when
decoding and by a cumulative sum when teacher forcing: the two agree to float rounding, and
the demand check allows :data:`LOAD_SLACK` so that rounding never hides a customer that fits.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ptrnet.model.config import ModelConfig
from ptrnet.model.features import depot_and_demands
from ptrnet.model.light import (
    clipped_logits,
    glimpse_attention,
    pick_rows,
    reset_decoder,
    token_keys,
    with_start,
)
from ptrnet.model.pointer import check_batch, column_mask, previous_tokens
from ptrnet.model.transformer import SetEncoder, reordered_inputs, reordered_lengths
from ptrnet.tasks.cvrp import DEPOT  # the depot's token: input 0, token 1

#: Demand shares up to this much above the load left still fit (float rounding of ``used``);
#: far below the smallest step between two shares, 1 / capacity.
LOAD_SLACK = 1e-5

# Decoder state: chosen (1, R, n+1) bool over tokens (columns 0 and 1 unused) and used (1, R),
# the share of the capacity delivered since the depot. Rows on dim 1, as the decoding loop
# expects.
State = tuple[torch.Tensor, torch.Tensor]


@dataclass(frozen=True)
class RouteMemory:
    """What the route decoder reads at every step, computed once per batch by ``encode``.

    Attributes:
        customers: (B, n+1) bool over tokens, True at a real customer (not the end, the depot
            or padding).
        demand: (B, n+1) each token's demand share (0 for the end, the depot and padding).
        state: the initial decoder state: nothing chosen, nothing delivered.
        graph: (B, d) the context's fixed part, W_graph (mean of the real input vectors).
        last_keys: (B, n+1, d) the context's part for each token as the last chosen one (row 0:
            the learned stand-in before anything is chosen).
        glimpse_k, glimpse_v, logit_k: as :class:`ptrnet.model.light.LightMemory`'s.
    """

    customers: torch.Tensor
    demand: torch.Tensor
    state: State
    graph: torch.Tensor
    last_keys: torch.Tensor
    glimpse_k: torch.Tensor
    glimpse_v: torch.Tensor
    logit_k: torch.Tensor

    def index(self, rows: torch.Tensor) -> RouteMemory:
        """Re-select batch rows, e.g. ``arange(B).repeat_interleave(k)`` to expand for beams."""
        chosen, used = self.state
        return RouteMemory(
            self.customers[rows],
            self.demand[rows],
            (chosen[:, rows], used[:, rows]),
            self.graph[rows],
            self.last_keys[rows],
            self.glimpse_k[rows],
            self.glimpse_v[rows],
            self.logit_k[rows],
        )


class RoutePointer(nn.Module):
    """Transformer encoder + the routing light decoder (module docstring); ``config.decoder``
    = ``route`` with ``config.features`` = ``demand``."""

    encodes_orders = True  # encode and forward take order=: copies of an instance, encoded once

    def __init__(self, config: ModelConfig) -> None:
        if config.kind != "pointer" or config.decoder != "route":
            raise ValueError("RoutePointer needs kind 'pointer' and decoder 'route'")
        super().__init__()
        self.config = config
        d = config.hidden
        self.encoder = SetEncoder(config)
        self.graph_proj = nn.Linear(d, d, bias=False)  # the context's parts: W_c split
        self.last_proj = nn.Linear(d, d, bias=False)
        self.load_proj = nn.Linear(1, d, bias=False)
        self.last_start = nn.Parameter(torch.empty(d))  # the stand-in before anything is chosen
        self.keys = nn.Linear(d, 3 * d, bias=False)  # glimpse key, glimpse value, logit key
        self.end_keys = nn.Parameter(torch.empty(3, d))  # the same three for the end token
        self.glimpse_out = nn.Linear(d, d, bias=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """The light decoder's rule (:func:`ptrnet.model.light.reset_decoder`)."""
        reset_decoder(self)

    def encode(
        self, points: torch.Tensor, lengths: torch.Tensor, order: torch.Tensor | None = None
    ) -> RouteMemory:
        """(B, n, 4) rows (x, y, demand, capacity), the depot first, right-padded; (B,) lengths
        in 1..n -> memory. ``order`` (R, n), R = B * S: the memory of S copies of each
        instance read in that order (:meth:`ptrnet.model.transformer.SetEncoder.forward`),
        each instance encoded once, as sampling several routes or starts per instance reads
        them; every copy keeps its depot first.

        Raises:
            ValueError: an ``order`` that moves a depot.
        """
        check_batch(points, lengths, self.config.input_dim)
        features = depot_and_demands(points)  # (B, n, 4)
        nodes, (h, _) = self.encoder(features, lengths, order)  # (R, n, d); h[0]: the mean
        if order is not None:
            if not bool((order[:, 0] == 0).all()):
                raise ValueError("the route decoder reads every copy with its depot first")
            features = reordered_inputs(features, order)  # (R, n, 4)
            lengths = reordered_lengths(lengths, order)
        batch, n, _ = nodes.shape
        real = column_mask(lengths, n, offset=0)  # (B, n)
        customers = nn.functional.pad(real[:, 1:], (2, 0), value=False)  # (B, n+1)
        demand = nn.functional.pad(features[..., 2] * customers[:, 1:], (1, 0))  # (B, n+1)
        glimpse_k, glimpse_v, logit_k = token_keys(
            self.keys(nodes), self.end_keys, self.config.heads
        )
        chosen = torch.zeros(1, batch, n + 1, dtype=torch.bool, device=points.device)
        used = torch.zeros(1, batch, dtype=demand.dtype, device=points.device)
        return RouteMemory(
            customers=customers,
            demand=demand,
            state=(chosen, used),
            graph=self.graph_proj(h[0]),
            last_keys=with_start(self.last_proj(nodes), self.last_start),
            glimpse_k=glimpse_k,
            glimpse_v=glimpse_v,
            logit_k=logit_k,
        )

    def step(
        self, memory: RouteMemory, prev_token: torch.Tensor, state: State
    ) -> tuple[torch.Tensor, State]:
        """One decoding step: previous token (B,) and state -> float32 logits (B, n+1), new
        state. Start with ``prev_token`` all 0 and ``state = memory.state``."""
        chosen, used = state
        chosen = chosen.scatter(-1, prev_token[None, :, None], True)  # (1, B, n+1)
        delivered = memory.demand.gather(1, prev_token[:, None])[:, 0]  # (B,)
        used = torch.where(prev_token == DEPOT, 0.0, used + delivered[None])  # (1, B)
        logits = self.scores(memory, chosen[0, :, None], used[0, :, None], prev_token[:, None])
        return logits[:, 0], (chosen, used)

    def forward(
        self,
        points: torch.Tensor,
        lengths: torch.Tensor,
        targets: torch.Tensor,
        order: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Teacher-forced logits: (B, n, 4), (B,), targets (B, T) long (negative = ignored pad)
        -> (B, T, n+1) float32; logits[:, i] scores step i given targets[:, :i], as ``step``
        would after decoding targets[:, :i]. ``order`` (R, n): targets (R, T) of R copies, as
        :meth:`encode`."""
        memory = self.encode(points, lengths, order)
        prev = previous_tokens(targets)  # (B, T)
        onehot = nn.functional.one_hot(prev, points.shape[1] + 1)  # (B, T, n+1)
        chosen = onehot.cummax(dim=1).values.bool()  # (B, T, n+1): chosen up to step i
        return self.scores(memory, chosen, used_since_depot(memory.demand, prev), prev)

    def scores(
        self, memory: RouteMemory, chosen: torch.Tensor, used: torch.Tensor, last: torch.Tensor
    ) -> torch.Tensor:
        """T queries per row: chosen (B, T, n+1) bool, used (B, T), last tokens (B, T) ->
        float32 logits (B, T, n+1), -inf where the model cannot point (module docstring)."""
        can_point = route_mask(memory.customers, memory.demand, chosen, used, last)
        load = self.load_proj((1 - used)[..., None].to(memory.graph.dtype))  # (B, T, d)
        query = memory.graph[:, None] + pick_rows(memory.last_keys, last) + load  # (B, T, d)
        glimpse = glimpse_attention(query, memory.glimpse_k, memory.glimpse_v, can_point)
        glimpse = self.glimpse_out(glimpse)  # (B, T, d)
        return clipped_logits(glimpse, memory.logit_k, self.config.logit_clip, can_point)


def used_since_depot(demand: torch.Tensor, prev: torch.Tensor) -> torch.Tensor:
    """Teacher forcing's ``used``: demand shares (B, n+1), previous tokens (B, T) -> (B, T), the
    share delivered by the tokens up to each step since the last depot among them."""
    delivered = demand.gather(1, prev).cumsum(dim=1)  # (B, T): since the start
    steps = torch.arange(prev.shape[1], device=prev.device).expand_as(prev)
    at_depot = torch.where(prev == DEPOT, steps, -1).cummax(dim=1).values  # (B, T), -1: none
    before = delivered.gather(1, at_depot.clamp(min=0))  # (B, T): up to that depot visit
    return delivered - torch.where(at_depot >= 0, before, 0.0)


def route_mask(
    customers: torch.Tensor,
    demand: torch.Tensor,
    chosen: torch.Tensor,
    used: torch.Tensor,
    last: torch.Tensor,
) -> torch.Tensor:
    """The columns the route decoder can point at (module docstring): customers and demand
    (B, n+1), chosen (B, T, n+1), used (B, T), last tokens (B, T) -> (B, T, n+1) bool."""
    waiting = customers[:, None] & ~chosen  # (B, T, n+1)
    fits = demand[:, None] <= (1 - used)[..., None] + LOAD_SLACK  # (B, T, n+1)
    left = waiting.any(dim=-1)  # (B, T): a customer still to serve
    depot = left & (last > DEPOT)  # (B, T): just served a customer
    ends = torch.stack([~left, depot], dim=-1)  # (B, T, 2): the end token, the depot
    return torch.cat([ends, (waiting & fits)[..., 2:]], dim=-1)
