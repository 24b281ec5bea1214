"""``ptrnet eval``: decode a labelled dataset with a trained model and print the paper's metrics.

The metrics are those of ``ptrnet score`` (same keys, same ``--json`` object), computed on the
model's decoded outputs; no prediction file is written (``ptrnet predict`` writes one).
Constraints default to the paper's choice per task: ``task`` for sort and TSP (valid
permutations and tours), ``none`` for convex hull and Delaunay. ``--dry-run`` evaluates only the
first 16 instances.

For task tsp, DATA may instead be one or more TSPLIB ``.tsp`` files: each is decoded on its points
scaled into the unit square and its tour measured under TSPLIB's EUC_2D rule against the proven
optimum from ``--optimal`` (default: ``optimal.txt`` beside the first file); ``--two-opt``
improves the model's tour by 2-opt first.
"""

from __future__ import annotations

import argparse
import json
import time

from ptrnet.cli.common import (
    add_device_argument,
    add_task_argument,
    add_threads_argument,
    load_model_on,
    positive_int,
    set_threads,
    task_named,
)
from ptrnet.cli.score import format_table
from ptrnet.io.errors import UsageError
from ptrnet.tasks import Task, get_task
from ptrnet.tasks.symmetry import VIEW_COUNTS

NAME = "eval"
DRY_RUN_COUNT = 16


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        NAME, help="evaluate a trained model on a labelled dataset", description=__doc__
    )
    add_task_argument(parser)
    parser.add_argument(
        "data", metavar="DATA", nargs="+", help="labelled instances (paper format) or TSPLIB .tsp"
    )
    parser.add_argument(
        "--optimal",
        metavar="FILE",
        help="TSPLIB optima, 'name : length' lines (default: optimal.txt beside the "
        "first file, else the shipped optima of ptrnet/data/tsplib)",
    )
    parser.add_argument("--two-opt", action="store_true", help="TSPLIB: 2-opt the model's tour")
    add_model_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--dry-run", action="store_true", help=f"only the first {DRY_RUN_COUNT} instances"
    )
    parser.set_defaults(run=run)


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """``--model`` and the decoding options shared by ``eval`` and ``predict``."""
    add = parser.add_argument
    add(
        "--model",
        metavar="MODEL",
        help="a run directory, a checkpoint file or 'bundled' (default: the task's bundled model)",
    )
    add("--decode", choices=("greedy", "sample", "beam"), default="greedy", help="strategy")
    add("--beam-width", type=positive_int, default=5, metavar="K", help="beam width")
    add(
        "--pick",
        choices=("likely", "shortest"),
        default="likely",
        help="with --decode beam: the most likely beam (default, the paper's), or for tsp the "
        "shortest tour among the beams",
    )
    add(
        "--views",
        type=int,
        choices=VIEW_COUNTS,
        default=1,
        help="2 or 4 (convex_hull, tsp): decode with the model's mean log-probabilities over "
        "that many rotations of each instance; 8 (also delaunay): search the instance's "
        "symmetric copies too and return the answer all eight views find most likely "
        "(1 = the model alone, the paper's decoding)",
    )
    add("--constraints", choices=("none", "task"), help="default: the task's (see above)")
    add("--seed", type=int, default=0, help="seed for --decode sample")
    add("--batch-size", type=positive_int, default=256, metavar="B", help="decoding batch")
    add_threads_argument(parser)
    add_device_argument(parser)


def decode_options(args: argparse.Namespace, task: Task) -> dict[str, object]:
    """Keyword arguments of :func:`ptrnet.inference.predict` from the parsed options.

    Raises:
        UsageError: ``--pick shortest`` without ``--decode beam`` or for a task other than tsp,
            or a ``--views`` count the task cannot use (:func:`ptrnet.decoding.views.check_views`).
    """
    from ptrnet.decoding.views import check_views
    from ptrnet.evaluation.evaluate import beam_reranker

    try:
        beam_reranker(task, args.decode, args.pick)
    except ValueError as err:
        raise UsageError(f"--pick {args.pick}: {err}") from None
    try:
        check_views(task, args.views)
    except ValueError as err:
        raise UsageError(f"--views {args.views}: {err}") from None
    return {
        "decode": args.decode,
        "beam_width": args.beam_width,
        "constraints": args.constraints,
        "seed": args.seed,
        "batch_size": args.batch_size,
        "pick": args.pick,
        "views": args.views,
    }


