"""The base every sentence task's training plugs into (copy: :mod:`ptrnet.text.train`, span:
:mod:`ptrnet.text.span_train`): its run configuration (:class:`SentenceRunConfig`), its trainer
in the shared loop (:class:`SentenceTrainer`, over :class:`ptrnet.training.runloop.RunLoop`)
and how one is trained (:meth:`SentenceTrainer.train_run`).

What the base does for every sentence task: data drawn on the fly from the task
(:meth:`ptrnet.tasks.sentences.SentenceTask.generate_pairs`): step ``s`` (0-based) trains on the
examples ``s*B .. (s+1)*B-1`` of the task's training stream under the seed (``Stream.TRAIN``),
the validation set is the first ``val_count`` of the validation stream, so data depend on the
step alone and a resumed run continues exactly; Adam steps (:func:`ptrnet.training.steps.
optimizer_step`), validation as the greedy decode's metrics plus the teacher-forced loss,
checkpoints in the task's file, ``config.json`` and resuming (the saved model, vocabularies and
training configuration must agree with the resumed ones).

What a task plugs in (:class:`SentenceTrainer`'s abstract methods): its vocabularies and model,
its batches, its loss, its validation metrics and its checkpoint file.
"""

from __future__ import annotations

import os
from abc import abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import asdict
from typing import Any, ClassVar

import torch
from torch import nn

from ptrnet.runs import BEST, LAST, RunDirError
from ptrnet.runs.checkpoint import CheckpointError
from ptrnet.runs.config_file import check_config_file, write_config_file
from ptrnet.runs.lock import claim_run_dir
from ptrnet.runs.resume import resumed_train
from ptrnet.tasks import SentenceTask, Stream
from ptrnet.tasks.sentences import Pair
from ptrnet.text.sentence_checkpoint import CheckpointRecord
from ptrnet.text.vocab import Vocabulary
from ptrnet.training.distributed import Ranks, Session
from ptrnet.training.runloop import RunLoop, StopRequest, TrainResult
from ptrnet.training.steps import build_optimizer, optimizer_step


class SentenceRunConfig:
    """A sentence task's run: its ``model`` configuration and its ``train`` configuration;
    ``config.json`` holds :meth:`to_dict`. A task's subclass is a frozen dataclass of those two
    fields naming their classes (``model_class``, ``train_class``: each with ``to_dict`` and
    ``from_dict``) and itself in errors (``what``)."""

    model_class: ClassVar[Any]
    train_class: ClassVar[Any]
    what: ClassVar[str]
    model: Any
    train: Any

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model.to_dict(), "train": self.train.to_dict()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        """Inverse of :meth:`to_dict`; ValueError for other keys or bad values."""
        if not isinstance(data, dict) or set(data) != {"model", "train"}:
            raise ValueError(f"{cls.what} has exactly the keys model and train")
        model = cls.model_class.from_dict(data["model"])
        return cls(model, cls.train_class.from_dict(data["train"]))  # type: ignore[call-arg]


