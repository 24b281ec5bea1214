"""Training throughput of ``ptrnet train`` in one process against data-parallel processes.

Usage: ``python benchmarks/bench_distributed.py [--quick] [--repeats R] [--ranks K]``

Runs the same training (same seed, global batch, steps) as

1. one process with one torch thread,
2. one process with K torch threads,
3. K processes with one thread each: ``torchrun --standalone --nproc-per-node=K -m ptrnet
   train`` (DistributedDataParallel over gloo),

and prints the training examples/s each reports (global examples per second of step time,
validation excluded), the median over ``--repeats`` rounds that interleave the variants, so a
change in background load hits all of them alike. The CPU model and the load average are
printed beside the figures.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile

RATE = re.compile(r"steps, (\d+) examples/s")
FULL = ["convex_hull", "-n", "50", "--hidden", "128", "--batch-size", "128", "--steps", "12"]
QUICK = ["sort", "-n", "10", "--hidden", "64", "--batch-size", "64", "--steps", "8"]


def cpu_model() -> str:
    """The CPU model name (/proc/cpuinfo), or the platform's description."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as stream:
            for line in stream:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def variants(ranks: int) -> dict[str, tuple[list[str], dict[str, str]]]:
    """Name -> (command prefix, extra environment) of each variant."""
    single = [sys.executable, "-m", "ptrnet", "train"]
    spread = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    spread += [f"--nproc-per-node={ranks}", "-m", "ptrnet", "train"]
    return {
        "1 process x 1 thread": (single, {"threads": "1"}),
        f"1 process x {ranks} threads": (single, {"threads": str(ranks)}),
        f"{ranks} processes x 1 thread": (spread, {"threads": "1"}),
    }


def run_once(prefix: list[str], threads: str, training: list[str]) -> float:
    """Examples/s that one ``ptrnet train`` run reports."""
    with tempfile.TemporaryDirectory() as out:
        args = [*training, "--threads", threads, "--workers", "0", "--val-count", "16"]
        args += ["--seed", "0", "-q", "--out", os.path.join(out, "run")]
        env = {**os.environ, "OMP_NUM_THREADS": threads}
        done = subprocess.run([*prefix, *args], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"bench_distributed: a run failed:\n{done.stderr[-2000:]}")
    match = RATE.search(done.stdout)
    if match is None:
        raise SystemExit(f"bench_distributed: no rate in the output:\n{done.stdout}")
    return float(match.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sort n = 10, hidden 64")
    parser.add_argument("--repeats", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--ranks", type=int, default=2, help="processes K (default 2)")
    args = parser.parse_args()
    training = QUICK if args.quick else FULL
    table = variants(args.ranks)
    rates: dict[str, list[float]] = {name: [] for name in table}
    for _ in range(args.repeats):
        for name, (prefix, env) in table.items():
            rates[name].append(run_once(prefix, env["threads"], training))
    print(f"CPU: {cpu_model()}, {os.cpu_count()} logical CPUs; load average {os.getloadavg()}")
    print(f"training: ptrnet train {' '.join(training)} (fp32/auto precision, no workers)")
    base = statistics.median(rates["1 process x 1 thread"])
    for name, values in rates.items():
        median = statistics.median(values)
        shown = ", ".join(f"{v:.0f}" for v in values)
        print(f"{name:<24} {median:8.0f} examples/s  x{median / base:.2f}  (runs: {shown})")


if __name__ == "__main__":
    main()
