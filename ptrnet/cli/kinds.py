"""The generic commands (``generate``, ``train``, ``eval``, ``predict``) for every input kind.

Each command module builds one parser for every task and, once the task is known, runs its own
code for a point task or hands a task of another kind to that kind's front end (the input kind
is on the task card, :mod:`ptrnet.tasks.card`). A front end is a module of this package with:

* ``OPTIONS``: per command, the option names (argparse ``dest``) its tasks take;
* ``EXTRA``: per command, the options only its tasks take (added to the command's parser by
  :func:`add_kind_arguments`, refused for point tasks);
* ``add_arguments(command, parser)`` adding ``EXTRA[command]``, and ``RUNS``: per command,
  ``run(args, task) -> int``.

An option a task's kind does not take, given with a value other than its default, is a usage
error naming the option and the task: ``--search-views: task copy takes sentences, and
--search-views applies to tasks that take points``. A new task of an existing kind needs
nothing here, unless its answers are of another form than its kind's (the span task: a span of
its input, not a sentence), which a module serves with the kind's options (:data:`BY_ANSWER`);
a new kind needs its front end and its line in :data:`FRONT_ENDS`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from functools import partial
from types import ModuleType

from ptrnet.cli import induction, sentences, spans
from ptrnet.cli.common import task_named
from ptrnet.io.errors import UsageError
from ptrnet.tasks import Task, TaskCard, task_spelled
from ptrnet.tasks.span import SpanTask

#: The front end of each input kind other than points (whose code is the command's own).
FRONT_ENDS: dict[str, ModuleType] = {"sentences": sentences, "sequences": induction}
#: Tasks whose commands run elsewhere than their kind's front end, with that front end's
#: options: the span task answers with a span of its input, not a sentence.
BY_ANSWER: dict[type[TaskCard], ModuleType] = {SpanTask: spans}
#: Names the generic commands take besides the registry's tasks: lessons, with their cards.
LESSONS: dict[str, TaskCard] = {induction.NAME: induction.CARD}


def front_end(task: TaskCard) -> ModuleType | None:
    """The module whose ``RUNS`` serve ``task`` (None: a point task, the command's own code)."""
    for cls, front in BY_ANSWER.items():
        if isinstance(task, cls):
            return front
    return FRONT_ENDS.get(task.input_kind)


def add_kind_arguments(command: str, parser: argparse.ArgumentParser) -> None:
    """Add every front end's options of ``command`` to its parser."""
    for front in FRONT_ENDS.values():
        front.add_arguments(command, parser)


def finish(
    parser: argparse.ArgumentParser,
    command: str,
    run_points: Callable[[argparse.Namespace, Task], int],
) -> None:
    """Make the parser's command :func:`run_command` for ``command``, with ``run_points`` as
    the code for point tasks, and record every option's default, so that
    :func:`command_task` can tell the options given from those left alone."""
    defaults = {
        a.dest: a.default
        for a in parser._actions
        if a.option_strings and a.default is not argparse.SUPPRESS
    }
    parser.set_defaults(run=partial(run_command, command, run_points), option_defaults=defaults)


def run_command(
    command: str, run_points: Callable[[argparse.Namespace, Task], int], args: argparse.Namespace
) -> int:
    """Run ``command`` for the task ``args.task``: ``run_points`` for a point task, its input
    kind's front end otherwise (after :func:`command_task`'s checks)."""
    task = command_task(args, command)
    front = front_end(task)
    return run_points(args, task) if front is None else front.RUNS[command](args, task)


def given_options(args: argparse.Namespace) -> list[str]:
    """The options of ``args`` whose value is not their default."""
    defaults = args.option_defaults
    return [dest for dest, value in defaults.items() if getattr(args, dest) != value]


def command_task(args: argparse.Namespace, command: str) -> TaskCard:
    """The task ``args.task`` names, once every option given is one its kind takes.

    Raises:
        UsageError: an unknown task, a lesson the command does not serve, or an option its
            kind does not take.
    """
    task = LESSONS.get(task_spelled(args.task, LESSONS)) or task_named(args.task)
    if task.name in LESSONS and command not in task.commands:  # before its options
        raise UsageError(task.refusal(command))
    for dest in given_options(args):
        if not _takes(task.input_kind, dest, command):
            raise UsageError(
                f"{flag(dest)}: task {task.name} takes {task.input_kind}, and {flag(dest)} "
                f"applies to tasks that take {_kinds_taking(dest, command)}"
            )
    return task


def _takes(kind: str, dest: str, command: str) -> bool:
    """Whether tasks of input ``kind`` take the option ``dest`` of ``command``."""
    front = FRONT_ENDS.get(kind)
    if front is None:  # points: every option but the other kinds' own
        return all(dest not in f.EXTRA[command] for f in FRONT_ENDS.values())
    return dest in front.OPTIONS[command]


def _kinds_taking(dest: str, command: str) -> str:
    """The input kinds whose tasks take the option ``dest`` of ``command``, in words."""
    kinds = [k for k in ("points", *FRONT_ENDS) if _takes(k, dest, command)]
    return " or ".join(kinds)


def flag(dest: str) -> str:
    """The command-line spelling of the option ``dest``: ``beam_width`` -> ``--beam-width``."""
    return "--" + dest.replace("_", "-")
