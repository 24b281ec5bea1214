"""Mapping an instance into the unit square the models were trained on, and back.

The models see points in [0, 1]^dim (paper Sec. 4: points uniform in the unit square). An
instance given in other units (kilometres, pixels, [0, 1000]) is mapped by
``unit = (points - offset) / scale`` with ``offset`` the per-axis minimum and ``scale`` the
largest extent over the axes: the aspect ratio is kept and the longer side spans [0, 1]. Every
task's answer is invariant under this map (hulls, triangulations, tours and orders depend only
on shape), so the same sequence is right for both; a length in unit coordinates times ``scale``
is the length in the input's units, and an area times ``scale ** 2``.

A task whose rows carry more than coordinates maps only their leading ``columns``
(``Task.unit_columns``: a routing row's x and y, its demand and capacity kept): its answer is
invariant under that map, the lengths it measures scale by ``scale``. A task whose answer is
not invariant under any such map (``Task.shape_invariant`` false: knapsack's weights are
measured against a fixed capacity) passes ``shape_invariant=False``, and its instances are
never mapped.

Instances already inside the unit square are left alone (:func:`fit_unit_square` returns None),
so the paper's files decode exactly as before, unless they are far smaller than it: an
instance whose extent is below :data:`MIN_EXTENT` (a cluster of points a millionth apart, say)
would reach the model as one blur of coincident points, so it is mapped too. TSPLIB files are
always mapped (:mod:`ptrnet.io.tsplib`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ptrnet.tasks import Task


@dataclass(frozen=True)
class UnitMap:
    """``unit = (points - offset) / scale`` on a point's leading k = len(``offset``) columns,
    its others kept (a routing row's demand and capacity); ``offset`` (k,), ``scale`` > 0."""

    offset: np.ndarray
    scale: float

    @classmethod
    def fit(cls, points: np.ndarray, columns: int | None = None) -> UnitMap:
        """The map of ``points`` (n, dim)' leading ``columns`` (None: all) into [0, 1]^columns
        keeping the aspect ratio; all points at one place are only moved to the origin
        (``scale`` 1)."""
        points = np.asarray(points, dtype=np.float64)[:, :columns]
        offset = points.min(axis=0)
        extent = float((points.max(axis=0) - offset).max())
        return cls(offset, extent if extent > 0 else 1.0)

    def to_unit(self, points: np.ndarray) -> np.ndarray:
        """(n, dim) input coordinates -> (n, dim) unit-square coordinates."""
        out = np.array(points, dtype=np.float64)  # a copy
        k = len(self.offset)
        out[..., :k] = (out[..., :k] - self.offset) / self.scale
        return out

    def to_input(self, points: np.ndarray) -> np.ndarray:
        """(n, dim) unit-square coordinates -> (n, dim) coordinates in the input's units."""
        out = np.array(points, dtype=np.float64)
        k = len(self.offset)
        out[..., :k] = out[..., :k] * self.scale + self.offset
        return out

    def describe(self) -> str:
        """``x' = (x - offset) / scale`` with the values, for a note to the user."""
        offset = ", ".join(f"{v:.6g}" for v in self.offset.tolist())
        return f"x' = (x - ({offset})) / {self.scale:.6g}"


def inside_unit_square(points: np.ndarray) -> bool:
    """Whether every coordinate of ``points`` lies in [0, 1]."""
    points = np.asarray(points)
    return bool(np.all((points >= 0) & (points <= 1)))


MIN_EXTENT = 1e-2
"""An instance inside the unit square whose largest extent is below this is mapped anyway
(module docstring). Uniform instances of the paper's sizes (n >= 5) fall below it with
probability under 1e-14, so test sets decode as given."""


def fit_unit_square(
    points: np.ndarray, shape_invariant: bool = True, columns: int | None = None
) -> UnitMap | None:
    """None if ``points``' leading ``columns`` (None: all; ``Task.unit_columns``) are already
    in the unit square and not tiny in it (largest extent at least :data:`MIN_EXTENT`, or
    zero: all at one place), or belong to a task that is not ``shape_invariant``; else their
    :meth:`UnitMap.fit`."""
    if not shape_invariant:
        return None
    points = np.asarray(points, dtype=np.float64)
    plane = points[:, :columns] if points.ndim == 2 else points
    if not inside_unit_square(plane):
        return UnitMap.fit(points, columns)
    extent = float((plane.max(axis=0) - plane.min(axis=0)).max()) if plane.size else 0.0
    return UnitMap.fit(points, columns) if 0 < extent < MIN_EXTENT else None


def to_unit_square(
    points: np.ndarray, shape_invariant: bool = True, columns: int | None = None
) -> np.ndarray:
    """``points`` (n, dim) as a model decodes them: their image under :func:`fit_unit_square`'s
    map, or themselves when it leaves them alone (a task's instance goes through
    :func:`model_image`, which reads the task's flags). Mapping twice changes nothing (an image
    spans [0, 1] on its longer side)."""
    mapping = fit_unit_square(points, shape_invariant, columns)
    return np.asarray(points) if mapping is None else mapping.to_unit(points)


def model_image(task: Task, points: np.ndarray) -> tuple[np.ndarray, UnitMap | None]:
    """``points`` (n, dim, in the user's units) as a model of ``task`` reads them: the image
    of their plane (:meth:`Task.plane`: themselves, or the projection of cities on the sphere)
    under :func:`fit_unit_square`'s map by the task's own flags (``shape_invariant``,
    ``unit_columns``), with that map (None: the plane is left as it is). The one place every
    front end maps a user's instance into the model's frame: ``ptrnet`` commands
    (:func:`ptrnet.cli.inputs.prepare`), decoding (:func:`ptrnet.inference.predict_outputs`,
    :func:`ptrnet.viz.trace.decode_trace`) and the page."""
    plane = task.plane(points)
    mapping = fit_unit_square(plane, task.shape_invariant, task.unit_columns)
    return (np.asarray(plane) if mapping is None else mapping.to_unit(plane)), mapping
