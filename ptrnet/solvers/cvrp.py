"""Capacitated vehicle routing (CVRP): the instance protocol, routes, their cost and validity, an
exact solver for tiny instances and the PyVRP reference.

An instance is ``coords`` (m, 2) float, row 0 the depot and rows 1..n the customers (m = n + 1),
``demands`` (m,) integers (the depot's 0, each customer's in 1..capacity) and one integer
``capacity``. Vehicles are as many as needed, each leaves the depot, serves customers whose
demands add up to at most the capacity, and returns; the cost is the total Euclidean length
driven (:func:`routes_length`).

Routes are a list of int64 arrays of customer indices (1..n), each driven depot -> customers ->
depot. A *sequence*, the task's answer, is the routes joined by the depot's index 0 with no depot
at either end: ``[3, 1, 0, 2, 5, 4]`` is depot-3-1-depot and depot-2-5-4-depot
(:func:`join_routes`, :func:`split_routes`).

The protocol (Nazari et al. 2018, Kool et al. 2019): depot and customers uniform in the unit
square, demands uniform on 1..9, capacity 30, 40, 50 for n = 20, 50, 100 customers (Kool et al.
add 20 at n = 10). Other n: :func:`protocol_capacity`.

Solvers:

* :func:`exact_routes`: dynamic programming over subsets, exact in float64 for n <= 10
  customers (the tests' oracle and ``auto``'s answer there).
* :func:`pyvrp_routes`: PyVRP's iterated local search (Wouda, Lan & Kool 2024; PyVRP 0.14
  replaced its hybrid genetic search by it) on integer distances: a budget in iterations
  (:func:`pyvrp_budget`) and a seed, so deterministic. Distances are scaled so the largest
  becomes :data:`PYVRP_SCALE` and rounded: a solution optimal for the rounded distances is
  longer than the float optimum by at most ``(edges of both) * largest / (2 * PYVRP_SCALE)``
  (:func:`rounding_bound`), under 3e-4 of the optimum at n = 100 in the unit square (a worst
  case: errors of either sign mostly cancel); its cost is measured in float64 afterwards.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ptrnet.quoting import quote
from ptrnet.solvers.errors import DegenerateInstanceError

#: The protocol's capacities (Kool et al. 2019, whose n = 10 anchors the rule below 20).
PROTOCOL_CAPACITY = {10: 20, 20: 30, 50: 40, 100: 50}
MAX_DEMAND = 9  # demands are uniform on 1..9
EXACT_MAX_N = 10  # customers the exact solver takes: 3**10 subset pairs, under a second
PYVRP_SCALE = 100_000  # the largest distance as an integer for PyVRP
#: PyVRP's budget, in iterations (each a perturbation and a local search), so that a reference
#: is the same on every machine and under any load: it stops after ``PYVRP_IDLE_PER_CUSTOMER``
#: iterations per customer (at least ``PYVRP_MIN_IDLE``) without a shorter solution, and after
#: ``PYVRP_CAP`` times that in all. Measured on random protocol instances (docs/solvers.md): the
#: answer after 10,000 iterations was reached by 500 at n = 20 and by 3,000 at n = 50, and at
#: n = 100 it was still 0.13% shorter than after 5,000.
PYVRP_IDLE_PER_CUSTOMER = 50
PYVRP_MIN_IDLE = 1_000
PYVRP_CAP = 10
PYVRP_SEED = 0


def protocol_capacity(n: int) -> int:
    """The capacity for n customers: 30, 40, 50 at n = 20, 50, 100 and 20 at n = 10, linear
    between them (rounded half up), n + 10 below 10, and the last slope (1/5) beyond 100:
    ``40 + (n - 50) / 5`` (70 at n = 200).

    Raises:
        ValueError: n < 1.
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"a CVRP instance has n >= 1 customers, got {quote(n)}")
    anchors = sorted(PROTOCOL_CAPACITY.items())
    if n <= anchors[0][0]:
        return int(n) + 10
    for (lo, cap_lo), (hi, cap_hi) in zip(anchors, anchors[1:], strict=False):
        if n <= hi:
            return math.floor(cap_lo + (cap_hi - cap_lo) * (n - lo) / (hi - lo) + 0.5)
    (lo, cap_lo), (hi, cap_hi) = anchors[-2:]
    return math.floor(cap_hi + (cap_hi - cap_lo) * (n - hi) / (hi - lo) + 0.5)


