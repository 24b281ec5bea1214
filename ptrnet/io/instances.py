"""Unlabelled instances from every input layout ptrnet accepts.

Layouts (``FORMATS``; ``auto`` picks by extension, then by content):

* ``paper``: the paper's format, one instance per line (``x1 y1 ... xn yn [output ...]``; the
  ``output`` part is ignored). Errors are located by line.
* ``points``: one point per line (``x y``, or one number for sort), one instance per file: what
  ``np.savetxt`` writes. ``auto`` takes a text file for this layout when its first two
  non-blank lines each hold exactly one point (``--format paper`` overrides).
* ``csv`` (``.csv``): one point per row, comma-separated, with or without a header row. The
  first row is a header only when none of its cells is a number; otherwise it is data, and a
  bad cell in it is an error at line 1.
* ``npy`` (``.npy``): an (n, dim) array (one instance), (B, n, dim) (B instances; errors name
  instance k as ``FILE:k``) or, for sort, (n,); no pickles.
* ``tsplib`` (``.tsp``, task tsp): EUC_2D coordinates (:mod:`ptrnet.io.tsplib`). ``auto`` also
  takes a file without one of the extensions above for TSPLIB when its first non-blank line
  starts with a TSPLIB keyword (``NAME``, ``TYPE``, ``COMMENT``, ``DIMENSION``,
  ``EDGE_WEIGHT_TYPE`` ...) followed by ``:`` or a space: a ``.tsp`` file given through a pipe
  or ``<(...)``, whose name says nothing.

Points come back in the input's own units; :mod:`ptrnet.io.unit_square` maps them for a model.
Every layout applies the same limits (:mod:`ptrnet.io.limits`). An input that can be read only
once (a pipe, ``/dev/stdin``, ``<(...)``) is read whole into memory first
(:func:`ptrnet.io.text.hold_input`), so detecting its layout consumes nothing and it reads
exactly as the same bytes in a file would.
"""

from __future__ import annotations

import io
import os
import re
import stat
from itertools import islice
from typing import NamedTuple

import numpy as np

from ptrnet.io.errors import InputError, UsageError
from ptrnet.io.limits import MAX_COORDINATE, MAX_POINTS
from ptrnet.io.paper_format import LineProblem, iter_examples, parse_points
from ptrnet.io.text import HeldInput, check_file_size, hold_input, is_number, numbered_lines
from ptrnet.io.tsplib import read_tsplib
from ptrnet.quoting import quote
from ptrnet.tasks import Task

FORMATS = ("auto", "paper", "points", "csv", "npy", "tsplib")
EXTENSIONS = {".tsp": "tsplib", ".csv": "csv", ".npy": "npy"}
# The specification keywords of a TSPLIB header (TSPLIB 95, section 1.1), one of which opens
# every TSPLIB file; a line of numbers (the other text layouts) never starts with one.
TSPLIB_START = re.compile(
    r"(NAME|TYPE|COMMENT|DIMENSION|CAPACITY|EDGE_WEIGHT_TYPE|EDGE_WEIGHT_FORMAT|"
    r"EDGE_DATA_FORMAT|NODE_COORD_TYPE|DISPLAY_DATA_TYPE|NODE_COORD_SECTION)(\s|:|$)",
    re.IGNORECASE,
)
LAYOUTS = (
    "expected one of: the paper's format (one instance per line, 'x1 y1 ... xn yn'), "
    "one point per line ('x y'), .csv (one point per row, optional header), "
    ".npy ((n, dim) or (B, n, dim)), TSPLIB .tsp"
)


class Instance(NamedTuple):
    """``points`` (n, dim) float64 in the input's units; ``line``: where it starts, or None."""

    points: np.ndarray
    line: int | None


