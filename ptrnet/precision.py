"""Numeric precision for training: bf16 autocast where the hardware runs it natively, else fp32.

``precision`` is one of :data:`PRECISIONS`:

* ``fp32``: plain float32.
* ``bf16``: ``torch.autocast`` with bfloat16 -- matmuls and LSTMs in bf16, float32 master
  weights, optimiser state and loss. The model keeps its softmax inputs and the pointer's
  elementwise part in float32 (:mod:`ptrnet.model.attention`), so no loss scaling is needed.
  On a CPU whose oneDNN has no bf16 LSTM (AVX2-only CPUs), the LSTMs stay in float32
  (:mod:`ptrnet.model.lstm`).
* ``auto``: ``bf16`` on a device with native bf16 matrix arithmetic -- a CUDA GPU that reports
  bf16 support, or a CPU with the ``avx512_bf16`` or ``amx_bf16`` instruction set extension
  (bf16 on other CPUs is emulated and slower than fp32) -- and ``fp32`` everywhere else.

benchmarks/bench_time_to_quality.py compares the decoded quality of both under one training
budget (docs/speed.md). Importing this module does not import torch (the CLI reads
:data:`PRECISIONS`).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

PRECISIONS = ("auto", "fp32", "bf16")
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


def resolve_precision(precision: str, device: torch.device | str = "cpu") -> str:
    """``fp32`` or ``bf16``: ``precision`` itself, or for ``auto`` the choice for ``device``.

    Raises:
        ValueError: ``precision`` is not one of :data:`PRECISIONS`.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; choose from {', '.join(PRECISIONS)}")
    if precision == "auto":
        return "bf16" if native_bf16(device) else "fp32"
    return precision


@contextlib.contextmanager
def autocast(precision: str, device: torch.device | str = "cpu") -> Iterator[None]:
    """Run the enclosed forward pass in ``precision`` (``auto`` is resolved for ``device``)."""
    import torch

    dtype = torch.bfloat16 if resolve_precision(precision, device) == "bf16" else None
    with torch.autocast(torch.device(device).type, dtype=dtype, enabled=dtype is not None):
        yield