def sample_instance(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, int]:
    """One protocol instance of n customers: coords (n + 1, 2) uniform in [0, 1), the depot
    first; demands (n + 1,) int64, 0 then uniform on 1..9; :func:`protocol_capacity`."""
    coords = rng.random((n + 1, 2))
    demands = np.concatenate([[0], rng.integers(1, MAX_DEMAND + 1, n)]).astype(np.int64)
    return coords, demands, protocol_capacity(n)


def split_routes(seq: Sequence[int] | np.ndarray) -> list[np.ndarray]:
    """A sequence (routes joined by 0) -> its routes, empty ones dropped (a leading, trailing or
    doubled depot visit drives no route)."""
    seq = np.asarray(seq, dtype=np.int64)
    cuts = np.flatnonzero(seq == 0)
    parts = (part[part != 0] for part in np.split(seq, cuts))
    return [part for part in parts if len(part)]


def join_routes(routes: Sequence[Sequence[int] | np.ndarray]) -> np.ndarray:
    """Routes -> the sequence: their customers, 0 between two routes, none at either end."""
    parts: list[int] = []
    for route in routes:
        if parts:
            parts.append(0)
        parts.extend(int(c) for c in route)
    return np.asarray(parts, dtype=np.int64)


def route_length(coords: np.ndarray, route: Sequence[int] | np.ndarray) -> float:
    """Euclidean length of depot -> ``route`` -> depot (0 for an empty route)."""
    stops = np.concatenate([[0], np.asarray(route, dtype=np.int64), [0]])
    legs = np.diff(np.asarray(coords, dtype=np.float64)[stops], axis=0)  # (k + 1, 2)
    return math.fsum(np.hypot(legs[:, 0], legs[:, 1]).tolist())


def routes_length(coords: np.ndarray, routes: Sequence[Sequence[int] | np.ndarray]) -> float:
    """Total length of ``routes`` (correctly rounded sum over routes of :func:`route_length`)."""
    return math.fsum(route_length(coords, r) for r in routes)


def routes_problem(
    demands: np.ndarray, capacity: int, routes: Sequence[Sequence[int] | np.ndarray]
) -> str | None:
    """Why ``routes`` do not serve the instance, or None: every customer 1..n exactly once, in
    routes of integer indices none of which is empty, each route's load at most ``capacity``."""
    n = len(demands) - 1
    seen: list[int] = []
    for k, route in enumerate(routes, start=1):
        route = np.asarray(route)
        if not len(route):
            return f"route {k} is empty"
        if not np.issubdtype(route.dtype, np.integer) or not ((route >= 1) & (route <= n)).all():
            return f"route {k} visits {route.tolist()}: customers are 1..{n}"
        load = int(np.asarray(demands)[route].sum())
        if load > capacity:
            return f"route {k} carries {load}, over the capacity {capacity}"
        seen.extend(route.tolist())
    missed = sorted(set(range(1, n + 1)) - set(seen))
    if missed:
        return f"customer {missed[0]} is not served"
    if len(seen) != n:
        twice = next(c for c in seen if seen.count(c) > 1)
        return f"customer {twice} is served twice"
    return None


def check_instance(coords: np.ndarray, demands: np.ndarray, capacity: int) -> None:
    """Raise DegenerateInstanceError unless the instance is one the solvers take: finite
    coordinates (m, 2) with m >= 2, integer demands with the depot's 0 and each customer's in
    1..capacity (so every customer fits a vehicle), and an integer capacity >= 1."""
    coords, demands = np.asarray(coords), np.asarray(demands)
    if coords.ndim != 2 or coords.shape[1] != 2 or len(coords) < 2 or len(demands) != len(coords):
        raise DegenerateInstanceError(
            f"a CVRP instance is a depot and n >= 1 customers, each with x, y and a demand; got "
            f"coordinates of shape {coords.shape} and {len(demands)} demands"
        )
    if not np.isfinite(coords).all():
        raise DegenerateInstanceError("CVRP coordinates must be finite numbers")
    if isinstance(capacity, bool) or int(capacity) != capacity or capacity < 1:
        raise DegenerateInstanceError(f"a CVRP capacity is an integer >= 1, got {quote(capacity)}")
    if demands[0] != 0:
        raise DegenerateInstanceError(f"the depot's demand is 0, got {float(demands[0]):g}")
    bad = np.flatnonzero((demands != np.round(demands)) | (demands < 1) | (demands > capacity))
    bad = bad[bad > 0]
    if bad.size:
        i = int(bad[0])
        raise DegenerateInstanceError(
            f"a CVRP demand is an integer in 1..capacity ({int(capacity)}); customer {i} has "
            f"{float(demands[i]):g}"
        )


