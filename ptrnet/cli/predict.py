"""``ptrnet predict``: decode instances with a trained model and write the predictions.

INPUT is the paper format (any ``output`` part is ignored, with a note; one instance per line), one
point per line (one instance per file), CSV (``--columns``; a text column names the points), .npy,
or a TSPLIB ``.tsp`` file (task tsp); see ``--format``. Instances outside the unit square are
decoded on their image in it (aspect ratio kept, stated on stderr); planar instances without 2-D
extent (collinear or coincident points) are decoded with a warning. The output, written atomically
(``-o -``: standard output), is by default the paper format in the input's coordinates with the
predicted 1-based indices, so ``ptrnet score TASK REFERENCE PREDICTIONS`` can score it;
``--output-format json`` writes one object per instance (``sequence`` 0-based, ``names``, ``cost``
in the input's units, ``log_prob``, ``valid``) and ``csv`` one row per instance with the same
fields, all from one decoding pass. A model decodes instances of at most 1000 points. Every
output obeys the task's rules by default (a closed convex hull, a tour, a permutation);
``--protocol paper`` decodes as the paper does. ``--improve rrc`` (tsp) then searches for
shorter tours with the model (Random Re-Construct), and ``--two-opt`` after it 2-opts each tour
to a local optimum; such searched tours carry no ``log_prob``.
``--dry-run`` predicts only the first 16 instances.

For a sentence task (copy), INPUT is a sentence or a file of them (``SOURCE[<TAB>TARGET]`` lines)
and the outputs go to standard output one per line, or with ``-o FILE`` as ``SOURCE<TAB>OUTPUT``
lines; ``--explain`` prints, per output word, p_gen and what each path favoured. INPUT ``-`` is
standard input; otherwise INPUT is read as a file when that path exists (``/dev/stdin`` and pipes
included; a directory is an error), and is a sentence otherwise, unless it looks like a file
name: it starts with ``/``, ``./``, ``../`` or ``~/``, or is one word ending in a data file's
extension (``.txt``, ``.tsv``, ``.json``: a dot and 2-5 letters) or naming an entry of a
directory that exists; such an INPUT that does not exist is the error ``INPUT: no such file``.
``24/7``, ``and/or``, ``e.g.`` and ``v1.2`` are sentences; ``--text`` makes INPUT a sentence
whatever it looks like.
"""

from __future__ import annotations

import argparse

from ptrnet.cli.common import (
    DRY_RUN_COUNT,
    add_quiet_argument,
    add_task_argument,
    decode_progress,
    load_model_on,
    note,
    output_file,
    output_name,
    set_threads,
)
from ptrnet.cli.decode_args import add_model_arguments, decode_options
from ptrnet.cli.inputs import (
    add_capacity_argument,
    add_input_arguments,
    located,
    measured_task,
    read_args,
    report,
)
from ptrnet.cli.kinds import add_kind_arguments, finish
from ptrnet.cli.outputs import Answer, add_output_format_argument, write_answers
from ptrnet.io.errors import UsageError
from ptrnet.tasks import Task

NAME = "predict"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        NAME, help="write a trained model's predictions (paper format)", description=__doc__
    )
    add_task_argument(parser)
    parser.add_argument(
        "input",
        metavar="INPUT",
        help="instances (paper format, points, .csv, .npy, .tsp); copy: a file if that path "
        "exists, else a sentence, but a missing file name (one word ending in an extension "
        "such as .txt or in a directory that exists, or a path from /, ./, ../ or ~/) is an "
        "error; --text: always a sentence",
    )
    add_input_arguments(parser)
    add_capacity_argument(parser)
    add_output_format_argument(parser)
    parser.add_argument(
        "-o",
        "--output",
        type=output_file,
        metavar="FILE",
        help="output file, written atomically; - for standard output (point tasks: required, "
        "no default; copy: default standard output, one output per line)",
    )
    add_model_arguments(parser)
    parser.add_argument(
        "--dry-run", action="store_true", help=f"only the first {DRY_RUN_COUNT} instances"
    )
    add_quiet_argument(parser)
    add_kind_arguments(NAME, parser)
    finish(parser, NAME, run)


def run(args: argparse.Namespace, task: Task) -> int:
    from ptrnet.cli.search_args import search_plan
    from ptrnet.inference import predict_outputs
    from ptrnet.io.limits import MAX_MODEL_POINTS
    from ptrnet.searches.run import run_searches

    if args.output is None:
        raise UsageError("-o/--output is required for a point task (- for standard output)")
    set_threads(args.threads)
    options = decode_options(args, task)  # option errors before any file is read
    search = search_plan(args, task)
    loaded = load_model_on(args.model, task, args.device)
    limit = DRY_RUN_COUNT if args.dry_run else None
    instances = read_args(args, args.input, task, MAX_MODEL_POINTS)[:limit]
    task = measured_task(task, instances)  # great-circle km for latitude/longitude columns
    points = [inst.points for inst in instances]
    with decode_progress(args, task, len(points)) as shown, located(args.input, task, instances):
        found = predict_outputs(loaded, task, points, options, shown.update)  # with log_prob
    answers = [
        Answer(inst.points, item.sequence, inst.names, item.log_prob)
        for inst, item in zip(instances, found, strict=True)
    ]
    if search:  # a searched answer is not the model's output: no log-likelihood
        found = run_searches(loaded, task, points, [a.sequence for a in answers], search)
        answers = [
            a._replace(sequence=seq, log_prob=None) for a, seq in zip(answers, found, strict=True)
        ]
    written = write_answers(args.output, args.output_format, task, answers)
    report(args, args.input, task, instances)
    note(args, f"wrote {written} {task.name} predictions to {output_name(args.output)}")
    return 0
