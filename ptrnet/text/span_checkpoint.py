"""Span-task checkpoints, in the pattern of :mod:`ptrnet.text.checkpoint`: one safetensors file
with the weights, and in its header metadata the model's configuration, the vocabulary, the
classifier's answer vocabulary and the training configuration, so the file alone rebuilds the
model. Read by :func:`ptrnet.runs.checkpoint.read_checkpoint_file` (with its checksum and
errors); format ``ptrnet-span-1``.

Layout: tensors ``model.<param>``; metadata ``ptrnet`` = JSON ``{"format", "model":
SpanModelConfig.to_dict(), "vocabulary": [words], "answers": [[words], ...], "train": {...},
"step", "info"}``; a resumable checkpoint also holds the optimiser and torch RNG state
(:mod:`ptrnet.runs.checkpoint`).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
from torch import nn

from ptrnet.io.atomic import atomic_write_bytes
from ptrnet.model.span import AnswerClassifier, SpanPointer
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
from ptrnet.text.span import AnswerVocabulary
from ptrnet.text.vocab import Vocabulary

FORMAT = "ptrnet-span-1"
ARCHS = ("span_pointer", "classifier")


@dataclass(frozen=True)
class SpanModelConfig:
    """A span model: ``arch`` (``span_pointer`` or ``classifier``), its vocabulary size, word
    vector and LSTM sizes and (the classifier's) number of answer classes (0 for the pointer)."""

    arch: str
    vocab_size: int
    embed: int
    hidden: int
    answers: int = 0

    def __post_init__(self) -> None:
        if self.arch not in ARCHS:
            raise ValueError(f"unknown span arch {quote(self.arch)}")
        for name in ("vocab_size", "embed", "hidden"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {quote(value)}")
        if (self.arch == "classifier") != (self.answers > 0):
            raise ValueError("a classifier has answer classes, a span pointer none")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SpanModelConfig:
        return cls(**data)

    def build(self) -> nn.Module:
        """A fresh network of this configuration."""
        if self.arch == "classifier":
            return AnswerClassifier(self.vocab_size, self.answers, self.embed, self.hidden)
        return SpanPointer(self.vocab_size, self.embed, self.hidden)


@dataclass(frozen=True)
class SpanModel:
    """A loaded span model, in eval mode on the CPU (fields as :class:`~ptrnet.text.checkpoint.
    CopyModel`'s; ``answers``: the classifier's classes, None for the span pointer)."""

    model: nn.Module
    config: SpanModelConfig
    vocab: Vocabulary
    answers: AnswerVocabulary | None
    train: dict[str, Any] = field(default_factory=dict)
    step: int = 0
    info: dict[str, Any] = field(default_factory=dict)
    path: str = ""
    optimizer_state: dict[str, Any] | None = None
    rng_state: torch.Tensor | None = None


def save_span_model(
    path: str | os.PathLike[str],
    model: nn.Module,
    config: SpanModelConfig,
    vocab: Vocabulary,
    answers: AnswerVocabulary | None,
    train: dict[str, Any],
    step: int,
    info: dict[str, Any] | None = None,
    optimizer: torch.optim.Optimizer | None = None,
) -> None:
    """Write the weights, configuration and vocabularies atomically; with ``optimizer``, also
    its state and the torch RNG state (a resumable checkpoint)."""
    tensors = {f"model.{k}": v.detach().contiguous() for k, v in model.state_dict().items()}
    meta = {
        "format": FORMAT,
        "model": config.to_dict(),
        "vocabulary": list(vocab.words),
        "answers": [list(a) for a in answers.answers] if answers is not None else [],
        "train": train,
        "step": step,
        "info": info or {},
    }
    if optimizer is not None:
        optim_tensors, meta["optimizer"] = flatten_optimizer(optimizer.state_dict())
        tensors.update(optim_tensors)
        tensors["rng.torch"] = torch.get_rng_state()
    atomic_write_bytes(path, checksummed_file(tensors, meta))


def load_span_model(path: str | os.PathLike[str]) -> SpanModel:
    """Read a file written by :func:`save_span_model`.

    Raises:
        CheckpointError: unreadable, not a span-task checkpoint, metadata of the wrong shape or
            types, or tensors that do not fit the configuration (each one line).
    """
    meta, tensors = read_checkpoint_file(path)
    if meta.get("format") != FORMAT:
        raise CheckpointError(
            path, f"not a span-task checkpoint (format {quote(meta.get('format'))})"
        )
    try:
        _check_meta(meta)
        vocab = Vocabulary(meta["vocabulary"])
        config = SpanModelConfig.from_dict(meta["model"])
        answers = AnswerVocabulary.from_answers(meta["answers"]) if meta["answers"] else None
        if len(vocab) != config.vocab_size or len(answers or ()) != config.answers:
            raise ValueError("the vocabularies and the model disagree on their sizes")
        with torch.device("meta"):
            expected = {k: tuple(v.shape) for k, v in config.build().state_dict().items()}
        check_model_shapes(expected, {k: v.shape for k, v in tensors.items()})
        model = config.build()
        model.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model.")})
        optimizer_state = None
        if "optimizer" in meta:
            optimizer_state = unflatten_optimizer(tensors, meta["optimizer"])
    except (ValueError, TypeError, RuntimeError, KeyError, AttributeError) as err:
        raise CheckpointError(path, f"invalid span-task checkpoint: {err}") from None
    model.eval()
    train, info, rng = meta.get("train", {}), meta.get("info", {}), tensors.get("rng.torch")
    return SpanModel(
        model, config, vocab, answers, train, meta["step"], info, os.fspath(path),
        optimizer_state, rng,
    )  # fmt: skip


def _check_meta(meta: dict[str, Any]) -> None:
    """Raise ValueError unless the metadata has the JSON types loading relies on."""
    required = {"model": dict, "vocabulary": list, "answers": list, "step": int}
    names = {dict: "object", list: "array", int: "integer"}
    check_meta_types(meta, required, {"train": dict, "info": dict, "optimizer": dict}, names)
    if not all(isinstance(word, str) for word in meta["vocabulary"]):
        raise ValueError("metadata 'vocabulary' holds a word that is not a string")
    for answer in meta["answers"]:
        if not isinstance(answer, list) or not all(isinstance(w, str) for w in answer):
            raise ValueError("metadata 'answers' holds an answer that is not a list of words")
