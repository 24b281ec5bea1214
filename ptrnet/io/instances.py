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
  be ``dim`` of them; a header name matches its cell spelled exactly, else the one cell equal
  to it in any case. One column holding text (the one headed ``name`` if several do; a header
  shorter than the rows leaves the last columns unheaded) is kept as the points' names
  (:attr:`Instance.names`), control characters escaped (:func:`ptrnet.quoting.printable`),
  so no output writes them raw. Rows are read one at a time, up to the points limit.
* ``npy`` (``.npy``): an (n, dim) array (one instance), (B, n, dim) (B instances; errors name
  instance k as ``FILE:k``) or, for sort, (n,); no pickles. The header's dtype and shape are
  checked against the limits, and the bytes it declares against the file's, before any array
  is allocated.
* ``tsplib`` (``.tsp``, task tsp): EUC_2D coordinates (:mod:`ptrnet.io.tsplib`). ``auto`` also
  takes a file without one of the extensions above for TSPLIB when its first non-blank line
  starts with a TSPLIB keyword (``NAME``, ``TYPE``, ``COMMENT``, ``DIMENSION``,
  ``EDGE_WEIGHT_TYPE`` ...) followed by ``:`` or a space: a ``.tsp`` file given through a pipe
  or ``<(...)``, whose name says nothing.
* ``cvrplib`` (``.vrp``): a CVRPLIB file of TYPE CVRP (:mod:`ptrnet.io.cvrplib`), for a task
  whose points are rows (x, y, demand, capacity): one instance, the depot first, in the file's
  units (a note says that its lengths are unrounded, unlike CVRPLIB's published costs).

Points come back in the input's own units; :mod:`ptrnet.io.unit_square` maps them for a model.
Every layout applies the same limits (:mod:`ptrnet.io.limits`). An input that can be read only
once (a pipe, ``/dev/stdin``, ``<(...)``) is read whole into memory first
(:func:`ptrnet.io.text.hold_input`), so detecting its layout consumes nothing and it reads
exactly as the same bytes in a file would.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from itertools import chain, islice
from typing import NamedTuple

import numpy as np

from ptrnet.io.csv_columns import (
    SNIFF_LINES,
    cells_of,
    is_header,
    name_column,
    named_columns,
    numeric_columns,
    sniff_delimiter,
)
from ptrnet.io.cvrplib import read_vrp
from ptrnet.io.decimal_comma import decimal_comma_delimiter, with_decimal_points
from ptrnet.io.errors import InputError, UsageError
from ptrnet.io.geo_columns import check_lon_lat, find_lon_lat, picked_lon_lat, reading_note
from ptrnet.io.npy_points import read_npy_arrays
from ptrnet.io.paper_format import OUTPUT, parse_line
from ptrnet.io.point_rows import PointRows
from ptrnet.io.text import (
    HeldInput,
    hold_input,
    is_number,
    numbered_lines,
)
from ptrnet.io.tsplib import read_tsplib
from ptrnet.quoting import printable, quote
from ptrnet.solvers.distances import GREAT_CIRCLE, Distances
from ptrnet.tasks import POINT_TASKS, Task

FORMATS = ("auto", "paper", "points", "csv", "npy", "tsplib", "cvrplib")
EXTENSIONS = {".tsp": "tsplib", ".csv": "csv", ".npy": "npy", ".vrp": "cvrplib"}
#: The numbers of a CVRPLIB file's rows: x, y, demand, capacity.
CVRPLIB_ROW = 4
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
    ".npy ((n, dim) or (B, n, dim)), TSPLIB .tsp, CVRPLIB .vrp"
)


class Instance(NamedTuple):
    """One instance as read.

    Attributes:
        points: (n, dim) float64 in the input's units.
        line: where it starts (``.npy``: its index from 1), or None.
        seq: the file's 0-based reference label (paper format, ``labels=True``), else None.
        names: the n point names of a CSV name column, else None.
        labelled: whether the file gave a label (read into ``seq`` or skipped).
        distances: how the file says its lengths are measured, for a task that measures
            lengths (:meth:`Task.with_distances`): great-circle km for a CSV's latitude and
            longitude columns, TSPLIB's GEO or ATT rule; None: the task's own (Euclidean).
        note: how the file was read, when that is not the plain reading (latitude and
            longitude columns, decimal commas, a TSPLIB distance rule), for one line on stderr.
    """

    points: np.ndarray
    line: int | None
    seq: np.ndarray | None = None
    names: tuple[str, ...] | None = None
    labelled: bool = False
    distances: Distances | None = None
    note: str | None = None


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
    rows = PointRows(path, task)
    for line, text in numbered_lines(path):
        if tokens := text.split():
            rows.add(line, tokens)
    return [Instance(rows.points(), rows.first_line)]


