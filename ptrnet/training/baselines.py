"""REINFORCE baselines: what each sampled output's cost is compared with (``TrainConfig.baseline``).

The policy gradient of the expected cost is E[(c - b) grad log p]; any b that does not depend
on the sampled output leaves it unbiased and a good one cuts its variance. Four choices, for
any task with a cost (:attr:`ptrnet.tasks.base.Task.has_cost`):

* ``samples``: the mean cost of the instance's other K - 1 samples (leave-one-out; Kool et al.
  2019's "buy 4 REINFORCE samples").
* ``ema``: an exponential moving average of the batches' mean costs, the current batch
  included, ``b <- beta b + (1 - beta) mean(c)``, starting at the first batch's mean (Kool et
  al.'s "exponential" baseline).
* ``rollout``: the cost of the greedy output of a frozen copy of the policy (Kool et al.). Every
  ``baseline_every`` steps both decode a fixed set of ``baseline_count`` instances greedily; when
  the policy is shorter on average and a one-sided paired t-test on the instance costs gives
  p < 0.05, the frozen copy takes the policy's weights and a fresh set is drawn.
* ``pomo``: one sampled output from every start of each instance (the instance read rotated so
  that each input comes first, :mod:`ptrnet.decoding.multistart`; TSP: a tour from every city;
  a routing instance, whose depot keeps its place, read as given with each run forced to serve
  its own customer first), each compared with the mean over all its instance's starts (Kwon et
  al. 2020). In a batch of mixed sizes, the smaller instances repeat starts (start s of
  n_b < N is start s mod n_b; of n_b - 1 customers, s mod (n_b - 1)).

A baseline's state (the moving average; the frozen copy, its update count and its held-out
costs) is saved in the run's resumable checkpoint (:meth:`Baseline.state`,
:class:`ptrnet.runs.checkpoint.BaselineState`) and restored on resume
(:meth:`Baseline.load_state`), so a resumed run continues exactly as an uninterrupted one.
"""

from __future__ import annotations

import copy

import numpy as np
import torch
from scipy import stats
from torch import nn

from ptrnet.datasets.batching import Batch
from ptrnet.decoding.dataset import decode_all
from ptrnet.decoding.decode import decode
from ptrnet.decoding.options import DecodeOptions
from ptrnet.quoting import quote
from ptrnet.runs.checkpoint import BaselineState
from ptrnet.runs.config import TrainConfig
from ptrnet.tasks import Stream, Task

GREEDY_TOURS = DecodeOptions(strategy="greedy", constraints="task")
SIGNIFICANCE = 0.05  # the rollout update's one-sided p-value threshold


class Baseline:
    """The ``samples`` baseline and the interface of the others.

    ``multistart``: whether the loss samples one output per start instead of K per instance.
    """

    multistart = False

    def values(self, cost: torch.Tensor, batch: Batch) -> torch.Tensor:
        """(B, K) costs of the samples of ``batch``'s B instances -> (B, K) baselines."""
        return leave_one_out_baseline(cost)

    def after_step(self, model: nn.Module, step: int) -> None:
        """Called after optimiser step ``step`` (0-based) with the updated policy."""

    def state(self) -> BaselineState:
        """What resuming needs to continue this baseline exactly (nothing, for this one)."""
        return BaselineState()

    def load_state(self, state: BaselineState) -> None:
        """Continue from :meth:`state`'s result; raises ValueError on one that does not fit."""


def leave_one_out_baseline(cost: torch.Tensor) -> torch.Tensor:
    """(B, K) mean cost of the other K - 1 samples of the same instance, per sample."""
    samples = cost.shape[1]
    return (cost.sum(dim=1, keepdim=True) - cost) / (samples - 1)


class PomoBaseline(Baseline):
    """The mean cost over all starts of the same instance, shared by its samples."""

    multistart = True

    def values(self, cost: torch.Tensor, batch: Batch) -> torch.Tensor:
        return cost.mean(dim=1, keepdim=True).expand_as(cost)


class EmaBaseline(Baseline):
    """An exponential moving average of the batch mean cost (module docstring)."""

    def __init__(self, beta: float) -> None:
        self.beta, self.value = beta, None

    def values(self, cost: torch.Tensor, batch: Batch) -> torch.Tensor:
        mean = float(cost.mean())
        self.value = mean if self.value is None else self.beta * self.value + (1 - self.beta) * mean
        return torch.full_like(cost, self.value)

    def state(self) -> BaselineState:
        return BaselineState({"value": self.value})  # JSON keeps a float exactly

    def load_state(self, state: BaselineState) -> None:
        value = state.meta.get("value")
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise ValueError(f"the moving average is {quote(value)}, not a number")
        self.value = None if value is None else float(value)


