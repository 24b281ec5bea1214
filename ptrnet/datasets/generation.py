"""Labelled datasets from a seed: parallel, shardable, byte-identical whatever the worker count.

Instance ``i`` of a dataset is drawn from its own generator (:func:`ptrnet.tasks.base.
instance_rng`, exactly what ``task.generate(..., start=i)`` uses) and labelled by
``task.solve``. Because no generator is shared between instances, the data depend only on
``(task, sizes, seed, stream, i)``: not on the number of workers, the block size, or the shard.

Sharding: shard ``I/K`` (1-based, as on the command line) is the contiguous block of instance
indices ``[(I-1)*count//K, I*count//K)``, so the shards ``1/K .. K/K`` concatenated are the
unsharded dataset.

Degenerate instances: if ``task.solve`` raises :class:`DegenerateInstanceError` (all points
collinear, too few distinct points; probability zero for uniform floats), instance ``i`` is
redrawn from the sub-stream ``default_rng([seed, stream, i, attempt])`` for ``attempt = 1, 2,
...``. The replacement is a function of the seed alone, so determinism is kept; the size n is
redrawn too.

Size bound: a dataset is written in the paper's format, one instance per line, and every reader
refuses a line over :data:`~ptrnet.io.limits.MAX_LINE_BYTES` or an instance over
:data:`~ptrnet.io.limits.MAX_POINTS`; :func:`ptrnet.io.paper_format.largest_readable_n` is the
largest n whose line is certain to stay within both, whatever the coordinates drawn
(``ptrnet generate`` refuses larger sizes before any work).

Caveat: byte-identical output needs a deterministic solver. TSP's ``near_exact`` (what ``auto``
uses above n = 20) runs on a time budget and may return different tours run to run.
"""

from __future__ import annotations

import math
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor

import numpy as np

from ptrnet.tasks import DegenerateInstanceError, SizeRange, Task, get_point_task

MAX_ATTEMPTS = 100  # redraws of one degenerate instance before giving up
MAX_BLOCK = 256  # instances per worker job: large enough to amortise pickling, small for balance

Labelled = tuple[np.ndarray, np.ndarray]


def default_workers() -> int:
    """The number of CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not available on macOS and Windows
        return os.cpu_count() or 1


def shard_range(count: int, shard: tuple[int, int] | None = None) -> range:
    """The instance indices of shard ``(I, K)`` (1-based I) of a dataset of ``count`` instances.

    Raises:
        ValueError: unless ``1 <= I <= K``.
    """
    if shard is None:
        return range(count)
    part, parts = shard
    if not 1 <= part <= parts:
        raise ValueError(f"invalid shard {part}/{parts}: need 1 <= I <= K")
    return range((part - 1) * count // parts, part * count // parts)


def labelled_instance(
    task: Task, sizes: SizeRange, seed: int, index: int, solver: str | None = None, stream: int = 0
) -> Labelled:
    """Instance ``index`` and its label; redrawn from a sub-stream while degenerate.

    Raises:
        RuntimeError: if ``MAX_ATTEMPTS`` draws in a row are degenerate (e.g. n too small).
    """
    for attempt in range(MAX_ATTEMPTS):
        if attempt == 0:
            points = task.generate(sizes, 1, seed, stream, start=index)[0]
        else:
            rng = np.random.default_rng([seed, stream, index, attempt])
            points = task.sample_points(rng, sizes.sample(rng))
        try:
            return points, task.solve(points, solver)
        except DegenerateInstanceError:
            continue
    raise RuntimeError(f"instance {index}: {MAX_ATTEMPTS} degenerate draws in a row")


def _label_block(
    task: Task, sizes: SizeRange, seed: int, stream: int, solver: str, start: int, stop: int
) -> list[Labelled]:
    """Worker job: instances ``start .. stop-1``, labelled. The task travels pickled (a
    configured one, knapsack's generating capacities, keeps its settings)."""
    return [labelled_instance(task, sizes, seed, i, solver, stream) for i in range(start, stop)]


def generate_dataset(
    task: Task | str,
    sizes: SizeRange | str | int,
    count: int,
    seed: int,
    solver: str | None = None,
    workers: int | None = None,
    shard: tuple[int, int] | None = None,
    stream: int = 0,
) -> Iterator[Labelled]:
    """Yield ``(points, seq)`` for the instances of ``shard`` in index order.

    Args:
        task: a task or its registry name.
        sizes: instance sizes, e.g. ``"5-50"``; n is drawn per instance.
        count: instances in the whole (unsharded) dataset.
        seed, stream: the randomness key (see :func:`ptrnet.tasks.base.instance_rng`).
        solver: the labelling solver, ``None`` for the task's default.
        workers: processes; ``None`` = all available cores, 1 = run in this process.
        shard: ``(I, K)`` to produce only the I-th of K contiguous blocks (1-based I).

    Raises:
        ValueError: unknown task or solver, sizes below the task's minimum, a bad shard, or
            an error of the solver itself (e.g. n > 20 for an exact TSP solver).
    """
    task = get_point_task(task, "a labelled point dataset") if isinstance(task, str) else task
    sizes = SizeRange.parse(sizes)
    task.check_sizes(sizes)
    solver = task.check_solver(solver)
    indices = shard_range(count, shard)
    workers = workers or default_workers()
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    size = max(1, min(MAX_BLOCK, math.ceil(len(indices) / (4 * workers))))
    jobs = [
        (task, sizes, seed, stream, solver, start, min(start + size, indices.stop))
        for start in range(indices.start, indices.stop, size)
    ]
    # Arguments are checked above, eagerly; the work starts when the caller iterates.
    return _run_jobs(jobs, workers)


def _run_jobs(jobs: list[tuple], workers: int) -> Iterator[Labelled]:
    """The labelled instances of ``jobs`` in order, in this process or in a process pool."""
    if workers == 1 or len(jobs) <= 1:
        for job in jobs:
            yield from _label_block(*job)
        return
    pool = ProcessPoolExecutor(min(workers, len(jobs)))
    try:
        for block in _ordered_map(pool.submit, _label_block, jobs, window=2 * workers):
            yield from block
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _ordered_map(
    submit: Callable[..., Future], fn: Callable, jobs: Iterable[tuple], window: int
) -> Iterator:
    """Results of ``fn(*job)`` in job order, with at most ``window`` jobs in flight.

    The window bounds memory when the consumer (writing a file) is slower than the workers.
    """
    pending: deque[Future] = deque()
    for job in jobs:
        pending.append(submit(fn, *job))
        if len(pending) >= window:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()
