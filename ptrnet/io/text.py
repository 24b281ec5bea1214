"""Reading text input safely: bounded lines, every line ending, strict numbers.

* Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r`` (old Mac files), so no two lines are ever
  merged; a line longer than :data:`~ptrnet.io.limits.MAX_LINE_BYTES` is refused without being
  held in memory whole, and so is a file over :data:`~ptrnet.io.limits.MAX_FILE_BYTES`.
* A UTF-8 byte order mark at the start of a file is skipped.
* Numbers are ASCII decimal floats (``-1``, ``0.5``, ``.5``, ``1e-3``, ``inf``, ``nan``):
  Python's ``float`` also takes ``0_5`` and non-ASCII digits, which no data file means.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import BinaryIO

from ptrnet.io.errors import InputError
from ptrnet.io.limits import MAX_FILE_BYTES, MAX_LINE_BYTES

_NUMBER = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)", re.I)
_BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 16


def is_number(token: str) -> bool:
    """Whether ``token`` is an ASCII decimal float (see the module docstring)."""
    return token.isascii() and _NUMBER.fullmatch(token) is not None


def check_file_size(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> None:
    """Raise InputError if ``path`` is larger than ``limit`` bytes (or cannot be read)."""
    try:
        size = os.path.getsize(path)
    except OSError as err:
        raise InputError(path, None, f"cannot read: {err.strerror or err}") from None
    if size > limit:
        raise InputError(path, None, f"file of {size} bytes is over the limit of {limit} bytes")


def numbered_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` for each line of ``path``, decoded as UTF-8, ending stripped.

    Raises:
        InputError: an unreadable or oversized file, a line over the length limit, or a line
            that is not UTF-8.
    """
    check_file_size(path)
    try:
        with open(path, "rb") as stream:
            for line, raw in enumerate(_raw_lines(stream, path), 1):
                if line == 1 and raw.startswith(_BOM):
                    raw = raw[len(_BOM) :]
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise InputError(path, line, "not UTF-8 text") from None
                yield line, text
    except OSError as err:
        raise InputError(path, None, f"cannot read: {err.strerror or err}") from None


def _raw_lines(stream: BinaryIO, path: str | os.PathLike[str]) -> Iterator[bytes]:
    """Lines of ``stream`` without their endings; ``\\r\\n``, ``\\r`` and ``\\n`` all end one."""
    pending = b""
    line = 1
    after_cr = False  # the previous chunk ended in \r: a leading \n belongs to it
    while chunk := stream.read(_CHUNK):
        if after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        after_cr = chunk.endswith(b"\r")
        parts = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        parts[0] = pending + parts[0]
        pending = parts.pop()
        for part in parts:
            _check_length(part, path, line)
            line += 1
            yield part
        _check_length(pending, path, line)
    if pending:
        yield pending


def _check_length(raw: bytes, path: str | os.PathLike[str], line: int) -> None:
    if len(raw) > MAX_LINE_BYTES:
        raise InputError(path, line, f"line longer than the limit of {MAX_LINE_BYTES} bytes")
