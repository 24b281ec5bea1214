"""The bundled TSP folder's heavy decoder, reference path against fast path, on one thread:
greedy instances/s at each n on the same instances, whether the tours agree, and the Random
Re-Construct gap each path reaches in a fixed CPU time per instance.

    python benchmarks/bench_heavy.py --n 50 100 200 --count 64 64 16 --rrc-n 100 --rrc-count 16

The reference path runs PyTorch's own encoder layers (``HeavyPointer.fast = False``, the model
as it decoded before the fast path); the fast path is the default
(:mod:`ptrnet.model.heavy_pass`: on rows of at least ``FAST_FROM`` vectors the layers op by
op, the first layer's projections of the inputs cached per batch). Both decode through the
same loop. Times are the process's CPU time (``time.process_time``, one thread), which a shared
machine's other jobs do not inflate as they do wall time; the wall time is printed beside it.
Instances: fresh uniform ones (seed 4242, stream 7). RRC (``--improve rrc``) starts from the
folder's greedy tours and runs rounds of two until the next would pass ``--rrc-seconds`` of
CPU per instance; gaps are to fast-tsp's near-exact tours.

FLOPs per tour are the fast path's greedy decoding of one instance, counted by
``FlopCounterMode`` (2 per multiply-add: the linear layers and the attention's two products;
the reference path adds the first layer's projections the fast path caches, about 8%; every
row is counted op by op, FlopCounterMode sees nothing inside the fused layers). The
peak is the best rate of one thread on large single matrix products (``torch.addmm``), measured
in the same run; GFLOP/s = FLOPs per tour x instances/s. Prints one JSON line per row, then
Markdown tables.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch
from torch.utils.flop_counter import FlopCounterMode, sdpa_flop_count

from ptrnet.cli.common import positive_int
from ptrnet.decoding.options import DecodeOptions
from ptrnet.inference import load_model, predict
from ptrnet.model import heavy_pass
from ptrnet.model.heavy import HeavyPointer
from ptrnet.searches.rebuild import improve_tours_of
from ptrnet.solvers.tsp import solve_tour, tour_length
from ptrnet.tasks import SizeRange, get_task

TSP = get_task("tsp")
PATHS = ("reference", "fast")
# FlopCounterMode has no formula for the CPU's fused attention kernel: the same as on a GPU.
SDPA_CPU = {
    torch.ops.aten._scaled_dot_product_flash_attention_for_cpu: (
        lambda q, k, v, *args, **kwargs: sdpa_flop_count(q, k, v)
    )
}


def flops_per_tour(loaded, n: int) -> int:
    """FLOPs of the fast path's greedy decoding of one instance of n cities, every row op by op
    (FlopCounterMode does not see inside the fused layers that short rows run through)."""
    use_path(loaded, "fast")
    points = TSP.generate(SizeRange(n, n), 1, seed=4242, stream=7)
    fast_from, heavy_pass.FAST_FROM = heavy_pass.FAST_FROM, 0
    try:
        with FlopCounterMode(display=False, custom_mapping=SDPA_CPU) as counter:
            predict(loaded, TSP, points)
    finally:
        heavy_pass.FAST_FROM = fast_from
    return counter.get_total_flops()


def matmul_peak(repeats: int = 5) -> float:
    """GFLOP/s: the best CPU-time rate of one thread on (2048, 1024) @ (1024, 1024) products."""
    a, b, c = torch.randn(2048, 1024), torch.randn(1024, 1024), torch.randn(1024)
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(4):
            torch.addmm(c, a, b)
        best = min(best, (time.process_time() - start) / 4)
    return 2 * 2048 * 1024 * 1024 / best / 1e9


def use_path(loaded, path: str) -> None:
    """Switch every heavy model of the folder to ``path`` (one of :data:`PATHS`)."""
    for model in (loaded.model, *(route.model.model for route in loaded.routes)):
        if isinstance(model, HeavyPointer):
            model.fast = path == "fast"


def lengths_of(points: list[np.ndarray], tours: list[np.ndarray]) -> np.ndarray:
    """Closed tour lengths of 0-based ``[c0, ..., c0]`` tours."""
    return np.array([tour_length(p, t[:-1]) for p, t in zip(points, tours, strict=True)])


def greedy_rows(loaded, n: int, count: int, batch: int) -> list[dict]:
    """One row per path: greedy decoding of ``count`` instances of n cities."""
    points = TSP.generate(SizeRange(n, n), count, seed=4242, stream=7)
    options = DecodeOptions(batch_size=batch)
    rows, found = [], {}
    for path in PATHS:
        use_path(loaded, path)
        predict(loaded, TSP, points[:1], options)  # warm up
        cpu, wall = time.process_time(), time.perf_counter()
        found[path] = predict(loaded, TSP, points, options)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        rows.append(dict(n=n, path=path, instances=count, per_s_cpu=count / cpu))
        rows[-1].update(per_s_wall=count / wall)
    pairs = zip(found["reference"], found["fast"], strict=True)
    same = sum(np.array_equal(a, b) for a, b in pairs)
    old, new = (lengths_of(points, found[p]).mean() for p in PATHS)
    rows[1].update(speedup=rows[1]["per_s_cpu"] / rows[0]["per_s_cpu"], same_tours=int(same))
    rows[1].update(mean_length_change=float(new / old - 1))
    flops = flops_per_tour(loaded, n)
    for row in rows:
        row.update(gflop_per_tour=flops / 1e9, gflop_s=flops / 1e9 * row["per_s_cpu"])
    return rows


def rrc_rows(loaded, n: int, count: int, seconds: float) -> list[dict]:
    """One row per path: RRC from the greedy tours for ``seconds`` of CPU per instance."""
    points = TSP.generate(SizeRange(n, n), count, seed=4242, stream=7)
    refs = np.array([tour_length(p, solve_tour(p, "near_exact")) for p in points])
    use_path(loaded, "fast")
    greedy = predict(loaded, TSP, points)
    rows = []
    for path in PATHS:
        use_path(loaded, path)
        tours, rounds, spent, budget = greedy, 0, 0.0, seconds * count
        while True:
            start = time.process_time()
            tours = improve_tours_of(loaded, points, tours, 2, seed=rounds, batch_size=count)
            spent += time.process_time() - start
            rounds += 2
            if spent + spent / (rounds // 2) > budget:  # the next two rounds would pass it
                break
        gap = float(100 * np.mean(lengths_of(points, tours) / refs - 1))
        rows.append(dict(n=n, path=path, rrc_rounds=rounds, cpu_s_per_instance=spent / count))
        rows[-1].update(greedy_gap=float(100 * np.mean(lengths_of(points, greedy) / refs - 1)))
        rows[-1].update(rrc_gap=gap)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=positive_int, nargs="+", default=[50, 100, 200])
    parser.add_argument("--count", type=positive_int, nargs="+", default=[64, 64, 16])
    parser.add_argument("--batch", type=positive_int, default=64, help="instances per batch")
    parser.add_argument("--rrc-n", type=int, default=100, help="0: no RRC rows")
    parser.add_argument("--rrc-count", type=positive_int, default=16)
    parser.add_argument("--rrc-seconds", type=float, default=1.0, help="CPU s per instance")
    args = parser.parse_args()
    if len(args.count) != len(args.n):
        parser.error("--count needs one count per --n")
    torch.set_num_threads(1)
    loaded = load_model(None, TSP)
    peak = matmul_peak()
    print(json.dumps(dict(matmul_peak_gflop_s=peak)), flush=True)
    greedy = []
    for n, count in zip(args.n, args.count, strict=True):
        for row in greedy_rows(loaded, n, count, args.batch):
            print(json.dumps(row), flush=True)
            greedy.append(row)
    rrc = rrc_rows(loaded, args.rrc_n, args.rrc_count, args.rrc_seconds) if args.rrc_n else []
    for row in rrc:
        print(json.dumps(row), flush=True)
    print(f"\nsingle-thread matmul peak: {peak:.1f} GFLOP/s")
    print("\n| n | instances | reference inst/s | fast inst/s | speedup | same tours |", end="")
    print(" mean length change | GFLOP/tour | fast GFLOP/s (of peak) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for old, new in zip(greedy[::2], greedy[1::2], strict=True):
        print(
            f"| {new['n']} | {new['instances']} | {old['per_s_cpu']:.2f} | {new['per_s_cpu']:.2f} "
            f"| {new['speedup']:.2f}x | {new['same_tours']} | {new['mean_length_change']:+.4%} "
            f"| {new['gflop_per_tour']:.2f} | {new['gflop_s']:.1f} ({new['gflop_s'] / peak:.0%}) |"
        )
    if rrc:
        print("\n| n | path | RRC rounds in budget | greedy gap | RRC gap |")
        print("|---|---|---:|---:|---:|")
        for r in rrc:
            print(
                f"| {r['n']} | {r['path']} | {r['rrc_rounds']} | {r['greedy_gap']:.2f}% "
                f"| {r['rrc_gap']:.2f}% |"
            )


if __name__ == "__main__":
    main()
