"""Training augmentation: every view's label equals what the solvers say for the new view."""

import numpy as np
import pytest
import torch

from ptrnet.io.paper_format import write_examples
from ptrnet.runs.config import TrainConfig
from ptrnet.solvers.tsp import tour_length
from ptrnet.tasks import SizeRange, get_task
from ptrnet.tasks.symmetry import SQUARE_SYMMETRIES, square_symmetry
from ptrnet.training.augment import augment
from ptrnet.training.data import TrainingData

torch.set_num_threads(1)


def test_the_eight_square_symmetries_are_distinct_isometries_of_the_square():
    points = np.random.default_rng(0).random((6, 2))
    views = [square_symmetry(points, k) for k in range(SQUARE_SYMMETRIES)]
    assert np.array_equal(views[0], points)
    assert len({v.tobytes() for v in views}) == SQUARE_SYMMETRIES
    distances = np.linalg.norm(points[:, None] - points[None], axis=-1)
    for view in views:
        assert ((view >= 0) & (view <= 1)).all()
        assert np.allclose(np.linalg.norm(view[:, None] - view[None], axis=-1), distances)
    with pytest.raises(ValueError, match="0..7"):
        square_symmetry(points, 8)


def with_duplicates(points: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Copy two points over others so the duplicate conventions get exercised too."""
    points = points.copy()
    points[rng.integers(len(points), size=2)] = points[rng.integers(len(points), size=2)]
    return points


@pytest.mark.parametrize(
    "name, sizes", [("sort", "1-12"), ("convex_hull", "4-30"), ("delaunay", "4-15")]
)
def test_an_augmented_label_is_the_solvers_label_of_the_augmented_instance(name, sizes):
    task, rng = get_task(name), np.random.default_rng(1)
    for i, points in enumerate(task.generate(SizeRange.parse(sizes), 200, seed=3)):
        if i % 4 == 0:
            points = with_duplicates(points, rng)
        label = task.solve(points)
        for _ in range(3):
            view, view_label = augment(task, points, label, rng)
            assert len(view) == len(points)
            assert np.array_equal(view_label, task.solve(view))


def test_an_augmented_tsp_label_is_the_exact_optimum_of_the_augmented_instance():
    task, rng = get_task("tsp"), np.random.default_rng(2)
    for points in task.generate(SizeRange.parse("4-9"), 80, seed=4):
        label = task.solve(points, "exact")
        view, view_label = augment(task, points, label, rng)
        assert task.is_valid(view, view_label)
        assert tour_length(view, view_label) == pytest.approx(tour_length(points, label))
        # Random points have a single optimal tour, so the labels agree exactly.
        assert np.array_equal(view_label, task.solve(view, "exact"))


def test_the_view_changes_the_input_order_and_keeps_the_instance():
    task = get_task("sort")
    points = np.random.default_rng(5).random((9, 1))
    views = [augment(task, points, task.solve(points), np.random.default_rng(s)) for s in range(5)]
    for view, _ in views:
        assert sorted(view[:, 0]) == sorted(points[:, 0])  # sort is not reflected
    assert len({view.tobytes() for view, _ in views}) > 1


def test_augmented_file_data_is_a_pure_function_of_the_step_and_changes_per_epoch(tmp_path):
    task = get_task("tsp")
    points = task.generate(SizeRange.parse("5-7"), 8, seed=11)
    path = tmp_path / "train.txt"
    write_examples(path, [(p, task.solve(p)) for p in points])
    cfg = TrainConfig(
        task="tsp", sizes="5-7", data=str(path), labels="file", augment=True, epochs=2,
        batch_size=4, val_count=4, seed=1,
    )  # fmt: skip
    a, b = TrainingData(task, cfg, []), TrainingData(task, cfg, [])
    for step in (3, 0, 2, 1):
        x, y = a.batch(step), b.batch(step)
        assert torch.equal(x.points, y.points) and torch.equal(x.targets, y.targets)
    lengths = []
    for step in range(4):
        batch = a.batch(step)
        for p, n, target in zip(batch.points, batch.lengths, batch.targets, strict=True):
            view = p[:n].double().numpy()
            seq = target[: n + 1].numpy() - 1
            assert np.array_equal(seq, task.solve(view))  # float32 views: still the optimum
            lengths.append(round(tour_length(view, seq), 4))
    # Both epochs show all eight instances (same optimal lengths), in different views.
    assert sorted(lengths[:8]) == sorted(lengths[8:])
    first = {a.batch(s).points.numpy().tobytes() for s in range(2)}
    assert not first & {a.batch(s).points.numpy().tobytes() for s in range(2, 4)}


def test_augment_must_be_a_boolean():
    with pytest.raises(ValueError, match="augment must be true or false"):
        TrainConfig(task="sort", sizes="5", steps=1, augment="yes")


def test_canonical_folds_every_equivalent_form_into_the_label():
    rng = np.random.default_rng(7)
    points = rng.random((9, 2))
    for name in ("convex_hull", "tsp"):
        task = get_task(name)
        label = task.solve(points)
        cycle = label[:-1]
        for start in range(len(cycle)):
            for form in (np.roll(cycle, start), np.roll(cycle[::-1], start)):
                assert np.array_equal(task.canonical(points, form), label)
    delaunay = get_task("delaunay")
    label = delaunay.solve(points)
    triples = label.reshape(-1, 3)[rng.permutation(len(label) // 3)]
    shuffled = np.array([rng.permutation(t) for t in triples]).reshape(-1)
    assert np.array_equal(delaunay.canonical(points, shuffled), label)
    ties = np.array([[0.5], [0.2], [0.5], [0.2]])
    assert get_task("sort").canonical(ties, np.array([3, 1, 2, 0])).tolist() == [1, 3, 0, 2]
