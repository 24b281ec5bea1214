"""Reading JSON that ptrnet did not necessarily write: bounded in size and depth, of a known type.

Every JSON document ptrnet reads from a file (a run's ``config.json``, a model folder's
``sizes.json``) or from inside one (a safetensors header, its ``ptrnet`` metadata string) goes
through :func:`parse_json` or :func:`read_json_file`:

* the text is at most a stated number of bytes (:data:`MAX_JSON_BYTES` for a file of its own);
* it nests at most :data:`MAX_JSON_DEPTH` arrays and objects deep, which is checked *before*
  ``json.loads``, whose recursion would otherwise end in a ``RecursionError`` on, say, 100,000
  ``[`` (ptrnet's own files nest at most 6 deep);
* its top level is the type the caller expects (an object, or an array);
* a file is a regular file (:func:`ptrnet.io.text.read_regular_file`).

Each problem is one line: a :class:`JsonError` (a ``ValueError``) from :func:`parse_json`, for the
caller to wrap with the file it came from, or an :class:`~ptrnet.io.errors.InputError`
``FILE[:LINE]: problem`` from :func:`read_json_file`.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from ptrnet.io.errors import InputError
from ptrnet.io.text import read_regular_file

MAX_JSON_BYTES = 16 * 2**20
"""A JSON file of its own (``config.json``, ``sizes.json``): 16 MiB; ptrnet's are under 4 KB."""

MAX_JSON_DEPTH = 64
"""Arrays and objects nested in one another; Python's parser recurses once per level."""

_BACKSLASH, _QUOTE = ord("\\"), ord('"')
_OPEN, _OPEN_OBJECT, _CLOSE, _CLOSE_OBJECT = b"[{]}"
_CHUNK = 1 << 20
_TYPE_NAMES = {dict: "object", list: "array"}


class JsonError(ValueError):
    """What is wrong with a JSON document, in one line; ``line`` is 1-based, or None."""

    def __init__(self, problem: str, line: int | None = None) -> None:
        super().__init__(problem)
        self.line = line


def parse_json(
    text: str | bytes, kind: type = dict, limit: int = MAX_JSON_BYTES, name: str = ""
) -> Any:
    """The JSON value in ``text`` (UTF-8 when bytes), whose top level must be a ``kind``
    (``dict``: an object, ``list``: an array).

    Args:
        name: what the document is, to open messages with (``"metadata"``: ``metadata is not
            valid JSON``); none: ``not valid JSON``.

    Raises:
        JsonError: more than ``limit`` bytes, nesting deeper than :data:`MAX_JSON_DEPTH`, text
            that is not UTF-8 or not JSON (with its line), or another top-level type.
    """
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    if len(data) > limit:
        raise JsonError(_said(name, f"{len(data)} bytes, over the limit of {limit} bytes"))
    if not isinstance(text, str):  # json.loads would take UTF-16 and -32 too, the scan cannot
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise JsonError(_said(name, "not UTF-8 text")) from None
    if nesting_depth(data, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        problem = f"nested more than {MAX_JSON_DEPTH} levels deep, the limit"
        raise JsonError(_said(name, problem))
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise JsonError(_said(name, f"not valid JSON ({err.msg})"), err.lineno) from None
    if not isinstance(value, kind):
        problem = f"not a JSON {_TYPE_NAMES[kind]} (it is {_type_name(type(value))})"
        raise JsonError(_said(name, problem))
    return value


def nesting_depth(data: bytes, stop_above: int | None = None) -> int:
    """The deepest nesting of ``[``/``{`` in the JSON text ``data``, brackets inside strings
    not counted. A parser reads no deeper than this before it stops, also in text that is not
    JSON (a backslash outside a string ends a parse, so the escapes it could confuse come after
    the parser's stop). Vectorised over chunks: linear time, memory of one chunk, whatever the
    text.

    With ``stop_above``, only the comparison is exact: a depth within it may be returned as
    the count of opening brackets (when that is within it too), one beyond it as soon as the
    scan passes it.
    """
    opening = data.count(b"[") + data.count(b"{")
    if stop_above is not None and opening <= stop_above:
        return opening
    scan = _Scan()
    for start in range(0, len(data), _CHUNK):
        scan.feed(data[start : start + _CHUNK])
        if stop_above is not None and scan.deepest > stop_above:
            break
    return scan.deepest


class _Scan:
    """The state :func:`nesting_depth` carries from one chunk to the next: the backslashes
    ending the text so far, whether it ends inside a string, the level and the deepest."""

    def __init__(self) -> None:
        self.backslashes, self.in_string, self.level, self.deepest = 0, 0, 0, 0

    def feed(self, chunk: bytes) -> None:
        """Scan the next chunk of the text (work on its quotes and brackets only)."""
        codes = np.frombuffer(chunk, np.uint8)
        quotes = np.flatnonzero(codes == _QUOTE)
        if len(quotes) and (b"\\" in chunk or self.backslashes):
            quotes = quotes[~_escaped(codes, quotes, self.backslashes)]
        opens = (codes == _OPEN) | (codes == _OPEN_OBJECT)
        brackets = np.flatnonzero(opens | (codes == _CLOSE) | (codes == _CLOSE_OBJECT))
        if len(quotes):  # a bracket is outside strings after an even number of quotes
            brackets = brackets[(np.searchsorted(quotes, brackets) + self.in_string) % 2 == 0]
        elif self.in_string:
            brackets = brackets[:0]
        if len(brackets):
            steps = opens[brackets].view(np.int8) * 2 - 1
            levels = self.level + np.cumsum(steps, dtype=np.int64)
            self.deepest = max(self.deepest, int(levels.max()))
            self.level = int(levels[-1])
        self.in_string = (self.in_string + len(quotes)) % 2
        trailing = len(chunk) - len(chunk.rstrip(b"\\"))
        self.backslashes = trailing + (self.backslashes if trailing == len(chunk) else 0)


def _escaped(codes: np.ndarray, quotes: np.ndarray, backslashes: int) -> np.ndarray:
    """Which of the ``quotes`` (positions in ``codes``) follow an odd run of backslashes, when
    the text before ``codes`` ends with ``backslashes`` of them."""
    others = np.flatnonzero(codes != _BACKSLASH)  # the quotes among them
    before = np.searchsorted(others, quotes) - 1  # the last one before each quote
    previous = np.where(before >= 0, others[np.maximum(before, 0)], -1 - backslashes)
    return (quotes - previous) % 2 == 0  # quotes - previous - 1 backslashes between: odd


def read_json_file(
    path: str | os.PathLike[str], kind: type = dict, limit: int = MAX_JSON_BYTES
) -> Any:
    """The JSON value in the regular file ``path`` (see :func:`parse_json`).

    Raises:
        InputError: ``FILE[:LINE]: problem``, for a path that is missing or not a regular
            file, or anything :func:`parse_json` refuses.
    """
    data = read_regular_file(path, limit)
    try:
        return parse_json(data, kind, limit)
    except JsonError as err:
        raise InputError(path, err.line, str(err)) from None


def _said(name: str, problem: str) -> str:
    """``problem`` said of ``name`` (``metadata is ...``), or alone."""
    return f"{name} is {problem}" if name else problem


def _type_name(kind: type) -> str:
    """``an object``, ``an array``, ``a string`` ... for a JSON value's Python type."""
    names = {dict: "an object", list: "an array", str: "a string", bool: "true or false"}
    return names.get(kind) or ("a number" if kind in (int, float) else "null")
