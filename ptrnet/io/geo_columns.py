"""Cities given by latitude and longitude in a CSV file (:mod:`ptrnet.io.instances`).

A header names the columns: ``lat`` or ``latitude``, and ``lon``, ``lng``, ``long`` or
``longitude``, in any case (:data:`LATITUDE_NAMES`, :data:`LONGITUDE_NAMES`). When the
coordinate columns are one of each (found by their names, or picked with ``--columns``), the
points are read as ``(longitude, latitude)`` degrees, x east and y north, whatever the columns'
order, and checked row by row: latitude in [-90, 90], longitude in [-180, 180]. A TSP or CVRP
instance is then measured in great-circle kilometres
(:data:`ptrnet.solvers.distances.GREAT_CIRCLE`; a CVRP row's demand and capacity follow its
coordinates, :func:`ptrnet.io.instances.other_numbers`); another planar task reads the same
``(lon, lat)`` as a plane in degrees.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from ptrnet.io.errors import InputError
from ptrnet.io.limits import QUOTE_CHARS
from ptrnet.quoting import quote
from ptrnet.solvers.geodesy import off_globe

LATITUDE_NAMES = ("lat", "latitude")
LONGITUDE_NAMES = ("lon", "lng", "long", "longitude")


def _kind(cell: str) -> str | None:
    """``"lat"``, ``"lon"`` or None for a header cell."""
    name = cell.strip().lower()
    return "lat" if name in LATITUDE_NAMES else "lon" if name in LONGITUDE_NAMES else None


def find_lon_lat(
    path: str | os.PathLike[str], line: int, header: Sequence[str]
) -> list[int] | None:
    """``[longitude column, latitude column]`` (0-based) when ``header`` (the file's first row,
    at ``line``) names one latitude and one longitude column, else None (a header naming
    neither, or only one of the two).

    Raises:
        InputError: two or more columns name the latitude, or the longitude (``lat`` and
            ``latitude``), naming them and ``--columns``.
    """
    found: dict[str, list[int]] = {"lat": [], "lon": []}
    for j, cell in enumerate(header):
        if (kind := _kind(cell)) is not None:
            found[kind].append(j)
    for kind, where in found.items():
        if len(where) > 1:
            names = ", ".join(quote(header[j], QUOTE_CHARS) for j in where)
            raise InputError(
                path,
                line,
                f"columns {names} all name the {'latitude' if kind == 'lat' else 'longitude'}; "
                "pick the coordinates with --columns LON,LAT",
            )
    if found["lat"] and found["lon"]:
        return [found["lon"][0], found["lat"][0]]
    return None


def picked_lon_lat(header: Sequence[str] | None, picked: list[int]) -> list[int] | None:
    """``picked`` (two columns) reordered as ``[longitude, latitude]`` when the header names
    one of them a latitude and the other a longitude, else None."""
    if header is None or len(picked) != 2 or max(picked) >= len(header):
        return None
    kinds = [_kind(header[j]) for j in picked]
    if sorted(kinds, key=str) != ["lat", "lon"]:
        return None
    return picked if kinds[0] == "lon" else picked[::-1]


def reading_note(header: Sequence[str], lon_lat: list[int], what: str) -> str:
    """How the columns were read, for the note on stderr: ``columns lat, lon read as
    latitude/longitude; distances are great-circle km``."""
    lon, lat = (quote(header[j], QUOTE_CHARS).strip("'") for j in lon_lat)
    return f"columns {lat}, {lon} read as latitude/longitude; {what}"


def check_lon_lat(path: str | os.PathLike[str], points: np.ndarray, lines: Sequence[int]) -> None:
    """Raise InputError at the line of the first row of ``points`` ((n, 2) ``(lon, lat)``
    degrees, row k read from ``lines[k]``) outside the globe's ranges."""
    found = off_globe(points)
    if found is not None:
        raise InputError(path, lines[found[0]], found[1])
