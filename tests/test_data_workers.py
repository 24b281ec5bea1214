"""Training speed options: batches built ahead in worker processes (same data for any worker
count), the split of cores between torch threads and workers, precision and early stopping."""

import os

import numpy as np
import pytest
import torch

from ptrnet.io.errors import InputError
from ptrnet.model import ModelConfig
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.tasks import get_task
from ptrnet.training.cpu import busy_cores, cpu_plan
from ptrnet.training.data import TrainingData
from ptrnet.training.loop import train

torch.set_num_threads(1)


def small(**changes) -> TrainConfig:
    base = {"task": "convex_hull", "sizes": "4-9", "steps": 11, "batch_size": 4, "val_count": 8}
    return TrainConfig(**{**base, "bucket_pool": 3, **changes})


def same(a, b) -> bool:
    return torch.equal(a.points, b.points) and torch.equal(a.targets, b.targets)


@pytest.mark.parametrize("workers", [0, 1, 2])
@pytest.mark.parametrize("changes", [{}, {"bucket": True}, {"steps": None, "epochs": 2}])
def test_batches_equal_batch_per_step_for_any_worker_count(workers, changes):
    cfg = small(**{"epoch_size": 20, **changes})
    data = TrainingData(get_task(cfg.task), cfg, [])
    want = [data.batch(step) for step in range(data.total_steps())]
    for start in (0, 4, len(want) - 1, len(want)):
        got = list(TrainingData(get_task(cfg.task), cfg, []).batches(start, workers))
        assert len(got) == len(want) - start
        assert all(same(a, b) for a, b in zip(got, want[start:], strict=True))


@pytest.mark.parametrize(
    ("threads", "workers", "cores", "busy", "plan"),
    [
        (None, None, 2, 0, (2, 0)),  # two idle cores: no worker takes a core from the step
        (None, None, 8, 0, (6, 2)),
        (None, None, 2, 1, (1, 0)),  # another job keeps a core busy: one torch thread
        (None, None, 2, 5, (1, 0)),  # always at least one thread
        (None, None, 8, 3, (4, 1)),
        (3, None, 8, 0, (3, 2)),
        (None, 1, 2, 0, (1, 1)),
        (None, 4, 2, 0, (1, 4)),
        (2, 0, 2, 3, (2, 0)),  # explicit values are kept
    ],
)
def test_cpu_plan_never_oversubscribes_by_default(threads, workers, cores, busy, plan):
    assert cpu_plan(threads, workers, cores, busy) == plan


def test_busy_cores_is_a_core_count():
    assert 0 <= busy_cores(0.05) <= (os.cpu_count() or 1)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"workers": -1}, "workers"),
        ({"workers": 1.5}, "workers"),
        ({"workers": 10**20}, "workers must be an integer in 0..4096"),
        ({"threads": 3 * 10**9}, "threads must be at most 4,096"),
        ({"batch_size": 10**20}, "batch_size must be at most 1,048,576"),
        ({"precision": "fp8"}, "precision"),
    ],
)
def test_config_rejects_bad_speed_options(changes, message):
    with pytest.raises(ValueError, match=message):
        small(**changes)


def run_config(**changes) -> RunConfig:
    cfg = small(task="sort", sizes="4-6", steps=6, val_every=2, threads=1, **changes)
    return RunConfig(ModelConfig(input_dim=1, hidden=16), cfg)


def test_training_is_the_same_with_a_worker_and_stops_when_the_hook_says(tmp_path):
    inline = train(run_config(workers=0, precision="fp32"), tmp_path / "a", progress=False)
    ahead = train(run_config(workers=1, precision="fp32"), tmp_path / "b", progress=False)
    assert inline.best == ahead.best and inline.step == ahead.step == 6
    steps = []
    stopped = train(
        run_config(workers=1),
        tmp_path / "c",
        progress=False,
        on_validation=lambda trainer, metrics: steps.append(trainer.step) or True,
    )
    assert stopped.step == 2 and steps == [2]


def test_decoding_commands_take_the_idle_cores_unless_told(monkeypatch):
    from ptrnet.cli.common import set_threads
    from ptrnet.training.cpu import IdleCores

    before = torch.get_num_threads()
    try:
        monkeypatch.setattr("ptrnet.training.cpu._IDLE", IdleCores())  # a command's start
        monkeypatch.setattr("ptrnet.training.cpu.busy_cores", lambda s: 64)  # all cores busy
        set_threads(None)
        assert torch.get_num_threads() == 1
        set_threads(2)
        assert torch.get_num_threads() == 2
        monkeypatch.setattr("ptrnet.training.cpu._IDLE", IdleCores())
        monkeypatch.setattr("ptrnet.training.cpu.busy_cores", lambda s: 0)
        monkeypatch.setattr("ptrnet.training.cpu.available_cores", lambda: 2)
        set_threads(None)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def write_hull_file(path, rng, good: int, collinear: int) -> str:
    """A paper-format hull file, unlabelled: ``good`` random instances of 6 points, then
    ``collinear`` instances whose points lie on one line (no hull exists)."""
    lines = []
    for _ in range(good):
        lines.append(" ".join(f"{v:.6f}" for v in rng.random(12)))
    line = np.linspace(0.1, 0.9, 6)
    for _ in range(collinear):
        lines.append(" ".join(f"{v:.6f}" for v in np.c_[line, line].ravel()))
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.mark.parametrize("workers", [0, 1])
def test_degenerate_file_instances_are_dropped_and_their_pool_still_has_every_step(
    tmp_path, workers
):
    data_file = write_hull_file(tmp_path / "d.txt", np.random.default_rng(0), 4, 4)
    cfg = small(sizes="6", data=data_file, batch_size=2, steps=8, bucket_pool=4)
    data = TrainingData(get_task(cfg.task), cfg, [])
    batches = list(data.batches(0, workers))
    assert len(batches) == 8  # 2 real batches in each pool of 4 steps, taken in turn
    for batch in batches:
        assert batch.points.shape == (2, 6, 2) and batch.targets is not None
        assert not np.allclose(batch.points[:, :, 0], batch.points[:, :, 1])  # none collinear


def test_a_pool_of_degenerate_instances_only_is_an_error_naming_the_file(tmp_path):
    data_file = write_hull_file(tmp_path / "d.txt", np.random.default_rng(0), 0, 8)
    cfg = small(sizes="6", data=data_file, batch_size=2, steps=4, bucket_pool=4)
    with pytest.raises(InputError, match=r"d\.txt: no instance .* has a solution"):
        TrainingData(get_task(cfg.task), cfg, []).batch(0)
