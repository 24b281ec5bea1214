"""One instance gathered a row at a time (the point-list and CSV layouts of
:mod:`ptrnet.io.instances`): each row checked as it is read, the numbers parsed in blocks into
float64, so what a file holds in memory is bounded by :data:`~ptrnet.io.limits.MAX_POINTS`
points, not by its size, and a file over the limit is refused at the first row past it."""

from __future__ import annotations

import os

import numpy as np

from ptrnet.io.errors import InputError
from ptrnet.io.limits import MAX_POINTS
from ptrnet.io.paper_format import LineProblem, parse_points
from ptrnet.tasks import Task

BLOCK_ROWS = 4_096  # rows parsed together: their tokens are the only Python strings held


class PointRows:
    """The points of one instance, added row by row (:meth:`add`), read back by :meth:`points`.

    Every problem is an :class:`~ptrnet.io.errors.InputError` at its row's line, the first in
    file order: a row of other than ``dim`` values, a token that is not a number or is out of
    range (as :func:`~ptrnet.io.paper_format.parse_points` words it), a row past the limit.
    """

    def __init__(self, path: str | os.PathLike[str], task: Task) -> None:
        self.path = path
        self.task = task
        self.count = 0
        self.first_line: int | None = None
        self._pending: list[tuple[int, list[str]]] = []  # rows not parsed yet
        self._blocks: list[np.ndarray] = []  # (rows, dim) float64 each

    def add(self, line: int, cells: list[str]) -> None:
        """Take the row at ``line``, whose ``cells`` are its coordinates.

        Raises:
            InputError: an earlier row's bad number, this row's number of values, or a row
                past :data:`~ptrnet.io.limits.MAX_POINTS`.
        """
        if self.count == MAX_POINTS or len(cells) != self.task.dim:
            self.parse_pending()  # an earlier row's bad number is the first problem
            if self.count == MAX_POINTS:
                raise InputError(self.path, line, f"more than {MAX_POINTS} points, the limit")
            raise InputError(
                self.path,
                line,
                f"{len(cells)} values; a {self.task.name} point has {self.task.dim}",
            )
        if self.first_line is None:
            self.first_line = line
        self._pending.append((line, cells))
        self.count += 1
        if len(self._pending) == BLOCK_ROWS:
            self.parse_pending()

    def points(self) -> np.ndarray:
        """All rows as an (n, dim) float64 array.

        Raises:
            InputError: no rows (``FILE:1: empty file: no points``), a bad number in the last
                rows, or fewer points than the task takes.
        """
        self.parse_pending()
        if not self.count:
            raise InputError(self.path, 1, "empty file: no points")
        if self.count < self.task.min_n:
            raise InputError(
                self.path,
                None,
                f"{self.count} points; task {self.task.name} needs at least {self.task.min_n}",
            )
        return np.concatenate(self._blocks)

    def parse_pending(self) -> None:
        """Parse the rows added and not parsed yet, as one block.

        Raises:
            InputError: the first of them with a bad number, at its line.
        """
        if not self._pending:
            return
        tokens = [cell for _, cells in self._pending for cell in cells]
        try:
            self._blocks.append(parse_points(tokens, self.task, min_n=1))
        except LineProblem:
            for line, cells in self._pending:  # the message is the row's own, at its line
                try:
                    parse_points(cells, self.task, min_n=1)
                except LineProblem as err:
                    raise InputError(self.path, line, str(err)) from None
            raise
        self._pending = []
