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

MAX_BEAM_WIDTH = 1_024
"""``beam_width`` (``--beam-width``, ``beam_width=``): one instance of up to 255 points in one
view then fits :data:`MAX_SEARCH_POINTS`; wider beams are refused before any allocation."""

MAX_SAMPLES = 4_096
"""``samples`` (``--samples``): above Kool et al.'s 1,280 samples per instance, the protocol
the TSP benchmarks compare with; what one instance's samples hold is bounded by
:data:`MAX_SEARCH_POINTS` (1,280 samples fit an instance of up to 203 cities)."""

MAX_ITERATIONS = 1_000
"""Rounds of Random Re-Construct (``--iterations``, ``iterations=``): the largest budget Luo
et al. (LEHD, 2023) report, RRC1000. A round takes about 0.12 s at n = 100 and 1.1 s at
n = 1,000 on one CPU thread (docs/results.md, the frontier's rrc rows), so the longest search
is about 20 minutes an instance, never forever; the web page allows 100 per request."""

MAX_SEARCH_POINTS = 2**18
"""Candidate points one decoding search of a point task may hold: instances x width (beams or
samples) x views x starts (n with multistart) x (n + 1). Each costs 5-12 KB of peak memory
(measured: the bundled sort model, hidden 128, 5.3 KB; tsp, hidden 256, 8-12 KB), so a search
stays within about 2-3 GB. Dataset decoding splits its batches to fit; one instance that
does not fit alone is refused before any decoding."""

MAX_LINE_TOKENS = 2_000
"""Tokens on one line of a sentence task's file (source and target together), or in
``predict``'s sentence: the copy task's sentences have about 20, See et al. cut articles to
400. A 1 MiB line holds up to 524,288."""

MAX_FILE_TOKENS = 2**23
"""Tokens in one file of a sentence task: 8,388,608, about 700 MB held as read (80 bytes per
token, measured)."""

MAX_DECODE_TOKENS = 2**18
"""Tokens x beams one sentence decoding batch holds (each about 2.5 KB of peak memory with the
bundled copy model, measured: about 650 MB): batches are cut to fit, so memory follows the batch,
not the file."""

MAX_SENTENCE_BEAM_WIDTH = MAX_DECODE_TOKENS // (MAX_LINE_TOKENS + 1)
"""Beam width of a sentence task (131): a line at the token limit, END included, with that many
beams fits one decoding batch."""

MAX_SEED = 2**64 - 1
"""Largest seed: torch's generators take 0..2^64 - 1, numpy's any integer >= 0."""

EXERCISE_SECONDS = 60.0
"""Default limit of ``ptrnet exercises check`` (``--timeout``) on each exercise's child process,
its start included: a solution's child takes about 2 s of CPU, importing torch included, and
4.6 s of wall time on a loaded 2-core machine (measured); a student's endless loop stops there."""

MAX_THREADS = 4_096
"""Torch threads (``--threads``, a run's ``threads``, the Python API's ``threads=``) or data
workers a run may ask for: more than the cores of any machine ptrnet runs on. torch starts one
OpenMP thread per count at its next parallel operation, so a mistyped 10**6 would try to start
a million threads."""

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


def check_threads(value: object, name: str = "threads") -> int:
    """``value`` as an ``int``, when it is an integer (Python's or numpy's, not a bool) in
    1..:data:`MAX_THREADS`: what ``--threads`` takes.

    Raises:
        ValueError: anything else (0, a negative or larger integer, a bool, a float, a
            string), naming ``name`` and the range.
    """
    try:
        threads = None if isinstance(value, bool) else operator.index(value)
    except TypeError:
        threads = None
    if threads is None or not 1 <= threads <= MAX_THREADS:
        raise ValueError(
            f"{name} must be an integer from 1 to {MAX_THREADS:,}, got {quote(value, QUOTE_CHARS)}"
        )
    return threads
