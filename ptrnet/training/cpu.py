"""How a training run splits the CPU cores between torch threads and data worker processes.

The rule is no oversubscription (default thread settings crawl on a small CPU): torch threads,
data workers and the other work already running on the machine never exceed its cores. With more
runnable threads than cores, torch's OpenMP threads wait at the end of every operator for
whichever of them is descheduled. Measured on a shared 2-core machine with other jobs running
(docs/speed.md): TSP-10 training at hidden 256 ran 2,817 examples/s with one torch thread and 41
with two; a single (128 x 256) @ (256 x 1024) matmul ran at 105 GFLOP/s on one thread and 4-6
GFLOP/s on two.

So the automatic choice counts the cores other processes keep busy (sampled over 0.2 s when the
run starts) as taken, and :class:`ThreadPlanner` takes the same count again every few seconds
while the run trains: a snapshot taken once at start-up would keep two threads when a neighbour
starts later, the oversubscribed case (docs/speed.md, "When the machine is shared").
``--threads`` fixes the count and turns re-planning off.

Under torchrun, the ``ranks`` processes of one machine split its free cores evenly: each rank
plans for its share, so K ranks never oversubscribe the machine together.

Decoding follows the same rule through :func:`decoding_threads`, the one choice of ``ptrnet
predict``, ``eval`` and ``demo`` and of the Python API (``ptrnet.load(...).solve``): the idle
cores, unless a count is given. The API sets it for the duration of a call only
(:func:`torch_threads`), so a caller's own ``torch.set_num_threads`` comes back afterwards.
Measured on a shared 2-core machine with one core kept busy (``benchmarks/bench_api_threads.py``:
4 instances of 100 cities, RRC 20 rounds), ``solve(..., improve="rrc")`` on torch's default two
threads took 363 s where ``ptrnet predict`` took 48 s; on the idle cores, 37 s.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ptrnet.datasets.generation import default_workers as available_cores

# Cores per data worker when the count is automatic. Labelling costs less than the training
# step for the paper's small sizes (docs/speed.md); on 2 cores a worker would take half of the
# cores from the step, which measured slower than labelling between steps.
CORES_PER_WORKER = 4
# Seconds between two thread plans while training: long enough for /proc/stat's 100 Hz counters
# to average over, short enough that a neighbour that starts later costs at most a few seconds
# of oversubscription.
REPLAN_SECONDS = 2.0


def auto_workers(cores: int) -> int:
    """Data workers for ``cores`` cores: one per CORES_PER_WORKER, none below that."""
    return cores // CORES_PER_WORKER


def busy_cores(interval: float = 0.2) -> int:
    """Cores other processes keep busy now, rounded: the share of CPU time not idle over
    ``interval`` seconds (/proc/stat), times the CPU count. Sampled rather than read from the
    1-minute load average, which still counts a job that ended a minute ago; the load average is
    the fallback where /proc/stat is missing, then 0.
    """
    try:
        first = _cpu_times()
        time.sleep(interval)
        second = _cpu_times()
    except OSError:
        try:
            return round(os.getloadavg()[0])
        except OSError:
            return 0
    total = sum(second) - sum(first)
    idle = sum(second[3:5]) - sum(first[3:5])  # idle and iowait jiffies
    return round((os.cpu_count() or 1) * (1 - idle / total)) if total > 0 else 0


def _cpu_times() -> list[int]:
    """The aggregate CPU time counters of /proc/stat (user, nice, system, idle, iowait, ...)."""
    with open("/proc/stat") as stream:
        return [int(x) for x in stream.readline().split()[1:]]


def cpu_plan(
    threads: int | None,
    workers: int | None,
    cores: int | None = None,
    busy: int | None = None,
    ranks: int = 1,
) -> tuple[int, int]:
    """(torch threads, data workers) for a run, or for one of ``ranks`` ranks on this machine.

    Args:
        threads, workers: the configured values; None = automatic.
        cores: cores available (default: this process's CPU affinity).
        busy: cores taken by other processes (default: :func:`busy_cores`).
        ranks: training processes sharing this machine (torchrun's ``LOCAL_WORLD_SIZE``).

    Returns:
        ``workers`` or :func:`auto_workers` of this rank's free cores, and ``threads`` or the
        free cores the workers leave (at least 1); a rank's free cores are the machine's free
        cores divided by ``ranks``, rounded down.
    """
    cores = cores or available_cores()
    free = free_cores(cores, busy_cores() if busy is None else busy, ranks)
    workers = auto_workers(free) if workers is None else workers
    threads = threads if threads is not None else max(1, free - workers)
    return threads, workers


def free_cores(cores: int, busy: int, ranks: int = 1) -> int:
    """One rank's share of the cores that ``busy`` cores of other work leave, at least 1."""
    return max(1, (cores - busy) // ranks)


@dataclass(frozen=True)
class CpuSample:
    """The machine's CPU counters and this process's CPU time at one moment.

    Attributes:
        jiffies: the aggregate line of /proc/stat (user, nice, system, idle, iowait, ...).
        own_s: CPU seconds this process has used, all its threads (``time.process_time``).
    """

    jiffies: tuple[int, ...]
    own_s: float


def cpu_sample() -> CpuSample:
    """The counters now (raises OSError where /proc/stat is missing)."""
    return CpuSample(tuple(_cpu_times()), time.process_time())


def _try_sample() -> CpuSample | None:
    """:func:`cpu_sample`, or None where /proc/stat is missing."""
    try:
        return cpu_sample()
    except OSError:
        return None


def others_busy(
    first: CpuSample,
    second: CpuSample,
    cpus: int,
    ranks: int = 1,
    workers: int = 0,
    tick: float = 0.01,
) -> int:
    """Cores that processes other than this run kept busy between two samples, rounded.

    The machine's busy share (time not idle or iowait) times ``cpus``, minus the cores this
    process used times ``ranks`` (its sibling ranks on this machine are assumed to use as
    much), minus ``ranks * workers`` for the run's data workers (counted as busy: their CPU
    time is not this process's); ``tick`` is the seconds per jiffy (``1 / SC_CLK_TCK``). 0 for
    an empty interval.
    """
    total = sum(second.jiffies) - sum(first.jiffies)
    if total <= 0:
        return 0
    idle = sum(second.jiffies[3:5]) - sum(first.jiffies[3:5])
    wall = total * tick / cpus  # seconds between the samples
    own = (second.own_s - first.own_s) / wall * ranks
    return max(0, round(cpus * (1 - idle / total) - own - ranks * workers))


class ThreadPlanner:
    """Re-plans the torch threads of a running training process from the recent CPU load.

    Rank 0 calls :meth:`plan` at the steps :meth:`due` names, and every rank passes that plan
    to :meth:`adopt` (the training loop broadcasts it), so ranks change their thread counts at
    the same step. The count is, as at start-up, this rank's share of the cores that other
    processes leave free, minus its data workers. A fixed count (``--threads``) never re-plans;
    without /proc/stat the count stays.
    """

    def __init__(
        self,
        threads: int,
        workers: int,
        fixed: bool,
        ranks: int = 1,
        cores: int | None = None,
        seconds: float = REPLAN_SECONDS,
    ) -> None:
        self.threads, self.workers, self.ranks, self.fixed = threads, workers, ranks, fixed
        self.cores = cores or available_cores()
        self.seconds, self.next_step, self.last_step = seconds, 1, 0
        self.tick = 1.0 / os.sysconf("SC_CLK_TCK")
        self.sample = None if fixed else _try_sample()
        self.clock = time.perf_counter()

    def due(self, step: int) -> bool:
        """Whether to re-plan after ``step`` steps (the same answer on every rank)."""
        return not self.fixed and step >= self.next_step

    def plan(self, step: int) -> tuple[int, int]:
        """(threads, next step to re-plan at) from the load since the previous plan: the next
        step lies about ``seconds`` ahead at the recent rate of steps. Without /proc/stat the
        thread count stays."""
        clock, first = time.perf_counter(), self.sample
        per_step = (clock - self.clock) / max(1, step - self.last_step)
        next_step = step + max(1, round(self.seconds / max(per_step, 1e-6)))
        self.sample = _try_sample()
        self.clock, self.last_step = clock, step
        if first is None or self.sample is None:
            return self.threads, next_step
        cpus = os.cpu_count() or self.cores  # /proc/stat counts every online CPU
        busy = others_busy(first, self.sample, cpus, self.ranks, self.workers, self.tick)
        threads = max(1, free_cores(self.cores, busy, self.ranks) - self.workers)
        return threads, next_step

    def adopt(self, plan: tuple[int, int]) -> int:
        """Take a plan from :meth:`plan` (on any rank); returns the thread count."""
        self.threads, self.next_step = plan
        return self.threads


class IdleCores:
    """The cores other processes leave idle, at least 1 (:func:`free_cores`).

    The first measurement, and one after a pause of more than ``longest`` seconds, is
    :func:`busy_cores` over ``fresh`` seconds, the measurement a command makes at its start.
    A later one measures the time since the previous measurement (:func:`others_busy`: this
    process's own CPU time is not counted as busy), so calls in a loop (the Python API's
    ``solve``) sleep for no sample; one less than ``fresh`` seconds after the previous reuses
    its count. Safe to call from several threads.
    """

    def __init__(self, fresh: float = 0.2, longest: float = 10.0) -> None:
        self.fresh, self.longest = fresh, longest
        self._lock = threading.Lock()
        self._sample: CpuSample | None = None
        self._clock = -math.inf
        self._count = 1

    def count(self) -> int:
        """The idle cores now, at least 1."""
        with self._lock:
            age = time.perf_counter() - self._clock
            if age < self.fresh:
                return self._count
            first = self._sample if age <= self.longest else None
            busy = busy_cores(self.fresh) if first is None else None
            self._sample, self._clock = _try_sample(), time.perf_counter()
            if busy is None:  # since the previous measurement
                if self._sample is None:
                    busy = busy_cores(self.fresh)
                else:
                    tick = 1.0 / os.sysconf("SC_CLK_TCK")
                    cpus = os.cpu_count() or available_cores()
                    busy = others_busy(first, self._sample, cpus, tick=tick)
            self._count = free_cores(available_cores(), busy)
            return self._count


_IDLE = IdleCores()


def decoding_threads(threads: int | None = None) -> int:
    """Torch threads for decoding: ``threads``, else the cores other processes leave idle now
    (:class:`IdleCores`), so decoding never oversubscribes a busy machine. The one rule of the
    command line (``--threads``) and the Python API (``threads=``)."""
    return threads if threads is not None else _IDLE.count()


class _ThreadCounts:
    """What :func:`torch_threads` blocks share: how many are open in all threads, torch's
    count before the first of them, and each thread's open blocks."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.open = 0
        self.saved = 1
        self.local = threading.local()


_COUNTS = _ThreadCounts()


@contextmanager
def torch_threads(count: int) -> Iterator[int]:
    """``torch.set_num_threads(count)`` for the block, then the count torch had before it.

    A block inside another of the same thread sets back the outer block's count. Blocks open
    at once in several threads set back the count torch had before the first of them: torch
    keeps the count per thread (OpenMP) and copies its last setting into new threads, so a
    thread's own "before" may be another block's count. Yields ``count``.
    """
    import torch

    depth = getattr(_COUNTS.local, "depth", 0)
    with _COUNTS.lock:
        if _COUNTS.open == 0:
            _COUNTS.saved = torch.get_num_threads()
        _COUNTS.open += 1
        back = torch.get_num_threads() if depth else _COUNTS.saved
    _COUNTS.local.depth = depth + 1
    torch.set_num_threads(count)
    try:
        yield count
    finally:
        _COUNTS.local.depth = depth
        with _COUNTS.lock:
            _COUNTS.open -= 1
        torch.set_num_threads(back)