class SentenceTrainer(RunLoop):
    """A sentence task's run in the shared loop; ``cfg`` is the task's training configuration
    (the fields of :mod:`ptrnet.runs.shared` and ``seed``, ``val_count``, ``vocab_pairs``).

    A subclass sets ``run_config_class`` and ``load_file``, implements :meth:`build_run`
    (which sets ``vocab``), :meth:`make_batch`, :meth:`batch_loss`, :meth:`validation_metrics`
    and :meth:`save_file`, and may add checks on a resumed checkpoint (:meth:`check_restored`)
    and say more as it starts (:meth:`describe`)."""

    #: The task's run configuration class (its ``train_class``: the training configuration).
    run_config_class: ClassVar[type[SentenceRunConfig]]
    #: Reads the task's checkpoint file (a :class:`CheckpointRecord` with ``model``, ``config``
    #: and ``vocab``); CheckpointError for a bad one. A staticmethod.
    load_file: ClassVar[Callable[[str], CheckpointRecord]]
    vocab: Vocabulary
    config: SentenceRunConfig

    def __init__(self, cfg: Any, run_dir: str, resume: bool) -> None:
        super().__init__(cfg, run_dir, Session(Ranks(), torch.device("cpu")))
        task = self.task
        assert isinstance(task, SentenceTask)  # the task's training configuration checks
        self.refuse_used_dir(resume)
        torch.manual_seed(cfg.seed)
        self.train_stream = task.stream(Stream.TRAIN)
        self.config, self.model = self.build_run()
        self.optimizer = build_optimizer(self.model, cfg)
        valid = task.generate_pairs(cfg.val_count, cfg.seed, task.stream(Stream.VALIDATION))
        self.valid: list[Pair] = list(valid)
        if resume:
            self._restore(os.path.join(run_dir, LAST))
        self.check_resumed_length(resume)
        self.open_log(resume)

    @classmethod
    def train_run(
        cls,
        config: Any,
        out_dir: str | os.PathLike[str],
        log: Callable[[str], None] = print,
        progress: bool = False,
        *,
        resume: bool = False,
        should_stop: StopRequest | None = None,
    ) -> TrainResult:
        """Train a model as ``config`` (the task's training configuration) says into
        ``out_dir`` (created if missing), or continue the run there (``resume``: ``config`` may
        differ from the saved one only in :data:`~ptrnet.runs.shared.RESUMABLE` fields).
        ``log`` receives the one line of :meth:`describe`; ``progress`` shows the run's
        progress on stderr; ``should_stop`` as in :func:`ptrnet.training.loop.train`. Runs on
        the CPU, in the torch threads set.

        Raises:
            RunDirError: ``out_dir`` already holds a run (without ``resume``), has none to
                resume or one of another configuration, or another training holds it (checked
                before anything is written).
            TrainingStopped: ``should_stop`` returned True; ``last`` is that of the last
                validation.
            InputError: a damaged checkpoint, or a hand-edited ``config.json``, when resuming.
        """
        with claim_run_dir(out_dir):
            trainer = cls(config, os.fspath(out_dir), resume)
            log(trainer.describe())
            return trainer.run(progress, should_stop=should_stop)

    # What a task plugs in.

    @abstractmethod
    def build_run(self) -> tuple[SentenceRunConfig, nn.Module]:
        """Set ``vocab`` (and the task's other vocabularies) from the training stream
        (:meth:`pairs`), and return the run's configuration and a fresh model (drawn from the
        torch RNG, seeded)."""

    @abstractmethod
    def make_batch(self, pairs: list[Pair]) -> Any:
        """The training tensors of ``pairs`` (an object with ``size``, the examples in it)."""

    @abstractmethod
    def batch_loss(self, model: nn.Module, batch: Any) -> torch.Tensor:
        """The batch's mean teacher-forced loss (a scalar)."""

    @abstractmethod
    def validation_metrics(self, model: nn.Module) -> dict[str, Any]:
        """The greedy decode's metrics of ``model`` (in eval mode) on ``valid``."""

    @abstractmethod
    def save_file(
        self, path: str, model: nn.Module, info: dict[str, Any], optimizer: Any | None
    ) -> None:
        """Write the task's checkpoint of ``model`` (with ``optimizer``: resumable)."""

    def check_restored(self, path: str, loaded: Any) -> None:
        """Raise RunDirError if the checkpoint ``loaded`` (from ``path``) holds something else
        of the task's that is not this configuration's (the model and vocabulary are checked)."""

    def describe(self) -> str:
        """The line logged as the run starts: its vocabulary and parameters."""
        params = sum(p.numel() for p in self.model.parameters())
        return f"vocabulary {len(self.vocab)} words; {params} parameters"

    # Shared by every sentence task.

    def pairs(self, count: int, start: int = 0) -> Iterator[Pair]:
        """The training stream's examples ``start .. start + count - 1`` under the seed."""
        return self.task.generate_pairs(count, self.cfg.seed, self.train_stream, start)

    def total_steps(self) -> int:
        return self.cfg.steps

    def batches(self, start: int, workers: int = 0) -> Iterator[Any]:
        """The batches of steps ``start ..`` (built here, between steps: ``workers`` unused)."""
        size = self.cfg.batch_size
        for step in range(start, self.total_steps()):
            yield self.make_batch(list(self.pairs(size, step * size)))

    def _step(self, batch: Any) -> float:
        self.model.train()

        def loss() -> tuple[torch.Tensor, None]:
            return self.batch_loss(self.model, batch), None

        return optimizer_step(self.model, self.optimizer, self.cfg, self.step, loss)

    @torch.no_grad()
    def _measure(self, model: nn.Module) -> tuple[dict[str, Any], float]:
        """The greedy decode's metrics and the teacher-forced loss on the validation set."""
        model.eval()
        tf_loss = self.batch_loss(model, self.make_batch(self.valid)).item()
        return self.validation_metrics(model), tf_loss

    def _save(self, path: str, model: nn.Module, info: dict[str, Any], resumable: bool) -> None:
        self.save_file(path, model, info, self.optimizer if resumable else None)

    def config_dict(self) -> dict[str, Any]:
        return self.config.to_dict()

    def write_config_file(self) -> None:
        write_config_file(self.run_dir, self.config)

    def _restore(self, path: str) -> None:
        """Continue from the run's ``last`` checkpoint at ``path``, if this configuration may."""
        if not os.path.exists(path):
            raise RunDirError(f"nothing to resume: {path} does not exist")
        loaded: Any = self.load_file(path)
        if loaded.optimizer_state is None or loaded.rng_state is None:
            raise CheckpointError(path, "not a resumable checkpoint (no optimiser state)")
        run_config: Any = self.run_config_class
        try:
            saved = run_config(loaded.config, run_config.train_class.from_dict(loaded.train))
        except (TypeError, ValueError) as err:
            raise CheckpointError(path, f"invalid training configuration: {err}") from None
        try:
            resumed_train(saved.train, asdict(self.cfg))
        except ValueError as err:
            raise RunDirError(str(err)) from None
        if saved.model != self.config.model or loaded.vocab.words != self.vocab.words:
            raise RunDirError(f"{path}: its model or vocabulary is not this configuration's")
        self.check_restored(path, loaded)
        check_config_file(self.run_dir, saved, self.config, run_config.from_dict, False)
        state = loaded.model.state_dict()
        self.adopt_state(state, loaded.optimizer_state, loaded.rng_state, loaded.step, loaded.info)
        best = os.path.join(self.run_dir, BEST)
        if self.best and os.path.exists(best):  # a damaged best would be reported as the run's
            self.load_file(best)  # CheckpointError names the file and problem
