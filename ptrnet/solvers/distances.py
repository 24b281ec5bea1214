"""How a TSP instance's lengths are measured: one rule per instance, carried with it from the
reader to every cost, reference solver and local search.

A rule turns the instance's coordinates (as the file gave them) into what the rest of ptrnet
needs, so that no solver or search knows where the numbers came from:

* :meth:`Distances.matrix`: the (n, n) distances every reference solver, 2-opt / Or-opt and
  Random Re-Construct step works on (:meth:`Distances.search_matrix`: the same, or a rescaled
  copy where only the order of lengths matters);
* :meth:`Distances.tour_length`: the length a user reads, in :attr:`Distances.unit`
  (:meth:`Distances.walk_length`: of a closed walk that comes back to a point, a vehicle's
  routes through their depot);
* :meth:`Distances.plane`: planar coordinates a model decodes on (then mapped into the unit
  square as any instance is, :mod:`ptrnet.io.unit_square`);
* :meth:`Distances.problem`: coordinates the rule cannot take (a latitude of 95).

:data:`RULES` names every rule (:attr:`Distances.name`), as the web API's ``distances`` field
names them.

The rules: :data:`EUCLIDEAN` (the default: the plane as given, lengths in the input's units),
:data:`GREAT_CIRCLE` (``(lon, lat)`` degrees, kilometres on the sphere,
:mod:`ptrnet.solvers.geodesy`), and TSPLIB's own integer rules for its ``GEO`` and ``ATT``
files (:data:`TSPLIB_GEO`, :data:`TSPLIB_ATT`; Reinelt, "TSPLIB 95", Sec. 2.3-2.4), whose
published optima they reproduce.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ptrnet.solvers.geodesy import (
    azimuthal_equidistant,
    geographic_problem,
    great_circle_edges,
    great_circle_matrix,
)
from ptrnet.solvers.geometry import safe_range
from ptrnet.solvers.tsp import distance_matrix, tour_length


def _open_tour(n: int, tour: np.ndarray) -> np.ndarray:
    """``tour`` without its closing index, checked to visit each of ``n`` cities once.

    Raises:
        ValueError: not a tour of ``n`` cities (as :func:`ptrnet.solvers.tsp.tour_length`).
    """
    tour = np.asarray(tour, dtype=np.int64)
    if len(tour) == n + 1 and n > 0 and tour[0] == tour[-1]:
        tour = tour[:-1]
    if not np.array_equal(np.sort(tour), np.arange(n)):
        raise ValueError(f"not a tour of {n} cities: {tour.tolist()}")
    return tour


@dataclass(frozen=True)
class Distances:
    """Euclidean distances in the input's own units: the rule of every instance that names no
    other (planar points, EUC_2D TSPLIB files).

    Attributes:
        name: the rule's name (``euclidean``, ``great_circle``, ``tsplib_geo``, ``tsplib_att``).
        unit: the unit of its lengths (``"km"``), or None: the input's own units.
        what: its distances in a few words, for the note that says how a file was read.
        projected: whether :meth:`plane` is a projection of the coordinates (cities on the
            sphere), not the coordinates themselves: a point placed on that plane then has no
            coordinates in the input's units without the projection's inverse.
        form: for a projected rule, how its coordinates write a place on the globe, so that
            the inverse of :meth:`plane` (the page's, ``ptrnet/web/static/geo.js``) can write
            one back: ``lon_lat`` (decimal degrees, longitude first) or ``tsplib_lat_lon``
            (TSPLIB's ``DDD.MM``, latitude first); None for a planar rule.
    """

    name: str = "euclidean"
    unit: str | None = None
    what: str = "Euclidean distances in the input's units"
    projected: bool = False
    form: str | None = None

    def plane(self, points: np.ndarray) -> np.ndarray:
        """(n, 2) planar coordinates of ``points`` for a model (before the unit-square map)."""
        return np.asarray(points, dtype=np.float64)

    def problem(self, points: np.ndarray) -> str | None:
        """Why the rule cannot measure ``points``, or None (every finite point for Euclidean)."""
        return None

    def matrix(self, points: np.ndarray) -> np.ndarray:
        """(n, n) float64 distances in :attr:`unit`, exactly symmetric, zero diagonal."""
        return distance_matrix(points)

    def search_matrix(self, points: np.ndarray) -> np.ndarray:
        """The distances a solver or local search compares: :meth:`matrix` up to one positive
        factor (Euclidean: measured on :func:`~ptrnet.solvers.geometry.safe_range`'s image, so
        that no finite instance's values are sub-normal or overflow)."""
        return distance_matrix(safe_range(points))

    def tour_length(self, points: np.ndarray, tour: np.ndarray) -> float:
        """Length of the closed ``tour`` (0-based, with or without its closing index) in
        :attr:`unit`, the return edge included.

        Raises:
            ValueError: ``tour`` is not a tour of the instance's cities.
        """
        return tour_length(points, tour)

    def walk_length(self, points: np.ndarray, walk: np.ndarray) -> float:
        """Length in :attr:`unit` of the closed ``walk`` (0-based indices into ``points``, no
        closing index), from ``walk[k]`` to ``walk[k + 1]`` and the last back to the first;
        an index may come back, as the depot does between a vehicle's routes. Unchecked."""
        return _pairwise_walk(_euclidean, points, walk)


def _euclidean(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Euclidean distances between ``a`` (..., 2) and ``b`` (..., 2), elementwise."""
    steps = b - a
    return np.hypot(steps[..., 0], steps[..., 1])


def _pairwise_walk(distance, points: np.ndarray, walk: np.ndarray) -> float:
    """The closed ``walk``'s length under the pairwise rule ``distance`` (correctly rounded
    sum of its legs), O(len(walk)), no matrix."""
    points = np.asarray(points, dtype=np.float64)
    walk = np.asarray(walk, dtype=np.int64)
    if len(walk) < 2:
        return 0.0
    return math.fsum(distance(points[walk], points[np.roll(walk, -1)]).tolist())


@dataclass(frozen=True)
class GreatCircle(Distances):
    """Great-circle kilometres between ``(longitude, latitude)`` degrees
    (:mod:`ptrnet.solvers.geodesy`); a model reads the azimuthal equidistant projection about
    the instance's centre."""

    name: str = "great_circle"
    unit: str | None = "km"
    what: str = "distances are great-circle km"
    projected: bool = True
    form: str | None = "lon_lat"

    def lon_lat(self, points: np.ndarray) -> np.ndarray:
        """(n, 2) ``(longitude, latitude)`` decimal degrees of the rule's coordinates, which
        :meth:`plane` projects (here the coordinates themselves)."""
        return np.asarray(points, dtype=np.float64)

    def plane(self, points: np.ndarray) -> np.ndarray:
        return azimuthal_equidistant(self.lon_lat(points))

    def problem(self, points: np.ndarray) -> str | None:
        return geographic_problem(self.lon_lat(points))

    def matrix(self, points: np.ndarray) -> np.ndarray:
        return great_circle_matrix(points)

    def search_matrix(self, points: np.ndarray) -> np.ndarray:
        return great_circle_matrix(points)

    def tour_length(self, points: np.ndarray, tour: np.ndarray) -> float:
        return float(great_circle_edges(points, _open_tour(len(points), tour)).sum())

    def walk_length(self, points: np.ndarray, walk: np.ndarray) -> float:
        walk = np.asarray(walk, dtype=np.int64)
        return math.fsum(great_circle_edges(points, walk).tolist()) if len(walk) > 1 else 0.0


TSPLIB_PI = 3.141592  # TSPLIB 95's own value of pi for GEO, which its optima were computed with
TSPLIB_RADIUS = 6378.388  # TSPLIB 95's Earth radius for GEO, km


def tsplib_degrees(coords: np.ndarray) -> np.ndarray:
    """TSPLIB GEO coordinates (n, 2), ``x`` latitude and ``y`` longitude written ``DDD.MM``
    (degrees, then minutes as two decimals), as ``(lon, lat)`` decimal degrees: ``38.24`` is
    38 degrees 24 minutes, 38.4 degrees."""
    coords = np.asarray(coords, dtype=np.float64)
    whole = np.trunc(coords)
    degrees = whole + 5.0 * (coords - whole) / 3.0
    return degrees[:, ::-1]


def tsplib_geo_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """TSPLIB GEO distances between ``a`` (..., 2) and ``b`` (..., 2) (file order: latitude,
    longitude, ``DDD.MM``), elementwise with numpy broadcasting:
    ``int(RRR * acos(0.5 * ((1 + q1) q2 - (1 - q1) q3)) + 1)`` with TSPLIB's ``PI`` and
    ``RRR``, truncated as its C code truncates. A point and itself are 1 apart by this formula;
    :func:`tsplib_geo_matrix` sets its diagonal to 0."""
    lat_a, lon_a = _tsplib_radians(a)
    lat_b, lon_b = _tsplib_radians(b)
    q1, q2, q3 = np.cos(lon_a - lon_b), np.cos(lat_a - lat_b), np.cos(lat_a + lat_b)
    cosine = np.clip(0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3), -1.0, 1.0)
    return np.floor(TSPLIB_RADIUS * np.arccos(cosine) + 1.0)


def _tsplib_radians(coords: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(latitude, longitude) in radians, by TSPLIB's conversion of ``DDD.MM``."""
    coords = np.asarray(coords, dtype=np.float64)
    whole = np.trunc(coords)
    radians = TSPLIB_PI * (whole + 5.0 * (coords - whole) / 3.0) / 180.0
    return radians[..., 0], radians[..., 1]


def tsplib_geo_matrix(coords: np.ndarray) -> np.ndarray:
    """(n, n) :func:`tsplib_geo_distance` of ``coords`` (n, 2), zero diagonal."""
    coords = np.asarray(coords, dtype=np.float64)
    dist = tsplib_geo_distance(coords[:, None, :], coords[None, :, :])
    np.fill_diagonal(dist, 0.0)
    return dist


def tsplib_att_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """TSPLIB ATT (pseudo-Euclidean) distances between ``a`` (..., 2) and ``b`` (..., 2),
    elementwise: ``r = sqrt((dx^2 + dy^2) / 10)``, ``t = nint(r)``, ``t + 1`` where ``t < r``
    else ``t`` (0 between a point and itself)."""
    steps = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    r = np.sqrt((steps[..., 0] ** 2 + steps[..., 1] ** 2) / 10.0)
    t = np.floor(r + 0.5)
    return np.where(t < r, t + 1.0, t)


def tsplib_att_matrix(coords: np.ndarray) -> np.ndarray:
    """(n, n) :func:`tsplib_att_distance` of ``coords`` (n, 2)."""
    coords = np.asarray(coords, dtype=np.float64)
    return tsplib_att_distance(coords[:, None, :], coords[None, :, :])


def _integer_length(distance, points: np.ndarray, tour: np.ndarray) -> float:
    """The closed ``tour``'s length under the pairwise rule ``distance``: an integral float,
    O(n) (no matrix)."""
    return _pairwise_walk(distance, points, _open_tour(len(points), tour))


@dataclass(frozen=True)
class TsplibGeo(GreatCircle):
    """TSPLIB's ``GEO`` rule: integer kilometres on its sphere (``RRR = 6378.388``); the
    points are the file's ``(latitude, longitude)`` in ``DDD.MM``; a model reads them as
    :class:`GreatCircle` cities."""

    name: str = "tsplib_geo"
    unit: str | None = "km"
    what: str = "distances are TSPLIB GEO km (integers; RRR = 6378.388)"
    projected: bool = True
    form: str | None = "tsplib_lat_lon"

    def lon_lat(self, points: np.ndarray) -> np.ndarray:
        return tsplib_degrees(points)

    def matrix(self, points: np.ndarray) -> np.ndarray:
        return tsplib_geo_matrix(points)

    def search_matrix(self, points: np.ndarray) -> np.ndarray:
        return tsplib_geo_matrix(points)

    def tour_length(self, points: np.ndarray, tour: np.ndarray) -> float:
        return _integer_length(tsplib_geo_distance, points, tour)

    def walk_length(self, points: np.ndarray, walk: np.ndarray) -> float:
        return _pairwise_walk(tsplib_geo_distance, points, walk)


@dataclass(frozen=True)
class TsplibAtt(Distances):
    """TSPLIB's ``ATT`` rule (pseudo-Euclidean integers) on the file's planar coordinates."""

    name: str = "tsplib_att"
    unit: str | None = None
    what: str = "distances are TSPLIB ATT (pseudo-Euclidean integers)"

    def matrix(self, points: np.ndarray) -> np.ndarray:
        return tsplib_att_matrix(points)

    def search_matrix(self, points: np.ndarray) -> np.ndarray:
        return tsplib_att_matrix(points)

    def tour_length(self, points: np.ndarray, tour: np.ndarray) -> float:
        return _integer_length(tsplib_att_distance, points, tour)

    def walk_length(self, points: np.ndarray, walk: np.ndarray) -> float:
        return _pairwise_walk(tsplib_att_distance, points, walk)


EUCLIDEAN = Distances()
GREAT_CIRCLE = GreatCircle()
TSPLIB_GEO = TsplibGeo()
TSPLIB_ATT = TsplibAtt()
#: Every rule by its :attr:`Distances.name`.
RULES: dict[str, Distances] = {
    rule.name: rule for rule in (EUCLIDEAN, GREAT_CIRCLE, TSPLIB_GEO, TSPLIB_ATT)
}
