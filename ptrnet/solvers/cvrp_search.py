"""A local search on CVRP routes: 2-opt within each route, and relocating or swapping
customers between routes while every load stays within the capacity, until no move shortens
the routes (a local optimum of all three neighbourhoods).

Every route is a closed tour through the depot (index 0): ``[3, 1]`` drives 0-3-1-0. A move is
taken only when it shortens the total by more than a rounding margin (:func:`margin`), so the
search ends and never lengthens an answer. Routes keep their order and direction where no move
touches them; one emptied by a move is dropped; a customer may also move to a route of its own.
Plain numpy and Python: routes are short (a vehicle serves tens of customers at most).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def margin(dist: np.ndarray) -> float:
    """The least gain a move must bring: 1e-12 of the largest distance (rounding noise below)."""
    return 1e-12 * float(np.max(dist, initial=0.0))


def route_cost(dist: np.ndarray, route: Sequence[int]) -> float:
    """Length of depot -> ``route`` -> depot under ``dist`` (0 for an empty route)."""
    stops = [0, *route, 0]
    return float(sum(dist[a, b] for a, b in zip(stops[:-1], stops[1:], strict=True)))


def two_opt_route(dist: np.ndarray, route: list[int], eps: float) -> bool:
    """2-opt ``route`` in place (the depot fixed at both ends) to a local optimum; whether it
    moved. A move reverses ``tour[i+1..j]`` where it shortens the closed tour by more than
    ``eps``; the best such move of each first edge is taken."""
    moved = False
    improved = True
    while improved:
        improved = False
        tour = np.asarray([0, *route, 0], dtype=np.int64)  # (k + 2,)
        for i in range(len(tour) - 3):
            a, b = tour[i], tour[i + 1]
            c, d = tour[i + 2 : -1], tour[i + 3 :]  # second edges (c, d), j = i+2 ..
            gain = dist[a, b] + dist[c, d] - dist[a, c] - dist[b, d]  # (k - i - 1,)
            j = int(np.argmax(gain))
            if gain[j] > eps:
                lo, hi = i, i + 1 + j  # reverse route[lo..hi] (tour positions i+1 .. i+2+j)
                route[lo : hi + 1] = route[lo : hi + 1][::-1]
                moved = improved = True
                break
    return moved


def _insertion(dist: np.ndarray, route: list[int], c: int) -> tuple[float, int]:
    """The cheapest place to insert ``c`` into ``route``: (added length, index to insert at)."""
    stops = np.asarray([0, *route, 0], dtype=np.int64)
    added = dist[stops[:-1], c] + dist[c, stops[1:]] - dist[stops[:-1], stops[1:]]  # (k + 1,)
    at = int(np.argmin(added))
    return float(added[at]), at


def _removal(dist: np.ndarray, route: list[int], p: int) -> float:
    """Length saved by taking the customer at position ``p`` out of ``route``."""
    prev = route[p - 1] if p > 0 else 0
    nxt = route[p + 1] if p + 1 < len(route) else 0
    c = route[p]
    return float(dist[prev, c] + dist[c, nxt] - dist[prev, nxt])


def relocate_once(
    dist: np.ndarray, demands: np.ndarray, capacity: int, routes: list[list[int]], eps: float
) -> bool:
    """Move one customer to its cheapest place in another route (or a route of its own) whose
    load stays within ``capacity``, the first such move that shortens the total by more than
    ``eps``; whether one was made."""
    loads = [int(demands[r].sum()) for r in routes]
    for a, route in enumerate(routes):
        for p, c in enumerate(route):
            saved = _removal(dist, route, p)
            for b, other in enumerate([*routes, []]):
                if b == a or (other and loads[b] + demands[c] > capacity):
                    continue
                added, at = _insertion(dist, other, c)
                if added - saved < -eps:
                    del route[p]
                    if b == len(routes):
                        routes.append([c])
                    else:
                        other.insert(at, c)
                    return True
    return False


def _swap_gain(dist: np.ndarray, route: list[int], p: int, c: int) -> float:
    """Length saved by putting customer ``c`` in place of the one at position ``p``."""
    prev = route[p - 1] if p > 0 else 0
    nxt = route[p + 1] if p + 1 < len(route) else 0
    old = route[p]
    return float(dist[prev, old] + dist[old, nxt] - dist[prev, c] - dist[c, nxt])


def swap_once(
    dist: np.ndarray, demands: np.ndarray, capacity: int, routes: list[list[int]], eps: float
) -> bool:
    """Exchange two customers of two routes, each taking the other's place, where both loads
    stay within ``capacity`` and the total shortens by more than ``eps``; whether one was."""
    loads = [int(demands[r].sum()) for r in routes]
    for a in range(len(routes)):
        for b in range(a + 1, len(routes)):
            for p, c in enumerate(routes[a]):
                for q, e in enumerate(routes[b]):
                    shift = int(demands[e]) - int(demands[c])
                    if loads[a] + shift > capacity or loads[b] - shift > capacity:
                        continue
                    gain = _swap_gain(dist, routes[a], p, e) + _swap_gain(dist, routes[b], q, c)
                    if gain > eps:
                        routes[a][p], routes[b][q] = e, c
                        return True
    return False


def improve_routes(
    dist: np.ndarray,
    demands: np.ndarray,
    capacity: int,
    routes: Sequence[Sequence[int] | np.ndarray],
) -> list[np.ndarray]:
    """``routes`` after 2-opt within each, relocations and swaps between them, to a local
    optimum of the three; never longer under ``dist``, every load within ``capacity`` where
    the given ones were.

    Args:
        dist: (m, m) symmetric distances, the depot row 0.
        demands: (m,) integer demands, the depot's 0.
        capacity: the vehicles' capacity.
        routes: the customers of each route in driving order (no depot).
    """
    dist = np.asarray(dist, dtype=np.float64)
    demands = np.asarray(demands, dtype=np.int64)
    eps = margin(dist)
    work = [[int(c) for c in r] for r in routes if len(r)]
    moved = True
    while moved:
        for route in work:
            two_opt_route(dist, route, eps)
        moved = relocate_once(dist, demands, capacity, work, eps) or swap_once(
            dist, demands, capacity, work, eps
        )
        work = [r for r in work if r]
    return [np.asarray(r, dtype=np.int64) for r in work]
