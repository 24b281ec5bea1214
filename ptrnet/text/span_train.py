"""Training a span-task model in the loop every run shares (:mod:`ptrnet.training.runloop`), with
only what is the span task's own plugged in: the vocabularies and model, the batches, the loss,
the validation and the checkpoint format (:mod:`ptrnet.text.span_checkpoint`).

Losses (teacher forcing, mean over the batch):

* ``span_pointer``: ``-log p(start*) - log p(end* | start*)``, the end distribution computed
  with the true start fed to the decoder's second step (Wang & Jiang 2017's boundary model);
* ``classifier``: ``-log p(class*)`` over the answer vocabulary (class 0 for an answer outside
  the training answers).

Data is drawn on the fly from the task: step ``s`` trains on the examples ``s*B .. (s+1)*B-1``
of the task's training stream under the seed (:meth:`ptrnet.tasks.span.SpanTask.stream`:
training names only); the vocabulary is built from the first ``vocab_pairs`` of that stream,
the classifier's answers from the first ``answer_pairs`` (their words join its vocabulary),
and the validation set is the first ``val_count`` of the validation stream (validation
names). Data depend on the step alone, so a
resumed run continues exactly. The run directory is every task's (:mod:`ptrnet.runs`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import nn

from ptrnet.runs import BEST, LAST, RunDirError
from ptrnet.runs.checkpoint import CheckpointError
from ptrnet.runs.config import resumed_train
from ptrnet.runs.config_file import check_config_file, write_config_file
from ptrnet.runs.lock import claim_run_dir
from ptrnet.tasks import SentenceTask, Stream
from ptrnet.tasks.sentences import Pair
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
from ptrnet.training.distributed import Ranks, Session
from ptrnet.training.runloop import RunLoop, StopRequest, TrainResult
from ptrnet.training.steps import build_optimizer, optimizer_step


@dataclass(frozen=True)
class SpanRunConfig:
    """A span run: the model and the training configuration (``config.json``)."""

    model: SpanModelConfig
    train: SpanTrainConfig

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model.to_dict(), "train": self.train.to_dict()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SpanRunConfig:
        """Inverse of :meth:`to_dict`; ValueError for other keys or bad values."""
        if not isinstance(data, dict) or set(data) != {"model", "train"}:
            raise ValueError("a span run's config has exactly the keys model and train")
        return cls(
            SpanModelConfig.from_dict(data["model"]), SpanTrainConfig.from_dict(data["train"])
        )


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


def train_span(
    config: SpanTrainConfig,
    out_dir: str | os.PathLike[str],
    log: Callable[[str], None] = print,
    progress: bool = False,
    *,
    resume: bool = False,
    should_stop: StopRequest | None = None,
) -> TrainResult:
    """Train a span model as ``config`` says into ``out_dir``, or continue the run there
    (``resume``); arguments, errors and run files as :func:`ptrnet.text.train.train_copy`'s."""
    with claim_run_dir(out_dir):
        trainer = SpanTrainer(config, os.fspath(out_dir), resume)
        params = sum(p.numel() for p in trainer.model.parameters())
        answers = f"; {len(trainer.answers)} answer classes" if trainer.answers else ""
        log(f"vocabulary {len(trainer.vocab)} words{answers}; {params} parameters")
        return trainer.run(progress, should_stop=should_stop)


