"""The size limits every command enforces up front, and the seeds it takes, stated once
(docs/reliability.md).

Each limit turns an input that would exhaust memory or time into a one-line error before any
work starts. The values leave wide room above the paper's sizes (n <= 50, one line of a few
kilobytes) and the 29 bundled TSPLIB instances (n <= 200).
"""

from __future__ import annotations

import operator

from ptrnet.quoting import quote

MAX_FILE_BYTES = 4 * 2**30
"""An instance or dataset file (paper format, point list, CSV, .npy, TSPLIB): 4 GiB."""

MAX_LINE_BYTES = 2**20
"""One line of a text file: 1 MiB (a 50-point line of the paper's files is about 2 KB)."""

MAX_POINTS = 100_000
"""Points in one instance read from a file (the largest TSPLIB instance has 85,900 cities)."""

MAX_MODEL_POINTS = 1_000
"""Points per instance a model decodes (work grows as n^2 per instance; the paper's n <= 50)."""

MAX_COORDINATE = 1e100
"""|coordinate| bound: lengths and areas in the input's units stay finite (1e100^2 < 1e308)."""

MAX_SEED = 2**64 - 1
"""Largest seed: torch's generators take 0..2^64 - 1, numpy's any integer >= 0."""

QUOTE_CHARS = 24
"""An error quotes at most this many characters of a bad token of an input file, then '...'
(:func:`ptrnet.io.errors.quote`; a file's line already names where the token is)."""


def check_seed(value: object, name: str = "seed") -> int:
    """``value`` as an ``int``, when it is an integer (Python's or numpy's, not a bool) in
    0..:data:`MAX_SEED`: the seeds every command takes (``--seed``, ``--stream``).

    Raises:
        ValueError: anything else (a negative or larger integer, a bool, a float, a string),
            naming ``name`` and the range.
    """
    try:
        seed = None if isinstance(value, bool) else operator.index(value)
    except TypeError:
        seed = None
    if seed is None or not 0 <= seed <= MAX_SEED:
        raise ValueError(
            f"{name} must be an integer from 0 to 2^64 - 1, got {quote(value, QUOTE_CHARS)}"
        )
    return seed
