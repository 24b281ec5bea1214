"""Training step time in float32 against bf16 autocast, model family by model family, on this
CPU (docs/speed.md, "Which precision ``auto`` picks").

Each family is a ``ptrnet.training.loop.Trainer`` (one thread, no data workers) built twice, once
per precision, and timed over ``--steps`` steps after two warm-up steps; rounds alternate fp32
and bf16 (``--rounds``), and each figure is the median seconds per step of its rounds (the whole
loop: batch, forward, backward, optimiser). The ratio is bf16's time over fp32's (above 1: bf16
is slower). A CPU without native bf16 (no ``avx512_bf16`` or ``amx_bf16``) emulates it; its bf16
column says nothing about a CPU that has it.

    python benchmarks/bench_precision.py [--families light-pomo route-pomo] [--steps 6]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time

import torch

from ptrnet.compute.precision import cpu_flags, resolve_precision
from ptrnet.model import ModelConfig
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.training.loop import Trainer
from ptrnet.training.runloop import TrainingStopped

TRANSFORMER = dict(encoder="transformer", hidden=128, encoder_layers=3, heads=8, logit_clip=10.0)
SUPERVISED = dict(objective="likelihood", labels="solve", batch_size=128)
POMO = dict(objective="reinforce", baseline="pomo", train_constraints="task", batch_size=64)
FAMILIES = {  # name -> (ModelConfig fields, TrainConfig fields)
    "lstm-sort": (dict(input_dim=1, hidden=128), dict(task="sort", sizes="10", **SUPERVISED)),
    "lstm-tsp": (dict(input_dim=2, hidden=256), dict(task="tsp", sizes="20", **SUPERVISED)),
    "transformer-lstm": (
        dict(input_dim=2, **TRANSFORMER),
        dict(task="tsp", sizes="20", label_solver="local", **SUPERVISED),
    ),
    "light-sup": (
        dict(input_dim=2, decoder="light", **TRANSFORMER),
        dict(task="tsp", sizes="20", label_solver="local", **SUPERVISED),
    ),
    "light-pomo": (
        dict(input_dim=2, decoder="light", **TRANSFORMER),
        dict(task="tsp", sizes="20", **POMO),
    ),
    "route-pomo": (
        dict(input_dim=4, decoder="route", features="demand", **TRANSFORMER),
        dict(task="cvrp", sizes="20", **POMO),
    ),
    "heavy-sup": (
        dict(input_dim=2, decoder="heavy", hidden=128, encoder="transformer", encoder_layers=1,
             heads=8, decoder_layers=6),
        dict(task="tsp", sizes="20", label_solver="local", **SUPERVISED),
    ),
}  # fmt: skip


def seconds_per_step(family: str, precision: str, steps: int) -> float:
    """Median seconds per training step of ``family`` in ``precision`` (2 warm-up steps)."""
    model, train = FAMILIES[family]
    fixed = dict(steps=10**7, val_count=8, val_every=10**7, threads=1, workers=0, device="cpu")
    config = RunConfig(ModelConfig(**model), TrainConfig(precision=precision, **train, **fixed))
    marks: list[float] = []

    def stop() -> bool:
        marks.append(time.perf_counter())
        return len(marks) > steps + 2

    with tempfile.TemporaryDirectory() as run_dir:
        trainer = Trainer(config, run_dir, resume=False)
        with contextlib.suppress(TrainingStopped):
            trainer.run(progress=False, workers=0, should_stop=stop)
    return statistics.median(b - a for a, b in zip(marks[2:], marks[3:], strict=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", nargs="+", choices=FAMILIES, default=list(FAMILIES))
    parser.add_argument("--steps", type=int, default=6, help="timed steps per round")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of each precision")
    args = parser.parse_args()
    torch.set_num_threads(1)
    native = sorted(set(cpu_flags()) & {"avx512_bf16", "amx_bf16"})
    print(f"bf16 flags: {', '.join(native) or 'none (bf16 emulated)'}; one thread; "
          f"auto -> {resolve_precision('auto', 'cpu')}")  # fmt: skip
    print("| family | fp32 s/step | bf16 s/step | bf16 / fp32 |\n|---|---|---|---|")
    for family in args.families:
        times: dict[str, list[float]] = {"fp32": [], "bf16": []}
        for _ in range(args.rounds):
            for precision in times:
                times[precision].append(seconds_per_step(family, precision, args.steps))
        fp32, bf16 = (statistics.median(t) for t in times.values())
        print(f"| {family} | {fp32:.3f} | {bf16:.3f} | {bf16 / fp32:.2f} |", flush=True)


if __name__ == "__main__":
    main()
