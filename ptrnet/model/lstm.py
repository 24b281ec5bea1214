"""Calling an ``nn.LSTM`` under CPU bf16 autocast, also where the CPU has no bf16 LSTM kernel.

Under ``torch.autocast("cpu", dtype=torch.bfloat16)`` torch runs ``nn.LSTM`` through oneDNN,
which builds a bf16 LSTM only on some CPUs: on an AVX2-only AMD EPYC it raises "could not
create a primitive descriptor for the LSTM forward propagation primitive". There
:func:`run_lstm` runs the LSTM in float32 with autocast off, and the rest of the model (the
pointer's projections) stays in bf16. Whether the kernel exists is probed once per process with
a one-step LSTM, forward and backward, rather than guessed from CPU flags.
"""

from __future__ import annotations

import functools

import torch
from torch import nn

State = tuple[torch.Tensor, torch.Tensor]  # LSTM (h, c), each (layers, B, d)


@functools.cache
def cpu_bf16_lstm_works() -> bool:
    """Whether this CPU runs ``nn.LSTM`` forward and backward under bf16 autocast."""
    lstm = nn.LSTM(1, 1, batch_first=True)
    x = torch.zeros(1, 1, 1, requires_grad=True)
    try:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out, _ = lstm(x)
        out.float().sum().backward()
    except RuntimeError:
        return False
    return True


def bf16_lstm_fallback(x: torch.Tensor) -> bool:
    """Whether an LSTM over ``x`` must leave bf16 autocast (see the module docstring)."""
    return (
        x.device.type == "cpu"
        and torch.is_autocast_enabled("cpu")
        and torch.get_autocast_dtype("cpu") == torch.bfloat16
        and not cpu_bf16_lstm_works()
    )


def run_lstm(
    lstm: nn.LSTM, x: torch.Tensor, state: State | None = None
) -> tuple[torch.Tensor, State]:
    """``lstm(x, state)``: (B, T, dim) -> outputs (B, T, d) and final (h, c).

    The same call as ``lstm(x, state)``, except under CPU bf16 autocast on a CPU without a bf16
    LSTM kernel, where it runs in float32 and returns float32 tensors.
    """
    if not bf16_lstm_fallback(x):
        return lstm(x, state)
    with torch.autocast("cpu", enabled=False):
        if state is not None:
            state = (state[0].float(), state[1].float())
        return lstm(x.float(), state)
