"""How an error message shows a value the user supplied: :func:`quote`, used by every layer (it
imports nothing from ptrnet, so the task registry can use it as well as the CLI)."""

from __future__ import annotations

import reprlib

QUOTE_LIMIT = 80
"""An error shows at most this many characters of a bad value (then ``...``)."""

# A repr that stops early: a few items per container, six levels deep, so a huge or deeply
# nested value costs no more to show than a short one.
_BOUNDED = reprlib.Repr()
_BOUNDED.maxstring = _BOUNDED.maxlong = _BOUNDED.maxother = QUOTE_LIMIT + 2


def quote(value: object, limit: int = QUOTE_LIMIT) -> str:
    """How an error message shows ``value``: its ``repr`` on one line of printable characters
    (control and other non-printable characters escaped, as ``repr`` does in a string), at most
    ``limit`` characters of it, then ``...``; a string cut short also states its length, as in
    ``'abc'... (1000000 characters)``. Containers are shown a few items and levels deep, so the
    cost does not grow with the value.

    Args:
        value: anything; a value whose ``repr`` fails is shown as ``<TYPE>``.
        limit: the most characters shown of the value (``...`` and the length come on top).
    """
    if isinstance(value, str):
        return _quote_string(value, limit)
    try:
        text = _printable(_BOUNDED.repr(value))
    except Exception:  # noqa: BLE001 - a repr that raises (e.g. an int past str's digit limit)
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else f"{text[:limit]}..."


def _quote_string(text: str, limit: int) -> str:
    """``repr`` of the longest prefix of ``text`` whose repr, quotes aside, fits ``limit``."""
    keep = min(len(text), limit)
    shown = repr(text[:keep])
    while len(shown) > limit + 2:  # escapes (\x00, \u202e) made the repr longer
        keep -= 1
        shown = repr(text[:keep])
    return shown if keep == len(text) else f"{shown}... ({len(text)} characters)"


def _printable(text: str) -> str:
    """``text`` with each non-printable character (newline, ESC, NUL, ...) escaped."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)
