"""CVRPLIB ``.vrp`` files (TYPE CVRP, EUC_2D coordinates), read and written with the ``vrplib``
package, and CVRPLIB's rounded route cost.

A file gives a depot and n customers (``NODE_COORD_SECTION``), their demands
(``DEMAND_SECTION``, the depot's 0), one ``CAPACITY`` and its depot (``DEPOT_SECTION``, one
node). :func:`read_vrp` returns them with the depot first (:mod:`ptrnet.solvers.cvrp`'s layout)
and, like a TSPLIB file (:mod:`ptrnet.io.tsplib`), the coordinates' image in the unit square,
``(coords - offset) / scale``, which a model reads; a length on the image times ``scale`` is the
length in the file's units. CVRPLIB's published costs (the X set's) round each edge to the
nearest integer, ``nint(d) = int(d + 0.5)`` (:func:`cvrplib_cost`); lengths elsewhere in ptrnet
are unrounded.

:func:`write_vrp` writes coordinates as Python prints floats (``repr``: read back exactly).
Tools that round EUC_2D edges as CVRPLIB does (LKH-3, CVRPLIB's checkers) need coordinates in
large units, not the unit square: scale them before writing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from itertools import islice

import numpy as np

from ptrnet.io.atomic import atomic_write
from ptrnet.io.errors import InputError
from ptrnet.io.limits import MAX_COORDINATE, MAX_POINTS
from ptrnet.io.text import numbered_lines
from ptrnet.io.tsplib import nint
from ptrnet.io.unit_square import UnitMap
from ptrnet.quoting import quote
from ptrnet.solvers.cvrp import check_instance, split_routes
from ptrnet.solvers.errors import DegenerateInstanceError

#: Lines a file may have: a node's coordinates and its demand, plus a header, for MAX_POINTS.
MAX_LINES = 2 * MAX_POINTS + 1_000


@dataclass(frozen=True)
class VRPInstance:
    """One CVRPLIB instance, the depot first: ``coords`` (m, 2) in the file's units, ``demands``
    (m,) int64 (the depot's 0), ``capacity``; ``unit`` (m, 2) the coordinates' image in the unit
    square, ``scale`` and ``offset`` its map (module docstring)."""

    name: str
    coords: np.ndarray
    demands: np.ndarray
    capacity: int
    unit: np.ndarray
    scale: float
    offset: np.ndarray

    def rows(self, unit: bool = True) -> np.ndarray:
        """(m, 4) rows (x, y, demand, capacity), the CVRP task's instance: the coordinates'
        unit-square image, or with ``unit=False`` the file's own."""
        xy = self.unit if unit else self.coords
        column = np.full((len(xy), 1), float(self.capacity))
        return np.concatenate([xy, self.demands[:, None].astype(np.float64), column], axis=1)


def read_vrp(path: str | os.PathLike[str]) -> VRPInstance:
    """Read a CVRPLIB file of TYPE CVRP with EUC_2D coordinates.

    Raises:
        InputError: naming the file and the problem: an unreadable or oversized file, one
            vrplib cannot parse, a TYPE or EDGE_WEIGHT_TYPE other than CVRP and EUC_2D, a
            missing section or CAPACITY, other than one depot, sections of different lengths,
            coordinates not finite or beyond the limit, demands that are not integers in
            0..CAPACITY (the depot's 0).
    """
    import vrplib.parse

    lines = list(islice((text for _, text in numbered_lines(path)), MAX_LINES + 1))
    if len(lines) > MAX_LINES:
        raise InputError(path, None, f"more than {MAX_LINES} lines: over {MAX_POINTS} nodes")
    try:
        data = vrplib.parse.parse_vrplib("\n".join(lines), compute_edge_weights=False)
    except Exception as err:  # vrplib raises what its parsing meets: name it, in one line
        raise InputError(path, None, f"not a CVRPLIB instance: {err}") from None
    coords, demands, capacity, depot = _fields(path, data)
    order = np.r_[depot, np.delete(np.arange(len(coords)), depot)]  # the depot first
    coords, demands = coords[order], demands[order]
    try:
        check_instance(coords, demands, capacity)
    except DegenerateInstanceError as err:
        raise InputError(path, None, str(err)) from None
    mapping = UnitMap.fit(coords)
    name = str(data.get("name", os.path.splitext(os.path.basename(path))[0]))
    return VRPInstance(
        name, coords, demands, capacity, mapping.to_unit(coords), mapping.scale, mapping.offset
    )


def _fields(path, data: dict) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Coordinates (m, 2) float64, demands (m,) int64, the capacity and the depot's 0-based
    node, checked (:func:`read_vrp`'s errors)."""
    kind = str(data.get("type", "CVRP"))
    if kind != "CVRP":
        raise InputError(path, None, f"TYPE {quote(kind)} is not supported; only CVRP is")
    weights = str(data.get("edge_weight_type", "(missing)"))
    if weights != "EUC_2D":
        raise InputError(
            path, None, f"EDGE_WEIGHT_TYPE {quote(weights)} is not supported; only EUC_2D is"
        )
    for key, what in (("node_coord", "NODE_COORD_SECTION"), ("demand", "DEMAND_SECTION")):
        if key not in data:
            raise InputError(path, None, f"no {what}")
    coords = _numbers(path, data["node_coord"], "NODE_COORD_SECTION")
    demands = _numbers(path, data["demand"], "DEMAND_SECTION")
    if coords.ndim != 2 or coords.shape[1] != 2:
        raise InputError(path, None, "NODE_COORD_SECTION: each node has an id, x and y")
    if demands.ndim != 1 or len(demands) != len(coords):
        raise InputError(
            path, None, f"{len(coords)} nodes have coordinates, {demands.size} demand entries"
        )
    if "dimension" in data and str(data["dimension"]) != str(len(coords)):
        raise InputError(
            path, None, f"DIMENSION is {quote(data['dimension'])} but {len(coords)} nodes follow"
        )
    if len(coords) > MAX_POINTS or not (np.abs(coords) <= MAX_COORDINATE).all():
        raise InputError(
            path, None, f"at most {MAX_POINTS} nodes of finite coordinates within 1e100"
        )
    if (demands != np.round(demands)).any():
        raise InputError(path, None, "DEMAND_SECTION: demands are integers")
    return coords, demands.astype(np.int64), _capacity(path, data), _depot(path, data, coords)


def _numbers(path, value, section: str) -> np.ndarray:
    """``value`` as a float64 array, or InputError naming ``section``."""
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(path, None, f"{section}: a value is not a number") from None


def _capacity(path, data: dict) -> int:
    """The file's CAPACITY, an integer >= 1."""
    capacity = data.get("capacity")
    if capacity is None:
        raise InputError(path, None, "no CAPACITY")
    if isinstance(capacity, str) or int(capacity) != capacity or capacity < 1:
        raise InputError(path, None, f"CAPACITY is an integer >= 1, got {quote(capacity)}")
    return int(capacity)


def _depot(path, data: dict, coords: np.ndarray) -> int:
    """The one depot's 0-based node (node 1 where DEPOT_SECTION is missing)."""
    depots = np.asarray(data.get("depot", [0])).ravel()
    if len(depots) != 1:
        raise InputError(path, None, f"one depot is supported; DEPOT_SECTION lists {len(depots)}")
    depot = int(depots[0])
    if not 0 <= depot < len(coords):
        raise InputError(path, None, f"DEPOT_SECTION names node {depot + 1}, not one of the nodes")
    return depot


def write_vrp(
    path: str | os.PathLike[str],
    coords: np.ndarray,
    demands: np.ndarray,
    capacity: int,
    name: str = "ptrnet",
    comment: str | None = None,
) -> None:
    """Write an instance, the depot first (node 1), as a CVRPLIB file (module docstring on
    units), atomically.

    Raises:
        DegenerateInstanceError: an instance :func:`~ptrnet.solvers.cvrp.check_instance`
            refuses.
    """
    check_instance(coords, demands, capacity)
    text = vrp_text(coords, demands, capacity, name, comment)
    with atomic_write(path) as stream:
        stream.write(text)


def vrp_text(coords, demands, capacity: int, name: str = "ptrnet", comment=None) -> str:
    """The text of :func:`write_vrp`'s file (vrplib's writer, through a temporary file)."""
    import tempfile

    import vrplib

    spec: dict = {"NAME": name, "TYPE": "CVRP"}
    if comment:
        spec["COMMENT"] = comment
    spec |= {
        "DIMENSION": len(coords),
        "EDGE_WEIGHT_TYPE": "EUC_2D",
        "CAPACITY": int(capacity),
        "NODE_COORD_SECTION": np.asarray(coords, dtype=np.float64),
        "DEMAND_SECTION": np.asarray(demands, dtype=np.int64),
        "DEPOT_SECTION": np.array([1, -1]),
    }
    with tempfile.TemporaryDirectory() as folder:
        file = os.path.join(folder, "instance.vrp")
        vrplib.write_instance(file, spec)
        with open(file, encoding="utf-8") as stream:
            return stream.read()


def cvrplib_cost(coords: np.ndarray, seq: np.ndarray) -> int:
    """The cost of the routes of ``seq`` (:func:`~ptrnet.solvers.cvrp.split_routes`) under
    CVRPLIB's rule: each edge's Euclidean length in the file's units rounded by ``nint``."""
    total = 0
    for route in split_routes(seq):
        stops = np.concatenate([[0], route, [0]])
        legs = np.diff(np.asarray(coords, dtype=np.float64)[stops], axis=0)
        total += int(nint(np.hypot(legs[:, 0], legs[:, 1])).sum())
    return total
