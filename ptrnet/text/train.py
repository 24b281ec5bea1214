"""Training the pointer-generator on a sentence task (``copy``) in the loop every run shares
(:mod:`ptrnet.training.runloop`), with only what is the sentence task's own plugged in: the
vocabulary and model, the batches of sentences, the loss, the validation and the checkpoint
format (:mod:`ptrnet.text.checkpoint`).

The loss is teacher forcing on the mixture's likelihood: the mean over target words (END
included) of ``-log P(w*)``, where P is the model's mixture over the extended vocabulary (See et
al. 2017, eq. 6) and w* the target's extended id. The seq2seq's targets map out-of-vocabulary
words to ``<unk>``; the models that can point keep them as copies of the source.

Data is drawn on the fly from the task (:meth:`ptrnet.tasks.sentences.SentenceTask.
generate_pairs`): step ``s`` (0-based) trains on the examples ``s*B .. (s+1)*B-1`` of the task's
training stream under the seed (:meth:`~ptrnet.tasks.sentences.SentenceTask.stream`:
``Stream.TRAIN`` is stream 1); the vocabulary is built from the first ``vocab_pairs`` of that
stream, and the validation set is the first ``val_count`` of the validation stream (2). Data
depend on the step alone, so a resumed run continues exactly.

The run directory is a point task's (:mod:`ptrnet.runs`): ``config.json`` (``{"model":
PointerGeneratorConfig, "train": CopyTrainConfig}``), ``log.csv``, ``last.safetensors``
(resumable), ``best.safetensors`` + ``best.json`` (the best greedy validation exact match, ties
to the later step) and ``run.lock`` while it runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import nn

from ptrnet.model.pointer_generator import PointerGenerator, PointerGeneratorConfig
from ptrnet.runs import BEST, LAST, RunDirError
from ptrnet.runs.checkpoint import CheckpointError
from ptrnet.runs.config_file import check_config_file, write_config_file
from ptrnet.runs.lock import claim_run_dir
from ptrnet.runs.resume import resumed_train
from ptrnet.tasks import SentenceTask, Stream
from ptrnet.text.batch import Batch, make_batch
from ptrnet.text.checkpoint import CopyModel, load_copy_model, save_copy_model
from ptrnet.text.config import FIXED_P_GEN, CopyTrainConfig
from ptrnet.text.evaluate import evaluate_pairs
from ptrnet.text.format import Pair
from ptrnet.text.vocab import PAD_ID, Vocabulary
from ptrnet.training.distributed import Ranks, Session
from ptrnet.training.runloop import RunLoop, StopRequest, TrainResult
from ptrnet.training.steps import build_optimizer, optimizer_step


@dataclass(frozen=True)
class CopyRunConfig:
    """A sentence task's run: the model (its vocabulary size follows from the training
    configuration's data) and the training configuration; ``config.json`` holds
    :meth:`to_dict`."""

    model: PointerGeneratorConfig
    train: CopyTrainConfig

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model.to_dict(), "train": self.train.to_dict()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CopyRunConfig:
        """Inverse of :meth:`to_dict`; ValueError for other keys or bad values."""
        if not isinstance(data, dict) or set(data) != {"model", "train"}:
            raise ValueError("a sentence task's run config has exactly the keys model and train")
        model = PointerGeneratorConfig.from_dict(data["model"])
        return cls(model, CopyTrainConfig.from_dict(data["train"]))


def loss_of(model: nn.Module, batch: Batch) -> torch.Tensor:
    """Mean negative log-likelihood of the batch's target words under the mixture."""
    step = model(batch.ids, batch.extended, batch.lengths, batch.previous, batch.extra)
    keep = batch.targets != PAD_ID  # (B, T)
    nll = -step.log_probs.gather(2, batch.targets.unsqueeze(-1)).squeeze(-1)  # (B, T)
    return nll[keep].mean()


def train_copy(
    config: CopyTrainConfig,
    out_dir: str | os.PathLike[str],
    log: Callable[[str], None] = print,
    progress: bool = False,
    *,
    resume: bool = False,
    should_stop: StopRequest | None = None,
) -> TrainResult:
    """Train a model as ``config`` says into ``out_dir`` (created if missing), or continue the
    run there (``resume``: ``config`` may differ from the saved one only in
    :data:`~ptrnet.runs.shared.RESUMABLE` fields). ``log`` receives the one line on the
    vocabulary; ``progress`` shows the run's progress on stderr; ``should_stop`` as in
    :func:`ptrnet.training.loop.train`. Runs on the CPU, in the torch threads set.

    Raises:
        RunDirError: ``out_dir`` already holds a run (without ``resume``), has none to resume
            or one of another configuration, or another training holds it (checked before
            anything is written).
        TrainingStopped: ``should_stop`` returned True; ``last`` is that of the last validation.
        InputError: a damaged checkpoint, or a hand-edited ``config.json``, when resuming.
    """
    with claim_run_dir(out_dir):
        trainer = CopyTrainer(config, os.fspath(out_dir), resume)
        params = sum(p.numel() for p in trainer.model.parameters())
        log(f"vocabulary {len(trainer.vocab)} words; {params} parameters")
        return trainer.run(progress, should_stop=should_stop)


