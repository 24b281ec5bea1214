"""``ptrnet eval``: decode a dataset with a trained model and print the paper's metrics.

DATA is read as ``ptrnet predict`` reads its INPUT (paper format, one point per line, CSV,
.npy; ``--format``, ``--columns``). The references are the file's labels (paper format), else
the task's solver's, as ``ptrnet solve`` writes them (said on stderr).
The metrics are those of ``ptrnet score`` (same keys, same ``--json`` object), computed on the
model's decoded outputs; no prediction file is written (``ptrnet predict`` writes one).
Decoding follows the paper's protocol by default (``--protocol paper``): the task's rules for
sort and TSP (valid permutations and tours), none for convex hull and Delaunay, so the figures
compare with the paper's; ``--protocol valid`` scores what ``predict`` and the API give.
``--dry-run`` evaluates only the first 16 instances. Instances outside the unit square are
decoded on their image in it (aspect ratio kept) and measured in the file's units; a model
decodes at most 1000 points per instance.

For task tsp, DATA may instead be one or more TSPLIB ``.tsp`` files: each is decoded on its points
scaled into the unit square and its tour measured under TSPLIB's EUC_2D rule against the proven
optimum from ``--optimal`` (default: ``optimal.txt`` beside the first file, else the optima of
the 29 TSPLIB instances shipped in ptrnet/data/tsplib); ``--two-opt`` (any tsp file) 2-opts
each tour to a local optimum before it is measured, on TSPLIB's rounded lengths for these.
TSPLIB's published optimum of a name is used only for a file whose cities are the shipped
instance's, not for another file of that name; a file without a usable optimum (or whose stated
one its tour undercuts) is reported with its length and no gap, left out of the mean, with a
note on stderr saying why.

For a sentence task (copy), DATA is one file of ``SOURCE<TAB>TARGET`` lines and the metrics are
exact_match, token_accuracy, oov_recall and the mean p_gen on copied and on generated words;
``--decode greedy|beam``, ``--beam-width`` and ``--p-gen`` set the decoding, and the options of
point tasks (views, constraints, sampling, TSPLIB) are refused.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import TYPE_CHECKING

from ptrnet.cli.common import (
    DRY_RUN_COUNT,
    add_quiet_argument,
    add_task_argument,
    decode_progress,
    load_model_on,
    note,
    routes_text,
    set_threads,
)
from ptrnet.cli.decode_args import add_model_arguments, decode_options
from ptrnet.cli.inputs import (
    add_capacity_argument,
    add_input_arguments,
    located,
    measured_task,
    read_args,
    references,
    report,
)
from ptrnet.cli.kinds import add_kind_arguments, finish
from ptrnet.cli.score import format_table
from ptrnet.io.errors import UsageError
from ptrnet.tasks import POINT_TASKS, Task, get_task

if TYPE_CHECKING:
    from ptrnet.decoding.options import DecodeOptions

NAME = "eval"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        NAME, help="evaluate a trained model on a labelled dataset", description=__doc__
    )
    add_task_argument(parser)
    parser.add_argument(
        "data",
        metavar="DATA",
        nargs="+",
        help="instances in any layout predict reads (references: the file's labels, else "
        "the task's solver's; copy: SOURCE<TAB>TARGET lines) or TSPLIB .tsp files",
    )
    add_input_arguments(parser)
    add_capacity_argument(parser)
    parser.add_argument(
        "--optimal",
        metavar="FILE",
        help="TSPLIB optima, 'name : length' lines, each name once, each length a positive "
        "integer (default: optimal.txt beside the first file, else the shipped optima of "
        "ptrnet/data/tsplib, used only for files with the shipped instances' cities)",
    )
    add_model_arguments(parser, protocol="paper")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--dry-run", action="store_true", help=f"only the first {DRY_RUN_COUNT} instances"
    )
    add_quiet_argument(parser)
    add_kind_arguments(NAME, parser)
    finish(parser, NAME, run)


def describe_decoding(options: DecodeOptions, task: Task) -> str:
    """The decoding ``options`` (resolved for ``task`` by :func:`decode_options`) in words."""
    best = task.best_pick if options.pick == "shortest" else "most likely"
    words = options.card.words(options)  # the strategy's card: every registered one
    if options.multistart:
        starts = "every input" if task.rotated_starts else "every input but the first"
        words = f"multi-start greedy (a run from {starts})"
    if options.several:
        words = f"{words}, {best}"
    views = options.view_words
    window = ""  # None: the model's own per size, on the model line
    if options.window == 0:
        window = "; no window"
    elif options.window:
        window = f"; window {options.window} (n > {options.window})"
    return f"{words}; {views}{window}; {options.constraint_words}"


def report_run(
    args: argparse.Namespace, loaded, text: str, count: int, seconds: float, tsplib: bool = False
) -> None:
    """Print ``text`` (the results), then the model, the decoding and the elapsed time: on
    stdout under a table, on stderr beside ``--json`` (whose stdout stays one object);
    ``tsplib``: the tours were measured (and 2-opted) on TSPLIB's rounded lengths."""
    import sys

    from ptrnet.cli.search_args import search_plan

    device = next(loaded.model.parameters()).device
    task = get_task(loaded.task)
    searched = search_plan(args, task).words(task, "on TSPLIB lengths" if tsplib else None)
    polish = "".join(f"; then {words}" for words in searched)
    rows = [
        ("model", f"{loaded.path} (step {loaded.step:,}, {device}){routes_text(loaded)}"),
        ("decoding", describe_decoding(decode_options(args, task), task) + polish),
        ("time", f"{count:,} instance{'s' if count != 1 else ''} in {seconds:.2f} s"),
    ]
    print(text)
    if args.json and not args.quiet:
        print("ptrnet: " + "; ".join(f"{k} {v}" for k, v in rows), file=sys.stderr)
    elif not args.json:
        print("\n".join(f"{key:<8}  {value}" for key, value in rows))


