"""The TSP time-quality frontier: ptrnet's bundled TSP folder under every decoding and RRC
budget beside Kool et al.'s public models, classic heuristics, fast-tsp and LKH-3, one thread.

    python benchmarks/bench_frontier.py --kool /tmp/attention-learn-to-route --tsplib --out f/
    python benchmarks/bench_frontier.py --quick --out /tmp/frontier-quick   # < 2 min smoke test
    python benchmarks/bench_frontier.py --report f/rows.jsonl --out f/   # redraw from rows

Test sets: uniform instances of each ``--n`` (seed 4242, stream 7, never a training stream;
the first ``--count`` of them, :func:`default_count` without it) and, with ``--tsplib``, the 29
TSPLIB instances in ``ptrnet/data/tsplib`` (51-200 cities, against their proven optima, in
TSPLIB's rounded EUC_2D lengths). Uniform references: per instance the shortest of LKH-3's
(elkai, ``--lkh-runs``) and fast-tsp's (``near_exact``) tours; the rows say how often each
reached it. Costly methods stop at the sizes :func:`frontier_methods.methods` states
(``--all-methods`` runs every one everywhere).

Every method (benchmarks/frontier_methods.py) gives the mean gap (percent) and two CPU times
(``time.process_time``, one torch thread; wall time rides along in the JSON): seconds per
instance decoded alone (batch of 1; the first ``--single`` instances for the models, every
instance for the one-at-a-time solvers) and instances per second with the whole set decoded
together (the throughput of a file). RRC rows include the greedy decoding they start from, and
``... + or-opt`` rows the row they polish.
Kool rows need their checkout (``--kool`` or ``$KOOL_CHECKOUT``); without it they are left out
with a note on stderr. Output: one JSON line per row on stdout and in ``OUT/rows.jsonl``, then
``OUT/table.md`` (the Markdown tables and the reading by time budget of frontier_report.py) and one
plot per test set, ``frontier_n{N}.png`` / ``frontier_tsplib.png`` in ``--plots`` (default
``OUT``). TSPLIB runs after the sizes up to 200, before the larger ones.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from fnmatch import fnmatch
from pathlib import Path

import numpy as np
import torch

try:
    from benchmarks import frontier_methods as fm
    from benchmarks.bench_kool import TestSet, cpu_model, load_test, parse_models
    from benchmarks.frontier_report import (
        best_reference,
        budget_lines,
        budget_table,
        gaps_pct,
        markdown_table,
        pivot_table,
        plot_set,
    )
    from benchmarks.kool_models import BenchError, model_dir
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    import frontier_methods as fm
    from bench_kool import TestSet, cpu_model, load_test, parse_models
    from frontier_report import (
        best_reference,
        budget_lines,
        budget_table,
        gaps_pct,
        markdown_table,
        pivot_table,
        plot_set,
    )
    from kool_models import BenchError, model_dir


REFERENCE_FAMILIES = ("fast-tsp", "lkh")  # the solvers whose tours are the uniform references


def uniform_set(n: int, count: int) -> TestSet:
    """``count`` uniform instances of ``n`` cities (seed 4242, stream 7); references later."""
    from ptrnet.tasks import SizeRange, get_task

    points = get_task("tsp").generate(SizeRange(n, n), count, seed=4242, stream=7)
    return TestSet(f"n = {n}", points, points, np.ones(count))


def default_count(n: int) -> int:
    """Instances at size ``n`` without ``--count``: 20 up to 100 cities, 10 to 200, 5 beyond."""
    return 20 if n <= 100 else 10 if n <= 200 else 5


def distances(test: TestSet) -> list[np.ndarray]:
    """The matrix each classic solver optimises: TSPLIB's rounded one, else Euclidean."""
    from ptrnet.io.tsplib import tsplib_distances
    from ptrnet.solvers.tsp import distance_matrix

    measure = tsplib_distances if test.rounded else distance_matrix
    return [measure(c) for c in test.coords]


def clocked(function: Callable, *args) -> tuple[object, float, float]:
    """(result, CPU seconds, wall seconds) of one call."""
    cpu, wall = time.process_time(), time.perf_counter()
    out = function(*args)
    return out, time.process_time() - cpu, time.perf_counter() - wall


