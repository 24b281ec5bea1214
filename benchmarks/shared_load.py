"""Training speed when the machine is shared: ptrnet's whole training loop beside busy neighbours.

``python benchmarks/bench_speed.py --load 0,1`` runs this table (alone with ``--only-load``).
For each count L of busy-loop neighbour processes (started and stopped by the benchmark, each
``python -c "while True: pass"``, so the load it measures under is known), the variants below
run round by round, interleaved, and the table gives the median of the rounds:

* ``ref 1t`` / ``ref 2t``: the reference's plain step loop (benchmarks/reference_ptrnet.py,
  fp32, ``train_step`` on one ready batch) on 1 and 2 torch threads;
* ``step 1t`` / ``step 2t``: the same loop with ptrnet's model in ``--precision``;
* ``train``: ``ptrnet.training.loop.train`` itself, as ``ptrnet train`` runs it: the automatic
  thread and worker plan, fresh data labelled by exact solvers, the examples/s it reports
  (step time, the final validation excluded); ``train late``: the same, but the neighbours start
  one second after the run does, after its start-up plan; ``late fixed``: the same with the
  thread count of the start-up plan kept for the whole run (the behaviour before
  :class:`ptrnet.training.cpu.ThreadPlanner`; the planner is switched off for this variant);
  ``train 1w``: one data worker;
* ``label ms``: building and labelling one batch in this process (a pool of 8, per batch).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable

import torch
from reference_ptrnet import ReferencePointerNetwork

import ptrnet.training.loop as loop_module
from ptrnet.datasets.batching import Batch
from ptrnet.model import ModelConfig, build_model
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.tasks import get_task
from ptrnet.training.cpu import ThreadPlanner
from ptrnet.training.data import TrainingData
from ptrnet.training.loop import build_optimizer, train, train_step

LOAD_HEADER = (
    "neighbours",
    "ref 1t ex/s",
    "ref 2t ex/s",
    "step 1t ex/s",
    "step 2t ex/s",
    "train ex/s",
    "train late ex/s",
    "late fixed ex/s",
    "train 1w ex/s",
    "label ms/batch",
    "train vs ref 1t",
)
STEP_LOOP, TRAIN_STEPS, LATE_S = 8, 24, 1.0


class Neighbours:
    """``count`` busy-loop processes, started and stopped on demand."""

    def __init__(self, count: int) -> None:
        self.count, self.procs = count, []

    def start(self) -> None:
        if not self.procs:
            code = "while True: pass"
            self.procs = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(self.count)]

    def stop(self) -> None:
        for proc in self.procs:
            proc.kill()
            proc.wait()
        self.procs = []


def step_loop(model: torch.nn.Module, batch: Batch, precision: str, threads: int) -> float:
    """Examples/s of ``STEP_LOOP`` steps of ``train_step`` on one batch (after one warm-up)."""
    torch.set_num_threads(threads)
    cfg = TrainConfig(task="tsp", sizes="5", steps=1, lr=1e-4, precision=precision)
    optimizer = build_optimizer(model, cfg)
    train_step(model, optimizer, batch, cfg, 0)
    start = time.perf_counter()
    for _ in range(STEP_LOOP):
        train_step(model, optimizer, batch, cfg, 0)
    return batch.size * STEP_LOOP / (time.perf_counter() - start)


def run_config(task: str, n: int, d: int, precision: str, workers: int | None) -> RunConfig:
    train_cfg = TrainConfig(
        task=task,
        sizes=str(n),
        steps=TRAIN_STEPS,
        val_count=32,
        val_every=TRAIN_STEPS,
        log_every=TRAIN_STEPS,
        precision=precision,
        workers=workers,
    )
    return RunConfig(ModelConfig(hidden=d), train_cfg)


class StartupPlanOnly(ThreadPlanner):
    """A planner that never re-plans: the start-up plan for the whole run."""

    def due(self, step: int) -> bool:
        return False


def train_loop(config: RunConfig, late: Neighbours | None = None, replan: bool = True) -> float:
    """Examples/s that ``train`` reports for ``config``; with ``late``, those neighbours are
    stopped first and started ``LATE_S`` seconds into the run; ``replan=False`` keeps the
    start-up thread plan."""
    loop_module.ThreadPlanner = ThreadPlanner if replan else StartupPlanOnly
    timer = None
    if late is not None:
        late.stop()
        timer = threading.Timer(LATE_S, late.start)
        timer.start()
    try:
        with tempfile.TemporaryDirectory() as out:
            return train(config, out, progress=False).examples_per_s
    finally:
        if timer is not None:
            timer.join()


def label_ms(task: str, n: int, rounds: list[int]) -> float:
    """Milliseconds to build and label one batch in this process (a fresh pool per call)."""
    cfg = TrainConfig(task=task, sizes=str(n), steps=10**6)
    data = TrainingData(get_task(task), cfg, [])
    step = cfg.bucket_pool * (1 + len(rounds))
    rounds.append(step)
    start = time.perf_counter()
    data.batch(step)
    return (time.perf_counter() - start) * 1e3 / cfg.bucket_pool


def load_row(
    task: str, n: int, d: int, batch: Batch, load: int, rounds: int, precision: str
) -> list:
    """One row of the table: the variants beside ``load`` neighbours, medians of ``rounds``."""
    torch.manual_seed(0)
    model = build_model(ModelConfig(hidden=d))
    ref = ReferencePointerNetwork.from_model(model)
    neighbours, label_rounds = Neighbours(load), []
    fns: dict[str, Callable[[], float]] = {
        "ref1": lambda: step_loop(ref, batch, "fp32", 1),
        "ref2": lambda: step_loop(ref, batch, "fp32", 2),
        "step1": lambda: step_loop(model, batch, precision, 1),
        "step2": lambda: step_loop(model, batch, precision, 2),
        "train": lambda: train_loop(run_config(task, n, d, precision, None)),
        "late": lambda: train_loop(run_config(task, n, d, precision, None), neighbours),
        "fixed": lambda: train_loop(run_config(task, n, d, precision, None), neighbours, False),
        "worker": lambda: train_loop(run_config(task, n, d, precision, 1)),
        "label": lambda: label_ms(task, n, label_rounds),
    }
    if load == 0:
        for name in ("late", "fixed"):
            fns.pop(name)
    got: dict[str, list[float]] = {name: [] for name in fns}
    neighbours.start()
    try:
        time.sleep(0.5)
        for _ in range(rounds):
            for name, fn in fns.items():
                got[name].append(fn())
    finally:
        neighbours.stop()
    med = {name: statistics.median(values) for name, values in got.items()}
    cells = [f"{med[k]:.0f}" if k in med else "" for k in ("ref1", "ref2", "step1", "step2")]
    cells += [f"{med[k]:.0f}" if k in med else "" for k in ("train", "late", "fixed", "worker")]
    return [load, *cells, f"{med['label']:.0f}", f"{med['train'] / med['ref1']:.2f}x"]
