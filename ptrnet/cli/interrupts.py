"""``ptrnet train``'s stops: SIGTERM turned into a request the training loop polls, and the
note an interrupted run prints (what it keeps, the command that continues it)."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

EXIT_SIGTERM = 128 + signal.SIGTERM  # what a shell reports for a command SIGTERM ended


@contextmanager
def sigterm_requests() -> Iterator[Callable[[], bool]]:
    """Within the block SIGTERM no longer ends the process: it sets a flag, and the function
    yielded says whether it is set (training's ``should_stop``). The previous handlers are
    back after the block. Outside the main thread, where Python sets no handlers, SIGTERM
    keeps its handler and the flag stays down.

    SIGTERM sent to the whole process group (``timeout``, Slurm) also ends the data workers,
    and torch's SIGCHLD handler would then raise about them wherever the main process is; so
    the first SIGTERM sets SIGCHLD's default too, and training's loop ends at its next step or
    when torch finds the batch it waits for lost.
    """
    asked, swapped = threading.Event(), []

    def request(signum: int, frame: object) -> None:
        if not asked.is_set() and hasattr(signal, "SIGCHLD"):
            swapped.append(signal.signal(signal.SIGCHLD, signal.SIG_DFL))
        asked.set()

    if threading.current_thread() is not threading.main_thread():
        yield asked.is_set
        return
    previous = signal.signal(signal.SIGTERM, request)
    try:
        yield asked.is_set
    finally:
        signal.signal(signal.SIGTERM, _settable(previous))
        for handler in swapped:
            signal.signal(signal.SIGCHLD, _settable(handler))


def _settable(handler: object) -> object:
    """``handler`` as ``signal.signal`` takes it: None (one not set from Python, which cannot
    be put back) becomes the default."""
    return signal.SIG_DFL if handler is None else handler


def interrupted_note(task: str, out: str, cause: str = "Ctrl-C") -> str:
    """What a run interrupted by ``cause`` (``Ctrl-C``, ``SIGTERM``) keeps, and how to
    continue it."""
    from ptrnet.runs import LAST

    if not os.path.exists(os.path.join(out, LAST)):
        return (
            f"ptrnet: interrupted ({cause}) before the first validation: nothing of {out} to resume"
        )
    return (
        f"ptrnet: interrupted ({cause}); {out} keeps its checkpoint of the last validation "
        f"(ptrnet train {task} --resume --out {out} continues from it)"
    )
