"""Training a knapsack model over a range of capacities: ``ptrnet train --capacity`` and
``ptrnet.train(capacity=...)`` build the same run (a model that reads the capacity, every
generated instance stating one drawn from the range), with the same one-line refusals; the
shares drawn are checked against the range they were drawn from."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

import ptrnet
from ptrnet.io.paper_format import read_examples
from ptrnet.runs.config import TrainConfig
from ptrnet.tasks import SizeRange, get_task
from ptrnet.tasks.knapsack import stated_capacity

torch.set_num_threads(1)
KNAPSACK = get_task("knapsack")
TINY = {"hidden": 16, "steps": 2, "batch_size": 8, "val_count": 8, "val_every": 2}


def shares(instances) -> np.ndarray:
    """Each instance's stated capacity over its total weight (float32 weights, as counted)."""
    return np.array(
        [
            stated_capacity(x) / math.fsum(x[:, 0].astype(np.float32).astype(np.float64))
            for x in instances
        ]
    )


def in_range(values: np.ndarray, lo: float, hi: float) -> bool:
    """Within [lo, hi], allowing the float32 rounding a capacity counts with (2**-23)."""
    return bool(((values >= lo * (1 - 2**-22)) & (values <= hi * (1 + 2**-22))).all())


def test_a_run_with_a_capacity_range_generates_instances_stating_one():
    cfg = TrainConfig(task="knapsack", sizes="20", steps=1, capacity="10%-50%")
    instances = cfg.generating_task().generate(SizeRange(20, 20), 200, seed=3)
    drawn = shares(instances)
    assert all(x.shape == (20, 3) for x in instances)
    assert in_range(drawn, 0.1, 0.5) and drawn.min() < 0.15 and drawn.max() > 0.45  # spread
    plain = TrainConfig(task="knapsack", sizes="20", steps=1).generating_task()
    assert [x.shape for x in plain.generate(SizeRange(20, 20), 3, seed=3)] == [(20, 2)] * 3
    assert TrainConfig(task="knapsack", sizes="5", steps=1, capacity=2.5).capacity == "2.5"


def test_the_api_and_the_command_train_the_same_capacity_run(cli, tmp_path):
    api_run = ptrnet.train(
        "knapsack", sizes="6", capacity="10%-50%", out=tmp_path / "api", seed=4, **TINY
    )
    args = [f"--{k.replace('_', '-')}={v}" for k, v in TINY.items()]
    status, _, err = cli(
        "train", "knapsack", "-n", "6", "--capacity", "10%-50%", "--seed", "4", *args,
        "--workers", "0", "--out", "cli",
    )  # fmt: skip
    assert status == 0, err
    configs = [json.loads((tmp_path / d / "config.json").read_text()) for d in ("api", "cli")]
    for config in configs:
        assert config["train"]["capacity"] == "10%-50%"
        assert config["model"]["features"] == "capacity" and config["model"]["input_dim"] == 3
    for key in ("model", "train"):
        a, c = configs[0][key], configs[1][key]
        assert {k: v for k, v in a.items() if k not in ("workers", "threads")} == {
            k: v for k, v in c.items() if k not in ("workers", "threads")
        }
    solver = ptrnet.load(api_run)
    items = np.random.default_rng(5).random((6, 2))
    result = solver.solve(items, capacity="30%")
    assert result.valid and items[result.sequence, 0].sum() <= 0.3 * items[:, 0].sum() + 1e-6


def test_the_api_states_a_drawn_capacity_on_array_data(tmp_path):
    rng = np.random.default_rng(6)
    items = [rng.random((7, 2)) for _ in range(24)]
    run = ptrnet.train(
        "knapsack", items, val_data=items[:6], capacity="20%-40%", out=tmp_path / "r", **TINY
    )
    for name in ("train-data.txt", "val-data.txt"):
        written = [ex.points for ex in read_examples(tmp_path / "r" / name, KNAPSACK, "optional")]
        assert in_range(shares(written), 0.2, 0.4)
        assert all(np.array_equal(x[:, :2], i) for x, i in zip(written, items, strict=False))
    assert ptrnet.load(run).solve(items[0], capacity=1.0).valid


@pytest.mark.parametrize(
    ("task", "options", "problem"),
    [
        ("tsp", {"capacity": "30%"}, "capacity: task tsp has no capacity (knapsack has)"),
        ("knapsack", {"capacity": "0"}, "capacity: '0': a knapsack capacity is a finite number"),
        ("knapsack", {"capacity": "5%-200%"}, "a share of the total weight lies in (0%, 100%]"),
        ("knapsack", {"capacity": [0.5]}, "capacity: expected a number or a text"),
        ("knapsack", {"capacity": "30%", "features": "raw"}, "the model must read it"),
    ],
)
def test_the_api_refuses_a_capacity_in_one_line(tmp_path, task, options, problem):
    with pytest.raises(ValueError) as err:
        ptrnet.train(task, sizes="6", out=tmp_path / "r", **options, **TINY)
    assert problem in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (("tsp", "--capacity", "30%"), "capacity: task tsp has no capacity (knapsack has)"),
        (("knapsack", "--capacity", "0"), "argument --capacity: '0': a knapsack capacity"),
        (("knapsack", "--capacity", "30%", "--features", "raw"), "the model must read it"),
        (
            ("knapsack", "--capacity", "30%", "--data", "c.txt", "--val-data", "c.txt"),
            "--capacity applies only with generated data or validation",
        ),
    ],
)
def test_the_command_refuses_a_capacity_in_one_line(cli, tmp_path, capsys, argv, problem):
    (tmp_path / "c.txt").write_text("0.5 0.5 0.2 0.1 capacity 0.3\n0.4 0.2 0.3 0.9 capacity 0.5\n")
    try:
        status, _, err = cli("train", *argv, "-n", "6", "--dry-run", "--out", "r")
    except SystemExit as exit_:
        status, err = exit_.code, capsys.readouterr().err
    assert status != 0 and problem in err and len(err.strip().splitlines()) == 1, err
