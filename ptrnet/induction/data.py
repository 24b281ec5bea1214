"""Repeated random sequences: the data an induction head learns from.

A sequence is ``BOS A A F``: BOS is the token V (a place where attention can rest when there
is nothing to find), A is m fresh tokens drawn uniformly from 0..V-1, repeated once, and F fills
the context of 2 L + 1 positions with more fresh tokens (m = L leaves no filler). Position t
predicts token t + 1, so

* the *first half*, positions 0..m, predicts tokens that nothing before them determines (the
  first copy of A, and the second copy's first token: the best loss is log V);
* the *repeated half*, positions m+1..2m-1, predicts A[t - m]: the token just after the
  previous occurrence of the token at t, at position t - m + 1 (the induction stripe);
* the filler's targets (position 2m on) are not scored.
"""

from __future__ import annotations

import torch

FIRST, REPEAT, UNSCORED = 0, 1, 2  # what each target position is


def repeated_batch(
    generator: torch.Generator, batch: int, vocab: int, length: int, shortest: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """``batch`` sequences of BOS and 2 ``length`` tokens and, per predicting position, its part.

    Args:
        generator: draws the tokens and the repeats' lengths (the only randomness).
        shortest: repeats' lengths are drawn uniformly from ``shortest``..``length``; None: all
            of them are ``length`` (the measured sequences, A A).

    Returns:
        tokens (B, 2L + 1) int64 (BOS = ``vocab``), and parts (B, 2L) int64 of :data:`FIRST`,
        :data:`REPEAT`, :data:`UNSCORED`: the part of the prediction made at positions 0..2L-1.
    """
    context = 2 * length
    tokens = torch.randint(vocab, (batch, context), generator=generator)  # (B, 2L)
    if shortest is None:
        m = torch.full((batch,), length)
    else:
        m = torch.randint(shortest, length + 1, (batch,), generator=generator)  # (B,)
    t = torch.arange(context)  # (2L,)
    second = (t >= m[:, None]) & (t < 2 * m[:, None])  # (B, 2L): the copy A of A A
    source = (t - m[:, None]).clamp(min=0)  # (B, 2L): where each copied token comes from
    tokens = torch.where(second, tokens.gather(1, source), tokens)
    pos = t[:-1]  # predicting positions (2L - 1,)
    parts = torch.full((batch, context), UNSCORED)  # (B, 2L): body position p is position p + 1
    parts[:, 0] = FIRST  # BOS predicts A[0]
    parts[:, 1:][pos < m[:, None]] = FIRST
    parts[:, 1:][(pos >= m[:, None]) & (pos < 2 * m[:, None] - 1)] = REPEAT
    bos = torch.full((batch, 1), vocab)
    return torch.cat([bos, tokens], 1), parts
