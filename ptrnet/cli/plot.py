"""``ptrnet plot``: pictures of one instance (with a model's pointer heatmap) or of training curves.

Three forms::

    ptrnet plot MODEL_OR_TASK INPUT [--index I] [--model MODEL] -o FILE.png
    ptrnet plot curves RUN_DIR -o FILE.png
    ptrnet plot induction RUN_DIR [--index I] -o FILE.png

The first draws instance ``I`` (0-based) of ``INPUT``, read as ``ptrnet predict`` reads it (paper
format, one point per line, CSV with ``--columns``, .npy, TSPLIB), with its reference, a
model's output over it and the pointer heatmap beside it. The model decodes the instance as
``predict`` does (its unit-square image, the same sequence; knapsack: under ``--capacity``
as ``predict`` reads it, else the capacity the line states); the drawing is in the input's
units, labelled by the points' names when a CSV gives them (set apart so that no two overlap).
The model is MODEL_OR_TASK when that is a run directory or checkpoint; after a task name it is
``--model`` (default: the task's bundled model; ``none`` draws the reference alone), named in
the title as given. The reference is the instance's own label when it has one, else the task's
solver's (exact, or named a heuristic reference where the solver is not exact at that size).
For tsp, ``--improve rrc``, ``--two-opt`` and ``--or-opt`` search as ``predict`` does and the
searched tour is drawn, the heatmap showing the model's own steps before the search;
``--prediction FILE`` draws instance ``I`` of a predictions file in the paper's format (what
``predict`` writes by default) instead of decoding. The title says what was drawn, the
output's metrics in words (rates and gaps in percent) and the heatmap marks each step as
agreeing with the reference or not (tsp: an edge of the reference tour, either direction).

The second form draws loss, decoded validation metrics and throughput from
``RUN_DIR/log.csv``, the task's rates and gaps in percent on their own axis, other metrics
(a tour's length) on theirs; ``curves`` is therefore a reserved word in the first position
(write ``./curves`` for a model directory of that name).

The third draws an induction run (``ptrnet train induction``, docs/induction.md): both halves'
loss curves, and the layer-1 and layer-2 attention maps on fresh sequence ``I``; RUN_DIR
``bundled`` is the bundled model. ``induction`` is reserved in the first position too.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from ptrnet.cli.common import (
    add_device_argument,
    add_output_argument,
    load_model_on,
    point_task_named,
)
from ptrnet.cli.decode_args import add_strategy_arguments, decode_options
from ptrnet.cli.inputs import (
    add_capacity_argument,
    add_input_arguments,
    check_size,
    measured_task,
    read_args,
    references,
)
from ptrnet.cli.search_args import add_search_arguments, search_flags_given, search_plan
from ptrnet.decoding.options import CONSTRAINTS
from ptrnet.io.errors import InputError, UsageError
from ptrnet.quoting import did_you_mean, quote
from ptrnet.tasks import POINT_TASKS, TASKS, Task, get_task, task_spelled

CURVES = "curves"
INDUCTION = "induction"
NO_MODEL = "none"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "plot",
        help="draw an instance, a model's output and pointer heatmap, or training curves",
        description=__doc__.split("\n\n", 1)[1],
    )
    parser.add_argument(
        "source",
        metavar="MODEL_OR_TASK",
        help="a point task's model (run directory or checkpoint), a point task "
        f"({', '.join(POINT_TASKS)}), 'curves' or 'induction'",
    )
    parser.add_argument(
        "input",
        metavar="INPUT",
        help="instances (any layout predict reads), or RUN_DIR for curves and induction",
    )
    add_input_arguments(parser)
    add_capacity_argument(parser)
    parser.add_argument(
        "--index", type=int, default=0, metavar="I", help="instance (default: %(default)s)"
    )
    add_strategy_arguments(parser, multistart=False)
    parser.add_argument(
        "--constraints",
        choices=CONSTRAINTS,
        help="decoding mask: task (the task's rules) or none (default: task, as predict decodes)",
    )
    parser.add_argument(
        "--model",
        metavar="MODEL",
        help="after a task name: a run directory, a checkpoint file, 'bundled' or 'none' "
        "(default: bundled, the task's bundled model)",
    )
    add_search_arguments(parser)
    parser.add_argument(
        "--prediction",
        metavar="FILE",
        help="draw instance I of FILE, predictions in the paper's format (ptrnet predict's "
        "default output, the same instances as INPUT), instead of decoding with a model",
    )
    add_device_argument(parser)
    add_output_argument(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ptrnet.viz.figures import save_png

    if args.source == INDUCTION:
        from ptrnet.cli.induction import induction_figure_for

        fig = induction_figure_for(args.input, args.index)
    else:
        fig = curves_figure_for(args.input) if args.source == CURVES else instance_figure(args)
    save_png(fig, sys.stdout.buffer if args.output == "-" else args.output)
    return 0


def curves_figure_for(run_dir: str):
    """The curves figure of ``run_dir``, its task's rates and gaps in percent
    (:func:`ptrnet.viz.curves.run_rates`); a missing or malformed log is an InputError."""
    from ptrnet.runs import LOG_CSV
    from ptrnet.viz.curves import curves_figure, read_log, run_rates

    path = os.path.join(run_dir, LOG_CSV) if os.path.isdir(run_dir) else run_dir
    if not os.path.isfile(path):
        raise InputError(path, None, "no training log here (expected RUN_DIR/log.csv)")
    title = os.path.basename(os.path.abspath(run_dir))
    return curves_figure(read_log(path), title=title, rates=run_rates(path))


def instance_figure(args: argparse.Namespace):
    """The figure for ``MODEL_OR_TASK INPUT``: instance, reference, the output drawn (the
    model's, a search's tour made of it, or ``--prediction``'s) and the model's heatmap."""
    from ptrnet.inference import check_vocabulary
    from ptrnet.io.limits import MAX_MODEL_POINTS
    from ptrnet.viz.figures import prediction_figure
    from ptrnet.viz.trace import decode_trace

    if args.prediction is not None:
        return predicted_figure(args)
    loaded, task, model_name = chosen_model(args)
    search = search_plan(args, task)
    inst = pick_instance(args, task)
    task = measured_task(task, [inst])  # great-circle km for latitude/longitude columns
    title = instance_words(args, task, inst)
    if loaded is None:
        if search:
            first = search.stages(task)[0]
            answer = first.answers.removesuffix("s")
            raise UsageError(f"{search_flags_given(args)[0]} searches a model's {answer}: give one")
        ref = references(args, args.input, task, [inst])[0]
        return prediction_figure(
            task, inst.points, ref, title=title, names=inst.names, reference=ref_words(task, inst)
        )
    check_size(args.input, [inst], MAX_MODEL_POINTS, "the model")
    try:
        check_vocabulary(loaded.for_size(len(inst.points)), len(inst.points))
    except UsageError as err:
        raise InputError(args.input, inst.line, str(err)) from None
    options = decode_options(args, task)
    ref = references(args, args.input, task, [inst])[0]
    trace = decode_trace(loaded, task, inst.points, options)
    drawn, decoded = trace.sequence, None
    if search:
        from ptrnet.searches.run import run_searches

        (drawn,) = run_searches(loaded, task, [inst.points], [trace.sequence], search)
        decoded = trace.sequence
    return prediction_figure(
        task,
        inst.points,
        ref,
        drawn,
        trace.probs,
        trace.tokens,
        f"{title} -- model {model_name}\n{decoding_words(args, options, search, task)}",
        inst.names,
        ref_words(task, inst),
        decoded,
    )


def instance_words(args: argparse.Namespace, task: Task, inst) -> str:
    """The title's start: the task, the size as the task counts it (:meth:`Task.size_of`: a
    routing instance's customers) and where the instance is (``FILE:LINE``)."""
    where = f"{args.input}:{inst.line}" if inst.line else args.input
    return f"{task.name}, n = {task.size_of(inst.points)}, {where}"


def decoding_words(args: argparse.Namespace, options, search, task: Task) -> str:
    """The decoding and ``search`` after it (a checked
    :class:`~ptrnet.searches.plan.SearchPlan` of ``task``), in words (``greedy decoding, only
    valid outputs, then 2-opt and Or-opt (a search on tour lengths)``)."""
    how = options.card.words(options)  # the strategy's card: greedy, beam search, width 3, ...
    return ", then ".join([f"{how}, {options.constraint_words}", *search.words(task)])


def ref_words(task: Task, inst) -> str:
    """What the reference is, for the legend: the file's label, the exact solution, or a
    heuristic's where the task's solver is not exact at the instance's size."""
    if inst.seq is not None:
        return "reference (the file's label)"
    return "exact" if task.reference_is_exact(len(inst.points)) else "heuristic reference"


def predicted_figure(args: argparse.Namespace):
    """``--prediction FILE``: instance ``--index`` of FILE (paper format, the same instances
    as INPUT, line for line) drawn over its reference; no model, no heatmap.

    Raises:
        UsageError: ``--prediction`` beside a model or a search option.
        InputError: a malformed FILE, or one whose instances are not INPUT's.
    """
    from ptrnet.evaluation.score import check_aligned
    from ptrnet.io.paper_format import Example, read_examples
    from ptrnet.viz.figures import prediction_figure

    if args.source not in TASKS or args.model not in (None, NO_MODEL):
        raise UsageError("--prediction draws a file's answers: give a task, not a model")
    task = point_task_named(args.source, "plot")
    searched = search_flags_given(args)
    if searched:
        raise UsageError(f"--prediction draws the file's answers as written, without {searched[0]}")
    instances = read_input(args, task)
    inst = pick_instance(args, task, instances)
    preds = read_examples(args.prediction, task, "prediction")
    check_aligned(
        [Example(i.points, np.zeros(0, np.int64), i.line or 1) for i in instances],
        preds,
        args.input,
        args.prediction,
    )
    pred = preds[args.index]
    ref = references(args, args.input, task, [inst])[0]
    title = f"{instance_words(args, task, inst)} -- answer from {args.prediction}:{pred.line}"
    return prediction_figure(
        task,
        inst.points,
        ref,
        pred.seq,
        title=title,
        names=inst.names,
        reference=ref_words(task, inst),
        answer="prediction",
    )


def chosen_model(args: argparse.Namespace):
    """The model ``MODEL_OR_TASK`` and ``--model`` name (None for ``--model none``), its task,
    and its name as the user gave it (``bundled tsp`` for a task's bundled model).

    Raises:
        UsageError: ``--model`` after a model path, or a source that is neither.
    """
    from ptrnet.inference import BUNDLED

    source = args.source
    if source not in TASKS and not os.path.exists(source):
        source = task_spelled(source)  # a task's name in any case: TSP
    if source in TASKS:
        task = point_task_named(source, "plot")
        loaded = None if args.model == NO_MODEL else load_point_model(args.model, task, args.device)
        name = f"{BUNDLED} {task.name}" if args.model in (None, BUNDLED) else args.model
        return loaded, task, name
    if os.path.exists(args.source):
        if args.model is not None:
            raise UsageError(f"--model: the model is already {args.source}")
        loaded = load_point_model(args.source, None, args.device)
        return loaded, get_task(loaded.task), args.source
    hint = did_you_mean(args.source, POINT_TASKS)
    raise UsageError(
        f"{quote(args.source)} is neither a task ({', '.join(POINT_TASKS)}) nor a model path{hint}"
    )


def load_point_model(path: str | None, task: Task | None, device: str):
    """The Ptr-Net model at ``path`` on ``device`` (:func:`load_model_on`).

    Raises:
        UsageError: as :func:`load_model_on`, and for a sentence-task model (the copy task's
            pointer-generator, :mod:`ptrnet.text.checkpoint`), which ``plot`` cannot draw: the
            message names the point tasks plot draws and ``ptrnet predict`` for that model.
        InputError: as :func:`load_model_on`.
    """
    from ptrnet.inference import resolve_checkpoint
    from ptrnet.runs.checkpoint import SentenceModelError

    try:
        return load_model_on(path, task, device)
    except SentenceModelError as err:
        # a model folder's checkpoint: name the folder; one it routes sizes to: the file
        model = path if resolve_checkpoint(path, task) == err.path else err.path
        raise UsageError(
            f"{err.path} is a {err.task}-task model (a pointer-generator over sentences); "
            f"ptrnet plot draws models of the point tasks only ({', '.join(POINT_TASKS)}); for "
            f"this model use: ptrnet predict {err.task} SENTENCE --model {model} --explain"
        ) from None


def read_input(args: argparse.Namespace, task: Task) -> list:
    """The instances of ``args.input`` (:func:`ptrnet.cli.inputs.read_prepared`: its layout,
    columns and knapsack ``--capacity``; paper-format labels read as references).

    Raises:
        UsageError, InputError: as :func:`ptrnet.cli.inputs.read_prepared`.
    """

    return read_args(args, args.input, task, labels=True)


def pick_instance(args: argparse.Namespace, task: Task, instances: list | None = None):
    """Instance ``args.index`` of ``instances`` (default: :func:`read_input`'s).

    Raises:
        UsageError: the index is negative or past the end of the file.
        InputError: the file is unreadable or malformed.
    """
    index = args.index
    if index < 0:
        raise UsageError(f"--index must be >= 0, got {index}")
    instances = read_input(args, task) if instances is None else instances
    if index >= len(instances):
        raise UsageError(f"--index {index}: {args.input} has fewer than {index + 1} instances")
    return instances[index]