def describe_decoding(task: Task, options: dict[str, object]) -> str:
    """The decoding ``options`` (of :func:`decode_options`) in words, defaults resolved."""
    from ptrnet.evaluation.evaluate import default_constraints

    how = {"greedy": "greedy", "sample": f"sampling (seed {options['seed']})"}
    words = how.get(str(options["decode"]))
    if words is None:
        pick = "shortest tour" if options["pick"] == "shortest" else "most likely beam"
        words = f"beam search, width {options['beam_width']}, {pick}"
    views = options["views"]
    constraints = options["constraints"] or default_constraints(task.name)
    return f"{words}; {views} view{'s' if views != 1 else ''}; constraints {constraints}"


def report_run(args: argparse.Namespace, loaded, text: str, count: int, seconds: float) -> None:
    """Print ``text`` (the results), then the model, the decoding and the elapsed time: on
    stdout under a table, on stderr beside ``--json`` (whose stdout stays one object)."""
    import sys

    task = get_task(loaded.task)
    rows = [
        (
            "model",
            f"{loaded.path} (step {loaded.step:,}, {next(loaded.model.parameters()).device})",
        ),
        ("decoding", describe_decoding(task, decode_options(args, task))),
        ("time", f"{count:,} instance{'s' if count != 1 else ''} in {seconds:.2f} s"),
    ]
    print(text)
    if args.json:
        print("ptrnet: " + "; ".join(f"{k} {v}" for k, v in rows), file=sys.stderr)
    else:
        print("\n".join(f"{key:<8}  {value}" for key, value in rows))


def run(args: argparse.Namespace) -> int:
    from itertools import islice

    from ptrnet.evaluation.score import json_safe, score_examples
    from ptrnet.inference import predict
    from ptrnet.io.instances import is_tsplib
    from ptrnet.io.paper_format import Example, iter_examples

    set_threads(args.threads)
    task = task_named(args.task)
    options = decode_options(args, task)  # option errors before any file is read
    loaded = load_model_on(args.model, task, args.device)
    start = time.perf_counter()
    if any(is_tsplib(path) for path in args.data):
        return run_tsplib(args, loaded, start)
    if len(args.data) != 1:
        raise UsageError("give one paper-format DATA file (several files only for TSPLIB)")
    args.data = args.data[0]
    limit = DRY_RUN_COUNT if args.dry_run else None
    refs = list(islice(iter_examples(args.data, task, "reference"), limit))
    seqs = predict(loaded, task, [r.points for r in refs], **options)
    preds = [Example(r.points, s, r.line) for r, s in zip(refs, seqs, strict=True)]
    metrics = score_examples(task, refs, preds)
    text = json.dumps(json_safe(metrics)) if args.json else format_table(task.name, metrics)
    report_run(args, loaded, text, len(refs), time.perf_counter() - start)
    return 0


def run_tsplib(args: argparse.Namespace, loaded, start: float) -> int:
    """``eval tsp FILE.tsp ...``: gaps to the proven optima, one row per file; ``start`` is
    when decoding began (``time.perf_counter``)."""
    import os

    from ptrnet.evaluation.tsplib_eval import evaluate_tsplib, format_results
    from ptrnet.io.instances import is_tsplib
    from ptrnet.io.tsplib import read_optimal

    if args.task != "tsp" or not all(is_tsplib(path) for path in args.data):
        raise UsageError("TSPLIB .tsp files are tsp instances; do not mix them with other files")
    optimal_path = args.optimal or os.path.join(os.path.dirname(args.data[0]), "optimal.txt")
    results = evaluate_tsplib(
        loaded,
        args.data,
        read_optimal(optimal_path),
        improve=args.two_opt,
        **decode_options(args, get_task("tsp")),
    )
    if args.json:
        text = json.dumps({"instances": [r.to_dict() for r in results]})
    else:
        text = format_results(results)
    report_run(args, loaded, text, len(results), time.perf_counter() - start)
    return 0
