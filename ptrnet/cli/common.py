"""Helpers shared by the ``ptrnet`` subcommands: arguments, task/solver lookup, progress bars."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from ptrnet.io.errors import UsageError
from ptrnet.io.limits import MAX_BEAM_WIDTH, MAX_ITERATIONS, MAX_SAMPLES, MAX_SEED, MAX_THREADS
from ptrnet.quoting import quote
from ptrnet.tasks import (
    POINT_TASKS,
    TASKS,
    SizeRange,
    Task,
    TaskCard,
    get_point_task,
    get_task,
    task_spelled,
)

DRY_RUN_COUNT = 16  # instances of ``--dry-run`` in eval and predict

T = TypeVar("T")


def add_task_argument(parser: argparse.ArgumentParser) -> None:
    """The positional TASK, in any case (:func:`task_argument`), checked by :func:`task_named`
    (a one-line error with the closest name and the choices)."""
    parser.add_argument(
        "task", type=task_argument, metavar="TASK", help=f"one of: {', '.join(TASKS)}"
    )


def task_argument(text: str) -> str:
    """argparse type of a task name: the task that ``text`` spells in any case, so ``TSP`` is
    ``tsp``; any other text as given, for :func:`task_named` (or a lesson's name,
    :func:`ptrnet.cli.kinds.command_task`)."""
    return task_spelled(text)


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
    """``--threads`` of a command that decodes (:func:`set_threads`)."""
    parser.add_argument(
        "--threads", type=threads_int, metavar="T", help="torch threads (default: the idle cores)"
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
    """``"; n = SIZES: PATH"`` for each model ``loaded`` routes instance sizes to (``"; stated
    capacities: PATH"`` for a route of knapsack instances that state one; none: ""), each path
    written by ``name``: the tail of a model line."""
    return "".join(
        ("; stated capacities: " if route.capacity else f"; n = {route.sizes}: ")
        + name(route.model.path)
        + (f" (window {route.model.window})" if route.model.window else "")
        for route in loaded.routes
    )


def set_threads(threads: int | None) -> None:
    """Torch threads for the rest of the command: ``threads``, else the cores other processes
    leave idle (:func:`ptrnet.training.cpu.decoding_threads`, the Python API's rule too)."""
    import torch

    from ptrnet.training.cpu import decoding_threads

    torch.set_num_threads(decoding_threads(threads))


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


def iterations_int(text: str) -> int:
    """argparse type of ``--iterations``: an integer from 1 to :data:`MAX_ITERATIONS`."""
    return _int_within(text, 1, MAX_ITERATIONS, f"an integer from 1 to {MAX_ITERATIONS:,}")


def threads_int(text: str) -> int:
    """argparse type of every ``--threads``: an integer from 1 to :data:`MAX_THREADS` (the
    Python API's ``threads=`` takes the same, :func:`ptrnet.io.limits.check_threads`)."""
    return _int_within(text, 1, MAX_THREADS, f"an integer from 1 to {MAX_THREADS:,}")


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
