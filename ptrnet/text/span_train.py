"""Training a span-task model: the sentence tasks' base (:mod:`ptrnet.text.sentence_run`: the
shared loop, data by step, validation, resuming) with only what is the span task's own plugged
in: the vocabularies and model, the batches, the loss, the validation metrics and the
checkpoint format (:mod:`ptrnet.text.span_checkpoint`).

Losses (teacher forcing, mean over the batch):

* ``span_pointer``: ``-log p(start*) - log p(end* | start*)``, the end distribution computed
  with the true start fed to the decoder's second step (Wang & Jiang 2017's boundary model);
* ``classifier``: ``-log p(class*)`` over the answer vocabulary (class 0 for an answer outside
  the training answers).

The task's training stream draws training names only, its validation stream validation names
(:meth:`ptrnet.tasks.span.SpanTask.stream`); the vocabulary is built from the first
``vocab_pairs`` examples of the training stream and the classifier's answers from the first
``answer_pairs`` (their words join its vocabulary). The run directory is every task's
(:mod:`ptrnet.runs`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from ptrnet.runs import RunDirError
from ptrnet.tasks.sentences import Pair
from ptrnet.text.sentence_run import SentenceRunConfig, SentenceTrainer
from ptrnet.text.span import AnswerVocabulary, gold_spans, span_inputs
from ptrnet.text.span_checkpoint import (
    SpanModel,
    SpanModelConfig,
    load_span_model,
    save_span_model,
)
from ptrnet.text.span_config import SpanTrainConfig
from ptrnet.text.span_eval import evaluate_spans
from ptrnet.text.vocab import Vocabulary


@dataclass(frozen=True)
class SpanRunConfig(SentenceRunConfig):
    """A span run: the model and the training configuration (``config.json``)."""

    model_class = SpanModelConfig
    train_class = SpanTrainConfig
    what = "a span run's config"

    model: SpanModelConfig
    train: SpanTrainConfig


@dataclass(frozen=True)
class SpanBatch:
    """A training batch: its pairs (``size`` of them), and the inputs and targets as tensors."""

    pairs: list[Pair]
    tensors: tuple[Any, ...]

    @property
    def size(self) -> int:
        return len(self.pairs)


def span_loss(model: nn.Module, batch: SpanBatch) -> torch.Tensor:
    """The batch's mean loss (the module docstring's, by the model's kind)."""
    if len(batch.tensors) == 2:  # the classifier: inputs, classes
        inputs, classes = batch.tensors
        return -model(inputs).gather(1, classes.unsqueeze(1)).mean()
    inputs, starts, ends = batch.tensors
    start_lp, end_lp = model(inputs, starts)  # (B, P) each
    rows = torch.arange(len(starts))
    return -(start_lp[rows, starts] + end_lp[rows, ends]).mean()


class SpanTrainer(SentenceTrainer):
    """A span run in the shared loop; ``answers``: the classifier's classes (None for the span
    pointer)."""

    run_config_class = SpanRunConfig
    load_file = staticmethod(load_span_model)

    def build_run(self) -> tuple[SpanRunConfig, nn.Module]:
        cfg = self.cfg
        self.vocab = Vocabulary.build(self.pairs(cfg.vocab_pairs), cfg.min_count)
        self.answers = None
        if cfg.arch == "classifier":
            answer_pairs = list(self.pairs(cfg.answer_pairs))
            self.answers = AnswerVocabulary(answer_pairs, cfg.answer_min_count)
            self.vocab = self.answers.with_answer_words(self.vocab)  # class vectors: word sums
        classes = len(self.answers) if self.answers else 0
        model = SpanModelConfig(cfg.arch, len(self.vocab), cfg.embed, cfg.hidden, classes)
        net = model.build()
        if self.answers is not None:  # class c's vector: the sum of its words' vectors
            net.set_answer_words(self.answers.word_ids(self.vocab))
        return SpanRunConfig(model, cfg), net

    def describe(self) -> str:
        params = sum(p.numel() for p in self.model.parameters())
        answers = f"; {len(self.answers)} answer classes" if self.answers else ""
        return f"vocabulary {len(self.vocab)} words{answers}; {params} parameters"

    def make_batch(self, pairs: list[Pair]) -> SpanBatch:
        inputs = span_inputs(self.vocab, [p.source for p in pairs])
        if self.answers is not None:
            return SpanBatch(pairs, (inputs, self.answers.ids(pairs)))
        return SpanBatch(pairs, (inputs, *gold_spans(pairs)))

    def batch_loss(self, model: nn.Module, batch: SpanBatch) -> torch.Tensor:
        return span_loss(model, batch)

    def validation_metrics(self, model: nn.Module) -> dict[str, Any]:
        """The greedy answers' exact match and F1 on validation."""
        loaded = SpanModel(model, self.config.model, self.vocab, self.answers)
        return evaluate_spans(loaded, self.valid)[0]

    def save_file(
        self, path: str, model: nn.Module, info: dict[str, Any], optimizer: Any | None
    ) -> None:
        save_span_model(
            path, model, self.config.model, self.vocab, self.answers, self.cfg.to_dict(),
            self.step, info, optimizer,
        )  # fmt: skip

    def check_restored(self, path: str, loaded: SpanModel) -> None:
        """Raise RunDirError if the checkpoint's answer vocabulary is not this run's."""
        saved = loaded.answers.answers if loaded.answers else None
        if saved != (self.answers.answers if self.answers else None):
            raise RunDirError(f"{path}: its answer vocabulary is not this configuration's")


#: ``train_span(config, out_dir, log=print, progress=False, *, resume=False, should_stop=None)``:
#: train into ``out_dir`` or resume the run there, as
#: :meth:`~ptrnet.text.sentence_run.SentenceTrainer.train_run` (the line logged:
#: the vocabulary's words, the classifier's answer classes and the parameters).
train_span = SpanTrainer.train_run
