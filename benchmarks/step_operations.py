"""Tensor operations per output step of a lone greedy decoding, by where they come from: a
count that the machine's load does not change, beside timings that it does (docs/speed.md).

    P=docs/beyond-runs/light-probe/pomo50/best.safetensors
    python benchmarks/step_operations.py --model $P

Each aten operation dispatched from Python is counted once (a ``TorchDispatchMode`` sees it;
the operations a kernel runs inside it are not), attributed to the innermost ``ptrnet`` source
file on the Python stack and grouped as the model's step (``ptrnet/model/``), the task's state
and mask (``ptrnet/tasks/``) and the search loop (``ptrnet/decoding/``). One TSP instance of
each of two sizes is decoded through ``ptrnet.inference.predict``; the difference of the two
counts over the difference of their steps is the per-step count (what a decoding does once,
encoding included, cancels), and each decoding's total is given too.
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import ptrnet  # noqa: E402
from ptrnet.inference import load_model, predict  # noqa: E402

GROUPS = {"model/": "model step", "tasks/": "task state and mask", "decoding/": "search loop"}
#: The package's own folder: a frame is ptrnet's when its file lies under it (not when its path
#: merely contains "/ptrnet/", as a checkout named ptrnet with its .venv inside it would).
PACKAGE = Path(ptrnet.__file__).resolve().parent


def source(frame) -> str:
    """The group of the innermost frame of ``frame``'s stack in a file of the ``ptrnet``
    package: a :data:`GROUPS` value, ``ptrnet, other`` for the package's other folders, or
    ``outside``."""
    while frame is not None:
        path = Path(frame.f_code.co_filename)
        if path.is_absolute() and path.is_relative_to(PACKAGE):
            inner = path.relative_to(PACKAGE).as_posix()
            return next((g for p, g in GROUPS.items() if inner.startswith(p)), "ptrnet, other")
        frame = frame.f_back
    return "outside"


class Counter(TorchDispatchMode):
    """Counts the aten operations dispatched while active, by :func:`source`."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: collections.Counter[str] = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.counts[source(sys._getframe(1))] += 1
        return func(*args, **(kwargs or {}))


def count(model: str | None, n: int, seed: int = 0) -> collections.Counter[str]:
    """Operations by group of one greedy TSP decoding of a uniform instance of ``n`` cities."""
    loaded = load_model(model, "tsp")
    points = np.random.default_rng(seed).random((n, 2))
    predict(loaded, "tsp", [points])  # warm: nothing lazily built is counted
    counter = Counter()
    with counter:
        predict(loaded, "tsp", [points])
    return counter.counts


def per_step(model: str | None, sizes: tuple[int, int] = (20, 50)) -> dict[str, float]:
    """``{group: operations per step}`` and ``total`` (the module docstring's difference), with
    ``total n=<size>`` each decoding's whole count."""
    small, large = (count(model, n) for n in sizes)
    groups = sorted(set(small) | set(large), key=lambda g: small[g] - large[g])
    out = {g: (large[g] - small[g]) / (sizes[1] - sizes[0]) for g in groups}
    out = {g: value for g, value in out.items() if value}  # a group that costs no step
    out["total"] = sum(out.values())
    for n, counts in zip(sizes, (small, large), strict=True):
        out[f"total n={n}"] = float(sum(counts.values()))
    return out


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="a TSP checkpoint (default: the bundled)")
    parser.add_argument("--sizes", type=int, nargs=2, default=[20, 50])
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    found = per_step(args.model, tuple(args.sizes))
    print(f"# tensor operations per step, lone greedy TSP decoding ({args.model or 'bundled'})")
    for group, value in found.items():
        print(f"{value:8.1f}  {group}")
    return found


if __name__ == "__main__":
    main()
