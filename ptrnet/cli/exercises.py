"""``ptrnet exercises``: write the student's exercise folder, or check it.

Two forms::

    ptrnet exercises DIR [--solutions]
    ptrnet exercises check DIR [--timeout SECONDS]

The first writes five stubs into DIR (pointer attention, masking, convex-hull labels, tour cost,
greedy decoding), each docstring stating its contract, plus train_sorter.py, which trains a
small sorter with them, and test_exercises.py, so that plain pytest in DIR checks them too. With
--solutions it writes the filled-in files instead, all at once or not at all, into a new or
empty folder (never through a symbolic link). The second runs the folder's code (check only
folders you trust): each file, in a child process of its own stopped after --timeout seconds
(default 60), against ptrnet's own implementation on random cases, and prints one line per
exercise: ok, or what is wrong (an exit or a timeout is a failure). Its exit status is 0 when
all five pass, else 1. ``check`` is therefore a reserved word in the first position (write
``./check`` for a folder of that name).
"""

from __future__ import annotations

import argparse

from ptrnet.io.errors import UsageError
from ptrnet.io.limits import EXERCISE_SECONDS
from ptrnet.quoting import quote

CHECK = "check"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "exercises",
        help="write exercise stubs for a student (or their solutions), or check them",
        description=__doc__.split("\n\n", 1)[1],
    )
    parser.add_argument("folder", metavar="DIR", help="the folder to write, or 'check'")
    parser.add_argument("checked", metavar="DIR", nargs="?", help="after 'check': the folder")
    parser.add_argument(
        "--solutions", action="store_true", help="write the filled-in files, not the stubs"
    )
    parser.add_argument(
        "--timeout",
        type=positive_seconds,
        default=None,
        metavar="SECONDS",
        help="check: stop each exercise's child process after SECONDS, its start included "
        f"(default: {EXERCISE_SECONDS:g})",
    )
    parser.set_defaults(run=run)


def positive_seconds(text: str) -> float:
    """argparse type of ``--timeout``: a positive, finite number of seconds."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(
            f"expected a positive number of seconds, got {quote(text)}"
        )
    return value


def run(args: argparse.Namespace) -> int:
    if args.folder == CHECK:
        if args.checked is None:
            raise UsageError("ptrnet exercises check DIR: name the folder to check")
        if args.solutions:
            raise UsageError("--solutions applies to writing a folder, not to check")
        return check(args.checked, args.timeout)
    if args.checked is not None:
        raise UsageError(f"one folder to write, got two ({args.folder}, {args.checked})")
    if args.timeout is not None:
        raise UsageError("--timeout applies to check, not to writing a folder")
    from ptrnet.lessons.exercises.write import write_exercises

    try:
        paths = write_exercises(args.folder, solutions=args.solutions)
    except (FileExistsError, ValueError) as err:  # an empty name, a link, a folder not empty
        raise UsageError(str(err)) from None
    kind = "solutions" if args.solutions else "exercises"
    print(f"wrote the {kind} to {args.folder}: {', '.join(p.name for p in paths)}")
    if not args.solutions:
        print(f"fill in each function, then: ptrnet exercises check {args.folder}")
    return 0


def check(folder: str, timeout: float | None) -> int:
    from ptrnet.lessons.exercises.check import check_folder

    results = check_folder(folder, EXERCISE_SECONDS if timeout is None else timeout)
    for item, problem in results:
        print(f"{item.number} {item.title} ({item.file}): {problem or 'ok'}")
    passed = sum(problem is None for _, problem in results)
    print(f"{passed} of {len(results)} pass")
    return 0 if passed == len(results) else 1
