"""Training and decoding speed of ptrnet against the step-by-step reference, side by side.

Usage: ``python benchmarks/bench_speed.py [--quick] [--threads N] [--repeats R]
[--grid TASK:N:D,...] [--train-only] [--load 0,1 [--only-load] [--load-rounds R]
[--load-precision P]]``

For each (task, n, hidden) of the grid (batch 128) it prints:

1. Training examples/s of one step of ptrnet's training loop (``train_step``: teacher-forced
   forward, cross-entropy, backward, clipping, Adam from ``build_optimizer``; the same function
   and optimiser for both models) for the reference (fp32, benchmarks/reference_ptrnet.py) and
   ptrnet (fp32 and bf16 autocast), the speed-ups, and model FLOP utilisation: the analytic
   matmul FLOPs of the step (:func:`step_flops`) per second over the FLOP/s of a dense 1536^3
   matmul of the same precision, timed in the same rounds. The fp32 peak is the faster of
   ``torch.mm`` (MKL) and oneDNN; utilisation against ``torch.mm`` alone is shown in brackets.
2. Greedy and beam (k = 5) decoding instances/s for both, under the task's decoding masks
   (``constraints="task"``); the reference beam search runs one instance at a time, as public
   implementations do.
3. The cost of ``--ema`` (:mod:`ptrnet.training.ema`): the moving-average update that follows
   each step, timed in the same rounds as a fp32 step, and its share of the step.
4. Peak memory of one training step and one decoding call: the rise of the process's peak RSS
   (VmHWM, reset through /proc/self/clear_refs) over its RSS before the call.
5. With ``--load``: training when the machine is shared (benchmarks/shared_load.py): convex
   hull, n = 50, hidden 256, ``ptrnet.training.loop.train`` as ``ptrnet train`` runs it against
   the reference's step loop on 1 and 2 threads, beside 0, 1, ... busy-loop neighbour processes
   that the benchmark starts and stops.

Timings interleave the variants round by round and report medians, so the ratios hold under
background load. Targets: random closed tours for TSP (speed does not depend on which tour),
exact hulls for convex hull. The models are untrained (the same weights in both
implementations), so decoding runs as many steps as the task's masks let an untrained model run
(column ``steps``), the same for both.
"""

from __future__ import annotations

import argparse
import ctypes
import math
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))
from reference_ptrnet import ReferencePointerNetwork  # noqa: E402
from shared_load import LOAD_HEADER, load_row  # noqa: E402

from ptrnet.datasets.batching import Batch, collate  # noqa: E402
from ptrnet.decoding.decode import decode  # noqa: E402
from ptrnet.decoding.options import DecodeOptions  # noqa: E402
from ptrnet.decoding.search import step_limit  # noqa: E402
from ptrnet.model import ModelConfig, build_model  # noqa: E402
from ptrnet.runs.config import TrainConfig  # noqa: E402
from ptrnet.tasks import get_task  # noqa: E402
from ptrnet.training.ema import ema_model  # noqa: E402
from ptrnet.training.steps import build_optimizer, train_step  # noqa: E402

GRID = (("tsp", 10, 128), ("tsp", 10, 256), ("tsp", 20, 128), ("tsp", 20, 256))
GRID += (("convex_hull", 50, 128), ("convex_hull", 50, 256))
BATCH, BEAM, PEAK_SIZE = 128, 5, 1536


def make_batch(task_name: str, n: int, seed: int = 0) -> Batch:
    """B instances of size n with targets (random closed tours for TSP, exact solutions)."""
    rng = np.random.default_rng([seed, n])
    points = [rng.random((n, get_task(task_name).dim)) for _ in range(BATCH)]
    if task_name == "tsp":
        tours = [np.r_[0, 1 + rng.permutation(n - 1), 0] for _ in points]
        return collate(points, tours)
    task = get_task(task_name)
    return collate(points, [task.solve(p) for p in points])


def step_flops(n: int, steps: int, d: int, dim: int = 2) -> float:
    """Matmul FLOPs of one training example: forward (encoder and decoder LSTM, W1 over n+1
    encoder states, W2 over T decoder states, v over T x (n+1) positions), x3 for backward."""
    lstm = 2 * 4 * d * (dim + d)  # one LSTM step: input and recurrent gate matmuls
    forward = n * lstm + steps * lstm + (n + 1) * 2 * d * d + steps * 2 * d * d
    forward += steps * (n + 1) * 2 * d
    return 3.0 * forward