class Runner:
    """Runs the methods on one test set, keeping each row's result for the rows built on it
    (RRC on ptrnet's greedy row, a polished row on its base)."""

    def __init__(self, test: TestSet, args: argparse.Namespace, models: dict) -> None:
        self.test, self.args, self.models = test, args, models
        self.loaded = models[None]  # the bundled folder
        self.size = max(len(p) for p in test.points)
        self.done: dict[str, dict] = {}  # method name -> its result

    def solve_each(self, solve: Callable[[np.ndarray], np.ndarray], inputs: list) -> dict:
        """One instance at a time: batch time = the sum of the single ones."""
        tours, cpu, wall = [], 0.0, 0.0
        for item in inputs:
            tour, c, w = clocked(solve, item)
            tours.append(fm.open_tour(tour))
            cpu, wall = cpu + c, wall + w
        n = len(inputs)
        return dict(tours=tours, cpu_single=cpu / n, cpu_batch=cpu / n, wall_batch=wall / n)

    def batched(self, decode: Callable[[list], list]) -> dict:
        """All instances together, then the first ``--single`` alone."""
        points = list(self.test.points)
        tours, cpu, wall = clocked(decode, points)
        alone = [clocked(decode, [p])[1] for p in points[: self.args.single]]
        return dict(tours=tours, cpu_single=float(np.mean(alone)), cpu_batch=cpu / len(points),
                    wall_batch=wall / len(points))  # fmt: skip

    def run(self, method: fm.Method) -> dict:
        """Tours and CPU seconds per instance (alone, in the batch) of ``method``."""
        self.done[method.name] = found = self.solve(method)
        return found

    def solve(self, method: fm.Method) -> dict:
        """:meth:`run` without the bookkeeping."""
        if method.polish:
            return self.polish(method.base)
        if method.family in ("classic", "fast-tsp", "lkh"):
            runs = self.args.lkh_runs or (10 if self.size <= 200 else 1)
            return self.solve_each(fm.classic_solver(method.name, runs), distances(self.test))
        if method.family == "kool":
            decode = fm.kool_decoder(self.args.kool, self.size, method.name.split()[-1])
            if method.name.endswith("greedy"):
                return self.batched(decode)
            torch.manual_seed(0)
            return self.solve_each(lambda p: decode([p])[0], list(self.test.points))
        if method.rrc:
            return self.rrc(method.rrc)
        decode = fm.ptrnet_decoder(method.decoding)
        found = self.batched(lambda pts: decode(self.models[method.model], pts))
        found["tours"] = [fm.open_tour(t) for t in found["tours"]]
        return found

    def earlier(self, name: str) -> dict:
        """The result of the row ``name``, which must have run before the one asking."""
        if name not in self.done:
            raise BenchError(f"the row {name!r} must run before the rows built on it")
        return self.done[name]

    def polish(self, base: str) -> dict:
        """The tours of the row ``base`` (run before), then 2-opt and Or-opt on the distances
        the classic solvers see; each instance's search time added to both of its times."""
        from ptrnet.solvers.or_opt import two_opt_or_opt

        found = self.earlier(base)
        tours, cpu = [], 0.0
        for dist, tour in zip(distances(self.test), found["tours"], strict=True):
            better, c, _ = clocked(two_opt_or_opt, dist, tour)
            tours.append(better)
            cpu += c
        extra = cpu / len(tours)
        return dict(tours=tours, cpu_single=found["cpu_single"] + extra,
                    cpu_batch=found["cpu_batch"] + extra,
                    wall_batch=found["wall_batch"] + extra)  # fmt: skip

    def rrc(self, rounds: int) -> dict:
        """RRC after the greedy row's tours; its times include the greedy decoding's."""
        greedy = self.earlier("greedy")
        points = list(self.test.points)
        closed = [np.append(t, t[0]) for t in greedy["tours"]]  # open tours, closed again
        tours, cpu, wall = clocked(fm.rrc_tours, self.loaded, points, closed, rounds)
        alone = [
            clocked(fm.rrc_tours, self.loaded, [p], [t], rounds)[1]
            for p, t in zip(points[: self.args.single], closed, strict=False)
        ]
        return dict(
            tours=[fm.open_tour(t) for t in tours],
            cpu_single=greedy["cpu_single"] + float(np.mean(alone)),
            cpu_batch=greedy["cpu_batch"] + cpu / len(points),
            wall_batch=greedy["wall_batch"] + wall / len(points),
        )


