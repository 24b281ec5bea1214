"""Reading text input safely: bounded lines, every line ending, strict numbers.

* Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r`` (old Mac files), so no two lines are ever
  merged; a line longer than :data:`~ptrnet.io.limits.MAX_LINE_BYTES` is refused without being
  held in memory whole, and so is a file over :data:`~ptrnet.io.limits.MAX_FILE_BYTES`.
* A UTF-8 byte order mark at the start of a file is skipped.
* An input that is not a regular file (a pipe, ``/dev/stdin``, a FIFO, ``<(...)``) can be read
  only once: :func:`hold_input` reads it whole into memory, within the file limit, as a
  :class:`HeldInput` that every reader here reads from instead, so a layout can be detected and
  then parsed from the same bytes. A device other than a terminal or ``/dev/null``
  (``/dev/zero``, a disk) is not data: it is refused before it is read.
* A file ptrnet reads as a whole (a checkpoint, ``config.json``, ``sizes.json``) must be a
  regular file after following links (:func:`read_regular_file`): it is opened without
  blocking and checked on the open descriptor, so a FIFO never blocks and ``/dev/zero`` never
  streams into memory.
* Numbers are ASCII decimal floats (``-1``, ``0.5``, ``.5``, ``1e-3``, ``inf``, ``nan``):
  Python's ``float`` also takes ``0_5`` and non-ASCII digits, which no data file means.
"""

from __future__ import annotations

import io
import os
import re
import stat
from collections.abc import Iterator
from typing import BinaryIO, TypeVar

from ptrnet.io.errors import InputError
from ptrnet.io.limits import MAX_FILE_BYTES, MAX_LINE_BYTES

_NUMBER = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)", re.I)
_BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 16

PathT = TypeVar("PathT", str, os.PathLike)


def is_number(token: str) -> bool:
    """Whether ``token`` is an ASCII decimal float (see the module docstring)."""
    return token.isascii() and _NUMBER.fullmatch(token) is not None


class HeldInput(str):
    """The name of an input read once into memory (:func:`hold_input`), carrying its bytes.

    It is the user's path as a ``str`` (errors, messages and extensions use it unchanged);
    :func:`numbered_lines` and :func:`check_file_size` read :attr:`data` instead of the file.
    """

    data: bytes

    def __new__(cls, name: str, data: bytes) -> HeldInput:
        held = super().__new__(cls, name)
        held.data = data
        return held


def hold_input(path: PathT) -> PathT | HeldInput:
    """``path`` itself when it is a regular file, a directory or nothing that exists (the readers
    open it and report those); otherwise (a pipe, a FIFO, ``/dev/stdin``, a terminal) a
    :class:`HeldInput` with its whole content, read once.

    Raises:
        InputError: an input over :data:`~ptrnet.io.limits.MAX_FILE_BYTES`, a device other than
            a terminal or ``/dev/null`` (``/dev/zero``), or a read error.
    """
    if isinstance(path, HeldInput):
        return path
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return path
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return path
    return HeldInput(os.fspath(path), _read_all(path, MAX_FILE_BYTES))


def read_regular_file(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of ``path``, which must be a regular file (links followed) of at most
    ``limit`` bytes. ``path`` is opened only when ``stat`` says it is one, and then without
    blocking and checked again on the open descriptor, so a path swapped for a FIFO or a device
    in between is refused too, and no more than ``limit`` bytes are ever read.

    Raises:
        InputError: ``FILE: problem``: a missing or unreadable path, one that is not a regular
            file (naming what it is: a directory, a FIFO, a character device ...), or a file
            over ``limit`` bytes.
    """
    check_regular_file(path, limit)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as err:
        raise InputError(path, None, f"cannot read: {err.strerror or err}") from None
    with os.fdopen(fd, "rb") as stream:
        try:
            info = os.fstat(fd)
            _check_regular(path, info, limit)
            data = _read_within(stream, info.st_size, limit)
        except OSError as err:
            raise InputError(path, None, f"cannot read: {err.strerror or err}") from None
    if len(data) > limit:  # it grew since fstat
        raise InputError(path, None, f"file over the limit of {limit} bytes")
    return data


def _read_within(stream: BinaryIO, size: int, limit: int) -> bytes:
    """The bytes of ``stream``, at most ``limit + 1`` of them: first the ``size`` that ``fstat``
    gave, in one read that allocates no more than the file holds (a read of ``limit + 1`` bytes
    would reserve 4 GiB up front, a MemoryError under ``ulimit -v``), then in chunks while the
    file grows."""
    data = stream.read(min(size, limit) + 1)
    if len(data) <= size:
        return data
    grown = bytearray(data)  # it grew since fstat: the caller refuses it past the limit
    while len(grown) <= limit and (chunk := stream.read(min(_CHUNK, limit + 1 - len(grown)))):
        grown += chunk
    return bytes(grown)


def check_regular_file(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> None:
    """Raise InputError unless ``path`` is a regular file (links followed) of at most
    ``limit`` bytes: for a file read more than once (a training data file), which a pipe
    cannot be.

    Raises:
        InputError: ``FILE: problem``, as :func:`read_regular_file` says it.
    """
    try:
        info = os.stat(path)
    except OSError as err:
        raise InputError(path, None, f"cannot read: {err.strerror or err}") from None
    _check_regular(path, info, limit)


def _check_regular(
    path: str | os.PathLike[str], info: os.stat_result, limit: int | None = None
) -> None:
    """Raise InputError unless ``info`` is a regular file's of at most ``limit`` bytes."""
    if not stat.S_ISREG(info.st_mode):
        raise InputError(path, None, f"{_kind(info.st_mode)}, not a regular file")
    if limit is not None and info.st_size > limit:
        raise InputError(
            path, None, f"file of {info.st_size} bytes is over the limit of {limit} bytes"
        )


def _kind(mode: int) -> str:
    """What a path that is not a regular file is, in words (``a directory``, ``a FIFO`` ...)."""
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), "not a file")


