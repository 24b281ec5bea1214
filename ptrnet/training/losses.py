"""The training losses: the teacher-forced cross-entropy, plain or masked by the task's rules
(Sec. 4), and the REINFORCE objective.

Teacher forcing: the model returns raw logits (B, T, n+1) and the only softmax is inside
``F.cross_entropy`` (never a second one); target pads (-100) are ignored. With a loss mask
task (``train_constraints`` ``task``), that softmax runs over the tokens the task's rules allow
at each step, as a constrained decoder's.

REINFORCE (``objective="reinforce"``): policy-gradient fine-tuning on the task's cost, beyond
the paper. The paper trains only by imitation. Once a model imitates well, its remaining error
is what imitation does not see: which of its own mistakes cost most. REINFORCE (Williams 1992)
trains on the cost of the model's own outputs instead, as Bello et al. (2016) and Kool et al.
(2019) did for TSP, and needs no labels.

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

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ptrnet.batching import IGNORE_INDEX, Batch
from ptrnet.decoding.decode import decode
from ptrnet.decoding.likelihood import masked_sequence_log_likelihood
from ptrnet.decoding.options import DecodeOptions
from ptrnet.runs.config import TrainConfig
from ptrnet.tasks import Stream, Task, get_task
from ptrnet.tasks.constraints import teacher_forcing_mask

# REINFORCE samples valid outputs only: the cost is defined on them (TSP tours).
SAMPLE_TOURS = DecodeOptions(strategy="sample", constraints="task")


def teacher_forced_loss(
    model: nn.Module, batch: Batch, reduction: str = "mean", mask_task: Task | None = None
) -> torch.Tensor:
    """Cross-entropy of ``batch.targets`` (B, T) under teacher forcing, pads ignored.

    ``reduction="mean"`` averages over real target tokens; ``"sum"`` sums them; ``"none"``
    returns the (B*T,) per-token losses, 0 at pads. With ``mask_task``, each step's softmax runs
    only over the tokens that task allows after the label prefix
    (:func:`ptrnet.tasks.constraints.teacher_forcing_mask`, which raises ValueError on a label
    that breaks the task's rules); without, over all of them.
    """
    logits = model(batch.points, batch.lengths, batch.targets)  # (B, T, V) raw logits
    if mask_task is not None:
        allowed = teacher_forcing_mask(mask_task, batch.lengths, batch.targets)  # (B, T, n+1)
        extra = logits.shape[-1] - allowed.shape[-1]  # baselines: V = max_n + 1 >= n + 1
        allowed = F.pad(allowed, (0, extra), value=False)
        logits = logits.masked_fill(~allowed, float("-inf"))
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]),
        batch.targets.reshape(-1),
        ignore_index=IGNORE_INDEX,
        reduction=reduction,
    )


def loss_mask_task(cfg: TrainConfig) -> Task | None:
    """The task whose rules mask the training loss, or None (``train_constraints`` none and
    the likelihood objective; ``reinforce`` samples and scores under the rules always)."""
    masked = cfg.train_constraints == "task" or cfg.objective == "reinforce"
    return get_task(cfg.task) if masked else None


def sample_generator(seed: int, step: int, device: torch.device | str = "cpu") -> torch.Generator:
    """The torch generator on ``device`` (where the sampled probabilities live) that draws step
    ``step``'s samples (a pure function of both on a given device)."""
    state = np.random.SeedSequence([seed, Stream.SAMPLING, step]).generate_state(1)[0]
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
    scorer: torch.nn.Module | None = None,
) -> tuple[torch.Tensor, float]:
    """The REINFORCE loss of one batch (module docstring) and the samples' mean cost.

    The samples are re-scored by :func:`ptrnet.decoding.likelihood.masked_sequence_log_likelihood`
    under the task's rules, the distribution they were drawn from.

    Args:
        model: the bare model the samples are drawn from.
        batch: B instances (targets, if any, are ignored).
        samples: K outputs per instance.
        generator: draws the samples.
        scorer: the module the differentiable re-scoring runs through (default ``model``);
            under DistributedDataParallel the wrapped model, so gradients pass its hooks.
    """
    rows = torch.arange(batch.size, device=batch.points.device).repeat_interleave(samples)
    repeated = Batch(batch.points[rows], batch.lengths[rows])  # (B*K, N, dim)
    was_training = model.training
    model.eval()
    with torch.no_grad():
        drawn = decode(model, task, repeated, SAMPLE_TOURS, generator=generator)
    model.train(was_training)
    cost = task.batch_cost(repeated.points, drawn.tokens, repeated.lengths)  # (B*K,)
    cost = cost.view(batch.size, samples).float()
    advantage = (cost - leave_one_out_baseline(cost)).view(-1)  # (B*K,)
    targets = tokens_as_targets(drawn.tokens)
    scorer = model if scorer is None else scorer
    logp = masked_sequence_log_likelihood(
        scorer, task, repeated.points, repeated.lengths, targets, "task"
    )  # (B*K,), differentiable
    return (advantage * logp).mean(), float(cost.mean())
