"""``ptrnet reproduce``: train (or reuse) the models of one of the paper's tables, evaluate them
with the paper's decoding and write DIR/TABLE.md (the paper's numbers beside ours) and
DIR/TABLE.json (raw metrics and the compute of every row).

Tables: table1 (convex hull, Ptr-Net and the LSTM baselines), table2 (TSP, with the A1/A2/A3
comparators), delaunay. Scales: dry-run (seconds; hidden 16, 4 steps, 20 test instances),
cpu (hours on a 2-core CPU; hidden 256, a step budget per model), paper (10 epochs of 1M pairs
per model). Runs already in DIR are reused when finished and resumed when not; --partial
writes the table from the runs there are, training nothing (e.g. while they train elsewhere).
Without --scale, the command prints the cpu scale's plan and its estimated compute and trains
only when --yes is given. See docs/reproduce.md.
"""

from __future__ import annotations

import argparse
import os
import sys

from ptrnet.cli.common import add_quiet_argument, threads_int
from ptrnet.data import PAPER_DIR
from ptrnet.io.errors import UsageError

DEFAULT_PAPER_DATA = str(PAPER_DIR)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "reproduce",
        help="reproduce a table of the paper",
        description=__doc__,
    )
    add = parser.add_argument
    add("table", metavar="TABLE", help="table1, table2 or delaunay")
    add(
        "--scale",
        help="dry-run, cpu or paper (default: cpu, after printing its plan and estimated "
        "compute: training starts only with --yes)",
    )
    add("--yes", action="store_true", help="without --scale: train at the cpu scale")
    add("--out", metavar="DIR", help="output folder (default: runs/reproduce-SCALE)")
    add(
        "--threads",
        type=threads_int,
        metavar="T",
        help="torch threads and labelling processes (default: the idle cores)",
    )
    add(
        "--paper-data",
        metavar="DIR",
        help="folder with the paper's released test files (default: the copies shipped in "
        "ptrnet/data/paper; a folder without them means generated test sets, noted in the table)",
    )
    add(
        "--partial",
        action="store_true",
        help="train nothing: write the table from the runs DIR holds now (unfinished ones at "
        "their best checkpoint so far; rows without a run stay empty, their test sets and "
        "comparators not made)",
    )
    add("--device", default="auto", help="auto (a CUDA GPU if torch sees one), cpu, cuda or cuda:N")
    add_quiet_argument(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ptrnet.compute.devices import resolve_device
    from ptrnet.reproduce.plans import get_scale, get_table
    from ptrnet.reproduce.run import Reproduction

    try:
        plan, scale = get_table(args.table), get_scale(args.scale or "cpu")
        resolve_device(args.device)
    except ValueError as err:
        raise UsageError(str(err)) from None
    paper_data = paper_data_folder(args.paper_data)
    if args.scale is None and not (args.yes or args.partial):
        print(describe_plan(plan, scale))
        return 0
    out = args.out or os.path.join("runs", f"reproduce-{scale.name}")
    writable_folder(out)
    log = (lambda _: None) if args.quiet else _note
    report = Reproduction(
        plan,
        scale,
        out,
        threads=args.threads,
        paper_data=paper_data,
        log=log,
        progress=not args.quiet,
        partial=args.partial,
        device=args.device,
    ).run()
    base = os.path.join(out, plan.name)
    log(f"{len(report['rows'])} rows; wrote {base}.md and {base}.json")
    return 0


def describe_plan(plan, scale) -> str:
    """The models ``plan`` trains at ``scale``, their budgets and the estimated compute, and
    how to start (``--yes``) or try it first (``--scale dry-run``)."""
    from ptrnet.reproduce.plans import describe_budget, estimate_hours

    width = max(len(m.name) for m in plan.models)
    lines = [f"ptrnet reproduce {plan.name}: {plan.title}, at the {scale.name} scale"]
    lines += [f"  {m.name:<{width}}  {m.arch}, n {m.sizes}; {describe_budget(m, scale)}"
              for m in plan.models]  # fmt: skip
    hours = estimate_hours(plan, scale)
    lines += [
        f"Estimated compute: about {hours:.1f} hours of one CPU thread (measured step times, "
        "good to about ±50%; runs already finished in the output folder are reused).",
        f"Start it with: ptrnet reproduce {plan.name} --yes (or --scale {scale.name}); "
        f"try the whole pipeline in seconds with --scale dry-run.",
    ]
    return "\n".join(lines)


def writable_folder(path: str) -> None:
    """Create ``path`` if missing; raises UsageError unless it is a writable folder."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as err:
        raise UsageError(f"cannot use {path} as the output folder: {err.strerror}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"cannot use {path} as the output folder: not writable")


def paper_data_folder(path: str | None) -> str | None:
    """The folder of the paper's files: ``path`` (must exist), else the default if present."""
    if path is None:
        return DEFAULT_PAPER_DATA if os.path.isdir(DEFAULT_PAPER_DATA) else None
    if not os.path.isdir(path):
        raise UsageError(f"--paper-data {path}: no such folder")
    return path


def _note(message: str) -> None:
    print(f"ptrnet: {message}", file=sys.stderr)
