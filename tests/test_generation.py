"""Dataset generation: per-instance determinism, worker-count independence, sharding, redraws."""

from __future__ import annotations

import numpy as np
import pytest

from ptrnet.datasets.generation import generate_dataset, labelled_instance, shard_range
from ptrnet.tasks import POINT_TASKS, SizeRange, get_task
from ptrnet.tasks.convex_hull import ConvexHullTask


def _as_lists(data) -> list[tuple[list, list]]:
    return [(x.tolist(), seq.tolist()) for x, seq in data]


@pytest.mark.parametrize("task_name", POINT_TASKS)
def test_instances_are_task_generate_and_task_solve(task_name: str) -> None:
    task = get_task(task_name)
    sizes = SizeRange(max(task.min_n, 4), 8)
    data = list(generate_dataset(task_name, sizes, 12, seed=5, workers=1))
    points = task.generate(sizes, 12, seed=5)
    assert len(data) == 12
    for (x, seq), expected in zip(data, points, strict=True):
        assert np.array_equal(x, expected) and np.array_equal(seq, task.solve(expected))


def test_worker_count_does_not_change_the_data() -> None:
    one = _as_lists(generate_dataset("convex_hull", "5-10", 40, seed=1, workers=1))
    two = _as_lists(generate_dataset("convex_hull", "5-10", 40, seed=1, workers=2))
    assert one == two


@pytest.mark.parametrize("count", [10, 11, 2])
def test_shards_concatenate_to_the_whole(count: int) -> None:
    whole = _as_lists(generate_dataset("sort", "3-6", count, seed=2, workers=1))
    parts = [
        _as_lists(generate_dataset("sort", "3-6", count, seed=2, workers=1, shard=(i, 3)))
        for i in (1, 2, 3)
    ]
    assert sum(parts, []) == whole


def test_shard_range_blocks() -> None:
    assert [shard_range(10, (i, 3)) for i in (1, 2, 3)] == [range(0, 3), range(3, 6), range(6, 10)]
    assert shard_range(5) == range(5)
    with pytest.raises(ValueError, match="1 <= I <= K"):
        shard_range(10, (4, 3))


def test_streams_and_seeds_give_different_data() -> None:
    base = _as_lists(generate_dataset("sort", 5, 3, seed=0, workers=1))
    assert base != _as_lists(generate_dataset("sort", 5, 3, seed=0, workers=1, stream=1))
    assert base != _as_lists(generate_dataset("sort", 5, 3, seed=1, workers=1))


class _CollinearFirst(ConvexHullTask):
    """A hull task whose first draw of every instance is degenerate (all points collinear)."""

    def generate(self, sizes, count, seed, stream=0, start=0):
        return [np.column_stack([np.linspace(0, 1, 5)] * 2)] * count


class _AlwaysCollinear(_CollinearFirst):
    def sample_points(self, rng, n):
        return np.column_stack([rng.random(n)] * 2)


def test_degenerate_instance_is_redrawn_from_its_sub_stream() -> None:
    task, sizes = _CollinearFirst(), SizeRange(5, 9)
    points, seq = labelled_instance(task, sizes, seed=7, index=3)
    rng = np.random.default_rng([7, 0, 3, 1])
    assert np.array_equal(points, rng.random((sizes.sample(rng), 2)))
    assert np.array_equal(seq, task.solve(points))
    again, _ = labelled_instance(task, sizes, seed=7, index=3)
    assert np.array_equal(points, again)


def test_always_degenerate_gives_up() -> None:
    with pytest.raises(RuntimeError, match="degenerate draws"):
        labelled_instance(_AlwaysCollinear(), SizeRange(5, 5), seed=0, index=0)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"task": "hull"}, "unknown task"),
        ({"solver": "nope"}, "unknown solver"),
        ({"sizes": "2"}, "needs n >= 3"),
        ({"workers": -1}, "workers"),
    ],
)
def test_bad_arguments_raise_before_any_work(kwargs: dict, words: str) -> None:
    args = {"task": "convex_hull", "sizes": "5", "count": 3, "seed": 0, **kwargs}
    with pytest.raises(ValueError, match=words):
        generate_dataset(**args)
