"""A point task's training run: teacher-forced maximum likelihood (Sec. 4), validation on decoded
metrics, atomic checkpoints, exact resume. The loop itself is every task's
(:mod:`ptrnet.training.runloop`); :class:`Trainer` plugs in the point tasks' model, data,
steps, validation and checkpoint format.

The loop knows nothing about the network: :func:`ptrnet.training.steps.train_step` calls one of
the losses of :mod:`ptrnet.training.losses` (teacher-forced cross-entropy, plain or masked by the
task's rules with ``train_constraints`` ``task``; or REINFORCE), clips the gradient and steps the
optimiser.

A run directory holds ``config.json`` (the RunConfig, as ``last`` holds it:
:mod:`ptrnet.runs.config_file`), ``log.csv`` (:mod:`ptrnet.runs.csvlog`), ``last.safetensors``
(weights + optimiser + RNG state, written at every validation and at the end) and
``best.safetensors`` + ``best.json`` (weights and metrics at the validation with the best
*decoded* metrics, :meth:`ptrnet.tasks.card.TaskCard.selection_key`, ties to the later step; never
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
import os
from contextlib import nullcontext
from dataclasses import asdict
from typing import Any

import torch
from torch import nn

from ptrnet.compute.devices import resolve_device
from ptrnet.compute.precision import grad_scaler
from ptrnet.datasets.batching import Batch
from ptrnet.decoding.options import DecodeOptions
from ptrnet.evaluation.evaluate import evaluate
from ptrnet.io.errors import InputError
from ptrnet.io.text import check_regular_file
from ptrnet.model import build_model
from ptrnet.runs import BEST, LAST, RunDirError, recorded_file
from ptrnet.runs.checkpoint import Checkpoint, CheckpointError, load_checkpoint, save_checkpoint
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.runs.config_file import check_config_file, write_config_file
from ptrnet.runs.lock import claim_run_dir
from ptrnet.runs.resume import resume_config
from ptrnet.training.baselines import make_baseline
from ptrnet.training.cpu import ThreadPlanner, cpu_plan
from ptrnet.training.data import TrainingData, validation_set
from ptrnet.training.distributed import Ranks, Session, session, shard_batch
from ptrnet.training.ema import ema_model, ema_state, load_ema_state
from ptrnet.training.losses import loss_mask_task
from ptrnet.training.runloop import (
    DivergedError,
    RunLoop,
    StopRequest,
    TrainingStopped,
    TrainResult,
    ValidationHook,
    non_finite_parameter,
)
from ptrnet.training.steps import build_optimizer, train_step, validation_loss

__all__ = [
    "DivergedError",
    "RunDirError",
    "Trainer",
    "TrainingStopped",
    "TrainResult",
    "data_digests",
    "non_finite_parameter",
    "train",
]


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
            # The trainer lives in _run's frame only: it (and its DDP wrapper, which holds the
            # process group) is gone before the session leaves the group (distributed.session).
            planner = ThreadPlanner(threads, workers, config.train.threads is not None, local)
            return _run(
                Trainer(config, os.fspath(run_dir), resume, run_session),
                planner,
                progress and run_session.main,
                workers,
                on_validation,
                should_stop,
            )


def _run(
    trainer: Trainer,
    planner: ThreadPlanner,
    progress: bool,
    workers: int,
    on_validation: ValidationHook | None,
    should_stop: StopRequest | None,
) -> TrainResult:
    """``trainer``'s run with ``planner`` choosing its threads."""
    trainer.planner = planner
    return trainer.run(progress, workers, on_validation, should_stop)


