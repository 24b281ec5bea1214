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

1. sample K outputs per instance from the model under the task's rules (no gradient); with the
   ``pomo`` baseline, one output from each of the K = N starts instead (N = the batch's longest
   instance; N - 1, one from each customer, where the first input is a depot that keeps its
   place; :mod:`ptrnet.decoding.multistart`);
2. cost c (B, K) of each (:meth:`ptrnet.tasks.base.Task.batch_cost`; TSP: tour length);
3. baseline b (B, K), the choice of ``TrainConfig.baseline`` (:mod:`ptrnet.training.baselines`;
   by default the mean cost of the instance's other K - 1 samples), which does not depend on
   the sample it is compared with, so the gradient stays unbiased;
4. re-score the samples with teacher forcing under the same rules (one parallel pass, with
   gradient): log p (B, K);
5. loss = mean((c - b) * log p): its gradient is the policy gradient of the mean cost.

A forced first choice (a routing instance under ``pomo``: run s serves customer s first) adds
log 1 = 0, so POMO never trains the choice a single greedy run makes at its first step.
``learn_opening`` trains it too: with every start's cost c_s in hand, the expected cost over
the network's own first choice pi(s) is known exactly, and the loss gains
mean over instances of sum_s pi(s) (c_s - b_s) (:func:`opening_loss`), whose gradient is
that of the expected cost through pi, the later steps' policy gradient unchanged. The costs
are the sampled runs' (``opening_rollouts`` ``sampled``) or those of one more, greedy, run
from each start (``greedy``): at n = 50 one sample's cost ranks the starts of an instance
only weakly as greedy runs rank them (correlation across starts 0.27, two samples' 0.18).

The samples are drawn from a generator seeded by ``(seed, step)``, so a resumed run draws the
same samples as an uninterrupted one.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ptrnet.datasets.batching import IGNORE_INDEX, Batch
from ptrnet.decoding.decode import DecodeResult, decode
from ptrnet.decoding.forced_start import ForcedStart
from ptrnet.decoding.likelihood import masked_sequence_log_likelihood
from ptrnet.decoding.multistart import Starts, start_layout, start_readers
from ptrnet.decoding.options import DecodeOptions
from ptrnet.runs.config import TrainConfig
from ptrnet.tasks import Stream, Task, get_task
from ptrnet.tasks.constraints import teacher_forcing_mask
from ptrnet.training.baselines import GREEDY_TOURS, Baseline

# REINFORCE samples valid outputs only: the cost is defined on them (TSP tours).
SAMPLE_TOURS = DecodeOptions(strategy="sample", constraints="task")


def teacher_forced_loss(
    model: nn.Module,
    batch: Batch,
    reduction: str = "mean",
    mask_task: Task | None = None,
    active: torch.Tensor | None = None,
    run_all: bool = False,
    labels: torch.Tensor | None = None,
) -> torch.Tensor:
    """Cross-entropy of ``batch.targets`` (B, T) under teacher forcing, pads ignored.

    ``reduction="mean"`` averages over real target tokens; ``"sum"`` sums them; ``"none"``
    returns the (B*T,) per-token losses, 0 at pads. With ``mask_task``, each step's softmax runs
    only over the tokens that task allows after the label prefix
    (:func:`ptrnet.tasks.constraints.teacher_forcing_mask`, which raises ValueError on a label
    that breaks the task's rules); without, over all of them. With ``active`` (B, T) bool (from
    :func:`sample_label_steps`; a model whose ``forward`` takes it, the heavy decoder), only
    those steps are run and scored, as if every other target were a pad; with ``run_all`` too
    (any model: a recurrent decoder must run every step), all run and those are scored.
    ``labels`` (B, T): score the steps against these instead of ``batch.targets``, which then
    only feed the model its prefixes (DAgger: the model's own outputs in, the expert's moves
    out; :mod:`ptrnet.training.dagger`).
    """
    if active is not None and not run_all:
        logits = model(batch.points, batch.lengths, batch.targets, active)  # (B, T, V)
    else:
        logits = model(batch.points, batch.lengths, batch.targets)  # (B, T, V) raw logits
    targets = batch.targets if labels is None else labels
    if active is not None:
        targets = targets.masked_fill(~active, IGNORE_INDEX)
    if mask_task is not None:
        allowed = teacher_forcing_mask(
            mask_task, batch.lengths, batch.targets, batch.points
        )  # (B, T, n+1)
        extra = logits.shape[-1] - allowed.shape[-1]  # baselines: V = max_n + 1 >= n + 1
        allowed = F.pad(allowed, (0, extra), value=False)
        logits = logits.masked_fill(~allowed, float("-inf"))
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]),
        targets.reshape(-1),
        ignore_index=IGNORE_INDEX,
        reduction=reduction,
    )


