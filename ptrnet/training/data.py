"""Training and validation data: a pure function of the configuration and the step.

Every batch is determined by ``(config, step)`` alone, so a resumed run sees exactly the data
order of an uninterrupted one and needs no data-loader state.

* Generated data (no file): epoch ``e`` is instances ``e*E .. (e+1)*E - 1`` of stream
  :data:`TRAIN_STREAM` (``E = epoch_size``), a running instance counter, so every instance is
  fresh. Instance ``i`` is exactly line ``i`` of ``ptrnet generate --seed S`` (stream 0).
* File data: epoch ``e`` visits the file in a permutation drawn from ``(seed, ORDER_STREAM, e)``.
  Training and validation files are read as every command reads instances
  (:func:`ptrnet.io.instances.read_instances`: paper format, points, CSV, .npy, TSPLIB).
* Labels come from ``task.solve`` as each pool of batches is built (the canonical targets), or
  from the file with ``labels="file"``, folded into the same label form (:meth:`Task.canonical`:
  a file may hold a tour clockwise, a hull from another vertex, triangles in any order, as the
  paper's TSP-5 file runs half its tours clockwise). Degenerate file instances (no reference
  solution) are dropped from their pool; a pool left with fewer batches than its steps repeats
  its batches in turn, and one with no instance left is an error naming the file
  (:func:`pick`). Generated ones are redrawn as in :mod:`ptrnet.datasets.generation`. With
  ``objective="reinforce"`` or ``"dagger"`` nothing is solved and batches carry no targets.
* Bucketing: batches are built a pool of ``bucket_pool`` batches at a time. With ``bucket`` the
  pool is sorted by n before it is cut into batches (less padding) and the batches are visited in
  an order drawn from ``(seed, BUCKET_STREAM, e, pool)``; without it a batch mixes sizes freely.
* Augmentation (``augment``): instance ``i`` of epoch ``e`` is shown in the view drawn from
  ``(seed, AUGMENT_STREAM, e, i)`` (:func:`ptrnet.training.augment.augment`), after labelling.
* Validation: instances ``0 .. val_count-1`` of stream :data:`VAL_STREAM` under the same seed,
  or the instances of ``val_data``. Streams key instances separately, so no seed makes
  validation equal training; a training file is checked for validation instances before
  training starts, and so is a validation file against the first generated instances the run
  trains on (up to :data:`GENERATED_CHECK`: a file ``ptrnet generate`` wrote with the run's
  seed on its default stream 0 holds them).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

from ptrnet.datasets.batching import Batch, collate
from ptrnet.datasets.generation import labelled_instance
from ptrnet.io.errors import InputError
from ptrnet.io.instances import read_instances
from ptrnet.runs.config import TrainConfig
from ptrnet.tasks import DegenerateInstanceError, Stream, Task
from ptrnet.training.augment import augment
from ptrnet.training.workers import QuietWorkerDeaths

TRAIN_STREAM, VAL_STREAM, ORDER_STREAM, BUCKET_STREAM, AUGMENT_STREAM = (
    Stream.TRAIN,
    Stream.VALIDATION,
    Stream.ORDER,
    Stream.BUCKET,
    Stream.AUGMENTATION,
)

Instance = tuple[np.ndarray, np.ndarray | None]  # points (n, dim), 0-based label or None
GENERATED_CHECK = 10_000  # generated training instances a validation file is checked against


def validation_set(task: Task, cfg: TrainConfig) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The fixed validation instances and their labels: (points list, labels list).

    Generated (``val_count`` instances of :data:`VAL_STREAM`, canonical labels) unless
    ``val_data`` names a file: then its instances, with the file's labels (in the label form,
    :meth:`Task.canonical`) where a line has them and the task's solution otherwise.

    Raises:
        InputError: an unreadable or malformed validation file, or one with an instance that
            has no reference solution (degenerate).
    """
    if cfg.val_data is not None:
        return _read_validation_file(task, cfg.val_data)
    pairs = [
        labelled_instance(task, cfg.size_range, cfg.seed, i, stream=VAL_STREAM)
        for i in range(cfg.val_count)
    ]
    return [p for p, _ in pairs], [s for _, s in pairs]


