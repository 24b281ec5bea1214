"""Random Re-Construct (``--improve rrc``) after greedy decoding of the bundled TSP folder: mean
gap to near-optimal references and CPU time (this process's, so a busy machine does not inflate
it), per batch and per instance, one thread.

    python benchmarks/bench_rrc.py --n 50 100 200 --count 50 --iterations 10 30 100

For each n: ``count`` fresh uniform instances (seed 4242, stream 7: never a training stream),
references by fast-tsp's near-exact search (``near_exact``; LKH-level at these sizes, see
docs/solvers.md), the folder's greedy tours, then RRC from them with each number of rounds.
``batch`` rows time all instances improved together (``--batch``, the throughput a file gets);
``single`` rows time ``--single`` instances one at a time (the latency of one instance). Prints
one JSON line per row as it finishes, then a Markdown table. ``--two-opt`` adds, after each RRC
row, its tours 2-opted to a local optimum (``--improve rrc --two-opt``; batch time only).
``--or-opt`` adds the same with 2-opt and Or-opt moves together (``--or-opt``), after greedy and
after each RRC row, and a control without the model: nearest neighbour from city 0, then 2-opt
and Or-opt. RRC and the local searches are searches with the tour length in the loop: their
rows are not the model's own decoding. ``--seeds K`` runs every search with seeds 0..K-1 and
reports the mean gap and time and the range of gaps: one seed draws one set of segment lengths
for the whole batch, so one seed's figures are a single draw.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from ptrnet.cli.common import positive_int
from ptrnet.inference import load_model, predict
from ptrnet.searches.rebuild import improve_tours_of
from ptrnet.searches.run import local_search
from ptrnet.solvers.tsp import distance_matrix, solve_tour, tour_length
from ptrnet.tasks import SizeRange, get_task
from ptrnet.tasks.tsp import OR_OPT, TWO_OPT

TSP = get_task("tsp")


def mean_gap(points: list[np.ndarray], tours: list[np.ndarray], refs: np.ndarray) -> float:
    """Mean relative gap (%) of closed 0-based ``tours`` to the reference lengths."""
    lengths = np.array([tour_length(p, t[:-1]) for p, t in zip(points, tours, strict=True)])
    return float(100 * np.mean(lengths / refs - 1))


def timed(function, *args):
    """(result, CPU seconds of this process) of one call."""
    start = time.process_time()
    result = function(*args)
    return result, time.process_time() - start


def rows_for_size(loaded, n: int, args: argparse.Namespace) -> list[dict]:
    """The greedy row and every RRC row at size ``n``."""
    points = TSP.generate(SizeRange(n, n), args.count, seed=4242, stream=7)
    refs = np.array([tour_length(p, solve_tour(p, "near_exact")) for p in points])
    greedy, seconds = timed(predict, loaded, TSP, points)

    def row(method: str, rounds: int, tours: list[np.ndarray], batch_s: float, **more) -> dict:
        gap = mean_gap(points, tours, refs)
        per = batch_s / len(points)
        return dict(n=n, method=method, rounds=rounds, gap=gap, batch_s_per_instance=per, **more)

    rows = [row("greedy", 0, greedy, seconds)]
    if args.or_opt:
        rows.append(row("nn + 2-opt + or-opt", 0, *timed(nearest_local_search, points)))
        polished, extra = timed(local_search, OR_OPT, points, greedy)
        rows.append(row("greedy + 2-opt + or-opt", 0, polished, seconds + extra))
    for rounds in args.iterations:
        found = search_rows(loaded, points, refs, greedy, rounds, args)
        alone = time.process_time()
        for p, t in zip(points[: args.single], greedy, strict=False):
            improve_tours_of(loaded, [p], [t], rounds)
        one_s = (time.process_time() - alone) / min(args.single, len(points))
        for method, results in found.items():
            gaps, seconds = np.array(results).T  # one value per seed each
            more = {"single_s_per_instance": one_s} if method == "greedy + rrc" else {}
            if args.seeds > 1:
                more |= dict(seeds=args.seeds, gap_min=gaps.min(), gap_max=gaps.max())
            rows.append(
                dict(n=n, method=method, rounds=rounds, gap=gaps.mean(),
                     batch_s_per_instance=seconds.mean(), **more)
            )  # fmt: skip
    return rows


def search_rows(loaded, points, refs, greedy, rounds: int, args) -> dict[str, list]:
    """Method -> [(mean gap %, CPU s per instance of the search)] over seeds 0..``--seeds``-1:
    RRC from the greedy tours, then (as asked) 2-opt, or 2-opt and Or-opt."""
    found: dict[str, list[tuple[float, float]]] = {}
    for seed in range(args.seeds):
        better, spent = timed(improve_tours_of, loaded, points, greedy, rounds, seed, args.batch)
        variants = {"greedy + rrc": (better, spent)}
        if args.two_opt:
            polished, extra = timed(local_search, TWO_OPT, points, better)
            variants["greedy + rrc + 2-opt"] = (polished, spent + extra)
        if args.or_opt:
            polished, extra = timed(local_search, OR_OPT, points, better)
            variants["greedy + rrc + 2-opt + or-opt"] = (polished, spent + extra)
        for method, (tours, seconds) in variants.items():
            gap = mean_gap(points, tours, refs)
            found.setdefault(method, []).append((gap, seconds / len(points)))
    return found


def nearest_local_search(points: list[np.ndarray]) -> list[np.ndarray]:
    """The control without a model: nearest neighbour from city 0, then 2-opt and Or-opt to a
    local optimum of both (the frontier benchmark's row of that name); closed tours."""
    try:
        from benchmarks.frontier_methods import classic_solver
    except ImportError:  # run as a script
        from frontier_methods import classic_solver

    solve = classic_solver("nn + 2-opt + or-opt", lkh_runs=1)
    tours = [solve(distance_matrix(p)) for p in points]
    return [np.append(tour, tour[0]) for tour in tours]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=positive_int, nargs="+", default=[50, 100, 200])
    parser.add_argument("--count", type=positive_int, default=50)
    parser.add_argument("--iterations", type=positive_int, nargs="+", default=[10, 30, 100])
    parser.add_argument(
        "--batch", type=positive_int, default=64, help="instances improved together"
    )
    parser.add_argument("--single", type=positive_int, default=5, help="instances timed alone")
    parser.add_argument(
        "--two-opt",
        action="store_true",
        help="also each RRC row's tours 2-opted to a local optimum (--improve rrc --two-opt)",
    )
    parser.add_argument(
        "--or-opt",
        action="store_true",
        help="also 2-opt + Or-opt after greedy and after each RRC row (--or-opt), and nearest "
        "neighbour + 2-opt + Or-opt as a control without the model",
    )
    parser.add_argument(
        "--seeds",
        type=positive_int,
        default=1,
        help="run each search with seeds 0..K-1: mean gap and time, and the range of gaps "
        "(one seed's segment lengths are one draw: its time and gap vary with it)",
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    loaded = load_model(None, TSP)
    rows = []
    for n in args.n:
        for row in rows_for_size(loaded, n, args):
            print(json.dumps(row), flush=True)
            rows.append(row)
    print("\n| n | method | rounds | gap | CPU s / instance (batch) | CPU s / instance (alone) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        alone = f"{r['single_s_per_instance']:.3f}" if "single_s_per_instance" in r else "-"
        spread = f" ({r['gap_min']:.2f}-{r['gap_max']:.2f}%)" if "gap_min" in r else ""
        print(
            f"| {r['n']} | {r['method']} | {r['rounds']} | {r['gap']:.2f}%{spread} | "
            f"{r['batch_s_per_instance']:.3f} | {alone} |"
        )


if __name__ == "__main__":
    main()
