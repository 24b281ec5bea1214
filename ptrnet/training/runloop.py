"""The one training loop every run goes through, a point task's (:mod:`ptrnet.training.loop`) or
a sentence task's (:mod:`ptrnet.text.train`): steps, the progress line, the log's rows,
validation every ``val_every`` steps, the best and the resumable checkpoints, kept weights, a
stop between two steps (:class:`TrainingStopped`) and divergence (:class:`DivergedError`).

A run plugs in only what is its own (:class:`RunLoop`'s abstract methods): its data as batches
by step, one optimiser step on a batch, the validation's decoded metrics and teacher-forced
loss, its checkpoint file and its configuration as JSON. The run directory is the same for
every task (:mod:`ptrnet.runs`): ``config.json``, ``log.csv`` (:func:`ptrnet.runs.csvlog.
columns_for`), ``last.safetensors`` (weights, optimiser and RNG state, written at every
validation), ``best.safetensors`` + ``best.json`` (the validation ranked best by the task's
:meth:`~ptrnet.tasks.card.TaskCard.selection_key`, ties to the later step; never the
teacher-forced loss), ``kept/`` with ``keep_every`` and ``run.lock`` while it runs.
"""

from __future__ import annotations

import json
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from ptrnet.evaluation.score import json_safe, metric_text
from ptrnet.io.atomic import atomic_write
from ptrnet.io.progress import Progress
from ptrnet.runs import BEST, BEST_JSON, LAST, LOG_CSV, RunDirError, holds_run, kept_path
from ptrnet.runs.csvlog import CsvLog, columns_for
from ptrnet.tasks import get_task
from ptrnet.training.cpu import ThreadPlanner
from ptrnet.training.distributed import NullLog, Session
from ptrnet.training.steps import Meter
from ptrnet.training.workers import WORKER_ERRORS, stop_explains

# Called after each validation with the trainer and the decoded metrics; True ends the run.
ValidationHook = Callable[["RunLoop", dict[str, Any]], bool]
# Asked between steps; True stops the run there (TrainingStopped). Must be cheap.
StopRequest = Callable[[], bool]


class DivergedError(RunDirError):
    """The weights stopped being finite numbers (the loss diverged); nothing of them is saved."""


class TrainingStopped(Exception):
    """The run stopped between two steps because ``should_stop`` asked it to; the run directory
    keeps its last validation's checkpoint, which ``resume`` continues from.

    Attributes:
        step: the steps taken when it stopped (the checkpoint may be older).
        rank: this process's rank under torchrun (0 alone reports).
    """

    def __init__(self, step: int, rank: int = 0) -> None:
        super().__init__(f"training stopped at step {step}")
        self.step, self.rank = step, rank


def non_finite_parameter(model: nn.Module) -> str | None:
    """The name of the first parameter of ``model`` holding NaN or infinity, else None."""
    for name, param in model.named_parameters():
        if not bool(torch.isfinite(param).all()):
            return name
    return None


@dataclass(frozen=True)
class TrainResult:
    """Summary of a finished run: final step, best validation record, throughput."""

    run_dir: str
    step: int
    best: dict[str, Any]
    last_metrics: dict[str, Any] = field(default_factory=dict)
    elapsed_s: float = 0.0
    examples_per_s: float = 0.0
    rank: int = 0