def canonical_routes(
    routes: Sequence[Sequence[int] | np.ndarray],
) -> list[np.ndarray]:
    """The label form: each route driven so its first customer has the lower index of its two
    ends (a route and its reverse have one length), routes ordered by their first customer."""
    out = []
    for route in routes:
        route = np.asarray(route, dtype=np.int64)
        out.append(route[::-1].copy() if route[0] > route[-1] else route)
    return sorted(out, key=lambda r: int(r[0]))


def distance_matrix(coords: np.ndarray) -> np.ndarray:
    """(m, 2) -> (m, m) float64 Euclidean distances."""
    coords = np.asarray(coords, dtype=np.float64)
    diff = coords[:, None, :] - coords[None, :, :]
    return np.hypot(diff[..., 0], diff[..., 1])


def _checked_matrix(dist: np.ndarray, m: int) -> np.ndarray:
    """``dist`` as (m, m) float64, finite and non-negative.

    Raises:
        ValueError: another shape, or a negative or non-finite length.
    """
    dist = np.asarray(dist, dtype=np.float64)
    if dist.shape != (m, m):
        raise ValueError(f"a distance matrix of {m} points is ({m}, {m}), got {dist.shape}")
    if not np.isfinite(dist).all() or (dist < 0).any():
        raise ValueError("distances are finite and non-negative")
    return dist


def _single_routes(dist: np.ndarray, demands: np.ndarray, capacity: int) -> dict[int, tuple]:
    """For every set S of customers (a bit mask over 1..n) whose load fits: the shortest route
    depot -> S -> depot as (length, order), by Held-Karp over the sets."""
    n = len(dist) - 1
    paths: dict[tuple[int, int], tuple[float, int]] = {}  # (S, last) -> (length, previous)
    for j in range(1, n + 1):
        paths[1 << (j - 1), j] = (dist[0, j], 0)
    load = [0] * (1 << n)
    for mask in range(1, 1 << n):
        low = (mask & -mask).bit_length()
        load[mask] = load[mask & (mask - 1)] + int(demands[low])
    best: dict[int, tuple] = {}
    for mask in range(1, 1 << n):
        if load[mask] > capacity:
            continue
        ends = [j for j in range(1, n + 1) if mask >> (j - 1) & 1]
        for j in ends:
            rest = mask & ~(1 << (j - 1))
            if rest:  # a set of one was set above
                options = [(paths[rest, i][0] + dist[i, j], i) for i in ends if i != j]
                paths[mask, j] = min(options)
        length, last = min((paths[mask, j][0] + dist[j, 0], j) for j in ends)
        best[mask] = (length, _walk_back(paths, mask, last))
    return best


def _walk_back(paths: dict[tuple[int, int], tuple[float, int]], mask: int, last: int) -> list:
    """The customers of the Held-Karp path ending at ``last`` over ``mask``, in driving order."""
    order = []
    while last:
        order.append(last)
        mask, last = mask & ~(1 << (last - 1)), paths[mask, last][1]
    return order[::-1]


def exact_routes(
    coords: np.ndarray, demands: np.ndarray, capacity: int, dist: np.ndarray | None = None
) -> list[np.ndarray]:
    """Optimal routes for at most :data:`EXACT_MAX_N` customers, in :func:`canonical_routes`
    form: the shortest route over every set that fits (:func:`_single_routes`), then the best
    partition of all customers into such sets (each set holding the lowest customer left).
    Lengths are ``dist`` (m, m) when given (great-circle km), else Euclidean on ``coords``.

    Raises:
        ValueError: more than EXACT_MAX_N customers.
        DegenerateInstanceError: an instance :func:`check_instance` refuses.
    """
    check_instance(coords, demands, capacity)
    n = len(coords) - 1
    if n > EXACT_MAX_N:
        raise ValueError(f"the exact CVRP solver takes n <= {EXACT_MAX_N} customers, got {n}")
    dist = distance_matrix(coords) if dist is None else _checked_matrix(dist, len(coords))
    single = _single_routes(dist, np.asarray(demands), int(capacity))
    full = (1 << n) - 1
    cover: list[tuple[float, int]] = [(0.0, 0)] + [(math.inf, 0)] * full  # mask -> (cost, part)
    for mask in range(1, full + 1):
        low = mask & -mask
        rest = mask & ~low
        sub = rest
        while True:  # every part = low + a subset of rest
            part = low | sub
            if part in single:
                cost = single[part][0] + cover[mask & ~part][0]
                if cost < cover[mask][0]:
                    cover[mask] = (cost, part)
            if not sub:
                break
            sub = (sub - 1) & rest
    routes, mask = [], full
    while mask:
        part = cover[mask][1]
        routes.append(np.asarray(single[part][1], dtype=np.int64))
        mask &= ~part
    return canonical_routes(routes)


