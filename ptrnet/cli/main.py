"""The ``ptrnet`` command line: one subcommand per module, each with ``register`` and ``run``.

A subcommand module defines ``register(subparsers)``, which adds its parser and sets
``run`` as the parser default, and ``run(args) -> int``. Adding a command = adding its module
to ``COMMANDS``. Errors in user input are printed as one line, ``ptrnet: error: FILE:LINE:
problem``, with a non-zero exit status and no traceback. Modules here import nothing heavy
(torch is imported only inside the commands that need it).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import warnings
from collections.abc import Sequence

from ptrnet import __version__
from ptrnet.cli import (
    demo,
    eval,
    exercises,
    generate,
    lesson,
    plot,
    predict,
    reproduce,
    score,
    serve,
    solve,
    train,
)
from ptrnet.cli.parser import Parser
from ptrnet.io.errors import InputError, UsageError

COMMANDS = (
    demo,
    generate,
    solve,
    score,
    train,
    eval,
    predict,
    plot,
    serve,
    reproduce,
    exercises,
    lesson,
)

EXIT_INPUT_ERROR = 1
EXIT_USAGE_ERROR = 2  # argparse's own status for bad arguments
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a command killed by it
EXIT_INTERRUPTED = 128 + signal.SIGINT  # Ctrl-C (train's SIGTERM: ptrnet.cli.interrupts)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="ptrnet",
        description="Pointer Networks (Vinyals et al. 2015): data, training, evaluation.",
    )
    parser.add_argument("--version", action="version", version=f"ptrnet {__version__}")
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=Parser
    )
    for command in COMMANDS:
        command.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``ptrnet`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, --version, or an argparse error already printed
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE_ERROR
    with warnings.catch_warnings():
        warnings.showwarning = _one_line_warning
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    """``args.run(args)``, with the errors a user can cause turned into one line and a status."""
    try:
        return args.run(args)
    except InputError as err:
        return _error(err, EXIT_INPUT_ERROR)
    except UsageError as err:
        return _error(err, EXIT_USAGE_ERROR)
    except BrokenPipeError:  # the reader went away, e.g. `ptrnet eval ... | head -3`
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except OSError as err:  # e.g. the output directory does not exist
        where = f"{err.filename}: " if err.filename else ""
        return _error(f"{where}{err.strerror or err}", EXIT_INPUT_ERROR)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that flushing it at exit raises nothing more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real file descriptor (e.g. captured in tests)
        pass


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Python's warnings on the command line: ``ptrnet: warning: MESSAGE``, one line (not the
    file, line and source line of where it was raised)."""
    del category, filename, lineno, line
    print(f"ptrnet: warning: {message}", file=file or sys.stderr)


def _error(message: object, status: int) -> int:
    print(f"ptrnet: error: {message}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
