"""Point labels that do not overlap one another, the points or the edge of the axes.

Drawn where matplotlib is told, 7-point names on a map of European capitals put Vienna on
Bratislava and Ljubljana on Zagreb. :func:`add_labels` writes each label beside its point;
once the figure's layout is final, :func:`separate_labels` measures every label with the
figure's renderer and moves it, the most crowded first, to the first free place among
candidates around its point: the eight compass places just beside it, then rings further out
(one label height apart, sixteen directions each), where a thin leader line joins label and
point. A place is free when its box (with a pixel of padding) meets no label placed before,
no point's marker, and lies inside the axes; beside the point, without a leader line, it must
also lie nearer its own point than any other, or it would read as that one's. Where no
candidate is free, the label takes the one that overlaps least: a last resort that only a very
dense cluster needs, and the only case in which labels overlap.

The placement is geometry in display pixels at the figure's dpi; a label keeps its place as an
offset in points from its point, so the figure may be saved at any dpi, but its axes must not
move or change size afterwards (:func:`ptrnet.viz.figures.prediction_figure` fixes its layout
first).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backend_bases import RendererBase
from matplotlib.collections import LineCollection
from matplotlib.text import Annotation

LABEL_GID = "point-label"  # the labels' artist id, for separate_labels and a reader of a figure
LEADER_GID = "label-leaders"
FONT_SIZE = 7
NEAR_OFFSET = (3, 3)  # points: where add_labels writes a label, up and right of its point
MARKER_SIZE = 14  # scatter size (points squared) of the points the labels name
GAP = 1.5  # points between a point's marker and its label
RINGS = 10  # rings of candidates beyond the one beside the point
PAD = 1.0  # pixels kept clear around every label


def add_labels(ax: Axes, points: np.ndarray, labels: Sequence[str]) -> None:
    """Write ``labels[i]`` up and right of ``points[i]`` ((n, 2) data coordinates), tagged
    :data:`LABEL_GID` for :func:`separate_labels`."""
    for label, (x, y) in zip(labels, np.asarray(points, dtype=np.float64), strict=True):
        ax.annotate(
            label,
            (x, y),
            xytext=NEAR_OFFSET,
            textcoords="offset points",
            fontsize=FONT_SIZE,
            gid=LABEL_GID,
        )


def separate_labels(ax: Axes, renderer: RendererBase) -> None:
    """Move the labels :func:`add_labels` wrote on ``ax`` to places where none overlaps
    another, a point or the axes' edge (module docstring), measured with ``renderer``, and
    draw leader lines to those set apart from their points. Call it once the axes' place and
    size are final; a second call places the labels afresh."""
    labels = [t for t in ax.texts if isinstance(t, Annotation) and t.get_gid() == LABEL_GID]
    for old in [c for c in ax.collections if c.get_gid() == LEADER_GID]:
        old.remove()
    if not labels:
        return
    ax.apply_aspect()  # the axes' final box, as drawing will set it
    per_point = ax.figure.dpi / 72.0
    anchors = ax.transData.transform(np.array([t.xy for t in labels], dtype=np.float64))
    boxes = []
    for label in labels:  # each label's box, relative to its point, at offset (0, 0)
        label.set(ha="left", va="bottom")
        label.xyann = (0.0, 0.0)
        box = label.get_window_extent(renderer)
        boxes.append((box.x0, box.y0, box.x1, box.y1))
    shapes = np.asarray(boxes) - np.tile(anchors, 2)  # (n, 4): x0, y0, x1, y1 from the point
    radius = np.sqrt(MARKER_SIZE) / 2 * per_point + PAD
    markers = np.hstack([anchors - radius, anchors + radius])  # (n, 4)
    frame = ax.get_window_extent(renderer)
    bounds = np.array([frame.x0 + PAD, frame.y0 + PAD, frame.x1 - PAD, frame.y1 - PAD])
    near = radius + GAP * per_point
    placed = np.empty((0, 4))
    leaders = []
    for i in _crowded_first(anchors, shapes):
        others = np.delete(anchors, i, axis=0)
        shift, ring = _place(anchors[i], shapes[i], near, placed, markers, bounds, others)
        labels[i].xyann = tuple(shift / per_point)
        box = np.tile(anchors[i] + shift, 2) + shapes[i]
        placed = np.vstack([placed, box + np.array([-PAD, -PAD, PAD, PAD])])
        if ring:
            leaders.append((anchors[i], np.clip(anchors[i], box[:2], box[2:])))
    if leaders:
        to_data = ax.transData.inverted()
        segments = [to_data.transform(np.array(pair)) for pair in leaders]
        ax.add_collection(
            LineCollection(segments, colors="0.45", linewidths=0.6, zorder=4, gid=LEADER_GID),
            autolim=False,
        )


def _crowded_first(anchors: np.ndarray, shapes: np.ndarray) -> np.ndarray:
    """Label indices by how many other points lie within a label's width of theirs, most
    first (ties by index): the crowded take the places beside their points first."""
    reach = float((shapes[:, 2] - shapes[:, 0]).max())
    gaps = np.linalg.norm(anchors[:, None] - anchors[None], axis=-1)
    crowd = (gaps < reach).sum(axis=1)
    return np.lexsort((np.arange(len(anchors)), -crowd))


def _directions(ring: int) -> np.ndarray:
    """(k, 2) unit directions of ``ring``'s candidates, in order of preference: beside the
    point (ring 0) up-right, right, down-right, up-left, left, down-left, up, down; further
    out sixteen, starting at the right."""
    if ring == 0:
        return np.array([(1, 1), (1, 0), (1, -1), (-1, 1), (-1, 0), (-1, -1), (0, 1), (0, -1)])
    angles = np.arange(16) * np.pi / 8
    return np.stack([np.cos(angles), np.sin(angles)], axis=1)


def _candidates(shape: np.ndarray, gap: float, ring: int) -> np.ndarray:
    """(k, 2) shifts of a label box ``shape`` (x0, y0, x1, y1 from its point at offset 0)
    putting its nearest side ``gap`` pixels from its point in each direction of ``ring``:
    beside, above or below the point, or centred on it along an axis the direction does not
    leave."""
    width, height = shape[2] - shape[0], shape[3] - shape[1]
    steps = _directions(ring) * gap
    lower = np.where(
        np.abs(steps) < 1e-9,
        -np.array([width, height]) / 2,
        np.where(steps > 0, steps, steps - np.array([width, height])),
    )
    return lower - shape[:2]  # the shift that puts the box's lower-left corner there


def _place(
    anchor: np.ndarray,
    shape: np.ndarray,
    near: float,
    placed: np.ndarray,
    markers: np.ndarray,
    bounds: np.ndarray,
    others: np.ndarray,
) -> tuple[np.ndarray, int]:
    """The shift (pixels from the point) of the first free candidate and its ring, else of
    the candidate that overlaps least (ties: the nearer, then the earlier). Beside the point
    (ring 0, no leader line) a candidate must also lie nearer its own point than any of the
    ``others`` (m, 2), or it would read as theirs."""
    height = shape[3] - shape[1]
    best, best_cost = None, np.inf
    for ring in range(RINGS + 1):
        shifts = _candidates(shape, near + ring * height, ring)
        boxes = np.tile(anchor, 2) + shape + np.tile(shifts, 2)
        cost = _overlap(boxes, placed) + _overlap(boxes, markers) + _outside(boxes, bounds)
        clear = cost == 0
        if ring == 0:
            clear &= _distance(boxes, anchor[None]) < _distance(boxes, others)
        free = np.flatnonzero(clear)
        if free.size:
            return shifts[free[0]], ring
        k = int(np.argmin(cost))
        if cost[k] < best_cost:
            best, best_cost = (shifts[k], ring), float(cost[k])
    return best


def _distance(boxes: np.ndarray, points: np.ndarray) -> np.ndarray:
    """(k,) distance from each of ``boxes`` (k, 4) to the nearest of ``points`` (m, 2)."""
    if not len(points):
        return np.full(len(boxes), np.inf)
    nearest = np.clip(points[None], boxes[:, None, :2], boxes[:, None, 2:])  # (k, m, 2)
    return np.linalg.norm(nearest - points[None], axis=-1).min(axis=1)


def _overlap(boxes: np.ndarray, others: np.ndarray) -> np.ndarray:
    """(k,) total area each of ``boxes`` (k, 4) shares with ``others`` (m, 4)."""
    if not len(others):
        return np.zeros(len(boxes))
    lo = np.maximum(boxes[:, None, :2], others[None, :, :2])
    hi = np.minimum(boxes[:, None, 2:], others[None, :, 2:])
    return np.clip(hi - lo, 0, None).prod(axis=-1).sum(axis=1)


def _outside(boxes: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """(k,) how far each box reaches past ``bounds`` (x0, y0, x1, y1), weighted as area."""
    past = np.concatenate([bounds[None, :2] - boxes[:, :2], boxes[:, 2:] - bounds[None, 2:]], 1)
    height = boxes[:, 3] - boxes[:, 1]
    return np.clip(past, 0, None).sum(axis=1) * height * 4