def rounding_bound(coords: np.ndarray) -> float:
    """How much longer than the float optimum :func:`pyvrp_routes`' optimum for the rounded
    distances can be: half a unit on each edge of both solutions (at most 2n edges each)."""
    n = len(coords) - 1
    return 2 * (2 * n) * 0.5 * _unit(distance_matrix(coords))


def _unit(dist: np.ndarray) -> float:
    """The length of one integer unit PyVRP measures in (the largest distance over
    :data:`PYVRP_SCALE`; 1 when every point coincides)."""
    top = float(dist.max())
    return top / PYVRP_SCALE if top > 0 else 1.0


def pyvrp_budget(n: int) -> tuple[int, int]:
    """(iterations without improvement, iterations in all) after which PyVRP stops at n
    customers: (1,000, 10,000) up to n = 20, (2,500, 25,000) at 50, (5,000, 50,000) at 100."""
    idle = max(PYVRP_MIN_IDLE, PYVRP_IDLE_PER_CUSTOMER * n)
    return idle, PYVRP_CAP * idle


def pyvrp_routes(
    coords: np.ndarray,
    demands: np.ndarray,
    capacity: int,
    iterations: int | None = None,
    seed: int = PYVRP_SEED,
    dist: np.ndarray | None = None,
) -> list[np.ndarray]:
    """PyVRP's routes (module docstring) within :func:`pyvrp_budget`, or after ``iterations``
    in all when given (the tests' small budgets), seeded: the same routes on every run.
    Lengths are ``dist`` (m, m) when given (great-circle km; ``coords`` then only place the
    points for PyVRP), else Euclidean on ``coords``.

    Raises:
        ImportError: PyVRP not installed (it needs Python >= 3.11).
        DegenerateInstanceError: an instance :func:`check_instance` refuses.
        RuntimeError: PyVRP found no feasible solution (every customer fits a vehicle, so a
            budget too small to repair its random start).
    """
    check_instance(coords, demands, capacity)
    from pyvrp import solve
    from pyvrp.stop import MaxIterations, MultipleCriteria, NoImprovement

    idle, most = pyvrp_budget(len(coords) - 1)
    most = most if iterations is None else iterations
    stop = MultipleCriteria([MaxIterations(most), NoImprovement(idle)])
    data = _problem_data(coords, demands, capacity, dist)
    result = solve(data, stop, seed=seed, collect_stats=False)
    if not result.is_feasible():
        raise RuntimeError(f"PyVRP found no feasible routes in {most} iterations")
    routes = [[a.idx + 1 for a in route if a.is_client()] for route in result.best.routes()]
    return canonical_routes([r for r in routes if r])


def _problem_data(
    coords: np.ndarray, demands: np.ndarray, capacity: int, dist: np.ndarray | None = None
):
    """The instance as PyVRP's ProblemData: one depot, n clients, n vehicles of ``capacity``,
    distances (``dist``, else Euclidean on ``coords``) scaled by :func:`_unit` and rounded
    (durations 0)."""
    from pyvrp import Client, Depot, Location, ProblemData, VehicleType

    dist = distance_matrix(coords) if dist is None else _checked_matrix(dist, len(coords))
    scaled = np.rint(dist / _unit(dist)).astype(np.int64)
    n = len(coords) - 1
    return ProblemData(
        locations=[Location(float(x), float(y)) for x, y in np.asarray(coords)],
        clients=[Client(location=i, delivery=[int(demands[i])]) for i in range(1, n + 1)],
        depots=[Depot(location=0)],
        vehicle_types=[VehicleType(num_available=n, capacity=[int(capacity)])],
        distance_matrices=[scaled],
        duration_matrices=[np.zeros_like(scaled)],
    )