def chosen(methods: list[fm.Method], size: int, args: argparse.Namespace) -> list[fm.Method]:
    """The methods that run at ``size`` (each one's ``max_n``, unless ``--all-methods``): Kool
    rows only with a checkout, LKH-3 only with elkai."""
    picked = [m for m in methods if args.all_methods or m.max_n is None or size <= m.max_n]
    picked = [m for m in picked if size >= m.min_n]
    if args.only:
        picked = [
            m
            for m in picked
            if m.family in REFERENCE_FAMILIES or any(fnmatch(m.name, p) for p in args.only)
        ]
    if not args.kool_ok:
        picked = [m for m in picked if m.family != "kool"]
    if not args.lkh_ok:
        picked = [m for m in picked if m.family != "lkh"]
    return picked


def measure_set(test: TestSet, args: argparse.Namespace, models: dict, methods: list) -> list[dict]:
    """Every chosen method's row on ``test``, printed as each finishes (the reference solvers
    first: on uniform sets the per-instance shorter of their tours is the reference).
    ``models``: the loaded ptrnet models by ``--ptrnet-model`` name, None the bundled folder."""
    runner = Runner(test, args, models)
    picked = chosen(methods, runner.size, args)
    found = {m.name: runner.run(m) for m in picked if m.family in REFERENCE_FAMILIES}
    refs, note = test.refs, "proven optima, TSPLIB EUC_2D lengths"
    if not test.rounded:
        refs, wins = best_reference({k: test.lengths(v["tours"]) for k, v in found.items()})
        shares = ", ".join(f"{k} {v}/{len(refs)}" for k, v in wins.items())
        note = f"per-instance shortest of the solvers (instances at it: {shares})"
    rows = []
    for method in picked:
        result = found.get(method.name) or runner.run(method)
        row = make_row(test, method, result, refs, args)
        row["reference"] = note
        emit(row, args)
        rows.append(row)
    return rows


def make_row(test: TestSet, method, result: dict, refs: np.ndarray, args) -> dict:
    """The JSON row of one method on one test set."""
    count = len(result["tours"])
    alone = count if not method.batched else min(args.single, count)
    return dict(
        set=test.name, family=method.family, method=method.name, count=count, single=alone,
        gap=round(float(gaps_pct(test.lengths(result["tours"]), refs).mean()), 4),
        s_single=round(result["cpu_single"], 6), per_s_batch=round(1 / result["cpu_batch"], 4),
        wall_s_batch=round(result["wall_batch"], 6), threads=torch.get_num_threads(),
        cpu=cpu_model(), load_avg=round(os.getloadavg()[0], 1),
    )  # fmt: skip


def emit(row: dict, args: argparse.Namespace) -> None:
    """Print ``row`` as a JSON line and append it to ``OUT/rows.jsonl``."""
    line = json.dumps(row)
    print(line, flush=True)
    with open(Path(args.out) / "rows.jsonl", "a") as out:
        out.write(line + "\n")


def report(rows: list[dict], out: Path, plots: Path) -> None:
    """``OUT/table.md`` (the tables, each set's best gap per family within time budgets and
    ptrnet's best within each peer row's time) and one plot per test set in ``plots``."""
    checks = "\n".join(f"- {x}" for x in budget_lines(rows))
    budgets = "\n\n".join(
        f"{name}, {label}:\n\n{budget_table(rows, name, key)}"
        for name in dict.fromkeys(r["set"] for r in rows)
        for key, label in (("s_single", "batch of 1"), ("s_batch", "batch"))
    )
    text = f"{pivot_table(rows)}\n\n{markdown_table(rows)}\n\n{budgets}\n\n{checks}"
    (out / "table.md").write_text(text + "\n")
    print("\n" + text)
    for name in dict.fromkeys(r["set"] for r in rows):
        slug = "tsplib" if name == "tsplib" else "n" + name.split("=")[-1].strip()
        plot_set(rows, name, plots / f"frontier_{slug}.png")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    from ptrnet.cli.common import positive_int

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add = parser.add_argument
    add("--n", type=positive_int, nargs="+", default=[20, 50, 100, 200, 500, 1000])
    add("--count", type=positive_int, help="instances per size (default: default_count)")
    add("--single", type=positive_int, default=2, help="instances decoded alone per model row")
    add("--rrc", type=positive_int, nargs="+", default=[10, 30, 100], help="RRC rounds")
    add("--tsplib", action="store_true", help="also the 29 bundled TSPLIB instances")
    add("--lkh-runs", type=positive_int, help="elkai runs (default 10 to n = 200, 1 beyond)")
    add("--kool", default=os.environ.get("KOOL_CHECKOUT"), metavar="PATH")
    add("--all-methods", action="store_true", help="run every method at every size")
    add(
        "--ptrnet-model",
        action="append",
        default=[],
        metavar="NAME=MODEL",
        help="another ptrnet model or folder beside the bundled one (repeatable), at sizes "
        "LO-HI if given: its greedy and multi-start rows, each also + or-opt, named NAME ...",
    )
    add(
        "--only",
        nargs="+",
        metavar="PATTERN",
        help="only the rows whose names match a pattern (fnmatch: 'light *', 'kool*')",
    )
    add("--quick", action="store_true", help="smoke test: n 20 50, 2 instances, 1 alone")
    add("--out", required=True, metavar="DIR", help="rows.jsonl, table.md, the plots")
    add("--plots", metavar="DIR", help="where the plots go (default: --out)")
    add("--report", metavar="ROWS.jsonl", help="only redraw table and plots from saved rows")
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.count, args.single, args.rrc, args.lkh_runs = [20, 50], 2, 1, [10], 1
    return args


