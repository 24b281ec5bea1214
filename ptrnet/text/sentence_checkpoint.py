"""The checkpoint file every sentence task's model is saved in (copy: :mod:`ptrnet.text.checkpoint`,
span: :mod:`ptrnet.text.span_checkpoint`): one safetensors file with the weights, and in its
header metadata the task's format name, the model's configuration, the word vocabulary, what
else the task's model needs (the span classifier's answers), the training configuration, the
step and the checkpoint's record, so the file alone rebuilds the model. The file is read by
:func:`ptrnet.runs.checkpoint.read_checkpoint_file`, with its checksum and errors.

Layout: tensors ``model.<param>``; metadata ``ptrnet`` = JSON ``{"format", "model": {...},
"vocabulary": [words], <the task's own keys>, "train": {...}, "step", "info"}``. A resumable
checkpoint (a run's ``last.safetensors``) also holds the optimiser's state and the torch RNG
state as a point task's does (tensors ``optim.<index>.<key>`` and ``rng.torch``, metadata
``"optimizer"``: :mod:`ptrnet.runs.checkpoint`).

What differs per task is only its format name, its metadata and how they rebuild the network
(:class:`Rebuilt`); each task's module keeps its ``save_*``/``load_*`` names and messages.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import torch
from torch import nn

from ptrnet.inference import resolve_checkpoint
from ptrnet.io.atomic import atomic_write_bytes
from ptrnet.io.errors import UsageError
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

OPTIONAL = {"train": dict, "info": dict, "optimizer": dict}
TYPE_NAMES = {dict: "object", list: "array", int: "integer"}


@dataclass(frozen=True, kw_only=True)
class CheckpointRecord:
    """What every loaded sentence-task model carries besides its network and vocabularies
    (keyword fields, after the task's own).

    Attributes:
        train: the training configuration (JSON); step: optimiser steps taken; info: the
            checkpoint's record (validation metrics); path: the file it was read from;
        optimizer_state, rng_state: what resuming needs, from a resumable checkpoint (else None).
    """

    train: dict[str, Any] = field(default_factory=dict)
    step: int = 0
    info: dict[str, Any] = field(default_factory=dict)
    path: str = ""
    optimizer_state: dict[str, Any] | None = None
    rng_state: torch.Tensor | None = None


@dataclass(frozen=True)
class Rebuilt:
    """A task's reading of a checkpoint's metadata: ``build()`` makes a fresh network of the
    saved configuration (called once on the meta device to check the tensors' shapes, once for
    real), and ``parts`` is what the task's loaded model holds besides it (config, answers)."""

    build: Callable[[], nn.Module]
    parts: dict[str, Any]


def save_sentence_model(
    path: str | os.PathLike[str],
    format_name: str,
    model: nn.Module,
    metadata: dict[str, Any],
    train: dict[str, Any],
    step: int,
    info: dict[str, Any] | None = None,
    optimizer: torch.optim.Optimizer | None = None,
) -> None:
    """Write ``model``'s weights and ``metadata`` (the task's keys, ``model`` and ``vocabulary``
    first) atomically; with ``optimizer``, also its state and the torch RNG state (a resumable
    checkpoint)."""
    tensors = {f"model.{k}": v.detach().contiguous() for k, v in model.state_dict().items()}
    meta = {"format": format_name, **metadata, "train": train, "step": step, "info": info or {}}
    if optimizer is not None:
        optim_tensors, meta["optimizer"] = flatten_optimizer(optimizer.state_dict())
        tensors.update(optim_tensors)
        tensors["rng.torch"] = torch.get_rng_state()
    atomic_write_bytes(path, checksummed_file(tensors, meta))


def load_sentence_model(
    path: str | os.PathLike[str],
    format_name: str,
    what: str,
    required: dict[str, type],
    rebuild: Callable[[dict[str, Any], Vocabulary], Rebuilt],
) -> tuple[nn.Module, Vocabulary, dict[str, Any], dict[str, Any]]:
    """Read a file written by :func:`save_sentence_model` in ``format_name``: the network (eval
    mode, CPU), its vocabulary, the task's ``parts`` and the :class:`CheckpointRecord` fields.
    ``required``: the task's metadata keys beyond ``model``, ``vocabulary`` and ``step``, with
    their JSON types; ``rebuild`` reads the metadata (ValueError, TypeError or KeyError for a
    bad one); ``what`` names the kind in errors (``copy-task``).

    Raises:
        CheckpointError: unreadable, not a ``what`` checkpoint, metadata of the wrong shape or
            types, or tensors that do not fit the configuration (each one line).
    """
    meta, tensors = read_checkpoint_file(path)
    if meta.get("format") != format_name:
        raise CheckpointError(path, f"not a {what} checkpoint (format {quote(meta.get('format'))})")
    try:
        keys = {"model": dict, "vocabulary": list, **required, "step": int}
        check_meta_types(meta, keys, OPTIONAL, TYPE_NAMES)
        if not all(isinstance(word, str) for word in meta["vocabulary"]):
            raise ValueError("metadata 'vocabulary' holds a word that is not a string")
        vocab = Vocabulary(meta["vocabulary"])
        rebuilt = rebuild(meta, vocab)
        with torch.device("meta"):  # nothing is allocated for a vast configuration
            expected = {k: tuple(v.shape) for k, v in rebuilt.build().state_dict().items()}
        check_model_shapes(expected, {k: v.shape for k, v in tensors.items()})
        model = rebuilt.build()
        model.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model.")})
        optimizer_state = None
        if "optimizer" in meta:
            optimizer_state = unflatten_optimizer(tensors, meta["optimizer"])
    except (ValueError, TypeError, RuntimeError, KeyError, AttributeError) as err:
        raise CheckpointError(path, f"invalid {what} checkpoint: {err}") from None
    model.eval()
    record = {"train": meta.get("train", {}), "step": meta["step"], "info": meta.get("info", {}),
              "path": os.fspath(path), "optimizer_state": optimizer_state,
              "rng_state": tensors.get("rng.torch")}  # fmt: skip
    return model, vocab, rebuilt.parts, record


M = TypeVar("M", bound=CheckpointRecord)


def load_trained(
    load_file: Callable[[str], M], path: str | os.PathLike[str] | None, task: str, default: str
) -> M:
    """The model ``load_file`` reads from a run directory or checkpoint file (None: the bundled
    model of ``task``), which must have been trained on ``task``; a checkpoint whose training
    configuration names no task was trained on ``default``.

    Raises:
        UsageError: a model trained on another task; else as
            :func:`ptrnet.inference.resolve_checkpoint` (with InputError) and ``load_file``.
    """
    loaded = load_file(resolve_checkpoint(path, task))
    trained_on = loaded.train.get("task", default)
    if trained_on != task:
        raise UsageError(f"the model at {loaded.path} was trained on {trained_on}, not {task}")
    return loaded