def matmul_fn(dtype: torch.dtype, size: int = PEAK_SIZE) -> Callable[[], torch.Tensor]:
    """A dense square matmul in ``dtype`` through ``torch.mm`` (fp32: MKL; bf16: oneDNN)."""
    a, b = torch.randn(size, size).to(dtype), torch.randn(size, size).to(dtype)
    return lambda: a @ b


def onednn_fp32_fn(size: int = PEAK_SIZE) -> Callable[[], torch.Tensor]:
    """The same fp32 matmul through oneDNN, the library of torch's CPU LSTM kernels; on AMD CPUs
    MKL's fp32 GEMM reaches about half of it, so it is the fp32 peak utilisation refers to."""
    a, b = torch.randn(size, size).to_mkldnn(), torch.randn(size, size).to_mkldnn()
    return lambda: torch._C._nn.mkldnn_linear(a, b)


def interleaved(fns: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Median seconds per call of each function, timed round-robin after one warm-up call."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for fn in fns.values():
        fn()
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(ts) for name, ts in times.items()}


def train_step_fn(model: torch.nn.Module, batch: Batch, precision: str) -> Callable[[], float]:
    """One step of ptrnet's training loop (``train_step``: teacher-forced cross-entropy,
    backward, clipping at 2.0, Adam as ``build_optimizer`` makes it) for either model."""
    cfg = TrainConfig(task="tsp", sizes="5", steps=1, lr=1e-4, precision=precision)
    optimizer = build_optimizer(model, cfg)
    return lambda: train_step(model, optimizer, batch, cfg, 0)


def models(d: int, dim: int = 2) -> tuple[torch.nn.Module, ReferencePointerNetwork]:
    """ptrnet's Ptr-Net (hidden d, ``dim`` coordinates an input) and the reference, same weights."""
    torch.manual_seed(0)
    model = build_model(ModelConfig(hidden=d, input_dim=dim))
    return model, ReferencePointerNetwork.from_model(model)


def training_row(task: str, n: int, d: int, repeats: int) -> list:
    """Training speed, and utilisation against dense-matmul peaks timed in the same rounds."""
    batch = make_batch(task, n)
    steps = batch.targets.shape[1]
    model, ref = models(d, batch.points.shape[-1])
    fns = {
        "ref": train_step_fn(ref, batch, "fp32"),
        "fp32": train_step_fn(model, batch, "fp32"),
        "bf16": train_step_fn(model, batch, "bf16"),
        "peak_mm": matmul_fn(torch.float32),
        "peak_onednn": onednn_fp32_fn(),
        "peak_bf16": matmul_fn(torch.bfloat16),
    }
    secs = interleaved(fns, repeats)
    peak = {k: 2 * PEAK_SIZE**3 / secs[f"peak_{k}"] for k in ("mm", "onednn", "bf16")}
    peak["fp32"] = max(peak["mm"], peak["onednn"])
    rate = {k: BATCH / secs[k] for k in ("ref", "fp32", "bf16")}
    flops = {k: rate[k] * step_flops(n, steps, d) for k in rate}
    util = {k: flops[k] / peak["bf16" if k == "bf16" else "fp32"] for k in rate}
    gflops = " / ".join(f"{peak[k] / 1e9:.0f}" for k in ("mm", "onednn", "bf16"))
    return [
        task,
        n,
        d,
        steps,
        f"{rate['ref']:.0f}",
        f"{rate['fp32']:.0f}",
        f"{rate['bf16']:.0f}",
        f"{rate['fp32'] / rate['ref']:.2f}x",
        f"{rate['bf16'] / rate['ref']:.2f}x",
        f"{util['ref']:.0%}",
        f"{util['fp32']:.0%} ({flops['fp32'] / peak['mm']:.0%})",
        f"{util['bf16']:.0%}",
        gflops,
    ]


def ema_row(task: str, n: int, d: int, repeats: int) -> list:
    """Milliseconds of a fp32 training step and of the EMA update (decay 0.999) that ``--ema``
    adds after it, timed in the same rounds (a difference of two step times would drown it)."""
    batch = make_batch(task, n)
    model, _ = models(d, batch.points.shape[-1])
    ema = ema_model(model, 0.999)
    fns = {"step": train_step_fn(model, batch, "fp32"), "ema": lambda: ema.update_parameters(model)}
    secs = interleaved(fns, repeats)
    share = secs["ema"] / secs["step"]
    return [task, n, d, f"{secs['step'] * 1e3:.1f}", f"{secs['ema'] * 1e3:.2f}", f"{share:.1%}"]


