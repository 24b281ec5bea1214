"""CSV files written with decimal commas (``48,85``), as European spreadsheets export them:
cells separated by ``;`` (or tabs), numbers with a comma for the decimal point.

:func:`decimal_comma_delimiter` tells such a file from its sample rows (and corrects a comma
the sniffer took for the delimiter), :func:`with_decimal_points` rewrites a row's numbers with
points before anything reads them, so a header, the name column and the coordinates are told
apart as in any other CSV. A number that also holds dots in groups of three (``1.234,5``: a
thousands separator) is refused, naming the fix, rather than read as something else.
"""

from __future__ import annotations

import os
import re

from ptrnet.io.errors import InputError
from ptrnet.io.limits import QUOTE_CHARS
from ptrnet.quoting import quote

# A number whose decimal separator is a comma: "48,85", "-0,5", ",5", "3,", "1,5e-3".
DECIMAL_COMMA = re.compile(r"[+-]?(\d+,\d*|,\d+)([eE][+-]?\d+)?")
# Dots in groups of three before an optional decimal comma: "1.234", "1.234.567,5".
THOUSANDS = re.compile(r"[+-]?\d{1,3}(\.\d{3})+(,\d*)?")


def decimal_comma_delimiter(texts: list[str], sniffed: str) -> str | None:
    """The delimiter of sample rows ``texts`` when they write decimal commas, else None.

    They do when, split by ``;`` or a tab (the sniffed one, or ``;`` where the sniffer took the
    decimal commas themselves for the delimiter), every row has the same number of cells, at
    least two, and some cell is a number with a decimal comma. A comma-separated file never
    does: ``1,5`` there is two cells."""
    for delimiter in dict.fromkeys([sniffed, ";", "\t"]):
        if delimiter == ",":
            continue
        rows = [text.split(delimiter) for text in texts]
        if len({len(cells) for cells in rows}) != 1 or len(rows[0]) < 2:
            continue
        if any(DECIMAL_COMMA.fullmatch(cell.strip().strip('"')) for row in rows for cell in row):
            return delimiter
    return None


def with_decimal_points(path: str | os.PathLike[str], line: int, cells: list[str]) -> list[str]:
    """``cells`` (stripped, unquoted) with every decimal-comma number written with a point.

    Raises:
        InputError: a cell with dots in groups of three (a thousands separator).
    """
    out = []
    for cell in cells:
        if THOUSANDS.fullmatch(cell):
            raise InputError(
                path,
                line,
                f"{quote(cell, QUOTE_CHARS)}: this file writes decimal commas, and a number "
                "with dots between groups of three digits may have thousands separators; "
                "write it without them (1234,5)",
            )
        out.append(cell.replace(",", ".") if DECIMAL_COMMA.fullmatch(cell) else cell)
    return out
