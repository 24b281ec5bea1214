"""Validating a safetensors file's header before any tensor is built, and a digest of its data.

A safetensors file is an 8-byte little-endian header size, a JSON header and the tensor bytes.
A hostile or damaged file can claim anything in that header: a size past the end, offsets past
the data, a shape of 10^12 elements, a dtype that does not exist, metadata that is not text,
JSON nested 100,000 deep (:mod:`ptrnet.io.json_file` reads it).
:func:`read_header` checks every such claim against the bytes actually there, so that the
``safetensors`` loader is only ever handed a consistent file, and every problem is one line.

:func:`tensor_digest` is a SHA-256 over the names, dtypes, shapes and bytes of chosen tensors;
ptrnet records it in a checkpoint's metadata and verifies it on load, so a bit flip in the
weights is refused instead of decoding to garbage.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any, NamedTuple

from ptrnet.io.json_file import JsonError, parse_json
from ptrnet.quoting import quote

MAX_HEADER_BYTES = 100 * 2**20  # the safetensors format's own bound
DTYPE_BYTES = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1,
    "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
    "I32": 4, "U32": 4, "F32": 4,
    "I64": 8, "U64": 8, "F64": 8,
}  # fmt: skip


class HeaderError(ValueError):
    """What is wrong with a safetensors header, in one line."""


class TensorEntry(NamedTuple):
    """One tensor's declared ``dtype``, ``shape`` and byte range ``start:end`` in the data."""

    dtype: str
    shape: tuple[int, ...]
    start: int
    end: int


def read_header(data: bytes) -> tuple[dict[str, TensorEntry], dict[str, str]]:
    """The tensors and the string metadata a safetensors byte string declares, all checked.

    Checks: the header size fits the file, the header is a JSON object, every tensor has a
    known dtype, a shape of non-negative integers, and offsets inside the data whose length is
    exactly the shape's size, the tensors tile the data without gaps or overlaps, and the
    metadata maps strings to strings.

    Raises:
        HeaderError: the first problem found.
    """
    if len(data) < 8:
        raise HeaderError(f"file of {len(data)} bytes is too short for a safetensors header")
    size = int.from_bytes(data[:8], "little")
    if size > min(MAX_HEADER_BYTES, len(data) - 8):
        raise HeaderError(f"header size {size} is past the end of the {len(data)}-byte file")
    try:
        header = parse_json(data[8 : 8 + size], dict, MAX_HEADER_BYTES, "header")
    except JsonError as err:
        raise HeaderError(str(err)) from None
    metadata = header.pop("__metadata__", {})
    if not isinstance(metadata, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
    ):
        raise HeaderError("__metadata__ is not an object of strings")
    entries = {name: _entry(name, value) for name, value in header.items()}
    _check_tiling(entries, len(data) - 8 - size)
    return entries, metadata


def _entry(name: str, value: Any) -> TensorEntry:
    if not isinstance(value, dict) or set(value) != {"dtype", "shape", "data_offsets"}:
        raise HeaderError(f"tensor {quote(name)}: not {{dtype, shape, data_offsets}}")
    dtype, shape, offsets = value["dtype"], value["shape"], value["data_offsets"]
    if not isinstance(dtype, str) or dtype not in DTYPE_BYTES:
        raise HeaderError(f"tensor {quote(name)}: unknown dtype {quote(dtype)}")
    if not isinstance(shape, list) or not all(_count(d) for d in shape):
        raise HeaderError(f"tensor {quote(name)}: shape is not a list of counts")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(map(_count, offsets))):
        raise HeaderError(f"tensor {quote(name)}: data_offsets is not [start, end]")
    start, end = offsets
    if end - start != math.prod(shape) * DTYPE_BYTES[dtype]:
        raise HeaderError(
            f"tensor {quote(name)}: shape {quote(shape)} of {dtype} needs "
            f"{quote(math.prod(shape) * DTYPE_BYTES[dtype])} bytes, offsets give "
            f"{quote(end - start)}"
        )
    return TensorEntry(dtype, tuple(shape), start, end)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_tiling(entries: dict[str, TensorEntry], length: int) -> None:
    """The byte ranges must cover ``0..length`` exactly, one after another."""
    position = 0
    for name, entry in sorted(entries.items(), key=lambda item: (item[1].start, item[1].end)):
        if entry.start != position:
            raise HeaderError(f"tensor {quote(name)}: data starts at {entry.start}, not {position}")
        position = entry.end
    if position != length:
        raise HeaderError(f"tensors end at byte {position}; the data has {length} bytes")


def tensor_digest(data: bytes, prefixes: tuple[str, ...]) -> str:
    """``sha256:HEX`` over the tensors whose names start with one of ``prefixes`` (names,
    dtypes, shapes and bytes, in name order) of the safetensors byte string ``data``.

    Raises:
        HeaderError: an inconsistent header (:func:`read_header`).
    """
    entries, _ = read_header(data)
    base = 8 + int.from_bytes(data[:8], "little")
    digest = hashlib.sha256()
    for name in sorted(n for n in entries if n.startswith(prefixes)):
        entry = entries[name]
        digest.update(json.dumps([name, entry.dtype, entry.shape]).encode())
        digest.update(data[base + entry.start : base + entry.end])
    return f"sha256:{digest.hexdigest()}"
