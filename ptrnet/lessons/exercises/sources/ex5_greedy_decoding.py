"""Exercise 5: the greedy decoding loop.

A pointer network's decoder emits one position at a time and is fed its own choice back. Greedy
decoding takes the most likely position *not chosen yet* at every step, until every input has
been output once (the order of a sorter, or a tour).
"""

import torch


def greedy_decode(step, state, batch: int, n: int) -> torch.Tensor:
    """Decode B rows of n inputs greedily, each input chosen exactly once.

    Args:
        step: a function ``step(prev, state) -> (scores, state)``. ``prev`` is (B,) long, the
            position chosen at the previous step in each row, -1 at the first step; ``scores``
            is (B, n) float32 (logits or log-probabilities) for the next position.
        state: the decoder's state before the first step; pass each new one back to ``step``.
        batch: B. n: the number of inputs per row.

    Returns:
        (B, n) long: the chosen positions in order, a permutation of 0..n-1 in every row. At
        each step the choice is the highest score among the positions that row has not chosen
        (ties: the lowest position).
    """
    # solution: begin
    chosen = torch.zeros(batch, n, dtype=torch.bool)  # (B, n)
    prev = torch.full((batch,), -1, dtype=torch.long)
    order = []
    for _ in range(n):
        scores, state = step(prev, state)  # (B, n)
        prev = scores.masked_fill(chosen, float("-inf")).argmax(dim=-1)  # (B,)
        chosen = chosen.clone()
        chosen[torch.arange(batch), prev] = True
        order.append(prev)
    return torch.stack(order, dim=1)
    # solution: end
