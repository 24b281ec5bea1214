"""Checkpoints: one safetensors file holding the weights, the full configuration and, for resuming,
the optimiser and RNG state.

Layout of ``NAME.safetensors``:

* tensors ``model.<param>``: the model's state dict;
* tensors ``optim.<index>.<key>``: the optimiser's per-parameter state (absent in weights-only
  checkpoints), and ``rng.torch``: the torch CPU generator state;
* tensors ``ema.<key>``: the moving average of the weights (:mod:`ptrnet.training.ema`), in
  resumable checkpoints of runs that keep one;
* tensors ``baseline.<key>``: the REINFORCE baseline's tensors (the rollout baseline's frozen
  policy and its held-out costs, :mod:`ptrnet.training.baselines`), in resumable checkpoints of
  REINFORCE runs;
* header metadata ``ptrnet``: JSON ``{"format", "config": RunConfig.to_dict(), "step", "info",
  "optimizer": {"param_groups", "scalars"}, "baseline", "checksum", "state_checksum"}``;
  ``config`` alone
  rebuilds the model; ``baseline`` is the REINFORCE baseline's JSON state (the moving average,
  the rollout's update count); ``checksum`` is the SHA-256 of the ``model.``, ``ema.`` and
  ``baseline.`` tensors (:func:`ptrnet.io.safetensors_header.tensor_digest`), and
  ``state_checksum``, in resumable checkpoints, that of the ``optim.`` and ``rng.`` tensors; both
  verified on load when present (older files lack them).

Loading trusts nothing in the file: the header is checked against the bytes
(:mod:`ptrnet.io.safetensors_header`), the metadata's types, the configuration's parameter
shapes against the tensors declared (:mod:`ptrnet.model.shapes`, before any weight is
allocated), the checksum, and the weights must be finite. Every failure is one
:class:`CheckpointError` line.

One file makes a checkpoint atomic: it is written to a temporary file in the same directory and
moved over the old one with :func:`os.replace`, so a reader (or a crash) never sees half of it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load as load_tensors
from safetensors.torch import save as save_tensors
from torch import nn

from ptrnet.io.atomic import atomic_write_bytes
from ptrnet.io.errors import InputError
from ptrnet.io.json_file import parse_json
from ptrnet.io.safetensors_header import MAX_HEADER_BYTES, HeaderError, read_header, tensor_digest
from ptrnet.io.text import read_regular_file
from ptrnet.model.shapes import state_shapes
from ptrnet.quoting import quote
from ptrnet.runs.config import RunConfig

FORMAT = "ptrnet-checkpoint-1"
# The copy task's checkpoints (ptrnet.text.checkpoint.FORMAT, a layer above this one).
COPY_FORMAT = "ptrnet-copy-1"
COPY_MODEL_HERE = (
    "a copy-task model (a pointer-generator over sentences), not a point-task one: run it "
    "with `ptrnet predict copy SENTENCE --model PATH` or ptrnet.text.evaluate.load(PATH)"
)
# The tensors the checksum covers and that must be finite.
DIGESTED = ("model.", "ema.", "baseline.")
# What resuming reads besides: covered by a second checksum, ``state_checksum`` (files written
# before it have none and are read as before).
STATE_DIGESTED = ("optim.", "rng.")
MAX_CHECKPOINT_BYTES = 2**32  # 4 GiB; the bundled checkpoints are under 5 MB


class CheckpointError(InputError):
    """A checkpoint that cannot be read; ``str`` is one line, ``FILE: problem``."""

    def __init__(self, path: str | os.PathLike[str], problem: str) -> None:
        super().__init__(path, None, problem)


class SentenceModelError(CheckpointError):
    """A sentence task's checkpoint (the copy task's pointer-generator) where a point task's
    was expected; ``task`` is the sentence task it was trained on."""

    def __init__(self, path: str | os.PathLike[str], task: str) -> None:
        super().__init__(path, COPY_MODEL_HERE)
        self.task = task


@dataclass(frozen=True)
class BaselineState:
    """What a REINFORCE baseline needs to continue exactly after a resume.

    Attributes:
        meta: JSON values (e.g. the moving average; a JSON object).
        tensors: named tensors (e.g. a frozen copy of the policy).
    """

    meta: dict[str, Any] = field(default_factory=dict)
    tensors: dict[str, torch.Tensor] = field(default_factory=dict)


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
        baseline_state: the REINFORCE baseline's state, or None (not a REINFORCE run, a
            weights-only file, or a file older than this field).
    """

    config: RunConfig
    step: int
    model_state: dict[str, torch.Tensor]
    info: dict[str, Any] = field(default_factory=dict)
    optimizer_state: dict[str, Any] | None = None
    rng_state: torch.Tensor | None = None
    ema_state: dict[str, torch.Tensor] | None = None
    baseline_state: BaselineState | None = None


