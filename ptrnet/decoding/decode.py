"""Decoding entry points: :func:`decode` (every registered strategy, multistart, views) and
:func:`score_sequences`.

Strategies are chosen by :class:`ptrnet.decoding.options.DecodeOptions` and run in the one loop
of :mod:`ptrnet.decoding.search`; the model only supplies logits and the task only supplies the
allowed-token masks. :func:`search` is the one place the options choose how: averaging views
and eight-view search live in :mod:`ptrnet.decoding.views`, one greedy run from every start in
:mod:`ptrnet.decoding.multistart`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ptrnet.datasets.batching import Batch
from ptrnet.decoding.beam import Reranker
from ptrnet.decoding.interface import Network, PointerModel
from ptrnet.decoding.multistart import decode_multistart
from ptrnet.decoding.options import DecodeOptions, several_ways
from ptrnet.decoding.search import Strategy, pick_rows, search_batch
from ptrnet.decoding.strategies import chooser
from ptrnet.decoding.views import averaged, decode_eight_views, decode_multistart_views
from ptrnet.decoding.window import through_window
from ptrnet.tasks.base import Task, from_tokens

__all__ = ["DecodeResult", "decode", "score_sequences"]


@dataclass(frozen=True)
class DecodeResult:
    """Decoded outputs for a batch of B instances over T executed steps.

    Attributes:
        tokens: (B, T) long model tokens, end token 0 repeated after a row finished. A row
            may lack an end token of its own: without the task's output budget (constraints
            ``none``) it is cut off after ``task.max_steps(n) + 1`` tokens, so its output is
            one longer than any the budget allows, and in a batch the end tokens after it are
            padding (not in ``log_prob``).
        log_prob: (B,) float32 log-likelihood of ``tokens`` under the masked step distributions
            (temperature 1, whatever temperature sampled them).
        sequences: B 0-based int64 arrays (:func:`ptrnet.tasks.base.from_tokens`); with
            multistart, a closed hull or tour is written from the start the labels use
            (:meth:`ptrnet.tasks.base.Task.at_label_start`), while ``tokens``, ``log_prob`` and
            ``probs`` stay those of the run that found it, from its own start.
        probs: (B, T, n+1) float32 masked distribution at every step (rows sum to 1, zero on
            disallowed tokens), or None unless requested.
    """

    tokens: torch.Tensor
    log_prob: torch.Tensor
    sequences: list[np.ndarray]
    probs: torch.Tensor | None = None


@torch.no_grad()
def decode(
    model: Network,
    task: Task,
    batch: Batch,
    options: DecodeOptions | None = None,
    *,
    generator: torch.Generator | None = None,
    rerank: Reranker | None = None,
    return_probs: bool = False,
) -> DecodeResult:
    """Decode every instance of ``batch`` with ``model``, on the device of the model's weights.

    Args:
        options: strategy, beam width, constraints (None: the mask ``protocol`` names),
            view options, pick rule and temperature (None = the defaults); ``seed``, ``batch_size``
            and ``device`` are the dataset decoder's (:func:`ptrnet.decoding.dataset.decode_all`).
        generator: draws the samples of ``sample`` decoding (None = torch's global generator).
        rerank: ``rerank(points (n, dim), sequence) -> cost``, lower is better, applied to the
            finished candidates in place of ``options.pick``'s cost (beam search, multistart,
            best-of-k sampling).
        return_probs: also return the masked step distributions (B, T, n+1).

    With ``average_views`` > 1 ``log_prob`` is the score under the averaged distributions,
    with ``search_views=8`` the eight views' mean (:func:`search`). With a
    ``window`` (None is off here: ``model`` is one network, with no size route to default
    from), a batch with an instance larger than it is decoded through
    :class:`ptrnet.decoding.window.LocalWindow` (which leaves the smaller ones unchanged).

    Raises:
        SearchSizeError: an instance too large to search alone with these options
            (:meth:`DecodeOptions.check_search`; the caller chooses how many share the batch).
        DecodingError: an instance whose model scores are not finite numbers, named by its
            index in ``batch``.
        ValueError: options the task cannot use (:meth:`DecodeOptions.for_task`), rerank
            with one candidate per instance, or return_probs with eight-view search or with
            multistart on several views; a ``window`` (DecodeOptionError) the batch needs
            with a model that has no heavy decoder.
    """
    options = (options or DecodeOptions()).for_task(task)
    options.check_search(int(batch.lengths.max()))  # before the search allocates anything
    rerank = rerank or options.reranker(task)
    if rerank is not None and not options.several:
        raise ValueError(f"rerank needs several candidates: {several_ways()}")
    choose = chooser(options, batch.size, generator)
    batch = batch.to(next(model.parameters()).device)
    model = through_window(model, options.window, int(batch.lengths.max()))
    tokens, log_prob, probs = search(model, task, batch, options, choose, rerank, return_probs)
    sequences = [from_tokens(t) for t in tokens.cpu().numpy()]
    if options.multistart:  # a tour from city s, written from city 0
        sequences = [task.at_label_start(seq) for seq in sequences]
    return DecodeResult(tokens=tokens, log_prob=log_prob, sequences=sequences, probs=probs)


def search(
    model: PointerModel,
    task: Task,
    batch: Batch,
    options: DecodeOptions,
    choose: Strategy,
    rerank: Reranker | None,
    keep_probs: bool,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """The one dispatch of the view options (``options`` checked against ``task``): every search
    reads ``averaged(model, options.average_views)``; multistart runs its greedy searches from
    every start of ``options.multistart`` views, eight-view search its searches from every
    symmetry, anything else one search of ``options.width`` rows per instance. Returns tokens
    (B, T), scores (B,) and the masked distributions (B, T, n+1) with ``keep_probs`` (None
    where the decoding has none: several multistart views, eight-view search)."""
    reader = averaged(model, options.average_views)
    constraints = options.constraints
    if options.multistart > 1:
        return decode_multistart_views(
            reader, task, batch, options.multistart, constraints, rerank, keep_probs
        )
    if options.multistart:
        return decode_multistart(reader, task, batch, constraints, rerank, keep_probs)
    if options.search_views > 1:
        return decode_eight_views(model, task, batch, choose, options, rerank, keep_probs)
    trace = search_batch(reader, task, batch, choose, constraints, options.width, keep_probs)
    return pick_rows(trace, batch, options.width, rerank)


def score_sequences(model: Network, batch: Batch) -> torch.Tensor:
    """(B,) teacher-forced log-likelihood of ``batch.targets`` (pads ignored), no task masks.

    Differentiable; wrap in ``torch.no_grad()`` for evaluation.
    """
    if batch.targets is None:
        raise ValueError("score_sequences needs a batch with targets")
    logp = torch.log_softmax(model(batch.points, batch.lengths, batch.targets), dim=-1)
    targets = batch.targets
    picked = logp.gather(2, targets.clamp(min=0)[..., None])[..., 0]  # (B, T)
    return picked.masked_fill(targets < 0, 0.0).sum(dim=1)
