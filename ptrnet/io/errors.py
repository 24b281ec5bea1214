"""The one exception type for bad user input, and the one for bad options.

Every problem with a file a user hands to ptrnet (a malformed line, a non-number, an index out of
range, a wrong count, an empty file) is an :class:`InputError`; its ``str`` is a single line
``FILE:LINE: problem`` that the CLI prints after ``ptrnet: error:``. Bad option values that
argparse cannot check on its own (e.g. a solver the task does not know) are a :class:`UsageError`.
Every message that shows a value the user supplied shows it through :func:`quote`, so one line
stays one short line whatever the value.
"""

from __future__ import annotations

import os
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
        keep = max(0, keep * limit // (len(shown) - 2) - 1)
        shown = repr(text[:keep])
    return shown if keep == len(text) else f"{shown}... ({len(text)} characters)"


def _printable(text: str) -> str:
    """``text`` with each non-printable character (newline, ESC, NUL, ...) escaped."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


class InputError(Exception):
    """A problem with an input file, located by path and 1-based line number.

    Args:
        path: the file the problem is in.
        line: 1-based line number, or None for a problem with the file as a whole
            (then ``str`` is ``FILE: problem``).
        problem: what is wrong, in a few words; newlines are folded so the message stays one line.
    """

    def __init__(self, path: str | os.PathLike[str], line: int | None, problem: str) -> None:
        self.path = os.fspath(path)
        self.line = line
        self.problem = " ".join(str(problem).split())
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.problem}"


class UsageError(Exception):
    """An option value that is not valid for the chosen task (e.g. an unknown solver)."""
