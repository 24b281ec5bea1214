"""Vehicle routing beside Kool et al.: a ptrnet CVRP model and their public pretrained CVRP
attention models on the same held-out instances, in one process on one thread: each row's mean
gap to PyVRP, its valid rate, its paired difference from Kool's greedy, instances per second.

    python benchmarks/bench_cvrp.py --model RUN_DIR --kool /tmp/attention-learn-to-route

Instances: the labelled files ``DIR/cvrp20.txt`` (200 instances of 20 customers, capacity 30)
and ``DIR/cvrp50.txt`` (100 of 50, capacity 40) of ``--references DIR`` (default
``docs/beyond-runs/cvrp-kool``, where its README.md states the ``ptrnet generate`` commands:
seed 5656, the test stream 5, PyVRP's routes within its iteration budget, seed 0, as labels);
``--count K`` takes the first K of each. A reference length is the length of the file's routes.

Rows, at each ``--n``: every ``--decoding`` of each ``--model [NAME=]MODEL`` (a run folder or
checkpoint; default the bundled cvrp folder) through ``ptrnet.inference.predict``: ``greedy``,
``beam5`` (the most likely of 5 beams), ``beam5-shortest`` (the shortest of them),
``multistart-shortest`` (greedy from every start, the shortest kept), ``views8`` (eight-view
search), ``multistart8-shortest`` (multistart on the square's eight symmetries) and
``multistart8-shortest+route-search`` (then the task's route search, as ``ptrnet predict cvrp
--route-search``: 2-opt within routes, relocations and swaps between them, timed with the
decoding); a decoding the task refuses today is a row ``refused: <reason>``. Then Kool's greedy
with their model of the nearest size (their ``cvrp_20`` at n = 20, ``cvrp_50`` at n = 50), from
the checkout ``--kool PATH`` (or ``$KOOL_CHECKOUT``; without one their rows are left out, with a
note). Their routes are measured with ptrnet's ``routes_length`` and checked against the lengths
their own code returns (the header states the largest difference). They published no eight-view
or multi-start decoding for CVRP; it is not invented here.

Valid: every customer served once, no route over the capacity (``routes_problem``). Gap: length
/ reference - 1 over the valid answers. Paired: the mean over instances both answered validly
of the row's gap less Kool's greedy gap, with its standard error. Instances per second: the
CPU time (``time.process_time``, one torch thread) of decoding the whole set together (after an
untimed warm-up on two instances). Output: a Markdown table on stdout (the CPU from ``lscpu``
in its header) and, with ``--json FILE``, one JSON line per row.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
try:
    from benchmarks.bench_kool import cpu_model
    from benchmarks.kool_models import KOOL_CVRP_SIZES, BenchError, kool_cvrp_greedy, load_kool
    from benchmarks.kool_models import model_dir as kool_model_dir
    from benchmarks.paired_gap import paired
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from bench_kool import cpu_model
    from kool_models import KOOL_CVRP_SIZES, BenchError, kool_cvrp_greedy, load_kool
    from kool_models import model_dir as kool_model_dir
    from paired_gap import paired

from ptrnet.decoding.options import DecodeOptionError, DecodeOptions
from ptrnet.io.errors import InputError, UsageError
from ptrnet.solvers.cvrp import routes_length, routes_problem, split_routes

DEFAULT_REFERENCES = Path(__file__).resolve().parent.parent / "docs" / "beyond-runs" / "cvrp-kool"
KOOL_GREEDY = "kool greedy"
#: ptrnet's decodings by row name (``ptrnet eval``'s options of the same words).
DECODINGS = {
    "greedy": DecodeOptions(),
    "beam5": DecodeOptions("beam", beam_width=5),
    "beam5-shortest": DecodeOptions("beam", beam_width=5, pick="shortest"),
    "multistart-shortest": DecodeOptions(multistart=1, pick="shortest"),
    "views8": DecodeOptions(search_views=8),
    "multistart8-shortest": DecodeOptions(multistart=8, pick="shortest"),
    "multistart8-shortest+route-search": DecodeOptions(multistart=8, pick="shortest"),
}
#: A decoding whose name ends so runs the task's route search after it (``--route-search``).
SEARCHED = "+route-search"
WARM = 2  # instances decoded once, untimed, before each row's timed run


@dataclass(frozen=True)
class CvrpSet:
    """Held-out instances of ``n`` customers: rows (n + 1, 4) as ptrnet reads them (x, y,
    demand, capacity; the depot first) and the length of each one's reference routes."""

    n: int
    rows: list[np.ndarray]
    refs: np.ndarray  # (count,)


