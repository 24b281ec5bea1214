"""The symmetries of the unit square, shared by training augmentation and multi-view decoding.

The 8 maps that flip and swap the axes about the centre are isometries of [0, 1]^2, so they keep
hulls, Delaunay triangles and optimal tours (tasks with ``square_symmetric``). Symmetry ``which``
is a 3-bit code: bit 0 flips x (x -> 1 - x), bit 1 flips y, bit 2 then swaps the axes.

Four of them are rotations about the centre (they keep orientation): 0 (identity), 6 (90°
counter-clockwise), 3 (180°) and 5 (270°). The other four are reflections, which turn a
counter-clockwise cycle clockwise.

They act on a row's first two columns, its x and y; any further column (a routing instance's
demand and capacity, ``Task.coordinate_columns``) is carried along unchanged. Every one of them
is an isometry of the whole plane too, so on points outside the unit square they still keep
every length (the images then lie outside it as well, reflected about its centre).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import torch

SQUARE_SYMMETRIES = 8  # bit 0: flip x, bit 1: flip y, bit 2: swap the axes
#: The rotations by 0°, 90°, 180° and 270° counter-clockwise, as symmetry codes.
ROTATIONS: tuple[int, ...] = (0, 6, 3, 5)
#: The reflection in the vertical centre line (x -> 1 - x), the mirror image of multi-view decoding.
MIRROR = 1
#: How many rotations a step-by-step ensemble averages (``average_views``): the identity, plus
#: the half turn, plus both quarter turns.
ROTATION_VIEWS: tuple[int, ...] = (1, 2, 4)


def view_symmetries(views: int) -> tuple[int, ...]:
    """Symmetry codes of ``views`` rotations: 1 -> (0,), 2 -> (0, 3), 4 -> :data:`ROTATIONS`."""
    if views not in ROTATION_VIEWS:
        choices = ", ".join(map(str, ROTATION_VIEWS))
        raise ValueError(f"a step-by-step ensemble has {choices} views (rotations), got {views}")
    return (0,) if views == 1 else (0, 3) if views == 2 else ROTATIONS


def symmetric_views(views: int) -> tuple[int, ...]:
    """Symmetry codes of ``views`` symmetric copies: 1, 2 or 4 rotations
    (:func:`view_symmetries`), or 8: every symmetry of the square, 0..7."""
    return tuple(range(SQUARE_SYMMETRIES)) if views == SQUARE_SYMMETRIES else view_symmetries(views)


def search_starts(averaged: int) -> tuple[int, ...]:
    """The symmetries an eight-view search searches from when each search averages ``averaged``
    rotations (1, 2 or 4): one per set of symmetries those rotations join, in code order, since
    a search from ``which`` reads the views ``rotation(which(x))`` for every averaged rotation.
    1 -> all eight; 2 -> (0, 1, 4, 5); 4 -> (0, :data:`MIRROR`), the instance and its mirror."""
    probe = np.array([[0.1, 0.2]])  # a point whose eight images all differ
    images = [square_symmetry(probe, which) for which in range(SQUARE_SYMMETRIES)]

    def code(points: np.ndarray) -> int:
        return next(which for which, image in enumerate(images) if np.allclose(image, points))

    covered: set[int] = set()
    starts = []
    for which in range(SQUARE_SYMMETRIES):
        if which not in covered:
            starts.append(which)
            covered |= {code(square_symmetry(images[which], r)) for r in view_symmetries(averaged)}
    return tuple(starts)


def check_symmetry(which: int) -> None:
    """Raises ValueError unless ``which`` is a symmetry code 0..7."""
    if not 0 <= which < SQUARE_SYMMETRIES:
        raise ValueError(f"square symmetry must be in 0..{SQUARE_SYMMETRIES - 1}, got {which}")


def square_symmetry(points: np.ndarray, which: int) -> np.ndarray:
    """Symmetry ``which`` (0..7, 0 = identity) applied to (n, d >= 2) rows' x and y (columns 0
    and 1; the others unchanged); a new float64 array."""
    check_symmetry(which)
    out = np.array(points, dtype=np.float64)
    for axis in (0, 1):
        if which >> axis & 1:
            out[:, axis] = 1.0 - out[:, axis]
    if which & 4:
        out[:, :2] = out[:, 1::-1].copy()
    return out


def square_symmetry_tensor(points: torch.Tensor, which: int) -> torch.Tensor:
    """:func:`square_symmetry` for a batch: (..., d >= 2) -> (..., d), x and y moved, the
    other columns kept; same dtype, a new tensor.

    Padding rows are transformed too; they stay padding because the lengths do not change.
    """
    check_symmetry(which)
    out = points.clone()
    for axis in (0, 1):
        if which >> axis & 1:
            out[..., axis] = 1.0 - out[..., axis]
    if which & 4:
        out[..., :2] = out[..., :2].flip(-1)
    return out
