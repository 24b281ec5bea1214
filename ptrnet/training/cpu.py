"""How a training run splits the CPU cores between torch threads and data worker processes.

The rule is no oversubscription (default thread settings crawl on a small CPU): torch threads,
data workers and the other work already running on the machine never exceed its cores. With more
runnable threads than cores, torch's OpenMP threads wait at the end of every operator for
whichever of them is descheduled. Measured on a shared 2-core machine with other jobs running
(docs/speed.md): TSP-10 training at hidden 256 ran 2,817 examples/s with one torch thread and 41
with two; a single (128 x 256) @ (256 x 1024) matmul ran at 105 GFLOP/s on one thread and 4-6
GFLOP/s on two.

So the automatic choice counts the cores other processes keep busy (sampled over 0.2 s when the
run starts) as taken: a snapshot, whose worst case (a job that starts later) costs what
oversubscription costs, and whose error the other way costs at most a factor of the thread
count; ``--threads`` overrides it.

Under torchrun, the ``ranks`` processes of one machine split its free cores evenly: each rank
plans for its share, so K ranks never oversubscribe the machine together.
"""

from __future__ import annotations

import os
import time

from ptrnet.generation import default_workers as available_cores

# Cores per data worker when the count is automatic. Labelling costs less than the training
# step for the paper's small sizes (docs/speed.md); on 2 cores a worker would take half of the
# cores from the step, which measured slower than labelling between steps.
CORES_PER_WORKER = 4


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
    free = max(1, (cores - (busy_cores() if busy is None else busy)) // ranks)
    workers = auto_workers(free) if workers is None else workers
    threads = threads if threads is not None else max(1, free - workers)
    return threads, workers