@dataclass
class Row:
    """One method at one n: per-instance lengths (nan where not valid) and its CPU seconds for
    the whole set; or ``refused``, the reason it did not run."""

    n: int
    method: str
    lengths: np.ndarray = field(default_factory=lambda: np.zeros(0))
    cpu_s: float = 0.0
    wall_s: float = 0.0
    refused: str | None = None


def reference_path(folder: str | Path, n: int) -> Path:
    """The labelled file of ``n`` customers in ``folder``."""
    return Path(folder) / f"cvrp{n}.txt"


def load_references(path: str | Path, count: int | None = None) -> CvrpSet:
    """The first ``count`` (None: every) instances of a labelled cvrp file (``ptrnet generate
    cvrp``'s output) and the lengths of their label routes.

    Raises:
        BenchError: a missing file or instances of several sizes.
        InputError: a file ptrnet cannot read as labelled cvrp instances (a label that does not
            serve its instance among them).
    """
    from ptrnet.io.paper_format import read_examples
    from ptrnet.tasks import get_task

    path = Path(path)
    if not path.is_file():
        raise BenchError(f"{path}: no reference file (docs/beyond-runs/cvrp-kool/README.md)")
    examples = read_examples(str(path), get_task("cvrp"))[:count]
    sizes = {len(e.points) - 1 for e in examples}
    if len(sizes) != 1:
        raise BenchError(f"{path}: expected instances of one size, got sizes {sorted(sizes)}")
    refs = np.array([served_length(e.points, e.seq) for e in examples])  # read as valid
    return CvrpSet(sizes.pop(), [np.asarray(e.points, float) for e in examples], refs)


def served_length(rows: np.ndarray, seq: np.ndarray) -> float:
    """The length of the routes ``seq`` (0 the depot; depot visits at either end or doubled
    drive no route) on the instance ``rows``, or nan unless they serve every customer once
    within the capacity."""
    rows = np.asarray(rows, dtype=np.float64)
    routes = split_routes(seq)
    demands, capacity = np.rint(rows[:, 2]).astype(np.int64), int(rows[0, 3])
    if routes_problem(demands, capacity, routes) is not None:
        return float("nan")
    return routes_length(rows[:, :2], routes)


def clocked(decode: Callable[[list[np.ndarray]], list[np.ndarray]], rows: list) -> tuple:
    """(decode(rows), CPU seconds, wall seconds), after an untimed call on the first
    :data:`WARM` instances."""
    decode(rows[:WARM])
    cpu, wall = time.process_time(), time.perf_counter()
    found = decode(rows)
    return found, time.process_time() - cpu, time.perf_counter() - wall


def ptrnet_row(loaded, name: str, decoding: str, test: CvrpSet) -> Row:
    """The row of one decoding of a loaded ptrnet model, or its refusal."""
    from ptrnet.tasks import get_task

    method = f"{name} {decoding}"
    options = DECODINGS[decoding]
    try:
        options.for_task(get_task("cvrp"))
        found, cpu, wall = clocked(lambda r: decoded(loaded, r, decoding), test.rows)
    except (DecodeOptionError, UsageError) as err:
        return Row(test.n, method, refused=str(err).splitlines()[0])
    lengths = np.array([served_length(r, s) for r, s in zip(test.rows, found, strict=True)])
    return Row(test.n, method, lengths, cpu, wall)


