"""The training loop: teacher-forced maximum likelihood (Sec. 4), validation on decoded metrics,
atomic checkpoints, exact resume.

The loop knows nothing about the network: :func:`ptrnet.training.steps.train_step` calls one of
the losses of :mod:`ptrnet.training.losses` (teacher-forced cross-entropy, plain or masked by the
task's rules with ``train_constraints`` ``task``; or REINFORCE), clips the gradient and steps the
optimiser.

A run directory holds ``config.json`` (the RunConfig, as ``last`` holds it:
:mod:`ptrnet.runs.config_file`), ``log.csv`` (:mod:`ptrnet.runs.csvlog`), ``last.safetensors``
(weights + optimiser + RNG state, written at every validation and at the end) and
``best.safetensors`` + ``best.json`` (weights and metrics at the validation with the best
*decoded* metrics, :meth:`ptrnet.tasks.base.Task.selection_key`, ties to the later step; never
the teacher-forced loss). With ``ema`` the run validates, and keeps as ``best``,
the moving average of its weights (:mod:`ptrnet.training.ema`). Since data depend only on the
step (:mod:`ptrnet.training.data`), resuming from ``last`` reproduces the uninterrupted run
exactly. A caller's ``should_stop`` (the CLI's on SIGTERM) ends a run between two steps with
:class:`TrainingStopped`, keeping ``last`` as of its last validation.

Under ``torchrun`` the run is data-parallel (:mod:`ptrnet.training.distributed`): each rank
trains on its rows of the global batch, rank 0 alone validates and writes the run directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
from torch import nn

from ptrnet.compute.devices import resolve_device
from ptrnet.compute.precision import grad_scaler
from ptrnet.datasets.batching import Batch
from ptrnet.decoding.options import DecodeOptions
from ptrnet.evaluation.evaluate import evaluate
from ptrnet.evaluation.score import json_safe
from ptrnet.io.atomic import atomic_write
from ptrnet.io.errors import InputError
from ptrnet.io.progress import Progress
from ptrnet.io.text import check_regular_file
from ptrnet.model import build_model
from ptrnet.runs import BEST, BEST_JSON, LAST, LOG_CSV, RunDirError, holds_run, kept_path
from ptrnet.runs.checkpoint import Checkpoint, CheckpointError, load_checkpoint, save_checkpoint
from ptrnet.runs.config import RunConfig, TrainConfig, resume_config
from ptrnet.runs.config_file import check_config_file, write_config_file
from ptrnet.runs.csvlog import CsvLog, columns_for
from ptrnet.runs.lock import claim_run_dir
from ptrnet.tasks import get_task
from ptrnet.training.baselines import make_baseline
from ptrnet.training.cpu import ThreadPlanner, cpu_plan
from ptrnet.training.data import WORKER_ERRORS, TrainingData, stop_explains, validation_set
from ptrnet.training.distributed import NullLog, Ranks, Session, session, shard_batch
from ptrnet.training.ema import ema_model, ema_state, load_ema_state
from ptrnet.training.losses import (
    loss_mask_task,
)
from ptrnet.training.steps import Meter, build_optimizer, train_step, validation_loss

# Called after each validation with the trainer and the decoded metrics; True ends the run.
ValidationHook = Callable[["Trainer", dict[str, Any]], bool]
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


def data_digests(cfg: TrainConfig) -> dict[str, str]:
    """``{"data": ..., "val_data": ...}``: the SHA-256 of each data file the run reads, so a
    resumed run can tell that it reads the same ones (a file changed, or a relative path read
    from another folder)."""
    digests = {}
    for key in ("data", "val_data"):
        path = getattr(cfg, key)
        if path is None:
            continue
        digest = hashlib.sha256()
        check_regular_file(path)  # read again for the data: a pipe would block, /dev/zero never end
        try:
            with open(path, "rb") as stream:
                for block in iter(lambda: stream.read(1 << 20), b""):
                    digest.update(block)
        except OSError as err:
            raise InputError(path, None, f"cannot read: {err.strerror or err}") from None
        digests[key] = f"sha256:{digest.hexdigest()}"
    return digests


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


def train(
    config: RunConfig,
    run_dir: str | os.PathLike[str],
    *,
    resume: bool = False,
    progress: bool = True,
    on_validation: ValidationHook | None = None,
    should_stop: StopRequest | None = None,
) -> TrainResult:
    """Train per ``config`` into ``run_dir`` (created if missing).

    Args:
        resume: continue from ``run_dir/last.safetensors``; ``config`` may differ from the saved
            one only in :data:`ptrnet.runs.config.RESUMABLE` fields.
        progress: show progress on stderr (:class:`ptrnet.io.progress.Progress`: a bar on a
            terminal, else a plain line every 10 s and after each validation).
        on_validation: called after every validation with the trainer and the decoded
            metrics; returning True ends the run there (e.g. once a target is reached).
        should_stop: asked before the first step and after every step but the last (every
            rank asks; one True stops them all at the same step); True raises TrainingStopped.

    Raises:
        RunDirError: resuming without a checkpoint or with a changed config, starting over
            an existing run without ``resume``, or a directory another training holds
            (:mod:`ptrnet.runs.lock`: claimed, by rank 0, for the run's life).
        TrainingStopped: ``should_stop`` returned True; ``last`` is that of the last validation.
        UsageError: a device or precision this machine cannot run, a bad torchrun setup.
        InputError: a bad training data file or checkpoint, or a resumed run's ``config.json``
            edited by hand (:func:`ptrnet.runs.config_file.check_config_file`).
    """
    with session(config.train.device, config.train.precision) as run_session:
        local = run_session.ranks.local_world
        threads, workers = cpu_plan(config.train.threads, config.train.workers, ranks=local)
        torch.set_num_threads(threads)
        with claim_run_dir(run_dir) if run_session.main else nullcontext():  # rank 0 writes
            trainer = Trainer(config, os.fspath(run_dir), resume, run_session)
            fixed = config.train.threads is not None
            trainer.planner = ThreadPlanner(threads, workers, fixed, local)
            return trainer.run(progress and run_session.main, workers, on_validation, should_stop)


class Trainer:
    """State of one run: model, optimiser, data, validation set, log and best record."""

    def __init__(
        self, config: RunConfig, run_dir: str, resume: bool, run_session: Session | None = None
    ) -> None:
        self.config, self.cfg, self.run_dir = config, config.train, run_dir
        self.task = get_task(self.cfg.task)
        self.step, self.best = 0, {}
        self.session = run_session or Session(Ranks(), resolve_device(self.cfg.device))
        last = os.path.join(run_dir, LAST)
        if not resume and holds_run(run_dir):  # of this task, another or the copy task
            raise RunDirError(f"{run_dir} already holds a run; pass --resume or another --out")
        torch.manual_seed(self.cfg.seed)
        self.device = self.session.device
        self.model = build_model(config.model).to(self.device)
        self.optimizer = build_optimizer(self.model, self.cfg)
        self.scaler = grad_scaler(self.cfg.precision, self.device)
        self.ema = ema_model(self.model, self.cfg.ema) if self.cfg.ema else None
        self.data_digests = data_digests(self.cfg)
        saved = self._restore(last) if resume else None
        if not resume and self.cfg.init_from is not None:
            self._warm_start(self.cfg.init_from)
        self.wrapped = self.session.wrap(self.model)  # what steps train: DDP or the model
        self.baseline = None
        if self.cfg.objective == "reinforce":
            self.baseline = make_baseline(self.cfg, self.model, self.task)
            if saved is not None and saved.baseline_state is not None:
                try:
                    self.baseline.load_state(saved.baseline_state)
                except ValueError as err:
                    raise CheckpointError(last, f"invalid baseline state: {err}") from None
        self.val_points, self.val_refs = validation_set(self.task, self.cfg)
        self._check_vocabulary(config.model.max_n)
        self.data = TrainingData(self.task, self.cfg, self.val_points)
        if resume and self.data.total_steps() < self.step:  # before config.json is rewritten
            raise RunDirError(
                f"{run_dir} is already at step {self.step}; resume with more steps than that "
                f"(asked for {self.data.total_steps()})"
            )
        self.log = self._open_log(resume) if self.session.main else NullLog()
        self.planner: ThreadPlanner | None = None  # re-plans torch threads while training

    def _open_log(self, resume: bool) -> CsvLog:
        """Open ``log.csv`` (a resumed run's log checked first; rank 0's job) and write a new
        run's ``config.json``. A resumed run rewrites ``config.json`` with ``last`` only, so
        the two agree even when it stops before its first validation."""
        os.makedirs(self.run_dir, exist_ok=True)
        log = CsvLog(
            os.path.join(self.run_dir, LOG_CSV),
            columns_for(self.task.metric_keys),
            resume_step=self.step if resume else None,
        )
        if not resume:
            write_config_file(self.run_dir, self.config)
        return log

    def _restore(self, path: str) -> Checkpoint:
        """Load the run's state from ``path``; the checkpoint, for what the caller restores."""
        if not os.path.exists(path):
            raise RunDirError(f"nothing to resume: {path} does not exist")
        ckpt = load_checkpoint(path)
        if ckpt.config.model != self.config.model:
            raise RunDirError("cannot resume with a different model configuration")
        try:
            resume_config(ckpt.config, asdict(self.cfg))
        except ValueError as err:
            raise RunDirError(str(err)) from None
        check_config_file(self.run_dir, ckpt.config, self.config)
        self.model.load_state_dict(ckpt.model_state)
        self.optimizer.load_state_dict(ckpt.optimizer_state)
        torch.set_rng_state(ckpt.rng_state)
        if self.scaler is not None and "grad_scaler" in ckpt.info:
            self.scaler.load_state_dict(ckpt.info["grad_scaler"])
        if self.ema is not None:
            load_ema_state(self.ema, ckpt.ema_state)
        self.step, self.best = ckpt.step, ckpt.info.get("best", {})
        for key, digest in (ckpt.info.get("data_digests") or {}).items():  # older runs: none
            if self.data_digests.get(key) != digest:
                raise RunDirError(
                    f"{getattr(self.cfg, key)}: not the {key.replace('_', ' ')} file this run "
                    "started with (its content differs, or a relative path now names another "
                    "file); resume with that file, from the folder the run started in"
                )
        best = os.path.join(self.run_dir, BEST)
        if self.best and os.path.exists(best):  # a damaged best would be reported as the run's
            load_checkpoint(best)  # CheckpointError (an InputError) names the file and problem
        return ckpt

    def _warm_start(self, path: str) -> None:
        """Start from the weights of the checkpoint at ``path`` (same model configuration)."""
        ckpt = load_checkpoint(path)
        if ckpt.config.model != self.config.model:
            raise RunDirError(
                f"{path}: its model ({ckpt.config.model}) differs from this run's "
                f"({self.config.model})"
            )
        if ckpt.config.train.task != self.cfg.task:
            raise RunDirError(f"{path}: trained on {ckpt.config.train.task}, not {self.cfg.task}")
        self.model.load_state_dict(ckpt.model_state)

    def run(
        self,
        progress: bool,
        workers: int = 0,
        on_validation: ValidationHook | None = None,
        should_stop: StopRequest | None = None,
    ) -> TrainResult:
        """Train to the last step, or until ``on_validation`` returns True; ``workers`` data
        processes build batches ahead (:meth:`TrainingData.batches`). Raises TrainingStopped
        when ``should_stop`` (see :func:`train`) returns True."""
        total, start_time = self.data.total_steps(), time.perf_counter()
        label, done = f"train {self.task.name}", min(self.step, total)
        report = Progress(label, total, "step", done=done, enabled=progress)
        meter, metrics = Meter(), {}
        batches = self.data.batches(self.step, workers)
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
                    report.note(f"val {self._primary}", metrics[self._primary])
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

    def _step(self, batch: Batch) -> float:
        """Train on this rank's rows of the global ``batch``; the global mean loss."""
        shard = shard_batch(batch, self.session.ranks, self.cfg.labels_training_data)
        weight = self.session.ranks.world * shard.share
        rows = shard.batch.to(self.device)
        local = train_step(
            self.wrapped,
            self.optimizer,
            rows,
            self.cfg,
            self.step,
            weight=weight,
            scaler=self.scaler,
            baseline=self.baseline,
        )
        if self.ema is not None:
            self.ema.update_parameters(self.model)
        self.session.after_step(self.model, self.step + 1)
        return self.session.sum(shard.share * local)

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

    def _check_vocabulary(self, max_n: int | None) -> None:
        """Raise InputError if a validation instance is larger than a fixed-vocabulary model
        (seq2seq, attention: ``max_n``, its largest training size) can name, before training."""
        largest = max((len(p) for p in self.val_points), default=0)
        if max_n is not None and largest > max_n:
            raise InputError(
                self.cfg.val_data or "validation set",
                None,
                f"an instance of {largest} points; a {self.config.model.kind} model trained on "
                f"n <= {max_n} has no output for the points past {max_n} (validate on its sizes)",
            )

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
        """Decode the validation set, log, save ``last`` and (if improved) ``best``."""
        model = self.kept_model
        decoding = DecodeOptions(constraints=self.cfg.validation_constraints)
        metrics = evaluate(model, self.task, self.val_points, self.val_refs, decoding)
        mask_task = loss_mask_task(self.cfg)
        tf_loss = validation_loss(model, self.val_points, self.val_refs, mask_task)
        row = meter.row(self.step, self.cfg, start_time)
        row.update(val_tf_loss=tf_loss, **{f"val_{k}": metrics[k] for k in self.task.metric_keys})
        self.log.write(row)
        self._keep_if_best(metrics, tf_loss)
        if self.cfg.keep_every and self.step % self.cfg.keep_every == 0:
            self._keep_weights(metrics, tf_loss)
        # Only here, between steps: an interrupted run resumes from its last validation.
        save_checkpoint(
            os.path.join(self.run_dir, LAST),
            self.config,
            self.step,
            self.model,
            self.optimizer,
            info=self._resume_info(),
            ema_state=None if self.ema is None else ema_state(self.ema),
            baseline_state=None if self.baseline is None else self.baseline.state(),
        )
        write_config_file(self.run_dir, self.config)  # a resumed run's changes, with ``last``
        return metrics

    def _resume_info(self) -> dict[str, Any]:
        """The JSON that ``last`` holds besides tensors: the best record, the digests of the
        data files, the fp16 scale."""
        info: dict[str, Any] = {"best": self.best, "data_digests": self.data_digests}
        if self.scaler is not None:
            info["grad_scaler"] = self.scaler.state_dict()
        return info

    def _keep_weights(self, metrics: dict[str, Any], tf_loss: float) -> None:
        """Keep this validation's weights (those ``best`` would take) under ``kept/``."""
        record = {"step": self.step, "metrics": json_safe(metrics), "val_tf_loss": tf_loss}
        path = kept_path(self.run_dir, self.step)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        save_checkpoint(path, self.config, self.step, self.kept_model, info={"kept": record})

    def _keep_if_best(self, metrics: dict[str, Any], tf_loss: float) -> None:
        """Save ``best`` unless the kept one ranks strictly better by
        :meth:`~ptrnet.tasks.base.Task.selection_key` (primary metric, then the tie-break
        one): equal ranks go to the later step, the longer-trained weights."""
        key = self.task.selection_key
        if self.best and key(metrics) > key(self.best["metrics"]):
            return
        self.best = json_safe(
            {
                "step": self.step,
                "metric": self._primary,
                "value": metrics[self._primary],
                "constraints": self.cfg.validation_constraints,
                "metrics": json_safe(metrics),
                "val_tf_loss": tf_loss,
            }
        )
        path = os.path.join(self.run_dir, BEST)
        save_checkpoint(path, self.config, self.step, self.kept_model, info={"best": self.best})
        with atomic_write(os.path.join(self.run_dir, BEST_JSON)) as stream:
            json.dump({**self.best, "config": self.config.to_dict()}, stream, indent=2)
