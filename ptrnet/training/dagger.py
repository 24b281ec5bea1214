"""DAgger (``objective="dagger"``): imitation of the expert on the states the model reaches.

Teacher forcing trains every step on a prefix of the *label*; at test time the model reads its
own prefixes, and one early mistake leads it into states no label ever showed (exposure bias).
Measured on the bundled heavy TSP models: continued teacher-forced training lowered the
validation loss while the greedy tours got longer. DAgger (Ross, Gordon & Bagnell 2011)
trains on the states the model visits instead, each labelled with what the expert would do
from there; TSP can afford it, because the expert's answer from any state is one solver call
(:meth:`ptrnet.tasks.base.Task.complete`: the shortest path from the last city through the
cities left back to the first).

One step, for a batch of B instances (n_b inputs each) with expert labels:

1. draw u in [0, 1) (one per step) and cut each row at k_b = 1 + floor(u (n_b - 2)) outputs,
   so every depth of a tour is trained on, and k_b = 1 (the start alone) is the expert's label;
2. decode the first max k_b outputs of every row greedily under the task's rules (no
   gradient, eval mode): the states the deployed model reaches;
3. label row b with its first k_b decoded outputs then ``task.complete`` from there;
4. teacher-force the new labels on the steps at and after the cut only (the steps before it
   would teach the model its own choices): all of them, or ``label_steps`` of them drawn as
   :func:`ptrnet.training.losses.sample_label_steps` draws, but among the distances from the
   end that fall after the cut.

The cut and the label steps come from a generator seeded by ``(seed, step)``, so a resumed run
cuts where an uninterrupted one does (the decoded prefixes depend on the weights, which a
resume restores).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ptrnet.batching import IGNORE_INDEX, Batch, collate
from ptrnet.decoding.search import run_search
from ptrnet.decoding.strategies import Greedy
from ptrnet.runs.config import TrainConfig
from ptrnet.tasks import Stream, Task


def dagger_batch(
    model: nn.Module, task: Task, batch: Batch, cfg: TrainConfig, generator: torch.Generator
) -> tuple[Batch, torch.Tensor]:
    """``batch`` relabelled from the model's own greedy prefixes, and the (B, T) bool steps to
    teacher-force (module docstring). ``model`` is the bare model (not a DDP wrapper)."""
    lengths = batch.lengths.cpu()  # (B,)
    u = float(torch.rand((), generator=generator, device=generator.device))
    cuts = 1 + (u * (lengths - 2).clamp(min=0)).long()  # (B,) outputs kept, 1..n_b-2
    prefixes = greedy_prefixes(model, task, batch, int(cuts.max()))  # (B, max k) tokens
    points = [batch.points[b, :n].cpu().double().numpy() for b, n in enumerate(lengths.tolist())]
    labels = [
        task.complete(x, prefixes[b, : int(cuts[b])].cpu().numpy() - 1, cfg.label_solver)
        for b, x in enumerate(points)
    ]
    relabelled = collate(points, labels).to(batch.points.device)
    active = steps_after_cut(
        relabelled.targets, cuts, cfg.label_steps, generator, cfg.shared_label_steps
    )
    return relabelled, active


def greedy_prefixes(model: nn.Module, task: Task, batch: Batch, steps: int) -> torch.Tensor:
    """(B, steps) the first ``steps`` tokens of each row's greedy output under the task's
    rules, decoded in eval mode without gradient (the model's mode is restored)."""
    was_training = model.training
    model.eval()
    with torch.no_grad():
        memory = model.encode(batch.points, batch.lengths)
        state = task.decode_state(batch.lengths, "task")
        trace = run_search(model, memory, state, steps, Greedy())
    model.train(was_training)
    return trace.tokens


def steps_after_cut(
    targets: torch.Tensor,
    cuts: torch.Tensor,
    k: int,
    generator: torch.Generator,
    shared: bool = False,
) -> torch.Tensor:
    """(B, T) targets, (B,) cuts -> (B, T) bool: the real steps at index >= the row's cut;
    with ``k`` > 0 only k of them per row, drawn uniformly without replacement (``shared``:
    one draw of k distances from the end of a label for every row, among the distances that
    are after the cut of some row, as :func:`ptrnet.training.losses.sample_label_steps`)."""
    real = targets != IGNORE_INDEX  # (B, T)
    index = torch.arange(targets.shape[1], device=targets.device)
    after = real & (index[None, :] >= cuts.to(targets.device)[:, None])  # (B, T)
    if not k:
        return after
    if shared:
        length = real.sum(dim=1, keepdim=True)  # (B, 1)
        distance = length - 1 - index[None, :]  # (B, T), 0 at the end token
        span = int(distance.masked_fill(~after, -1).max()) + 1  # distances after some cut
        keys = torch.rand(span, generator=generator, device=generator.device)
        drawn = (keys.argsort().argsort() < k).to(targets.device)  # (span,)
        return after & drawn[distance.clamp(0, span - 1)]
    keys = torch.rand(targets.shape, generator=generator, device=generator.device)
    keys = keys.to(targets.device).masked_fill(~after, 2.0)  # steps before the cut sort last
    rank = keys.argsort(dim=1).argsort(dim=1)
    return after & (rank < k)


def dagger_generator(seed: int, step: int) -> torch.Generator:
    """The CPU generator of training step ``step``'s cut and label steps."""
    state = np.random.SeedSequence([seed, Stream.DAGGER, step]).generate_state(1)[0]
    return torch.Generator().manual_seed(int(state))
