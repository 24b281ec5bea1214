"""Compiled loops of the 2-opt and Or-opt local searches (numba, compiled at their first use in a
process and cached on disk where a cache can be written).

The public functions are :func:`ptrnet.solvers.tsp_heuristics.two_opt`,
:func:`ptrnet.solvers.or_opt.or_opt` and :func:`ptrnet.solvers.or_opt.two_opt_or_opt`; their
docstrings state the moves. These kernels make the same moves in the same order, so they reach
the same tours as the vectorised numpy code they replaced (benchmarks/reference_local_search.py
keeps that code as the oracle), 30-165x faster on one instance of 20-200 cities, where
numpy's per-call overhead had dominated (benchmarks/bench_local_search.py).

Contract of every kernel: ``dist`` a C-contiguous (n, n) float64 matrix, ``tour`` an int64
permutation of 0..n-1 (n >= 0) that the kernel modifies in place or replaces, ``max_passes`` < 0
for no limit. Ties go to the first candidate, as ``np.argmin`` gave them.

The functions below are plain Python; :func:`compiled` hands out their numba builds. numba is
imported there, not here, so importing ptrnet (and ``ptrnet --help``) never loads it, and a
cache that cannot be used never stops a command: with no writable cache directory (a read-only
install and HOME) the kernels are compiled in memory, and a cache that fails to load (a
corrupt or truncated file) is cleared and written anew, each with one :class:`KernelCacheWarning`.
"""

from __future__ import annotations

import functools
import types
import warnings
from collections.abc import Callable

import numpy as np

OR_OPT_RUNS = (1, 2, 3)  # the run lengths tried, in this order


