"""Exercise 1: pointer attention (Vinyals et al. 2015, Sec. 2.3).

A pointer network scores every input j at one decoding step with additive attention,

    u_j = v^T tanh(W1 e_j + W2 d)

and, unlike ordinary attention, uses the softmax of those scores *as its output*: a
distribution over the input positions. Write that distribution, as log-probabilities.
"""

import torch


def pointer_log_probs(
    enc: torch.Tensor, dec: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, v: torch.Tensor
) -> torch.Tensor:
    """log p(j) = log softmax_j(v^T tanh(W1 e_j + W2 d)) for every input j of every row.

    Args:
        enc: (B, n, d) float32, the encoder states e_1..e_n of B instances.
        dec: (B, d) float32, the decoder state d of each row at this step.
        w1, w2: (d, d) float32 matrices; W1 e is ``w1 @ e`` (so ``enc @ w1.T`` for all j).
        v: (d,) float32.

    Returns:
        (B, n) float32 log-probabilities: each row's exp sums to 1 over its n positions.

    Raises:
        ValueError: if the shapes do not fit together (say which).
    """
    # solution: begin
    batch, n, d = enc.shape
    if dec.shape != (batch, d) or w1.shape != (d, d) or w2.shape != (d, d) or v.shape != (d,):
        raise ValueError(
            f"shapes do not fit: enc {tuple(enc.shape)}, dec {tuple(dec.shape)}, "
            f"w1 {tuple(w1.shape)}, w2 {tuple(w2.shape)}, v {tuple(v.shape)}"
        )
    hidden = torch.tanh(enc @ w1.T + (dec @ w2.T)[:, None, :])  # (B, n, d)
    scores = hidden @ v  # (B, n): u_j
    return torch.log_softmax(scores, dim=-1)
    # solution: end
