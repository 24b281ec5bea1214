"""Span-task checkpoints: the sentence tasks' file (:mod:`ptrnet.text.sentence_checkpoint`, its
layout and errors) in format ``ptrnet-span-1``, whose ``model`` metadata is
``SpanModelConfig.to_dict()`` and which also holds the classifier's answer vocabulary
(``"answers": [[words], ...]``, empty for the span pointer).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import nn

from ptrnet.model.span import AnswerClassifier, SpanPointer
from ptrnet.quoting import quote
from ptrnet.text.sentence_checkpoint import (
    CheckpointRecord,
    Rebuilt,
    load_sentence_model,
    save_sentence_model,
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
class SpanModel(CheckpointRecord):
    """A loaded span model, in eval mode on the CPU: the network, its configuration, its word
    vocabulary and (the classifier's classes) ``answers``, None for the span pointer; the keyword
    fields as :class:`~ptrnet.text.sentence_checkpoint.CheckpointRecord`'s."""

    model: nn.Module
    config: SpanModelConfig
    vocab: Vocabulary
    answers: AnswerVocabulary | None


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
    metadata = {
        "model": config.to_dict(),
        "vocabulary": list(vocab.words),
        "answers": [list(a) for a in answers.answers] if answers is not None else [],
    }
    save_sentence_model(path, FORMAT, model, metadata, train, step, info, optimizer)


def load_span_model(path: str | os.PathLike[str]) -> SpanModel:
    """Read a file written by :func:`save_span_model`.

    Raises:
        CheckpointError: unreadable, not a span-task checkpoint, metadata of the wrong shape or
            types, or tensors that do not fit the configuration (each one line).
    """
    required = {"answers": list}
    model, vocab, parts, record = load_sentence_model(path, FORMAT, "span-task", required, _rebuild)
    return SpanModel(model, parts["config"], vocab, parts["answers"], **record)


def _rebuild(meta: dict[str, Any], vocab: Vocabulary) -> Rebuilt:
    """The network the metadata configures and its answers; ValueError for an answer that is
    not a list of words, or sizes that disagree with the vocabularies."""
    for answer in meta["answers"]:
        if not isinstance(answer, list) or not all(isinstance(w, str) for w in answer):
            raise ValueError("metadata 'answers' holds an answer that is not a list of words")
    config = SpanModelConfig.from_dict(meta["model"])
    answers = AnswerVocabulary.from_answers(meta["answers"]) if meta["answers"] else None
    if len(vocab) != config.vocab_size or len(answers or ()) != config.answers:
        raise ValueError("the vocabularies and the model disagree on their sizes")
    return Rebuilt(config.build, {"config": config, "answers": answers})
