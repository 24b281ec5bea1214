"""Exercise 2: masking.

A sorted list or a tour names every input once, so a position already chosen must not be
chosen again. The decoder gives it score -inf before the softmax: its probability is exactly 0
and the others share all of it.
"""

import torch


def masked_log_probs(scores: torch.Tensor, chosen: torch.Tensor) -> torch.Tensor:
    """The step distribution over the positions not chosen yet, as log-probabilities.

    Args:
        scores: (B, n) float32 scores (logits or log-probabilities) of n positions.
        chosen: (B, n) bool, True where the position was already chosen. Each row has at
            least one False. Do not modify it (it is the caller's).

    Returns:
        (B, n) float32: -inf where ``chosen``, elsewhere log-probabilities whose exp sums to 1
        over the allowed positions of each row.

    Raises:
        ValueError: if the two shapes differ.
    """
    # solution: begin
    if scores.shape != chosen.shape:
        raise ValueError(f"scores {tuple(scores.shape)} and chosen {tuple(chosen.shape)} differ")
    return torch.log_softmax(scores.masked_fill(chosen, float("-inf")), dim=-1)
    # solution: end
