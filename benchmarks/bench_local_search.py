"""The compiled 2-opt and Or-opt (``ptrnet.solvers.local_search_kernels``) against the numpy code
they replaced (benchmarks/reference_local_search.py), on the same start tours in one process:
CPU milliseconds per tour, the ratio, and a check that both reach the same tour.

    python benchmarks/bench_local_search.py
    python benchmarks/bench_local_search.py --n 20 50 --count 4 --start random

Start tours: nearest neighbour from city 0 (``--start nn``, the default: a realistic tour to
polish, about 25% above optimal) or a random permutation (``--start random``: many more
moves). Uniform cities in the unit square (seed 0). The kernels are compiled (or loaded from
their disk cache) before timing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks import reference_local_search as reference  # noqa: E402
from benchmarks.bench_kool import cpu_model  # noqa: E402
from ptrnet.solvers.or_opt import two_opt_or_opt  # noqa: E402
from ptrnet.solvers.tsp import distance_matrix  # noqa: E402
from ptrnet.solvers.tsp_heuristics import nearest_neighbour_tours, two_opt  # noqa: E402


def cpu_ms(search, cases) -> tuple[float, list[np.ndarray]]:
    """Mean CPU milliseconds per case of ``search(dist, tour)``, and its tours."""
    start = time.process_time()
    tours = [search(dist, tour) for dist, tour in cases]
    return 1000 * (time.process_time() - start) / len(cases), tours


def cases_of(n: int, count: int, start: str, rng: np.random.Generator) -> list:
    cases = []
    for _ in range(count):
        dist = distance_matrix(rng.random((n, 2)))
        tour = nearest_neighbour_tours(dist)[0] if start == "nn" else rng.permutation(n)
        cases.append((dist, tour))
    return cases


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[20, 50, 100, 200, 500])
    parser.add_argument("--count", type=int, default=20, help="instances per size")
    parser.add_argument("--start", choices=["nn", "random"], default="nn")
    args = parser.parse_args(argv)
    searches = {
        "2-opt": (two_opt, reference.two_opt),
        "2-opt + Or-opt": (two_opt_or_opt, reference.two_opt_or_opt),
    }
    warm = cases_of(8, 1, args.start, np.random.default_rng(1))
    for compiled, _ in searches.values():
        cpu_ms(compiled, warm)
    print(f"# {cpu_model()}; start tours: {args.start}; CPU ms per tour, {args.count} per size")
    print("| n | search | numpy ms | compiled ms | speed-up | same tours |")
    print("|---|---|---:|---:|---:|---|")
    rows = []
    rng = np.random.default_rng(0)
    for n in args.n:
        cases = cases_of(n, args.count, args.start, rng)
        for name, (compiled, numpy_search) in searches.items():
            slow, expected = cpu_ms(numpy_search, cases)
            fast, found = cpu_ms(compiled, cases)
            same = all(np.array_equal(a, b) for a, b in zip(found, expected, strict=True))
            rows.append(dict(n=n, search=name, numpy_ms=slow, compiled_ms=fast, same=same))
            print(f"| {n} | {name} | {slow:.2f} | {fast:.3f} | {slow / fast:.0f}x | {same} |")
    return rows


if __name__ == "__main__":
    main()
