"""Beam search over all instances and beams at once, rows laid out as (B * k) = instance-major."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from ptrnet.tasks.base import from_tokens

Reranker = Callable[[np.ndarray, np.ndarray], float]


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
        scores = torch.full((self.batch, self.width), float("-inf"), device=device)
        scores[:, 0] = 0.0
        return scores.view(rows)  # (B*k,)

    def select(
        self, logp: torch.Tensor, scores: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        vocab = logp.shape[1]
        cand = (scores[:, None] + logp).view(self.batch, self.width * vocab)  # (B, k*V)
        top, flat = cand.topk(self.width, dim=1)  # (B, k), sorted best first
        base = torch.arange(self.batch, device=logp.device)[:, None] * self.width
        parent = base + torch.div(flat, vocab, rounding_mode="floor")  # (B, k) rows in B*k
        # Fewer than k finite candidates (tiny n): the -inf fillers end at once, so they never
        # carry a masked token; their score stays -inf and they are never returned.
        token = torch.where(torch.isfinite(top), flat % vocab, torch.zeros_like(flat))
        return token.view(-1), parent.view(-1), top.view(-1)


def pick_beams(
    scores: torch.Tensor,
    tokens: torch.Tensor,
    done: torch.Tensor,
    width: int,
    points: list[np.ndarray] | None = None,
    rerank: Reranker | None = None,
) -> torch.Tensor:
    """Index (B,) into the B*k rows of the chosen beam per instance.

    Without ``rerank``: the most likely beam. With it: among the finished beams with finite score,
    the lowest ``rerank(points_b, sequence)`` (0-based sequence; ties go to the more likely beam);
    an instance without such a beam falls back to the most likely one. ``points`` holds each
    instance's real (n_b, dim) array and is required with ``rerank``.
    """
    batch = scores.shape[0] // width
    best = scores.view(batch, width).argmax(dim=1)  # (B,)
    if rerank is not None:
        if points is None:
            raise ValueError("rerank needs the instances' points")
        best = _rerank(scores, tokens, done, width, points, rerank, best)
    return torch.arange(batch, device=scores.device) * width + best


def _rerank(
    scores: torch.Tensor,
    tokens: torch.Tensor,
    done: torch.Tensor,
    width: int,
    points: list[np.ndarray],
    rerank: Reranker,
    best: torch.Tensor,
) -> torch.Tensor:
    ok = (done & torch.isfinite(scores)).view(-1, width).cpu().numpy()  # (B, k)
    ll = scores.view(-1, width).cpu().numpy()
    rows = tokens.cpu().numpy().reshape(ok.shape[0], width, -1)  # (B, k, T)
    chosen = best.cpu().numpy().copy()
    for b in range(ok.shape[0]):
        keys = [
            (rerank(points[b], from_tokens(rows[b, j])), -ll[b, j], j)
            for j in range(width)
            if ok[b, j]
        ]
        if keys:
            chosen[b] = min(keys)[2]
    return torch.from_numpy(chosen).to(best.device)