def read_csv(
    path: str | os.PathLike[str], task: Task, columns: Sequence[str] | None = None
) -> list[Instance]:
    """The one instance of the CSV file ``path`` (layout ``csv`` of the module docstring),
    read a row at a time: only the delimiter's sample lines are held as text.

    Raises:
        InputError: a malformed file, or ``columns`` it does not have.
    """
    lines = ((line, text) for line, text in numbered_lines(path) if text.strip())
    sample = list(islice(lines, SNIFF_LINES))
    if not sample:
        raise InputError(path, 1, "empty file: no points")
    texts = [text for _, text in sample]
    decimal = decimal_comma_delimiter(texts, sniffed := sniff_delimiter(texts))
    delimiter = decimal or sniffed
    rows = ((line, cells_of(path, line, text, delimiter)) for line, text in chain(sample, lines))
    if decimal:
        rows = ((line, with_decimal_points(path, line, cells)) for line, cells in rows)
    top = next(rows)
    header = top[1] if is_header(top[1]) else None
    first = next(rows, None) if header is not None else top
    if first is None:
        raise InputError(path, top[0], "a header row and no points")
    lon_lat = None  # the [longitude, latitude] columns of a file of places on the globe
    if columns is None:
        if header is not None and reads_places(task):
            lon_lat = find_lon_lat(path, top[0], header)
        if lon_lat is None:
            picked = numeric_columns(path, task, first)
        else:
            picked = lon_lat + other_numbers(path, task, header, first, lon_lat)
    else:
        picked = named_columns(path, (top[0], header or []), first, columns)
        if reads_places(task):
            lon_lat = picked_lon_lat(header, picked[:2])
            picked = picked if lon_lat is None else lon_lat + picked[2:]
    name = name_column(header, first[1], picked)
    every = picked == list(range(len(first[1])))  # every cell a coordinate: rows checked as points
    points = PointRows(path, task)
    names: list[str] = []
    lines: list[int] = []  # of each point, where latitudes and longitudes are checked
    for line, cells in chain([first], rows):
        if lon_lat:
            lines.append(line)
        if not every:
            if len(cells) != len(first[1]):
                points.parse_pending()  # an earlier row's bad number is the first problem
                raise InputError(
                    path, line, f"{len(cells)} values; line {first[0]} has {len(first[1])}"
                )
            if name is not None:
                names.append(printable(cells[name]))
            cells = [cells[j] for j in picked]
        points.add(line, cells)
    instance = Instance(points.points(), points.first_line)
    instance = instance._replace(names=None if name is None else tuple(names))
    notes = [f"{DELIMITER_NAMES[delimiter]}-separated with decimal commas"] if decimal else []
    if lon_lat:
        check_lon_lat(path, instance.points[:, :2], lines)
        rule = GREAT_CIRCLE if task.distances is not None else None
        what = rule.what if rule else "a plane in degrees (x longitude, y latitude)"
        notes.append(reading_note(header, lon_lat, what))
        instance = instance._replace(distances=rule)
    return [instance._replace(note="; ".join(notes) or None)]


DELIMITER_NAMES = {";": "semicolon", "\t": "tab"}


def reads_places(task: Task) -> bool:
    """Whether a CSV header naming latitude and longitude columns gives ``task`` its points'
    places: a planar task whose rows start with two coordinates (x, y: TSP, the hull, the
    triangulation; a routing row's x and y ahead of its demand and capacity)."""
    return (task.coordinate_columns or task.dim) == 2 and task.shape_invariant


def other_numbers(
    path: str | os.PathLike[str],
    task: Task,
    header: Sequence[str],
    first: tuple[int, list[str]],
    lon_lat: list[int],
) -> list[int]:
    """The columns of a row's numbers after its longitude and latitude (a customer's demand and
    capacity): those the header names by the task's :attr:`~Task.row_fields` (any case) when
    it names them all, else those holding numbers on the ``first`` data row but ``lon_lat``,
    in file order; none for a task whose row is the two coordinates alone (a city's other
    numbers, such as its population, are not read).

    Raises:
        InputError: more of them than the task's row has room for (naming ``--columns``).
    """
    line, cells = first
    if task.dim == 2:
        return []
    names = [cell.strip().lower() for cell in header]
    if task.row_fields and all(names.count(field) == 1 for field in task.row_fields):
        return [names.index(field) for field in task.row_fields]
    rest = [j for j, cell in enumerate(cells) if is_number(cell) and j not in lon_lat]
    if len(rest) > task.dim - 2:
        raise InputError(
            path,
            line,
            f"{len(rest) + 2} numbers; a {task.name} point has {task.dim}: pick its columns "
            "with --columns (header names or 0-based indices, e.g. --columns lon,lat,...)",
        )
    return rest


def _read_tsplib(path: str | os.PathLike[str], task: Task) -> list[Instance]:
    if not task.reads_tsplib:
        readers = " or ".join(t.name for t in POINT_TASKS.values() if t.reads_tsplib)
        raise UsageError(f"a TSPLIB file is a {readers} instance, not a {task.name} one")
    instance = read_tsplib(path)
    rule, kind = instance.distances, instance.edge_weight_type
    read = "latitude/longitude (DDD.MM); " if kind == "GEO" else ""
    note = None if rule is None else f"EDGE_WEIGHT_TYPE {kind}: {read}{rule.what}"
    return [Instance(instance.coords, None, distances=rule, note=note)]


def _read_cvrplib(path: str | os.PathLike[str], task: Task) -> list[Instance]:
    if task.dim != CVRPLIB_ROW:
        raise UsageError(
            f"a CVRPLIB file holds a depot and customers, rows (x, y, demand, capacity); task "
            f"{task.name}'s points have {task.dim} number(s)"
        )
    instance = read_vrp(path)
    note = (
        f"CVRPLIB {instance.name}: {len(instance.coords) - 1} customers, capacity "
        f"{instance.capacity}; lengths in the file's units, each edge unrounded (CVRPLIB's "
        f"published costs round each to an integer)"
    )
    return [Instance(instance.rows(unit=False), None, note=note)]


def _read_npy(path: str | os.PathLike[str], task: Task) -> list[Instance]:
    return [Instance(points, k + 1) for k, points in enumerate(read_npy_arrays(path, task))]


_READERS = {
    "points": _read_points,
    "npy": _read_npy,
    "tsplib": _read_tsplib,
    "cvrplib": _read_cvrplib,
}
