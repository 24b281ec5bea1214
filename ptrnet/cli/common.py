"""Helpers shared by the ``ptrnet`` subcommands: arguments, task/solver lookup, progress bars."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, TypeVar

from ptrnet.cli.views import add_view_arguments, strategy_name
from ptrnet.decoding.options import DEFAULT_BEAM_WIDTH, DEFAULT_DECODE_BATCH
from ptrnet.io.errors import UsageError
from ptrnet.io.limits import (
    MAX_BEAM_WIDTH,
    MAX_SAMPLES,
    MAX_SEARCH_POINTS,
    MAX_SEED,
    MAX_SENTENCE_BEAM_WIDTH,
)
from ptrnet.quoting import quote
from ptrnet.tasks import POINT_TASKS, TASKS, SizeRange, Task, TaskCard, get_point_task, get_task

if TYPE_CHECKING:
    from ptrnet.decoding.options import DecodeOptions

DRY_RUN_COUNT = 16  # instances of ``--dry-run`` in eval and predict
# The flag of each DecodeOptions field that eval and predict set.
DECODE_FLAGS = {
    "strategy": "--decode",
    "beam_width": "--beam-width",
    "samples": "--samples",
    "constraints": "--constraints",
    "protocol": "--protocol",
    "average_views": "--average-views",
    "search_views": "--search-views",
    "multistart": "--multistart",
    "pick": "--pick",
    "window": "--window",
    "seed": "--seed",
    "batch_size": "--batch-size",
}

T = TypeVar("T")
# What --help says bounds a search (ptrnet.decoding.options.DecodeOptions.check_search).
SEARCH_BOUND = (
    f"one search holds at most {MAX_SEARCH_POINTS:,} candidate points, instances x K x views "
    "x searches x starts x (n + 1): batches shrink to fit, an instance too large alone is "
    "refused"
)


def add_task_argument(parser: argparse.ArgumentParser) -> None:
    """The positional TASK, checked by :func:`task_named` (a one-line error with the choices)."""
    parser.add_argument("task", metavar="TASK", help=f"one of: {', '.join(TASKS)}")


def add_solver_argument(parser: argparse.ArgumentParser) -> None:
    solvers = "; ".join(f"{name}: {', '.join(t.solvers)}" for name, t in POINT_TASKS.items())
    parser.add_argument(
        "--solver", metavar="NAME", help=f"reference solver (default: the task's first). {solvers}"
    )


def add_output_argument(parser: argparse.ArgumentParser) -> None:
    """``-o/--output``, required, checked as it is parsed (:func:`output_file`)."""
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        type=output_file,
        metavar="FILE",
        help="output file, written atomically (complete or not at all); - for standard output",
    )


def output_file(text: str) -> str:
    """argparse type of every ``-o/--output``: a path the command can write, checked before any
    work (:func:`ptrnet.io.atomic.check_output_path`); ``-`` is standard output.

    Raises:
        argparse.ArgumentTypeError: ``PATH: reason``, naming the path as given (a directory, a
            missing or read-only directory, an empty name).
    """
    from ptrnet.io.atomic import check_output_path

    try:
        check_output_path(text)
    except OSError as err:
        raise argparse.ArgumentTypeError(f"{quote(text)}: {err.strerror}") from None
    return text


def add_format_argument(parser: argparse.ArgumentParser) -> None:
    """``--format``: the input layout (:mod:`ptrnet.io.instances`)."""
    from ptrnet.io.instances import FORMATS

    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="auto",
        help="input layout (default auto: .tsp TSPLIB, .csv, .npy by extension, or TSPLIB "
        "when the first line starts with a TSPLIB keyword such as NAME:; a text file "
        "whose lines hold one point each is one instance, else the paper's format, one "
        "instance per line)",
    )


def output_name(path: str) -> str:
    """``path`` for a note on stderr; ``-`` reads as standard output."""
    return "standard output" if path == "-" else path


def add_quiet_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no progress bar or summary on stderr"
    )


def add_threads_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--threads", type=positive_int, metavar="T", help="torch threads (default: the idle cores)"
    )


def add_device_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--device",
        default="auto",
        help="where the model runs: auto (a CUDA GPU when torch sees one, else the CPU), cpu, "
        "cuda or cuda:N",
    )


def load_model_on(path: str | None, task: Task | str | None, device: str):
    """:func:`ptrnet.inference.load_model` with the model moved to ``device``.

    Raises:
        UsageError: an unknown device, one torch cannot see, or a model of another task.
        InputError: a missing or unreadable model.
    """
    from ptrnet.compute.devices import resolve_device
    from ptrnet.inference import load_model

    try:
        where = resolve_device(device)
    except ValueError as err:
        raise UsageError(f"--device {device}: {err}") from None
    return load_model(path, task).to(where)


def routes_text(loaded, name: Callable[[str], str] = str) -> str:
    """``"; n = SIZES: PATH"`` for each model ``loaded`` routes instance sizes to (none: ""),
    each path written by ``name``: the tail of a model line."""
    return "".join(
        f"; n = {route.sizes}: {name(route.model.path)}"
        + (f" (window {route.model.window})" if route.model.window else "")
        for route in loaded.routes
    )


def set_threads(threads: int | None) -> None:
    """Torch threads for decoding: ``threads``, else the cores other processes leave idle
    (:func:`ptrnet.training.cpu.cpu_plan`), so decoding never oversubscribes a busy machine."""
    import torch

    from ptrnet.training.cpu import cpu_plan

    torch.set_num_threads(cpu_plan(threads, 0)[0])


def task_named(name: str) -> TaskCard:
    """The registered task ``name``, of any input kind.

    Raises:
        UsageError: an unknown name (the message lists the choices).
    """
    try:
        return get_task(name)
    except ValueError as err:
        raise UsageError(str(err)) from None


def point_task_named(name: str, command: str) -> Task:
    """The registered point task ``name``, for the ``ptrnet`` subcommand ``command``.

    Raises:
        UsageError: an unknown name, or a task whose inputs are not points (the message names
            the point tasks).
    """
    try:
        return get_point_task(name, f"ptrnet {command}")
    except ValueError as err:
        raise UsageError(str(err)) from None


def task_solver(task: Task, solver: str | None) -> str:
    """The solver ``solver`` (None: the task's first) resolved for ``task``.

    Raises:
        UsageError: a solver that is not one of the task's (the message lists the choices).
    """
    try:
        return task.check_solver(solver)
    except ValueError as err:
        raise UsageError(str(err)) from None


def size_range(text: str) -> SizeRange:
    """argparse type for ``N`` or ``LO-HI``."""
    try:
        return SizeRange.parse(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def positive_int(text: str) -> int:
    """argparse type for an integer >= 1."""
    return _int_within(text, 1, None, "a positive integer")


def seed_int(text: str) -> int:
    """argparse type of every ``--seed`` and ``--stream``: an integer in 0..:data:`MAX_SEED`
    (numpy's generators refuse negative seeds, torch's anything over 2^64 - 1)."""
    return _int_within(text, 0, MAX_SEED, "an integer from 0 to 2^64 - 1")


def beam_width_int(text: str) -> int:
    """argparse type of ``--beam-width``: an integer from 1 to :data:`MAX_BEAM_WIDTH`."""
    return _int_within(text, 1, MAX_BEAM_WIDTH, f"an integer from 1 to {MAX_BEAM_WIDTH:,}")


def samples_int(text: str) -> int:
    """argparse type of ``--samples``: an integer from 1 to :data:`MAX_SAMPLES`."""
    return _int_within(text, 1, MAX_SAMPLES, f"an integer from 1 to {MAX_SAMPLES:,}")


def count_or_off(text: str) -> int:
    """argparse type for an integer >= 0, where 0 means off (the default of such options)."""
    return _int_within(text, 0, None, "0 (off) or a positive integer")


def _int_within(text: str, low: int, high: int | None, expected: str) -> int:
    """``text`` as an integer in ``low..high`` (None: no upper bound).

    Raises:
        argparse.ArgumentTypeError: ``expected EXPECTED, got 'TEXT'`` for anything else.
    """
    try:
        value = int(text)
    except ValueError:
        value = low - 1
    if value < low or (high is not None and value > high):
        raise argparse.ArgumentTypeError(f"expected {expected}, got {quote(text)}")
    return value


def shard(text: str) -> tuple[int, int]:
    """argparse type for ``I/K`` with ``1 <= I <= K``."""
    part, _, parts = text.partition("/")
    try:
        value = int(part), int(parts)
    except ValueError:
        value = (0, 0)
    if not 1 <= value[0] <= value[1]:
        raise argparse.ArgumentTypeError(f"expected I/K with 1 <= I <= K, got {quote(text)}")
    return value


def progress(items: Iterable[T], total: int | None, quiet: bool, label: str) -> Iterator[T]:
    """``items``, counted on stderr unless ``--quiet``: a bar on a terminal, else a line every
    10 s (:class:`ptrnet.io.progress.Progress`; ``label`` e.g. ``generate tsp``)."""
    from ptrnet.io.progress import Progress, counted

    return counted(items, Progress(label, total, "instance", enabled=not quiet))


def decode_progress(args: argparse.Namespace, task: Task, total: int):
    """The progress of decoding ``total`` instances for the command ``args.command`` (silent
    with ``--quiet``): a bar on a terminal, else a line every 10 s."""
    from ptrnet.io.progress import Progress

    quiet = getattr(args, "quiet", False)
    return Progress(f"{args.command} {task.name}", total, "instance", enabled=not quiet)


def note(args: argparse.Namespace, message: str) -> None:
    """A one-line summary on stderr, unless ``--quiet``."""
    if not args.quiet:
        print(f"ptrnet: {message}", file=sys.stderr)


# Docstring markup that help texts drop: ``literal``, :role:`target`, *emphasis*, **strong**.
_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")
_MARKUP = re.compile(r"``([^`]+)``|\*\*([^*]+)\*\*|(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])")


def plain_text(text: str | None) -> str | None:
    """``text`` (a module docstring) without reStructuredText markup, for ``--help``."""
    if text is None:
        return None
    text = _ROLE.sub(lambda m: m.group(1), text).replace("::\n", ":\n")
    return _MARKUP.sub(lambda m: next(g for g in m.groups() if g is not None), text)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions as written (paragraphs kept); every option's default shown: appended as
    ``(default: X)`` unless its help already says what the default is."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        shown = "default" in text.lower() or "%(default)" in text
        unset = action.default is None or action.default is False
        silent = unset or action.default == argparse.SUPPRESS or not action.option_strings
        return text if shown or silent else f"{text} (default: %(default)s)"


class Parser(argparse.ArgumentParser):
    """The parser of every ``ptrnet`` command: plain-text descriptions, defaults shown, and a
    bad value (an unknown choice, a non-number) quoted in the error as ptrnet's own errors
    quote it (:func:`ptrnet.quoting.quote`), however long."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs["formatter_class"] = HelpFormatter
        kwargs["description"] = plain_text(kwargs.get("description"))
        super().__init__(*args, **kwargs)

    def _check_value(self, action: argparse.Action, value: object) -> None:
        try:
            super()._check_value(action, value)
        except argparse.ArgumentError as err:
            raise _quoted(action, err, value) from None

    def _get_value(self, action: argparse.Action, arg_string: str) -> object:
        try:
            return super()._get_value(action, arg_string)
        except argparse.ArgumentError as err:
            raise _quoted(action, err, arg_string) from None


def _quoted(action: argparse.Action, err: argparse.ArgumentError, value: object) -> Exception:
    """``err`` (about ``action``) with the ``repr`` of ``value`` in its message quoted."""
    return argparse.ArgumentError(action, err.message.replace(repr(value), quote(value)))


class StoreGiven(argparse.Action):
    """``store``, and a note that the option was given: ``args.given`` (a set of dests), so a
    command can tell an explicit value from the default."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        setattr(namespace, self.dest, values)
        given = getattr(namespace, "given", None) or set()
        namespace.given = given | {self.dest}


def add_model_arguments(parser: argparse.ArgumentParser, protocol: str = "valid") -> None:
    """``--model`` and the decoding options shared by ``eval`` and ``predict``; ``protocol``
    is the command's default ``--protocol`` (:data:`ptrnet.decoding.options.PROTOCOLS`)."""
    add = parser.add_argument
    add(
        "--model",
        metavar="MODEL",
        help="a run directory, a checkpoint file or 'bundled' (default: the task's bundled model)",
    )
    add(
        "--decode",
        type=strategy_name,
        default="greedy",
        metavar="{greedy,sample,beam}",
        help="strategy (multi-start greedy, point tasks: --multistart)",
    )
    add(
        "--beam-width",
        type=beam_width_int,
        default=DEFAULT_BEAM_WIDTH,
        metavar="K",
        action=StoreGiven,
        help=f"beam width, with --decode beam: 1 to {MAX_BEAM_WIDTH:,} ({SEARCH_BOUND}; "
        f"sentence tasks: at most {MAX_SENTENCE_BEAM_WIDTH})",
    )
    add(
        "--samples",
        type=samples_int,
        default=1,
        metavar="K",
        help="with --decode sample: draw K outputs per instance, keep the best by --pick; 1 to "
        f"{MAX_SAMPLES:,} ({SEARCH_BOUND}; sentence tasks: the most likely, at most "
        f"{MAX_SENTENCE_BEAM_WIDTH})",
    )
    add(
        "--pick",
        choices=("likely", "shortest"),
        default="likely",
        help="with several candidates (--decode beam, --multistart, --samples K > 1): the most "
        "likely (default, the paper's), or the best by the task's objective (tsp: the shortest "
        "tour; knapsack: the most valuable load)",
    )
    add_view_arguments(parser)
    add(
        "--window",
        type=int,
        default=None,
        metavar="K",
        help="heavy-decoder models (tsp): decode each instance of more than K inputs through a "
        "local window, the K remaining inputs nearest the last chosen one rescaled to the unit "
        "square at every step; for instances far larger than the model's training sizes "
        "(0: off; default: the model folder's own choice per size, sizes.json; the bundled "
        "tsp folder uses 50 from n = 201, any other model none)",
    )
    add(
        "--protocol",
        choices=("valid", "paper"),
        default=protocol,
        help="valid: every output obeys the task's rules (a closed convex hull, a tour, a "
        "permutation); paper: the paper's decoding (Sec. 4: hull and Delaunay unconstrained, so "
        "an output may be open or cross itself; sort and TSP as valid) (default: %(default)s)",
    )
    add(
        "--constraints",
        choices=("none", "task"),
        help="the decoding mask itself: task (the task's rules) or none (any input or the end "
        "symbol) (default: the one --protocol chooses)",
    )
    add(
        "--improve",
        choices=("none", "rrc"),
        default="none",
        help="tsp: after decoding, search for shorter tours: rrc (Random Re-Construct, LEHD) "
        "cuts each tour into segments of a random length, lets a heavy-decoder model rebuild "
        "them and keeps every shorter one; a search with the tour length in the loop, so its "
        "figures are not the model's alone (default: none)",
    )
    add(
        "--iterations",
        type=positive_int,
        default=100,
        metavar="K",
        action=StoreGiven,
        help="with --improve rrc: rounds of rebuilding per tour (default: %(default)s)",
    )
    add("--seed", type=seed_int, default=0, help="seed for --decode sample and --improve rrc")
    add(
        "--batch-size",
        type=positive_int,
        default=DEFAULT_DECODE_BATCH,
        metavar="B",
        help="decoding batch",
    )
    add_threads_argument(parser)
    add_device_argument(parser)


def rrc_iterations(args: argparse.Namespace, task: Task) -> int:
    """The rounds of ``--improve rrc`` (0: no search).

    Raises:
        UsageError: ``--improve rrc`` for a task other than tsp, or ``--iterations`` without it.
    """
    if args.improve == "rrc":
        if task.name != "tsp":
            raise UsageError(f"--improve rrc: rebuilds tours, for task tsp, not {task.name}")
        return args.iterations
    if "iterations" in (getattr(args, "given", None) or ()):
        raise UsageError(f"--iterations {args.iterations}: iterations need --improve rrc")
    return 0


def check_beam_width(args: argparse.Namespace) -> None:
    """Raise UsageError for a ``--beam-width`` given without ``--decode beam`` (it would be
    ignored)."""
    if "beam_width" in (getattr(args, "given", None) or ()) and args.decode != "beam":
        raise UsageError(
            f"--beam-width {args.beam_width}: a beam width needs --decode beam, not {args.decode}"
        )


def decode_options(args: argparse.Namespace, task: Task) -> DecodeOptions:
    """The decoding options of ``eval`` and ``predict`` from their parsed flags, checked against
    ``task`` (:meth:`ptrnet.decoding.options.DecodeOptions.for_task`).

    Raises:
        UsageError: a combination the options refuse (``--beam-width`` without ``--decode
            beam``, ``--pick shortest`` without several candidates or for a task without a
            cost, a view option the task cannot use), naming the flag:
            ``--average-views 2: ...``.
    """
    from ptrnet.decoding.options import DecodeOptionError, DecodeOptions

    check_beam_width(args)
    try:
        return DecodeOptions(
            strategy=args.decode,
            beam_width=args.beam_width,
            samples=args.samples,
            constraints=args.constraints,
            protocol=args.protocol,
            average_views=args.average_views,
            search_views=args.search_views,
            multistart=args.multistart,
            pick=args.pick,
            window=args.window,
            seed=args.seed,
            batch_size=args.batch_size,
        ).for_task(task)
    except DecodeOptionError as err:
        flag = DECODE_FLAGS[err.option]
        raise UsageError(f"{flag} {getattr(args, flag[2:].replace('-', '_'))}: {err}") from None
