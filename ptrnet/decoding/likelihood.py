"""The log-likelihood of given outputs under the masked step distributions a decoder draws from.

One function for every caller that scores a known sequence: the REINFORCE objective
(:mod:`ptrnet.training.losses`) and the eight-view judge (:mod:`ptrnet.decoding.view_scores`).
The masks come from one replay of the task's decoding state
(:func:`ptrnet.tasks.constraints.replay_masks`).
"""

from __future__ import annotations

import torch

from ptrnet.decoding.interface import Network
from ptrnet.decoding.pointer_decoder import masked_log_probs
from ptrnet.tasks.base import Task
from ptrnet.tasks.constraints import replay_masks


def masked_sequence_log_likelihood(
    model: Network,
    task: Task,
    points: torch.Tensor,
    lengths: torch.Tensor,
    tokens: torch.Tensor,
    constraints: str = "task",
    per_step: bool = False,
) -> torch.Tensor:
    """(R,) float32 log-likelihood of token rows under teacher forcing, each step's softmax
    restricted to what ``constraints`` allows after the row's prefix, as a constrained
    decoder's; -inf for a row holding a token the mask disallows. Differentiable. With
    ``per_step``, (R, T): each step's term, the sum's parts.

    Args:
        points: (R, n, dim); lengths: (R,).
        tokens: (R, T) model tokens; after a row's end token either end tokens (the only token
            then allowed) or negative pads (:data:`ptrnet.datasets.batching.IGNORE_INDEX`): both
            add 0.
            So do the tokens past a row's step limit, ``task.max_steps(n) + 1``, where the
            decoder stops a row that has not ended
            (:class:`ptrnet.decoding.pointer_decoder.PointerDecoder`):
            they are a batch's padding, not the row's choice.
        constraints: ``none`` or ``task``.
    """
    logits = model(points, lengths, tokens)  # (R, T, V), teacher forced
    real = tokens.clamp(min=0)
    allowed = replay_masks(task, lengths, real, constraints, points)  # (R, T, n+1)
    logp = masked_log_probs(logits, allowed)  # (R, T, V)
    picked = logp.gather(2, real[..., None])[..., 0]  # (R, T)
    limits = task.max_steps(lengths.to(tokens.device)) + 1  # (R,)
    past = torch.arange(tokens.shape[1], device=tokens.device)[None, :] >= limits[:, None]
    steps = picked.masked_fill((tokens < 0) | past, 0.0)
    return steps if per_step else steps.sum(dim=1)