def decoding_row(task_name: str, n: int, d: int, repeats: int, ref_beam_count: int) -> list:
    task, batch = get_task(task_name), make_batch(task_name, n)
    inputs, lengths = Batch(batch.points, batch.lengths), batch.lengths
    limit = step_limit(task, lengths)
    model, ref = models(d, batch.points.shape[-1])
    beams = [task.decode_state(lengths[i].repeat(BEAM), "task") for i in range(ref_beam_count)]
    fns = {
        "ref_greedy": lambda: ref.greedy(batch.points, lengths, task.decode_state(lengths), limit),
        "greedy": lambda: decode(model, task, inputs, DecodeOptions("greedy", constraints="task")),
        "beam": lambda: decode(
            model, task, inputs, DecodeOptions("beam", constraints="task", beam_width=BEAM)
        ),
        "ref_beam": lambda: [ref.beam(batch.points[i], s, limit) for i, s in enumerate(beams)],
    }
    secs = interleaved(fns, repeats)
    rate = {k: BATCH / s for k, s in secs.items()}
    rate["ref_beam"] = ref_beam_count / secs["ref_beam"]
    executed = decode(
        model, task, inputs, DecodeOptions("greedy", constraints="task")
    ).tokens.shape[1]
    return [
        task_name,
        n,
        d,
        executed,
        f"{rate['ref_greedy']:.0f}",
        f"{rate['greedy']:.0f}",
        f"{rate['greedy'] / rate['ref_greedy']:.2f}x",
        f"{rate['ref_beam']:.1f}",
        f"{rate['beam']:.0f}",
        f"{rate['beam'] / rate['ref_beam']:.0f}x",
        f"{rate['greedy'] / rate['beam']:.2f}",
    ]


def peak_rss_delta(fn: Callable[[], object]) -> float:
    """MiB by which the process's peak RSS rises above its current RSS while ``fn`` runs.

    Freed heap memory is returned to the system first (glibc ``malloc_trim``) so earlier runs
    do not hide this one's allocations. NaN where /proc/self/clear_refs is unavailable.
    """
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        with open("/proc/self/clear_refs", "w") as stream:
            stream.write("5")  # reset VmHWM to the current RSS
        before = _status_kib("VmRSS")
        fn()
        return (_status_kib("VmHWM") - before) / 1024
    except OSError:
        return math.nan


def _status_kib(key: str) -> int:
    with open("/proc/self/status") as stream:
        for line in stream:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise OSError(f"{key} not in /proc/self/status")


def memory_row(task_name: str, n: int, d: int) -> list:
    task, batch = get_task(task_name), make_batch(task_name, n)
    inputs = Batch(batch.points, batch.lengths)
    model, ref = models(d, batch.points.shape[-1])
    steps = {
        "ref": train_step_fn(ref, batch, "fp32"),
        "fp32": train_step_fn(model, batch, "fp32"),
        "bf16": train_step_fn(model, batch, "bf16"),
    }
    for step in steps.values():
        step()  # optimiser state and lazy initialisation are not part of the step
    mib = {k: peak_rss_delta(step) for k, step in steps.items()}
    mib["greedy"] = peak_rss_delta(
        lambda: decode(model, task, inputs, DecodeOptions(constraints="task"))
    )
    mib["beam"] = peak_rss_delta(
        lambda: decode(
            model, task, inputs, DecodeOptions("beam", constraints="task", beam_width=BEAM)
        )
    )
    return [task_name, n, d] + [f"{mib[k]:.0f}" for k in ("ref", "fp32", "bf16", "greedy", "beam")]


def markdown(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(x) for x in row) + " |" for row in rows]
    return "\n".join(lines)