def save_checkpoint(
    path: str | os.PathLike[str],
    config: RunConfig,
    step: int,
    model: nn.Module,
    optimizer: torch.optim.Optimizer | None = None,
    info: dict[str, Any] | None = None,
    ema_state: dict[str, torch.Tensor] | None = None,
    baseline_state: BaselineState | None = None,
) -> None:
    """Write a checkpoint atomically; with ``optimizer`` (and ``ema_state``, if the run keeps a
    moving average, and ``baseline_state``, if it trains by REINFORCE) it also holds what
    resuming needs."""
    tensors = {f"model.{k}": v.detach().contiguous() for k, v in model.state_dict().items()}
    tensors.update({f"ema.{k}": v for k, v in (ema_state or {}).items()})
    if baseline_state is not None:
        baseline = baseline_state.tensors.items()
        tensors.update({f"baseline.{k}": v.detach().contiguous() for k, v in baseline})
    meta: dict[str, Any] = {
        "format": FORMAT,
        "config": config.to_dict(),
        "step": step,
        "info": info or {},
    }
    if baseline_state is not None:
        meta["baseline"] = baseline_state.meta
    if optimizer is not None:
        optim_tensors, meta["optimizer"] = flatten_optimizer(optimizer.state_dict())
        tensors.update(optim_tensors)
        tensors["rng.torch"] = torch.get_rng_state()
    atomic_write_bytes(path, checksummed_file(tensors, meta))


def checksummed_file(tensors: dict[str, torch.Tensor], meta: dict[str, Any]) -> bytes:
    """The safetensors bytes of ``tensors`` with ``meta`` (JSON) as their ``ptrnet`` metadata,
    plus ``meta["checksum"]``: the SHA-256 of the ``model.``, ``ema.`` and ``baseline.`` tensors,
    and, when there are any, ``meta["state_checksum"]``: that of the optimiser and RNG state."""
    data = save_tensors(tensors, metadata={"ptrnet": json.dumps(meta)})
    meta = {**meta, "checksum": tensor_digest(data, DIGESTED)}
    if any(name.startswith(STATE_DIGESTED) for name in tensors):
        meta["state_checksum"] = tensor_digest(data, STATE_DIGESTED)
    return save_tensors(tensors, metadata={"ptrnet": json.dumps(meta)})


def load_checkpoint(path: str | os.PathLike[str]) -> Checkpoint:
    """Read a checkpoint written by :func:`save_checkpoint`.

    Raises:
        CheckpointError: missing, unreadable or oversized file, an inconsistent safetensors
            header, metadata of the wrong shape or types, a configuration that does not
            validate or does not fit the tensors, a checksum mismatch, or non-finite weights.
    """
    meta, tensors = read_checkpoint_file(path)
    if meta.get("format") == COPY_FORMAT:
        train = meta.get("train")
        raise SentenceModelError(
            path, str(train.get("task", "copy")) if isinstance(train, dict) else "copy"
        )
    if meta.get("format") != FORMAT:
        raise CheckpointError(path, f"unknown checkpoint format {quote(meta.get('format'))}")
    try:
        _check_run_meta(meta)
    except ValueError as err:
        raise CheckpointError(path, f"not a ptrnet checkpoint ({err})") from None
    try:
        config = RunConfig.from_dict(meta["config"])
    except (ValueError, TypeError, KeyError, AttributeError) as err:
        raise CheckpointError(path, f"invalid configuration: {err}") from None
    try:
        _check_shapes(config, {name: tensor.shape for name, tensor in tensors.items()})
    except ValueError as err:
        raise CheckpointError(path, f"weights do not fit the configuration: {err}") from None
    model_state = {k[6:]: v for k, v in tensors.items() if k.startswith("model.")}
    ema = {k[4:]: v for k, v in tensors.items() if k.startswith("ema.")}
    baseline = {k[9:]: v for k, v in tensors.items() if k.startswith("baseline.")}
    baseline_state = None
    if "baseline" in meta or baseline:
        baseline_state = BaselineState(meta.get("baseline", {}), baseline)
    optimizer_state = None
    if "optimizer" in meta:
        try:
            optimizer_state = unflatten_optimizer(tensors, meta["optimizer"])
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise CheckpointError(path, f"invalid optimizer state: {err}") from None
    return Checkpoint(
        config,
        meta["step"],
        model_state,
        meta.get("info", {}),
        optimizer_state,
        tensors.get("rng.torch"),
        ema or None,
        baseline_state,
    )


