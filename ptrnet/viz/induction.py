"""The induction lesson's figure: both halves' loss curves, and where layer 1 and layer 2 look
on one fresh sequence (``ptrnet plot induction RUN_DIR``)."""

from __future__ import annotations

import math

import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ptrnet.induction.measure import example_tokens, look, previous_token_score, stripe_score


def induction_figure(model: torch.nn.Module, log: dict[str, np.ndarray], index: int = 0) -> Figure:
    """Three panels: the log's ``first_half_loss`` and ``repeat_loss`` against ``step`` with
    log V; the layer-1 previous-token head's and the layer-2 induction head's attention on fresh
    sequence ``index`` (:func:`ptrnet.induction.measure.example_tokens`)."""
    config = model.config
    tokens = example_tokens(config, index)
    seen = look(model, tokens)
    fig = Figure(figsize=(16, 5.2), layout="constrained")
    curves, first, second = fig.subplots(1, 3)
    draw_losses(curves, log, math.log(config.vocab))
    half = config.length
    layer1 = seen["patterns"][0][seen["previous_head"]]
    layer2 = seen["patterns"][-1][seen["induction_head"]]
    score1 = float(previous_token_score(layer1))
    score2 = float(stripe_score(layer2, half))
    title1 = (
        f"layer 1, head {seen['previous_head'] + 1}: previous token (mean on t-1: {score1:.2f})"
    )
    title2 = f"layer 2, head {seen['induction_head'] + 1}: induction (mean on t-L+1: {score2:.2f})"
    draw_pattern(first, layer1, title1, offset=1)
    image = draw_pattern(second, layer2, title2, offset=half - 1, start=half + 1, stop=2 * half)
    fig.colorbar(image, ax=[first, second], label="attention", shrink=0.8)
    right = (seen["predicted"][half + 1 : -1] == tokens[half + 2 :]).float().mean()
    fig.suptitle(
        f"Induction heads: V = {config.vocab}, L = {half}, sequence BOS A A with A fresh; "
        f"this sequence's repeated half {100 * float(right):.0f}% right"
    )
    return fig


def draw_losses(ax: Axes, log: dict[str, np.ndarray], chance: float) -> None:
    """The two halves' training losses against step, and the chance line log V."""
    ax.plot(log["step"], log["first_half_loss"], label="first half (unpredictable)")
    ax.plot(log["step"], log["repeat_loss"], label="repeated half")
    ax.axhline(chance, color="grey", ls="--", lw=1, label=f"chance, log V = {chance:.2f}")
    ax.set_xlabel("training step")
    ax.set_ylabel("next-token loss (nats)")
    ax.set_ylim(bottom=0)
    ax.set_title("training loss of each half")
    ax.legend(fontsize="small")


def draw_pattern(
    ax: Axes, pattern: torch.Tensor, title: str, offset: int, start: int = 1, stop: int = 0
):
    """One head's (T, T) pattern, query by key, with the stripe key = query - ``offset``
    (queries ``start`` to ``stop`` - 1, default T - 1) outlined; returns the image."""
    pattern = pattern.numpy()
    size = pattern.shape[0]
    image = ax.imshow(pattern, cmap="Greys", vmin=0, vmax=1, interpolation="nearest")
    queries = np.arange(start, stop or size)
    ax.plot(queries - offset, queries, ls="", marker="s", ms=7, mfc="none", mec="tab:orange",
            mew=1, label=f"key = query - {offset}")  # fmt: skip
    ax.set_xlabel("key position")
    ax.set_ylabel("query position")
    ax.set_title(title, fontsize="medium")
    ax.legend(loc="upper right", fontsize="small")
    return image