def decoded(loaded, rows: list[np.ndarray], decoding: str) -> list[np.ndarray]:
    """``predict``'s answers for ``rows`` under the named decoding, then the route search (as
    ``ptrnet predict cvrp --route-search``) for a name ending in :data:`SEARCHED`."""
    from ptrnet.inference import predict
    from ptrnet.searches.plan import SearchPlan
    from ptrnet.searches.run import run_searches
    from ptrnet.tasks import get_task

    found = predict(loaded, "cvrp", rows, DECODINGS[decoding])
    if not decoding.endswith(SEARCHED):
        return found
    task = get_task("cvrp")
    plan = SearchPlan(local=("route_search",)).for_task(task)
    return run_searches(loaded, task, rows, found, plan)


def kool_size(n: int) -> int:
    """Customers of Kool's pretrained CVRP model nearest ``n`` (ties: the smaller)."""
    return min(KOOL_CVRP_SIZES, key=lambda size: (abs(size - n), size))


def kool_row(model: torch.nn.Module, test: CvrpSet) -> tuple[Row, float]:
    """Kool's greedy row and the largest relative difference between their lengths and
    ``routes_length``'s on their routes."""
    found, cpu, wall = clocked(lambda r: kool_cvrp_greedy(model, r), test.rows)
    sequences, theirs = found
    lengths = np.array([served_length(r, s) for r, s in zip(test.rows, sequences, strict=True)])
    agree = float(np.nanmax(np.abs(theirs / lengths - 1))) if len(lengths) else 0.0
    return Row(test.n, KOOL_GREEDY, lengths, cpu, wall), agree


def summary(row: Row, refs: np.ndarray, kool: Row | None) -> dict:
    """The row's numbers: count, valid rate, mean gap (valid answers), the paired difference
    from ``kool`` (both valid) with its standard error, instances per CPU second."""
    out = dict(n=row.n, method=row.method, count=len(refs))
    if row.refused:
        return out | dict(refused=row.refused)
    gaps = row.lengths / refs - 1  # (count,), nan where not valid
    valid = ~np.isnan(gaps)
    out |= dict(
        valid_rate=float(valid.mean()),
        gap=float(gaps[valid].mean()) if valid.any() else float("nan"),
        per_s=len(refs) / row.cpu_s if row.cpu_s > 0 else float("inf"),
        cpu_s=round(row.cpu_s, 4),
        wall_s=round(row.wall_s, 4),
    )
    if kool is not None and row is not kool:
        kool_gaps = kool.lengths / refs - 1
        both = valid & ~np.isnan(kool_gaps)
        if both.any():
            pair = paired(gaps[both], kool_gaps[both])
            out |= dict(vs_kool=float(pair.diff), vs_kool_se=float(pair.stderr))
    return out


def percent(value: float | None) -> str:
    """``4.52%``, or ``-`` for none."""
    return "-" if value is None or np.isnan(value) else f"{100 * value:.2f}%"


