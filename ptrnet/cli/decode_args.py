"""The decoding options of ``eval`` and ``predict``: their flags (:func:`add_model_arguments`)
and the checked :class:`~ptrnet.decoding.options.DecodeOptions` they build
(:func:`decode_options`), naming the flag at fault in every refusal."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ptrnet.cli.common import (
    add_device_argument,
    add_threads_argument,
    beam_width_int,
    iterations_int,
    positive_int,
    samples_int,
    seed_int,
)
from ptrnet.cli.parser import StoreGiven
from ptrnet.cli.views import add_view_arguments, strategy_name
from ptrnet.decoding.options import (
    DEFAULT_BEAM_WIDTH,
    DEFAULT_DECODE_BATCH,
    DEFAULT_RRC_ITERATIONS,
)
from ptrnet.io.errors import UsageError
from ptrnet.io.limits import (
    MAX_BEAM_WIDTH,
    MAX_ITERATIONS,
    MAX_SAMPLES,
    MAX_SEARCH_POINTS,
    MAX_SENTENCE_BEAM_WIDTH,
)

if TYPE_CHECKING:
    from ptrnet.decoding.options import DecodeOptions
    from ptrnet.tasks import Task

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

# What --help says bounds a search (ptrnet.decoding.options.DecodeOptions.check_search).
SEARCH_BOUND = (
    f"one search holds at most {MAX_SEARCH_POINTS:,} candidate points, instances x K x views "
    "x searches x starts x (n + 1): batches shrink to fit, an instance too large alone is "
    "refused"
)


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
    add_search_arguments(parser)
    add(
        "--batch-size",
        type=positive_int,
        default=DEFAULT_DECODE_BATCH,
        metavar="B",
        help="decoding batch",
    )
    add_threads_argument(parser)
    add_device_argument(parser)


def add_search_arguments(parser: argparse.ArgumentParser) -> None:
    """The tour search after decoding (tsp): ``--improve rrc``, ``--iterations``,
    ``--two-opt``, ``--or-opt`` and ``--seed``; ``eval``, ``predict`` and ``plot`` take them
    (:func:`rrc_iterations`, :func:`two_opt_wanted`)."""
    add = parser.add_argument
    add(
        "--improve",
        choices=("none", "rrc"),
        default="none",
        help="tsp: after decoding, search for shorter tours: rrc (Random Re-Construct, LEHD) "
        "cuts each tour into segments of a random length, lets a heavy- or light-decoder model "
        "rebuild them and keeps every shorter one; a search with the tour length in the loop, "
        "so its figures are not the model's alone (default: none)",
    )
    add(
        "--iterations",
        type=iterations_int,
        default=DEFAULT_RRC_ITERATIONS,
        metavar="K",
        action=StoreGiven,
        help=f"with --improve rrc: rounds of rebuilding per tour, 1 to {MAX_ITERATIONS:,} "
        "(default: %(default)s)",
    )
    add(
        "--two-opt",
        action="store_true",
        help="tsp: then 2-opt each tour (after --improve rrc where given) to a local optimum, on "
        "the instance's own distances (TSPLIB files: its rounded EUC_2D lengths); a search, "
        "like rrc",
    )
    add(
        "--or-opt",
        action="store_true",
        help="tsp: as --two-opt, with Or-opt moves too (a run of 1-3 cities moved, either way "
        "round, elsewhere in the tour), in turn with 2-opt until neither shortens the tour; "
        "includes --two-opt",
    )
    add("--seed", type=seed_int, default=0, help="seed for --decode sample and --improve rrc")


def rrc_iterations(args: argparse.Namespace, task: Task) -> int:
    """The rounds of ``--improve rrc`` (0: no search).

    Raises:
        UsageError: ``--improve rrc`` for a task other than tsp or with ``--constraints none``,
            or ``--iterations`` without it.
    """
    if args.improve == "rrc":
        if task.name != "tsp":
            raise UsageError(f"--improve rrc: rebuilds tours, for task tsp, not {task.name}")
        _check_tours_decoded(args, "--improve rrc")
        return args.iterations
    if "iterations" in (getattr(args, "given", None) or ()):
        raise UsageError(f"--iterations {args.iterations}: iterations need --improve rrc")
    return 0


def two_opt_wanted(args: argparse.Namespace, task: Task) -> bool:
    """Whether ``--two-opt`` or ``--or-opt`` (which includes it) was given. Raises UsageError
    for a task other than tsp, or with ``--constraints none``."""
    for flag, given in (("--two-opt", args.two_opt), ("--or-opt", args.or_opt)):
        if given and task.name != "tsp":
            raise UsageError(f"{flag}: shortens tours, for task tsp, not {task.name}")
        if given:
            _check_tours_decoded(args, flag)
    return args.two_opt or args.or_opt


def _check_tours_decoded(args: argparse.Namespace, flag: str) -> None:
    """Raise UsageError when the search ``flag`` meets ``--constraints none``: it searches
    tours, and an unconstrained decoding may output a sequence that is not one."""
    if getattr(args, "constraints", None) == "none":
        raise UsageError(
            f"{flag}: searches tours, and --constraints none may decode outputs that are not "
            "tours; use --constraints task"
        )


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
        given = {field: getattr(args, _dest(flag)) for field, flag in DECODE_FLAGS.items()}
        return DecodeOptions(**given).for_task(task)
    except DecodeOptionError as err:
        flag = DECODE_FLAGS[err.option]
        raise UsageError(f"{flag} {getattr(args, flag[2:].replace('-', '_'))}: {err}") from None


def _dest(flag: str) -> str:
    """The argparse attribute of ``flag``: ``--beam-width`` -> ``beam_width``."""
    return flag.removeprefix("--").replace("-", "_")
