"""The paper's released text format, read and written exactly (Vinyals et al. 2015, Sec. 4).

One instance per line::

    x1 y1 x2 y2 ... xn yn output i1 i2 ... ik

* Coordinates: ``dim`` numbers per point (scalars for sort, pairs for the geometric tasks).
* Indices: 1-based, closing index included where the task closes its output (a hull
  ``1 3 2 1``; a TSP tour has n + 1 indices), Delaunay triangles flattened as triples.
* A line without ``output`` is an unlabelled instance; that is also the plain point-list format
  (one instance per line, coordinates separated by whitespace).
* A task whose instances may state a capacity (``Task.capacity_column``: knapsack) writes it
  after the items, ``w1 v1 ... wn vn capacity C [output ...]``; in memory it is one more
  column (:meth:`Task.with_capacity`). A line without it is under the task's default.
* Blank lines are skipped; line numbers in errors are those of the file. Lines end at ``\n``,
  ``\r\n`` or ``\r``; numbers are ASCII decimals; sizes are bounded (:mod:`ptrnet.io.text`,
  :mod:`ptrnet.io.limits`).

In memory an instance is ``points`` (n, dim) float64 and a label is a 0-based int64 sequence
(see :mod:`ptrnet.tasks.base`). Floats are written with ``repr``, the shortest text that reads
back to the same float64, so a dataset written and read back is identical.

How labels are checked depends on what the file is for (``labels``):

* ``"reference"``: labels required and structurally valid for the task (``task.is_valid``,
  plus n + 1 indices for TSP).
* ``"prediction"``: labels required, integer indices in 1..n; the structure is free, since
  a malformed output (an open hull, a tour with repeats) is what a scorer has to measure.
* ``"optional"``: a line may lack labels (``seq`` is None); present labels are references.
* ``"ignore"``: the ``output`` part is not read; ``seq`` is always None.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Literal, NamedTuple, get_args

import numpy as np

from ptrnet.io.atomic import atomic_write
from ptrnet.io.errors import InputError
from ptrnet.io.limits import MAX_COORDINATE, MAX_LINE_BYTES, MAX_POINTS, QUOTE_CHARS
from ptrnet.io.text import is_number, numbered_lines
from ptrnet.quoting import quote
from ptrnet.tasks.base import Task

OUTPUT = "output"
CAPACITY = "capacity"
FLOAT_CHARS = len(repr(-2.2250738585072014e-308))  # 24: the longest repr of any float64
Labels = Literal["reference", "prediction", "optional", "ignore"]
LABEL_MODES: tuple[str, ...] = get_args(Labels)


class Example(NamedTuple):
    """One parsed line: ``points`` (n, dim) float64, ``seq`` 0-based int64 or None, ``line``."""

    points: np.ndarray
    seq: np.ndarray | None
    line: int


class LineProblem(ValueError):
    """What is wrong with the current line; the caller adds the file and line number."""


def format_line(points: np.ndarray, seq: np.ndarray | None = None, task: Task | None = None) -> str:
    """One line of the paper format (no newline); ``seq`` None writes an unlabelled instance.
    With ``task``, a capacity the instance states is written as ``capacity C``."""
    points = np.asarray(points, dtype=np.float64)
    capacity = None if task is None else task.stated_capacity(points)
    if capacity is not None:
        points = points[:, : task.dim]
    coords = " ".join(map(repr, points.ravel().tolist()))
    if capacity is not None:
        coords = f"{coords} {CAPACITY} {capacity!r}"
    if seq is None:
        return coords
    indices = " ".join(map(str, (np.asarray(seq, dtype=np.int64) + 1).tolist()))
    return f"{coords} {OUTPUT} {indices}".rstrip()


def write_examples(
    path: str | os.PathLike[str],
    examples: Iterable[tuple[np.ndarray, np.ndarray | None]],
    task: Task | None = None,
) -> int:
    """Write ``(points, seq)`` pairs to ``path`` atomically (all or nothing); returns the count.
    With ``task``, capacities the instances state are written (:func:`format_line`)."""
    count = 0
    with atomic_write(path) as stream:
        for points, seq, *_ in examples:
            stream.write(format_line(points, seq, task) + "\n")
            count += 1
    return count


def parse_line(
    text: str, task: Task, labels: Labels, path: str | os.PathLike[str], line: int
) -> Example:
    """Parse one non-blank line for ``task``.

    Raises:
        InputError: ``path:line: problem`` for any malformed content (see module docstring).
    """
    if labels not in LABEL_MODES:
        raise ValueError(f"labels must be one of {LABEL_MODES}, got {quote(labels)}")
    tokens = text.split()
    try:
        if OUTPUT in tokens:
            cut = tokens.index(OUTPUT)
            coords, indices = tokens[:cut], tokens[cut + 1 :]
        else:
            coords, indices = tokens, None
        coords, capacity = _split_capacity(coords, task)
        points = parse_points(coords, task)
        if capacity is not None:
            points = _stating(points, capacity, task)
        if labels == "ignore":
            indices = None
        seq = None if indices is None else _parse_indices(indices, len(points))
        if seq is None and labels in ("reference", "prediction"):
            raise LineProblem(f"no '{OUTPUT}' part: this file needs labels")
        if seq is not None and labels in ("reference", "optional"):
            problem = task.label_problem(points, seq)
            if problem:
                raise LineProblem(problem)
    except LineProblem as err:
        raise InputError(path, line, str(err)) from None
    return Example(points, seq, line)


def _split_capacity(tokens: list[str], task: Task) -> tuple[list[str], str | None]:
    """Coordinate tokens and the capacity token after ``capacity`` (None without one).

    Raises:
        LineProblem: ``capacity`` for a task without one, or not followed by one number last.
    """
    if CAPACITY not in tokens:
        return tokens, None
    if not task.capacity_column:
        raise LineProblem(f"'{CAPACITY}' on a line of task {task.name}, which has none")
    cut = tokens.index(CAPACITY)
    rest = tokens[cut + 1 :]
    if len(rest) != 1 or not is_number(rest[0]):
        shown = quote(" ".join(rest), QUOTE_CHARS) if rest else "nothing"
        raise LineProblem(
            f"'{CAPACITY}' takes one number after the items (before '{OUTPUT}'), got {shown}"
        )
    return tokens[:cut], rest[0]


def _stating(points: np.ndarray, capacity: str, task: Task) -> np.ndarray:
    """``points`` stating the capacity token (:meth:`Task.with_capacity`)."""
    try:
        return task.with_capacity(points, float(capacity))
    except ValueError as err:
        raise LineProblem(str(err)) from None


def parse_points(tokens: list[str], task: Task, min_n: int | None = None) -> np.ndarray:
    """Coordinate tokens -> (n, dim) float64: ASCII numbers within ``MAX_COORDINATE``,
    ``min_n <= n <= MAX_POINTS`` (``min_n`` default: ``task.min_n``).

    Raises:
        LineProblem: what is wrong, without a location.
    """
    if not tokens:
        raise LineProblem("no coordinates")
    bad = next((i for i, tok in enumerate(tokens) if not is_number(tok)), None)
    if bad is not None:
        raise LineProblem(
            f"coordinate {bad + 1} is {quote(tokens[bad], QUOTE_CHARS)}, not a number"
        )
    if len(tokens) > MAX_POINTS * task.dim:
        raise LineProblem(
            f"{len(tokens)} coordinates; the limit is {MAX_POINTS} points per instance"
        )
    values = np.array(tokens, dtype=np.float64)
    outside = ~(np.abs(values) <= MAX_COORDINATE)  # also catches inf and nan
    if outside.any():
        bad = int(np.flatnonzero(outside)[0])
        raise LineProblem(
            f"coordinate {bad + 1} is {quote(tokens[bad], QUOTE_CHARS)}; coordinates must be "
            f"finite and within +-{MAX_COORDINATE:g}"
        )
    if len(values) % task.dim:
        raise LineProblem(
            f"{len(values)} coordinates, not a multiple of {task.dim} "
            f"({task.dim}-D points for task {task.name})"
        )
    points = values.reshape(-1, task.dim)
    min_n = task.min_n if min_n is None else min_n
    if len(points) < min_n:
        raise LineProblem(f"{len(points)} points; task {task.name} needs at least {min_n}")
    return points


def _parse_indices(tokens: list[str], n: int) -> np.ndarray:
    """1-based index tokens -> 0-based int64, each an integer in 1..n."""
    for k, tok in enumerate(tokens):
        if not (tok.isascii() and tok.isdigit()):
            raise LineProblem(
                f"output index {k + 1} is {quote(tok, QUOTE_CHARS)}, not an integer in 1..{n}"
            )
    for k, tok in enumerate(tokens):
        if len(tok.lstrip("0")) > len(str(n)) or not 1 <= int(tok) <= n:  # bounded int()
            hint = " (indices are 1-based)" if tok.strip("0") == "" else ""
            raise LineProblem(
                f"output index {k + 1} is {quote(tok, QUOTE_CHARS)}, out of range 1..{n}{hint}"
            )
    return np.array([int(tok) for tok in tokens], dtype=np.int64) - 1


def iter_examples(
    path: str | os.PathLike[str], task: Task, labels: Labels = "reference"
) -> Iterator[Example]:
    """Parse ``path`` line by line (see module docstring for ``labels``).

    Raises:
        InputError: on the first malformed line, an unreadable file, or a file with no instances.
    """
    found = False
    for line, text in numbered_lines(path):
        if text.strip():
            found = True
            yield parse_line(text, task, labels, path, line)
    if not found:
        raise InputError(path, 1, "empty file: no instances")


def read_examples(
    path: str | os.PathLike[str], task: Task, labels: Labels = "reference"
) -> list[Example]:
    """All examples of ``path`` as a list; see :func:`iter_examples`."""
    return list(iter_examples(path, task, labels))


def line_bytes_bound(task: Task, n: int) -> int:
    """An upper bound on the bytes of one labelled line of ``task`` with ``n`` points in the
    paper's format: ``n * dim`` coordinates of at most :data:`FLOAT_CHARS` characters each,
    `` output``, and ``task.max_steps(n)`` indices of at most ``len(str(n))`` digits, each
    after a space."""
    coordinates = n * task.dim * (FLOAT_CHARS + 1) - 1
    if task.capacity_column:  # " capacity C"
        coordinates += len(CAPACITY) + FLOAT_CHARS + 2
    return coordinates + len(OUTPUT) + 1 + task.max_steps(n) * (len(str(n)) + 1)


def largest_readable_n(task: Task) -> int:
    """The largest n whose labelled line every reader takes back: :func:`line_bytes_bound`
    within :data:`~ptrnet.io.limits.MAX_LINE_BYTES`, and n <= ``MAX_POINTS``."""
    low, high = task.min_n, MAX_POINTS  # the bound grows with n: bisect for the last n that fits
    while low < high:
        middle = (low + high + 1) // 2
        if line_bytes_bound(task, middle) <= MAX_LINE_BYTES:
            low = middle
        else:
            high = middle - 1
    return low
