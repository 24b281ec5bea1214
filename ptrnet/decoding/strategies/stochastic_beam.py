"""Stochastic beam search (Kool, van Hoof & Welling 2019, "Stochastic Beams and Where to Find
Them", Sec. 3): k distinct outputs per instance, a sample without replacement from the model's
distribution over whole outputs, drawn by one beam search over Gumbel-perturbed scores.

Every prefix y carries its log-probability phi(y) and a perturbed value G(y), a Gumbel variable
with location phi(y): G(root) = 0, and the children of y get independent Gumbels around their
own phi, shifted so that their maximum is exactly G(y) (the Gumbel-top-k trick applied top
down, Sec. 3.2, Eq. 8 in its stable form, their Appendix B). Keeping the k prefixes of largest G
at every step keeps the k outputs of largest G among all outputs, which are k outputs drawn
without replacement, each with probability proportional to its model probability among those
not drawn before. A finished output has one child (the end token, log-probability 0), which
keeps its G. The rows' scores are their phi, so ``pick`` chooses among the k as among beams.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ptrnet.decoding.strategies.card import StrategyCard, StrategyOptions

if TYPE_CHECKING:
    import torch

TINY = 1e-30  # keeps an exponential draw of exactly 0 from a Gumbel of +inf


class StochasticBeam:
    """Samples ``width`` distinct outputs per instance by top-k over perturbed scores; rows laid
    out (B * k), instance-major, as beam search's. Holds each row's perturbed value G between
    steps (reset by :meth:`initial_scores`, so one chooser serves several searches)."""

    def __init__(self, batch: int, width: int, generator: torch.Generator | None) -> None:
        if width < 1:
            raise ValueError(f"beam width must be >= 1, got {width}")
        self.batch, self.width, self.generator = batch, width, generator
        self.perturbed: torch.Tensor | None = None  # (B*k,) G of each row's prefix

    def initial_scores(self, rows: int, device: torch.device) -> torch.Tensor:
        import torch  # here, not at import: the registry stays light (card.py)

        scores = torch.full((self.batch, self.width), float("-inf"), device=device)
        scores[:, 0] = 0.0  # one live root per instance; the k - 1 others are fillers
        self.perturbed = scores.clone().view(rows)  # G(root) = 0
        return scores.view(rows)  # (B*k,)

    def select(
        self, logp: torch.Tensor, scores: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        import torch

        vocab = logp.shape[1]
        phi = scores[:, None] + logp  # (B*k, V) children's log-probabilities
        perturbed = shifted_gumbels(phi, self.perturbed, self.generator)  # (B*k, V)
        flat = perturbed.view(self.batch, self.width * vocab)  # (B, k*V)
        top, index = flat.topk(self.width, dim=1)  # (B, k), largest G first
        base = torch.arange(self.batch, device=logp.device)[:, None] * self.width
        parent = base + torch.div(index, vocab, rounding_mode="floor")  # (B, k) rows in B*k
        found = torch.isfinite(top)  # fewer than k outputs exist: fillers end at once
        token = torch.where(found, index % vocab, torch.zeros_like(index))
        chosen = phi.view(self.batch, -1).gather(1, index)
        self.perturbed = top.view(-1)
        return token.view(-1), parent.view(-1), torch.where(found, chosen, top).view(-1)


def shifted_gumbels(
    phi: torch.Tensor, parent: torch.Tensor, generator: torch.Generator | None
) -> torch.Tensor:
    """(R, V) perturbed values of the children of R prefixes: Gumbels with locations ``phi``
    (R, V) (-inf: no such child), conditioned on their maximum being ``parent`` (R,), the
    prefix's own perturbed value (-inf for a filler row: all its children -inf).

    Stable form of ``-log(exp(-parent) - exp(-Z) + exp(-g))``, Z the row's largest draw g
    (Kool et al. 2019, Appendix B)."""
    import torch

    draws = torch.empty(phi.shape, device=phi.device).exponential_(generator=generator)
    g = phi - torch.log(draws.clamp(min=TINY))  # (R, V) Gumbel(phi); -inf where phi is
    z = g.max(dim=1, keepdim=True).values  # (R, 1)
    live = torch.isfinite(parent)[:, None] & torch.isfinite(z)  # (R, 1)
    t = torch.where(live, parent[:, None], torch.zeros_like(z))
    v = t - g + log1mexp(torch.where(live, g - z, torch.zeros_like(g)))
    shifted = t - v.clamp(min=0) - torch.log1p(torch.exp(-v.abs()))
    return torch.where(live & torch.isfinite(g), shifted, torch.full_like(g, float("-inf")))


def log1mexp(x: torch.Tensor) -> torch.Tensor:
    """log(1 - exp(x)) for x <= 0, accurate on both sides of -log 2 (Maechler 2012)."""
    import torch

    near = x > -math.log(2)
    return torch.where(near, torch.log(-torch.expm1(x)), torch.log1p(-torch.exp(x)))


def build(
    options: StrategyOptions, instances: int, generator: torch.Generator | None
) -> StochasticBeam:
    return StochasticBeam(instances, options.beam_width, generator)


STOCHASTIC_BEAM = StrategyCard(
    name="stochastic_beam",
    title="stochastic beam search",
    description="k distinct outputs drawn without replacement from the model's distribution "
    "(Gumbel top-k, Kool et al. 2019), the best kept",
    build=build,
    words=lambda options: (
        f"stochastic beam search, width {options.beam_width} (seed {options.seed})"
    ),
    width_option="beam_width",
    reads=("seed",),
    rows_word="beams",
    several_at_any_width=True,
)
