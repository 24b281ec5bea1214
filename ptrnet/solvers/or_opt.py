"""Or-opt moves, and the 2-opt + Or-opt local search that polishes a TSP tour.

An Or-opt move (Or 1976) takes a run of one to three consecutive cities out of the tour and puts
it back, either way round, between two other neighbouring cities. 2-opt reverses a stretch of
the tour; Or-opt moves a short stretch elsewhere, which 2-opt cannot do in one move. Together
they reach tours that neither reaches alone: from the bundled model's greedy tours at n = 100,
2-opt alone ends about 3% above near-optimal, both together about 1.8% (docs/results.md).

Every function takes a symmetric ``(n, n)`` float64 distance matrix and an int64 permutation
of ``0..n-1`` without the closing index, and returns a new one no longer than it.
"""

from __future__ import annotations

import numpy as np

from ptrnet.solvers.local_search_kernels import OR_OPT_RUNS, compiled, kernel_inputs

__all__ = ["OR_OPT_RUNS", "or_opt", "two_opt_or_opt"]


def or_opt(dist: np.ndarray, tour: np.ndarray, max_passes: int | None = None) -> np.ndarray:
    """Improve ``tour`` by Or-opt moves; return a new array.

    One pass takes each run length of :data:`OR_OPT_RUNS` and, for each position in turn, the
    run of that many cities starting there: it evaluates every place the run could go, both ways
    round, and moves it to the best one (the first of equals) if that shortens the tour; the
    moved tour then starts at the city after the run's old place. Passes repeat until one makes
    no move (an Or-opt local optimum) or ``max_passes`` have run. A moved tour may start at
    another city; the cycle is what counts.
    """
    limit = -1 if max_passes is None else max_passes
    return compiled().or_opt_kernel(*kernel_inputs(dist, tour), limit)


def two_opt_or_opt(dist: np.ndarray, tour: np.ndarray) -> np.ndarray:
    """2-opt to a local optimum, then Or-opt and 2-opt in turn until neither moves: a tour that
    no single 2-opt or Or-opt move shortens. Deterministic; never longer than ``tour``."""
    return compiled().two_opt_or_opt_kernel(*kernel_inputs(dist, tour))
