"""The lesson panel "a pointer grown by itself": the bundled induction model's attention on one
sequence A A (docs/induction.md).

:func:`induction_answer` runs the model on A A, A typed by the user (tokens 0..V-1, 2..L of
them) or drawn at random (fresh sequence ``seed``,
:func:`ptrnet.induction.measure.example_tokens`), and returns the layer-2 induction head's and
the layer-1 previous-token head's attention patterns, the model's next-token predictions, and
which of the repeated half's predictions are right.

The model is ``ptrnet/bundled/induction/`` (:data:`ptrnet.induction.train.BUNDLED_INDUCTION`);
without it the panel says so (:func:`load_bundled_induction`).
"""

from __future__ import annotations

import json
import os
from typing import Any

import torch
from pydantic import Field

from ptrnet.induction.measure import example_tokens, look, previous_token_score, stripe_score
from ptrnet.induction.model import AttentionOnly
from ptrnet.induction.train import BUNDLED_INDUCTION, MEASUREMENTS, WEIGHTS, load_run
from ptrnet.web.schemas import Strict


class InductionRequest(Strict):
    """The first half A of a sequence A A (None: fresh sequence ``seed``'s)."""

    tokens: list[int] | None = Field(None, min_length=2, max_length=256)
    seed: int = Field(0, ge=0, le=2**31 - 1)


def load_bundled_induction(folder: str = BUNDLED_INDUCTION) -> tuple[AttentionOnly | None, str]:
    """The bundled induction model and ``""``, or None and why it is missing. The model carries
    its run's ``measurements.json`` as ``model.measured`` (None without one)."""
    if not os.path.isfile(os.path.join(folder, WEIGHTS)):
        return None, f"induction model not installed: no ptrnet/bundled/induction/{WEIGHTS}"
    model = load_run(folder)
    path = os.path.join(folder, MEASUREMENTS)
    model.measured = None
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as stream:
            model.measured = json.load(stream)
    return model, ""


def induction_info(model: AttentionOnly) -> dict[str, Any]:
    """What the page says about the model: its size, and its run's measurements if it came
    with them (:func:`load_bundled_induction`)."""
    config = model.config
    keys = ("vocab", "length", "d_model", "heads", "steps", "bos")
    info: dict[str, Any] = {key: getattr(config, key) for key in keys}
    saved = getattr(model, "measured", None)
    if saved:
        info["measured"] = {k: saved[k] for k in ("repeat_accuracy", "induction_score", "count")}
    return info


def sequence_of(model: AttentionOnly, request: InductionRequest) -> torch.Tensor:
    """The sequence BOS A A of the request, (2m + 1,) int64.

    Raises:
        ValueError: a token outside 0..V-1, or more than L tokens.
    """
    config = model.config
    if request.tokens is None:
        return example_tokens(config, request.seed)
    if len(request.tokens) > config.length:
        raise ValueError(
            f"at most {config.length} tokens (the model's L), got {len(request.tokens)}"
        )
    bad = [t for t in request.tokens if not 0 <= t < config.vocab]
    if bad:
        raise ValueError(f"tokens are 0..{config.vocab - 1}; got {bad[0]}")
    half = torch.tensor(request.tokens, dtype=torch.int64)
    return torch.cat([torch.tensor([config.bos]), half, half])


def rounded(pattern: torch.Tensor) -> list[list[float]]:
    """A (T, T) pattern as rows of floats to 4 decimals (the page's heatmap)."""
    return [[round(float(a), 4) for a in row] for row in pattern]


def induction_answer(model: AttentionOnly, request: InductionRequest) -> dict[str, Any]:
    """The request's sequence through the model: tokens, both heads' patterns and scores, the
    predictions and which of the repeated half's are right.

    Raises:
        ValueError: a bad typed sequence (:func:`sequence_of`).
    """
    tokens = sequence_of(model, request)
    half = (tokens.shape[0] - 1) // 2
    seen = look(model, tokens)
    layer2 = seen["patterns"][-1][seen["induction_head"]]
    layer1 = seen["patterns"][0][seen["previous_head"]]
    predicted = seen["predicted"].tolist()
    return {
        "tokens": tokens.tolist(),
        "half": half,
        "typed": request.tokens is not None,
        "predicted": predicted,
        # position t predicts token t + 1; the repeated half is t = half + 1 .. 2 half - 1
        "right": [predicted[t] == int(tokens[t + 1]) for t in range(half + 1, 2 * half)],
        "layer2": rounded(layer2),
        "layer2_head": seen["induction_head"],
        "induction_score": round(float(stripe_score(layer2, half)), 4),
        "layer1": rounded(layer1),
        "layer1_head": seen["previous_head"],
        "previous_token_score": round(float(previous_token_score(layer1)), 4),
        "info": induction_info(model),
    }