class SpanTrainer(RunLoop):
    """A span run in the shared loop."""

    def __init__(self, cfg: SpanTrainConfig, run_dir: str, resume: bool) -> None:
        super().__init__(cfg, run_dir, Session(Ranks(), torch.device("cpu")))
        task = self.task
        assert isinstance(task, SentenceTask)  # SpanTrainConfig checks
        self.refuse_used_dir(resume)
        torch.manual_seed(cfg.seed)
        self.train_stream = task.stream(Stream.TRAIN)
        self.vocab = Vocabulary.build(self._pairs(cfg.vocab_pairs), cfg.min_count)
        self.answers = None
        if cfg.arch == "classifier":
            answer_pairs = list(self._pairs(cfg.answer_pairs))
            self.answers = AnswerVocabulary(answer_pairs, cfg.answer_min_count)
            self.vocab = self.answers.with_answer_words(self.vocab)  # class vectors: word sums
        classes = len(self.answers) if self.answers else 0
        model = SpanModelConfig(cfg.arch, len(self.vocab), cfg.embed, cfg.hidden, classes)
        self.config = SpanRunConfig(model, cfg)
        self.model = model.build()
        if self.answers is not None:
            self.model.set_answer_words(self.answers.word_ids(self.vocab))
        self.optimizer = build_optimizer(self.model, cfg)
        valid = task.generate_pairs(cfg.val_count, cfg.seed, task.stream(Stream.VALIDATION))
        self.valid: list[Pair] = list(valid)
        if resume:
            self._restore(os.path.join(run_dir, LAST))
        self.check_resumed_length(resume)
        self.open_log(resume)

    def _pairs(self, count: int, start: int = 0) -> Iterator[Pair]:
        return self.task.generate_pairs(count, self.cfg.seed, self.train_stream, start)

    def total_steps(self) -> int:
        return self.cfg.steps

    def batches(self, start: int, workers: int = 0) -> Iterator[SpanBatch]:
        """The batches of steps ``start ..`` (built here, between steps: ``workers`` unused)."""
        size = self.cfg.batch_size
        for step in range(start, self.total_steps()):
            yield self._batch(list(self._pairs(size, step * size)))

    def _batch(self, pairs: list[Pair]) -> SpanBatch:
        inputs = span_inputs(self.vocab, [p.source for p in pairs])
        if self.answers is not None:
            return SpanBatch(pairs, (inputs, self.answers.ids(pairs)))
        return SpanBatch(pairs, (inputs, *gold_spans(pairs)))

    def _step(self, batch: SpanBatch) -> float:
        self.model.train()

        def loss() -> tuple[torch.Tensor, None]:
            return span_loss(self.model, batch), None

        return optimizer_step(self.model, self.optimizer, self.cfg, self.step, loss)

    @torch.no_grad()
    def _measure(self, model: nn.Module) -> tuple[dict[str, Any], float]:
        """The greedy answers' exact match and F1, and the teacher-forced loss, on validation."""
        model.eval()
        tf_loss = span_loss(model, self._batch(self.valid)).item()
        loaded = SpanModel(model, self.config.model, self.vocab, self.answers)
        metrics, _ = evaluate_spans(loaded, self.valid)
        return metrics, tf_loss

    def _save(self, path: str, model: nn.Module, info: dict[str, Any], resumable: bool) -> None:
        optimizer = self.optimizer if resumable else None
        save_span_model(
            path, model, self.config.model, self.vocab, self.answers, self.cfg.to_dict(),
            self.step, info, optimizer,
        )  # fmt: skip

    def config_dict(self) -> dict[str, Any]:
        return self.config.to_dict()

    def write_config_file(self) -> None:
        write_config_file(self.run_dir, self.config)

    def _restore(self, path: str) -> None:
        """Continue from the run's ``last`` checkpoint at ``path``, if this configuration may."""
        if not os.path.exists(path):
            raise RunDirError(f"nothing to resume: {path} does not exist")
        loaded = load_span_model(path)
        if loaded.optimizer_state is None or loaded.rng_state is None:
            raise CheckpointError(path, "not a resumable checkpoint (no optimiser state)")
        try:
            saved = SpanRunConfig(loaded.config, SpanTrainConfig.from_dict(loaded.train))
        except (TypeError, ValueError) as err:
            raise CheckpointError(path, f"invalid training configuration: {err}") from None
        try:
            resumed_train(saved.train, asdict(self.cfg))
        except ValueError as err:
            raise RunDirError(str(err)) from None
        same_answers = (loaded.answers.answers if loaded.answers else None) == (
            self.answers.answers if self.answers else None
        )
        if saved.model != self.config.model or loaded.vocab.words != self.vocab.words:
            raise RunDirError(f"{path}: its model or vocabulary is not this configuration's")
        if not same_answers:
            raise RunDirError(f"{path}: its answer vocabulary is not this configuration's")
        check_config_file(self.run_dir, saved, self.config, SpanRunConfig.from_dict, False)
        state = loaded.model.state_dict()
        self.adopt_state(state, loaded.optimizer_state, loaded.rng_state, loaded.step, loaded.info)
        if self.best and os.path.exists(os.path.join(self.run_dir, BEST)):
            load_span_model(os.path.join(self.run_dir, BEST))  # a damaged best: CheckpointError
