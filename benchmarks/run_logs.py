"""The examples and time a run's ``log.csv`` records, summed over the sittings of a resumed run.

A run resumed in sittings restarts ``elapsed_s``, so a fall of ``elapsed_s`` starts a sitting
and the wall time is the sum of each sitting's last ``elapsed_s``; the training-step time sums
the log's ``examples_per_s`` over each interval (no validation, but any wait for data). Steps
after the last logged row of a run stopped by hand, and rows a resume dropped
(:mod:`ptrnet.runs.csvlog`), are missing from a log, so its totals are lower bounds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ptrnet.runs.csvlog import read_log

RUNS_DIR = Path(__file__).resolve().parent.parent / "docs" / "bundled-runs"


class LogError(ValueError):
    """A run log that cannot be summed; ``str`` is ``FILE:LINE: problem``."""


@dataclass(frozen=True)
class RunRecord:
    """What one run's log records: optimiser steps, sittings, wall and training-step seconds."""

    run: str
    batch_size: int
    steps: int
    sittings: int
    wall_s: float
    train_s: float

    @property
    def examples(self) -> int:
        return self.steps * self.batch_size


def sum_log(rows: list[dict[str, str]], batch_size: int, path: str) -> RunRecord:
    """Sum the rows of one run's ``log.csv`` (module docstring: sittings, lower bounds).

    Raises:
        LogError: a step that does not increase, or a row without a step, time or rate.
    """
    steps = sittings = 0
    wall = train = last = 0.0
    for line, row in enumerate(rows, start=2):  # line 1 is the header
        try:
            step, elapsed = int(row["step"]), float(row["elapsed_s"])
            rate = float(row["examples_per_s"])
        except (KeyError, TypeError, ValueError):
            raise LogError(f"{path}:{line}: no step, elapsed_s or examples_per_s") from None
        if step <= steps or rate <= 0:
            raise LogError(f"{path}:{line}: step {step} after step {steps}, rate {rate}")
        if sittings == 0 or elapsed < last:  # a resumed sitting restarts its clock
            sittings += 1
            last = 0.0
        wall += elapsed - last
        train += (step - steps) * batch_size / rate
        steps, last = step, elapsed
    if sittings == 0:
        raise LogError(f"{path}: no rows")
    return RunRecord(path, batch_size, steps, sittings, wall, train)


def run_config(run: str) -> dict:
    """The saved configuration (``{"model": ..., "train": ...}``) of ``docs/bundled-runs/<run>``."""
    return json.loads((RUNS_DIR / run / "config.json").read_text(encoding="utf-8"))


def read_run(run: str) -> RunRecord:
    """The :class:`RunRecord` of ``docs/bundled-runs/<run>`` (its config.json and log.csv)."""
    batch_size = int(run_config(run)["train"]["batch_size"])
    return sum_log(read_log(RUNS_DIR / run / "log.csv"), batch_size, run)
