"""Check a student's exercise files against ptrnet's own implementations, one line per problem.

:func:`check_exercise` loads the student's file from the folder, runs its function on random
cases (:mod:`ptrnet.lessons.exercises.cases`) and returns None when every case agrees with
ptrnet, else one line naming what is wrong: ``not implemented yet``, an exception the function
raised, a wrong shape or dtype, an unmasked position, a hull out of canonical order, a tour not
closed, log-probabilities that do not sum to one...
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from ptrnet.lessons.exercises import cases
from ptrnet.lessons.exercises.cases import Wrong
from ptrnet.lessons.exercises.write import EXERCISES, Exercise

NOT_IMPLEMENTED = "not implemented yet"

CHECKS: dict[int, Callable[[Callable], None]] = {
    1: cases.check_attention,
    2: cases.check_masking,
    3: cases.check_hull,
    4: cases.check_tour,
    5: cases.check_greedy,
}


def exercise(number: int) -> Exercise:
    """The exercise numbered ``number`` (1..5). Raises ValueError for another number."""
    for item in EXERCISES:
        if item.number == number:
            return item
    raise ValueError(f"no exercise {number}; they are numbered 1 to {len(EXERCISES)}")


def check_exercise(folder: str | Path, number: int) -> str | None:
    """None if exercise ``number`` in ``folder`` passes, else one line saying what is wrong."""
    item = exercise(number)
    path = Path(folder) / item.file
    if not path.is_file():
        return f"{path} is missing (write the exercises with `ptrnet exercises {folder}`)"
    try:
        module = load(path)
    except Exception as err:  # the student's file: any error is reported, none escapes
        return f"{item.file} does not import: {one_line(err, path)}"
    function = getattr(module, item.function, None)
    if not callable(function):
        return f"{item.file} defines no function {item.function}"
    try:
        CHECKS[number](guarded(function, path))
    except Wrong as wrong:
        return str(wrong)
    return None


def check_folder(folder: str | Path) -> list[tuple[Exercise, str | None]]:
    """Every exercise of ``folder`` with its problem (None when it passes)."""
    return [(item, check_exercise(folder, item.number)) for item in EXERCISES]


def load(path: Path) -> ModuleType:
    """Import the file at ``path`` afresh, its folder on sys.path (so it can import its
    neighbours)."""
    name = f"ptrnet_student_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


def guarded(function: Callable, path: Path) -> Callable:
    """``function``, whose exceptions become :class:`Wrong` (``not implemented yet`` for
    NotImplementedError); a ValueError is passed through for the cases that expect one."""

    def call(*args, expect_value_error: bool = False):
        try:
            return function(*args)
        except NotImplementedError:
            raise Wrong(NOT_IMPLEMENTED) from None
        except ValueError:
            if expect_value_error:
                raise
            raise Wrong(f"raised {one_line(sys.exc_info()[1], path)}") from None
        except Exception as err:  # the student's code: reported in one line, never a traceback
            raise Wrong(f"raised {one_line(err, path)}") from None

    return call


def one_line(err: BaseException, path: Path) -> str:
    """``TypeError: message (ex1_pointer_attention.py line 31)``: the error and the last line
    of the student's file it passed through."""
    message = str(err).strip().splitlines()[0] if str(err).strip() else ""
    lines = [f.lineno for f in traceback.extract_tb(err.__traceback__) if f.filename == str(path)]
    if isinstance(err, SyntaxError) and err.lineno:
        lines.append(err.lineno)
        message = err.msg
    where = f" ({path.name} line {lines[-1]})" if lines else ""
    return f"{type(err).__name__}{': ' + message if message else ''}{where}"
