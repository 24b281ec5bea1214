"""The token choosers of greedy decoding and sampling, and the chooser for a set of options.

Each chooser has the two methods of :class:`ptrnet.decoding.search.Strategy`; beam search's is
:class:`ptrnet.decoding.beam.BeamSearch`.
"""

from __future__ import annotations

import torch

from ptrnet.decoding.beam import BeamSearch
from ptrnet.decoding.options import SEARCH_STRATEGIES, DecodeOptions
from ptrnet.quoting import quote


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
    return strategy_named(options.strategy, size, options.width, options.temperature, generator)


def strategy_named(
    name: str,
    size: int,
    width: int,
    temperature: float = 1.0,
    generator: torch.Generator | None = None,
) -> Greedy | Sampling | BeamSearch:
    """The token chooser of strategy ``name`` (one of
    :data:`~ptrnet.decoding.options.SEARCH_STRATEGIES`; multistart is greedy) for ``size``
    instances: ``width`` beams each for ``beam``; ``temperature`` and ``generator`` for
    ``sample``.

    Raises:
        ValueError: an unknown name, a width below 1, a temperature not above 0.
    """
    if name == "beam":
        return BeamSearch(size, width)
    if name == "sample":
        return Sampling(temperature, generator)
    if name in ("greedy", "multistart"):
        return Greedy()
    raise ValueError(f"unknown strategy {quote(name)}; choose from {', '.join(SEARCH_STRATEGIES)}")
