"""Speed and quality of the reference solvers; prints markdown tables (recorded in docs/solvers.md).

Usage: ``python benchmarks/bench_solvers.py [--quick]``

Sections:
1. TSP labels per second per solver at n = 5, 10, 20, 50 (exact solvers only up to n = 20).
2. exact (fast-tsp) vs held_karp (numpy) vs near_exact, seconds per instance at n = 20.
3. Each non-exact solver's optimality rate (within 1e-9 relative of the ``exact`` length) and
   mean gap at n = 5, 10, 20.
4. Projected hours to label 1M TSP instances with n uniform in 5..20 (``auto``) on 2 cores.
5. Labels per second of every task in the registry (``task.solve`` with its default solver).

Everything runs single-threaded in this process; the 2-core projection assumes two such
processes in parallel. Instances are uniform in the unit square, seeded, so runs compare.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from collections.abc import Callable, Sequence

import numpy as np

from ptrnet.solvers.tsp import TSP_SOLVERS, solve_tour, tour_length
from ptrnet.solvers.tsp_exact import EXACT_MAX_N

SIZES = (5, 10, 20, 50)
QUALITY_SIZES = (5, 10, 20)
EXACT_SOLVERS = ("exact", "held_karp")
LABEL_RANGE = range(5, 21)
LABEL_TOTAL = 1_000_000
CORES = 2
REL = 1e-9


def tsp_solvers() -> tuple[str, ...]:
    """Every concrete solver (``auto`` is an alias); ``lkh`` only where elkai is installed."""
    have_elkai = importlib.util.find_spec("elkai") is not None
    return tuple(s for s in TSP_SOLVERS if s != "auto" and (s != "lkh" or have_elkai))


def instances(n: int, count: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng([seed, n])
    return [rng.random((n, 2)) for _ in range(count)]


def seconds_each(fn: Callable[[np.ndarray], object], items: Sequence[np.ndarray]) -> float:
    """Mean wall-clock seconds of ``fn`` over ``items``, after one untimed call that pays for
    lazy imports (networkx, scipy, shapely)."""
    fn(items[0])
    start = time.perf_counter()
    for item in items:
        fn(item)
    return (time.perf_counter() - start) / len(items)


def percent(x: float) -> str:
    # Rounding first turns float noise such as -1e-17 into 0 and "+ 0.0" turns -0.0 into 0.0.
    return f"{round(x, 7) + 0.0:.3%}"


def markdown(title: str, header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = [f"### {title}", "", "| " + " | ".join(header) + " |"]
    lines.append("|" + "|".join("---" for _ in header) + "|")
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def count_for(solver: str, n: int, scale: float) -> int:
    """Instances to time: fewer for the slow combinations, at least 2."""
    slow = (solver == "held_karp" and n >= 20) or (solver == "a2" and n >= 50)
    base = {5: 200, 10: 100, 20: 40, 50: 20}[n] // (8 if slow else 1)
    return max(2, int(base * scale))


def solver_speed(scale: float) -> str:
    rows = []
    for solver in tsp_solvers():
        cells = []
        for n in SIZES:
            if solver in EXACT_SOLVERS and n > EXACT_MAX_N:
                cells.append("—")
                continue
            items = instances(n, count_for(solver, n, scale))
            cells.append(f"{1 / seconds_each(lambda p, s=solver: solve_tour(p, s), items):,.0f}")
        rows.append([solver, *cells])
    header = ["solver", *(f"n={n}" for n in SIZES)]
    return markdown("TSP labels per second (one core)", header, rows)


def exact_at_20(scale: float) -> str:
    items = instances(20, max(2, int(10 * scale)), seed=1)
    rows = []
    for solver in ("exact", "held_karp", "near_exact"):
        secs = seconds_each(lambda p, s=solver: solve_tour(p, s), items)
        rows.append([solver, f"{secs * 1e3:.1f}"])
    opt = [tour_length(p, solve_tour(p, "held_karp")) for p in items]
    same = np.mean(
        [
            tour_length(p, solve_tour(p, "exact")) <= o * (1 + REL)
            for p, o in zip(items, opt, strict=True)
        ]
    )
    title = f"Exact solvers at n = 20 ({len(items)} instances; exact = held_karp on {same:.0%})"
    return markdown(title, ["solver", "ms per instance"], rows)


def quality(scale: float) -> str:
    solvers = [s for s in tsp_solvers() if s not in EXACT_SOLVERS]
    rows = []
    for n in QUALITY_SIZES:
        items = instances(n, max(10, int(200 * scale)), seed=2)
        opt = np.array([tour_length(p, solve_tour(p, "exact")) for p in items])
        for solver in solvers:
            got = np.array([tour_length(p, solve_tour(p, solver)) for p in items])
            gap = got / opt - 1
            rows.append(
                [
                    n,
                    solver,
                    f"{np.mean(gap <= REL):.1%}",
                    percent(gap.mean()),
                    f"{got.mean():.4f}",
                    f"{opt.mean():.4f}",
                ]
            )
    header = ["n", "solver", "optimal", "mean gap", "mean length", "optimal length"]
    return markdown(f"Quality against `exact` ({len(items)} instances per n)", header, rows)


def projection(scale: float) -> str:
    per_n = [
        seconds_each(solve_tour, instances(n, max(2, int((40 if n < 18 else 10) * scale)), 3))
        for n in LABEL_RANGE
    ]
    mean_s = float(np.mean(per_n))  # n is uniform over LABEL_RANGE
    hours = LABEL_TOTAL * mean_s / CORES / 3600
    rows = [[f"{n}", f"{s * 1e3:.2f}"] for n, s in zip(LABEL_RANGE, per_n, strict=True)]
    rows.append(["mean", f"{mean_s * 1e3:.2f}"])
    title = (
        f"Labelling 1M TSP 5–20 instances with `auto`: {hours:.2f} h on {CORES} cores "
        f"({mean_s * 1e3:.2f} ms per instance per core)"
    )
    return markdown(title, ["n", "ms per instance"], rows)


def task_speed(scale: float) -> str:
    from ptrnet.tasks import POINT_TASKS, SizeRange

    rows = []
    for name, task in POINT_TASKS.items():
        cells = []
        for n in SIZES:
            items = task.generate(SizeRange(n, n), count_for("task", n, scale), seed=4)
            cells.append(f"{1 / seconds_each(task.solve, items):,.0f}")
        rows.append([name, *cells])
    header = ["task", *(f"n={n}" for n in SIZES)]
    return markdown(
        "Task labels per second via the registry (default solver, one core)", header, rows
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a quarter of the instances")
    args = parser.parse_args(argv)
    scale = 0.25 if args.quick else 1.0
    for section in (solver_speed, exact_at_20, quality, projection, task_speed):
        print(section(scale), flush=True)


if __name__ == "__main__":
    main()