def kernel_inputs(dist: np.ndarray, tour: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``dist`` and a fresh copy of ``tour`` in the types every kernel here takes: C-contiguous
    float64 and int64 (the public searches call this, so any caller's arrays work)."""
    return np.ascontiguousarray(dist, dtype=np.float64), np.array(tour, dtype=np.int64)


def move_threshold(dist: np.ndarray) -> float:
    """The improvement a move must beat: relative, so that float noise cannot cycle between
    tours of equal length."""
    top = 0.0
    for value in dist.ravel():
        top = max(top, value)
    return -1e-12 * top


def two_opt_kernel(dist: np.ndarray, tour: np.ndarray, max_passes: int) -> np.ndarray:
    """2-opt passes on ``tour`` in place: for each first edge (t[i], t[i+1]) in order, the best
    second edge (t[j], t[j+1]), its reversal of t[i+1..j] applied if it shortens the tour."""
    n = tour.shape[0]
    if n < 4:
        return tour
    threshold = move_threshold(dist)
    passes = 0
    improved = True
    while improved and (max_passes < 0 or passes < max_passes):
        improved = False
        for i in range(n - 2):
            a, b = tour[i], tour[i + 1]
            best, best_j = np.inf, -1
            # For i = 0, j = n-1 would pick the edge that shares city t[0]: skip it.
            for j in range(i + 2, n if i > 0 else n - 1):
                c, e = tour[j], tour[(j + 1) % n]
                delta = dist[a, c] + dist[b, e] - dist[a, b] - dist[c, e]
                if delta < best:
                    best, best_j = delta, j
            if best < threshold:
                tour[i + 1 : best_j + 1] = tour[i + 1 : best_j + 1][::-1].copy()
                improved = True
        passes += 1
    return tour


def run_move(
    dist: np.ndarray, tour: np.ndarray, start: int, run: int, threshold: float
) -> np.ndarray:
    """``tour`` with the ``run`` cities from position ``start`` on moved to the place (and way
    round) that shortens it most, starting at the city after the run's old place; an empty
    array when no place shortens it by more than ``-threshold``."""
    n = tour.shape[0]
    turned = np.roll(tour, -start)
    rest = turned[run:]  # the cycle q ... p without the run
    first, last = turned[0], turned[run - 1]
    p, q = rest[-1], rest[0]
    saved = dist[p, first] + dist[last, q] - dist[p, q]  # taking the run out, p-q joined
    ahead_best, ahead_at = np.inf, -1
    behind_best, behind_at = np.inf, -1
    for w in range(n - run - 1):  # every edge a-b of the rest except p-q itself
        a, b = rest[w], rest[w + 1]
        joined = dist[a, b]
        ahead = dist[a, first] + dist[last, b] - joined  # the run put in a-b
        behind = dist[a, last] + dist[first, b] - joined  # the same, reversed
        if ahead < ahead_best:
            ahead_best, ahead_at = ahead, w
        if behind < behind_best:
            behind_best, behind_at = behind, w
    reverse = not ahead_best <= behind_best
    where, cost = (behind_at, behind_best) if reverse else (ahead_at, ahead_best)
    if cost - saved >= threshold:
        return tour[:0]
    piece = turned[:run][::-1] if reverse else turned[:run]
    return np.concatenate((rest[: where + 1], piece, rest[where + 1 :]))


def or_opt_kernel(dist: np.ndarray, tour: np.ndarray, max_passes: int) -> np.ndarray:
    """Or-opt passes: each run length in turn, each start position in turn, the best move of
    that run applied when it shortens the tour; until a pass moves nothing."""
    n = tour.shape[0]
    threshold = move_threshold(dist)
    passes = 0
    improved = True
    while improved and (max_passes < 0 or passes < max_passes):
        improved = False
        for run in OR_OPT_RUNS:
            if n < run + 3:  # the run, and at least three cities to put it between
                break
            for start in range(n):
                moved = run_move(dist, tour, start, run, threshold)
                if moved.shape[0]:
                    tour, improved = moved, True
        passes += 1
    return tour


def two_opt_or_opt_kernel(dist: np.ndarray, tour: np.ndarray) -> np.ndarray:
    """2-opt to a local optimum, then Or-opt and 2-opt in turn until Or-opt moves nothing."""
    tour = two_opt_kernel(dist, tour, -1)
    while True:
        moved = or_opt_kernel(dist, tour.copy(), -1)
        if np.array_equal(moved, tour):
            return tour
        tour = two_opt_kernel(dist, moved, -1)


KERNELS = ("move_threshold", "run_move", "two_opt_kernel", "or_opt_kernel", "two_opt_or_opt_kernel")


class KernelCacheWarning(RuntimeWarning):
    """The compiled kernels' disk cache could not be used; they were compiled without it."""


@functools.cache
def compiled() -> types.SimpleNamespace:
    """The kernels of :data:`KERNELS` compiled by numba (attributes of the same names), compiled
    or loaded from the disk cache once per process, and run once on a tiny tour so that a cache
    that fails to load is met here rather than in a caller's search."""
    try:
        built = _build(cache=True)
    except RuntimeError as err:  # numba: "cannot cache function ...: no locator available"
        _warn(f"no writable cache directory ({err}); compiling in memory for this process")
        return _warmed(_build(cache=False))
    try:
        return _warmed(built)
    except Exception as err:  # noqa: BLE001 - any failure to load a cached build
        for kernel in vars(built).values():
            kernel._cache.flush()  # numba's index of the cached builds: forgotten, rewritten
        _warn(f"the disk cache failed to load ({type(err).__name__}: {err}); cleared, recompiled")
        return _warmed(_build(cache=True))


def _build(cache: bool) -> types.SimpleNamespace:
    """numba dispatchers for :data:`KERNELS`, each calling the others' dispatchers (numba reads
    a callee from the caller's globals, given here without touching this module's)."""
    from numba import njit

    names: dict[str, object] = dict(globals())
    for name in KERNELS:  # callees before callers
        func = globals()[name]
        clone = types.FunctionType(func.__code__, names, name, func.__defaults__)
        clone.__qualname__, clone.__module__, clone.__doc__ = name, __name__, func.__doc__
        names[name] = njit(cache=cache)(clone)
    return types.SimpleNamespace(**{name: names[name] for name in KERNELS})


def _warmed(built: types.SimpleNamespace) -> types.SimpleNamespace:
    """``built`` after a call of every kernel a search calls on five cities (compiled or
    loaded from the cache for the one signature the contract above allows)."""
    points = np.array([[0, 0], [1, 1], [1, 0], [0, 1], [0.5, 0.2]], dtype=np.float64)
    dist = np.sqrt(((points[:, None] - points[None]) ** 2).sum(-1))
    tour = np.arange(5, dtype=np.int64)
    calls: list[Callable[[], object]] = [
        lambda: built.two_opt_kernel(dist, tour.copy(), -1),
        lambda: built.or_opt_kernel(dist, tour.copy(), -1),
        lambda: built.two_opt_or_opt_kernel(dist, tour.copy()),
    ]
    for call in calls:
        call()
    return built


def _warn(message: str) -> None:
    warnings.warn(f"2-opt/Or-opt kernels: {message}", KernelCacheWarning, stacklevel=3)