class TrainingData:
    """Maps a step to its batch (see module docstring).

    Args:
        task: the task being learned.
        cfg: the training configuration (data source, sizes, batch size, seed, bucketing).
        val_points: validation instances that a training file must not contain.

    Raises:
        InputError: the training file is unreadable, malformed, has an instance size outside
            ``cfg.sizes``, or contains a validation instance; or the validation file
            (``cfg.val_data``) holds one of the generated instances the run trains on.
    """

    def __init__(self, task: Task, cfg: TrainConfig, val_points: list[np.ndarray]) -> None:
        self.task, self.cfg = task, cfg
        self.file: list[Instance] | None = None
        if cfg.data is not None:
            self.file = _read_file(task, cfg, val_points)
        self.epoch_length = len(self.file) if self.file is not None else cfg.epoch_size
        self.steps_per_epoch = math.ceil(self.epoch_length / cfg.batch_size)
        if self.file is None and cfg.val_data is not None:
            first_epoch = min(self.epoch_length, self.total_steps() * cfg.batch_size)
            _refuse_trained_validation(task, cfg, val_points, first_epoch)
        self._pool_key: tuple[int, int] | None = None
        self._pool: list[Batch] = []

    def total_steps(self) -> int:
        """Steps in the whole run: ``steps``, or ``epochs`` full passes."""
        return self.cfg.steps or self.cfg.epochs * self.steps_per_epoch

    def batch(self, step: int) -> Batch:
        """The training batch for optimiser step ``step`` (0-based)."""
        epoch, pool, j = self._locate(step)
        if self._pool_key != (epoch, pool):
            self._pool = self._build_pool(epoch, pool)
            self._pool_key = (epoch, pool)
        return pick(self._pool, j, self.cfg.data)

    def batches(self, start: int, workers: int = 0) -> Iterator[Batch]:
        """The batches of steps ``start .. total_steps() - 1`` in order, each ``batch(step)``.

        With ``workers > 0``, that many worker processes (one torch thread each) build the
        pools ahead of use, up to two pools per worker in flight, so the training step does not
        wait for labels. Pools are pure functions of their key, so the batches do not depend on
        the number of workers. A worker's death is raised here, as one of
        :data:`ptrnet.training.workers.WORKER_ERRORS`; ``close()`` ends the workers.
        """
        if workers == 0:
            return (self.batch(step) for step in range(start, self.total_steps()))
        loader = DataLoader(
            _Pools(self),
            batch_size=None,
            sampler=self._pool_keys(start),
            num_workers=workers,
            collate_fn=_as_is,
            prefetch_factor=2,
            # its own generator for the workers' base seed, which would otherwise be drawn from
            # torch's global one: the training's RNG state must not depend on the worker count
            generator=torch.Generator().manual_seed(self.cfg.seed),
        )
        pools = iter(loader)
        return QuietWorkerDeaths(self._picked(start, pools), pools)

    def _picked(self, start: int, pools: Iterator[list[Batch]]) -> Iterator[Batch]:
        """The batches of steps ``start ..``, each picked from the pool ``pools`` yields for it."""
        key, pool = None, []
        for step in range(start, self.total_steps()):
            epoch, index, j = self._locate(step)
            if key != (epoch, index):
                key, pool = (epoch, index), next(pools)
            yield pick(pool, j, self.cfg.data)

    def _locate(self, step: int) -> tuple[int, int, int]:
        """Step -> (epoch, pool within the epoch, batch within the pool)."""
        epoch, k = divmod(step, self.steps_per_epoch)
        return epoch, *divmod(k, self.cfg.bucket_pool)

    def _pool_keys(self, start: int) -> list[tuple[int, int]]:
        """(epoch, pool) of every pool from the one holding step ``start`` to the last step's."""
        per_epoch = math.ceil(self.steps_per_epoch / self.cfg.bucket_pool)
        first, last = (
            epoch * per_epoch + pool
            for epoch, pool, _ in map(self._locate, (start, self.total_steps() - 1))
        )
        return [divmod(index, per_epoch) for index in range(first, last + 1)]

    def _build_pool(self, epoch: int, pool: int) -> list[Batch]:
        cfg, size = self.cfg, self.cfg.batch_size
        first = pool * cfg.bucket_pool * size
        positions = np.arange(first, min(first + cfg.bucket_pool * size, self.epoch_length))
        ids = self._instance_ids(epoch, positions)
        instances = [self._view(epoch, int(i), self._labelled(i)) for i in ids]
        instances = [inst for inst in instances if inst is not None]
        if cfg.bucket:
            instances.sort(key=lambda inst: len(inst[0]))  # stable: ties keep their order
        chunks = [instances[lo : lo + size] for lo in range(0, len(instances), size)]
        if cfg.bucket:
            order = np.random.default_rng([cfg.seed, BUCKET_STREAM, epoch, pool])
            chunks = [chunks[c] for c in order.permutation(len(chunks))]
        return [_collate(c) for c in chunks]

    def _instance_ids(self, epoch: int, positions: np.ndarray) -> np.ndarray:
        """Generated: stream-0 instance indices; file: line positions in this epoch's order."""
        if self.file is None:
            return epoch * self.epoch_length + positions
        rng = np.random.default_rng([self.cfg.seed, ORDER_STREAM, epoch])
        return rng.permutation(self.epoch_length)[positions]

    def _labelled(self, index: int) -> Instance | None:
        """Instance ``index`` with its target, or None for a degenerate file instance.

        With ``objective`` ``reinforce`` or ``dagger`` nothing is solved: the target is None
        (a file's own labels are kept but unused).
        """
        cfg, unlabelled = self.cfg, not self.cfg.labels_training_data
        if self.file is None and unlabelled:
            points = self.task.generate(cfg.size_range, 1, cfg.seed, TRAIN_STREAM, int(index))
            return points[0], None
        if self.file is None:
            return labelled_instance(
                self.task,
                cfg.size_range,
                cfg.seed,
                int(index),
                solver=cfg.label_solver,
                stream=TRAIN_STREAM,
            )
        points, seq = self.file[index]
        if seq is None and not unlabelled:
            try:
                seq = self.task.solve(points, cfg.label_solver)
            except DegenerateInstanceError:
                return None
        return points, seq

    def _view(self, epoch: int, index: int, instance: Instance | None) -> Instance | None:
        """What epoch ``epoch`` shows of labelled instance ``index`` (module docstring)."""
        if instance is None or not self.cfg.augment:
            return instance
        rng = np.random.default_rng([self.cfg.seed, AUGMENT_STREAM, epoch, index])
        return augment(self.task, *instance, rng)


