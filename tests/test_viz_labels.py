"""Point labels set apart: no label overlaps another, a point or the axes' edge, measured by the
bounding boxes matplotlib's renderer gives the drawn texts (ptrnet/viz/labels.py)."""

from __future__ import annotations

import io
import itertools
from pathlib import Path

import numpy as np
import pytest
from matplotlib.transforms import Bbox

from ptrnet.reproduce.demo import GALLERY_COLUMNS, GALLERY_DPI, gallery_figure
from ptrnet.tasks import get_task
from ptrnet.viz.figures import prediction_figure, save_png
from ptrnet.viz.labels import LABEL_GID, LEADER_GID, MARKER_SIZE

# examples/capitals.csv: 43 places (name, lat, lon), the European capitals and Zurich, whose
# names crowd one another at 7 points (Vienna and Bratislava, Ljubljana and Zagreb, Bern and
# Zurich, Helsinki and Tallinn).
CAPITALS = (Path(__file__).parent.parent / "examples" / "capitals.csv").read_text().splitlines()[1:]


def capitals() -> tuple[np.ndarray, tuple[str, ...]]:
    """The places as (lon, lat) points, as ``--columns lon,lat`` reads them, and their names."""
    rows = [line.split(",") for line in CAPITALS]
    points = np.array([(float(lon), float(lat)) for _, lat, lon in rows])
    return points, tuple(name for name, _, _ in rows)


def rendered(fig):
    """Draw ``fig`` as save_png does (its PNG written to memory); returns the renderer."""
    save_png(fig, io.BytesIO())
    return fig.canvas.get_renderer()


def label_boxes(ax, renderer) -> dict[str, Bbox]:
    """Each label's text box in pixels, by its text."""
    texts = [t for t in ax.texts if t.get_gid() == LABEL_GID]
    return {t.get_text(): t.get_window_extent(renderer) for t in texts}


def overlapping(boxes: dict[str, Bbox]) -> list[tuple[str, str]]:
    """The pairs of labels whose boxes share an area."""
    pairs = []
    for (a, box_a), (b, box_b) in itertools.combinations(boxes.items(), 2):
        shared = Bbox.intersection(box_a, box_b)
        if shared is not None and shared.width > 0 and shared.height > 0:
            pairs.append((a, b))
    return pairs


def check_clear(fig, points: np.ndarray, names) -> dict[str, Bbox]:
    """Assert that no label of ``fig``'s map overlaps another label, covers a point's marker
    or leaves the axes; returns the boxes."""
    return check_axes_clear(fig.axes[0], rendered(fig), points, names)


def check_axes_clear(ax, renderer, points: np.ndarray, names) -> dict[str, Bbox]:
    """check_clear for the map on ``ax``, drawn by ``renderer``."""
    fig = ax.figure
    boxes = label_boxes(ax, renderer)
    assert sorted(boxes) == sorted(names)
    assert overlapping(boxes) == []
    frame = ax.get_window_extent(renderer)
    radius = np.sqrt(MARKER_SIZE) / 2 * fig.dpi / 72
    for name, box in boxes.items():
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1, name
        assert frame.y0 <= box.y0 and box.y1 <= frame.y1, name
        for x, y in ax.transData.transform(points):
            assert not box.overlaps(Bbox([[x - radius, y - radius], [x + radius, y + radius]]))
    return boxes


def test_no_two_capital_labels_overlap_on_the_plot_of_a_tour():
    points, names = capitals()
    tsp = get_task("tsp")
    tour = np.append(np.arange(len(points)), 0)  # any tour: the labels are what is measured
    tokens = np.append(tour + 1, 0)
    probs = np.eye(len(points) + 1)[tokens]  # (T, n + 1): each step sure of its city
    fig = prediction_figure(tsp, points, tour, tour, probs, tokens, "capitals", names)
    boxes = check_clear(fig, points, names)
    # the crowded pairs the default offsets drew on top of each other
    for a, b in [("Vienna", "Bratislava"), ("Ljubljana", "Zagreb"), ("Bern", "Zurich")]:
        assert not boxes[a].overlaps(boxes[b])


