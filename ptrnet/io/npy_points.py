"""Point sets from ``.npy`` files for :mod:`ptrnet.io.instances`: no pickles, and the header's
dtype, shape and declared bytes checked against the limits and the file before any array is
allocated; each instance checked like a line of text."""

from __future__ import annotations

import math
import os
from typing import BinaryIO

import numpy as np

from ptrnet.io.errors import InputError
from ptrnet.io.limits import MAX_COORDINATE, MAX_POINTS
from ptrnet.io.text import HeldInput, check_file_size, open_bytes
from ptrnet.tasks import Task


def read_npy_arrays(path: str | os.PathLike[str], task: Task) -> list[np.ndarray]:
    """The instances of a .npy file, (n, dim) float64 each in file order (instance k of an
    error message counts from 1), its header checked before any array is allocated.

    Raises:
        InputError: a file that is not a .npy array of real numbers, a shape the task does not
            take, or an instance out of the limits.
    """
    check_file_size(path)
    try:
        with open_bytes(path) as stream:
            shape, fortran, dtype = npy_header(path, stream, task)
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
    return [checked_array(path, task, points, k + 1) for k, points in enumerate(array)]


def npy_header(
    path: str | os.PathLike[str], stream: BinaryIO, task: Task
) -> tuple[tuple[int, ...], bool, np.dtype]:
    """``(shape, fortran order, dtype)`` from the header of the .npy ``stream`` (left at the
    data), checked: real numbers, a shape the task takes, 1..MAX_POINTS points per instance,
    at least one instance.

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
    if len(shape) == 3 and shape[0] == 0:  # as an empty text file: nothing to answer
        raise InputError(path, None, f"array of shape {_shape_text(shape)}: no instances")
    return shape, fortran, dtype


def _byte_size(path: str | os.PathLike[str]) -> int:
    """The bytes of ``path``: held in memory, or on disk."""
    return len(path.data) if isinstance(path, HeldInput) else os.path.getsize(path)


def _shape_text(shape: tuple[int, ...]) -> str:
    """``shape`` as Python writes it, cut to 60 characters (a header may declare any)."""
    text = str(shape)
    return text if len(text) <= 60 else f"{text[:60]}... ({len(shape)} dimensions)"


def checked_array(
    path: str | os.PathLike[str], task: Task, points: np.ndarray, k: int
) -> np.ndarray:
    """Instance ``k`` of a .npy file as float64, checked like a line of text."""
    points = points.astype(np.float64)
    outside = ~(np.abs(points) <= MAX_COORDINATE)
    if outside.any():
        raise InputError(path, k, f"coordinates must be finite and within +-{MAX_COORDINATE:g}")
    if not task.min_n <= len(points) <= MAX_POINTS:
        raise InputError(
            path, k, f"{len(points)} points; task {task.name} takes {task.min_n}..{MAX_POINTS}"
        )
    return points