def extra_models(specs: list[str]) -> dict[str, tuple[str, tuple[int, int | None]]]:
    """``--ptrnet-model NAME=MODEL[@LO-HI]`` values -> {NAME: (MODEL, (LO, HI))}: the model's
    rows run at test sets of LO <= n <= HI (TSPLIB: its largest n; default every n). The
    bundled folder's rows keep their plain names, so every other model needs a NAME.

    Raises:
        BenchError: a spec without NAME, a name given twice or not a plain word, or sizes
            that are not LO-HI."""
    from ptrnet.tasks import SizeRange

    models = {}
    for name, spec in (parse_models(specs) if specs else {}).items():
        if name == "ptrnet":
            raise BenchError("--ptrnet-model needs NAME=MODEL (the bundled folder always runs)")
        path, _, sizes = spec.partition("@")
        try:
            size = SizeRange.parse(sizes) if sizes else None
        except ValueError as err:
            raise BenchError(f"--ptrnet-model {name}={spec}: {err}") from None
        models[name] = (path, (size.lo, size.hi) if size else (1, None))
    return models


def check_optional(args: argparse.Namespace) -> None:
    """Sets ``kool_ok`` and ``lkh_ok``, with a note on stderr for what is left out."""
    try:
        model_dir(args.kool, 20)
        args.kool_ok = True
    except BenchError as err:
        args.kool_ok = False
        print(f"bench_frontier: Kool rows left out: {err}", file=sys.stderr)
    try:
        import elkai  # noqa: F401

        args.lkh_ok = True
    except ImportError:
        args.lkh_ok = False
        print("bench_frontier: LKH-3 rows left out: pip install elkai", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    out, plots = Path(args.out), Path(args.plots or args.out)
    out.mkdir(parents=True, exist_ok=True)
    plots.mkdir(parents=True, exist_ok=True)
    if args.report:
        saved = Path(args.report).read_text().splitlines()
        report([json.loads(x) for x in saved if x], out, plots)
        return
    torch.set_num_threads(1)
    check_optional(args)
    from ptrnet.inference import load_model, predict
    from ptrnet.solvers.or_opt import two_opt_or_opt
    from ptrnet.solvers.tsp_heuristics import two_opt

    extra = extra_models(args.ptrnet_model)
    models = {None: load_model(None, "tsp")}
    models |= {name: load_model(path, "tsp") for name, (path, _) in extra.items()}
    methods, rows = fm.methods(args.rrc, {name: sizes for name, (_, sizes) in extra.items()}), []
    (out / "rows.jsonl").write_text("")
    warm = uniform_set(20, 1).points
    for loaded in models.values():  # the first call's one-off costs stay out of every row
        predict(loaded, "tsp", warm)
    for search in (two_opt, two_opt_or_opt):  # each compiled (or loaded from its cache) now
        search(np.ones((5, 5)) - np.eye(5), np.arange(5))
    for test in test_sets(args):
        rows += measure_set(test, args, models, methods)
    report(rows, out, plots)


def test_sets(args: argparse.Namespace) -> Iterator[TestSet]:
    """The uniform sets in ``--n`` order, TSPLIB (51-200 cities) after the last one of at
    most 200 cities, so that a run stopped during the large sizes has it."""
    sizes = list(args.n)
    cut = sum(1 for n in sizes if n <= 200) if sizes == sorted(sizes) else len(sizes)
    for i, n in enumerate(sizes):
        if i == cut and args.tsplib:
            yield load_test("tsplib")
        yield uniform_set(n, args.count or default_count(n))
    if args.tsplib and cut == len(sizes):
        yield load_test("tsplib")


if __name__ == "__main__":
    main()
