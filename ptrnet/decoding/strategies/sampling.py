"""Sampling: each token drawn from the model's distribution (divided by a temperature); with
several samples per instance, the best kept by the ``pick`` rule (best-of-k sampling)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ptrnet.decoding.strategies.card import StrategyCard, StrategyOptions
from ptrnet.decoding.strategies.greedy import Greedy

if TYPE_CHECKING:
    import torch


class Sampling(Greedy):
    """Draws from softmax(masked log-probs / temperature); disallowed tokens have probability 0."""

    def __init__(self, temperature: float, generator: torch.Generator | None) -> None:
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        self.temperature, self.generator = temperature, generator

    def select(
        self, logp: torch.Tensor, scores: torch.Tensor
    ) -> tuple[torch.Tensor, None, torch.Tensor]:
        p = (logp / self.temperature).softmax(dim=1)  # (R, V), exactly 0 where masked
        token = p.multinomial(1, generator=self.generator)[:, 0]  # (R,)
        return token, None, scores + logp.gather(1, token[:, None])[:, 0]


def build(options: StrategyOptions, instances: int, generator: torch.Generator | None) -> Sampling:
    return Sampling(options.temperature, generator)


def words(options: StrategyOptions) -> str:
    """``sampling (seed 3)``, ``best of 16 samples (seed 3)``; a temperature other than 1 too."""
    heat = "" if options.temperature == 1 else f", temperature {options.temperature:g}"
    if options.samples > 1:
        return f"best of {options.samples} samples (seed {options.seed}{heat})"
    return f"sampling (seed {options.seed}{heat})"


SAMPLING = StrategyCard(
    name="sample",
    title="sampling",
    description="each token drawn from the model's distribution (divided by a temperature); "
    "of several samples per instance the best is kept",
    build=build,
    words=words,
    width_option="samples",
    reads=("temperature", "seed"),
    rows_word="samples",
)
