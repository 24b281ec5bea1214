"""Wall-clock time from scratch to the paper's quality, with ptrnet's own training loop.

Usage: ``python benchmarks/bench_time_to_quality.py [--task tsp|convex_hull|both]
[--minutes M] [--compare-precision STEPS] [--quick]``

Targets (the paper's Table 1 and its TSP table):

* TSP n = 10: mean tour length <= 2.88 (the paper's Ptr-Net; optimal is about 2.87), decoded
  with beam search (width 5, restricted to valid tours, most likely beam) on a fixed test set.
* Convex hull n = 5: accuracy >= 92% (the paper's Ptr-Net trained on 5-50 and tested at 5),
  unconstrained greedy decoding, as in the paper.

A run is :func:`ptrnet.training.loop.train` on fresh generated data at one size, with the
recipe's defaults (Adam 1e-3, decay 0.96 per 1000 steps, batch 128, clipping 2.0, hidden 256,
precision ``auto``). The test set is the run's validation set: instances of the validation
stream under seed 0, labelled exactly, disjoint from the training data. Every ``--eval-every``
steps the loop decodes it; the run stops at the target or after ``--minutes``. Reported: the
wall-clock minutes at which the target was met (data generation, worker start-up and every
evaluation included) and the training-only minutes.

``--compare-precision STEPS`` instead trains each task for STEPS steps in fp32 and in bf16
(``--seeds`` seeds each, same data) and prints the decoded quality of each, so the effect of
bf16 can be read against the seed-to-seed spread.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ptrnet.compute.precision import resolve_precision
from ptrnet.datasets.batching import collate
from ptrnet.decoding.beam import Reranker
from ptrnet.decoding.decode import decode
from ptrnet.decoding.options import DecodeOptions
from ptrnet.model import ModelConfig
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.solvers.tsp import tour_length
from ptrnet.training.cpu import cpu_plan
from ptrnet.training.loop import Trainer, train


@dataclass(frozen=True)
class Target:
    """A task, its training size, the decoded metric and the value that counts as reached."""

    task: str
    sizes: str
    metric: str
    goal: float
    lower_is_better: bool
    strategy: str

    def reached(self, value: float) -> bool:
        return value <= self.goal if self.lower_is_better else value >= self.goal


TARGETS = {
    "tsp": Target("tsp", "10", "mean_length", 2.88, True, "beam"),
    "convex_hull": Target("convex_hull", "5", "accuracy", 0.92, False, "greedy"),
}
BEAM_WIDTH, EVAL_BATCH = 5, 512
TEST_COUNT = {"tsp": 10_000, "convex_hull": 2_000}


def run_config(target: Target, args: argparse.Namespace, **changes: object) -> RunConfig:
    """The run for ``target`` from the command line; ``changes`` override TrainConfig fields."""
    options = {
        "task": target.task,
        "sizes": target.sizes,
        "steps": args.max_steps,
        "val_count": args.test_count or TEST_COUNT[target.task],
        "val_every": args.eval_every,
        "log_every": args.eval_every,
        "threads": args.threads,
        "workers": args.workers,
        "lr": args.lr,
        "decay": args.decay,
        "decay_every": args.decay_every,
    }
    return RunConfig(ModelConfig(hidden=args.hidden), TrainConfig(**{**options, **changes}))


def beam_mean_length(trainer: Trainer, rerank: Reranker | None) -> float:
    """Mean tour length of beam search (valid tours only) on the test set: the most likely
    beam, or with ``rerank`` the shortest of the beams' finished tours."""
    points, refs, preds = trainer.val_points, trainer.val_refs, []
    trainer.model.eval()
    for lo in range(0, len(points), EVAL_BATCH):
        batch = collate(points[lo : lo + EVAL_BATCH])
        result = decode(
            trainer.model,
            trainer.task,
            batch,
            DecodeOptions("beam", constraints="task", beam_width=BEAM_WIDTH),
            rerank=rerank,
        )
        preds += result.sequences
    trainer.model.train()
    return float(trainer.task.metrics(points, refs, preds)["mean_length"])


def test_metrics(trainer: Trainer, target: Target, metrics: dict) -> dict[str, float]:
    """The target's metric per decoding: the loop's greedy validation, and for TSP beam search
    (first key: the one the target is judged on)."""
    if target.strategy == "greedy":
        return {"greedy": float(metrics[target.metric])}
    return {
        "beam": beam_mean_length(trainer, None),
        "shortest of beams": beam_mean_length(trainer, tour_length),
        "greedy": float(metrics[target.metric]),
    }


class Progress:
    """The validation hook: logs each evaluation, notes when each decoding first meets the
    target, and ends the run when the first one does or at the deadline."""

    def __init__(self, target: Target, minutes: float) -> None:
        self.target, self.start, self.limit = target, time.perf_counter(), minutes * 60
        self.reached: dict[str, tuple[float, int, float]] = {}  # decoding -> (min, step, value)
        self.last: dict[str, tuple[float, int, float]] = {}

    def __call__(self, trainer: Trainer, metrics: dict) -> bool:
        values = test_metrics(trainer, self.target, metrics)
        minutes = (time.perf_counter() - self.start) / 60
        shown = "  ".join(f"{name} {value:.4f}" for name, value in values.items())
        print(f"  {minutes:6.2f} min  step {trainer.step:6d}  {shown}", flush=True)
        for name, value in values.items():
            self.last[name] = (minutes, trainer.step, value)
            if name not in self.reached and self.target.reached(value):
                self.reached[name] = self.last[name]
        first = next(iter(values))
        return first in self.reached or minutes * 60 > self.limit


