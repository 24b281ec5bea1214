"""Numeric precision for training: bf16 autocast where the hardware runs it natively; on a CUDA GPU
without bf16, fp16 autocast with a gradient scaler; else fp32.

``precision`` is one of :data:`PRECISIONS`:

* ``fp32``: plain float32.
* ``bf16``: ``torch.autocast`` with bfloat16 -- matmuls and LSTMs in bf16, float32 master
  weights, optimiser state and loss. The model keeps its softmax inputs and the pointer's
  elementwise part in float32 (:mod:`ptrnet.model.attention`), so no loss scaling is needed.
  On a CPU whose oneDNN has no bf16 LSTM (AVX2-only CPUs), the LSTMs stay in float32
  (:mod:`ptrnet.model.lstm`).
* ``fp16``: ``torch.autocast`` with float16, CUDA only. float16's narrow exponent range makes
  small gradients underflow, so the loss is scaled (``torch.amp.GradScaler``) and the gradients
  unscaled before clipping.
* ``auto``: ``bf16`` on a device with native bf16 matrix arithmetic -- a CUDA GPU that reports
  bf16 support, or a CPU with the ``avx512_bf16`` or ``amx_bf16`` instruction set extension
  (bf16 on other CPUs is emulated and slower than fp32) --, ``fp16`` on a CUDA GPU without bf16,
  and ``fp32`` everywhere else. One exception: on a CPU, a model with attention layers (the
  Transformer encoder, hence the light, route and heavy decoders) trains in ``fp32``, because
  torch's CPU attention kernels are slower in bf16 than in fp32 (their backward about ten
  times; a whole step 1.4-2.5 times, benchmarks/bench_precision.py), while the LSTM models
  train 1.4-1.6 times faster in bf16. :func:`amp_plan` is that rule as a pure function.

benchmarks/bench_time_to_quality.py compares the decoded quality of both under one training
budget (docs/speed.md). Importing this module does not import torch (the CLI reads
:data:`PRECISIONS`).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ptrnet.quoting import quote

if TYPE_CHECKING:
    import torch

PRECISIONS = ("auto", "fp32", "bf16", "fp16")
CPU_BF16_FLAGS = ("avx512_bf16", "amx_bf16")


@functools.cache
def cpu_flags() -> frozenset[str]:
    """The CPU feature flags the Linux kernel reports (empty where /proc/cpuinfo is missing)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as stream:
            for line in stream:
                if line.startswith("flags"):
                    return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return frozenset()


def native_bf16(device: torch.device | str) -> bool:
    """Whether ``device`` multiplies bf16 matrices natively (see module docstring)."""
    import torch

    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    if device.type == "cpu":
        return any(flag in cpu_flags() for flag in CPU_BF16_FLAGS)
    return False


@dataclass(frozen=True)
class AmpPlan:
    """How a training step runs: ``precision`` (``fp32``, ``bf16`` or ``fp16``) and whether the
    loss goes through a gradient scaler (fp16 only)."""

    precision: str
    grad_scaler: bool


def amp_plan(
    precision: str, device_type: str, bf16_native: bool, attention: bool = False
) -> AmpPlan:
    """The :class:`AmpPlan` for ``precision`` on a device of type ``device_type`` (``cpu``,
    ``cuda``, ...) that does (``bf16_native``) or does not compute bf16 natively, for a model
    with (``attention``) or without attention layers.

    Raises:
        ValueError: ``precision`` is not one of :data:`PRECISIONS`, or ``fp16`` off CUDA.
    """
    if precision not in PRECISIONS:
        raise ValueError(
            f"unknown precision {quote(precision)}; choose from {', '.join(PRECISIONS)}"
        )
    if precision == "fp16" and device_type != "cuda":
        raise ValueError(f"precision fp16 needs a CUDA device, not {device_type}; use bf16 or fp32")
    if precision == "auto":
        fallback = "fp16" if device_type == "cuda" else "fp32"
        slower = attention and device_type == "cpu"  # CPU attention kernels: slower in bf16
        precision = "bf16" if bf16_native and not slower else fallback
    return AmpPlan(precision, precision == "fp16")


def has_attention(model: torch.nn.Module) -> bool:
    """Whether ``model`` (or the module a DDP wrapper holds) has attention layers: what
    :func:`amp_plan` calls ``attention``."""
    import torch

    return any(isinstance(m, torch.nn.MultiheadAttention) for m in model.modules())


def resolve_precision(
    precision: str, device: torch.device | str = "cpu", attention: bool = False
) -> str:
    """``fp32``, ``bf16`` or ``fp16``: ``precision`` itself, or for ``auto`` the choice for
    ``device`` and a model with or without ``attention`` layers (:func:`amp_plan`).

    Raises:
        ValueError: ``precision`` is not one of :data:`PRECISIONS`, or ``fp16`` off CUDA.
    """
    import torch

    device = torch.device(device)
    native = precision == "auto" and native_bf16(device)
    return amp_plan(precision, device.type, native, attention).precision


DTYPES = {"bf16": "bfloat16", "fp16": "float16"}


@contextlib.contextmanager
def autocast(
    precision: str, device: torch.device | str = "cpu", attention: bool = False
) -> Iterator[None]:
    """Run the enclosed forward pass in ``precision`` (``auto`` is resolved for ``device`` and a
    model with or without ``attention`` layers)."""
    import torch

    name = DTYPES.get(resolve_precision(precision, device, attention))
    dtype = None if name is None else getattr(torch, name)
    with torch.autocast(torch.device(device).type, dtype=dtype, enabled=dtype is not None):
        yield


def grad_scaler(precision: str, device: torch.device | str) -> torch.amp.GradScaler | None:
    """A gradient scaler where :func:`amp_plan` asks for one (fp16 on CUDA), else None."""
    import torch

    if resolve_precision(precision, device) != "fp16":
        return None
    return torch.amp.GradScaler(torch.device(device).type)
