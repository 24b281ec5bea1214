"""Copy-task checkpoints: the sentence tasks' file (:mod:`ptrnet.text.sentence_checkpoint`, its
layout and errors) in format ``ptrnet-copy-1``, whose ``model`` metadata is
``PointerGeneratorConfig.to_dict()``; nothing else is the copy task's own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import torch

from ptrnet.model.pointer_generator import PointerGenerator, PointerGeneratorConfig
from ptrnet.text.sentence_checkpoint import (
    CheckpointRecord,
    Rebuilt,
    load_sentence_model,
    save_sentence_model,
)
from ptrnet.text.vocab import Vocabulary

FORMAT = "ptrnet-copy-1"


@dataclass(frozen=True)
class CopyModel(CheckpointRecord):
    """A loaded copy-task model, in eval mode on the CPU: ``model``, the network; ``vocab``, its
    vocabulary; the keyword fields (``train``, ``step``, ``info``, ``path``, what resuming needs)
    as :class:`~ptrnet.text.sentence_checkpoint.CheckpointRecord`'s."""

    model: PointerGenerator
    vocab: Vocabulary

    @property
    def config(self) -> PointerGeneratorConfig:
        """The network's configuration (as a span model's ``config``)."""
        return self.model.config


def save_copy_model(
    path: str | os.PathLike[str],
    model: PointerGenerator,
    vocab: Vocabulary,
    train: dict[str, Any],
    step: int,
    info: dict[str, Any] | None = None,
    optimizer: torch.optim.Optimizer | None = None,
) -> None:
    """Write the weights, config and vocabulary atomically; with ``optimizer``, also its state
    and the torch RNG state (a resumable checkpoint)."""
    metadata = {"model": model.config.to_dict(), "vocabulary": list(vocab.words)}
    save_sentence_model(path, FORMAT, model, metadata, train, step, info, optimizer)


def load_copy_model(path: str | os.PathLike[str]) -> CopyModel:
    """Read a file written by :func:`save_copy_model`.

    Raises:
        CheckpointError: unreadable, not a copy-task checkpoint, metadata of the wrong shape or
            types, or tensors that do not fit the configuration (each one line).
    """
    model, vocab, _, record = load_sentence_model(path, FORMAT, "copy-task", {}, _rebuild)
    return CopyModel(model, vocab, **record)


def _rebuild(meta: dict[str, Any], vocab: Vocabulary) -> Rebuilt:
    """The pointer-generator the metadata configures; ValueError if it disagrees with ``vocab``."""
    config = PointerGeneratorConfig.from_dict(meta["model"])
    if len(vocab) != config.vocab_size:
        raise ValueError("vocabulary and model disagree on the vocabulary size")
    return Rebuilt(lambda: PointerGenerator(config), {})
