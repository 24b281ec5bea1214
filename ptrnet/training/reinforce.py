"""Policy-gradient fine-tuning on the task's cost (``objective="reinforce"``), beyond the paper.

The paper trains only by imitation. Once a model imitates well, its remaining error is what
imitation does not see: which of its own mistakes cost most. REINFORCE (Williams 1992) trains
on the cost of the model's own outputs instead, as Bello et al. (2016) and Kool et al. (2019)
did for TSP, and needs no labels.

One step, for a batch of B instances and K = ``rl_samples``:

1. sample K outputs per instance from the model under the task's rules (no gradient);
2. cost c (B, K) of each (:meth:`ptrnet.tasks.base.Task.batch_cost`; TSP: tour length);
3. baseline: for each sample, the mean cost of the instance's other K - 1 samples (the
   leave-one-out baseline of Kool et al. 2019's "buy 4 REINFORCE samples"), which needs no
   critic network or frozen copy of the model and leaves the gradient unbiased;
4. re-score the samples with teacher forcing under the same rules (one parallel pass, with
   gradient): log p (B, K);
5. loss = mean((c - baseline) * log p): its gradient is the policy gradient of the mean cost.

The samples are drawn from a generator seeded by ``(seed, step)``, so a resumed run draws the
same samples as an uninterrupted one.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from ptrnet.batching import IGNORE_INDEX, Batch
from ptrnet.decoding.decode import decode
from ptrnet.tasks import Task

SAMPLE_STREAM = 5  # keys the sampling generator apart from the data streams


def sample_generator(seed: int, step: int, device: torch.device | str = "cpu") -> torch.Generator:
    """The torch generator on ``device`` (where the sampled probabilities live) that draws step
    ``step``'s samples (a pure function of both on a given device)."""
    state = np.random.SeedSequence([seed, SAMPLE_STREAM, step]).generate_state(1)[0]
    return torch.Generator(device).manual_seed(int(state))


def leave_one_out_baseline(cost: torch.Tensor) -> torch.Tensor:
    """(B, K) mean cost of the other K - 1 samples of the same instance, per sample."""
    samples = cost.shape[1]
    return (cost.sum(dim=1, keepdim=True) - cost) / (samples - 1)


def tokens_as_targets(tokens: torch.Tensor) -> torch.Tensor:
    """(B, T) decoded tokens as teacher-forcing targets: everything after a row's first end
    token (0) becomes :data:`ptrnet.batching.IGNORE_INDEX`."""
    is_end = (tokens == 0).long()  # (B, T)
    after_end = is_end.cumsum(dim=1) - is_end > 0  # an end token earlier in the row
    return tokens.masked_fill(after_end, IGNORE_INDEX)


def reinforce_loss(
    model: torch.nn.Module,
    task: Task,
    batch: Batch,
    samples: int,
    generator: torch.Generator,
    log_likelihood: Callable[[torch.nn.Module, Batch], torch.Tensor],
) -> tuple[torch.Tensor, float]:
    """The REINFORCE loss of one batch (module docstring) and the samples' mean cost.

    Args:
        batch: B instances (targets, if any, are ignored).
        samples: K outputs per instance.
        generator: draws the samples.
        log_likelihood: ``f(model, batch) -> (B*K,)`` differentiable log-likelihood of
            ``batch.targets`` under the task's rules (the training loop's masked loss).
    """
    rows = torch.arange(batch.size, device=batch.points.device).repeat_interleave(samples)
    repeated = Batch(batch.points[rows], batch.lengths[rows])  # (B*K, N, dim)
    was_training = model.training
    model.eval()
    with torch.no_grad():
        drawn = decode(model, task, repeated, "sample", constraints="task", generator=generator)
    model.train(was_training)
    cost = task.batch_cost(repeated.points, drawn.tokens, repeated.lengths)  # (B*K,)
    cost = cost.view(batch.size, samples).float()
    advantage = (cost - leave_one_out_baseline(cost)).view(-1)  # (B*K,)
    scored = Batch(repeated.points, repeated.lengths, tokens_as_targets(drawn.tokens))
    logp = log_likelihood(model, scored)  # (B*K,)
    return (advantage * logp).mean(), float(cost.mean())
