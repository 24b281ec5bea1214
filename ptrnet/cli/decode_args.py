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
    positive_int,
    samples_int,
)
from ptrnet.cli.parser import StoreGiven
from ptrnet.cli.search_args import add_search_arguments
from ptrnet.cli.views import add_view_arguments, strategy_name
from ptrnet.decoding.options import (
    CONSTRAINTS,
    DEFAULT_BEAM_WIDTH,
    DEFAULT_DECODE_BATCH,
    PICKS,
    PROTOCOLS,
    DecodeOptionError,
    DecodeOptions,
    several_ways,
)
from ptrnet.decoding.strategies import STRATEGIES, strategy_names, taking
from ptrnet.io.errors import UsageError
from ptrnet.io.limits import (
    MAX_BEAM_WIDTH,
    MAX_SAMPLES,
    MAX_SEARCH_POINTS,
    MAX_SENTENCE_BEAM_WIDTH,
)

if TYPE_CHECKING:
    from ptrnet.tasks import Task

# The flag of each DecodeOptions field that eval and predict set.
DECODE_FLAGS = {
    "strategy": "--decode",
    "beam_width": "--beam-width",
    "samples": "--samples",
    "temperature": "--temperature",
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
    add_strategy_arguments(parser)
    add(
        "--pick",
        choices=PICKS,
        default="likely",
        help=f"with several candidates per instance ({several_ways()}): the most likely "
        "(default, the paper's), or the best by the task's objective (tsp: the shortest tour; "
        "knapsack: the most valuable load)",
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
        choices=PROTOCOLS,
        default=protocol,
        help="valid: every output obeys the task's rules (a closed convex hull, a tour, a "
        "permutation); paper: the paper's decoding (Sec. 4: hull and Delaunay unconstrained, so "
        "an output may be open or cross itself; sort and TSP as valid) (default: %(default)s)",
    )
    add(
        "--constraints",
        choices=CONSTRAINTS,
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


def add_strategy_arguments(parser: argparse.ArgumentParser, multistart: bool = True) -> None:
    """``--decode`` (a registered strategy, :mod:`ptrnet.decoding.strategies`) and the options
    strategies read (``--beam-width``, ``--samples``, ``--temperature``; ``--seed`` is
    :func:`add_search_arguments`'), each naming in its help the strategies that read it;
    ``multistart``: the command has ``--multistart`` too."""
    add = parser.add_argument
    strategies = "; ".join(f"{card.name}: {card.description}" for card in STRATEGIES.values())
    add(
        "--decode",
        type=strategy_name,
        default="greedy",
        metavar="{" + ",".join(strategy_names()) + "}",
        help=f"the strategy: {strategies}"
        + (" (multi-start greedy, point tasks: --multistart)" if multistart else ""),
    )
    add(
        "--beam-width",
        type=beam_width_int,
        default=DEFAULT_BEAM_WIDTH,
        metavar="K",
        action=StoreGiven,
        help=f"beam width, with --decode {_users('beam_width')}: 1 to "
        f"{MAX_BEAM_WIDTH:,} ({SEARCH_BOUND}; sentence tasks: at most {MAX_SENTENCE_BEAM_WIDTH})",
    )
    add(
        "--samples",
        type=samples_int,
        default=1,
        metavar="K",
        help=f"with --decode {_users('samples')}: draw K outputs per instance and keep the best "
        f"(--pick); 1 to {MAX_SAMPLES:,} ({SEARCH_BOUND}; sentence tasks: the most likely, at "
        f"most {MAX_SENTENCE_BEAM_WIDTH})",
    )
    add(
        "--temperature",
        type=float,
        default=1.0,
        metavar="T",
        help=f"with --decode {_users('temperature')}: divide the log-probabilities by T > 0 "
        "before drawing (below 1: closer to greedy) (default: %(default)s)",
    )


def _users(option: str) -> str:
    """The strategies that read ``option``, for ``--help``: ``sample or stochastic_beam``."""
    names = [card.name for card in taking(option)]
    return " or ".join(names) or "(none)"


def check_beam_width(args: argparse.Namespace) -> None:
    """Raise UsageError for a ``--beam-width`` given with a strategy that reads none (it would
    be ignored; :class:`~ptrnet.decoding.options.DecodeOptions` cannot tell it from the
    default)."""
    if "beam_width" not in (getattr(args, "given", None) or ()):
        return
    if "beam_width" not in STRATEGIES[args.decode].takes:
        raise UsageError(
            f"--beam-width {args.beam_width}: a beam width needs --decode "
            f"{_users('beam_width')}, not {args.decode}"
        )


def decode_options(args: argparse.Namespace, task: Task | None = None) -> DecodeOptions:
    """The decoding options of ``eval``, ``predict`` and ``plot`` from their parsed flags (those
    of :data:`DECODE_FLAGS` the command has; the others keep their defaults), checked against
    ``task`` (:meth:`ptrnet.decoding.options.DecodeOptions.for_task`; None: a sentence task,
    whose decoders read no task-dependent option).

    Raises:
        UsageError: a combination the options refuse (``--beam-width`` without ``--decode
            beam``, ``--pick shortest`` without several candidates or for a task without a
            cost, a view option the task cannot use), naming the flag:
            ``--average-views 2: ...``.
    """

    check_beam_width(args)
    try:
        given = {
            field: getattr(args, _dest(flag))
            for field, flag in DECODE_FLAGS.items()
            if hasattr(args, _dest(flag))
        }
        options = DecodeOptions(**given)
        return options if task is None else options.for_task(task)
    except DecodeOptionError as err:
        raise flagged(args, err) from None


def flagged(args: argparse.Namespace, err: DecodeOptionError) -> UsageError:
    """A refused option as the command line says it: its flag and value first
    (``--average-views 2: ...``)."""
    flag = DECODE_FLAGS[err.option]
    return UsageError(f"{flag} {getattr(args, _dest(flag))}: {err}")


def _dest(flag: str) -> str:
    """The argparse attribute of ``flag``: ``--beam-width`` -> ``beam_width``."""
    return flag.removeprefix("--").replace("-", "_")
