"""Cities given by latitude and longitude: great-circle distances, and the local plane a model
reads them on.

Points are (n, 2) float arrays of ``(longitude, latitude)`` in degrees (x east, y north, the
order ``--columns lon,lat`` gives), latitude in [-90, 90] and longitude in [-180, 180].

* :func:`great_circle_matrix` / :func:`great_circle_edges`: distances in kilometres on a sphere
  of the Earth's mean radius (:data:`EARTH_RADIUS_KM`, IUGG), by the atan2 form of the
  great-circle formula (Vincenty's for the sphere), accurate at every separation, antipodes
  included, where the haversine formula's ``asin`` loses digits. The WGS84 ellipsoid's geodesics
  differ from these by up to about 0.5%.
* :func:`azimuthal_equidistant`: the plane a model decodes on, the azimuthal equidistant
  projection about the instance's centre (:func:`centre`, the normalised mean of the cities' unit
  vectors), in kilometres. Distances and directions from the centre are exact; lengths across
  the radius are stretched by ``(d / R) / sin(d / R)`` at distance ``d`` from it: 0.4% at
  1,000 km, 1.7% at 2,000 km, 11% at 5,000 km, and without bound towards the centre's antipode.
  So the plane is faithful for a country or a continent, loose for a hemisphere and useless for
  cities around the whole globe. Only the model sees it: every length ptrnet reports, solves
  or searches on is great-circle. The antimeridian and the poles need no care: the formulas
  use longitude differences through sine and cosine only, so 179.9 E and 179.9 W are 22 km
  apart, not 40,000.
"""

from __future__ import annotations

import numpy as np

EARTH_RADIUS_KM = 6371.0088  # the IUGG mean radius R1 = (2a + b) / 3 of WGS84
LATITUDE_RANGE = (-90.0, 90.0)
LONGITUDE_RANGE = (-180.0, 180.0)


def off_globe(points: np.ndarray) -> tuple[int, str] | None:
    """The first row of ``points`` (n, 2) that is not ``(longitude, latitude)`` degrees, with
    the problem (``latitude 95 is outside [-90, 90]``), or None when every row is."""
    points = np.asarray(points, dtype=np.float64)
    lat_bad = ~((points[:, 1] >= LATITUDE_RANGE[0]) & (points[:, 1] <= LATITUDE_RANGE[1]))
    lon_bad = ~((points[:, 0] >= LONGITUDE_RANGE[0]) & (points[:, 0] <= LONGITUDE_RANGE[1]))
    bad = np.flatnonzero(lat_bad | lon_bad)
    if not bad.size:
        return None
    row = int(bad[0])
    column, name, (lo, hi) = (
        (1, "latitude", LATITUDE_RANGE) if lat_bad[row] else (0, "longitude", LONGITUDE_RANGE)
    )
    return row, f"{name} {points[row, column]:g} is outside [{lo:g}, {hi:g}]"


def geographic_problem(points: np.ndarray) -> str | None:
    """Why ``points`` (n, 2) are not ``(longitude, latitude)`` degrees, or None: the first
    point off the globe (:func:`off_globe`), by its 0-based index."""
    found = off_globe(points)
    return None if found is None else f"point {found[0]}: {found[1]}"


def _radians(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(longitudes, latitudes) in radians of ``points`` (n, 2) degrees."""
    points = np.radians(np.asarray(points, dtype=np.float64))
    return points[:, 0], points[:, 1]


def central_angle(
    lon1: np.ndarray, lat1: np.ndarray, lon2: np.ndarray, lat2: np.ndarray
) -> np.ndarray:
    """The angle (radians, in [0, pi]) between points given in radians, elementwise (numpy
    broadcasting): ``atan2(|u x v|, u . v)`` written in latitudes and longitudes."""
    dlon = lon2 - lon1
    cos1, sin1, cos2, sin2 = np.cos(lat1), np.sin(lat1), np.cos(lat2), np.sin(lat2)
    across = np.hypot(cos2 * np.sin(dlon), cos1 * sin2 - sin1 * cos2 * np.cos(dlon))
    return np.arctan2(across, sin1 * sin2 + cos1 * cos2 * np.cos(dlon))


def great_circle_matrix(points: np.ndarray, radius: float = EARTH_RADIUS_KM) -> np.ndarray:
    """(n, n) great-circle distances in kilometres between ``points`` (n, 2) ``(lon, lat)``
    degrees: exactly symmetric, zero diagonal."""
    lon, lat = _radians(points)
    angles = central_angle(lon[:, None], lat[:, None], lon[None, :], lat[None, :])
    dist = radius * 0.5 * (angles + angles.T)  # the formula is symmetric up to rounding
    np.fill_diagonal(dist, 0.0)
    return dist


def great_circle_edges(points: np.ndarray, tour: np.ndarray) -> np.ndarray:
    """(len(tour),) great-circle lengths in kilometres of the edges of the closed ``tour``
    (0-based, no closing index): ``tour[k]`` to ``tour[k + 1]``, the last back to the first.
    O(n), no matrix."""
    lon, lat = _radians(points)
    tour = np.asarray(tour, dtype=np.int64)
    after = np.roll(tour, -1)
    return EARTH_RADIUS_KM * central_angle(lon[tour], lat[tour], lon[after], lat[after])


def centre(points: np.ndarray) -> tuple[float, float]:
    """``(lon, lat)`` in degrees of the normalised mean of the points' unit vectors: the
    middle of a cluster, wherever it lies (across the antimeridian too). Points spread evenly
    over the whole sphere have no middle (a mean below 1e-9): the first point is taken."""
    lon, lat = _radians(points)
    vectors = np.stack([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)], 1)
    mean = vectors.mean(axis=0)
    if np.linalg.norm(mean) < 1e-9:
        mean = vectors[0]
    return float(np.degrees(np.arctan2(mean[1], mean[0]))), float(
        np.degrees(np.arctan2(mean[2], np.hypot(mean[0], mean[1])))
    )


def azimuthal_equidistant(
    points: np.ndarray, about: tuple[float, float] | None = None
) -> np.ndarray:
    """(n, 2) plane coordinates in kilometres (x east, y north) of ``points`` (n, 2)
    ``(lon, lat)`` degrees under the azimuthal equidistant projection about ``about``
    (``(lon, lat)`` degrees; default :func:`centre`). A point's distance from the origin is its
    great-circle distance from the centre; see the module docstring for where it stops being
    faithful."""
    lon0, lat0 = np.radians(centre(points) if about is None else about)
    lon, lat = _radians(points)
    rho = EARTH_RADIUS_KM * central_angle(lon0, lat0, lon, lat)  # (n,)
    dlon = lon - lon0
    azimuth = np.arctan2(
        np.sin(dlon) * np.cos(lat),
        np.cos(lat0) * np.sin(lat) - np.sin(lat0) * np.cos(lat) * np.cos(dlon),
    )
    return np.stack([rho * np.sin(azimuth), rho * np.cos(azimuth)], axis=1)