class RolloutBaseline(Baseline):
    """The greedy cost of a frozen copy of the policy, replaced when the policy is significantly
    better on a held-out set (module docstring)."""

    def __init__(self, model: nn.Module, task: Task, cfg: TrainConfig) -> None:
        self.task, self.cfg, self.updates = task, cfg, 0
        self.frozen = _frozen_copy(model)
        self.points = self._draw()
        self.frozen_costs = self._costs(self.frozen)

    def values(self, cost: torch.Tensor, batch: Batch) -> torch.Tensor:
        drawn = decode(self.frozen, self.task, batch, GREEDY_TOURS)
        greedy = self.task.batch_cost(batch.points, drawn.tokens, batch.lengths).float()  # (B,)
        return greedy[:, None].expand_as(cost)

    def after_step(self, model: nn.Module, step: int) -> None:
        if (step + 1) % self.cfg.baseline_every:
            return
        if rollout_improved(self._costs(model), self.frozen_costs):
            self.frozen = _frozen_copy(model)
            self.updates += 1
            self.points = self._draw()
            self.frozen_costs = self._costs(self.frozen)

    def state(self) -> BaselineState:
        tensors = {f"frozen.{k}": v for k, v in self.frozen.state_dict().items()}
        tensors["frozen_costs"] = torch.from_numpy(np.asarray(self.frozen_costs, dtype=float))
        return BaselineState({"updates": self.updates}, tensors)

    def load_state(self, state: BaselineState) -> None:
        updates = state.meta.get("updates")
        if isinstance(updates, bool) or not isinstance(updates, int) or updates < 0:
            raise ValueError(f"the rollout update count is {quote(updates)}")
        weights = {k[7:]: v for k, v in state.tensors.items() if k.startswith("frozen.")}
        costs = state.tensors.get("frozen_costs")
        if costs is None or costs.shape != (self.cfg.baseline_count,):
            raise ValueError(f"no {self.cfg.baseline_count} held-out costs of the frozen copy")
        try:
            self.frozen.load_state_dict(weights)
        except RuntimeError as err:
            raise ValueError(f"frozen copy: {str(err).strip().splitlines()[0]}") from None
        self.updates = updates
        self.points = self._draw()
        self.frozen_costs = costs.numpy().astype(float)

    def _draw(self) -> list[np.ndarray]:
        start = self.updates * self.cfg.baseline_count
        return self.task.generate(
            self.cfg.size_range, self.cfg.baseline_count, self.cfg.seed, Stream.ROLLOUT, start
        )

    def _costs(self, model: nn.Module) -> np.ndarray:
        """(baseline_count,) greedy costs of ``model`` on the held-out set."""
        tours = decode_all(model, self.task, self.points, GREEDY_TOURS)
        pairs = zip(self.points, tours, strict=True)
        return np.array([self.task.sequence_cost(p, t) for p, t in pairs])


def rollout_improved(policy: np.ndarray, frozen: np.ndarray) -> bool:
    """Whether the policy's costs beat the frozen copy's on the same instances: a lower mean and
    a one-sided paired t-test with p < :data:`SIGNIFICANCE` (equal differences everywhere, where
    the test is undefined, count as significant)."""
    diff = np.asarray(policy, dtype=float) - np.asarray(frozen, dtype=float)
    if not diff.mean() < 0:
        return False
    if np.all(diff == diff[0]):
        return True
    return bool(stats.ttest_rel(policy, frozen, alternative="less").pvalue < SIGNIFICANCE)


def _frozen_copy(model: nn.Module) -> nn.Module:
    frozen = copy.deepcopy(model).eval()
    for p in frozen.parameters():
        p.requires_grad_(False)
    return frozen


def make_baseline(cfg: TrainConfig, model: nn.Module, task: Task) -> Baseline:
    """The baseline ``cfg.baseline`` names, for a policy that starts as ``model``."""
    if cfg.baseline == "rollout":
        return RolloutBaseline(model, task, cfg)
    if cfg.baseline == "ema":
        return EmaBaseline(cfg.baseline_beta)
    if cfg.baseline == "pomo":
        return PomoBaseline()
    return Baseline()
