"""What the lesson measures: the two halves' losses, the repeated half's accuracy, and where
each layer's attention looks (the previous-token and induction stripes).

For a sequence BOS A A of half-length L (:mod:`ptrnet.induction.data`), positions 0..2L:

* an *induction* head at a query t of the second copy (t = L+1..2L-1) looks at key t - L + 1,
  the position just after the previous occurrence of token t; :func:`stripe_score` is its mean
  attention there;
* a *previous-token* head at query t looks at key t - 1 (:func:`previous_token_score`), which
  is how a two-layer model can find "the position after": layer 1 writes each position's
  previous token into it, layer 2 matches its query's token against that.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F

from ptrnet.induction.data import FIRST, REPEAT, repeated_batch

EVAL_STREAM = 1  # measurements draw from seed + EVAL_STREAM: sequences training never drew


def stripe_score(pattern: torch.Tensor, half: int) -> torch.Tensor:
    """Mean attention on the induction stripe, per head.

    Args:
        pattern: (..., T, T) attention, query by key, whose last ``half`` positions are the
            second copy of A (T = 2L + 1 with BOS first).
        half: the repeat's length L.

    Returns:
        (...) the mean over queries t = T-L..T-2 of ``pattern[..., t, t - L + 1]``: the
        second copy's positions whose next token is in the sequence (the scored repeated half;
        the last position's next token is not there to copy). Leading axes other than the last
        two are kept (e.g. (B, H) -> average over B yourself).
    """
    size = pattern.shape[-1]
    if half < 2 or size < 2 * half:
        raise ValueError(f"no second copy of length {half} >= 2 in {size} positions")
    t = torch.arange(size - half, size - 1)
    return pattern[..., t, t - half + 1].mean(-1)


def previous_token_score(pattern: torch.Tensor) -> torch.Tensor:
    """(..., T, T) -> (...): the mean over queries t = 1..T-1 of ``pattern[..., t, t - 1]``."""
    t = torch.arange(1, pattern.shape[-1])
    return pattern[..., t, t - 1].mean(-1)


def part_losses(
    logits: torch.Tensor, tokens: torch.Tensor, parts: torch.Tensor
) -> dict[str, torch.Tensor]:
    """The mean next-token loss of each half and the repeated half's accuracy.

    Args:
        logits: (B, T, V) for tokens (B, T); parts: (B, T - 1), :mod:`ptrnet.induction.data`.

    Returns:
        ``loss`` (both halves), ``first_half_loss``, ``repeat_loss``, ``repeat_accuracy``
        (argmax = target), each a scalar tensor (``loss`` keeps its gradient).
    """
    predicted = logits[:, :-1]  # (B, T-1, V)
    target = tokens[:, 1:]  # (B, T-1)
    nll = F.cross_entropy(predicted.flatten(0, 1), target.flatten(), reduction="none")
    nll = nll.view_as(target)  # (B, T-1)
    first, repeat = parts == FIRST, parts == REPEAT
    right = (predicted.argmax(-1) == target) & repeat
    return {
        "loss": nll[first | repeat].mean(),
        "first_half_loss": nll[first].mean().detach(),
        "repeat_loss": nll[repeat].mean().detach(),
        "repeat_accuracy": right.sum() / repeat.sum(),
    }


@torch.no_grad()
def measure(model: torch.nn.Module, count: int, seed: int, batch: int = 256) -> dict[str, Any]:
    """The lesson's figures on ``count`` fresh sequences BOS A A of half-length L (drawn from
    ``seed + EVAL_STREAM``).

    Returns:
        ``repeat_accuracy``, ``repeat_loss``, ``first_half_loss``, ``chance_loss`` (log V),
        ``induction_score`` (the best layer-2 head's :func:`stripe_score`),
        ``previous_token_score`` (the best layer-1 head's), per-head lists of both, and
        ``count``.
    """
    config = model.config
    generator = torch.Generator().manual_seed(seed + EVAL_STREAM)
    sums: dict[str, float] = {}
    heads = {"induction": torch.zeros(config.heads), "previous": torch.zeros(config.heads)}
    model.eval()
    for start in range(0, count, batch):
        size = min(batch, count - start)
        tokens, parts = repeated_batch(generator, size, config.vocab, config.length)
        logits, patterns = model(tokens)
        for key, value in part_losses(logits, tokens, parts).items():
            sums[key] = sums.get(key, 0.0) + float(value) * size
        heads["induction"] += stripe_score(patterns[-1], config.length).sum(0)
        heads["previous"] += previous_token_score(patterns[0]).sum(0)
    result = {key: value / count for key, value in sums.items() if key != "loss"}
    induction = (heads["induction"] / count).tolist()
    previous = (heads["previous"] / count).tolist()
    return {
        **result,
        "chance_loss": math.log(config.vocab),
        "induction_score": max(induction),
        "previous_token_score": max(previous),
        "induction_score_per_head": induction,
        "previous_token_score_per_head": previous,
        "count": count,
    }


EXAMPLE_STREAM = 2  # the sequences figures and pages show: seed + EXAMPLE_STREAM + index


def example_tokens(config: Any, index: int = 0) -> torch.Tensor:
    """Fresh sequence ``index`` (0-based) BOS A A of half-length L for a figure: (2L + 1,)."""
    generator = torch.Generator().manual_seed(config.seed + EXAMPLE_STREAM + index)
    return repeated_batch(generator, 1, config.vocab, config.length)[0][0]


@torch.no_grad()
def look(model: torch.nn.Module, tokens: torch.Tensor) -> dict[str, Any]:
    """Where the model looks on one sequence.

    Args:
        tokens: (T,) BOS then 0..V-1 tokens, 3 <= T <= 2L + 1.

    Returns:
        ``patterns``: per layer (H, T, T) float tensors; ``predicted``: (T,) the argmax next
        token at each position; ``induction_head`` and ``previous_head``: the layer-2 and
        layer-1 heads with the highest stripe scores on this sequence, taking half-length
        (T - 1) // 2 (ties: the lowest head).
    """
    model.eval()
    logits, patterns = model(tokens[None])
    half = (tokens.shape[0] - 1) // 2
    return {
        "patterns": [p[0] for p in patterns],
        "predicted": logits[0].argmax(-1),
        "induction_head": int(stripe_score(patterns[-1][0], half).argmax()),
        "previous_head": int(previous_token_score(patterns[0][0]).argmax()),
    }
