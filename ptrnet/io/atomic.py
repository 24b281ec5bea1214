"""Write a file all at once or not at all.

Output goes to a temporary file in the destination's directory (same filesystem, so the final
:func:`os.replace` is atomic) and replaces the destination only when the writer finished without
an exception; on any error the temporary file is removed and the destination is left untouched.
Readers therefore never see partial output under the final name. Every error names the path
asked for, never the temporary file.

:func:`check_output_path` tells up front (before any work) whether a path can be written: the
commands run it on ``-o`` as they parse it.

The path ``-`` (:data:`STDOUT`) means standard output, written as it goes (a pipe cannot be
replaced atomically; an error exits non-zero after what was written). So is a stream target
(:func:`is_stream_target`: ``/dev/null``, ``/dev/stdout``, a FIFO, ``>(...)``): it is opened and
written directly, never replaced by a regular file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from typing import IO, TextIO

STDOUT = "-"
STREAM_DIRS = ("/dev", "/dev/fd")  # their entries are devices and streams (/dev/shm is not)
STREAM_ROOT = "/proc/"
# Errors a write into a full or failing disk raises without a file name.
WRITE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO)


def check_output_path(path: str | os.PathLike[str]) -> None:
    """Check that :func:`atomic_write` can write ``path``, creating nothing.

    Accepted: ``-``; an existing stream target (:func:`is_stream_target`) this process may
    write; otherwise a name (no trailing ``/``) that is not a directory, in an existing
    directory this process may write into.

    Raises:
        OSError: what is wrong, with ``filename`` the path as given and ``strerror`` the
            reason (``is a directory; ...``, ``cannot write into DIR: No such file or
            directory``).
    """
    text = os.fspath(path)
    if text == STDOUT:
        return
    if not text:
        raise OSError(errno.ENOENT, "empty file name (- for standard output)", text)
    if os.path.isdir(text):
        raise OSError(errno.EISDIR, "is a directory; name a file to write", text)
    if is_stream_target(text) and os.path.exists(text):
        if not os.access(text, os.W_OK):
            raise OSError(errno.EACCES, os.strerror(errno.EACCES), text)
        return
    if text.endswith((os.sep, os.altsep or os.sep)):
        raise OSError(errno.ENOTDIR, "ends in a path separator; name a file to write", text)
    directory = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(directory):
        code = errno.ENOTDIR if os.path.exists(directory) else errno.ENOENT
        raise OSError(code, f"cannot write into {directory}: {os.strerror(code)}", text)
    if not os.access(directory, os.W_OK | os.X_OK):
        reason = f"cannot write into {directory}: {os.strerror(errno.EACCES)}"
        raise OSError(errno.EACCES, reason, text)


def is_stream_target(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is written directly rather than replaced: an entry of ``/dev`` or
    ``/dev/fd`` (``/dev/null``, ``/dev/stdout``, ``/dev/fd/63`` of ``>(...)``), a path under
    ``/proc/``, or an existing path that is neither a regular file nor a directory (a FIFO, a
    device). Replacing one of those would put a regular file where a device or pipe was."""
    text = os.path.abspath(os.fspath(path))
    if os.path.dirname(text) in STREAM_DIRS or text.startswith(STREAM_ROOT):
        return not os.path.isdir(text)
    try:
        mode = os.stat(text).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str]) -> Iterator[TextIO]:
    """Open a text stream whose content becomes ``path`` when the ``with`` block succeeds.

    Raises:
        OSError: ``path`` cannot be written (:func:`check_output_path`, checked before the block
            runs: nothing is created then), or writing it failed; ``filename`` is ``path``.
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
        if not is_stream_target(path):
            os.fsync(stream.fileno())


@contextlib.contextmanager
def _atomic_stream(path: str | os.PathLike[str], binary: bool) -> Iterator[IO]:
    """The stream behind both writers: a temporary file that replaces ``path`` only on success,
    or ``path`` itself for a stream target. Errors of its own, and a write that found the disk
    full, name ``path``; any other error of the caller's block passes through unchanged."""
    path = os.fspath(path)
    check_output_path(path)
    text = {} if binary else {"encoding": "utf-8", "newline": "\n"}
    mode = "wb" if binary else "w"
    if is_stream_target(path):
        with contextlib.ExitStack() as stack:
            with _naming(path):
                stream = stack.enter_context(open(path, mode, **text))
            with _naming(path, WRITE_ERRNOS):
                yield stream
                stream.flush()
        return
    directory, name = os.path.split(os.path.abspath(path))
    with _naming(path):
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, mode, **text) as stream, _naming(path, WRITE_ERRNOS):
            yield stream
            stream.flush()
        with _naming(path):
            _publish(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)
        raise


def _publish(tmp: str, path: str) -> None:
    """Give ``tmp`` the permissions a plain ``open`` would (mkstemp makes it 0600) and move it
    onto ``path`` atomically."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    os.replace(tmp, path)


@contextlib.contextmanager
def _naming(path: str, only: tuple[int, ...] | None = None) -> Iterator[None]:
    """Re-raise an OSError of the block (with errno in ``only``, if given) as one about
    ``path``, the name the user gave: the temporary file's name, or none, means nothing to
    them."""
    try:
        yield
    except OSError as err:
        if err.filename == path or (only is not None and err.errno not in only):
            raise
        reason = err.strerror or str(err)
        if err.errno in (errno.ENOENT, errno.EACCES, errno.EROFS, errno.ENOTDIR):
            reason = f"cannot write into {os.path.dirname(os.path.abspath(path))}: {reason}"
        raise OSError(err.errno, reason, path) from None
