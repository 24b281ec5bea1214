"""Training and validation data (ptrnet/training/data.py): file labels read in the label form
whatever form the file holds, and a validation file of the run's own training instances
refused."""

import numpy as np
import pytest
import torch

from ptrnet.io.errors import InputError
from ptrnet.io.paper_format import write_examples
from ptrnet.runs.config import TrainConfig
from ptrnet.tasks import SizeRange, get_task
from ptrnet.training.data import TrainingData, validation_set

torch.set_num_threads(1)


def other_forms(task_name: str, points: np.ndarray, label: np.ndarray) -> np.ndarray:
    """An equivalent but non-canonical form of a correct label (what files from elsewhere
    hold: the paper's TSP-5 file runs half its tours clockwise)."""
    if task_name == "tsp":  # clockwise, from the same city 0
        return np.append(label[:1], label[-2::-1])
    if task_name == "convex_hull":  # clockwise, from another vertex
        cycle = label[:-1][::-1]
        cycle = np.roll(cycle, 1)
        return np.append(cycle, cycle[0])
    if task_name == "delaunay":  # triangles in reverse order, corners rotated
        triples = label.reshape(-1, 3)[::-1]
        return np.roll(triples, 1, axis=1).reshape(-1)
    raise ValueError(task_name)


@pytest.mark.parametrize(
    "name, sizes", [("tsp", "5-7"), ("convex_hull", "5-9"), ("delaunay", "5-7")]
)
def test_file_labels_train_in_the_label_form_whatever_form_the_file_holds(tmp_path, name, sizes):
    task = get_task(name)
    points = task.generate(SizeRange.parse(sizes), 8, seed=12)
    labels = [task.solve(p) for p in points]
    others = [other_forms(name, p, s) for p, s in zip(points, labels, strict=True)]
    assert all(not np.array_equal(a, b) for a, b in zip(labels, others, strict=True))
    path = tmp_path / "train.txt"
    write_examples(path, zip(points, others, strict=True))
    for constraints in ("none", "task"):
        cfg = TrainConfig(
            task=name, sizes=sizes, data=str(path), labels="file", steps=2, batch_size=4,
            val_count=4, train_constraints=constraints,
        )  # fmt: skip
        data = TrainingData(task, cfg, [])
        seen = {}
        for step in range(2):
            batch = data.batch(step)
            for p, n, target in zip(batch.points, batch.lengths, batch.targets, strict=True):
                real = target[target >= 0].numpy()
                assert real[-1] == 0  # the end token once, last
                seen[p[:n].numpy().tobytes()] = real[:-1] - 1
        assert len(seen) == len(points)
        for p, label in zip(points, labels, strict=True):
            assert np.array_equal(seen[p.astype(np.float32).tobytes()], label)


def test_validation_file_labels_are_read_in_the_label_form(tmp_path):
    task = get_task("tsp")
    points = task.generate(SizeRange.parse("5-7"), 6, seed=13)
    labels = [task.solve(p) for p in points]
    path = tmp_path / "val.txt"
    pairs = zip(points, labels, strict=True)
    write_examples(path, [(p, other_forms("tsp", p, s)) for p, s in pairs])
    cfg = TrainConfig(task="tsp", sizes="5-7", steps=1, val_data=str(path))
    _, refs = validation_set(task, cfg)
    assert all(np.array_equal(a, b) for a, b in zip(refs, labels, strict=True))


@pytest.mark.parametrize("objective", ["likelihood", "reinforce"])
def test_a_validation_file_of_the_runs_own_generated_instances_is_refused(tmp_path, objective):
    # `ptrnet generate --seed S` writes stream 0, the very instances a run seeded S trains on:
    # validating on that file would be validating on training data, a trap of earlier
    # implementations.
    task = get_task("tsp")
    sizes = SizeRange.parse("5-7")
    path = tmp_path / "val.txt"
    cfg = TrainConfig(
        task="tsp", sizes="5-7", steps=3, batch_size=4, val_data=str(path), seed=7,
        objective=objective,
    )  # fmt: skip
    for stream, start in ((0, 0), (0, 9)):  # the whole file, or a later block (a shard)
        points = task.generate(sizes, 5, cfg.seed, stream, start)
        write_examples(path, [(p, task.solve(p)) for p in points])
        val_points, _ = validation_set(task, cfg)
        with pytest.raises(InputError, match=r"val.txt:1: instance is training instance"):
            TrainingData(task, cfg, val_points)
    # Another stream, or the same stream under another seed, is fine.
    for seed, stream in ((7, 1), (8, 0)):
        points = task.generate(sizes, 5, seed, stream)
        write_examples(path, [(p, task.solve(p)) for p in points])
        val_points, _ = validation_set(task, cfg)
        TrainingData(task, cfg, val_points).batch(0)