def sample_label_steps(
    targets: torch.Tensor, k: int, generator: torch.Generator, shared: bool = False
) -> torch.Tensor:
    """(B, T) targets -> (B, T) bool: ``k`` of each row's real (non-pad) steps, drawn uniformly
    without replacement by ``generator`` (all of them where a row has no more than ``k``).

    Sub-sampled teacher forcing for the heavy decoder (``TrainConfig.label_steps``): its steps
    do not share a recurrence, so a training step can run k steps of many labels instead of
    every step of few; LEHD (Luo et al. 2023) likewise trains on random parts of each label.

    ``shared`` (``TrainConfig.shared_label_steps``): one draw of k distances from the end of a
    label, in 0..T-1, taken by every row: row b runs steps ``L_b - 1 - distance`` (L_b its real
    steps) where that is a step, so a row shorter than a distance runs fewer than k. Rows of
    one length then have the same inputs left at each drawn step, and the heavy decoder runs
    each distance as one attention pass over them all.
    """
    return sample_steps(targets != IGNORE_INDEX, k, generator, shared)


def sample_steps(
    eligible: torch.Tensor, k: int, generator: torch.Generator, shared: bool = False
) -> torch.Tensor:
    """(B, T) bool eligible steps -> (B, T) bool: ``k`` of each row's eligible steps, drawn
    uniformly without replacement by ``generator`` (all of them where a row has no more).

    ``shared``: one draw of k distances from a row's last eligible step (its eligible steps
    counted from the end), among as many distances as the row with the most eligible steps
    has, taken by every row that has them (:func:`sample_label_steps`'s label steps, the
    choices of a DAgger step in :mod:`ptrnet.training.dagger`).
    """
    if shared:
        span = int(eligible.sum(dim=1).max())  # distances 0 .. span - 1
        if not span:
            return eligible
        keys = torch.rand(span, generator=generator, device=generator.device)
        drawn = (keys.argsort().argsort() < k).to(eligible.device)  # (span,): distance drawn
        distance = eligible.flip(1).long().cumsum(dim=1).flip(1) - 1  # (B, T), 0 at the last
        return eligible & drawn[distance.clamp(0, span - 1)]
    keys = torch.rand(eligible.shape, generator=generator, device=generator.device)
    keys = keys.to(eligible.device).masked_fill(~eligible, 2.0)  # the others sort last
    rank = keys.argsort(dim=1).argsort(dim=1)  # (B, T): each step's place in its row's draw
    return eligible & (rank < k)


def label_step_mask(
    k: int, seed: int, step: int, targets: torch.Tensor, shared: bool = False
) -> torch.Tensor | None:
    """The label steps training step ``step`` of a run seeded ``seed`` teacher-forces with
    ``TrainConfig.label_steps`` = ``k`` and ``shared_label_steps`` = ``shared``: None (every
    step) for k = 0, else :func:`sample_label_steps` drawn from the step's own generator
    (``Stream.LABEL_STEPS``), so a resumed run draws the same steps."""
    if not k:
        return None
    generator = sample_generator(seed, step, stream=Stream.LABEL_STEPS)
    return sample_label_steps(targets, k, generator, shared)


