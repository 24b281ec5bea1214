"""One optimiser step of any run (:func:`optimizer_step`) and a point task's
(:func:`train_step`: teacher-forced, masked or not, with label steps; REINFORCE; DAgger), the
optimiser it steps, the teacher-forced validation loss (a diagnostic) and the meter behind the
log's loss and throughput columns. :mod:`ptrnet.training.runloop` runs them."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from ptrnet.compute.precision import autocast, has_attention
from ptrnet.datasets.batching import IGNORE_INDEX, Batch, collate
from ptrnet.runs.config import TrainConfig
from ptrnet.tasks import Stream, Task, get_task
from ptrnet.training.baselines import Baseline
from ptrnet.training.dagger import dagger_batch
from ptrnet.training.distributed import unwrap
from ptrnet.training.losses import (
    label_step_mask,
    loss_mask_task,
    reinforce_loss,
    sample_generator,
    teacher_forced_loss,
)

VAL_BATCH = 256


def build_optimizer(model: nn.Module, cfg: TrainConfig) -> torch.optim.Optimizer:
    """Plain SGD (the paper's recipe) or Adam; the learning rate is set every step.

    Adam uses the fused kernel where torch has one for the device (CPU since torch 2.4): one
    call instead of a dozen per parameter, 7.3 -> 0.6 ms per step at hidden 256 on one thread.
    """
    params = list(model.parameters())
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(params, lr=cfg.lr)
    try:
        return torch.optim.Adam(params, lr=cfg.lr, fused=True)
    except RuntimeError:  # no fused Adam for this device in this torch version
        return torch.optim.Adam(params, lr=cfg.lr)


def optimizer_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    cfg: Any,
    step: int,
    loss_of: Callable[[], tuple[torch.Tensor, float | None]],
    *,
    weight: float = 1.0,
    scaler: torch.amp.GradScaler | None = None,
) -> float:
    """One optimiser step of any run at learning rate ``cfg.learning_rate(step)``, the loss
    ``loss_of()`` computed in ``cfg.precision``, the gradient's norm clipped at
    ``cfg.clip_norm``. ``loss_of`` returns the loss and, if another figure is to be logged for
    the step, that figure (else None: the loss's value is logged).

    ``model`` may be wrapped in DDP; ``weight`` multiplies the loss before the backward pass (a
    rank's ``K * share``, :mod:`ptrnet.training.distributed`); ``scaler``: fp16's gradient
    scaler (:func:`ptrnet.compute.precision.grad_scaler`), the gradients unscaled before clipping.
    """
    for group in optimizer.param_groups:
        group["lr"] = cfg.learning_rate(step)
    optimizer.zero_grad(set_to_none=True)
    if cfg.precision == "fp32":
        loss, logged = loss_of()
    else:
        device = next(model.parameters()).device
        with autocast(cfg.precision, device, has_attention(model)):
            loss, logged = loss_of()
    if scaler is None:
        (loss * weight).backward()
    else:
        scaler.scale(loss * weight).backward()
        scaler.unscale_(optimizer)
    nn.utils.clip_grad_norm_(model.parameters(), cfg.clip_norm)
    if scaler is None:
        optimizer.step()
    else:
        scaler.step(optimizer)  # skipped when the scaled gradients overflowed
        scaler.update()
    return loss.item() if logged is None else logged


def train_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    batch: Batch,
    cfg: TrainConfig,
    step: int,
    *,
    weight: float = 1.0,
    scaler: torch.amp.GradScaler | None = None,
    baseline: Baseline | None = None,
) -> float:
    """A point task's :func:`optimizer_step` on ``batch``; ``baseline`` is REINFORCE's (None =
    leave-one-out), told of the step once it is taken.

    Returns the figure logged as the step's loss, unweighted: the teacher-forced loss per
    token, or with ``objective`` ``reinforce`` the mean cost of the sampled outputs.
    """
    logged = optimizer_step(
        model,
        optimizer,
        cfg,
        step,
        lambda: _point_loss(model, batch, cfg, step, baseline),
        weight=weight,
        scaler=scaler,
    )
    if baseline is not None:
        baseline.after_step(unwrap(model), step)
    return logged


def _point_loss(
    model: nn.Module, batch: Batch, cfg: TrainConfig, step: int, baseline: Baseline | None
) -> tuple[torch.Tensor, float | None]:
    """The loss of a point task's step on ``batch`` by ``cfg.objective``, and REINFORCE's
    logged figure (the mean sampled cost; None otherwise)."""
    mask_task = loss_mask_task(cfg)
    device = next(model.parameters()).device
    if cfg.objective == "reinforce":
        generator = sample_generator(cfg.seed, step, device)
        # Sampled with the bare model; re-scored through ``model`` (DDP's hooks, if wrapped).
        return reinforce_loss(
            unwrap(model),
            mask_task,
            batch,
            cfg.rl_samples,
            generator,
            scorer=model,
            baseline=baseline,
            opening=cfg.opening_rollouts if cfg.learn_opening else None,
        )
    if cfg.objective == "dagger":
        task = get_task(cfg.task)
        generator = sample_generator(cfg.seed, step, stream=Stream.DAGGER)
        drawn = dagger_batch(unwrap(model), task, batch, cfg, generator)
        loss = teacher_forced_loss(
            model,
            drawn.batch,
            mask_task=mask_task,
            active=drawn.active,
            run_all=not cfg.label_steps,  # a heavy decoder (RunConfig checks) runs k steps
            labels=drawn.labels,
        )
        return loss, None
    active = label_step_mask(cfg.label_steps, cfg.seed, step, batch.targets, cfg.shared_label_steps)
    return teacher_forced_loss(model, batch, mask_task=mask_task, active=active), None


def validation_loss(
    model: nn.Module,
    points: list[np.ndarray],
    refs: list[np.ndarray],
    mask_task: Task | None = None,
) -> float:
    """Teacher-forced loss per target token on a labelled set (a diagnostic, not a metric),
    masked by ``mask_task`` as in training."""
    order = np.argsort([len(p) for p in points], kind="stable")
    total, tokens = 0.0, 0
    with torch.no_grad():
        for lo in range(0, len(order), VAL_BATCH):
            rows = order[lo : lo + VAL_BATCH]
            batch = collate([points[i] for i in rows], [refs[i] for i in rows])
            batch = batch.to(next(model.parameters()).device)
            total += teacher_forced_loss(model, batch, "sum", mask_task).item()
            tokens += int((batch.targets != IGNORE_INDEX).sum())
    return total / tokens


class Meter:
    """Training loss and throughput over the current logging interval and the whole session."""

    def __init__(self) -> None:
        self.losses: list[float] = []
        self.examples = self.seconds = 0.0
        self.total_examples = self.total_seconds = 0.0

    def add(self, loss: float, examples: int, seconds: float) -> None:
        self.losses.append(loss)
        self.examples += examples
        self.seconds += seconds
        self.total_examples += examples
        self.total_seconds += seconds

    def row(self, step: int, cfg: TrainConfig, start_time: float) -> dict[str, Any]:
        """A CSV row for the interval since the last row; resets the interval."""
        row = {
            "step": step,
            "loss": float(np.mean(self.losses)) if self.losses else "",
            "lr": cfg.learning_rate(step - 1),
            "elapsed_s": time.perf_counter() - start_time,
            "examples_per_s": self.examples / self.seconds if self.seconds else "",
        }
        self.losses, self.examples, self.seconds = [], 0.0, 0.0
        return row

    def overall_rate(self) -> float:
        """Training examples per second over this session (validation excluded)."""
        return self.total_examples / self.total_seconds if self.total_seconds else 0.0