def _check_stream(path: str | os.PathLike[str], stream: BinaryIO) -> None:
    """Raise InputError if the open ``stream`` is a device other than a terminal or
    ``/dev/null``: a pipe, a socket or a terminal is input to read to its end, and so is the
    empty ``/dev/null``; ``/dev/zero`` or a disk is not."""
    info = os.fstat(stream.fileno())
    if stat.S_ISBLK(info.st_mode) or (
        stat.S_ISCHR(info.st_mode) and not stream.isatty() and not _is_null(info)
    ):
        raise InputError(path, None, f"{_kind(info.st_mode)}, not a file or a pipe")


def _is_null(info: os.stat_result) -> bool:
    """Whether ``info`` is that of :data:`os.devnull`."""
    try:
        null = os.stat(os.devnull)
    except OSError:
        return False
    return (info.st_rdev, info.st_mode) == (null.st_rdev, null.st_mode)


def _read_all(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the stream ``path`` up to its end, refused past ``limit`` bytes, and
    refused unread if it is a device other than a terminal or ``/dev/null``."""
    chunks: list[bytes] = []
    size = 0
    try:
        with open(path, "rb") as stream:
            _check_stream(path, stream)
            while chunk := stream.read(_CHUNK):
                size += len(chunk)
                if size > limit:
                    raise InputError(path, None, f"input over the limit of {limit} bytes")
                chunks.append(chunk)
    except OSError as err:
        raise InputError(path, None, f"cannot read: {err.strerror or err}") from None
    return b"".join(chunks)


def check_file_size(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> None:
    """Raise InputError if ``path`` is larger than ``limit`` bytes (or cannot be read)."""
    if isinstance(path, HeldInput):
        return  # held within MAX_FILE_BYTES already
    try:
        size = os.path.getsize(path)
    except OSError as err:
        raise InputError(path, None, f"cannot read: {err.strerror or err}") from None
    if size > limit:
        raise InputError(path, None, f"file of {size} bytes is over the limit of {limit} bytes")


def numbered_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` for each line of ``path``, decoded as UTF-8, ending stripped.

    A :class:`HeldInput` is read from its bytes, so it can be read any number of times.

    Raises:
        InputError: an unreadable or oversized file, a line over the length limit, or a line
            that is not UTF-8.
    """
    check_file_size(path)
    try:
        with open_bytes(path) as stream:
            if not isinstance(path, HeldInput):
                _check_stream(path, stream)
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


def open_bytes(path: str | os.PathLike[str]) -> BinaryIO:
    """A binary stream over ``path``: the bytes of a :class:`HeldInput`, else the file."""
    if isinstance(path, HeldInput):
        return io.BytesIO(path.data)
    return open(path, "rb")


def _raw_lines(stream: BinaryIO, path: str | os.PathLike[str]) -> Iterator[bytes]:
    """Lines of ``stream`` without their endings; ``\\r\\n``, ``\\r`` and ``\\n`` all end one."""
    pending = b""
    line = 1
    after_cr = False  # the previous chunk ended in \r: a leading \n belongs to it
    size = 0  # a pipe has no size to check up front: its bytes are counted as they come
    while chunk := stream.read(_CHUNK):
        size += len(chunk)
        if size > MAX_FILE_BYTES:
            raise InputError(path, None, f"input over the limit of {MAX_FILE_BYTES} bytes")
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
