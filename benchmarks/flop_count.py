"""FLOPs of one training step's forward and backward pass, counted by
``torch.utils.flop_counter.FlopCounterMode`` plus the matrix products it does not know.

The convention is FlopCounterMode's: 2 FLOPs per multiply-add of a matrix product (mm, addmm,
bmm, baddbmm, convolution, scaled dot-product attention), nothing for elementwise work (gate
nonlinearities, the attention's tanh, softmax, adds, the optimiser). On a CPU three products
of the Ptr-Net run through ops FlopCounterMode counts as 0, so :data:`EXTRA_FLOPS` adds them:

* ``nn.LSTM``: torch runs oneDNN's fused kernel (``aten.mkldnn_rnn_layer`` and its backward).
  Forward, per layer, time step and row: the four gates' input and recurrent products,
  2 * 4h * (in + h) FLOPs (``in`` the layer's input width, ``h`` its hidden width). Backward:
  twice that, one product of each size for the inputs' gradients (x_t and h_(t-1)) and one
  for the weights' (the fused kernel computes all four). torch's unfused LSTM (oneDNN off),
  whose per-step products FlopCounterMode does see, gives the same forward count and a
  backward smaller by the gradients autograd skips (of inputs that need none, and of the zero
  initial state): tests/test_training_compute.py checks both.
* ``aten.mv``: the pointer's v^T tanh(...) product (:mod:`ptrnet.model.attention`), 2 m k.
* ``aten.baddbmm_``: the in-place batched product of that attention's backward.
"""

from __future__ import annotations

import functools
import math
import statistics

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from ptrnet.datasets.batching import Batch, collate
from ptrnet.datasets.generation import labelled_instance
from ptrnet.runs.config import TrainConfig
from ptrnet.tasks import Stream, Task, get_task
from ptrnet.tasks.base import SizeRange
from ptrnet.training.losses import label_step_mask, loss_mask_task, teacher_forced_loss

aten = torch.ops.aten


def lstm_layer_flops(input_shape, w_ih_shape, w_hh_shape, *args, **kwargs) -> int:
    """Forward FLOPs of one fused LSTM layer: input (T, B, in) or (B, T, in), weights
    (4h, in) and (4h, h) -> 2 * T * B * 4h * (in + h)."""
    gates, width = w_ih_shape
    return 2 * input_shape[0] * input_shape[1] * gates * (width + w_hh_shape[1])


def lstm_layer_backward_flops(input_shape, w_ih_shape, w_hh_shape, *args, **kwargs) -> int:
    """Backward FLOPs of one fused LSTM layer: twice its forward (module docstring)."""
    return 2 * lstm_layer_flops(input_shape, w_ih_shape, w_hh_shape)


def mv_flops(matrix_shape, vector_shape, *args, **kwargs) -> int:
    """(m, k) @ (k,) -> 2 m k."""
    return 2 * math.prod(matrix_shape)


def baddbmm_flops(self_shape, a_shape, b_shape, *args, **kwargs) -> int:
    """(b, m, k) @ (b, k, n) added in place -> 2 b m k n."""
    return 2 * math.prod(a_shape) * b_shape[-1]


EXTRA_FLOPS = {
    aten.mkldnn_rnn_layer: lstm_layer_flops,
    aten.mkldnn_rnn_layer_backward: lstm_layer_backward_flops,
    aten.mv: mv_flops,
    aten.baddbmm_: baddbmm_flops,
}


def count_flops(fn) -> int:
    """FLOPs of calling ``fn()`` (forward and any backward it runs), with :data:`EXTRA_FLOPS`."""
    with FlopCounterMode(display=False, custom_mapping=EXTRA_FLOPS) as counter:
        fn()
    return counter.get_total_flops()


def training_flops(
    model: nn.Module,
    batch: Batch,
    mask_task: Task | None = None,
    active: torch.Tensor | None = None,
) -> int:
    """FLOPs of one forward and backward pass of the teacher-forced loss on ``batch``
    (:func:`ptrnet.training.losses.teacher_forced_loss` with its ``mask_task`` and ``active``);
    the optimiser step is elementwise and not counted. Leaves gradients in ``model``."""
    model.zero_grad(set_to_none=True)
    return count_flops(
        lambda: teacher_forced_loss(model, batch, "mean", mask_task, active).backward()
    )


#: The capacity a model that reads one (``features="capacity"``) is counted at: a share of the
#: items' total weight in the middle of the bundled capacity model's training range (10%-50%).
COUNTED_CAPACITY = "30%"


@functools.cache
def size_batch(task_name: str, n: int, count: int, seed: int, capacity: bool = False) -> Batch:
    """``count`` labelled training-stream instances of exactly n points, as one batch; with
    ``capacity`` each states :data:`COUNTED_CAPACITY` and is labelled under it."""
    task, sizes = get_task(task_name), SizeRange(n, n)
    pairs = [labelled_instance(task, sizes, seed, i, stream=Stream.TRAIN) for i in range(count)]
    if capacity:
        stated = [task.with_capacity(p, COUNTED_CAPACITY) for p, _ in pairs]
        pairs = [(p, task.solve(p)) for p in stated]
    return collate([p for p, _ in pairs], [s for _, s in pairs])


def counted_fields(cfg: TrainConfig) -> tuple:
    """The fields of ``cfg`` that :func:`flops_per_example` reads (with the model, its seed and
    ``per_size``, they decide the count): two runs equal in them have the same count."""
    return (
        cfg.task,
        cfg.size_range,
        cfg.objective,
        cfg.train_constraints,
        cfg.label_steps,
        cfg.shared_label_steps,
    )


def reads_capacity(model: nn.Module) -> bool:
    """Whether ``model`` reads rows that state a capacity (its configuration's features)."""
    config = getattr(model, "config", None)
    return getattr(config, "features", "raw") == "capacity"


def flops_per_example(model: nn.Module, cfg: TrainConfig, per_size: int, seed: int) -> float:
    """Mean FLOPs of one training example of ``model`` trained as ``cfg`` says (its task, sizes,
    loss mask and label steps): a batch of ``per_size`` instances at every n of ``cfg``'s
    sizes, each batch's count divided by its rows, averaged over n (training draws n
    uniformly). Leaves ``model`` in training mode with gradients.

    Raises:
        ValueError: ``cfg`` trains by REINFORCE (its step also decodes samples; not counted).
    """
    if cfg.objective != "likelihood":
        raise ValueError(f"objective {cfg.objective} is not counted")
    model.train()
    mask, sizes, per_n = loss_mask_task(cfg), cfg.size_range, []
    for n in range(sizes.lo, sizes.hi + 1):
        batch = size_batch(cfg.task, n, per_size, seed, capacity=reads_capacity(model))
        active = label_step_mask(  # heavy decoder
            cfg.label_steps, seed, n, batch.targets, cfg.shared_label_steps
        )
        per_n.append(training_flops(model, batch, mask, active) / batch.size)
    return statistics.fmean(per_n)
