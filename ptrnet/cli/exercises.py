"""``ptrnet exercises``: write the student's exercise folder, or check it.

Two forms::

    ptrnet exercises DIR [--solutions]
    ptrnet exercises check DIR

The first writes five stubs into DIR (pointer attention, masking, convex-hull labels, tour cost,
greedy decoding), each docstring stating its contract, plus train_sorter.py, which trains a
small sorter with them, and test_exercises.py, so that plain pytest in DIR checks them too. With
--solutions it writes the filled-in files instead. The second checks each file against
ptrnet's own implementation on random cases and prints one line per exercise: ok, or what is
wrong. Its exit status is 0 when all five pass, else 1. ``check`` is therefore a reserved word
in the first position (write ``./check`` for a folder of that name).
"""

from __future__ import annotations

import argparse

from ptrnet.io.errors import UsageError

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
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.folder == CHECK:
        if args.checked is None:
            raise UsageError("ptrnet exercises check DIR: name the folder to check")
        if args.solutions:
            raise UsageError("--solutions applies to writing a folder, not to check")
        return check(args.checked)
    if args.checked is not None:
        raise UsageError(f"one folder to write, got two ({args.folder}, {args.checked})")
    from ptrnet.lessons.exercises.write import write_exercises

    try:
        paths = write_exercises(args.folder, solutions=args.solutions)
    except FileExistsError as err:
        raise UsageError(str(err)) from None
    kind = "solutions" if args.solutions else "exercises"
    print(f"wrote the {kind} to {args.folder}: {', '.join(p.name for p in paths)}")
    if not args.solutions:
        print(f"fill in each function, then: ptrnet exercises check {args.folder}")
    return 0


def check(folder: str) -> int:
    import torch

    from ptrnet.lessons.exercises.check import check_folder

    torch.set_num_threads(1)
    results = check_folder(folder)
    for item, problem in results:
        print(f"{item.number} {item.title} ({item.file}): {problem or 'ok'}")
    passed = sum(problem is None for _, problem in results)
    print(f"{passed} of {len(results)} pass")
    return 0 if passed == len(results) else 1