def read_checkpoint_file(
    path: str | os.PathLike[str],
) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """The ``ptrnet`` metadata (a JSON object) and the tensors of a ptrnet safetensors file,
    whatever format it declares (the copy task's checkpoints, :mod:`ptrnet.text.checkpoint`,
    are read here too), after the checks every such file gets: its size, the header against the
    bytes, the checksum when one is recorded, finite ``model.`` and ``ema.`` tensors. The
    tensors are loaded only once the header has proved they fit in the file.

    Raises:
        CheckpointError: any of those checks failing, one line.
    """
    try:
        data = read_regular_file(path, MAX_CHECKPOINT_BYTES)
    except InputError as err:
        problem = err.problem.replace("cannot read:", "cannot read checkpoint:")
        raise CheckpointError(path, problem) from None
    try:
        _, metadata = read_header(data)
        meta = _meta_object(metadata)
    except (HeaderError, ValueError) as err:
        raise CheckpointError(path, f"not a ptrnet checkpoint ({err})") from None
    if "checksum" in meta and tensor_digest(data, DIGESTED) != meta["checksum"]:
        raise CheckpointError(path, "checksum mismatch: the weights were changed or damaged")
    state = meta.get("state_checksum")
    if state is not None and tensor_digest(data, STATE_DIGESTED) != state:
        raise CheckpointError(
            path, "checksum mismatch: the optimiser or random state was changed or damaged"
        )
    try:
        tensors = load_tensors(data)
    except SafetensorError as err:
        raise CheckpointError(path, f"not a ptrnet checkpoint ({str(err)[:120]})") from None
    bad = next((k for k, v in tensors.items() if k.startswith(DIGESTED) and _not_finite(v)), None)
    if bad is not None:
        raise CheckpointError(path, f"tensor {quote(bad)} holds NaN or infinite values")
    return meta, tensors


def _meta_object(metadata: dict[str, str]) -> dict[str, Any]:
    """The ``ptrnet`` metadata as a JSON object with, if any, string checksums."""
    if "ptrnet" not in metadata:
        raise ValueError("no 'ptrnet' metadata")
    meta = parse_json(metadata["ptrnet"], dict, MAX_HEADER_BYTES, "metadata")
    for key in ("checksum", "state_checksum"):
        if not isinstance(meta.get(key, ""), str):
            raise ValueError(f"metadata '{key}' is not a string")
    return meta


def _check_run_meta(meta: dict[str, Any]) -> None:
    """Raise ValueError unless a run checkpoint's metadata has the types loading relies on."""
    optional = {key: dict for key in ("info", "optimizer", "baseline")}
    check_meta_types(meta, {"config": dict, "step": int}, optional)


def check_meta_types(
    meta: dict[str, Any],
    required: dict[str, type],
    optional: dict[str, type],
    names: dict[type, str] | None = None,
) -> None:
    """Raise ValueError unless ``meta`` has every ``required`` key and each key present of
    both has its type (a bool is no int), and its ``step`` is not negative; ``names`` says a
    type in the message (default: its Python name). Shared by every checkpoint format."""
    for key, kind in {**required, **optional}.items():
        if key not in meta and key in optional:
            continue
        if key not in meta:
            raise ValueError(f"metadata has no {key!r}")
        if not isinstance(meta[key], kind) or isinstance(meta[key], bool):
            name = (names or {}).get(kind, kind.__name__)
            raise ValueError(f"metadata {key!r} is not a JSON {name}")
    if meta["step"] < 0:
        raise ValueError(f"metadata 'step' is {quote(meta['step'])}, below 0")


def _check_shapes(config: RunConfig, shapes: dict[str, Any]) -> None:
    """Raise ValueError unless the ``model.`` tensors (name -> shape) are exactly the
    configuration's parameters with its shapes (the model's shapes come from the meta device:
    nothing is allocated for a configuration however large)."""
    check_model_shapes(state_shapes(config.model), shapes)


def check_model_shapes(expected: dict[str, Any], shapes: dict[str, Any]) -> None:
    """Raise ValueError unless the ``model.`` entries of ``shapes`` (tensor name -> shape) are
    exactly the parameters named in ``expected`` (parameter name -> shape), with those shapes.
    Shared by every checkpoint format."""
    declared = {k[6:]: tuple(shape) for k, shape in shapes.items() if k.startswith("model.")}
    odd = sorted(set(expected) ^ set(declared))
    if odd:
        raise ValueError(f"{quote('model.' + odd[0])} is missing or unexpected")
    for name, shape in expected.items():
        if declared[name] != tuple(shape):
            raise ValueError(
                f"model.{name} has shape {list(declared[name])}, the configuration needs "
                f"{list(shape)}"
            )


def _not_finite(tensor: torch.Tensor) -> bool:
    return tensor.is_floating_point() and not bool(torch.isfinite(tensor).all())


def flatten_optimizer(state: dict[str, Any]) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Split ``optimizer.state_dict()`` into tensors and JSON (safetensors holds tensors only)."""
    tensors, scalars = {}, {}
    for index, entries in state["state"].items():
        for key, value in entries.items():
            if isinstance(value, torch.Tensor):
                tensors[f"optim.{index}.{key}"] = value.contiguous()
            else:
                scalars[f"{index}.{key}"] = value
    return tensors, {"param_groups": state["param_groups"], "scalars": scalars}


def unflatten_optimizer(tensors: dict[str, torch.Tensor], meta: dict[str, Any]) -> dict[str, Any]:
    """Inverse of :func:`flatten_optimizer`."""
    state: dict[int, dict[str, Any]] = {}
    items = [(k[6:], v) for k, v in tensors.items() if k.startswith("optim.")]
    for name, value in [*items, *meta["scalars"].items()]:
        index, key = name.split(".", 1)
        state.setdefault(int(index), {})[key] = value
    return {"state": state, "param_groups": meta["param_groups"]}
