"""Where one fp32 training step of ptrnet's Ptr-Net spends its time, by part (docs/speed.md).

Profiles ``train_step`` (as benchmarks/bench_speed.py builds it) with ``torch.profiler`` over
``--steps`` steps after 3 warm-up steps and prints each part's share of the profiled time: the
``nn.LSTM`` calls (oneDNN) forward and backward, the fused pointer kernel forward and backward,
the W1/W2 matmuls and their gradients, and the rest. Shares use the profiler's "CPU total"
(time inside an op with its children).

Usage: ``python benchmarks/profile_step.py [--grid sort:10:128] [--threads 1] [--steps 10]``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
from torch.profiler import profile

sys.path.insert(0, str(Path(__file__).parent))
from bench_speed import make_batch, models, parse_grid, train_step_fn  # noqa: E402

PARTS = {  # part -> profiler event names (without the "aten" namespace) whose totals it sums
    "LSTM forward": ("mkldnn_rnn_layer",),
    "LSTM backward": ("mkldnn_rnn_layer_backward",),
    "pointer forward": ("_AdditiveScores",),
    "pointer backward": ("_AdditiveScoresBackward",),
    "W1, W2 matmuls and gradients": ("mm",),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", default="sort:10:128", help="one TASK:N:D")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    ((task, n, d),) = parse_grid(args.grid)
    batch = make_batch(task, n)
    model, _ = models(d, batch.points.shape[-1])
    step = train_step_fn(model, batch, "fp32")
    for _ in range(3):
        step()
    with profile() as prof:
        for _ in range(args.steps):
            step()
    totals = {event.key.split(":")[-1]: event.cpu_time_total for event in prof.key_averages()}
    whole = sum(event.self_cpu_time_total for event in prof.key_averages())
    print(f"{task} n = {n}, d = {d}, {args.threads} thread(s), {args.steps} steps\n")
    print("| part | share |\n|---|---|")
    rest = whole
    for part, names in PARTS.items():
        spent = sum(totals.get(name, 0.0) for name in names)
        rest -= spent
        print(f"| {part} | {spent / whole:.0%} |")
    print(f"| everything else | {rest / whole:.0%} |")


if __name__ == "__main__":
    main()
