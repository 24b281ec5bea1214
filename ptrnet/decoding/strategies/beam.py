"""Beam search over all instances and beams at once, rows laid out as (B * k) = instance-major
(the paper's decoding for its tables, Sec. 4). Which finished beam an instance returns is
:func:`ptrnet.decoding.beam.pick_beams`'s choice."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ptrnet.decoding.strategies.card import StrategyCard, StrategyOptions

if TYPE_CHECKING:
    import torch


class BeamSearch:
    """Keeps the k most likely prefixes per instance, ranked by total log-likelihood.

    The first step is a real search step: each instance starts with one live beam (score 0) and
    k-1 beams at -inf, so the first expansion draws all k candidates from the live one. A
    finished beam is only allowed the end token by its DecodeState, whose masked log-probability
    is then 0, so it carries forward at zero added cost and competes with the live ones.
    """

    def __init__(self, batch: int, width: int) -> None:
        if width < 1:
            raise ValueError(f"beam width must be >= 1, got {width}")
        self.batch, self.width = batch, width

    def initial_scores(self, rows: int, device: torch.device) -> torch.Tensor:
        import torch  # here, not at import: the registry stays light (card.py)

        scores = torch.full((self.batch, self.width), float("-inf"), device=device)
        scores[:, 0] = 0.0
        return scores.view(rows)  # (B*k,)

    def select(
        self, logp: torch.Tensor, scores: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        import torch

        vocab = logp.shape[1]
        cand = (scores[:, None] + logp).view(self.batch, self.width * vocab)  # (B, k*V)
        top, flat = cand.topk(self.width, dim=1)  # (B, k), sorted best first
        base = torch.arange(self.batch, device=logp.device)[:, None] * self.width
        parent = base + torch.div(flat, vocab, rounding_mode="floor")  # (B, k) rows in B*k
        # Fewer than k finite candidates (tiny n): the -inf fillers end at once, so they never
        # carry a masked token; their score stays -inf and they are never returned.
        token = torch.where(torch.isfinite(top), flat % vocab, torch.zeros_like(flat))
        return token.view(-1), parent.view(-1), top.view(-1)


def build(
    options: StrategyOptions, instances: int, generator: torch.Generator | None
) -> BeamSearch:
    return BeamSearch(instances, options.beam_width)


BEAM = StrategyCard(
    name="beam",
    title="beam search",
    description="the k most likely outputs found by keeping the k best prefixes per instance "
    "at every step (the paper's tables)",
    build=build,
    words=lambda options: f"beam search, width {options.beam_width}",
    width_option="beam_width",
    rows_word="beams",
    several_at_any_width=True,
)