class RunLoop(ABC):
    """A run's state and its loop. A subclass builds ``model`` and ``optimizer`` (and ``ema``,
    if the run keeps a moving average) and implements the abstract methods.

    Args:
        cfg: the training configuration: its fields shared by every task
            (:mod:`ptrnet.runs.shared`) and ``learning_rate(step)`` drive the loop.
        run_dir: the run directory; session: the process's rank and device.
    """

    model: nn.Module
    optimizer: torch.optim.Optimizer

    def __init__(self, cfg: Any, run_dir: str, session: Session) -> None:
        self.cfg, self.run_dir, self.session = cfg, run_dir, session
        self.task = get_task(cfg.task)
        self.device = session.device
        self.step, self.best = 0, {}
        self.ema: Any = None
        self.log: CsvLog | NullLog = NullLog()
        self.planner: ThreadPlanner | None = None  # re-plans torch threads while training

    # What a run plugs in.

    @abstractmethod
    def total_steps(self) -> int:
        """Steps in the whole run."""

    @abstractmethod
    def batches(self, start: int, workers: int) -> Iterator[Any]:
        """The batches of steps ``start .. total_steps() - 1``, in order; ``close()`` ends them."""

    @abstractmethod
    def _step(self, batch: Any) -> float:
        """One optimiser step on ``batch``; the loss logged for it."""

    @abstractmethod
    def _measure(self, model: nn.Module) -> tuple[dict[str, Any], float]:
        """The decoded validation metrics of ``model`` (keys: the task's ``metric_keys``) and
        its teacher-forced validation loss."""

    @abstractmethod
    def _save(self, path: str, model: nn.Module, info: dict[str, Any], resumable: bool) -> None:
        """Write ``model``'s checkpoint at ``path`` with the JSON ``info``; ``resumable``: with
        what resuming needs (optimiser, RNG and the run's other state)."""

    @abstractmethod
    def config_dict(self) -> dict[str, Any]:
        """The run's configuration as JSON (``config.json``; ``best.json``'s ``config``)."""

    def _record_extra(self) -> dict[str, Any]:
        """What the best record states besides its step and metrics (e.g. its decoding)."""
        return {}

    # Shared by every run.

    def refuse_used_dir(self, resume: bool) -> None:
        """Raise RunDirError if a new run would start over another (of any task)."""
        if not resume and holds_run(self.run_dir):
            raise RunDirError(f"{self.run_dir} already holds a run; pass --resume or another --out")

    def check_resumed_length(self, resume: bool) -> None:
        """Raise RunDirError if a resumed run is already past its last step."""
        if resume and self.total_steps() < self.step:  # before config.json is rewritten
            raise RunDirError(
                f"{self.run_dir} is already at step {self.step}; resume with more steps than "
                f"that (asked for {self.total_steps()})"
            )

    def adopt_state(
        self,
        model_state: dict[str, torch.Tensor],
        optimizer_state: dict[str, Any] | None,
        rng_state: torch.Tensor | None,
        step: int,
        info: dict[str, Any],
    ) -> None:
        """Continue from a resumable checkpoint: its weights, optimiser and torch RNG state, its
        step and (in ``info``) its best record."""
        self.model.load_state_dict(model_state)
        self.optimizer.load_state_dict(optimizer_state)
        torch.set_rng_state(rng_state)
        self.step, self.best = step, info.get("best", {})

    def open_log(self, resume: bool) -> None:
        """Open ``log.csv`` (a resumed run's log checked first; rank 0's job) and write a new
        run's ``config.json``. A resumed run rewrites ``config.json`` with ``last`` only, so
        the two agree even when it stops before its first validation."""
        if not self.session.main:
            return
        os.makedirs(self.run_dir, exist_ok=True)
        self.log = CsvLog(
            os.path.join(self.run_dir, LOG_CSV),
            columns_for(self.task.metric_keys),
            resume_step=self.step if resume else None,
        )
        if not resume:
            self.write_config_file()

    @abstractmethod
    def write_config_file(self) -> None:
        """Write ``config.json`` from :meth:`config_dict` (:mod:`ptrnet.runs.config_file`)."""

    def run(
        self,
        progress: bool,
        workers: int = 0,
        on_validation: ValidationHook | None = None,
        should_stop: StopRequest | None = None,
    ) -> TrainResult:
        """Train to the last step, or until ``on_validation`` returns True; ``workers`` data
        processes build batches ahead. Raises TrainingStopped when ``should_stop`` (asked
        before the first step and after every step but the last) returns True."""
        total, start_time = self.total_steps(), time.perf_counter()
        label, done = f"train {self.task.name}", min(self.step, total)
        report = Progress(label, total, "step", done=done, enabled=progress)
        meter, metrics = Meter(), {}
        batches = self.batches(self.step, workers)
        try:
            self._stop_if_asked(should_stop)
            tic = time.perf_counter()  # the step's time includes any wait for its batch
            for batch in batches:
                loss = self._step(batch)
                self.step += 1
                if self.planner is not None and self.planner.due(self.step):
                    self._replan_threads(self.planner)
                meter.add(loss, batch.size, time.perf_counter() - tic)
                report.update(1, batch.size, loss)
                if self.step % self.cfg.val_every == 0 or self.step == total:
                    metrics, stop = self._validate_once(meter, start_time, on_validation)
                    value = metric_text(self.task, self._primary, metrics[self._primary])
                    report.note(f"val {self._primary}", value)
                    report.show()
                    if stop:
                        break
                elif self.step % self.cfg.log_every == 0:
                    self.log.write(meter.row(self.step, self.cfg, start_time))
                if self.step < total:
                    self._stop_if_asked(should_stop)
                tic = time.perf_counter()
        except WORKER_ERRORS:
            if not stop_explains(should_stop, workers):
                raise
            # The data workers got the same signal (sent to the whole process group, as by
            # timeout or Slurm) and ended: torch reports the batch awaited from them as lost.
            raise TrainingStopped(self.step, self.session.ranks.rank) from None
        finally:
            batches.close()  # ends the data worker processes
            report.close()
            self.log.close()
        elapsed, rate = time.perf_counter() - start_time, meter.overall_rate()
        rank = self.session.ranks.rank
        return TrainResult(self.run_dir, self.step, self.best, metrics, elapsed, rate, rank)

    def _stop_if_asked(self, should_stop: StopRequest | None) -> None:
        """Raise TrainingStopped if ``should_stop`` says so on any rank (all ranks ask here
        together, so they stop at the same step)."""
        if should_stop is None:
            return
        if self.session.sum(float(bool(should_stop()))) > 0:
            raise TrainingStopped(self.step, self.session.ranks.rank)

    def _replan_threads(self, planner: ThreadPlanner) -> None:
        """Rank 0 re-plans the torch threads from the recent load; every rank follows."""
        plan = planner.plan(self.step) if self.session.main else None
        threads = planner.adopt(self.session.broadcast(plan))
        if threads != torch.get_num_threads():
            torch.set_num_threads(threads)

    def _validate_once(
        self, meter: Meter, start_time: float, on_validation: ValidationHook | None
    ) -> tuple[dict[str, Any], bool]:
        """Validate on rank 0 (the others wait): the metrics and whether to stop, on all ranks."""
        self._check_finite()  # every rank holds the same weights: all raise together
        metrics, stop = {}, False
        if self.session.main:
            metrics = self._validate(meter, start_time)
            stop = on_validation is not None and bool(on_validation(self, metrics))
        metrics, stop, self.best = self.session.broadcast((metrics, stop, self.best))
        return metrics, stop

    def _check_finite(self) -> None:
        """Raise DivergedError, before anything is saved, if a weight is NaN or infinite."""
        bad = non_finite_parameter(self.model)
        if bad is None and self.ema is not None:
            bad = non_finite_parameter(self.ema.module)
        if bad is None:
            return
        kept = (
            "the run's checkpoints from its last validation are kept (--resume returns to them)"
            if os.path.exists(os.path.join(self.run_dir, LAST))
            else "nothing was saved"
        )
        raise DivergedError(
            f"{self.run_dir}: at step {self.step} the weight {bad} is not a finite number: "
            f"training diverged (a lower --lr or --clip-norm may help); {kept}"
        )

    @property
    def _primary(self) -> str:
        return self.task.validation_metric

    @property
    def kept_model(self) -> nn.Module:
        """The network validated and saved as ``best``: the weights' moving average if the
        run keeps one, else the trained weights themselves."""
        return self.model if self.ema is None else self.ema.module

    def _validate(self, meter: Meter, start_time: float) -> dict[str, Any]:
        """Measure the kept model on the validation set, log, save ``last`` and (if improved)
        ``best``."""
        metrics, tf_loss = self._measure(self.kept_model)
        row = meter.row(self.step, self.cfg, start_time)
        row.update(val_tf_loss=tf_loss, **{f"val_{k}": metrics[k] for k in self.task.metric_keys})
        self.log.write(row)
        self._keep_if_best(metrics, tf_loss)
        if self.cfg.keep_every and self.step % self.cfg.keep_every == 0:
            self._keep_weights(metrics, tf_loss)
        # Only here, between steps: an interrupted run resumes from its last validation.
        self._save(os.path.join(self.run_dir, LAST), self.model, self._resume_info(), True)
        self.write_config_file()  # a resumed run's changes, with ``last``
        return metrics

    def checkpoint_now(self, weights: str | None = None) -> None:
        """Write the resumable ``last`` at the current step, between two steps (from a
        ``should_stop`` request, say): ``resume`` then continues from here, not from the last
        validation. ``weights``: also write the kept model's weights alone to that path (what
        a validation's ``best`` would hold, loadable by ``ptrnet.inference.load_model``)."""
        if weights is not None:
            self._save(weights, self.kept_model, {"kept": {"step": self.step}}, False)
        self._save(os.path.join(self.run_dir, LAST), self.model, self._resume_info(), True)
        self.write_config_file()

    def _resume_info(self) -> dict[str, Any]:
        """The JSON that ``last`` holds besides tensors: the best record (a subclass adds)."""
        return {"best": self.best}

    def _keep_weights(self, metrics: dict[str, Any], tf_loss: float) -> None:
        """Keep this validation's weights (those ``best`` would take) under ``kept/``."""
        record = {"step": self.step, "metrics": json_safe(metrics), "val_tf_loss": tf_loss}
        path = kept_path(self.run_dir, self.step)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self._save(path, self.kept_model, {"kept": record}, False)

    def _keep_if_best(self, metrics: dict[str, Any], tf_loss: float) -> None:
        """Save ``best`` unless the kept one ranks strictly better by
        :meth:`~ptrnet.tasks.card.TaskCard.selection_key` (primary metric, then the tie-break
        one): equal ranks go to the later step, the longer-trained weights."""
        key = self.task.selection_key
        if self.best and key(metrics) > key(self.best["metrics"]):
            return
        record = {"step": self.step, "metric": self._primary, "value": metrics[self._primary]}
        record.update(self._record_extra())
        record.update(metrics=json_safe(metrics), val_tf_loss=tf_loss)
        self.best = json_safe(record)
        self._save(os.path.join(self.run_dir, BEST), self.kept_model, {"best": self.best}, False)
        with atomic_write(os.path.join(self.run_dir, BEST_JSON)) as stream:
            json.dump({**self.best, "config": self.config_dict()}, stream, indent=2)
