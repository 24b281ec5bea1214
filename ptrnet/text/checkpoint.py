"""Copy-task checkpoints: one safetensors file with the weights, and in its header metadata the
model's config, the vocabulary and the training configuration, so the file alone rebuilds the
model and its words. The file is read by
:func:`ptrnet.runs.checkpoint.read_checkpoint_file`, with its errors; only the metadata
differs (format ``ptrnet-copy-1``).

Layout: tensors ``model.<param>``; metadata ``ptrnet`` = JSON ``{"format", "model":
PointerGeneratorConfig.to_dict(), "vocabulary": [words], "train": {...}, "step", "info"}``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ptrnet.io.atomic import atomic_write_bytes
from ptrnet.model.pointer_generator import PointerGenerator, PointerGeneratorConfig
from ptrnet.runs.checkpoint import CheckpointError, checksummed_file, read_checkpoint_file
from ptrnet.text.vocab import Vocabulary

FORMAT = "ptrnet-copy-1"


@dataclass(frozen=True)
class CopyModel:
    """A loaded copy-task model, in eval mode on the CPU.

    Attributes:
        model: the network; vocab: its vocabulary; train: the training configuration (JSON);
        step: optimiser steps taken; info: the checkpoint's record (validation metrics);
        path: the file it was read from.
    """

    model: PointerGenerator
    vocab: Vocabulary
    train: dict[str, Any] = field(default_factory=dict)
    step: int = 0
    info: dict[str, Any] = field(default_factory=dict)
    path: str = ""


def save_copy_model(
    path: str | os.PathLike[str],
    model: PointerGenerator,
    vocab: Vocabulary,
    train: dict[str, Any],
    step: int,
    info: dict[str, Any] | None = None,
) -> None:
    """Write the weights, config and vocabulary atomically."""
    tensors = {f"model.{k}": v.detach().contiguous() for k, v in model.state_dict().items()}
    meta = {
        "format": FORMAT,
        "model": model.config.to_dict(),
        "vocabulary": list(vocab.words),
        "train": train,
        "step": step,
        "info": info or {},
    }
    atomic_write_bytes(path, checksummed_file(tensors, meta))


def load_copy_model(path: str | os.PathLike[str]) -> CopyModel:
    """Read a file written by :func:`save_copy_model`.

    Raises:
        CheckpointError: unreadable, not a copy-task checkpoint, or inconsistent.
    """
    meta, tensors = read_checkpoint_file(path)
    if meta.get("format") != FORMAT:
        raise CheckpointError(path, f"not a copy-task checkpoint (format {meta.get('format')!r})")
    try:
        vocab = Vocabulary(meta["vocabulary"])
        model = PointerGenerator(PointerGeneratorConfig.from_dict(meta["model"]))
        model.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model.")})
    except (ValueError, TypeError, KeyError, RuntimeError) as err:
        raise CheckpointError(path, f"invalid copy-task checkpoint: {err}") from None
    if len(vocab) != model.config.vocab_size:
        raise CheckpointError(path, "vocabulary and model disagree on the vocabulary size")
    model.eval()
    info = meta.get("info", {})
    return CopyModel(model, vocab, meta.get("train", {}), int(meta["step"]), info, os.fspath(path))
