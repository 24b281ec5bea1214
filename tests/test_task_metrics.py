"""The paper's metrics against hand-made predictions: invalid outputs count as failures without
crashing, a duplicated vertex is read by either copy, metrics are means over instances, and
sort ties score full in any order."""

from __future__ import annotations

import numpy as np
import pytest

from ptrnet.tasks import POINT_TASKS, get_task

HULL = get_task("convex_hull")
DELAUNAY = get_task("delaunay")
SORT = get_task("sort")


SQUARE = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.5, 0.4]])


def test_hull_output_cut_before_its_closing_index_is_wrong_and_not_simple():
    ref = HULL.solve(SQUARE)  # [0, 1, 2, 3, 0]
    scores = HULL.metrics([SQUARE] * 2, [ref] * 2, [ref[:-1], ref])
    assert scores["accuracy"] == 0.5
    assert scores["non_simple_rate"] == 0.5 and scores["area_coverage"] == 1.0


def test_hull_metrics_read_a_duplicated_vertex_by_either_copy():
    points = np.vstack([SQUARE, SQUARE[2:3]])  # point 5 is a copy of vertex 2
    ref = HULL.solve(points)
    assert ref.tolist() == [0, 1, 2, 3, 0]
    pred = np.array([0, 1, 5, 3, 0])
    assert HULL.sequence_cost(points, pred) == 0.0  # the cost already agrees
    assert HULL.metrics([points], [ref], [pred])["accuracy"] == 1.0
    twice = np.array([0, 1, 2, 5, 3, 0])  # the vertex visited by both copies
    assert HULL.metrics([points], [ref], [twice])["accuracy"] == 0.0


def test_delaunay_metrics_read_a_duplicated_vertex_by_either_copy():
    points = np.vstack([SQUARE, SQUARE[4:5]])  # point 5 is a copy of the inner point 4
    ref = DELAUNAY.solve(points)
    pred = np.where(ref == 4, 5, ref)
    scores = DELAUNAY.metrics([points], [ref], [pred])
    assert scores == {"accuracy": 1.0, "triangle_coverage": 1.0, "count": 1}


def invalid_outputs(ref: np.ndarray, n: int) -> list[np.ndarray]:
    return [
        np.zeros(0, dtype=np.int64),
        ref[:1],
        ref[: len(ref) // 2],
        ref[:-1],
        np.concatenate([ref, ref]),
        np.full(len(ref), ref[0]),
        np.append(ref, n),  # an index past the last input
        np.append(ref[:-1], -1),
    ]


@pytest.mark.parametrize("name", POINT_TASKS)
def test_invalid_outputs_never_crash_and_never_score_full(name):
    task = get_task(name)
    rng = np.random.default_rng(3)
    for _ in range(10):
        points = task.sample_points(rng, 7)
        ref = task.solve(points)
        perfect = task.metrics([points], [ref], [ref])
        for pred in invalid_outputs(ref, len(points)):
            if task.is_valid(points, pred):
                continue  # e.g. a Delaunay output with a triangle dropped is well formed
            scores = task.metrics([points], [ref], [pred])
            assert scores["count"] == 1
            headline = task.validation_metric
            if task.lower_is_better:
                assert scores["valid_rate"] == 0.0
            else:
                assert scores[headline] <= perfect[headline]
                if name != "delaunay":  # coverage ignores extra triangles, by the paper's rule
                    assert scores[headline] < perfect[headline], pred


def test_metrics_are_means_over_instances_not_over_points():
    rng = np.random.default_rng(4)
    small, large = rng.random((5, 2)), rng.random((40, 2))
    refs = [HULL.solve(small), HULL.solve(large)]
    assert HULL.metrics([small, large], refs, [refs[0], refs[1][:2]])["accuracy"] == 0.5
    refs = [DELAUNAY.solve(small), DELAUNAY.solve(large)]
    half = DELAUNAY.metrics([small, large], refs, [refs[0], refs[1][: 3 * (len(refs[1]) // 6)]])
    coverage = (1 + (len(refs[1]) // 6) / (len(refs[1]) // 3)) / 2
    assert half["triangle_coverage"] == pytest.approx(coverage)
    values = [rng.random((3, 1)), rng.random((30, 1))]
    refs = [SORT.solve(v) for v in values]
    scores = SORT.metrics(values, refs, [refs[0], refs[1][::-1]])
    assert scores["exact_match"] == 0.5 and scores["valid_rate"] == 1.0


def test_sort_ties_keep_index_order_and_any_tie_order_scores_full():
    values = np.array([[0.5], [0.2], [0.5], [0.2], [0.9]])
    ref = SORT.solve(values)
    assert ref.tolist() == [1, 3, 0, 2, 4]
    swapped = np.array([3, 1, 2, 0, 4])
    assert SORT.canonical(values, swapped).tolist() == ref.tolist()
    assert SORT.metrics([values], [ref], [swapped])["exact_match"] == 1.0
    repeated = np.array([1, 1, 0, 2, 4])  # equal values, but index 1 twice
    assert SORT.metrics([values], [ref], [repeated])["exact_match"] == 0.0
