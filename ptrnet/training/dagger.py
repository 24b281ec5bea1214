"""DAgger (``objective="dagger"``): imitation of the expert on the states the model reaches.

Teacher forcing trains every step on a prefix of the *label*; at test time the model reads its
own prefixes, and one early mistake leads it into states no label ever showed (exposure bias).
Measured on the bundled heavy TSP models: continued teacher-forced training lowered the
validation loss while the greedy tours got longer. DAgger (Ross, Gordon & Bagnell 2011)
trains on the states the model visits instead, each labelled with what the expert would do
from there. TSP can afford it, because the expert's move from any state is one solver call
(:meth:`ptrnet.tasks.base.Task.complete`: the first city of the shortest path from the last
city through the cities left back to the first).

One step, for a batch of B instances (n_b inputs each):

1. decode every row greedily under the task's rules (no gradient, eval mode): the states the
   deployed model reaches, one per step of its output;
2. draw the steps to train on among each row's choices (steps 1 .. n_b - 2, where at least
   two inputs are left): all of them, or ``label_steps`` k drawn uniformly, per row or with
   ``shared_label_steps`` the same distances from the end for every row (as
   :func:`ptrnet.training.losses.sample_label_steps`);
3. label each drawn step with the expert's next output from the model's prefix before it
   (``task.complete(points, prefix)[len(prefix)]``, by ``label_solver``): one solver call
   per drawn step;
4. teacher-force the model's own outputs as the inputs and score the drawn steps against the
   expert's labels (:func:`ptrnet.training.losses.teacher_forced_loss` with ``labels``).

The steps are drawn by a generator seeded by ``(seed, step)`` (``Stream.DAGGER``), so a
resumed run draws as an uninterrupted one (the decoded outputs depend on the weights, which a
resume restores).

Measured on the bundled heavy TSP models, it held their greedy gap where it was: their loss is
mostly in moves made before any mistake (docs/bundled-runs/tsp/probe-dagger/).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ptrnet.datasets.batching import IGNORE_INDEX, Batch
from ptrnet.decoding.pointer_decoder import PointerDecoder
from ptrnet.decoding.search import run_search, step_limit
from ptrnet.decoding.strategies.greedy import Greedy
from ptrnet.runs.config import TrainConfig
from ptrnet.tasks import Task
from ptrnet.training.losses import sample_steps, tokens_as_targets


@dataclass(frozen=True)
class DaggerBatch:
    """What a DAgger step teacher-forces.

    Attributes:
        batch: the instances, with ``targets`` (B, T) = the model's greedy outputs, padded
            after the end token (the inputs of teacher forcing: every prefix is a state the
            model reached).
        labels: (B, T) long, the expert's next token at the drawn steps, ``IGNORE_INDEX``
            elsewhere.
        active: (B, T) bool, the drawn steps.
    """

    batch: Batch
    labels: torch.Tensor
    active: torch.Tensor


def dagger_batch(
    model: nn.Module, task: Task, batch: Batch, cfg: TrainConfig, generator: torch.Generator
) -> DaggerBatch:
    """The model's greedy outputs on ``batch``, the steps drawn from them and the expert's
    labels there (module docstring). ``model`` is the bare model (not a DDP wrapper)."""
    outputs = tokens_as_targets(greedy_outputs(model, task, batch))  # (B, T), pads after end
    active = choice_steps(
        outputs, batch.lengths, cfg.label_steps, generator, cfg.shared_label_steps
    )
    labels = torch.full_like(outputs, IGNORE_INDEX)
    points = batch.points.cpu().double().numpy()
    tokens = outputs.cpu().numpy()
    for b, t in active.nonzero().tolist():
        n = int(batch.lengths[b])
        label = task.complete(points[b, :n], tokens[b, :t] - 1, cfg.label_solver)
        labels[b, t] = int(label[t]) + 1
    return DaggerBatch(Batch(batch.points, batch.lengths, outputs), labels, active)


def greedy_outputs(model: nn.Module, task: Task, batch: Batch) -> torch.Tensor:
    """(B, T) each row's greedy output under the task's rules, the end token included and
    repeated after it, decoded in eval mode without gradient (the model's mode is restored)."""
    was_training = model.training
    model.eval()
    with torch.no_grad():
        memory = model.encode(batch.points, batch.lengths)
        rules = task.decode_state(batch.lengths, "task", batch.points)
        decoder = PointerDecoder(model, memory, rules)
        trace = run_search(decoder, step_limit(task, batch.lengths), Greedy())
    model.train(was_training)
    return trace.tokens


def choice_steps(
    outputs: torch.Tensor,
    lengths: torch.Tensor,
    k: int,
    generator: torch.Generator,
    shared: bool = False,
) -> torch.Tensor:
    """(B, T) outputs, (B,) input counts -> (B, T) bool: the steps 1 .. n_b - 2 of each row
    (those choosing among at least two inputs left); with ``k`` > 0 only k of them, drawn by
    :func:`ptrnet.training.losses.sample_steps` (``shared``: the same distances from each
    row's last choice, so rows of one length run the same steps and the longest rows take k)."""
    index = torch.arange(outputs.shape[1], device=outputs.device)[None, :]  # (1, T)
    last = (lengths.to(outputs.device) - 2)[:, None]  # (B, 1) the last step with a choice
    choices = (index >= 1) & (index <= last)  # (B, T)
    return sample_steps(choices, k, generator, shared) if k else choices
