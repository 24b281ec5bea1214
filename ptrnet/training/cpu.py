"""How a training run splits the CPU cores between torch threads and data worker processes.

The rule is no oversubscription (PAPER.md trap 10): torch threads plus worker processes never
exceed the cores this process may use. With more runnable threads than cores, torch's OpenMP
threads wait for one another at the end of every operator while one of them is descheduled; on
a 2-core machine a (128 x 256) @ (256 x 1024) matmul ran at 105 GFLOP/s on one thread and at
4-6 GFLOP/s on two threads while another process kept one core busy (docs/speed.md).
"""

from __future__ import annotations

from ptrnet.generation import default_workers as available_cores

# Cores per data worker when the count is automatic: labelling a batch costs a fraction of a
# training step (docs/speed.md), so one worker keeps up with several torch threads.
CORES_PER_WORKER = 4


def auto_workers(cores: int) -> int:
    """Data workers for ``cores`` cores: one per CORES_PER_WORKER, none below that (on two
    cores a worker would take half of the cores from the training step)."""
    return cores // CORES_PER_WORKER


def cpu_plan(threads: int | None, workers: int | None, cores: int | None = None) -> tuple[int, int]:
    """(torch threads, data workers) for a run.

    Args:
        threads, workers: the configured values; None = automatic.
        cores: cores available (default: this process's CPU affinity).

    Returns:
        ``workers`` or :func:`auto_workers`, and ``threads`` or the cores the workers leave
        (at least 1).
    """
    cores = cores or available_cores()
    workers = auto_workers(cores) if workers is None else workers
    threads = threads if threads is not None else max(1, cores - workers)
    return threads, workers