def run(args: argparse.Namespace, task: Task) -> int:
    from ptrnet.cli.search_args import search_plan
    from ptrnet.evaluation.score import json_safe, score_examples
    from ptrnet.inference import predict
    from ptrnet.io.instances import is_tsplib
    from ptrnet.io.limits import MAX_MODEL_POINTS
    from ptrnet.io.paper_format import Example
    from ptrnet.io.text import hold_input
    from ptrnet.searches.run import run_searches

    set_threads(args.threads)
    options = decode_options(args, task)  # option errors before any file is read
    search = search_plan(args, task)
    loaded = load_model_on(args.model, task, args.device)
    start = time.perf_counter()
    args.data = [hold_input(path) for path in args.data]  # a pipe is read once, then sniffed
    if args.format in ("auto", "tsplib") and any(is_tsplib(path) for path in args.data):
        return run_tsplib(args, task, loaded, search, start)
    if len(args.data) != 1:
        raise UsageError("give one DATA file (several files only for TSPLIB)")
    tsplib_only = [flag for flag, given in TSPLIB_FLAGS.items() if getattr(args, given)]
    if tsplib_only:
        raise UsageError(
            f"{' and '.join(tsplib_only)} {'apply' if len(tsplib_only) > 1 else 'applies'} to "
            f"TSPLIB .tsp files; {args.data[0]} is not one: its references are in the file "
            "or from the task's solver"
        )
    args.data = args.data[0]
    limit = DRY_RUN_COUNT if args.dry_run else None
    instances = read_args(args, args.data, task, MAX_MODEL_POINTS, labels=True)[:limit]
    task = measured_task(task, instances)  # great-circle km for latitude/longitude columns
    refs = references(args, args.data, task, instances)
    points = [inst.points for inst in instances]
    with decode_progress(args, task, len(instances)) as shown, located(args.data, task, instances):
        seqs = predict(loaded, task, points, options, shown.update)
    seqs = run_searches(loaded, task, points, seqs, search)
    metrics = score_examples(  # in the file's units
        task,
        [Example(inst.points, ref, inst.line) for inst, ref in zip(instances, refs, strict=True)],
        [Example(inst.points, seq, inst.line) for inst, seq in zip(instances, seqs, strict=True)],
    )
    unit = task.length_unit
    text = json.dumps(json_safe(metrics)) if args.json else format_table(task.name, metrics, unit)
    report_run(args, loaded, text, len(instances), time.perf_counter() - start)
    report(args, args.data, task, instances, degenerate=False)
    return 0


# Options only a TSPLIB evaluation reads: flag -> attribute.
TSPLIB_FLAGS = {"--optimal": "optimal"}


def default_optimal_path(first_file: str) -> str:
    """``optimal.txt`` beside ``first_file`` if there is one, else the copy shipped in ptrnet."""
    import os

    from ptrnet.data import TSPLIB_OPTIMAL

    beside = os.path.join(os.path.dirname(first_file), "optimal.txt")
    return beside if os.path.isfile(beside) else str(TSPLIB_OPTIMAL)


def optima_source(path: str) -> str:
    """How notes name the optima file ``path``: the shipped one in words, any other by path."""
    from ptrnet.data import TSPLIB_OPTIMAL

    return "ptrnet's TSPLIB optima" if path == str(TSPLIB_OPTIMAL) else path


def run_tsplib(args: argparse.Namespace, task: Task, loaded, search, start: float) -> int:
    """``eval tsp FILE.tsp ...``: gaps to the proven optima, one row per file, each tour after
    ``search`` (a checked :class:`~ptrnet.searches.plan.SearchPlan`); ``start`` is when
    decoding began (``time.perf_counter``)."""
    from ptrnet.evaluation.tsplib_eval import evaluate_tsplib, format_results
    from ptrnet.io.instances import is_tsplib
    from ptrnet.io.tsplib import read_optimal

    if not task.reads_tsplib or not all(is_tsplib(path) for path in args.data):
        readers = ", ".join(t.name for t in POINT_TASKS.values() if t.reads_tsplib)
        raise UsageError(f"TSPLIB files are {readers} instances; do not mix them with other files")
    optimal_path = args.optimal or default_optimal_path(args.data[0])
    results = evaluate_tsplib(
        loaded,
        args.data,
        read_optimal(optimal_path),
        source=optima_source(optimal_path),
        task=task,
        options=decode_options(args, task),
        search=search,
    )
    if args.json:
        text = json.dumps({"instances": [r.to_dict() for r in results]})
    else:
        text = format_results(results)
    report_run(args, loaded, text, len(results), time.perf_counter() - start, tsplib=True)
    for result in results:
        if result.note:
            note(args, result.note)
    return 0