TRAIN_HEADER = (
    "task",
    "n",
    "d",
    "T",
    "ref fp32 ex/s",
    "fp32 ex/s",
    "bf16 ex/s",
    "fp32 vs ref",
    "bf16 vs ref",
    "ref util",
    "fp32 util (vs torch.mm)",
    "bf16 util",
    "peak GFLOP/s: fp32 torch.mm / fp32 oneDNN / bf16",
)
EMA_HEADER = ("task", "n", "d", "fp32 step ms", "EMA update ms", "EMA share")
DECODE_HEADER = (
    "task",
    "n",
    "d",
    "steps",
    "ref greedy inst/s",
    "greedy inst/s",
    "greedy vs ref",
    "ref beam5 inst/s",
    "beam5 inst/s",
    "beam vs ref",
    "beam5 cost / greedy",
)
MEMORY_HEADER = (
    "task",
    "n",
    "d",
    "ref train MiB",
    "fp32 train MiB",
    "bf16 train MiB",
    "greedy MiB",
    "beam5 MiB",
)


def machine(threads: int) -> str:
    """CPU model, torch version, threads and current load, for the header of the output."""
    with open("/proc/cpuinfo") as stream:
        names = [line.split(":", 1)[1].strip() for line in stream if line.startswith("model name")]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{names[0] if names else 'unknown CPU'}, torch {torch.__version__}, {threads} threads, "
        f"capability {torch.backends.cpu.get_cpu_capability()}, load average {load}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, smaller grid")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--repeats", type=int, default=None, help="timed rounds per variant")
    parser.add_argument("--grid", default=None, help="rows TASK:N:D,... (default: GRID)")
    parser.add_argument("--train-only", action="store_true", help="only table 1")
    parser.add_argument("--load", default=None, help="busy neighbours per row of table 5: 0,1")
    parser.add_argument("--only-load", action="store_true", help="only table 5")
    parser.add_argument("--load-rounds", type=int, default=3, help="rounds per row of table 5")
    parser.add_argument("--load-precision", default="auto", help="ptrnet's precision, table 5")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    repeats = args.repeats or (3 if args.quick else 9)
    grid = parse_grid(args.grid) if args.grid else GRID[::3] if args.quick else GRID
    print(
        f"`python benchmarks/bench_speed.py {' '.join(argv or sys.argv[1:])}`: "
        f"{machine(args.threads)}\n",
        flush=True,
    )
    if args.load is not None:
        loaded_table(args.load, args.load_rounds, args.load_precision)
    if args.only_load:
        return
    rows = [training_row(*cfg, repeats) for cfg in grid]
    print("Training, batch 128\n\n" + markdown(TRAIN_HEADER, rows) + "\n", flush=True)
    if args.train_only:
        return
    rows = [ema_row(*cfg, repeats) for cfg in grid]
    print(
        "Training with --ema, batch 128, fp32\n\n" + markdown(EMA_HEADER, rows) + "\n", flush=True
    )
    count = 8 if args.quick else 32
    rows = [decoding_row(*cfg, max(2, repeats // 2), count) for cfg in grid]
    print("Decoding, batch 128, fp32\n\n" + markdown(DECODE_HEADER, rows) + "\n", flush=True)
    rows = [memory_row(*cfg) for cfg in grid]
    print("Peak RSS rise per call\n\n" + markdown(MEMORY_HEADER, rows), flush=True)
    print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def parse_grid(text: str) -> list[tuple[str, int, int]]:
    """``"sort:10:128,convex_hull:50:256"`` -> [("sort", 10, 128), ("convex_hull", 50, 256)]."""
    rows = []
    for item in text.split(","):
        parts = item.split(":")
        if len(parts) != 3 or not (parts[1].isdigit() and parts[2].isdigit()):
            raise SystemExit(f"--grid: expected TASK:N:D, got {item!r}")
        rows.append((parts[0], int(parts[1]), int(parts[2])))
    return rows


def loaded_table(loads: str, rounds: int, precision: str) -> None:
    """Table 5: hull n = 50, hidden 256 beside each count of busy neighbours in ``loads``."""
    batch = make_batch("convex_hull", 50)
    rows = []
    for load in (int(x) for x in loads.split(",")):
        rows.append(load_row("convex_hull", 50, 256, batch, load, rounds, precision))
        print(f"  {load} neighbours done, load average {os.getloadavg()[0]:.2f}", flush=True)
    title = f"Training when the machine is shared: convex hull n = 50, d = 256, {precision}"
    print(f"{title}\n\n{markdown(LOAD_HEADER, rows)}\n", flush=True)


if __name__ == "__main__":
    main()
