"""The text format of the sentence tasks (``copy``): one example per line, ``SOURCE<TAB>TARGET``.

Each side is a sequence of tokens separated by single spaces: lower-case words, numbers and
punctuation marks each as their own token (see :func:`ptrnet.tasks.sentences.tokenize`), for
example::

    late on friday akinyi broke the lisbon record by 4 seconds<TAB>akinyi breaks lisbon record

Blank lines and lines starting with ``#`` are skipped. A file of sources to summarise
(``ptrnet predict copy FILE``) may omit the tab and the target. Files are read as the point
tasks' are (:func:`ptrnet.io.text.numbered_lines`): UTF-8 (a byte order mark is skipped), lines
ending in ``\n``, ``\r\n`` or ``\r``, each at most :data:`~ptrnet.io.limits.MAX_LINE_BYTES`,
with at most :data:`~ptrnet.io.limits.MAX_LINE_TOKENS` tokens per line and
:data:`~ptrnet.io.limits.MAX_FILE_TOKENS` per file (what decoding and the file's examples hold
in memory). Control characters are kept as tokens but written escaped (:func:`printable`), so
an output never sends a raw NUL or ESC to a terminal or file. Every problem is an
:class:`~ptrnet.io.errors.InputError` reading ``FILE:LINE: problem`` (or
``FILE: problem`` for the file as a whole).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from ptrnet.io.atomic import atomic_write
from ptrnet.io.errors import InputError
from ptrnet.io.limits import MAX_FILE_TOKENS, MAX_LINE_TOKENS
from ptrnet.io.text import numbered_lines
from ptrnet.quoting import printable
from ptrnet.tasks.sentences import SEPARATOR, Pair, tokenize


def parse_line(line: str, path: str, number: int, need_target: bool = True) -> Pair:
    """One line of the format (without its newline) as a :class:`Pair`.

    Raises:
        InputError: no tab (when ``need_target``), more than one tab, an empty side, or more
            than :data:`~ptrnet.io.limits.MAX_LINE_TOKENS` tokens.
    """
    parts = line.split(SEPARATOR)
    if len(parts) > 2:
        raise InputError(
            path, number, f"expected one tab between source and target, found {len(parts) - 1}"
        )
    if len(parts) == 1 and need_target:
        raise InputError(path, number, "expected 'SOURCE<TAB>TARGET', found no tab")
    source = tokenize(parts[0])
    if not source:
        raise InputError(path, number, "empty source sentence")
    target = tokenize(parts[1]) if len(parts) == 2 else ()
    if need_target and not target:
        raise InputError(path, number, "empty target summary")
    tokens = len(source) + len(target)
    if tokens > MAX_LINE_TOKENS:
        raise InputError(
            path, number, f"{tokens:,} tokens, over the limit of {MAX_LINE_TOKENS:,} per line"
        )
    return Pair(source, target)


def read_pairs(path: str | os.PathLike[str], need_target: bool = True) -> list[Pair]:
    """All examples of a file in the format (any readable path: a regular file, /dev/stdin, a
    pipe).

    Raises:
        InputError: a file that cannot be read (missing, a directory, over the size limit), a
            line that is not UTF-8 or is over the length limit, a malformed line, a line or
            file over its token limit (all as ``FILE:LINE`` or ``FILE``), or a file without
            examples.
    """
    path = os.fspath(path)
    pairs = []
    tokens = 0
    for number, line in numbered_lines(path):
        if line.strip() and not line.startswith("#"):
            pairs.append(parse_line(line, path, number, need_target))
            tokens += len(pairs[-1].source) + len(pairs[-1].target)
            if tokens > MAX_FILE_TOKENS:
                raise InputError(
                    path,
                    number,
                    f"the file passes {MAX_FILE_TOKENS:,} tokens, the limit per file, at this line",
                )
    if not pairs:
        raise InputError(path, None, "no examples in file")
    return pairs


def write_pairs(path: str | os.PathLike[str], pairs: Iterable[Pair]) -> int:
    """Write ``pairs`` one per line, atomically, control characters escaped
    (:func:`printable`); returns how many were written."""
    count = 0
    with atomic_write(path) as stream:
        for pair in pairs:
            stream.write(printable(pair.line()) + "\n")
            count += 1
    return count
