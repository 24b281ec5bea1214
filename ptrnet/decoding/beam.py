"""The pick among several candidate rows per instance (beams, samples, starts): the most likely,
or the lowest cost under a reranker. Rows are laid out instance-major, (B * k); beam search
itself is :mod:`ptrnet.decoding.strategies.beam`."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from ptrnet.tasks.base import from_tokens

Reranker = Callable[[np.ndarray, np.ndarray], float]


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
