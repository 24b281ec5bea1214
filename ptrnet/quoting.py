"""How an error message shows a value the user supplied (:func:`quote`) and suggests the name
they may have meant (:func:`did_you_mean`), and how an output shows a text the user supplied
(:func:`printable`), used by every layer (it imports nothing from ptrnet, so the task registry
can use it as well as the CLI)."""

from __future__ import annotations

import difflib
import re
import reprlib
from collections.abc import Iterable

#: The control characters :func:`printable` escapes: category Cc, the tab (a separator) aside.
CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")

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


def printable(text: str) -> str:
    """``text`` with every control character but the tab (Unicode category Cc: NUL, ESC, DEL,
    the C1 range) written as Python escapes it (``\\x00``, ``\\x1b``), so printing it cannot
    drive a terminal and a written line stays one line: what ptrnet writes of a text it read
    (a copy input's tokens, a CSV's point names)."""
    return CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def did_you_mean(value: object, names: Iterable[str]) -> str:
    """``"; did you mean 'NAME'?"`` for the one of ``names`` closest to ``value``, case
    ignored: difflib's closest at a ratio of at least 0.6, else the only name that contains
    ``value`` (3 characters or more: ``hull`` -> ``convex_hull``); ``""`` when there is none.
    The tail of an error about an unknown name (``unknown task 'tps'; did you mean 'tsp'?``).
    """
    spelled = {str(name).lower(): str(name) for name in names}
    typed = str(value).lower()
    close = difflib.get_close_matches(typed, list(spelled), n=1, cutoff=0.6)
    if not close and len(typed) >= 3:
        close = [name for name in spelled if typed in name]
    return f"; did you mean {quote(spelled[close[0]])}?" if len(close) == 1 else ""
