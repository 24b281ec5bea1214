"""``ptrnet demo``: the bundled models on fresh instances of every task, next to the exact
solvers and the paper's numbers; writes ``demo.md`` and a PNG gallery to ``--out``.

The first table shows what a user gets: every output obeys the task's rules (a closed convex
hull, a tour, a permutation), as ``ptrnet predict`` and the Python API decode by default. The
second decodes under the paper's protocol (hull and Delaunay unconstrained, ``--protocol
paper``) beside the paper's own Ptr-Net numbers."""

from __future__ import annotations

import argparse
import os
import sys
import time

from ptrnet.cli.common import (
    add_threads_argument,
    positive_int,
    seed_int,
    set_threads,
    task_argument,
)
from ptrnet.decoding.options import DEFAULT_BEAM_WIDTH
from ptrnet.io.atomic import atomic_write
from ptrnet.tasks import POINT_TASKS
from ptrnet.tasks.base import DEMO_SEED


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo", help="bundled models vs exact solvers vs the paper", description=__doc__
    )
    parser.add_argument("--out", default="ptrnet-demo", help="output folder (default: %(default)s)")
    parser.add_argument(
        "--tasks",
        nargs="+",
        type=task_argument,
        choices=tuple(POINT_TASKS),
        default=None,
        metavar="TASK",
        help="tasks to run (default: every task with a bundled model; a task you trained "
        "yourself needs its model: ptrnet eval TASK FILE --model RUN)",
    )
    parser.add_argument(
        "--count",
        type=positive_int,
        default=100,
        help="fresh instances per task and n (default: %(default)s)",
    )
    parser.add_argument(
        "--seed", type=seed_int, default=DEMO_SEED, help="seed of the fresh instances"
    )
    parser.add_argument(
        "--beam-width", type=positive_int, default=DEFAULT_BEAM_WIDTH, help="beam search width"
    )
    parser.add_argument(
        "--average-views",
        type=int,
        default=1,
        metavar="{1,2,4}",
        help="with 2 or 4 (or --search-views 8), also a beam row per size of the tasks that can "
        "use them: 2 or 4 rotations averaged at every step (hull, TSP; ptrnet eval --help)",
    )
    parser.add_argument(
        "--search-views",
        type=int,
        default=1,
        metavar="{1,8}",
        help="8: that row is an eight-view search (hull, TSP, Delaunay; with --average-views 4 "
        "hull and TSP only, each search averaging four rotations; 13-40x a one-view beam)",
    )
    parser.add_argument("--dry-run", action="store_true", help="5 instances per task and n")
    add_threads_argument(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ptrnet.reproduce.demo import format_report, run_demo

    set_threads(args.threads)
    count = 5 if args.dry_run else args.count
    os.makedirs(args.out, exist_ok=True)
    gallery = os.path.join(args.out, "gallery.png")
    start = time.perf_counter()
    views = {"average_views": args.average_views, "search_views": args.search_views}
    rows = run_demo(args.tasks, count, args.seed, args.beam_width, gallery=gallery, views=views)
    table = format_report(rows)
    with atomic_write(os.path.join(args.out, "demo.md")) as handle:
        handle.write(f"{table}\n")
    print(table)
    print(
        f"\n{count} fresh instances per row; {time.perf_counter() - start:.1f} s in all. "
        f"Wrote {os.path.join(args.out, 'demo.md')} and {gallery}.",
        file=sys.stderr,
    )
    return 0
