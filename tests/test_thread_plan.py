"""Re-planning torch threads while training: the load of other processes from two /proc/stat
samples (fake ones here), the planner's decisions as neighbours come and go, and the training
loop following them."""

from dataclasses import replace

import pytest
import torch

from ptrnet.model import ModelConfig
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.training import cpu
from ptrnet.training.cpu import CpuSample, ThreadPlanner, free_cores, others_busy
from ptrnet.training.loop import train

torch.set_num_threads(1)


def sample(user: int, idle: int, own_s: float) -> CpuSample:
    """Counters of /proc/stat's aggregate line: user, nice, system, idle, iowait, irq, ..."""
    return CpuSample((user, 0, 0, idle, 0, 0, 0, 0), own_s)


START = sample(1000, 5000, 10.0)


@pytest.mark.parametrize(
    ("busy", "idle", "own_s", "ranks", "workers", "others"),
    [
        (0, 200, 0.0, 1, 0, 0),  # 2 CPUs idle for 1 s
        (100, 100, 1.0, 1, 0, 0),  # one core busy, all of it this process
        (200, 0, 1.0, 1, 0, 1),  # both busy, this process on one: one neighbour
        (200, 0, 1.33, 1, 0, 1),  # two threads sharing the machine with one neighbour
        (200, 0, 2.0, 1, 0, 0),  # both busy, all of it this process
        (200, 0, 0.0, 1, 0, 2),  # both busy, this process asleep
        (200, 0, 0.5, 2, 0, 1),  # two ranks of 0.5 cores each, one neighbour
        (200, 0, 1.0, 1, 1, 0),  # the other busy core is this run's data worker
        (150, 50, 0.2, 1, 0, 1),  # 1.5 cores busy, 0.2 of them ours: 1.3 others
    ],
)
def test_others_busy_subtracts_this_run(busy, idle, own_s, ranks, workers, others):
    later = sample(1000 + busy, 5000 + idle, 10.0 + own_s)  # 200 jiffies on 2 CPUs: 1 s
    assert others_busy(START, later, cpus=2, ranks=ranks, workers=workers) == others


def test_others_busy_counts_iowait_as_idle_and_an_empty_interval_as_nothing():
    later = CpuSample((1000, 0, 0, 5000, 200, 0, 0, 0), 10.0)
    assert others_busy(START, later, cpus=2) == 0
    assert others_busy(START, START, cpus=2) == 0


@pytest.mark.parametrize(
    ("cores", "busy", "ranks", "free"), [(2, 0, 1, 2), (2, 1, 1, 1), (2, 5, 1, 1), (8, 2, 2, 3)]
)
def test_free_cores_is_a_ranks_share_and_at_least_one(cores, busy, ranks, free):
    assert free_cores(cores, busy, ranks) == free


def fake_samples(monkeypatch, samples: list[CpuSample]) -> None:
    """Make cpu_sample return ``samples`` in turn (100 Hz jiffies)."""
    feed = iter(samples)
    monkeypatch.setattr(cpu, "cpu_sample", lambda: next(feed))
    monkeypatch.setattr(cpu.os, "sysconf", lambda name: 100)
    monkeypatch.setattr(cpu.os, "cpu_count", lambda: 2)


def test_planner_follows_a_neighbour_that_comes_and_goes(monkeypatch):
    fake_samples(
        monkeypatch,
        [
            START,
            sample(1200, 5000, 12.0),  # alone on 2 threads: keep 2
            sample(1400, 5000, 13.33),  # a neighbour took 0.67 of a core: 1 thread
            sample(1600, 5000, 14.33),  # still there, beside our 1 thread: 1
            sample(1700, 5100, 15.33),  # gone: 2 again
        ],
    )
    planner = ThreadPlanner(threads=2, workers=0, fixed=False, cores=2)
    assert planner.due(1)
    threads = []
    for step in (1, 2, 3, 4):
        plan = planner.plan(step)
        assert plan[1] > step
        threads.append(planner.adopt(plan))
        assert not planner.due(step) and planner.due(plan[1])
    assert threads == [2, 1, 1, 2]


def test_planner_leaves_room_for_workers_and_splits_among_ranks(monkeypatch):
    fake_samples(monkeypatch, [START, sample(1100, 5700, 11.0)])  # 8 CPUs, 1 s, all idle
    monkeypatch.setattr(cpu.os, "cpu_count", lambda: 8)
    planner = ThreadPlanner(threads=1, workers=1, fixed=False, ranks=2, cores=8)
    # 1 core busy, no more than our 2 ranks use: 0 others; 4 cores per rank, 1 for the worker.
    assert planner.plan(10)[0] == 3


def test_a_fixed_plan_never_replans(monkeypatch):
    fake_samples(monkeypatch, [])  # any sample would raise StopIteration
    planner = ThreadPlanner(threads=2, workers=0, fixed=True, cores=2)
    assert not any(planner.due(step) for step in range(100))


def test_without_proc_stat_the_count_stays(monkeypatch):
    def missing() -> CpuSample:
        raise OSError("no /proc/stat")

    monkeypatch.setattr(cpu, "cpu_sample", missing)
    planner = ThreadPlanner(threads=2, workers=0, fixed=False, cores=2)
    assert planner.due(1) and planner.plan(1)[0] == 2


def test_training_adopts_the_plans(tmp_path, monkeypatch):
    calls = []

    def plan(self, step):
        calls.append(step)
        return 1, step + 2

    monkeypatch.setattr(ThreadPlanner, "plan", plan)
    cfg = TrainConfig(
        task="sort", sizes="4-6", steps=7, batch_size=4, val_count=8, val_every=7, workers=0
    )
    try:
        torch.set_num_threads(2)
        monkeypatch.setattr("ptrnet.training.cpu.busy_cores", lambda: 0)
        monkeypatch.setattr("ptrnet.training.cpu.available_cores", lambda: 2)
        train(RunConfig(ModelConfig(input_dim=1, hidden=16), cfg), tmp_path, progress=False)
        assert calls == [1, 3, 5, 7] and torch.get_num_threads() == 1
        calls.clear()
        fixed = RunConfig(ModelConfig(input_dim=1, hidden=16), replace(cfg, threads=2))
        train(fixed, tmp_path / "fixed", progress=False)
        assert calls == [] and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(1)
