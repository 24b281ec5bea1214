"""Greedy decoding: the most likely allowed token at every step (the paper's decoding, Sec. 2.2,
and every multi-start run's)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ptrnet.decoding.strategies.card import StrategyCard, StrategyOptions

if TYPE_CHECKING:
    import torch


class Greedy:
    """The most likely allowed token at every step."""

    def initial_scores(self, rows: int, device: torch.device) -> torch.Tensor:
        import torch  # here, not at import: the registry stays light (card.py)

        return torch.zeros(rows, device=device)

    def select(
        self, logp: torch.Tensor, scores: torch.Tensor
    ) -> tuple[torch.Tensor, None, torch.Tensor]:
        best, token = logp.max(dim=1)  # (R,) each: argmax's token (the first of ties), its value
        return token, None, scores + best


def build(options: StrategyOptions, instances: int, generator: torch.Generator | None) -> Greedy:
    return Greedy()


GREEDY = StrategyCard(
    name="greedy",
    title="greedy",
    description="the most likely token at every step",
    build=build,
    words=lambda options: "greedy",
)
