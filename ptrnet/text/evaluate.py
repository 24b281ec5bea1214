"""Inference for the sentence tasks (``copy``): load a model by name, decode sentences, score a
dataset. The CLI (``ptrnet eval|predict copy``, :mod:`ptrnet.cli.sentences`) is a thin shell
over these."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ptrnet.decoding.options import DecodeOptions
from ptrnet.text.checkpoint import CopyModel, load_copy_model
from ptrnet.text.decode import Decoded, decode_sources
from ptrnet.text.format import Pair
from ptrnet.text.metrics import copy_metrics
from ptrnet.text.sentence_checkpoint import load_trained


def load(path: str | os.PathLike[str] | None, task: str = "copy") -> CopyModel:
    """The model of a run directory or checkpoint file; None = the bundled model of ``task``.

    Raises:
        UsageError: a model trained on another task; else as
            :func:`ptrnet.inference.resolve_checkpoint` (with InputError);
        CheckpointError: the file is not a sentence-task checkpoint.
    """
    return load_trained(load_copy_model, path, task, "copy")  # before the task field: copy


def evaluate_pairs(
    model: CopyModel | Any,
    pairs: Sequence[Pair],
    options: DecodeOptions | None = None,
    p_gen: float | None = None,
) -> tuple[dict[str, Any], list[Decoded]]:
    """Decode every source of ``pairs`` with ``model`` (a :class:`CopyModel`, or anything with
    ``model`` and ``vocab``) as ``options`` say (None: greedy; as
    :func:`ptrnet.text.decode.decode_sources` takes them) and score the outputs
    (:func:`ptrnet.text.metrics.copy_metrics`); returns the metrics and the decoded outputs."""
    sources = [p.source for p in pairs]
    decoded = decode_sources(model.model, model.vocab, sources, options, p_gen)
    metrics = copy_metrics(
        pairs, [d.words for d in decoded], model.vocab, [d.p_gen for d in decoded]
    )
    return metrics, decoded