class _Pools(Dataset):
    """Map-style view of a TrainingData's pools for the DataLoader: key (epoch, pool) -> pool."""

    def __init__(self, data: TrainingData) -> None:
        self.data = data

    def __getitem__(self, key: tuple[int, int]) -> list[Batch]:
        return self.data._build_pool(*key)


def pick(pool: list[Batch], j: int, path: str | None) -> Batch:
    """Batch ``j`` of a pool; batch ``j % len(pool)`` where dropping degenerate instances left
    the pool fewer batches than steps (module docstring).

    Raises:
        InputError: nothing left in the pool: every instance of it is degenerate.
    """
    if not pool:
        raise InputError(
            path or "training data",
            None,
            "no instance of a pool of training batches has a solution (all degenerate, e.g. "
            "collinear points); remove such instances",
        )
    return pool[j % len(pool)]


def _collate(instances: list[Instance]) -> Batch:
    """A batch of instances, with targets unless some instance has none (``reinforce``)."""
    seqs = [s for _, s in instances]
    return collate([p for p, _ in instances], None if any(s is None for s in seqs) else seqs)


def _as_is(pool: list[Batch]) -> list[Batch]:
    """The DataLoader's collate function: pools are already batched."""
    return pool


def _read_file(task: Task, cfg: TrainConfig, val_points: list[np.ndarray]) -> list[Instance]:
    """The training file's instances, checked against the size range and the validation set."""
    examples = read_instances(cfg.data, task, labels=cfg.labels == "file")
    sizes, held_out = cfg.size_range, {_key(p) for p in val_points}
    for ex in examples:
        if cfg.labels == "file" and ex.seq is None:
            raise InputError(cfg.data, ex.line, "no 'output' part: this file needs labels")
        size = task.size_of(ex.points)  # a routing task's customers, its depot not counted
        if not sizes.lo <= size <= sizes.hi:
            count = f"{len(ex.points)} points"
            what = count if size == len(ex.points) else f"size {size} ({count})"
            raise InputError(cfg.data, ex.line, f"{what}, outside the training sizes {sizes}")
        if _key(ex.points) in held_out:
            where = cfg.val_data or f"stream {VAL_STREAM} of seed {cfg.seed}"
            advice = "" if cfg.val_data else "; train with another seed"
            raise InputError(
                cfg.data, ex.line, f"instance is in the validation set ({where}){advice}"
            )
    return [(ex.points, label_form(task, ex.points, ex.seq)) for ex in examples]


def _refuse_trained_validation(
    task: Task, cfg: TrainConfig, val_points: list[np.ndarray], trained: int
) -> None:
    """Raise InputError if the validation file holds one of the first ``trained`` generated
    training instances (at most :data:`GENERATED_CHECK` of them are drawn to compare)."""
    held_out = {_key(p): k for k, p in enumerate(val_points)}
    count = min(trained, max(len(val_points), GENERATED_CHECK))
    for i in range(count):  # one at a time: 10,000 large instances need not sit in memory
        points = task.generate(cfg.size_range, 1, cfg.seed, TRAIN_STREAM, i)[0]
        k = held_out.get(_key(points))
        if k is not None:
            line = read_instances(cfg.val_data, task)[k].line
            raise InputError(
                cfg.val_data,
                line,
                f"instance is training instance {i} of this run (stream {TRAIN_STREAM} of seed "
                f"{cfg.seed}, which ptrnet generate --seed {cfg.seed} writes by default); "
                f"validate on another stream (ptrnet generate --stream {VAL_STREAM}) or seed",
            )


def _read_validation_file(task: Task, path: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The instances of ``path`` and their labels (the file's, else ``task.solve``'s)."""
    points, labels = [], []
    for ex in read_instances(path, task, labels=True):
        seq = label_form(task, ex.points, ex.seq)
        if seq is None:
            try:
                seq = task.solve(ex.points)
            except DegenerateInstanceError as err:
                raise InputError(path, ex.line, str(err)) from None
        points.append(ex.points)
        labels.append(seq)
    return points, labels


def label_form(task: Task, points: np.ndarray, seq: np.ndarray | None) -> np.ndarray | None:
    """A file's label in the form the task's labels take (None stays None): teacher forcing
    on one cycle written in two directions, or from two starts, would teach both (and a
    constrained loss refuses any but the label form)."""
    return None if seq is None else task.canonical(points, seq)


def _key(points: np.ndarray) -> bytes:
    """Hashable identity of an instance (its float64 bytes and shape)."""
    arr = np.ascontiguousarray(points, dtype=np.float64)
    return arr.tobytes() + str(arr.shape).encode()
