"""Two TSP (or CVRP) models' greedy gaps on the same instances, and their paired difference.

For each test file (reference tours, or with ``--task cvrp`` reference routes, in the paper's
format): each model's greedy answer to every instance (task masks, no window), its length's
gap above the reference's, the mean gap of each model, and the mean per-instance difference
A - B with its standard error. Pairing removes the spread between instances, so a difference
of a tenth of a point is visible on 1,000 instances where two separate means would hide it:
the measurement behind the size routes of the bundled TSP folder
(ptrnet/bundled/tsp/heavy10-30/COMMAND.md) and CVRP folder (ptrnet/bundled/cvrp/COMMAND.md).
One line per file on stdout.

    python benchmarks/paired_gap.py ptrnet/bundled/tsp/heavy10-30/best.safetensors \\
        ptrnet/bundled/tsp/heavy20-100/best.safetensors val42_50.txt val42_55.txt
    python benchmarks/paired_gap.py --task cvrp ptrnet/bundled/cvrp/best.safetensors \\
        ptrnet/bundled/cvrp/n50/best.safetensors cvrp25.txt cvrp30.txt
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import numpy as np
import torch

from ptrnet.datasets.batching import collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.options import DecodeOptions
from ptrnet.inference import load_model
from ptrnet.io.errors import InputError, UsageError
from ptrnet.io.paper_format import read_examples
from ptrnet.tasks import Task, get_task


@dataclass(frozen=True)
class Paired:
    """Mean gaps of models A and B on one file, and A - B per instance."""

    count: int
    gap_a: float
    gap_b: float
    diff: float
    stderr: float  # of diff; nan for one instance

    def line(self, name: str) -> str:
        return (
            f"{name}: {self.count} instances, A {self.gap_a:.2%}, B {self.gap_b:.2%}, "
            f"A - B {self.diff:+.2%} +- {self.stderr:.2%} (standard error)"
        )


def greedy_gaps(
    model: torch.nn.Module, examples: list, task: Task | None = None, chunk: int = 100
) -> np.ndarray:
    """(count,) gap of the model's greedy answer above each example's reference, both
    measured by the task's cost (default TSP: the closed tour's length; CVRP: the length
    driven)."""
    task = get_task("tsp") if task is None else task
    gaps = []
    for start in range(0, len(examples), chunk):
        part = examples[start : start + chunk]
        with torch.no_grad():
            batch = collate([e.points for e in part])
            tours = decode(model, task, batch, DecodeOptions()).sequences
        for example, tour in zip(part, tours, strict=True):
            reference = task.sequence_cost(example.points, example.seq)
            gaps.append(task.sequence_cost(example.points, tour) / reference - 1)
    return np.array(gaps)


def paired(gaps_a: np.ndarray, gaps_b: np.ndarray) -> Paired:
    """Summary of two gap arrays over the same instances."""
    diff = gaps_a - gaps_b
    stderr = diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else float("nan")
    return Paired(len(diff), gaps_a.mean(), gaps_b.mean(), diff.mean(), stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model_a", help="checkpoint or run directory of model A")
    parser.add_argument("model_b", help="checkpoint or run directory of model B")
    parser.add_argument("tests", nargs="+", help="files with reference answers")
    parser.add_argument(
        "--task", choices=("tsp", "cvrp"), default="tsp", help="the models' task (default tsp)"
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    task = get_task(args.task)
    try:
        models = [load_model(p, args.task).model.eval() for p in (args.model_a, args.model_b)]
        for path in args.tests:
            examples = read_examples(path, task)
            result = paired(*(greedy_gaps(m, examples, task) for m in models))
            print(result.line(path), flush=True)
    except (InputError, UsageError, OSError) as err:
        print(f"paired_gap: error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
