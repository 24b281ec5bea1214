"""The run's CSV log: one row per logging interval or validation, flushed as it is written.

Columns: ``step`` (optimiser steps done), ``loss`` (mean
teacher-forced training loss over the interval), ``lr``, ``examples_per_s`` (training throughput
over the interval, validation excluded), ``elapsed_s``, ``val_tf_loss`` (teacher-forced loss on
the validation set, labelled so because it is *not* a decoded metric: checkpoints are never
picked on it), then the task's decoded validation metrics as ``val_<key>``. Columns without a
value in a row are empty.
"""

from __future__ import annotations

import csv
import errno
import io
import os
from typing import Any

from ptrnet.io.atomic import atomic_write
from ptrnet.io.errors import InputError
from ptrnet.io.text import read_regular_file

BASE_COLUMNS = ("step", "loss", "lr", "examples_per_s", "elapsed_s", "val_tf_loss")


def columns_for(metric_keys: tuple[str, ...]) -> list[str]:
    """All columns of a log for a task with ``metric_keys``."""
    return [*BASE_COLUMNS, *(f"val_{k}" for k in metric_keys)]


class CsvLog:
    """Appends rows to ``path``.

    On a fresh run the file is (re)created with a header. When resuming at ``resume_step`` rows
    logged after that step (written before an interruption, then lost with the model state) are
    dropped, so the log reads as one uninterrupted run.
    """

    def __init__(
        self, path: str | os.PathLike[str], columns: list[str], resume_step: int | None = None
    ) -> None:
        self.path, self.columns = os.fspath(path), columns
        kept = self._kept_rows(resume_step) if resume_step is not None else []
        with atomic_write(self.path) as stream:
            writer = csv.DictWriter(stream, columns)
            writer.writeheader()
            writer.writerows(kept)
        self._stream = open(self.path, "a", encoding="utf-8", newline="")  # noqa: SIM115
        self._writer = csv.DictWriter(self._stream, columns)

    def _kept_rows(self, resume_step: int) -> list[dict[str, str]]:
        """The rows of the existing log up to ``resume_step``.

        Raises:
            InputError: a log without a ``step`` column, or a row whose step is not an integer
                (at its line; the header is line 1).
        """
        if not os.path.exists(self.path):
            return []
        header, rows = read_rows(self.path)
        kept = []
        for line, cells in rows:
            row = dict(zip(header, cells, strict=False))  # a short row lacks its last columns
            try:
                step = int(row["step"])
            except (KeyError, ValueError):
                raise InputError(
                    self.path,
                    line,
                    "no integer step: not a ptrnet training log; repair it or "
                    "move it away to resume",
                ) from None
            if step <= resume_step:
                kept.append({k: row.get(k) or "" for k in self.columns})
        return kept

    def write(self, row: dict[str, Any]) -> None:
        """Append one row; unknown keys raise ValueError, floats are written to 6 significant
        digits (losses, rates) and missing columns are left empty."""
        self._writer.writerow({k: _format(v) for k, v in row.items()})
        self._stream.flush()

    def close(self) -> None:
        self._stream.close()


def _format(value: Any) -> Any:
    if isinstance(value, float):
        return f"{value:.6g}"
    return value


def read_rows(path: str | os.PathLike[str]) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header of the CSV file ``path`` and its non-blank rows, each with its 1-based line
    (the header is line 1; blank lines count).

    Raises:
        FileNotFoundError: no file at ``path``.
        InputError: not a regular file (a FIFO, ``/dev/zero``: refused unread,
            :func:`ptrnet.io.text.read_regular_file`), or a file that is not UTF-8 or not CSV.
    """
    if not os.path.lexists(path):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), os.fspath(path))
    data = read_regular_file(path)
    try:
        reader = csv.reader(io.StringIO(data.decode("utf-8"), newline=""))
        header = next(reader, [])
        rows = [(reader.line_num, cells) for cells in reader if cells]
    except (UnicodeDecodeError, csv.Error) as err:
        raise InputError(path, None, f"not a readable CSV log ({err})") from None
    return header, rows


def read_log(path: str | os.PathLike[str]) -> list[dict[str, str]]:
    """The rows of a log as dicts of strings (empty string = no value)."""
    with open(path, encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream))