def loss_mask_task(cfg: TrainConfig) -> Task | None:
    """The task whose rules mask the training loss, or None (``train_constraints`` none and
    the likelihood objective; ``reinforce`` samples and scores under the rules always)."""
    masked = cfg.train_constraints == "task" or cfg.objective == "reinforce"
    return get_task(cfg.task) if masked else None


def sample_generator(
    seed: int, step: int, device: torch.device | str = "cpu", stream: Stream = Stream.SAMPLING
) -> torch.Generator:
    """The torch generator on ``device`` (where the sampled probabilities live) that draws step
    ``step``'s samples (a pure function of the arguments on a given device); ``stream``:
    REINFORCE's samples, or the sub-sampled label steps (``Stream.LABEL_STEPS``)."""
    state = np.random.SeedSequence([seed, stream, step]).generate_state(1)[0]
    return torch.Generator(device).manual_seed(int(state))


def tokens_as_targets(tokens: torch.Tensor) -> torch.Tensor:
    """(B, T) decoded tokens as teacher-forcing targets: everything after a row's first end
    token (0) becomes :data:`ptrnet.datasets.batching.IGNORE_INDEX`."""
    is_end = (tokens == 0).long()  # (B, T)
    after_end = is_end.cumsum(dim=1) - is_end > 0  # an end token earlier in the row
    return tokens.masked_fill(after_end, IGNORE_INDEX)


def reinforce_loss(
    model: torch.nn.Module,
    task: Task,
    batch: Batch,
    samples: int,
    generator: torch.Generator,
    *,
    scorer: torch.nn.Module | None = None,
    baseline: Baseline | None = None,
    opening: str | None = None,
) -> tuple[torch.Tensor, float]:
    """The REINFORCE loss of one batch (module docstring) and the samples' mean cost.

    The samples are re-scored by :func:`ptrnet.decoding.likelihood.masked_sequence_log_likelihood`
    under the task's rules, the distribution they were drawn from.

    Args:
        model: the bare model the samples are drawn from.
        batch: B instances (targets, if any, are ignored).
        samples: K outputs per instance (ignored by a multistart baseline: one per start).
        generator: draws the samples.
        scorer: the module the differentiable re-scoring runs through (default ``model``);
            under DistributedDataParallel the wrapped model, so gradients pass its hooks.
        baseline: the cost each sample is compared with; None = leave-one-out.
        opening: also train the first choice that a multistart baseline forces
            (:func:`opening_loss`), on the costs of the ``sampled`` runs or of a ``greedy``
            run from each start (one more decoding, without gradient: the costs a greedy
            decoder meets, without the samples' noise); None: not. Needs forced starts (a
            task whose first input keeps its place, a multistart baseline).
    """
    baseline = baseline or Baseline()
    scorer = model if scorer is None else scorer
    sampler, scorer, repeated = sampled_rows(
        model, scorer, task, batch, samples, baseline.multistart
    )
    samples = repeated.size // batch.size
    drawn = drawn_in_eval(model, sampler, task, repeated, SAMPLE_TOURS, generator)
    cost = task.batch_cost(repeated.points, drawn.tokens, repeated.lengths)  # (B*K,)
    cost = cost.view(batch.size, samples).float()
    advantage = (cost - baseline.values(cost, batch)).view(-1)  # (B*K,)
    targets = tokens_as_targets(drawn.tokens)
    if opening is None:
        logp = masked_sequence_log_likelihood(
            scorer, task, repeated.points, repeated.lengths, targets, "task"
        )  # (B*K,), differentiable
        return (advantage * logp).mean(), float(cost.mean())
    if not isinstance(scorer, ForcedStart):
        raise ValueError(
            "learning the opening needs forced starts: a multistart baseline on a task "
            "whose first input keeps its place"
        )
    # Scored unforced: step 0 is the network's own first choice, the later steps as forced.
    steps = masked_sequence_log_likelihood(
        scorer.model,
        task,
        repeated.points,
        repeated.lengths,
        targets,
        "task",
        per_step=True,
    )  # (B*K, T), differentiable
    later = (advantage * steps[:, 1:].sum(dim=1)).mean()
    if opening == "greedy":
        advantage = greedy_advantage(model, sampler, task, repeated, batch.size)
    first = opening_loss(steps[:, 0], advantage, scorer.openings, batch.size)
    return later + first, float(cost.mean())


