"""The decoding flags of ``eval``, ``predict`` and ``plot`` that read an instance through the
square's symmetries, one flag per option of :class:`ptrnet.decoding.options.DecodeOptions`:
``--average-views``, ``--search-views``, ``--multistart``.

They are parsed as integers only; their values and combinations are checked once, by the
options (:func:`ptrnet.decoding.checks.check_views`), and
:func:`ptrnet.cli.decode_args.decode_options` names the flag in the one-line error. The flags
they replace, ``--views`` and ``--decode multistart``, are refused with the spelling that now
says the same.
"""

from __future__ import annotations

import argparse

from ptrnet.decoding.strategies import strategy_names
from ptrnet.quoting import did_you_mean, quote

# What each old --views V said, in the new flags (hull and TSP averaged 4 rotations in each of
# the two searches of --views 8; Delaunay cannot average).
VIEWS_MOVED = (
    "--views is split into options that say what they do: --views 2 or 4 is --average-views 2 "
    "or 4; --views 8 is --search-views 8 (with --average-views 4 for convex_hull and tsp, as "
    "--views 8 searched); --decode multistart --views V is --multistart V"
)
MULTISTART_MOVED = (
    "multistart is a flag of its own: --multistart (greedy from every start), --multistart V "
    "(every start of V = 2, 4 or 8 symmetric views)"
)


class ViewsMoved(argparse.Action):
    """``--views``, which no longer exists: parsing it stops with :data:`VIEWS_MOVED`."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        parser.error(VIEWS_MOVED)


def strategy_name(text: str) -> str:
    """argparse type of ``--decode``: a registered strategy (:mod:`ptrnet.decoding.strategies`);
    ``multistart`` names its flag."""
    if text == "multistart":
        raise argparse.ArgumentTypeError(MULTISTART_MOVED)
    names = strategy_names()
    if text not in names:
        hint = did_you_mean(text, names)
        raise argparse.ArgumentTypeError(f"choose from {', '.join(names)}, got {quote(text)}{hint}")
    return text


def add_view_arguments(parser: argparse.ArgumentParser) -> None:
    """``--average-views``, ``--search-views``, ``--multistart``, and the refused ``--views``."""
    add = parser.add_argument
    add(
        "--average-views",
        type=int,
        default=1,
        metavar="{1,2,4}",
        help="2 or 4 (convex_hull, tsp, cvrp): every search reads that many rotations of each "
        "instance and decodes with their mean log-probabilities (1: the model alone, the "
        "paper's decoding)",
    )
    add(
        "--search-views",
        type=int,
        default=1,
        metavar="{1,8}",
        help="8 (convex_hull, tsp, delaunay, cvrp): eight-view search, each instance searched from "
        "every symmetry of the square (8 / --average-views searches) and the answer all eight "
        "views find most likely kept (13-40x a one-view search)",
    )
    add(
        "--multistart",
        type=int,
        nargs="?",
        const=1,
        default=0,
        metavar="V",
        help="greedy runs from every input (tsp: a tour from every city; cvrp: routes from every "
        "customer, the depot kept first), the best kept by --pick; with V = 2, 4 (rotations; "
        "convex_hull, tsp, cvrp) or 8 (every symmetry), from every start of V symmetric copies, "
        "each scored in its own view (POMO's augmentation) (default: off; the flag alone: V = 1)",
    )
    add("--views", action=ViewsMoved, nargs="?", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