def time_to_target(target: Target, args: argparse.Namespace) -> list[list[object]]:
    """Train until the target or the time limit; summary rows, one per decoding."""
    config = run_config(target, args)
    sign = "<=" if target.lower_is_better else ">="
    print(
        f"{target.task} n={target.sizes}: target {target.metric} {sign} {target.goal}", flush=True
    )
    progress = Progress(target, args.minutes)
    with tempfile.TemporaryDirectory() as run_dir:
        result = train(config, run_dir, progress=False, on_validation=progress)
    train_minutes = result.step * config.train.batch_size / result.examples_per_s / 60
    optimum = optimal_mean(target, args)
    rows = []
    for name, last in progress.last.items():
        minutes, step, value = progress.reached.get(name, last)
        rows.append(
            [
                target.task,
                target.sizes,
                f"{target.metric} {sign} {target.goal}",
                name,
                "yes" if name in progress.reached else "no",
                f"{minutes:.1f}",
                step,
                f"{value:.4f}",
                f"{train_minutes:.1f} of {last[0]:.1f}",
                f"{result.examples_per_s:.0f}",
                optimum,
            ]
        )
    return rows


def optimal_mean(target: Target, args: argparse.Namespace) -> str:
    """The test set's optimal mean tour length (TSP) for context; empty for other tasks."""
    if target.task != "tsp":
        return ""
    from ptrnet.tasks import get_task
    from ptrnet.training.data import validation_set

    points, refs = validation_set(get_task("tsp"), run_config(target, args).train)
    return f"{np.mean([tour_length(p, r) for p, r in zip(points, refs, strict=True)]):.4f}"


def fixed_budget(target: Target, args: argparse.Namespace, precision: str, seed: int) -> tuple:
    """Train ``args.compare_precision`` steps; -> (decoded metric, minutes, examples/s)."""
    steps = args.compare_precision
    config = run_config(target, args, precision=precision, seed=seed, steps=steps, val_every=steps)
    final: list[float] = []

    def record(trainer: Trainer, metrics: dict) -> bool:
        final.append(next(iter(test_metrics(trainer, target, metrics).values())))
        return True

    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as run_dir:
        result = train(config, run_dir, progress=False, on_validation=record)
    return final[-1], (time.perf_counter() - start) / 60, result.examples_per_s


def compare_precision(target: Target, args: argparse.Namespace) -> list[list[object]]:
    """Rows per precision: the decoded metric per seed, its mean, minutes and examples/s."""
    rows = []
    for precision in ("fp32", "bf16"):
        runs = [fixed_budget(target, args, precision, seed) for seed in range(args.seeds)]
        values = [v for v, _, _ in runs]
        print(f"  {target.task} {precision}: {values}", flush=True)
        rows.append(
            [
                target.task,
                precision,
                args.compare_precision,
                " / ".join(f"{v:.4f}" for v in values),
                f"{statistics.mean(values):.4f}",
                f"{statistics.mean(m for _, m, _ in runs):.1f}",
                f"{statistics.mean(r for _, _, r in runs):.0f}",
            ]
        )
    return rows


def markdown(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(x) for x in row) + " |" for row in rows]
    return "\n".join(lines)


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add = parser.add_argument
    add("--task", choices=("tsp", "convex_hull", "both"), default="both")
    add("--minutes", type=float, default=30.0, help="time limit per task (default 30)")
    add("--eval-every", type=int, default=2000, help="steps between evaluations")
    add("--test-count", type=int, help="test instances (default: TSP 10,000, hull 2,000)")
    add("--hidden", type=int, default=256)
    add("--lr", type=float, help="Adam learning rate (default: the recipe's 1e-3)")
    add("--decay", type=float, help="lr factor per --decay-every steps (default 0.96)")
    add("--decay-every", type=int, default=1000)
    add("--max-steps", type=int, default=1_000_000)
    add("--threads", type=int, default=None, help="torch threads (default: ptrnet's plan)")
    add("--workers", type=int, default=None, help="data workers (default: ptrnet's plan)")
    add("--compare-precision", type=int, metavar="STEPS", help="fp32 vs bf16 at STEPS steps")
    add("--seeds", type=int, default=2, help="seeds per precision for --compare-precision")
    add("--quick", action="store_true", help="a smoke run: tiny budgets, small test set")
    args = parser.parse_args(argv)
    if args.quick:
        args.minutes, args.eval_every, args.test_count = 0.2, 20, 100
        args.compare_precision = args.compare_precision and 20
        args.seeds = 1
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(argv)
    threads, workers = cpu_plan(args.threads, args.workers)
    print(
        f"`python benchmarks/bench_time_to_quality.py {' '.join(argv or sys.argv[1:])}`: "
        f"{threads} torch threads, {workers} data workers, precision auto = "
        f"{resolve_precision('auto')}, load average {os.getloadavg()[0]:.2f}\n",
        flush=True,
    )
    targets = [TARGETS[t] for t in TARGETS if args.task in (t, "both")]
    if args.compare_precision:
        rows = [row for target in targets for row in compare_precision(target, args)]
        header = ("task", "precision", "steps", "metric per seed", "mean", "minutes", "ex/s")
        print("\n" + markdown(header, rows))
        return
    rows = [row for target in targets for row in time_to_target(target, args)]
    header = (
        "task",
        "n",
        "target",
        "decoding",
        "reached",
        "wall-clock min",
        "step",
        "metric",
        "training-only min of total",
        "train ex/s",
        "optimal mean length",
    )
    print("\n" + markdown(header, rows))


if __name__ == "__main__":
    main()