def greedy_advantage(
    model: torch.nn.Module, sampler: torch.nn.Module, task: Task, rows: Batch, instances: int
) -> torch.Tensor:
    """(B*S,) each row's greedy cost (``sampler``, forced to the row's opening, decoding
    greedily) minus the mean over its instance's S rows; no gradient."""
    drawn = drawn_in_eval(model, sampler, task, rows, GREEDY_TOURS)
    cost = task.batch_cost(rows.points, drawn.tokens, rows.lengths).float().view(instances, -1)
    return (cost - cost.mean(dim=1, keepdim=True)).view(-1)


def drawn_in_eval(
    model: torch.nn.Module,
    sampler: torch.nn.Module,
    task: Task,
    rows: Batch,
    options: DecodeOptions,
    generator: torch.Generator | None = None,
) -> DecodeResult:
    """``decode`` of ``rows`` by ``sampler`` (which reads ``model``) without gradient, with
    ``model`` in eval mode for the decoding and back in its own mode after."""
    was_training = model.training
    model.eval()
    with torch.no_grad():
        drawn = decode(sampler, task, rows, options, generator=generator)
    model.train(was_training)
    return drawn


def opening_loss(
    first_logp: torch.Tensor, advantage: torch.Tensor, openings: torch.Tensor, instances: int
) -> torch.Tensor:
    """The mean over ``instances`` of sum_s pi(s) (c_s - b_s): each of the instance's S runs
    (instance-major rows) forced to open with ``openings`` (B*S,), pi(s) = exp(``first_logp``)
    (B*S,) the network's probability of that first choice, ``advantage`` (B*S,) the run's
    c - b (constant). A start a smaller instance repeats (mixed sizes) counts once: each copy
    weighs 1 / its repeats. The gradient is exactly that of the expected cost over the first
    choice, given each start's cost (a sampled run's or a greedy run's)."""
    pi = first_logp.exp().view(instances, -1)  # (B, S)
    opened = openings.view(instances, -1)
    repeats = (opened[:, :, None] == opened[:, None, :]).sum(dim=2)  # (B, S)
    weighted = pi * advantage.detach().view(instances, -1) / repeats
    return weighted.sum(dim=1).mean()


def sampled_rows(
    model: torch.nn.Module,
    scorer: torch.nn.Module,
    task: Task,
    batch: Batch,
    samples: int,
    multistart: bool,
) -> tuple[torch.nn.Module, torch.nn.Module, Batch]:
    """The B * K instances to sample from, instance-major (each instance ``samples`` times, or
    with ``multistart`` once per start, :func:`ptrnet.decoding.multistart.start_layout`: K = N
    rotations, or N - 1 readings as given, each forced to its own first input, where the first
    input keeps its place), and the sampler and scorer that read them: for a set encoder, each
    instance encoded once (:func:`ptrnet.decoding.multistart.reordered`)."""
    width = batch.points.shape[1]
    if multistart:
        starts = start_layout(task, batch)
    else:
        order = torch.arange(width, device=batch.points.device).repeat(batch.size * samples, 1)
        starts = Starts(order, None, samples)
    sampler, scorer, repeated = start_readers(model, batch, starts, scorer)
    return sampler, scorer, repeated
