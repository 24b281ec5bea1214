"""How far a TSP test file's reference tours are from a longer near-exact search.

Usage: ``python benchmarks/check_references.py FILE [FILE ...] [--count N] [--factor K]``

Each instance's reference (the file's tour) is compared with ``near_exact`` run for ``K``
times its usual CPU budget (default 10). Prints one line per file: the instances checked, how
many references are longer than the re-solve, their mean and largest excess in percent, and
the seconds taken; then up to 15 of the longer ones as (index, n, excess %). A longer reference
makes a model's gap look smaller, so the mean excess bounds how much a file understates gaps.

Made for the n = 30 / 35 files whose references were up to 26.6% long (docs/solvers.md,
"near_exact under load"; docs/results.md, "Test sets"). Single-threaded, in this process.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ptrnet.cli.common import positive_int
from ptrnet.io.errors import InputError
from ptrnet.io.paper_format import read_examples
from ptrnet.solvers.tsp import distance_matrix, tour_length
from ptrnet.solvers.tsp_exact import fast_tsp_near_exact, near_exact_budget
from ptrnet.tasks import get_task

SHOWN = 15
TIE = 1e-6  # relative differences below this are rounding


def excesses(path: str, count: int | None, factor: float) -> list[tuple[int, int, float]]:
    """(index, n, reference / re-solved length - 1) for the first ``count`` instances."""
    examples = read_examples(path, get_task("tsp"))[:count]
    rows = []
    for i, example in enumerate(examples):
        points, n = example.points, len(example.points)
        budget = factor * near_exact_budget(n)
        again = fast_tsp_near_exact(distance_matrix(points), budget)
        rows.append((i, n, tour_length(points, example.seq) / tour_length(points, again) - 1))
    return rows


def report(path: str, rows: list[tuple[int, int, float]], seconds: float) -> str:
    excess = np.array([r for _, _, r in rows])
    longer = [(i, n, round(100 * r, 3)) for i, n, r in rows if r > TIE]
    head = (
        f"{path}: {len(rows)} instances, {len(longer)} references longer; mean excess "
        f"{100 * excess.mean():.4f}%, largest {100 * excess.max():.2f}% ({seconds:.0f} s)"
    )
    return head + "\n  " + str(longer[:SHOWN])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="paper-format TSP files with reference tours")
    parser.add_argument(
        "--count", type=positive_int, help="check the first N instances (default: all)"
    )
    parser.add_argument("--factor", type=positive_float, default=10.0, help="budget multiple (10)")
    args = parser.parse_args(argv)
    for path in args.files:
        start = time.perf_counter()
        try:
            rows = excesses(path, args.count, args.factor)
        except InputError as err:
            parser.exit(1, f"check_references: error: {err}\n")
        if not rows:
            parser.exit(1, f"check_references: error: {path}: no instances\n")
        print(report(path, rows, time.perf_counter() - start), flush=True)


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (np.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


if __name__ == "__main__":
    main()
