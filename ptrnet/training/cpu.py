"""How a training run splits the CPU cores between torch threads and data worker processes.

The rule is no oversubscription (PAPER.md trap 10): torch threads, data workers and the other
work already running on the machine never exceed its cores. With more runnable threads than
cores, torch's OpenMP threads wait at the end of every operator for whichever of them is
descheduled. Measured on a shared 2-core machine with other jobs running (docs/speed.md): TSP-10
training at hidden 256 ran 2,817 examples/s with one torch thread and 41 with two; a single
(128 x 256) @ (256 x 1024) matmul ran at 105 GFLOP/s on one thread and 4-6 GFLOP/s on two.

So the automatic choice counts the cores other processes keep busy (the 1-minute load average,
rounded) as taken: a conservative estimate whose worst case costs a factor of the thread
count, against a factor of up to 70 for oversubscribing.
"""

from __future__ import annotations

import os

from ptrnet.generation import default_workers as available_cores

# Cores per data worker when the count is automatic. Labelling costs less than the training
# step for the paper's small sizes (docs/speed.md); on 2 cores a worker would take half of the
# cores from the step, which measured slower than labelling between steps.
CORES_PER_WORKER = 4


def auto_workers(cores: int) -> int:
    """Data workers for ``cores`` cores: one per CORES_PER_WORKER, none below that."""
    return cores // CORES_PER_WORKER


def busy_cores() -> int:
    """Cores other processes keep busy now: the 1-minute load average, rounded (0 if unknown)."""
    try:
        return round(os.getloadavg()[0])
    except OSError:  # not available on this platform
        return 0


def cpu_plan(
    threads: int | None, workers: int | None, cores: int | None = None, busy: int | None = None
) -> tuple[int, int]:
    """(torch threads, data workers) for a run.

    Args:
        threads, workers: the configured values; None = automatic.
        cores: cores available (default: this process's CPU affinity).
        busy: cores taken by other processes (default: :func:`busy_cores`).

    Returns:
        ``workers`` or :func:`auto_workers` of the free cores, and ``threads`` or the free cores
        the workers leave (at least 1).
    """
    cores = cores or available_cores()
    free = max(1, cores - (busy_cores() if busy is None else busy))
    workers = auto_workers(free) if workers is None else workers
    threads = threads if threads is not None else max(1, free - workers)
    return threads, workers
