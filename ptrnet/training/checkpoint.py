"""Checkpoints: one safetensors file holding the weights, the full configuration and, for resuming,
the optimiser and RNG state.

Layout of ``NAME.safetensors``:

* tensors ``model.<param>``: the model's state dict;
* tensors ``optim.<index>.<key>``: the optimiser's per-parameter state (absent in weights-only
  checkpoints), and ``rng.torch``: the torch CPU generator state;
* tensors ``ema.<key>``: the moving average of the weights (:mod:`ptrnet.training.ema`), in
  resumable checkpoints of runs that keep one;
* header metadata ``ptrnet``: JSON ``{"format", "config": RunConfig.to_dict(), "step", "info",
  "optimizer": {"param_groups", "scalars"}}``; ``config`` alone rebuilds the model.

One file makes a checkpoint atomic: it is written to a temporary file in the same directory and
moved over the old one with :func:`os.replace`, so a reader (or a crash) never sees half of it.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass, field
from typing import Any

import torch
from safetensors.torch import load as load_tensors
from safetensors.torch import save as save_tensors
from torch import nn

from ptrnet.io.atomic import atomic_write_bytes
from ptrnet.io.errors import InputError
from ptrnet.training.config import RunConfig

FORMAT = "ptrnet-checkpoint-1"


class CheckpointError(InputError):
    """A checkpoint that cannot be read; ``str`` is one line, ``FILE: problem``."""

    def __init__(self, path: str | os.PathLike[str], problem: str) -> None:
        super().__init__(path, None, problem)


@dataclass(frozen=True)
class Checkpoint:
    """A loaded checkpoint.

    Attributes:
        config: the run's configuration.
        step: optimiser steps taken when it was written.
        model_state: the model's state dict.
        info: free JSON (validation metrics, best-so-far record).
        optimizer_state: ``optimizer.state_dict()`` form, or None in a weights-only file.
        rng_state: torch CPU generator state, or None.
        ema_state: the weights' moving average (:func:`ptrnet.training.ema.ema_state`), or
            None.
    """

    config: RunConfig
    step: int
    model_state: dict[str, torch.Tensor]
    info: dict[str, Any] = field(default_factory=dict)
    optimizer_state: dict[str, Any] | None = None
    rng_state: torch.Tensor | None = None
    ema_state: dict[str, torch.Tensor] | None = None


def save_checkpoint(
    path: str | os.PathLike[str],
    config: RunConfig,
    step: int,
    model: nn.Module,
    optimizer: torch.optim.Optimizer | None = None,
    info: dict[str, Any] | None = None,
    ema_state: dict[str, torch.Tensor] | None = None,
) -> None:
    """Write a checkpoint atomically; with ``optimizer`` (and ``ema_state``, if the run keeps a
    moving average) it also holds what resuming needs."""
    tensors = {f"model.{k}": v.detach().contiguous() for k, v in model.state_dict().items()}
    tensors.update({f"ema.{k}": v for k, v in (ema_state or {}).items()})
    meta: dict[str, Any] = {
        "format": FORMAT,
        "config": config.to_dict(),
        "step": step,
        "info": info or {},
    }
    if optimizer is not None:
        optim_tensors, meta["optimizer"] = _flatten_optimizer(optimizer.state_dict())
        tensors.update(optim_tensors)
        tensors["rng.torch"] = torch.get_rng_state()
    data = save_tensors(tensors, metadata={"ptrnet": json.dumps(meta)})
    atomic_write_bytes(path, data)


def load_checkpoint(path: str | os.PathLike[str]) -> Checkpoint:
    """Read a checkpoint written by :func:`save_checkpoint`.

    Raises:
        CheckpointError: missing or unreadable file, not a ptrnet checkpoint, or a config that
            no longer validates.
    """
    meta, tensors = read_checkpoint_file(path)
    if meta.get("format") != FORMAT:
        raise CheckpointError(path, f"unknown checkpoint format {meta.get('format')!r}")
    try:
        config = RunConfig.from_dict(meta["config"])
    except (ValueError, TypeError) as err:
        raise CheckpointError(path, f"invalid configuration: {err}") from None
    model_state = {k[6:]: v for k, v in tensors.items() if k.startswith("model.")}
    optimizer_state = None
    if "optimizer" in meta:
        optimizer_state = _unflatten_optimizer(tensors, meta["optimizer"])
    ema = {k[4:]: v for k, v in tensors.items() if k.startswith("ema.")}
    return Checkpoint(
        config,
        int(meta["step"]),
        model_state,
        meta.get("info", {}),
        optimizer_state,
        tensors.get("rng.torch"),
        ema or None,
    )


def read_checkpoint_file(
    path: str | os.PathLike[str],
) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """The ``ptrnet`` metadata (JSON) and the tensors of a safetensors file, whatever format it
    declares (the copy task's checkpoints, :mod:`ptrnet.text.checkpoint`, read theirs here too).

    Raises:
        CheckpointError: a missing or unreadable file, or one without ptrnet metadata.
    """
    try:
        with open(path, "rb") as stream:
            data = stream.read()
        meta = json.loads(_header(data)["__metadata__"]["ptrnet"])
        tensors = load_tensors(data)
    except OSError as err:
        raise CheckpointError(path, f"cannot read checkpoint: {err.strerror or err}") from None
    except (ValueError, KeyError, TypeError, struct.error) as err:
        raise CheckpointError(path, f"not a ptrnet checkpoint ({err})") from None
    return meta, tensors


def _header(data: bytes) -> dict[str, Any]:
    """The JSON header of a safetensors byte string (8-byte little-endian size, then JSON)."""
    (size,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8 : 8 + size])


def _flatten_optimizer(state: dict[str, Any]) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Split ``optimizer.state_dict()`` into tensors and JSON (safetensors holds tensors only)."""
    tensors, scalars = {}, {}
    for index, entries in state["state"].items():
        for key, value in entries.items():
            if isinstance(value, torch.Tensor):
                tensors[f"optim.{index}.{key}"] = value.contiguous()
            else:
                scalars[f"{index}.{key}"] = value
    return tensors, {"param_groups": state["param_groups"], "scalars": scalars}


def _unflatten_optimizer(tensors: dict[str, torch.Tensor], meta: dict[str, Any]) -> dict[str, Any]:
    """Inverse of :func:`_flatten_optimizer`."""
    state: dict[int, dict[str, Any]] = {}
    items = [(k[6:], v) for k, v in tensors.items() if k.startswith("optim.")]
    for name, value in [*items, *meta["scalars"].items()]:
        index, key = name.split(".", 1)
        state.setdefault(int(index), {})[key] = value
    return {"state": state, "param_groups": meta["param_groups"]}
