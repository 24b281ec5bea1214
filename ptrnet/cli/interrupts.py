"""``ptrnet train``'s stops, for every task: SIGTERM turned into a request the training loop
polls, and the note an interrupted run prints (what it keeps, the command that continues it);
:func:`run_stoppable` puts the two around a training."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from ptrnet.io.errors import UsageError

EXIT_SIGTERM = 128 + signal.SIGTERM  # what a shell reports for a command SIGTERM ended
R = TypeVar("R")


@contextmanager
def sigterm_requests() -> Iterator[Callable[[], bool]]:
    """Within the block SIGTERM no longer ends the process: it sets a flag, and the function
    yielded says whether it is set (training's ``should_stop``). The previous handler is back
    after the block. Outside the main thread, where Python sets no handlers, SIGTERM keeps its
    handler and the flag stays down.

    SIGTERM sent to the whole process group (``timeout``, Slurm) also ends the data workers;
    training reports their death as this stop, however the two land
    (:func:`ptrnet.training.workers.stop_explains`).
    """
    asked = threading.Event()

    def request(signum: int, frame: object) -> None:
        asked.set()

    if threading.current_thread() is not threading.main_thread():
        yield asked.is_set
        return
    previous = signal.signal(signal.SIGTERM, request)
    try:
        yield asked.is_set
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


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


def run_stoppable(train: Callable[[Callable[[], bool]], R], task: str, out: str) -> R | int:
    """``train(should_stop)`` with SIGTERM as its stop request (:func:`sigterm_requests`): its
    result, or :data:`EXIT_SIGTERM` once SIGTERM stopped it (the note printed on stderr by
    rank 0). Ctrl-C prints the note and propagates.

    Raises:
        UsageError: the run directory cannot be used (RunDirError: another run in it, or none
            to resume).
    """
    import sys

    from ptrnet.runs import RunDirError
    from ptrnet.training.runloop import TrainingStopped

    try:
        with sigterm_requests() as sigterm:
            return train(sigterm)
    except RunDirError as err:
        raise UsageError(str(err)) from None
    except TrainingStopped as stopped:
        if stopped.rank == 0:
            print(interrupted_note(task, out, "SIGTERM"), file=sys.stderr)
        return EXIT_SIGTERM
    except KeyboardInterrupt:
        print(interrupted_note(task, out, "Ctrl-C"), file=sys.stderr)
        raise
