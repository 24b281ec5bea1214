"""TSPLIB ``.tsp`` files (EUC_2D, GEO, ATT), scaled into the unit square for the models.

A TSPLIB instance lives in its own units (kilometres, drill-board coordinates, ...), but the
models see points in [0, 1]^2. :func:`read_tsplib` keeps both (:mod:`ptrnet.io.unit_square`):
``points = (coords - offset) / scale`` with ``offset`` the per-axis minimum and ``scale`` the
largest extent of the two axes, so the aspect ratio is kept and the longer side spans exactly
[0, 1]. A length measured on ``points`` times ``scale`` is the length in the instance's units.

TSPLIB's published optimal lengths (``optimal.txt``: ``name : length``) use its EUC_2D rule: each
edge is the Euclidean distance rounded to the nearest integer, ``nint(d) = int(d + 0.5)``;
:func:`tsplib_length` computes exactly that, so an optimal tour reproduces the published integer.

A ``GEO`` file gives latitude and longitude (``x`` and ``y``, written ``DDD.MM``: degrees and
minutes) and an ``ATT`` file planar coordinates; both are measured by TSPLIB's own integer
rules (:data:`ptrnet.solvers.distances.TSPLIB_GEO`, :data:`~ptrnet.solvers.distances.TSPLIB_ATT`,
:attr:`TSPLibInstance.distances`), which reproduce the published optima (ulysses16: 6859,
att48: 10628). A GEO instance's ``points`` are the unit image of its cities' azimuthal
equidistant projection (:mod:`ptrnet.solvers.geodesy`), so ``scale`` and ``offset`` (and
:meth:`TSPLibInstance.to_original`) refer to that plane in kilometres, not to the file's
degrees.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ptrnet.io.errors import InputError
from ptrnet.io.limits import MAX_COORDINATE, MAX_POINTS, QUOTE_CHARS
from ptrnet.io.text import is_number, numbered_lines
from ptrnet.io.unit_square import UnitMap
from ptrnet.quoting import quote
from ptrnet.solvers.distances import TSPLIB_ATT, TSPLIB_GEO, Distances, tsplib_degrees
from ptrnet.solvers.geodesy import off_globe

SUPPORTED_EDGE_WEIGHT_TYPES = ("EUC_2D", "GEO", "ATT")
# The distance rule of each type other than EUC_2D (whose lengths stay Euclidean, with
# TSPLIB's rounding in tsplib_length): GEO's coordinates are latitude and longitude.
TSPLIB_RULES: dict[str, Distances] = {"GEO": TSPLIB_GEO, "ATT": TSPLIB_ATT}
MAX_OPTIMUM_DIGITS = 18  # lengths below 10^18; longer strings are not read into an int


@dataclass(frozen=True)
class TSPLibInstance:
    """One TSPLIB instance: ``coords`` (n, 2) as in the file, ``points`` (n, 2) in [0, 1]^2
    (for GEO, the image of the cities' projection, :meth:`Distances.plane`), and
    ``edge_weight_type``, the file's distance rule."""

    name: str
    coords: np.ndarray
    points: np.ndarray
    scale: float
    offset: np.ndarray
    edge_weight_type: str = "EUC_2D"

    @property
    def distances(self) -> Distances | None:
        """The rule of a GEO or ATT file (:data:`TSPLIB_RULES`); None for EUC_2D."""
        return TSPLIB_RULES.get(self.edge_weight_type)

    def to_original(self, points: np.ndarray) -> np.ndarray:
        """Map unit-square points back to the file's coordinates (the inverse of the scaling)."""
        return np.asarray(points) * self.scale + self.offset

    def length(self, tour: np.ndarray) -> float:
        """Euclidean length of the closed ``tour`` in the instance's own units (unrounded); for
        GEO and ATT, :meth:`tsplib_length`."""
        if self.distances is not None:
            return float(self.tsplib_length(tour))
        tour = _closed(tour)  # measured on the unit points, so no square overflows
        return float(np.linalg.norm(np.diff(self.points[tour], axis=0), axis=1).sum()) * self.scale

    def tsplib_length(self, tour: np.ndarray) -> int:
        """Length of the closed ``tour`` under the file's TSPLIB rule: EUC_2D's
        :func:`tsplib_length`, or GEO's or ATT's integer distances."""
        if self.distances is not None:
            return int(self.distances.tour_length(self.coords, _closed(tour)))
        return tsplib_length(self.coords, tour)

    def tsplib_matrix(self) -> np.ndarray:
        """(n, n) edge lengths under the file's TSPLIB rule, as float (:func:`tsplib_distances`
        for EUC_2D)."""
        if self.distances is not None:
            return self.distances.matrix(self.coords)
        return tsplib_distances(self.coords)


def _closed(tour: np.ndarray) -> np.ndarray:
    """``tour`` (0-based, with or without its closing index) with the closing index appended."""
    tour = np.asarray(tour, dtype=np.int64)
    return tour if len(tour) > 1 and tour[0] == tour[-1] else np.append(tour, tour[:1])


def tsplib_length(coords: np.ndarray, tour: np.ndarray) -> int:
    """Closed-tour length with each edge rounded by TSPLIB's ``nint(d) = int(d + 0.5)``.

    Args:
        coords: (n, 2) coordinates in the file's units.
        tour: 0-based city order, with or without the closing index; the return edge counts.
    """
    tour = _closed(tour)
    steps = np.diff(np.asarray(coords, dtype=np.float64)[tour], axis=0)
    return int(nint(np.hypot(steps[:, 0], steps[:, 1])).sum())  # hypot: no overflow


def tsplib_distances(coords: np.ndarray) -> np.ndarray:
    """(n, n) edge lengths under TSPLIB's EUC_2D rule, as float: what a local search must
    shorten to shorten :func:`tsplib_length` (on the unrounded distances a move that shortens
    the tour can lengthen the rounded one: ch130's optimal tour, 6110, became 6111)."""
    coords = np.asarray(coords, dtype=np.float64)
    steps = coords[:, None, :] - coords[None, :, :]  # (n, n, 2)
    return nint(np.hypot(steps[..., 0], steps[..., 1]))


def nint(distances: np.ndarray) -> np.ndarray:
    """TSPLIB's rounding of Euclidean distances, ``nint(d) = int(d + 0.5)``, elementwise."""
    return np.floor(distances + 0.5)


def read_tsplib(path: str | os.PathLike[str]) -> TSPLibInstance:
    """Read a TSPLIB ``.tsp`` file of TYPE TSP with EUC_2D coordinates.

    Raises:
        InputError: unsupported TYPE or EDGE_WEIGHT_TYPE, malformed or repeated header line,
            malformed node line, node ids not exactly 1..DIMENSION, more than
            :data:`~ptrnet.io.limits.MAX_POINTS` nodes, a coordinate beyond
            :data:`~ptrnet.io.limits.MAX_COORDINATE`, all cities at one point, or an unreadable
            file.
    """
    header, nodes, section_line = _parse(path)
    kind = header.get("EDGE_WEIGHT_TYPE", "")
    if kind not in SUPPORTED_EDGE_WEIGHT_TYPES:
        raise InputError(
            path,
            None,
            f"EDGE_WEIGHT_TYPE {kind or '(missing)'} is not supported; "
            f"supported: {', '.join(SUPPORTED_EDGE_WEIGHT_TYPES)}",
        )
    if header.get("TYPE", "TSP") != "TSP":
        raise InputError(path, None, f"TYPE {header['TYPE']} is not supported; only TSP is")
    ids = [node_id for node_id, _ in nodes]
    if sorted(ids) != list(range(1, len(ids) + 1)) or len(ids) < 2:
        raise InputError(path, section_line, "node ids must be 1..n, each once, n >= 2")
    if "DIMENSION" in header and header["DIMENSION"] != str(len(ids)):
        raise InputError(
            path,
            section_line,
            f"DIMENSION is {header['DIMENSION'][:QUOTE_CHARS]} but {len(ids)} nodes follow",
        )
    coords = np.array([xy for _, xy in sorted(nodes)], dtype=np.float64)
    if not np.ptp(coords, axis=0).max() > 0:
        raise InputError(path, section_line, "all cities are at the same point")
    plane = _plane(path, kind, coords)
    mapping = UnitMap.fit(plane)
    name = header.get("NAME", os.path.splitext(os.path.basename(path))[0])
    unit = mapping.to_unit(plane)
    return TSPLibInstance(name, coords, unit, mapping.scale, mapping.offset, kind)


def _plane(path: str | os.PathLike[str], kind: str, coords: np.ndarray) -> np.ndarray:
    """The planar cities a model reads: ``coords``, or for GEO their projection.

    Raises:
        InputError: a GEO latitude beyond 90 degrees or longitude beyond 180, by node id.
    """
    if kind == "GEO" and (found := off_globe(tsplib_degrees(coords))) is not None:
        row, problem = found
        raise InputError(path, None, f"node {row + 1}: {problem} (GEO coordinates are DDD.MM)")
    return TSPLIB_RULES[kind].plane(coords) if kind in TSPLIB_RULES else coords


def _parse(path: str | os.PathLike[str]) -> tuple[dict[str, str], list[tuple[int, tuple]], int]:
    """Header ``{KEY: value}``, nodes ``[(id, (x, y))]`` and the NODE_COORD_SECTION line number."""
    header: dict[str, str] = {}
    nodes: list[tuple[int, tuple[float, float]]] = []
    section_line = 0
    for line, text in numbered_lines(path):
        text = text.strip()
        if not text:
            continue
        if text == "EOF":
            break
        if section_line:
            nodes.append(_parse_node(text, path, line))
            if len(nodes) > MAX_POINTS:
                raise InputError(path, line, f"more than {MAX_POINTS} nodes, the limit")
        elif text.startswith("NODE_COORD_SECTION"):
            section_line = line
        elif ":" in text:
            key, value = (part.strip() for part in text.split(":", 1))
            if key.upper() in header:
                raise InputError(path, line, f"header key {quote(key, QUOTE_CHARS)} repeated")
            header[key.upper()] = value
        else:
            raise InputError(
                path,
                line,
                f"expected 'KEY : value' or NODE_COORD_SECTION, got {quote(text, QUOTE_CHARS)}",
            )
    if not section_line:
        raise InputError(path, None, "no NODE_COORD_SECTION")
    return header, nodes, section_line


def _parse_node(text: str, path: str | os.PathLike[str], line: int) -> tuple[int, tuple]:
    """``id x y`` -> ``(id, (x, y))`` with coordinates within ``MAX_COORDINATE``."""
    parts = text.split()
    ok = len(parts) == 3 and parts[0].isascii() and parts[0].isdigit() and len(parts[0]) < 10
    ok = ok and all(is_number(part) for part in parts[1:])
    if not ok:
        raise InputError(
            path,
            line,
            f"expected 'id x y' (an integer, two numbers), got {quote(text, QUOTE_CHARS)}",
        )
    x, y = float(parts[1]), float(parts[2])
    if not (abs(x) <= MAX_COORDINATE and abs(y) <= MAX_COORDINATE):
        raise InputError(
            path,
            line,
            f"coordinates must be finite and within +-{MAX_COORDINATE:g}, "
            f"got {quote(text, QUOTE_CHARS)}",
        )
    return int(parts[0]), (x, y)


def read_optimal(path: str | os.PathLike[str]) -> dict[str, int]:
    """Proven optimal lengths from lines ``name : length``, each name once.

    Raises:
        InputError: a line that is not ``name : length``, a length that is not a positive
            integer (TSPLIB's lengths are integers; 0 leaves no gap to compute), or a name given
            twice (the message names both lines).
    """
    optimal: dict[str, int] = {}
    first_line: dict[str, int] = {}
    for line, text in numbered_lines(path):
        if not text.strip():
            continue
        name, value = _parse_optimum(text, path, line)
        if name in first_line:
            raise InputError(
                path,
                line,
                f"{quote(name, QUOTE_CHARS)} again, already given on line {first_line[name]}; "
                "give each name once",
            )
        optimal[name], first_line[name] = value, line
    return optimal


def _parse_optimum(text: str, path: str | os.PathLike[str], line: int) -> tuple[str, int]:
    """``name : length`` -> ``(name, length)``, the length a positive integer of at most
    :data:`MAX_OPTIMUM_DIGITS` digits."""
    name, sep, value = (part.strip() for part in text.partition(":"))
    if not sep or not name:
        raise InputError(
            path, line, f"expected 'name : length', got {quote(text.strip(), QUOTE_CHARS)}"
        )
    digits = value.isascii() and value.isdigit() and len(value) <= MAX_OPTIMUM_DIGITS
    if not (digits and int(value) > 0):
        raise InputError(
            path,
            line,
            f"the optimum of {quote(name, QUOTE_CHARS)} must be a positive integer "
            f"(at most {MAX_OPTIMUM_DIGITS} digits), got {quote(value, QUOTE_CHARS)}",
        )
    return name, int(value)
