"""Kool, van Hoof & Welling (ICLR 2019), "Attention, Learn to Solve Routing Problems!": their
public pretrained TSP and CVRP attention models, run from a checkout of their repository beside
ptrnet.

Nothing of theirs is copied here: :func:`load_kool` puts the checkout on ``sys.path`` and calls
their own ``utils.load_model``. Their 2019 code runs under today's torch with one runtime shim,
applied only while their loader runs: ``torch.load`` defaults to ``weights_only=True`` since
torch 2.6, and their ``epoch-99.pt`` files are pickled dicts that need ``weights_only=False``
(they are the authors' published files; load them only from a checkout you trust).

Get the checkout with ``git clone https://github.com/wouterkool/attention-learn-to-route``;
``pretrained/tsp_{20,50,100}/`` and ``pretrained/cvrp_{10,20,50,100}/`` hold ``args.json`` and
``epoch-99.pt`` (2.8 MB each).
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import torch

KOOL_SIZES = (20, 50, 100)  # the graph sizes of their pretrained TSP models
KOOL_CVRP_SIZES = (10, 20, 50, 100)  # customers of their pretrained CVRP models
SIZES = {"tsp": KOOL_SIZES, "cvrp": KOOL_CVRP_SIZES}
WEIGHTS = "epoch-99.pt"


class BenchError(Exception):
    """A problem the benchmark reports as one line (``bench_kool: error: ...``)."""


def model_dir(checkout: str | Path | None, size: int, problem: str = "tsp") -> Path:
    """The folder of their pretrained ``problem`` (``tsp`` or ``cvrp``) model of ``size`` cities
    or customers, checked to hold real files.

    Raises:
        BenchError: an unknown size, a missing checkout or model folder, or a weights file that
            is a Git LFS pointer or otherwise too small to be the model.
    """
    sizes = SIZES[problem]
    if size not in sizes:
        name = problem.upper()
        raise BenchError(f"no pretrained Kool {name} model of size {size} (have {sizes})")
    if not checkout:
        raise BenchError("no Kool checkout: pass --kool PATH or set KOOL_CHECKOUT")
    root = Path(checkout)
    if not (root / "nets" / "attention_model.py").is_file():
        raise BenchError(
            f"{root}: not a checkout of wouterkool/attention-learn-to-route "
            "(no nets/attention_model.py); pass --kool PATH or set KOOL_CHECKOUT"
        )
    folder = root / "pretrained" / f"{problem}_{size}"
    weights = folder / WEIGHTS
    if not (folder / "args.json").is_file() or not weights.is_file():
        raise BenchError(f"{folder}: args.json or {WEIGHTS} missing")
    if weights.stat().st_size < 100_000:  # an LFS pointer is ~130 bytes, the model 2.8 MB
        raise BenchError(f"{weights}: {weights.stat().st_size} bytes, not the model file")
    return folder


@contextlib.contextmanager
def _pickled_checkpoints() -> Iterator[None]:
    """``torch.load`` with ``weights_only=False`` by default, for the duration of the block."""
    original = torch.load
    torch.load = functools.partial(original, weights_only=False)
    try:
        yield
    finally:
        torch.load = original


def load_kool(checkout: str | Path, size: int, problem: str = "tsp") -> torch.nn.Module:
    """Their pretrained ``problem``-``size`` attention model (:func:`model_dir`), in eval mode
    on the CPU.

    Their loader prints a line on stdout; it goes to stderr so that stdout stays JSON lines.
    """
    folder = model_dir(checkout, size, problem)
    root = str(Path(checkout).resolve())
    if root not in sys.path:
        sys.path.insert(0, root)  # their top-level packages: utils, nets, problems
    from utils import load_model  # type: ignore[import-not-found]  # their repository's

    with _pickled_checkpoints(), contextlib.redirect_stdout(sys.stderr):
        model, _ = load_model(str(folder))
    return model.eval()


def to_kool_input(points_list: Sequence[np.ndarray]) -> torch.Tensor:
    """Their input format: (B, n, 2) float32 coordinates in [0, 1]^2, one size per batch.

    Raises:
        BenchError: instances of different sizes, not 2-D, or outside the unit square.
    """
    sizes = {np.shape(p) for p in points_list}
    if len(sizes) != 1 or len(next(iter(sizes))) != 2 or next(iter(sizes))[1] != 2:
        raise BenchError(f"Kool's models take a batch of one shape (n, 2), got {sorted(sizes)}")
    points = np.stack([np.asarray(p, dtype=np.float64) for p in points_list])
    if points.min() < 0 or points.max() > 1:
        raise BenchError("Kool's models take coordinates in [0, 1]^2; scale the instances first")
    return torch.from_numpy(points).float()  # (B, n, 2)


def kool_tours(
    model: torch.nn.Module, points_list: Sequence[np.ndarray], samples: int = 0, batch: int = 500
) -> list[np.ndarray]:
    """One 0-based tour per instance: greedy (``samples`` 0) or the shortest of ``samples``
    tours sampled at temperature 1 (their ``eval.py --decode_strategy sample``; the torch
    global generator draws, so seed it first for repeatable samples)."""
    tours: list[np.ndarray] = []
    with torch.no_grad():
        if samples == 0:
            model.set_decode_type("greedy")
            for lo in range(0, len(points_list), batch):
                _, _, pi = model(to_kool_input(points_list[lo : lo + batch]), return_pi=True)
                tours += list(pi.numpy())  # (B, n)
        else:
            model.set_decode_type("sampling", temp=1.0)
            for points in points_list:
                pi, _ = model.sample_many(to_kool_input([points]), batch_rep=samples)
                tours.append(pi[0].numpy())  # (n,)
    return [np.asarray(t, dtype=np.int64) for t in tours]


def to_kool_cvrp_input(instances: Sequence[np.ndarray]) -> dict[str, torch.Tensor]:
    """ptrnet's CVRP rows ((n + 1, 4): x, y, demand, capacity, the depot first) as their CVRP
    input: ``loc`` (B, n, 2), ``demand`` (B, n) demand / capacity and ``depot`` (B, 2), float32
    (their ``VRPDataset``'s dict; one n per batch).

    Raises:
        BenchError: instances of different sizes or not of four columns, or outside [0, 1]^2.
    """
    shapes = {np.shape(rows) for rows in instances}
    if len(shapes) != 1 or len(next(iter(shapes))) != 2 or next(iter(shapes))[1] != 4:
        raise BenchError(f"Kool's CVRP models take a batch of one shape (n + 1, 4), got {shapes}")
    rows = np.stack([np.asarray(r, dtype=np.float64) for r in instances])  # (B, n + 1, 4)
    if rows[..., :2].min() < 0 or rows[..., :2].max() > 1:
        raise BenchError("Kool's models take coordinates in [0, 1]^2; scale the instances first")
    demand = rows[:, 1:, 2] / rows[:, :1, 3]  # (B, n): each row states the capacity
    return {
        "loc": torch.from_numpy(rows[:, 1:, :2]).float(),
        "demand": torch.from_numpy(demand).float(),
        "depot": torch.from_numpy(rows[:, 0, :2]).float(),
    }


def kool_cvrp_greedy(
    model: torch.nn.Module, instances: Sequence[np.ndarray], batch: int = 500
) -> tuple[list[np.ndarray], np.ndarray]:
    """Their greedy answer to each instance (one n per call) and the length their code gives it.

    Returns:
        The visits as they return them, 0 the depot and i customer i (ptrnet's row numbers),
        a depot visit between two routes and any number at the end (an instance finished before
        the batch's last pads with 0); and (B,) float64 their ``get_costs`` lengths (float32
        arithmetic), for a check against lengths measured on the routes.
    """
    sequences: list[np.ndarray] = []
    costs: list[float] = []
    model.set_decode_type("greedy")
    with torch.no_grad():
        for lo in range(0, len(instances), batch):
            cost, _, pi = model(to_kool_cvrp_input(instances[lo : lo + batch]), return_pi=True)
            sequences += [np.asarray(row, dtype=np.int64) for row in pi.numpy()]  # (T,)
            costs += cost.double().tolist()
    return sequences, np.asarray(costs)
