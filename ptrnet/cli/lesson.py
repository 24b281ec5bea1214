"""``ptrnet lesson``: one of the classic traps of pointer networks, shown by a short experiment.

    ptrnet lesson TRAP [--quick] [--seed S] [-o FILE.json]

TRAP is one of mixing (attention that mixes, then a fixed-size classifier, against a pointer,
beyond the training sizes), mask (greedy decoding with and without the mask: repeated and
invalid outputs), label-order (hull labels from a random start and direction against canonical
ones) and decoder-inputs (the previous output's index instead of its coordinates as the
decoder's input). Each trains its small models from the seed and prints the measured figures
(docs/traps.md); --quick runs a reduced size, the one the tests use.
"""

from __future__ import annotations

import argparse

from ptrnet.cli.common import output_file, positive_int, seed_int
from ptrnet.lessons.traps import DEFAULT_SEED, TRAP_NAMES


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "lesson",
        help="run one trap's experiment (mixing, mask, label-order, decoder-inputs)",
        description=__doc__.split("\n\n", 1)[1],
    )
    parser.add_argument("trap", metavar="TRAP", choices=TRAP_NAMES, help=", ".join(TRAP_NAMES))
    parser.add_argument("--quick", action="store_true", help="the reduced size the tests run")
    parser.add_argument(
        "--steps",
        type=positive_int,
        metavar="K",
        help="training steps per model instead of the size's own (default: the size's)",
    )
    parser.add_argument(
        "--seed",
        type=seed_int,
        default=DEFAULT_SEED,
        help="seed of data and weights (default: %(default)s)",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=output_file,
        metavar="FILE",
        help="also write the figures as JSON to FILE (default: print only)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import torch

    from ptrnet.lessons.traps.run import report, run_trap, save

    torch.set_num_threads(1)
    record = run_trap(args.trap, quick=args.quick, seed=args.seed, steps=args.steps)
    print(report(record))
    if args.output:
        save(record, args.output)
    return 0