def table(summaries: Sequence[dict]) -> str:
    """The Markdown table of :func:`summary` rows; a refused row states why in its gap cell."""
    lines = [
        "| n | method | count | valid | gap to PyVRP | minus Kool greedy (paired) | inst/s |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in summaries:
        if "refused" in s:
            lines.append(f"| {s['n']} | {s['method']} | {s['count']} | - | refused: "
                         f"{s['refused']} | - | - |")  # fmt: skip
            continue
        paired_cell = "-"
        if "vs_kool" in s:
            paired_cell = f"{100 * s['vs_kool']:+.2f} ± {100 * s['vs_kool_se']:.2f} pts"
        lines.append(
            f"| {s['n']} | {s['method']} | {s['count']} | {s['valid_rate']:.1%} | "
            f"{percent(s['gap'])} | {paired_cell} | {s['per_s']:.1f} |"
        )
    return "\n".join(lines)


def lscpu_model() -> str:
    """``lscpu``'s ``Model name``, else /proc/cpuinfo's (:func:`bench_kool.cpu_model`)."""
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        text = ""
    found = re.search(r"^Model name:\s*(.+)$", text, re.MULTILINE)
    return found.group(1).strip() if found else cpu_model()


def parse_models(specs: Sequence[str] | None) -> dict[str, str]:
    """``--model [NAME=]MODEL`` values -> {NAME: MODEL}; a bare MODEL is named ``ptrnet``,
    none at all the bundled folder (``bundled``).

    Raises:
        BenchError: a name given twice or not a plain word.
    """
    models: dict[str, str] = {}
    for spec in specs or ["bundled"]:
        name, _, model = spec.rpartition("=")
        name = name or "ptrnet"
        if not re.fullmatch(r"[A-Za-z_][\w-]*", name) or name in models or name == "kool":
            raise BenchError(f"--model {spec}: NAME must be a new word other than kool")
        models[name] = model
    return models


def run(args: argparse.Namespace) -> list[dict]:
    """Every row at every n, printed as each size finishes."""
    from ptrnet.inference import load_model

    models = {
        name: load_model(None if path == "bundled" else path, "cvrp")
        for name, path in parse_models(args.model).items()
    }
    kool_ok = kool_available(args.kool)
    print(header(kool_ok), flush=True)
    summaries = []
    for n in args.n:
        test = load_references(reference_path(args.references, n), args.count)
        rows = [ptrnet_row(m, name, d, test) for name, m in models.items() for d in args.decoding]
        kool = None
        if kool_ok:
            kool, agree = kool_row(load_kool(args.kool, kool_size(n), "cvrp"), test)
            rows.append(kool)
            note = f"their lengths and routes_length's on their routes differ by {agree:.1e}"
            print(f"# n = {n}: Kool's cvrp_{kool_size(n)}; {note} at most (relative)", flush=True)
        found = [summary(row, test.refs, kool) for row in rows]
        print("\n" + table(found) + "\n", flush=True)
        summaries += found
    return summaries


def kool_available(checkout: str | None) -> bool:
    """Whether Kool's CVRP models can run; a note on stderr when not."""
    try:
        kool_model_dir(checkout, 20, "cvrp")
        return True
    except BenchError as err:
        print(f"bench_cvrp: Kool rows left out: {err}", file=sys.stderr)
        return False


def header(kool_ok: bool) -> str:
    """The lines above the tables: CPU, threads, load, what the rows are."""
    kool = "Kool et al.'s greedy beside it" if kool_ok else "no Kool checkout, no Kool rows"
    return (
        f"# CPU: {lscpu_model()} (lscpu), torch threads {torch.get_num_threads()}, load average"
        f" {os.getloadavg()[0]:.1f}; gaps to PyVRP's routes; {kool}"
    )


def main(argv: Sequence[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", metavar="[NAME=]MODEL")
    parser.add_argument("--kool", default=os.environ.get("KOOL_CHECKOUT"), metavar="PATH")
    parser.add_argument("--n", type=int, nargs="+", default=[20, 50])
    parser.add_argument("--count", type=int, help="the first K instances of each file")
    parser.add_argument("--decoding", nargs="+", default=list(DECODINGS), choices=DECODINGS)
    parser.add_argument("--references", default=str(DEFAULT_REFERENCES), metavar="DIR")
    parser.add_argument("--json", metavar="FILE", help="one JSON line per row")
    args = parser.parse_args(argv)
    if args.count is not None and args.count < 1:
        parser.error(f"--count must be at least 1, got {args.count}")
    torch.set_num_threads(1)
    try:
        summaries = run(args)
    except (BenchError, InputError, UsageError, OSError) as err:
        raise SystemExit(f"bench_cvrp: error: {str(err).splitlines()[0]}") from None
    if args.json:
        Path(args.json).write_text("".join(json.dumps(s) + "\n" for s in summaries))
    return summaries


if __name__ == "__main__":
    main()
