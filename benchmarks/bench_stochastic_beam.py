"""Stochastic beam search beside plain sampling on TSP: the same number of tours per instance,
the shortest kept (``pick="shortest"``), its mean gap to the file's reference tours; greedy
(and with ``--methods``, beam search of the same width) beside them. One thread; prints a
Markdown table with the CPU.

    ptrnet generate tsp -n 20 --count 200 --seed 2015 --stream 5 -o tsp20.txt
    ptrnet generate tsp -n 50 --count 200 --seed 2015 --stream 5 -o tsp50.txt
    python benchmarks/bench_stochastic_beam.py tsp20.txt tsp50.txt --tours 16 64

The references are the labels ``ptrnet generate`` writes (the ``auto`` solver: exact up to 20
cities, near-exact beyond), what ``ptrnet eval`` compares with. Each row decodes every
instance of a file through the Python API (``ptrnet.load("tsp")``: the bundled folder routes
each size to its model, as ``ptrnet eval --protocol valid`` does) with ``seed=0``. The last
column is the mean of stochastic beam search's gap minus sampling's on the same instances, with
its standard error.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
import torch

import ptrnet
from ptrnet.cli.common import positive_int
from ptrnet.io.paper_format import read_examples
from ptrnet.solvers.tsp import tour_length
from ptrnet.tasks import get_task

#: Solver.solve's options of each method for K tours per instance, the shortest kept.
METHODS = {
    "greedy": lambda k: {},
    "sample": lambda k: {"decode": "sample", "samples": k, "pick": "shortest"},
    "stochastic_beam": lambda k: {"decode": "stochastic_beam", "beam_width": k, "pick": "shortest"},
    "beam": lambda k: {"decode": "beam", "beam_width": k, "pick": "shortest"},
}


def cpu_name() -> str:
    """The CPU's model name (Linux: /proc/cpuinfo), else what platform says."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def gaps(points: list[np.ndarray], refs: list[np.ndarray], tours: list[np.ndarray]) -> np.ndarray:
    """Per instance: tour length / reference length - 1."""
    pairs = zip(points, refs, tours, strict=True)
    return np.array([tour_length(p, t) / tour_length(p, r) - 1 for p, r, t in pairs])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", help="labelled TSP files (ptrnet generate)")
    parser.add_argument("--tours", type=positive_int, nargs="+", default=[16, 64])
    parser.add_argument("--count", type=positive_int, default=200, help="instances per file")
    parser.add_argument(
        "--methods",
        nargs="+",
        choices=tuple(METHODS),
        default=["greedy", "sample", "stochastic_beam"],
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    solver = ptrnet.load("tsp", device="cpu", threads=1)
    print(f"CPU: {cpu_name()}, 1 thread; torch {torch.__version__}\n")
    print("| n | decoding | tours | mean gap | s per instance | stochastic beam - sampling |")
    print("|---|---|---|---|---|---|")
    for path in args.files:
        examples = read_examples(path, get_task("tsp"))[: args.count]
        points, refs = [e.points for e in examples], [e.seq for e in examples]
        for k in args.tours:
            found = {}
            for method in args.methods:
                if method == "greedy" and k != args.tours[0]:
                    continue  # one greedy row per file
                tic = time.perf_counter()
                tours = [r.sequence for r in solver.solve(points, seed=0, **METHODS[method](k))]
                seconds = (time.perf_counter() - tic) / len(points)
                found[method] = gaps(points, refs, tours)
                paired = ""
                if method == "stochastic_beam" and "sample" in found:
                    diff = found[method] - found["sample"]
                    paired = f"{diff.mean():+.2%} ± {diff.std(ddof=1) / np.sqrt(len(diff)):.2%}"
                tours_shown = 1 if method == "greedy" else k
                print(
                    f"| {len(points[0])} | {method} | {tours_shown} | {found[method].mean():.2%} "
                    f"| {seconds:.3f} | {paired} |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
