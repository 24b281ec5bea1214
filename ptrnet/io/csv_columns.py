"""The column logic of ptrnet's CSV layout (:mod:`ptrnet.io.instances`): the delimiter sniffed,
cells split, a header told from data, and which columns hold the coordinates and the names;
every problem an :class:`~ptrnet.io.errors.InputError` at its line."""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence

from ptrnet.io.errors import InputError
from ptrnet.io.limits import QUOTE_CHARS
from ptrnet.io.text import is_number
from ptrnet.quoting import quote
from ptrnet.tasks import Task

SNIFF_LINES = 20  # rows the delimiter is sniffed from


SNIFF_CHARS = 1 << 16  # and at most this much of them (the sniffer's regexes are not linear)


DELIMITERS = ",;\t"


def sniff_delimiter(texts: list[str]) -> str:
    """The delimiter of the rows ``texts``: one of :data:`DELIMITERS` as :class:`csv.Sniffer`
    finds it, a comma when it finds none (one column, as sort's values)."""
    try:
        return csv.Sniffer().sniff("\n".join(texts)[:SNIFF_CHARS], DELIMITERS).delimiter
    except csv.Error:
        return ","


def cells_of(path: str | os.PathLike[str], line: int, text: str, delimiter: str) -> list[str]:
    """The stripped cells of one CSV row (quotes removed)."""
    try:
        return [cell.strip() for cell in next(csv.reader([text], delimiter=delimiter))]
    except csv.Error as err:
        raise InputError(path, line, f"not a CSV row ({err})") from None


def is_header(cells: list[str]) -> bool:
    """Whether a first CSV row names the columns: none of its cells is a number. A row with a
    number in it is data (``0.1,0.2x`` is a typo to report, not a header to drop)."""
    return not any(is_number(cell) for cell in cells)


Row = tuple[int, list[str]]  # a CSV row: its line number and its cells


def numeric_columns(path: str | os.PathLike[str], task: Task, first: Row) -> list[int]:
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


def named_columns(
    path: str | os.PathLike[str], header: Row, first: Row, columns: Sequence[str]
) -> list[int]:
    """The 0-based indices of ``columns`` (header names or 0-based indices), in their order;
    ``header`` has no cells when the file has no header row. A name matches the header cell
    spelled exactly as it is, else the one cell equal to it in any case (``Lat`` for ``lat``).

    Raises:
        InputError: a name the header lacks, a name several header cells match (spelled
            exactly, or in any case when none is exact: ``lat`` in ``Lat,LAT``), or an index
            past the ``first`` row's cells.
    """
    picked = []
    for column in columns:
        if column.isascii() and column.isdigit():
            index = int(column)
        else:
            index = _header_index(path, header, column)
        if index >= len(first[1]):
            raise InputError(
                path, first[0], f"no column {index} (0-based): a row has {len(first[1])} values"
            )
        picked.append(index)
    return picked


HEADER_SHOWN = 8  # header names an error lists


def _header_index(path: str | os.PathLike[str], header: Row, column: str) -> int:
    """The index of the header cell naming ``column`` (:func:`named_columns`)."""
    line, cells = header
    exact = [j for j, cell in enumerate(cells) if cell == column]
    matches = exact or [j for j, cell in enumerate(cells) if cell.lower() == column.lower()]
    if len(matches) == 1:
        return matches[0]
    if matches:
        shown = ", ".join(f"{j} ({quote(cells[j], QUOTE_CHARS)})" for j in matches[:HEADER_SHOWN])
        raise InputError(
            path,
            line,
            f"column {quote(column)} is ambiguous: the header has it at {shown}; "
            "pick one by its 0-based index",
        )
    shown = ", ".join(quote(cell, QUOTE_CHARS) for cell in cells[:HEADER_SHOWN])
    shown += ", ..." * (len(cells) > HEADER_SHOWN)
    what = f"the header has {shown}" if cells else "no header row to name it"
    raise InputError(path, line, f"no column {quote(column)} ({what})")


def name_column(header: list[str] | None, first: list[str], picked: list[int]) -> int | None:
    """The column of point names: among the others holding text on the first row, the one
    headed ``name``, else the first; None when there is none. A header shorter than the rows
    leaves the last columns unheaded: they may hold the names all the same."""
    text = [j for j, cell in enumerate(first) if j not in picked and not is_number(cell)]
    headed = header or []
    named = [j for j in text if j < len(headed) and headed[j].lower() == "name"]
    return (named or text or [None])[0]
