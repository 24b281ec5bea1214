"""Configuration of a span-task training run (``ptrnet train span``; no torch, so the CLI can
check options without importing it)."""

from __future__ import annotations

from dataclasses import dataclass

from ptrnet.runs.shared import DEFAULTS
from ptrnet.tasks.span import SpanTask
from ptrnet.text.config import SentenceTrainConfig


@dataclass(frozen=True)
class SpanTrainConfig(SentenceTrainConfig):
    """A span-task training run (every field saved in the checkpoint and ``config.json``). The
    fields shared with :class:`ptrnet.runs.config.TrainConfig` carry its names, meaning and
    checks (:mod:`ptrnet.runs.shared`), as :class:`ptrnet.text.config.CopyTrainConfig`'s do.

    Attributes:
        arch: ``span_pointer`` (loss -log p(start) - log p(end | true start)) or ``classifier``
            (cross-entropy over the training answers, class 0 for an unseen one).
        task: a registered span task (``span``).
        embed, hidden: word vector size and LSTM units per direction.
        steps, batch_size, lr, clip_norm: Adam steps at a constant rate, examples per step,
            gradient norm clip.
        seed: seeds the data, the vocabularies and the initial weights.
        min_count, vocab_pairs: the word vocabulary keeps words seen ``min_count`` times in the
            first ``vocab_pairs`` training examples; the classifier's answer vocabulary keeps
            every answer of the training examples seen ``answer_min_count`` times.
        answer_pairs: training examples whose answers make the classifier's classes.
        val_count, val_every, log_every, keep_every: as every run's.
    """

    task_kind = SpanTask
    task_refusal = "task {task} is not a span task"
    positive_fields = (
        "embed", "hidden", "min_count", "vocab_pairs", "answer_min_count", "answer_pairs",
    )  # fmt: skip

    arch: str = "span_pointer"
    task: str = "span"
    embed: int = 32
    hidden: int = 40
    steps: int = 400
    batch_size: int = 64
    lr: float = 2e-3
    clip_norm: float = DEFAULTS["clip_norm"]
    seed: int = 1
    min_count: int = 20
    vocab_pairs: int = 5000
    answer_min_count: int = 1
    answer_pairs: int = 25600
    val_count: int = 200
    val_every: int = 50
    log_every: int = DEFAULTS["log_every"]
    keep_every: int = DEFAULTS["keep_every"]
