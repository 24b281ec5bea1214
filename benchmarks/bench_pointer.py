"""Plain vs fused pointer scores (:func:`ptrnet.model.pointer.pointer_scores`): the time of a
training step and of greedy decoding with each, on one thread (the figures of docs/model.md).

    python benchmarks/bench_pointer.py [--rounds 7] [--batch 128]

A training step: teacher-forced forward, the cross-entropy, backward and an Adam step, on
random points with random permutation labels (the time does not depend on what they are).
Greedy decoding: :func:`ptrnet.decoding.decode.decode` of the batch as TSP, under the task's
rules (n+1 steps). The two paths alternate round by round in one process on the same model and
batch; each figure is the median over the rounds. One JSON line per configuration.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
import torch

from ptrnet.datasets.batching import collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.options import DecodeOptions
from ptrnet.model import ModelConfig, build_model
from ptrnet.tasks import get_task
from ptrnet.training.losses import teacher_forced_loss

SIZES = ((10, 128), (20, 128), (20, 256), (50, 256))  # (n, hidden)


def train_step(model, optimizer, batch) -> None:
    optimizer.zero_grad(set_to_none=True)
    teacher_forced_loss(model, batch).backward()
    optimizer.step()


def greedy(model, batch) -> None:
    decode(model, get_task("tsp"), batch, DecodeOptions())


def timed(fn) -> float:
    tic = time.perf_counter()
    fn()
    return time.perf_counter() - tic


def measure(n: int, hidden: int, batch_size: int, rounds: int) -> dict:
    """Median ms of a training step and of a greedy decode, fused and plain."""
    rng = np.random.default_rng(0)
    points = [rng.random((n, 2)) for _ in range(batch_size)]
    batch = collate(points, [rng.permutation(n) for _ in range(batch_size)])
    torch.manual_seed(0)
    model = build_model(ModelConfig(hidden=hidden))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    times: dict[str, list[float]] = {}
    for _ in range(rounds + 1):  # the first round warms up and is dropped
        for fused in (True, False):
            model.fused = fused
            name = "fused" if fused else "plain"
            model.train()
            times.setdefault(f"train_{name}", []).append(
                timed(lambda: train_step(model, optimizer, batch))
            )
            model.eval()
            times.setdefault(f"greedy_{name}", []).append(timed(lambda: greedy(model, batch)))
    row = {"n": n, "hidden": hidden, "batch": batch_size}
    for key, values in times.items():
        row[f"{key}_ms"] = round(1000 * statistics.median(values[1:]), 1)
    for what in ("train", "greedy"):
        ratio = row[f"{what}_plain_ms"] / row[f"{what}_fused_ms"]
        row[f"{what}_plain_over_fused"] = round(ratio, 2)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--batch", type=int, default=128)
    args = parser.parse_args()
    torch.set_num_threads(1)
    for n, hidden in SIZES:
        print(json.dumps(measure(n, hidden, args.batch, args.rounds)), flush=True)


if __name__ == "__main__":
    main()