def test_labels_stay_apart_without_the_heatmap_and_a_label_reads_as_its_own_point():
    """Beside a point (no leader line) a label lies nearer its own point than any other."""
    points, names = capitals()
    tsp = get_task("tsp")
    tour = np.append(np.arange(len(points)), 0)
    fig = prediction_figure(tsp, points, tour, names=names)
    boxes = check_clear(fig, points, names)
    ax = fig.axes[0]
    leaders = [c for c in ax.collections if c.get_gid() == LEADER_GID]
    led = set()
    if leaders:
        anchors = ax.transData.transform(points)
        for start, _ in (ax.transData.transform(seg) for seg in leaders[0].get_segments()):
            led.add(int(np.argmin(np.linalg.norm(anchors - start, axis=1))))
    anchors = ax.transData.transform(points)
    for i, name in enumerate(names):
        if i in led:
            continue
        box = boxes[name]
        nearest = np.clip(anchors, (box.x0, box.y0), (box.x1, box.y1))
        distance = np.linalg.norm(nearest - anchors, axis=1)
        assert int(np.argmin(distance)) == i, name


def test_labels_of_a_dense_cluster_take_leader_lines_instead_of_overlapping():
    rng = np.random.default_rng(0)
    points = np.vstack([rng.normal(0, 0.01, (12, 2)), rng.uniform(-1, 1, (8, 2))])
    names = tuple(f"place {i}" for i in range(len(points)))
    tsp = get_task("tsp")
    fig = prediction_figure(tsp, points, np.append(np.arange(len(points)), 0), names=names)
    check_clear(fig, points, names)
    leaders = [c for c in fig.axes[0].collections if c.get_gid() == LEADER_GID]
    assert leaders and len(leaders[0].get_segments()) >= 6  # 12 names cannot all sit beside


@pytest.mark.parametrize("task_name", ["convex_hull", "delaunay"])
def test_index_labels_of_other_tasks_are_set_apart_too(task_name):
    task = get_task(task_name)
    points = task.sample_points(np.random.default_rng(3), 50)
    fig = prediction_figure(task, points, task.solve(points))
    check_clear(fig, points, [str(i + 1) for i in range(len(points))])


def test_the_layout_is_fixed_before_the_labels_are_placed():
    """Saving again does not move the axes the labels were placed against."""
    points, names = capitals()
    tsp = get_task("tsp")
    fig = prediction_figure(tsp, points, np.append(np.arange(len(points)), 0), names=names)
    before = fig.axes[0].get_position().bounds
    rendered(fig)
    rendered(fig)
    assert fig.axes[0].get_position().bounds == pytest.approx(before)
    check_clear(fig, points, names)


def test_the_demo_gallery_sets_its_labels_apart_too():
    """``ptrnet demo``'s gallery: every panel's index labels clear of one another, the points
    and the panel's edge, the crowded capitals included, in the PNG as saved."""
    rng = np.random.default_rng(5)
    capitals_points = capitals()[0]
    panels = []
    for name in ("tsp", "convex_hull", "delaunay"):
        task = get_task(name)
        instances = [task.sample_points(rng, 20) for _ in range(2)]
        if name == "tsp":
            instances.append(capitals_points)
        panels.append([(name, x, task.solve(x), task.solve(x)) for x in instances])
    fig = gallery_figure(panels)
    fig.savefig(io.BytesIO(), dpi=GALLERY_DPI, format="png")
    renderer = fig.canvas.get_renderer()
    for row, drawings in enumerate(panels):
        for col, (_, points, _, _) in enumerate(drawings):
            ax = fig.axes[row * GALLERY_COLUMNS + col]
            check_axes_clear(ax, renderer, points, [str(i + 1) for i in range(len(points))])
