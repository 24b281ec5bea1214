"""The searches after decoding on the command line of ``eval``, ``predict`` and ``plot``: one
flag set built from what the registered tasks declare (:mod:`ptrnet.tasks.searches`), so a new
task's search gets its flag here without an edit: ``--improve NAME`` and ``--iterations`` for a
rebuild search, a flag of its own for a local one (``--two-opt``), and ``--seed``. The flags a
run gives become one :class:`~ptrnet.searches.plan.SearchPlan` (:func:`search_plan`), checked
against the run's task there, which words every refusal."""

from __future__ import annotations

import argparse

from ptrnet.cli.common import iterations_int, seed_int
from ptrnet.cli.parser import StoreGiven
from ptrnet.decoding.strategies import taking
from ptrnet.io.errors import UsageError
from ptrnet.io.limits import MAX_ITERATIONS
from ptrnet.searches.plan import (
    DEFAULT_ROUNDS,
    NONE,
    SearchOptionError,
    SearchPlan,
    declared,
    offering,
    spell,
)
from ptrnet.tasks import Task
from ptrnet.tasks.searches import LocalSearch, Rebuild


def add_search_arguments(parser: argparse.ArgumentParser) -> None:
    """``--improve``, ``--iterations``, each local search's flag and ``--seed``, for every
    search a registered task declares (its help starts with the tasks that offer it)."""
    add = parser.add_argument
    rebuilds = declared(Rebuild)
    tasks = ", ".join(dict.fromkeys(t for name in rebuilds for t in offering(name)))
    answers = " or ".join(dict.fromkeys(s.answers for s in rebuilds.values())) or "answers"
    add(
        "--improve",
        choices=(NONE, *rebuilds),
        default=NONE,
        help=f"{tasks}: after decoding, search for shorter {answers}: "
        + "; ".join(search.help for search in rebuilds.values())
        + f"; a search with the {answers.removesuffix('s')} length in the loop, so its "
        "figures are not the model's alone (default: none)",
    )
    add(
        "--iterations",
        type=iterations_int,
        default=DEFAULT_ROUNDS,
        metavar="K",
        action=StoreGiven,
        help=f"with --improve {'|'.join(rebuilds)}: rounds of rebuilding per "
        f"{answers.removesuffix('s')}, 1 to "
        f"{MAX_ITERATIONS:,} (default: %(default)s)",
    )
    for search in declared(LocalSearch).values():
        add(
            search.flag,
            action="store_true",
            help=f"{', '.join(offering(search.name))}: {search.help}",
        )
    add(
        "--seed",
        type=seed_int,
        default=0,
        help=f"seed for --decode {' or '.join(c.name for c in taking('seed')) or '(none)'} and "
        f"--improve {'|'.join(rebuilds)}",
    )


def search_plan(args: argparse.Namespace, task: Task) -> SearchPlan:
    """The searches the parsed flags ask for, checked against ``task`` and the decoding's
    ``--constraints`` (:meth:`SearchPlan.for_task`).

    Raises:
        UsageError: naming the flag (``--two-opt: shortens tours, for task tsp, not sort``).
    """
    given = getattr(args, "given", None) or ()
    plan = SearchPlan(
        args.improve,
        args.iterations if "iterations" in given else None,
        tuple(name for name in declared(LocalSearch) if getattr(args, name, False)),
        args.seed,
    )
    try:
        return plan.for_task(task, getattr(args, "constraints", None), flags=True)
    except SearchOptionError as err:
        raise UsageError(str(err)) from None


def search_flags_given(args: argparse.Namespace) -> list[str]:
    """The search flags the command line gave, as written (``--improve rrc``, ``--two-opt``)."""
    given = [spell("improve", args.improve, True)] if args.improve != NONE else []
    return given + [s.flag for s in declared(LocalSearch).values() if getattr(args, s.name, False)]
