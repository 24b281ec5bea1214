"""Write a file all at once or not at all.

Output goes to a temporary file in the destination's directory (same filesystem, so the final
:func:`os.replace` is atomic) and replaces the destination only when the writer finished without
an exception; on any error the temporary file is removed and the destination is left untouched.
Readers therefore never see partial output under the final name.

The path ``-`` (:data:`STDOUT`) means standard output, written as it goes (a pipe cannot be
replaced atomically; an error exits non-zero after what was written).
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from typing import IO, TextIO

STDOUT = "-"


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str]) -> Iterator[TextIO]:
    """Open a text stream whose content becomes ``path`` when the ``with`` block succeeds.

    Raises:
        OSError: if the directory of ``path`` is missing or not writable (its ``filename`` is
            ``path``); nothing is created then.
    """
    if os.fspath(path) == STDOUT:
        yield sys.stdout
        sys.stdout.flush()
        return
    with _atomic_stream(path, binary=False) as stream:
        yield stream


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` all at once or not at all, synced to disk before the rename;
    ``-`` writes it to standard output."""
    if os.fspath(path) == STDOUT:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    with _atomic_stream(path, binary=True) as stream:
        stream.write(data)
        stream.flush()
        os.fsync(stream.fileno())


@contextlib.contextmanager
def _atomic_stream(path: str | os.PathLike[str], binary: bool) -> Iterator[IO]:
    """The temporary stream behind both writers; replaces ``path`` only on success."""
    path = os.fspath(path)
    directory, name = os.path.split(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
    except OSError as err:  # name the file asked for, not the temporary one
        reason = f"cannot write into {directory}: {err.strerror}"
        raise OSError(err.errno, reason, path) from None
    try:
        text = {} if binary else {"encoding": "utf-8", "newline": "\n"}
        with os.fdopen(fd, "wb" if binary else "w", **text) as stream:
            yield stream
        # mkstemp creates the file private (0600); give it the permissions a plain open would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)
        raise