def is_tsplib(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a TSPLIB file: by its extension (``.tsp``; never ``.csv`` or
    ``.npy``), else by its content (:func:`starts_like_tsplib`) when that can be read without
    consuming it: a regular file, or an input held in memory (:func:`ptrnet.io.text.hold_input`).
    A pipe not held yet is not read (False); an unreadable file is False, for its reader to
    report."""
    extension = os.path.splitext(os.fspath(path))[1].lower()
    if extension in EXTENSIONS:
        return EXTENSIONS[extension] == "tsplib"
    if not isinstance(path, HeldInput):
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                return False
        except OSError:
            return False
    try:
        return starts_like_tsplib(path)
    except InputError:
        return False


def starts_like_tsplib(path: str | os.PathLike[str]) -> bool:
    """Whether the first non-blank line of ``path`` starts with a TSPLIB keyword
    (:data:`TSPLIB_START`). Reads ``path`` (a :class:`~ptrnet.io.text.HeldInput`: its bytes).

    Raises:
        InputError: an unreadable file, or a first line that is not UTF-8 or is too long.
    """
    first = next((text.strip() for _, text in numbered_lines(path) if text.strip()), "")
    return TSPLIB_START.match(first) is not None


def read_instances(path: str | os.PathLike[str], task: Task, fmt: str = "auto") -> list[Instance]:
    """The instances in ``path``, in file order, in layout ``fmt`` (see module docstring).

    A pipe or other stream is read once, into memory (see module docstring).

    Raises:
        UsageError: an unknown ``fmt``, or a TSPLIB file for a task other than tsp.
        InputError: a malformed or oversized file (names the file and line; in ``auto``, a
            file that fits no layout also names the layouts expected).
    """
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {quote(fmt)}; choose from {', '.join(FORMATS)}")
    path = hold_input(path)
    detected = fmt if fmt != "auto" else _detect(path, task)
    try:
        return _READERS[detected](path, task)
    except InputError as err:
        if fmt != "auto" or detected != "paper" or (err.line or 1) > 1:
            raise
        raise InputError(err.path, err.line, f"{err.problem}; {LAYOUTS}") from None


def read_points(path: str | os.PathLike[str], task: Task, fmt: str = "auto") -> list[np.ndarray]:
    """The (n, dim) arrays of :func:`read_instances`."""
    return [instance.points for instance in read_instances(path, task, fmt)]


def _detect(path: str | os.PathLike[str], task: Task) -> str:
    """The layout of ``path``: by extension, else ``tsplib``, ``points`` or ``paper`` by
    content."""
    extension = os.path.splitext(os.fspath(path))[1].lower()
    if extension in EXTENSIONS:
        return EXTENSIONS[extension]
    if starts_like_tsplib(path):
        return "tsplib"
    lines = (text.split() for _, text in numbered_lines(path))
    first_two = list(islice((tokens for tokens in lines if tokens), 2))
    one_point = len(first_two) == 2 and all(len(tokens) == task.dim for tokens in first_two)
    return "points" if one_point else "paper"


def _read_paper(path: str | os.PathLike[str], task: Task) -> list[Instance]:
    return [Instance(ex.points, ex.line) for ex in iter_examples(path, task, "ignore")]


def _read_points(path: str | os.PathLike[str], task: Task) -> list[Instance]:
    rows = [(line, text.split()) for line, text in numbered_lines(path) if text.strip()]
    return [_one_instance(path, task, rows)]


def _read_csv(path: str | os.PathLike[str], task: Task) -> list[Instance]:
    rows = [(line, [c.strip() for c in text.split(",")]) for line, text in numbered_lines(path)]
    rows = [(line, cells) for line, cells in rows if cells != [""]]
    if rows and _is_header(rows[0][1]):
        rows = rows[1:]
    return [_one_instance(path, task, rows)]


def _is_header(cells: list[str]) -> bool:
    """Whether a first CSV row names the columns: none of its cells is a number. A row with a
    number in it is data (``0.1,0.2x`` is a typo to report, not a header to drop)."""
    return not any(is_number(cell) for cell in cells)


def _one_instance(
    path: str | os.PathLike[str], task: Task, rows: list[tuple[int, list[str]]]
) -> Instance:
    """One instance from rows of ``task.dim`` numbers each, located by line."""
    if not rows:
        raise InputError(path, 1, "empty file: no points")
    if len(rows) > MAX_POINTS:
        raise InputError(path, rows[MAX_POINTS][0], f"more than {MAX_POINTS} points, the limit")
    for line, cells in rows:
        try:
            if len(cells) != task.dim:
                raise LineProblem(f"{len(cells)} values; a {task.name} point has {task.dim}")
            parse_points(cells, task, min_n=1)
        except LineProblem as err:
            raise InputError(path, line, str(err)) from None
    tokens = [cell for _, cells in rows for cell in cells]
    try:
        return Instance(parse_points(tokens, task), rows[0][0])
    except LineProblem as err:
        raise InputError(path, None, str(err)) from None


def _read_npy(path: str | os.PathLike[str], task: Task) -> list[Instance]:
    check_file_size(path)
    source = io.BytesIO(path.data) if isinstance(path, HeldInput) else path
    try:
        array = np.load(source, allow_pickle=False)
    except (OSError, ValueError, EOFError) as err:
        reason = " ".join(str(err).split())[:80]
        raise InputError(path, None, f"not a .npy array file ({reason})") from None
    if not isinstance(array, np.ndarray) or array.dtype.kind not in "iuf":
        raise InputError(path, None, "not a .npy array of real numbers")
    shape = array.shape
    if task.dim == 1 and array.ndim == 1:
        array = array[:, None]
    if array.ndim == 2:
        array = array[None]
    if array.ndim != 3 or array.shape[2] != task.dim:
        expected = "(n, dim) or (B, n, dim)" + (" or (n,)" if task.dim == 1 else "")
        raise InputError(
            path, None, f"array of shape {shape}; expected {expected} with dim = {task.dim}"
        )
    return [_checked_array(path, task, points, k + 1) for k, points in enumerate(array)]


def _checked_array(path: str | os.PathLike[str], task: Task, points: np.ndarray, k: int):
    """Instance ``k`` of a .npy file, checked like a line of text."""
    points = points.astype(np.float64)
    outside = ~(np.abs(points) <= MAX_COORDINATE)
    if outside.any():
        raise InputError(path, k, f"coordinates must be finite and within +-{MAX_COORDINATE:g}")
    if not task.min_n <= len(points) <= MAX_POINTS:
        raise InputError(
            path, k, f"{len(points)} points; task {task.name} takes {task.min_n}..{MAX_POINTS}"
        )
    return Instance(points, k)


def _read_tsplib(path: str | os.PathLike[str], task: Task) -> list[Instance]:
    if task.name != "tsp":
        raise UsageError(f"a TSPLIB file is a tsp instance, not a {task.name} one")
    return [Instance(read_tsplib(path).coords, None)]


_READERS = {
    "paper": _read_paper,
    "points": _read_points,
    "csv": _read_csv,
    "npy": _read_npy,
    "tsplib": _read_tsplib,
}
