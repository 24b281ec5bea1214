"""The one exception type for bad user input, and the one for bad options.

Every problem with a file a user hands to ptrnet (a malformed line, a non-number, an index out of
range, a wrong count, an empty file) is an :class:`InputError`; its ``str`` is a single line
``FILE:LINE: problem`` that the CLI prints after ``ptrnet: error:``. Bad option values that
argparse cannot check on its own (e.g. a solver the task does not know) are a :class:`UsageError`.
Every message that shows a value the user supplied shows it through
:func:`ptrnet.quoting.quote`, so one line stays one short line whatever the value.
"""

from __future__ import annotations

import os


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