class Trainer(RunLoop):
    """A point task's run in the shared loop (:class:`~ptrnet.training.runloop.RunLoop`): its
    model and optimiser, data, validation set, checkpoints and REINFORCE baseline."""

    def __init__(
        self, config: RunConfig, run_dir: str, resume: bool, run_session: Session | None = None
    ) -> None:
        cfg = config.train
        super().__init__(cfg, run_dir, run_session or Session(Ranks(), resolve_device(cfg.device)))
        self.task = cfg.generating_task()  # knapsack: generated instances state ``capacity``
        self.config = config
        last = os.path.join(run_dir, LAST)
        self.refuse_used_dir(resume)  # a run of this task, another or the copy task
        torch.manual_seed(cfg.seed)
        self.model = build_model(config.model).to(self.device)
        self.optimizer = build_optimizer(self.model, cfg)
        self.scaler = grad_scaler(cfg.precision, self.device)
        self.ema = ema_model(self.model, cfg.ema) if cfg.ema else None
        self.data_digests = data_digests(cfg)
        saved = self._restore(last) if resume else None
        if not resume and cfg.init_from is not None:
            self._warm_start(recorded_file(cfg.init_from, run_dir))
        self.wrapped = self.session.wrap(self.model)  # what steps train: DDP or the model
        self.baseline = None
        if cfg.objective == "reinforce":
            self.baseline = make_baseline(cfg, self.model, self.task)
            if saved is not None and saved.baseline_state is not None:
                try:
                    self.baseline.load_state(saved.baseline_state)
                except ValueError as err:
                    raise CheckpointError(last, f"invalid baseline state: {err}") from None
        self.val_points, self.val_refs = validation_set(self.task, cfg)
        self._check_vocabulary(config.model.max_n)
        self.data = TrainingData(self.task, cfg, self.val_points)
        self._check_rows(config.model.input_dim)
        self.check_resumed_length(resume)
        self.open_log(resume)

    def total_steps(self) -> int:
        return self.data.total_steps()

    def batches(self, start: int, workers: int = 0) -> Any:
        return self.data.batches(start, workers)

    def config_dict(self) -> dict[str, Any]:
        return self.config.to_dict()

    def write_config_file(self) -> None:
        write_config_file(self.run_dir, self.config)

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
        self.adopt_state(
            ckpt.model_state, ckpt.optimizer_state, ckpt.rng_state, ckpt.step, ckpt.info
        )
        if self.scaler is not None and "grad_scaler" in ckpt.info:
            self.scaler.load_state_dict(ckpt.info["grad_scaler"])
        if self.ema is not None:
            load_ema_state(self.ema, ckpt.ema_state)
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

    def _check_rows(self, width: int) -> None:
        """Raise InputError, before training, where an instance's rows are not the ``width``
        numbers the model reads: knapsack instances that state a capacity (a third column)
        for a model that reads none, or the reverse."""
        sources = [(self.cfg.val_data or "validation set", self.val_points)]
        if self.data.file is not None:
            sources.append((self.cfg.data, [points for points, _ in self.data.file]))
        for where, instances in sources:
            bad = next((p for p in instances if p.shape[1] != width), None)
            if bad is not None:
                raise InputError(
                    where,
                    None,
                    f"instances of {bad.shape[1]} numbers a row, and the model reads {width}: a "
                    "model that reads knapsack capacities (--features capacity) trains on "
                    "instances that state them (--capacity 10%-50% for generated ones, or "
                    "--data and --val-data from ptrnet generate knapsack --capacity 10%-50%), "
                    "and only such a model does",
                )

    def _measure(self, model: nn.Module) -> tuple[dict[str, Any], float]:
        """Decode the validation set (the run's validation constraints) and its teacher-forced
        loss (masked as in training)."""
        decoding = DecodeOptions(constraints=self.cfg.validation_constraints)
        metrics = evaluate(model, self.task, self.val_points, self.val_refs, decoding)
        tf_loss = validation_loss(model, self.val_points, self.val_refs, loss_mask_task(self.cfg))
        return metrics, tf_loss

    def _record_extra(self) -> dict[str, Any]:
        return {"constraints": self.cfg.validation_constraints}

    def _save(self, path: str, model: nn.Module, info: dict[str, Any], resumable: bool) -> None:
        if not resumable:
            save_checkpoint(path, self.config, self.step, model, info=info)
            return
        save_checkpoint(
            path,
            self.config,
            self.step,
            model,
            self.optimizer,
            info=info,
            ema_state=None if self.ema is None else ema_state(self.ema),
            baseline_state=None if self.baseline is None else self.baseline.state(),
        )

    def _resume_info(self) -> dict[str, Any]:
        """The JSON that ``last`` holds besides tensors: the best record, the digests of the
        data files, the fp16 scale."""
        info = {**super()._resume_info(), "data_digests": self.data_digests}
        if self.scaler is not None:
            info["grad_scaler"] = self.scaler.state_dict()
        return info
