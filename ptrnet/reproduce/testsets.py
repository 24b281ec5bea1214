"""Test sets for the reproduced tables, and the TSP comparators measured on them.

A test set is either the paper's released file (its first ``limit`` lines) or ``count``
generated instances of one size from :data:`ptrnet.reproduce.plans.TEST_STREAM`, labelled by
the task's reference solver (TSP: ``auto``, exact for n <= 20, near-exact beyond). Training
draws stream 0 and validation stream 1, so a test instance is never a training instance. A
generated set is written to a paper-format file once and reread afterwards, so reruns score
the same instances with the same labels (the near-exact TSP solver runs on a time budget).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial
from itertools import islice

import numpy as np

from ptrnet.datasets.generation import generate_dataset
from ptrnet.io.atomic import atomic_write
from ptrnet.io.json_file import read_json_file
from ptrnet.io.paper_format import iter_examples, write_examples
from ptrnet.reproduce.plans import TEST_SEED, TEST_STREAM
from ptrnet.solvers.tsp import solve_tour, tour_length
from ptrnet.tasks import Task


@dataclass(frozen=True)
class TestSet:
    """Labelled test instances (0-based reference sequences) and their origin in words."""

    points: list[np.ndarray]
    refs: list[np.ndarray]
    source: str


def paper_test_set(path: str, task: Task, limit: int | None = None) -> TestSet:
    """The first ``limit`` (None: all) instances of the released file at ``path``.

    Raises:
        InputError: a malformed line or a label that is not a valid reference.
    """
    examples = list(islice(iter_examples(path, task, "reference"), limit))
    source = f"paper file {os.path.basename(path)}"
    return TestSet([e.points for e in examples], [e.seq for e in examples], source)


def generated_test_set(
    task: Task,
    n: int,
    count: int,
    folder: str,
    workers: int = 1,
    log: Callable[[str], None] = lambda _: None,
) -> TestSet:
    """``count`` labelled instances of size ``n`` from the test stream, cached in ``folder``
    as ``<task>-<n>-<count>.txt`` (labelled in ``workers`` processes the first time)."""
    path = os.path.join(folder, f"{task.name}-{n}-{count}.txt")
    if not os.path.exists(path):
        os.makedirs(folder, exist_ok=True)
        log(f"labelling {count:,} {task.name} test instances at n = {n}")
        write_examples(
            path, generate_dataset(task, n, count, TEST_SEED, workers=workers, stream=TEST_STREAM)
        )
    examples = list(iter_examples(path, task, "reference"))
    source = f"generated (seed {TEST_SEED}, stream {TEST_STREAM})"
    return TestSet([e.points for e in examples], [e.seq for e in examples], source)


def mean_tour_lengths(
    test: TestSet, solvers: Sequence[str], workers: int = 1, cache: str | None = None
) -> dict[str, float]:
    """Mean closed-tour length of the reference tours (``optimal``) and of each solver's.

    ``cache``: a JSON file keeping the means per test set, since the solvers are deterministic
    and slow at n = 50 (A2: about 70 ms per instance).
    """

    key = f"{test.source}, {len(test.points)} instances, n = {len(test.points[0])}"
    saved = _read_json(cache)
    if set(saved.get(key, {})) >= {"optimal", *solvers}:
        return saved[key]
    lengths = {"optimal": [tour_length(p, r) for p, r in zip(test.points, test.refs, strict=True)]}
    for solver in solvers:
        lengths[solver] = solver_lengths(test.points, solver, workers)
    saved[key] = {name: float(np.mean(values)) for name, values in lengths.items()}
    if cache is not None:
        with atomic_write(cache) as stream:
            json.dump(saved, stream, indent=2)
    return saved[key]


def _read_json(path: str | None) -> dict:
    """The JSON object cached at ``path``, {} when none (:mod:`ptrnet.io.json_file`)."""
    if path is None or not os.path.lexists(path):
        return {}
    return read_json_file(path)


def solver_lengths(points: Sequence[np.ndarray], solver: str, workers: int = 1) -> list[float]:
    """Closed-tour lengths of ``solver``'s tours, in ``workers`` processes when above 1."""
    if workers == 1:
        return [_solver_length(solver, p) for p in points]
    chunk = max(1, len(points) // (4 * workers))
    with ProcessPoolExecutor(workers) as pool:
        return list(pool.map(partial(_solver_length, solver), points, chunksize=chunk))


def _solver_length(solver: str, points: np.ndarray) -> float:

    return tour_length(points, solve_tour(points, solver))
