"""Scoring prediction files: the paper's metrics, their invariances, and alignment checks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ptrnet.evaluation.score import json_safe, metric_text, score_files
from ptrnet.io.errors import InputError
from ptrnet.io.paper_format import format_line, write_examples
from ptrnet.tasks import POINT_TASKS, SizeRange, get_task

SQUARE = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])


def _files(tmp_path: Path, points: list, refs: list, preds: list) -> tuple[Path, Path]:
    ref, pred = tmp_path / "ref.txt", tmp_path / "pred.txt"
    write_examples(ref, zip(points, refs, strict=True))
    write_examples(pred, zip(points, preds, strict=True))
    return ref, pred


def _dataset(task_name: str, count: int = 20) -> tuple[list, list]:
    task = get_task(task_name)
    points = task.generate(SizeRange(max(task.min_n, 5), 8), count, seed=11)
    return points, [task.solve(x) for x in points]


@pytest.mark.parametrize("task_name", POINT_TASKS)
def test_perfect_predictions_score_perfectly(task_name: str, tmp_path: Path) -> None:
    points, refs = _dataset(task_name)
    metrics = score_files(task_name, *_files(tmp_path, points, refs, refs))
    assert list(metrics) == [*get_task(task_name).metric_keys, "count"]
    assert metrics["count"] == 20
    for key in (
        "exact_match",
        "position_accuracy",
        "valid_rate",
        "accuracy",
        "area_coverage",
        "triangle_coverage",
    ):
        assert metrics.get(key, 1.0) == 1.0
    assert metrics.get("non_simple_rate", 0.0) == 0.0 and metrics.get("fail") in (None, False)
    assert metrics.get("mean_gap", 0.0) == 0.0


def test_hull_rotated_and_reversed_still_scores_full(tmp_path: Path) -> None:
    points, refs = _dataset("convex_hull")
    preds = []
    for k, ref in enumerate(refs):
        cycle = np.roll(ref[:-1], k + 1)
        cycle = cycle[::-1] if k % 2 else cycle
        preds.append(np.append(cycle, cycle[0]))
    assert any(not np.array_equal(p, r) for p, r in zip(preds, refs, strict=True))
    metrics = score_files("convex_hull", *_files(tmp_path, points, refs, preds))
    assert metrics["accuracy"] == 1.0 and metrics["area_coverage"] == pytest.approx(1.0)


def test_bow_tie_is_non_simple_and_left_out_of_area(tmp_path: Path) -> None:
    hull = np.array([0, 1, 2, 3, 0])
    bow_tie = np.array([0, 2, 1, 3, 0])  # edges 0-2 and 1-3 cross
    half = np.array([0, 1, 2, 0])  # a simple triangle: half the square
    metrics = score_files(
        "convex_hull", *_files(tmp_path, [SQUARE] * 3, [hull] * 3, [bow_tie, half, hull])
    )
    assert metrics["non_simple_rate"] == pytest.approx(1 / 3)
    assert metrics["area_coverage"] == pytest.approx((0.5 + 1.0) / 2)
    assert metrics["accuracy"] == pytest.approx(1 / 3) and metrics["fail"] is True


# FAIL means more than 1% not simple: exactly 1% must pass.
@pytest.mark.parametrize(("bad", "fail"), [(0, False), (1, False), (2, True)])
def test_fail_means_more_than_one_percent_not_simple(bad: int, fail: bool, tmp_path) -> None:
    hull, bow_tie = np.array([0, 1, 2, 3, 0]), np.array([0, 2, 1, 3, 0])
    preds = [bow_tie] * bad + [hull] * (100 - bad)
    metrics = score_files("convex_hull", *_files(tmp_path, [SQUARE] * 100, [hull] * 100, preds))
    assert metrics["non_simple_rate"] == pytest.approx(bad / 100) and metrics["fail"] is fail


def test_tsp_length_counts_the_return_edge(tmp_path: Path) -> None:
    tour = np.array([0, 1, 2, 3, 0])
    crossing = np.array([0, 2, 1, 3, 0])  # 1 + 1 + 2 * sqrt(2)
    metrics = score_files("tsp", *_files(tmp_path, [SQUARE] * 2, [tour] * 2, [tour, crossing]))
    assert metrics["valid_rate"] == 1.0
    assert metrics["mean_length"] == pytest.approx((4.0 + 2.0 + 2 * np.sqrt(2)) / 2)
    assert metrics["mean_gap"] == pytest.approx(((2.0 + 2 * np.sqrt(2)) / 4 - 1) / 2)


def test_tsp_invalid_tour_counts_against_valid_rate(tmp_path: Path) -> None:
    tour, repeat = np.array([0, 1, 2, 3, 0]), np.array([0, 1, 1, 3, 0])
    metrics = score_files("tsp", *_files(tmp_path, [SQUARE] * 2, [tour] * 2, [tour, repeat]))
    assert metrics["valid_rate"] == 0.5 and metrics["mean_length"] == 4.0
    none_valid = score_files("tsp", *_files(tmp_path, [SQUARE], [tour], [repeat]))
    assert json_safe(none_valid)["mean_length"] is None


def test_delaunay_triangle_and_vertex_order_do_not_matter(tmp_path: Path) -> None:
    points, refs = _dataset("delaunay")
    preds = [ref.reshape(-1, 3)[::-1, ::-1].ravel() for ref in refs]
    metrics = score_files("delaunay", *_files(tmp_path, points, refs, preds))
    assert metrics == {"accuracy": 1.0, "triangle_coverage": 1.0, "count": 20}


def test_points_matching_within_print_precision(tmp_path: Path) -> None:
    points, refs = _dataset("convex_hull", 3)
    ref, pred = _files(tmp_path, points, refs, refs)
    rounded = [
        " ".join(f"{v:.6f}" for v in x.ravel()) + " output " + " ".join(str(i + 1) for i in seq)
        for x, seq in zip(points, refs, strict=True)
    ]
    pred.write_text("\n".join(rounded) + "\n")
    assert score_files("convex_hull", ref, pred)["accuracy"] == 1.0
    moved = [p.copy() for p in points]
    moved[1][2, 0] += 1e-3
    write_examples(pred, zip(moved, refs, strict=True))
    with pytest.raises(
        InputError,
        match=r"pred\.txt:2: points differ from .*ref\.txt:2: "
        r"coordinate 5",
    ):
        score_files("convex_hull", ref, pred)


@pytest.mark.parametrize(("pred_count", "line"), [(2, 3), (4, 4)])
def test_line_counts_must_match(pred_count: int, line: int, tmp_path: Path) -> None:
    points, refs = _dataset("sort", 4)
    ref, pred = _files(tmp_path, points[:3], refs[:3], refs[:3])
    write_examples(pred, zip(points[:pred_count], refs[:pred_count], strict=True))
    with pytest.raises(InputError, match=rf"pred\.txt:{line}: {pred_count} predictions for 3"):
        score_files("sort", ref, pred)


def test_unlabelled_prediction_line_is_an_error(tmp_path: Path) -> None:
    points, refs = _dataset("sort", 2)
    ref, pred = _files(tmp_path, points, refs, refs)
    pred.write_text(format_line(points[0], refs[0]) + "\n" + format_line(points[1]) + "\n")
    with pytest.raises(InputError, match=r"pred\.txt:2: no 'output' part"):
        score_files("sort", ref, pred)


@pytest.mark.parametrize(
    ("task_name", "key", "value", "shown"),
    [
        ("tsp", "mean_gap", 0.032, "3.20%"),
        ("tsp", "mean_length", 5.67891, "5.679"),
        ("tsp", "mean_gap", float("nan"), "—"),
        ("knapsack", "mean_gap", 0.0001, "0.01%"),
        ("sort", "exact_match", 1.0, "100.00%"),
        ("copy", "exact_match", 0.875, "87.50%"),
        ("copy", "p_gen_copied", 0.12345, "0.1235"),  # a probability, not a rate
        ("span", "f1", 0.7, "70.00%"),
    ],
)
def test_metric_text_shows_rates_and_gaps_in_percent(task_name, key, value, shown) -> None:
    """What training's progress and summary lines show: every task's rates and gaps in
    percent, other numbers to 4 significant digits."""
    assert metric_text(get_task(task_name), key, value) == shown


def test_every_validation_metric_is_shown_in_percent() -> None:
    """Each task picks checkpoints on a rate or a gap, so training reports it in percent."""
    from ptrnet.cli.induction import CARD
    from ptrnet.tasks import TASKS

    for task in [*TASKS.values(), CARD]:
        assert task.validation_metric in task.rate_metrics, task.name
        assert task.rate_metrics <= set(task.metric_keys), task.name
