"""Unlabelled instances from every input layout ptrnet accepts.

Layouts (``FORMATS``; ``auto`` picks by extension, then by content):

* ``paper``: the paper's format, one instance per line (``x1 y1 ... xn yn [output ...]``). The
  ``output`` part is read as a reference label with ``labels=True`` (a command that compares
  with references), else skipped unread (:attr:`Instance.labelled` says it was there). Errors
  are located by line.
* ``points``: one point per line (``x y``, or one number for sort), one instance per file: what
  ``np.savetxt`` writes. ``auto`` takes a text file for this layout when its first two
  non-blank lines each hold exactly one point (``--format paper`` overrides).
* ``csv`` (``.csv``): one point per row, with or without a header row; the delimiter (comma,
  semicolon or tab) is sniffed (:class:`csv.Sniffer`), cells may be quoted. The first row is a
  header only when none of its cells is a number; otherwise it is data, and a bad cell in it is
  an error at line 1. The coordinates are the columns ``columns`` names (header names or 0-based
  indices, in the order x, y), else the columns holding numbers on the first row, which must
  be ``dim`` of them. One column holding text (the one headed ``name`` if several do) is kept
  as the points' names (:attr:`Instance.names`).
* ``npy`` (``.npy``): an (n, dim) array (one instance), (B, n, dim) (B instances; errors name
  instance k as ``FILE:k``) or, for sort, (n,); no pickles. The header's dtype and shape are
  checked against the limits, and the bytes it declares against the file's, before any array
  is allocated.
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

import csv
import math
import os
import re
import stat
from collections.abc import Sequence
from itertools import islice
from typing import BinaryIO, NamedTuple

import numpy as np

from ptrnet.io.errors import InputError, UsageError
from ptrnet.io.limits import MAX_COORDINATE, MAX_POINTS
from ptrnet.io.paper_format import OUTPUT, LineProblem, parse_line, parse_points
from ptrnet.io.text import (
    HeldInput,
    check_file_size,
    hold_input,
    is_number,
    numbered_lines,
    open_bytes,
)
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
    """One instance as read.

    Attributes:
        points: (n, dim) float64 in the input's units.
        line: where it starts (``.npy``: its index from 1), or None.
        seq: the file's 0-based reference label (paper format, ``labels=True``), else None.
        names: the n point names of a CSV name column, else None.
        labelled: whether the file gave a label (read into ``seq`` or skipped).
    """

    points: np.ndarray
    line: int | None
    seq: np.ndarray | None = None
    names: tuple[str, ...] | None = None
    labelled: bool = False


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


def read_instances(
    path: str | os.PathLike[str],
    task: Task,
    fmt: str = "auto",
    *,
    columns: Sequence[str] | None = None,
    labels: bool = False,
) -> list[Instance]:
    """The instances in ``path``, in file order, in layout ``fmt`` (see module docstring): the
    one reader behind every command that takes instances.

    Args:
        columns: CSV only: the ``dim`` coordinate columns, header names or 0-based indices.
        labels: read paper-format labels as references (checked like ``ptrnet score``'s);
            otherwise they are skipped unread.

    A pipe or other stream is read once, into memory (see module docstring).

    Raises:
        UsageError: an unknown ``fmt``, ``columns`` for a layout other than CSV or not ``dim``
            of them, or a TSPLIB file for a task other than tsp.
        InputError: a malformed or oversized file, or ``columns`` the file does not have
            (names the file and line; in ``auto``, a file that fits no layout also names the
            layouts expected).
    """
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {quote(fmt)}; choose from {', '.join(FORMATS)}")
    if columns is not None and len(columns) != task.dim:
        raise UsageError(
            f"--columns names {len(columns)} column(s); a {task.name} point has {task.dim}"
        )
    path = hold_input(path)
    detected = fmt if fmt != "auto" else _detect(path, task)
    if columns is not None and detected != "csv":
        raise UsageError(f"--columns picks CSV columns; {path} is read as {detected}")
    try:
        if detected == "csv":
            return read_csv(path, task, columns)
        if detected == "paper":
            return _read_paper(path, task, labels)
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


def _read_paper(path: str | os.PathLike[str], task: Task, labels: bool) -> list[Instance]:
    mode = "optional" if labels else "ignore"
    found = []
    for line, text in numbered_lines(path):
        if text.strip():
            example = parse_line(text, task, mode, path, line)
            labelled = example.seq is not None or OUTPUT in text.split()
            found.append(Instance(example.points, line, example.seq, None, labelled))
    if not found:
        raise InputError(path, 1, "empty file: no instances")
    return found


def _read_points(path: str | os.PathLike[str], task: Task) -> list[Instance]:
    rows = [(line, text.split()) for line, text in numbered_lines(path) if text.strip()]
    return [_one_instance(path, task, rows)]


def read_csv(
    path: str | os.PathLike[str], task: Task, columns: Sequence[str] | None = None
) -> list[Instance]:
    """The one instance of the CSV file ``path`` (layout ``csv`` of the module docstring).

    Raises:
        InputError: a malformed file, or ``columns`` it does not have.
    """
    lines = [(line, text) for line, text in numbered_lines(path) if text.strip()]
    if not lines:
        raise InputError(path, 1, "empty file: no points")
    delimiter = _sniff_delimiter([text for _, text in lines[:SNIFF_LINES]])
    rows = [(line, _cells(path, line, text, delimiter)) for line, text in lines]
    header = rows[0][1] if _is_header(rows[0][1]) else None
    body = rows[1:] if header is not None else rows
    if not body:
        raise InputError(path, rows[0][0], "a header row and no points")
    first_line, first = body[0]
    if columns is None:
        picked = _numeric_columns(path, task, body[0])
    else:
        picked = _named_columns(path, (rows[0][0], header or []), body[0], columns)
    name = _name_column(header, first, picked)
    if picked == list(range(len(first))):  # every cell a coordinate: rows checked as points
        coordinates = body
    else:
        for line, cells in body:
            if len(cells) != len(first):
                raise InputError(
                    path, line, f"{len(cells)} values; line {first_line} has {len(first)}"
                )
        coordinates = [(line, [cells[j] for j in picked]) for line, cells in body]
    instance = _one_instance(path, task, coordinates)
    names = None if name is None else tuple(cells[name] for _, cells in body)
    return [instance._replace(names=names)]


SNIFF_LINES = 20  # rows the delimiter is sniffed from
SNIFF_CHARS = 1 << 16  # and at most this much of them (the sniffer's regexes are not linear)
DELIMITERS = ",;\t"


def _sniff_delimiter(texts: list[str]) -> str:
    """The delimiter of the rows ``texts``: one of :data:`DELIMITERS` as :class:`csv.Sniffer`
    finds it, a comma when it finds none (one column, as sort's values)."""
    try:
        return csv.Sniffer().sniff("\n".join(texts)[:SNIFF_CHARS], DELIMITERS).delimiter
    except csv.Error:
        return ","


def _cells(path: str | os.PathLike[str], line: int, text: str, delimiter: str) -> list[str]:
    """The stripped cells of one CSV row (quotes removed)."""
    try:
        return [cell.strip() for cell in next(csv.reader([text], delimiter=delimiter))]
    except csv.Error as err:
        raise InputError(path, line, f"not a CSV row ({err})") from None


def _is_header(cells: list[str]) -> bool:
    """Whether a first CSV row names the columns: none of its cells is a number. A row with a
    number in it is data (``0.1,0.2x`` is a typo to report, not a header to drop)."""
    return not any(is_number(cell) for cell in cells)


Row = tuple[int, list[str]]  # a CSV row: its line number and its cells


def _numeric_columns(path: str | os.PathLike[str], task: Task, first: Row) -> list[int]:
    """The coordinate columns when none are named: those holding numbers on the ``first`` data
    row, which must be ``dim`` of them; all columns when fewer are (a typo, or too few values,
    then reported as a point's).

    Raises:
        InputError: more numbers than ``dim`` (naming ``--columns``).
    """
    line, cells = first
    numeric = [j for j, cell in enumerate(cells) if is_number(cell)]
    if len(numeric) == task.dim:
        return numeric
    if len(numeric) < task.dim:
        return list(range(len(cells)))
    raise InputError(
        path,
        line,
        f"{len(numeric)} numbers; a {task.name} point has {task.dim}: pick its columns with "
        "--columns (header names or 0-based indices, e.g. --columns x,y)",
    )


def _named_columns(
    path: str | os.PathLike[str], header: Row, first: Row, columns: Sequence[str]
) -> list[int]:
    """The 0-based indices of ``columns`` (header names, any case, or 0-based indices), in
    their order; ``header`` has no cells when the file has no header row.

    Raises:
        InputError: a name the header lacks or an index past the ``first`` row's cells.
    """
    known = [cell.lower() for cell in header[1]]
    picked = []
    for column in columns:
        if column.isascii() and column.isdigit():
            index = int(column)
        elif column.lower() in known:
            index = known.index(column.lower())
        else:
            shown = ", ".join(header[1][:HEADER_SHOWN]) + (", ..." * (len(known) > HEADER_SHOWN))
            what = f"the header has {shown}" if known else "no header row to name it"
            raise InputError(path, header[0], f"no column {quote(column)} ({what})")
        if index >= len(first[1]):
            raise InputError(
                path, first[0], f"no column {index} (0-based): a row has {len(first[1])} values"
            )
        picked.append(index)
    return picked


HEADER_SHOWN = 8  # header names an error lists


def _name_column(header: list[str] | None, first: list[str], picked: list[int]) -> int | None:
    """The column of point names: among the others holding text on the first row, the one
    headed ``name``, else the first; None when there is none."""
    text = [j for j, cell in enumerate(first) if j not in picked and not is_number(cell)]
    named = [j for j in text if header is not None and header[j].lower() == "name"]
    return (named or text or [None])[0]


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
    """The instances of a .npy file, its header checked before any array is allocated."""
    check_file_size(path)
    try:
        with open_bytes(path) as stream:
            shape, fortran, dtype = _npy_header(path, stream, task)
            available = _byte_size(path) - stream.tell()
            declared = math.prod(shape) * dtype.itemsize
            if declared > available:
                raise InputError(
                    path,
                    None,
                    f"array of shape {_shape_text(shape)} of {dtype} declares {declared} bytes; "
                    f"the file holds {available} after its header",
                )
            data = stream.read(declared)
    except (OSError, ValueError, EOFError) as err:
        reason = " ".join(str(err).split())[:80]
        raise InputError(path, None, f"not a .npy array file ({reason})") from None
    array = np.frombuffer(data, dtype).reshape(shape, order="F" if fortran else "C")
    if task.dim == 1 and array.ndim == 1:
        array = array[:, None]
    if array.ndim == 2:
        array = array[None]
    return [_checked_array(path, task, points, k + 1) for k, points in enumerate(array)]


def _npy_header(
    path: str | os.PathLike[str], stream: BinaryIO, task: Task
) -> tuple[tuple[int, ...], bool, np.dtype]:
    """``(shape, fortran order, dtype)`` from the header of the .npy ``stream`` (left at the
    data), checked: real numbers, a shape the task takes, 1..MAX_POINTS points per instance.

    Raises:
        InputError: a header that fails a check. ValueError or EOFError: not a .npy header.
    """
    version = np.lib.format.read_magic(stream)
    if version not in ((1, 0), (2, 0)):
        raise ValueError(f"format version {version[0]}.{version[1]}, not 1.0 or 2.0")
    formats = np.lib.format
    read = formats.read_array_header_1_0 if version == (1, 0) else formats.read_array_header_2_0
    shape, fortran, dtype = read(stream)
    if dtype.hasobject or dtype.kind not in "iuf":
        raise InputError(path, None, "not a .npy array of real numbers")
    one_dim = task.dim == 1 and len(shape) == 1  # (n,): sort's numbers
    fits = one_dim or (len(shape) in (2, 3) and shape[-1] == task.dim)
    if not fits or min(shape, default=0) < 0:
        expected = "(n, dim) or (B, n, dim)" + (" or (n,)" if task.dim == 1 else "")
        raise InputError(
            path,
            None,
            f"array of shape {_shape_text(shape)}; expected {expected} with dim = {task.dim}",
        )
    points = shape[0] if len(shape) == 1 else shape[-2]
    if not 1 <= points <= MAX_POINTS:
        raise InputError(
            path,
            None,
            f"array of shape {_shape_text(shape)}: {points} points per instance; "
            f"task {task.name} takes {task.min_n}..{MAX_POINTS}",
        )
    return shape, fortran, dtype


def _byte_size(path: str | os.PathLike[str]) -> int:
    """The bytes of ``path``: held in memory, or on disk."""
    return len(path.data) if isinstance(path, HeldInput) else os.path.getsize(path)


def _shape_text(shape: tuple[int, ...]) -> str:
    """``shape`` as Python writes it, cut to 60 characters (a header may declare any)."""
    text = str(shape)
    return text if len(text) <= 60 else f"{text[:60]}... ({len(shape)} dimensions)"


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
    "points": _read_points,
    "npy": _read_npy,
    "tsplib": _read_tsplib,
}
