"""What a network reads of its rows (ptrnet/model/features.py): the ``demand`` feature set of a
routing instance, and a task's own default feature set (``Task.features``) in training."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ptrnet.model import ModelConfig, build_model
from ptrnet.model.features import model_inputs
from ptrnet.tasks import POINT_TASKS, TASKS, register
from ptrnet.tasks.sort import SortTask

torch.set_num_threads(1)


def test_demand_features_read_shares_of_the_capacity_and_flag_the_depot():
    rows = torch.tensor(
        [
            [[0.5, 0.5, 0, 30], [0.1, 0.2, 3, 30], [0.9, 0.8, 9, 30]],
            [[0.2, 0.3, 0, 40], [0.7, 0.6, 8, 40], [0.0, 0.0, 0, 0]],  # padded to 3 rows
        ],
        dtype=torch.float64,
    )
    read = model_inputs(rows, "demand")
    expected = [
        [[0.5, 0.5, 0, 1], [0.1, 0.2, 0.1, 0], [0.9, 0.8, 0.3, 0]],
        [[0.2, 0.3, 0, 1], [0.7, 0.6, 0.2, 0], [0.0, 0.0, 0, 0]],
    ]
    np.testing.assert_allclose(read.numpy(), expected)
    assert not read.isnan().any()


def test_a_demand_model_reads_rows_of_four_and_is_a_pointer_with_an_lstm_or_route_decoder():
    model = build_model(ModelConfig(input_dim=4, hidden=8, features="demand"))
    rows = torch.rand(2, 5, 4)
    assert model.features(rows).shape == (2, 5, 4)
    with pytest.raises(ValueError, match="features demand read rows of 4 numbers"):
        ModelConfig(input_dim=2, features="demand")
    with pytest.raises(ValueError, match="apply to the pointer model with the lstm or route"):
        ModelConfig(input_dim=4, features="demand", kind="seq2seq", max_n=5)


class RowsTask(SortTask):
    """A toy task whose rows are (x, y, demand, capacity), read as ``demand`` by default."""

    name = "toy_rows"
    dim = 4
    features = "demand"
    shape_invariant = False

    def sample_points(self, rng, n):
        rows = rng.random((n, 4))
        rows[:, 2], rows[:, 3] = rng.integers(1, 10, n), 30
        return rows

    def solve(self, points, solver=None):
        return np.argsort(np.asarray(points)[:, 0], kind="stable")


@pytest.fixture
def rows_task():
    task = register(RowsTask())
    yield task
    TASKS.pop(task.name)
    POINT_TASKS.pop(task.name)


def test_training_reads_a_task_s_own_features_unless_told_otherwise(rows_task, cli, tmp_path):
    import json

    steps = ("--dry-run", "--workers", "0", "--threads", "1")
    assert cli("train", rows_task.name, *steps, "--out", "run")[0] == 0
    model = json.loads((tmp_path / "run" / "config.json").read_text())["model"]
    assert model["features"] == "demand" and model["input_dim"] == 4
    assert cli("train", rows_task.name, *steps, "--features", "raw", "--out", "raw")[0] == 0
    model = json.loads((tmp_path / "raw" / "config.json").read_text())["model"]
    assert model["features"] == "raw" and model["input_dim"] == 4


class DepotTask(RowsTask):
    """A toy task whose size counts its rows but the first (a depot), as routing's does."""

    name = "toy_depot"

    def sample_points(self, rng, n):
        return super().sample_points(rng, n + 1)

    def size_of(self, points):
        return len(points) - 1


def test_a_file_s_sizes_count_as_the_task_counts_them(cli, tmp_path):
    """``train --data`` without ``-n`` takes the file's sizes as the task counts them
    (:meth:`Task.size_of`): 4 rows of a depot and 3 customers are size 3."""
    import json

    task = register(DepotTask())
    try:
        assert cli("generate", task.name, "-n", "3", "--count", "6", "-o", "d.txt", "-q")[0] == 0
        first = (tmp_path / "d.txt").read_text().splitlines()[0].split("output")[0].split()
        assert len(first) == 4 * 4  # 3 customers and a depot, 4 numbers each
        steps = ("--dry-run", "--workers", "0", "--threads", "1", "--data", "d.txt")
        assert cli("train", task.name, *steps, "--out", "run")[0] == 0
        config = json.loads((tmp_path / "run" / "config.json").read_text())
        assert config["train"]["sizes"] == "3"
    finally:
        TASKS.pop(task.name)
        POINT_TASKS.pop(task.name)
