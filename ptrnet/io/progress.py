"""What a long command says while it runs, the same way for every command and task.

On a terminal a :class:`Progress` draws a tqdm bar on stderr. Elsewhere (a pipe, a file, nohup,
a notebook) it prints one plain line every :func:`interval_s` seconds, and at once when the caller
asks (:meth:`Progress.show`, e.g. after a validation)::

    ptrnet: train sort: step 1,200/3,000 (40%), 410 examples/s, loss 0.3121,
    val exact_match 87.30%, ETA 1m05s  (one line)

Fields a command does not have are left out: ``generate`` counts instances and has no loss. The
rate and ETA are measured over this session (a resumed run starts counting again), from the
moment the :class:`Progress` is made, so a slow first step and any validation count.
``PTRNET_PROGRESS_INTERVAL`` sets the interval in seconds (default 10; 0 prints a line at every
update, for tests).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TextIO, TypeVar

from ptrnet.io.errors import UsageError
from ptrnet.quoting import quote

T = TypeVar("T")

INTERVAL_ENV = "PTRNET_PROGRESS_INTERVAL"
DEFAULT_INTERVAL_S = 10.0


def interval_s() -> float:
    """Seconds between two plain lines: ``PTRNET_PROGRESS_INTERVAL``, else 10.

    Raises:
        UsageError: the variable is set to something other than a number >= 0.
    """
    text = os.environ.get(INTERVAL_ENV, "").strip()
    if not text:
        return DEFAULT_INTERVAL_S
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:  # also refuses nan
        raise UsageError(f"{INTERVAL_ENV}={quote(text)}: expected a number of seconds >= 0")
    return value


def duration(seconds: float) -> str:
    """``3h02m``, ``4m05s`` or ``12s``."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class Progress:
    """Progress of one command over ``total`` units (steps, instances); None = unknown total.

    Args:
        label: what runs, e.g. ``train sort`` (the line's prefix after ``ptrnet:``).
        total: the units at the end (the line shows ``done/total`` and an ETA), or None.
        unit: the counted unit, e.g. ``step`` or ``instance``.
        done: units already done before this session (a resumed run's step).
        enabled: False shows nothing (``--quiet``, or a rank other than 0).
        stream: where to write (default: ``sys.stderr`` at construction).
        clock: seconds, monotonic (tests pass a fake one).
    """

    def __init__(
        self,
        label: str,
        total: int | None,
        unit: str = "step",
        *,
        done: int = 0,
        enabled: bool = True,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label, self.total, self.unit, self.done = label, total, unit, done
        self.stream = stream or sys.stderr
        self.enabled, self.clock = enabled, clock
        self.fields: dict[str, str] = {}
        self.interval = interval_s() if enabled else DEFAULT_INTERVAL_S
        self.start = self.last_line = clock()
        self.units = self.examples = 0
        self.losses: list[float] = []
        self.bar = None
        if enabled and self.stream.isatty():
            from tqdm import tqdm  # only a terminal shows a bar: pipes and CI never load it

            self.bar = tqdm(
                total=total, initial=done, unit=unit, desc=label, file=self.stream,
                dynamic_ncols=True,
            )  # fmt: skip

    def update(self, count: int = 1, examples: int = 0, loss: float | None = None) -> None:
        """Count ``count`` more units (holding ``examples`` training examples, for a rate in
        examples/s; 0 = a rate in units/s) and the loss of the last one (the line shows the mean
        since the previous line); print a line if the interval has passed."""
        self.done += count
        self.units += count
        self.examples += examples
        if loss is not None:
            self.losses.append(loss)
        if self.bar is not None:
            self.bar.update(count)
        elif self.enabled and self.clock() - self.last_line >= self.interval:
            self.show()

    def note(self, name: str, value: str) -> None:
        """Show ``name value`` (e.g. ``val accuracy 87.30%``; the caller formats the value, a
        metric as :func:`ptrnet.evaluation.score.metric_text` does) from now on, replacing an
        earlier value of that name."""
        self.fields[name] = value
        if self.bar is not None:
            self.bar.set_postfix(self.fields)

    def show(self) -> None:
        """Print the plain line now (nothing on a terminal, whose bar is already up to date)."""
        if not self.enabled or self.bar is not None:
            return
        print(f"ptrnet: {self.label}: {self.line()}", file=self.stream, flush=True)
        self.last_line, self.losses = self.clock(), []

    def line(self) -> str:
        """The line's fields: count, rate, mean loss, the noted fields, ETA."""
        elapsed = self.clock() - self.start
        parts = [f"{self.unit} {self.done:,}"]
        if self.total:
            parts[0] += f"/{self.total:,} ({100 * self.done / self.total:.0f}%)"
        if elapsed > 0 and self.units:
            rate, unit = (self.examples, "example") if self.examples else (self.units, self.unit)
            parts.append(f"{rate / elapsed:,.{1 if rate / elapsed < 10 else 0}f} {unit}s/s")
        if self.losses:
            parts.append(f"loss {sum(self.losses) / len(self.losses):.4f}")
        parts += [f"{name} {value}" for name, value in self.fields.items()]
        if self.total and self.units and elapsed > 0:
            left = max(0, self.total - self.done) * elapsed / self.units
            parts.append(f"ETA {duration(left)}")
        return ", ".join(parts)

    def close(self) -> None:
        """End the bar (a terminal); plain lines need no ending."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def counted(items: Iterable[T], progress: Progress) -> Iterator[T]:
    """``items``, counting each one yielded on ``progress`` and closing it at the end."""
    with progress:
        for item in items:
            yield item
            progress.update(1)
