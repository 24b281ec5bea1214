"""The paper's TSP comparators A1, A2, A3 (Sec. 4, Table 2) and an optional LKH wrapper.

* A1: greedy-edge construction, then at most ``A1_TWO_OPT_PASSES`` 2-opt passes.
* A2: nearest neighbour from every start city, each 2-opted to a local optimum; the best is kept.
* A3: Christofides (networkx: minimum spanning tree + minimum-weight perfect matching), then
  2-opt to a local optimum.

Every function takes a symmetric ``(n, n)`` float64 distance matrix and returns an int64
permutation of ``0..n-1`` without the closing index. All three are deterministic. The paper's
"a few 2-opt passes" for A1 is not quantified; ``A1_TWO_OPT_PASSES = 3`` is our choice.
"""

from __future__ import annotations

import numpy as np

from ptrnet.solvers.local_search_kernels import compiled, kernel_inputs
from ptrnet.solvers.tsp_exact import cycle_cost, integer_distances

A1_TWO_OPT_PASSES = 3
LKH_RUNS = 10


def two_opt(dist: np.ndarray, tour: np.ndarray, max_passes: int | None = None) -> np.ndarray:
    """Improve ``tour`` by 2-opt moves; return a new array.

    One pass visits every first edge (t[i], t[i+1]) in order, evaluates all second edges
    (t[j], t[j+1]) at once and applies the best improving reversal of t[i+1..j]. Passes repeat
    until one makes no move (a 2-opt local optimum) or ``max_passes`` have run.

    Args:
        dist: (n, n) symmetric distances.
        tour: (n,) permutation, no closing index.
        max_passes: stop after this many passes; None runs to a local optimum.
    """
    limit = -1 if max_passes is None else max_passes
    return compiled().two_opt_kernel(*kernel_inputs(dist, tour), limit)


def greedy_edge_tour(dist: np.ndarray) -> np.ndarray:
    """Greedy-edge construction: take edges shortest first while every degree stays <= 2 and no
    cycle closes early (union-find), then close the resulting Hamiltonian path."""
    n = len(dist)
    if n <= 3:
        return np.arange(n, dtype=np.int64)
    rows, cols = np.triu_indices(n, 1)
    order = np.argsort(dist[rows, cols], kind="stable")
    root = list(range(n))
    neighbours: list[list[int]] = [[] for _ in range(n)]
    added = 0
    for u, v in zip(rows[order].tolist(), cols[order].tolist(), strict=True):
        if len(neighbours[u]) == 2 or len(neighbours[v]) == 2:
            continue
        ru, rv = _find(root, u), _find(root, v)
        if ru == rv:
            continue
        root[ru] = rv
        neighbours[u].append(v)
        neighbours[v].append(u)
        added += 1
        if added == n - 1:
            break
    return _walk_path(neighbours)


def _find(root: list[int], x: int) -> int:
    """Union-find root of ``x`` with path halving."""
    while root[x] != x:
        root[x] = root[root[x]]
        x = root[x]
    return x


def _walk_path(neighbours: list[list[int]]) -> np.ndarray:
    """The cities of a Hamiltonian path (given as adjacency lists) in order from one end."""
    prev, city = -1, next(c for c, nb in enumerate(neighbours) if len(nb) == 1)
    order = [city]
    while len(order) < len(neighbours):
        prev, city = city, next(c for c in neighbours[city] if c != prev)
        order.append(city)
    return np.array(order, dtype=np.int64)


def nearest_neighbour_tours(dist: np.ndarray) -> np.ndarray:
    """Nearest-neighbour tours from every start city at once: (n, n), row s starts at city s."""
    n = len(dist)
    tours = np.empty((n, n), dtype=np.int64)
    tours[:, 0] = np.arange(n)
    visited = np.eye(n, dtype=bool)
    for step in range(1, n):
        nearest = np.where(visited, np.inf, dist[tours[:, step - 1]]).argmin(axis=1)
        tours[:, step] = nearest
        visited[np.arange(n), nearest] = True
    return tours


def christofides_tour(dist: np.ndarray) -> np.ndarray:
    """Christofides' tour (networkx), at most 1.5x optimal for metric distances."""
    import networkx as nx
    from networkx.algorithms.approximation import christofides

    n = len(dist)
    if n <= 3:
        return np.arange(n, dtype=np.int64)
    # Built edge by edge: nx.from_numpy_array would drop zero-length edges (duplicate points).
    graph = nx.Graph()
    rows, cols = np.triu_indices(n, 1)
    edges = zip(rows.tolist(), cols.tolist(), dist[rows, cols].tolist(), strict=True)
    graph.add_weighted_edges_from(edges)
    cycle = christofides(graph, weight="weight")
    return np.asarray(cycle[:-1], dtype=np.int64)


def a1_tour(dist: np.ndarray) -> np.ndarray:
    """A1: greedy edge + at most ``A1_TWO_OPT_PASSES`` 2-opt passes."""
    return two_opt(dist, greedy_edge_tour(dist), max_passes=A1_TWO_OPT_PASSES)


def a2_tour(dist: np.ndarray) -> np.ndarray:
    """A2: nearest neighbour from every start, each 2-opted to a local optimum; the shortest."""
    if len(dist) <= 3:
        return np.arange(len(dist), dtype=np.int64)
    improved = [two_opt(dist, tour) for tour in nearest_neighbour_tours(dist)]
    return min(improved, key=lambda tour: cycle_cost(dist, tour))


def a3_tour(dist: np.ndarray) -> np.ndarray:
    """A3: Christofides + 2-opt to a local optimum."""
    return two_opt(dist, christofides_tour(dist))


def lkh_tour(dist: np.ndarray, runs: int = LKH_RUNS) -> np.ndarray:
    """A tour from LKH-3 through the optional ``elkai`` package (non-commercial licence).

    elkai truncates float distances to integers, so it gets :func:`integer_distances`; the same
    rounding caveat as for fast-tsp applies. LKH seeds itself with a fixed seed, so the result is
    deterministic.

    Raises:
        ImportError: if elkai is not installed (``pip install ptrnet[lkh]``).
    """
    try:
        import elkai
    except ImportError as exc:
        raise ImportError(
            "TSP solver 'lkh' needs the optional elkai package (LKH-3, non-commercial "
            "licence): pip install ptrnet[lkh]"
        ) from exc
    n = len(dist)
    if n <= 3:
        return np.arange(n, dtype=np.int64)
    cycle = elkai.DistanceMatrix(integer_distances(dist).tolist()).solve_tsp(runs=runs)
    return np.asarray(cycle[:-1], dtype=np.int64)
