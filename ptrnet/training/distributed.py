"""Data-parallel training under ``torchrun``: PyTorch's DistributedDataParallel, nothing home-made.

``torchrun --nproc-per-node=K -m ptrnet train ...`` starts K processes (ranks) with ``RANK``,
``WORLD_SIZE``, ``LOCAL_RANK`` and ``LOCAL_WORLD_SIZE`` in their environment. With a world of
more than one rank, :func:`session` joins the process group (``gloo`` for the CPU, ``nccl`` for
CUDA GPUs, one GPU per local rank) and the loop wraps the model in DDP. The contract:

* ``batch_size`` is the **global** batch B. Every rank draws the same global batch for a step
  (data are a pure function of seed and step, :mod:`ptrnet.training.data`) and keeps its own
  rows :func:`row_range`: B // K each, the first B mod K ranks one more. So a K-rank run sees
  the examples of the 1-rank run in the same steps, for any K, and ``--resume`` works across
  rank counts.
* Unequal shares are weighted: a rank whose rows hold a fraction ``share`` of the global batch's
  loss denominator (target tokens for the likelihood, rows for ``reinforce``) scales its local
  mean loss by ``K * share`` (:class:`Shard`). DDP averages gradients over the K ranks, so the
  step's gradient is the 1-rank gradient of the global mean, to float rounding. A batch with
  fewer rows than ranks (the end of a file epoch) leaves some ranks without rows: they run one
  borrowed row with weight 0, so DDP's collective still has every rank.
* The logged training loss is the sum over ranks of ``share * local loss``: the global mean.
* Validation runs once, on rank 0; the others wait for its metrics (:meth:`Session.broadcast`).
  Only rank 0 writes the run directory (config, log, checkpoints) and prints.

Setting ``PTRNET_REPLICA_TRACE=PREFIX`` makes every rank append ``step sha256`` of its
parameters after each step to ``PREFIX.rank<R>``: a check that the replicas stay identical;
its last line counts the DDP wrappers still alive once the rank has left the process group.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import os
import traceback
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from ptrnet.compute.devices import resolve_device
from ptrnet.compute.precision import resolve_precision
from ptrnet.datasets.batching import IGNORE_INDEX, Batch
from ptrnet.io.errors import UsageError
from ptrnet.quoting import quote

TRACE_ENV = "PTRNET_REPLICA_TRACE"


@dataclass(frozen=True)
class Ranks:
    """This process's place in the run: global rank and world size, rank and count on its node."""

    rank: int = 0
    world: int = 1
    local_rank: int = 0
    local_world: int = 1

    def __post_init__(self) -> None:
        if not (0 <= self.rank < self.world and 0 <= self.local_rank < self.local_world):
            raise ValueError(f"inconsistent torchrun environment: {self}")

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] = os.environ) -> Ranks:
        """The ranks torchrun set in ``environ``; one rank when ``WORLD_SIZE`` is unset.

        Raises:
            ValueError: a variable that is not an integer, or inconsistent values.
        """
        if "WORLD_SIZE" not in environ:
            return cls()
        keys = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")
        defaults = {"RANK": "0", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": environ["WORLD_SIZE"]}
        try:
            values = [int(environ.get(k, defaults.get(k, ""))) for k in keys]
        except ValueError:
            shown = ", ".join(f"{k}={quote(environ.get(k))}" for k in keys)
            raise ValueError(f"torchrun environment is not integers: {shown}") from None
        return cls(*values)

    @property
    def main(self) -> bool:
        """Rank 0: the one that validates, writes and prints."""
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world > 1


def rank_device(name: str, ranks: Ranks, cuda_available: bool) -> str:
    """The device name one rank uses for the run's ``device`` setting ``name``.

    With several ranks, ``cuda`` (and ``auto`` where CUDA is available) means the GPU of the
    rank's local index, ``cuda:<LOCAL_RANK>``.

    Raises:
        ValueError: ``cuda:N`` with several ranks (each rank takes its own GPU).
    """
    if not ranks.distributed:
        return name
    if name.startswith("cuda:"):
        raise ValueError(
            f"--device {name} names one GPU, but torchrun started {ranks.world} ranks; "
            "pass --device cuda and each rank takes the GPU of its LOCAL_RANK"
        )
    if name == "cuda" or (name == "auto" and cuda_available):
        return f"cuda:{ranks.local_rank}"
    return "cpu" if name == "auto" else name


def backend_for(device: torch.device) -> str:
    """The process group backend for ``device``: NCCL between GPUs, gloo between CPUs."""
    return "nccl" if device.type == "cuda" else "gloo"


def row_range(rows: int, world: int, rank: int) -> tuple[int, int]:
    """Rows ``lo .. hi - 1`` of a ``rows``-row global batch that ``rank`` of ``world`` keeps:
    consecutive blocks, ``rows // world`` each and one more for the first ``rows % world``."""
    base, extra = divmod(rows, world)
    lo = rank * base + min(rank, extra)
    return lo, lo + base + (rank < extra)


@dataclass(frozen=True)
class Shard:
    """One rank's rows of a global batch.

    Attributes:
        batch: the rows, padding trimmed to their own longest instance and target.
        share: their part of the global loss denominator (tokens or rows), in [0, 1]; 0 for a
            borrowed row that only keeps the rank in the collective.
    """

    batch: Batch
    share: float


def shard_batch(batch: Batch, ranks: Ranks, by_tokens: bool) -> Shard:
    """This rank's :class:`Shard` of ``batch``; the whole batch with share 1 on one rank.

    ``by_tokens``: the loss is a mean over target tokens (likelihood), else over rows.
    """
    if not ranks.distributed:
        return Shard(batch, 1.0)
    lo, hi = row_range(batch.size, ranks.world, ranks.rank)
    if lo == hi:
        return Shard(_rows(batch, 0, 1), 0.0)
    part = _rows(batch, lo, hi)
    if not by_tokens:
        return Shard(part, part.size / batch.size)
    return Shard(part, _tokens(part) / _tokens(batch))


def _tokens(batch: Batch) -> int:
    return int((batch.targets != IGNORE_INDEX).sum())


def _rows(batch: Batch, lo: int, hi: int) -> Batch:
    """Rows ``lo .. hi - 1`` of ``batch`` with the padding no row of them needs removed."""
    lengths = batch.lengths[lo:hi]  # (b,)
    points = batch.points[lo:hi, : int(lengths.max())]  # (b, n', dim)
    targets = batch.targets
    if targets is not None:
        width = int((targets[lo:hi] != IGNORE_INDEX).sum(dim=1).max())
        targets = targets[lo:hi, :width]  # (b, T')
    return Batch(points.contiguous(), lengths, None if targets is None else targets.contiguous())


class Session:
    """The collectives of one run; on a single rank each is the identity or a no-op."""

    def __init__(self, ranks: Ranks, device: torch.device, trace: str | None = None) -> None:
        self.ranks, self.device, self.trace = ranks, device, trace

    @property
    def main(self) -> bool:
        return self.ranks.main

    def wrap(self, model: nn.Module) -> nn.Module:
        """``model`` in DDP (which broadcasts rank 0's weights), or itself on one rank."""
        if not self.ranks.distributed:
            return model
        ids = [self.device.index] if self.device.type == "cuda" else None
        return DistributedDataParallel(model, device_ids=ids)

    def sum(self, value: float) -> float:
        """``value`` summed over the ranks."""
        if not self.ranks.distributed:
            return value
        total = torch.tensor([value], dtype=torch.float64, device=self.device)
        dist.all_reduce(total)
        return float(total.item())

    def broadcast(self, value: Any) -> Any:
        """Rank 0's ``value`` (picklable) on every rank; the others wait for it."""
        if not self.ranks.distributed:
            return value
        box = [value]
        dist.broadcast_object_list(box, src=0, device=self.device)
        return box[0]

    def after_step(self, model: nn.Module, step: int) -> None:
        """With :data:`TRACE_ENV` set, append ``step`` and the parameters' digest to this
        rank's trace file."""
        if self.trace is None:
            return
        digest = hashlib.sha256()
        for param in unwrap(model).parameters():
            digest.update(param.detach().cpu().numpy().tobytes())
        with open(f"{self.trace}.rank{self.ranks.rank}", "a", encoding="ascii") as stream:
            stream.write(f"{step} {digest.hexdigest()}\n")


def unwrap(model: nn.Module) -> nn.Module:
    """The network inside a DDP wrapper (what is validated and saved), or ``model`` itself."""
    return model.module if isinstance(model, DistributedDataParallel) else model


@contextlib.contextmanager
def session(
    device: str, precision: str = "fp32", environ: Mapping[str, str] = os.environ
) -> Iterator[Session]:
    """This process's :class:`Session` for a run on ``device`` in ``precision`` (the
    ``TrainConfig`` fields).

    Under torchrun with several ranks, joins the process group from the environment (the
    rendezvous torchrun set up) unless the process already belongs to one, and leaves it at
    the end if it joined.

    Raises:
        UsageError: a bad torchrun environment, a device this machine lacks, or a precision
            the device cannot run (:func:`rank_device`,
            :func:`ptrnet.compute.devices.resolve_device`,
            :func:`ptrnet.compute.precision.resolve_precision`).
    """
    try:
        ranks = Ranks.from_environ(environ)
        target = resolve_device(rank_device(device, ranks, torch.cuda.is_available()))
        resolve_precision(precision, target)
    except ValueError as err:
        raise UsageError(str(err)) from None
    current = Session(ranks, target, environ.get(TRACE_ENV))
    if not ranks.distributed:
        yield current
        return
    if target.type == "cuda":
        torch.cuda.set_device(target)
    joined = not dist.is_initialized()
    if joined:
        dist.init_process_group(backend_for(target))
    try:
        yield current
    except BaseException as err:
        if joined:
            traceback.clear_frames(err.__traceback__)  # the frames' DDP wrapper, see _leave
            _leave(current, barrier=False)
        raise
    if joined:
        _leave(current, barrier=True)


def _leave(current: Session, barrier: bool) -> None:
    """Leave the process group, with nothing left that holds it.

    ``destroy_process_group`` only drops the group from c10d's registry: a DDP wrapper still
    alive (in a reference cycle, or the frame of an exception) keeps the gloo group and its
    worker threads until interpreter finalisation, whose teardown of them aborted a rank
    after a finished run (``terminate called without an active exception``, SIGABRT). So the
    cycles are collected first. With a barrier, every rank reaches it before any leaves: a rank
    that tears down its gloo connections while a peer still has one open can abort that peer.
    """
    gc.collect()
    if barrier:
        dist.barrier()
    dist.destroy_process_group()
    if current.trace is not None:
        wrappers = sum(isinstance(o, DistributedDataParallel) for o in gc.get_objects())
        with open(f"{current.trace}.rank{current.ranks.rank}", "a", encoding="ascii") as stream:
            stream.write(f"left the group, DDP wrappers alive: {wrappers}\n")


class NullLog:
    """What a rank other than 0 keeps instead of the run's CSV log: writes nothing."""

    def write(self, row: dict[str, Any]) -> None:
        del row

    def close(self) -> None:
        pass
