"""The token choosers of greedy decoding and sampling, and the chooser for a set of options.

Each chooser has the two methods of :class:`ptrnet.decoding.search.Strategy`; beam search's is
:class:`ptrnet.decoding.beam.BeamSearch`.
"""

from __future__ import annotations

import torch

from ptrnet.decoding.beam import BeamSearch
from ptrnet.decoding.options import DecodeOptions


class Greedy:
    """The most likely allowed token at every step."""

    def initial_scores(self, rows: int, device: torch.device) -> torch.Tensor:
        return torch.zeros(rows, device=device)

    def select(
        self, logp: torch.Tensor, scores: torch.Tensor
    ) -> tuple[torch.Tensor, None, torch.Tensor]:
        token = logp.argmax(dim=1)  # (R,)
        return token, None, scores + logp.gather(1, token[:, None])[:, 0]


class Sampling(Greedy):
    """Draws from softmax(masked log-probs / temperature); disallowed tokens have probability 0."""

    def __init__(self, temperature: float, generator: torch.Generator | None) -> None:
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        self.temperature, self.generator = temperature, generator

    def select(
        self, logp: torch.Tensor, scores: torch.Tensor
    ) -> tuple[torch.Tensor, None, torch.Tensor]:
        p = torch.softmax(logp / self.temperature, dim=1)  # (R, V), exactly 0 where masked
        token = torch.multinomial(p, 1, generator=self.generator)[:, 0]  # (R,)
        return token, None, scores + logp.gather(1, token[:, None])[:, 0]


def chooser(
    options: DecodeOptions, size: int, generator: torch.Generator | None
) -> Greedy | Sampling | BeamSearch:
    """The token chooser of ``options.strategy`` for a batch of ``size`` instances."""
    if options.strategy == "beam":
        return BeamSearch(size, options.beam_width)
    if options.strategy == "sample":
        return Sampling(options.temperature, generator)
    return Greedy()
