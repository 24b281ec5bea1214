"""The Python API against the command line on one file, on two cores with one kept busy: the
case of issue 54, where ``solver.solve(cities, improve="rrc")`` on torch's default threads took
10x the time of ``ptrnet predict`` on the same file.

    python benchmarks/bench_api_threads.py --cities 100 --instances 4 --iterations 20

Pins itself to two CPUs of its affinity (``--cores``; children inherit it), starts a busy loop
on the first of them, writes ``--instances`` random TSP instances of ``--cities`` cities to a
file, then times in turn, each in a fresh process (import and model load included, as a user
runs them), ``--repeats`` times:

* ``cli``: ``ptrnet predict tsp FILE --improve rrc --iterations K`` (threads: the idle cores);
* ``api``: ``ptrnet.load("tsp").solve(instances, improve="rrc", iterations=K)`` (the same rule);
* ``api-torch-default``: the same call with ``threads=`` torch's default count, what the API
  used before it chose its threads.

Prints one JSON line per run, then the CPU model, the median wall time of each and its ratio
to the command line's (the goal: the API within 1.2x), and the mean tour length each found
(the same seed: the same tours). ``--variants cli api`` leaves out the slow third.

Measured (issue 54), 4 instances of 100 cities, RRC 20 rounds, on an "Intel(R) Xeon(R)
Processor" machine of 2 cores that other jobs also loaded (load average 8-11): one run each,
cli 48.4 s, api 37.4 s (0.77x), api-torch-default 363.1 s (7.5x); medians of 3 runs of
``--variants cli api``, cli 33.4 s, api 24.9 s (0.75x); the same tours in every run.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

VARIANTS = ("cli", "api", "api-torch-default")
API = """
import json, sys, time
import numpy as np, torch
import ptrnet
path, iterations, variant = sys.argv[1], int(sys.argv[2]), sys.argv[3]
threads = torch.get_num_threads() if variant == "api-torch-default" else None
cities = [row.reshape(-1, 2) for row in np.atleast_2d(np.loadtxt(path))]
solver = ptrnet.load("tsp", device="cpu")
start = time.perf_counter()
results = solver.solve(cities, improve="rrc", iterations=iterations, seed=0, threads=threads)
solve_s = time.perf_counter() - start
print(json.dumps({"solve_s": solve_s, "costs": [r.cost for r in results]}))
"""


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo), or the platform's processor string."""
    try:
        with open("/proc/cpuinfo") as stream:
            for line in stream:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or "unknown"


def spin(core: int) -> None:
    """Keep ``core`` busy until killed."""
    os.sched_setaffinity(0, {core})
    while True:
        pass


def run(variant: str, path: str, iterations: int, out_dir: str) -> dict:
    """Wall time of one fresh process of ``variant``, and the tour lengths it found."""
    start = time.perf_counter()
    if variant == "cli":
        out = os.path.join(out_dir, "cli.jsonl")
        command = [sys.executable, "-m", "ptrnet", "predict", "tsp", path, "--improve", "rrc"]
        command += ["--iterations", str(iterations), "--seed", "0", "-q"]
        subprocess.run([*command, "--output-format", "json", "-o", out], check=True)
        wall = time.perf_counter() - start
        with open(out) as stream:
            costs = [json.loads(line)["cost"] for line in stream]
        return {"variant": variant, "wall_s": wall, "costs": costs}
    command = [sys.executable, "-c", API, path, str(iterations), variant]
    found = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
    return {"variant": variant, "wall_s": time.perf_counter() - start, **found}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cities", type=int, default=100)
    parser.add_argument("--instances", type=int, default=4)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--cores", help="two CPUs, e.g. 0,1 (default: the first two allowed)")
    parser.add_argument(
        "--variants", nargs="+", choices=VARIANTS, default=VARIANTS, help="cli comes first"
    )
    args = parser.parse_args()

    allowed = sorted(os.sched_getaffinity(0))
    cores = [int(c) for c in args.cores.split(",")] if args.cores else allowed[:2]
    if len(cores) != 2:
        raise SystemExit("needs two CPUs")
    os.sched_setaffinity(0, set(cores))
    busy = multiprocessing.Process(target=spin, args=(cores[0],), daemon=True)
    busy.start()
    variants = ("cli", *(v for v in args.variants if v != "cli"))
    runs: dict[str, list[dict]] = {v: [] for v in variants}
    try:
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "cities.txt")
            rng = np.random.default_rng(54)
            np.savetxt(path, rng.random((args.instances, 2 * args.cities)), fmt="%.6f")
            for _ in range(args.repeats):
                for variant in variants:
                    found = run(variant, path, args.iterations, folder)
                    runs[variant].append(found)
                    print(json.dumps({k: v for k, v in found.items() if k != "costs"}))
    finally:
        busy.terminate()

    cli = statistics.median(r["wall_s"] for r in runs["cli"])
    print(f"CPU: {cpu_model()}; pinned to CPUs {cores}, CPU {cores[0]} kept busy by a loop")
    print(f"load average before the end: {os.getloadavg()[0]:.2f}")
    print(f"{args.instances} instances of {args.cities} cities, RRC {args.iterations} rounds")
    for variant in variants:
        wall = statistics.median(r["wall_s"] for r in runs[variant])
        mean = float(np.mean(runs[variant][0]["costs"]))
        print(f"{variant:>18}: {wall:7.1f} s  ({wall / cli:.2f}x the CLI)  mean tour {mean:.4f}")


if __name__ == "__main__":
    main()
