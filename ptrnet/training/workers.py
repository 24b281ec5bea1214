"""Data workers' deaths while training: which errors they raise, whether a stop request explains
them (a SIGTERM to the whole process group also ends the workers), and
:class:`QuietWorkerDeaths`, which keeps torch's SIGCHLD handler from raising mid-step."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from ptrnet.datasets.batching import Batch

WORKER_ERRORS = (RuntimeError, OSError, EOFError)
"""What :meth:`ptrnet.training.data.TrainingData.batches` raises when a data worker has died:
torch's "DataLoader worker exited unexpectedly" (RuntimeError), or, when the worker died while
handing over a batch, the socket or pipe that carried it (ConnectionResetError, EOFError) before
torch noticed."""

STOP_GRACE_S = 2.0
"""How long an error from the data workers waits for a stop request that would explain it."""


def stop_explains(should_stop: Callable[[], bool] | None, workers: int) -> bool:
    """Whether a stop was requested, so that one of :data:`WORKER_ERRORS` raised while training
    is that stop's doing rather than a failure: a SIGTERM sent to the whole process group (as by
    ``timeout`` or Slurm) also ends the data workers, and their death can reach the main process
    before the signal's own handler has run. With ``workers`` > 0 the request gets
    :data:`STOP_GRACE_S` to arrive (Ctrl-C raises KeyboardInterrupt meanwhile); without, it is
    asked once.
    """
    if should_stop is None:
        return False
    deadline = time.monotonic() + (STOP_GRACE_S if workers else 0.0)
    while not should_stop():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)
    return True


class QuietWorkerDeaths:
    """``batches`` (from data workers, the loader already started), during whose iteration a
    worker's death is reported only where a batch is awaited (``next``, within seconds, as one
    of :data:`WORKER_ERRORS`), not by torch's SIGCHLD handler, which raises wherever the main
    process happens to be: in a training step, a checkpoint write, or while the loop waits for
    the stop request that a SIGTERM to the whole process group is about to deliver
    (:func:`stop_explains`). The handler is back once the batches run out or are closed, which
    also ends the workers; an error does not end the quiet, as the loop still has to settle it.
    Outside the main thread, where Python sets no handlers, nothing changes."""

    def __init__(self, batches: Any, loader_iterator: Any) -> None:
        self._batches = batches
        self._loader_iterator = loader_iterator
        self._quiet = threading.current_thread() is threading.main_thread()
        self._handler = signal.signal(signal.SIGCHLD, signal.SIG_DFL) if self._quiet else None

    def __iter__(self) -> QuietWorkerDeaths:
        return self

    def __next__(self) -> Batch:
        try:
            return next(self._batches)
        except StopIteration:
            self.close()
            raise

    def close(self) -> None:
        """End the workers, then give SIGCHLD its handler back (once).

        The loader's iterator is shut down here, not left to its garbage collection: an error
        that ended training can keep it alive through its traceback, and torch's handler, back
        while the iterator still lists its workers, raises when a dead worker's SIGCHLD arrives
        (a SIGTERM to the process group ends the workers late, in the middle of the clean stop).
        Shut down, the iterator lists none. Without torch's private ``_shutdown_workers``
        the handler stays off (torch then notices dead workers by its periodic status check)."""
        self._batches.close()
        shutdown = getattr(self._loader_iterator, "_shutdown_workers", None)
        self._loader_iterator = None
        if shutdown is None:
            self._quiet = False
            return
        shutdown()
        if self._quiet:
            self._quiet = False
            handler = self._handler
            signal.signal(signal.SIGCHLD, signal.SIG_DFL if handler is None else handler)
