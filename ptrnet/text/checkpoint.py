"""Copy-task checkpoints: one safetensors file with the weights, and in its header metadata the
model's config, the vocabulary and the training configuration, so the file alone rebuilds the
model and its words. The file is read by
:func:`ptrnet.runs.checkpoint.read_checkpoint_file`, with its errors; only the metadata
differs (format ``ptrnet-copy-1``).

Layout: tensors ``model.<param>``; metadata ``ptrnet`` = JSON ``{"format", "model":
PointerGeneratorConfig.to_dict(), "vocabulary": [words], "train": {...}, "step", "info"}``. A
resumable checkpoint (a run's ``last.safetensors``) also holds the optimiser's state and the
torch RNG state as a point task's does (tensors ``optim.<index>.<key>`` and ``rng.torch``,
metadata ``"optimizer"``: :mod:`ptrnet.runs.checkpoint`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import torch

from ptrnet.io.atomic import atomic_write_bytes
from ptrnet.model.pointer_generator import PointerGenerator, PointerGeneratorConfig
from ptrnet.quoting import quote
from ptrnet.runs.checkpoint import (
    CheckpointError,
    check_meta_types,
    check_model_shapes,
    checksummed_file,
    flatten_optimizer,
    read_checkpoint_file,
    unflatten_optimizer,
)
from ptrnet.text.vocab import Vocabulary

FORMAT = "ptrnet-copy-1"


@dataclass(frozen=True)
class CopyModel:
    """A loaded copy-task model, in eval mode on the CPU.

    Attributes:
        model: the network; vocab: its vocabulary; train: the training configuration (JSON);
        step: optimiser steps taken; info: the checkpoint's record (validation metrics);
        path: the file it was read from; optimizer_state, rng_state: what resuming needs, from
        a resumable checkpoint (else None).
    """

    model: PointerGenerator
    vocab: Vocabulary
    train: dict[str, Any] = field(default_factory=dict)
    step: int = 0
    info: dict[str, Any] = field(default_factory=dict)
    path: str = ""
    optimizer_state: dict[str, Any] | None = None
    rng_state: torch.Tensor | None = None


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
    tensors = {f"model.{k}": v.detach().contiguous() for k, v in model.state_dict().items()}
    meta = {
        "format": FORMAT,
        "model": model.config.to_dict(),
        "vocabulary": list(vocab.words),
        "train": train,
        "step": step,
        "info": info or {},
    }
    if optimizer is not None:
        optim_tensors, meta["optimizer"] = flatten_optimizer(optimizer.state_dict())
        tensors.update(optim_tensors)
        tensors["rng.torch"] = torch.get_rng_state()
    atomic_write_bytes(path, checksummed_file(tensors, meta))


def load_copy_model(path: str | os.PathLike[str]) -> CopyModel:
    """Read a file written by :func:`save_copy_model`.

    Raises:
        CheckpointError: unreadable, not a copy-task checkpoint, metadata of the wrong shape or
            types, or tensors that do not fit the configuration (each one line).
    """
    meta, tensors = read_checkpoint_file(path)
    if meta.get("format") != FORMAT:
        raise CheckpointError(
            path, f"not a copy-task checkpoint (format {quote(meta.get('format'))})"
        )
    try:
        _check_meta(meta)
        vocab = Vocabulary(meta["vocabulary"])
        config = PointerGeneratorConfig.from_dict(meta["model"])
        if len(vocab) != config.vocab_size:
            raise ValueError("vocabulary and model disagree on the vocabulary size")
        _check_shapes(config, tensors)
        model = PointerGenerator(config)
        model.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model.")})
        optimizer_state = None
        if "optimizer" in meta:
            optimizer_state = unflatten_optimizer(tensors, meta["optimizer"])
    except (ValueError, TypeError, RuntimeError, KeyError, AttributeError) as err:
        raise CheckpointError(path, f"invalid copy-task checkpoint: {err}") from None
    model.eval()
    train, info = meta.get("train", {}), meta.get("info", {})
    rng = tensors.get("rng.torch")
    path = os.fspath(path)
    return CopyModel(model, vocab, train, meta["step"], info, path, optimizer_state, rng)


def _check_meta(meta: dict[str, Any]) -> None:
    """Raise ValueError unless the metadata has the JSON types loading relies on (``train`` and
    ``info`` may be absent)."""
    required = {"model": dict, "vocabulary": list, "step": int}
    names = {dict: "object", list: "array", int: "integer"}
    check_meta_types(meta, required, {"train": dict, "info": dict, "optimizer": dict}, names)
    if not all(isinstance(word, str) for word in meta["vocabulary"]):
        raise ValueError("metadata 'vocabulary' holds a word that is not a string")


def _check_shapes(config: PointerGeneratorConfig, tensors: dict[str, torch.Tensor]) -> None:
    """Raise ValueError unless the ``model.`` tensors are exactly the configuration's parameters
    with its shapes (taken on the meta device: nothing is allocated for a vast configuration)."""
    with torch.device("meta"):
        expected = {k: tuple(v.shape) for k, v in PointerGenerator(config).state_dict().items()}
    check_model_shapes(expected, {k: v.shape for k, v in tensors.items()})