class CopyTrainer(RunLoop):
    """A sentence task's run in the shared loop."""

    def __init__(self, cfg: CopyTrainConfig, run_dir: str, resume: bool) -> None:
        super().__init__(cfg, run_dir, Session(Ranks(), torch.device("cpu")))
        task = self.task
        assert isinstance(task, SentenceTask)  # CopyTrainConfig checks
        self.refuse_used_dir(resume)
        torch.manual_seed(cfg.seed)
        self.train_stream = task.stream(Stream.TRAIN)
        vocab_pairs = task.generate_pairs(cfg.vocab_pairs, cfg.seed, self.train_stream)
        self.vocab = Vocabulary.build(vocab_pairs, cfg.min_count)
        p_gen = FIXED_P_GEN[cfg.arch]
        model = PointerGeneratorConfig(len(self.vocab), p_gen, cfg.embed, cfg.hidden)
        self.config = CopyRunConfig(model, cfg)
        self.model = PointerGenerator(model)
        self.optimizer = build_optimizer(self.model, cfg)
        valid = task.generate_pairs(cfg.val_count, cfg.seed, task.stream(Stream.VALIDATION))
        self.valid: list[Pair] = list(valid)
        if resume:
            self._restore(os.path.join(run_dir, LAST))
        self.check_resumed_length(resume)
        self.open_log(resume)

    def total_steps(self) -> int:
        return self.cfg.steps

    def batches(self, start: int, workers: int = 0) -> Iterator[Batch]:
        """The batches of steps ``start ..`` (built here, between steps: ``workers`` unused)."""
        size, seed = self.cfg.batch_size, self.cfg.seed
        for step in range(start, self.total_steps()):
            pairs = self.task.generate_pairs(size, seed, self.train_stream, step * size)
            yield self._batch(list(pairs))

    def _batch(self, pairs: list[Pair]) -> Batch:
        """Training tensors; only the seq2seq's targets map unknown words to ``<unk>``."""
        sources, targets = [p.source for p in pairs], [p.target for p in pairs]
        return make_batch(self.vocab, sources, targets, copy=self.cfg.arch != "seq2seq")

    def _step(self, batch: Batch) -> float:
        self.model.train()

        def loss() -> tuple[torch.Tensor, None]:
            return loss_of(self.model, batch), None

        return optimizer_step(self.model, self.optimizer, self.cfg, self.step, loss)

    @torch.no_grad()
    def _measure(self, model: nn.Module) -> tuple[dict[str, Any], float]:
        """The greedy decode's metrics and the teacher-forced loss on the validation set."""
        model.eval()
        tf_loss = loss_of(model, self._batch(self.valid)).item()
        metrics, _ = evaluate_pairs(CopyModel(model, self.vocab), self.valid)
        return metrics, tf_loss

    def _save(self, path: str, model: nn.Module, info: dict[str, Any], resumable: bool) -> None:
        optimizer = self.optimizer if resumable else None
        train = self.cfg.to_dict()
        save_copy_model(path, model, self.vocab, train, self.step, info, optimizer)

    def config_dict(self) -> dict[str, Any]:
        return self.config.to_dict()

    def write_config_file(self) -> None:
        write_config_file(self.run_dir, self.config)

    def _restore(self, path: str) -> None:
        """Continue from the run's ``last`` checkpoint at ``path``, if this configuration may."""
        if not os.path.exists(path):
            raise RunDirError(f"nothing to resume: {path} does not exist")
        loaded = load_copy_model(path)
        if loaded.optimizer_state is None or loaded.rng_state is None:
            raise CheckpointError(path, "not a resumable checkpoint (no optimiser state)")
        try:
            saved = CopyRunConfig(loaded.model.config, CopyTrainConfig.from_dict(loaded.train))
        except (TypeError, ValueError) as err:
            raise CheckpointError(path, f"invalid training configuration: {err}") from None
        try:
            resumed_train(saved.train, asdict(self.cfg))
        except ValueError as err:
            raise RunDirError(str(err)) from None
        if saved.model != self.config.model or loaded.vocab.words != self.vocab.words:
            raise RunDirError(f"{path}: its model or vocabulary is not this configuration's")
        check_config_file(self.run_dir, saved, self.config, CopyRunConfig.from_dict, False)
        state = loaded.model.state_dict()
        info = loaded.info
        self.adopt_state(state, loaded.optimizer_state, loaded.rng_state, loaded.step, info)
        best = os.path.join(self.run_dir, BEST)
        if self.best and os.path.exists(best):  # a damaged best would be reported as the run's
            load_copy_model(best)  # CheckpointError names the file and problem
