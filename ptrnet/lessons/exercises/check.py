"""Check a student's exercise files against ptrnet's own implementations, one line per problem.

:func:`check_exercise` loads the student's file from the folder, runs its function on random
cases (:mod:`ptrnet.lessons.exercises.cases`) and returns None when every case agrees with
ptrnet, else one line naming what is wrong: ``not implemented yet``, an exception the function
raised, an exit (``sys.exit``), a wrong shape or dtype, an unmasked position, a hull out of
canonical order, a tour not closed, log-probabilities that do not sum to one...

:func:`check_exercise` runs the student's code in this process. :func:`check_isolated` (and
:func:`check_folder`, ``ptrnet exercises check``) runs it in a child process instead,
``python -m ptrnet.lessons.exercises.check FOLDER NUMBER REPORT``: it hands the child a random
nonce on its standard input and waits at most ``timeout`` seconds (the child's start included).
The child writes its result, tagged with the nonce, to the file REPORT. An exercise passes only
when that report arrives with the nonce and says so and the child exits with status 0: an exit
from the student's file (``sys.exit``, ``os._exit``, a crash) before the report is a failure,
and so is a child still running at the limit (it is killed). This guards against accidents and
naive tricks, not against code written to attack the checker, which runs with the user's rights:
check only folders you trust.
"""

from __future__ import annotations

import importlib.util
import json
import os
import secrets
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from math import inf
from pathlib import Path
from types import ModuleType

import torch

from ptrnet.io.limits import EXERCISE_SECONDS
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
    missing = _missing(folder, item)
    if missing:
        return missing
    try:
        module = load(path)
    except SystemExit as err:  # an exit is a failure, never a pass
        return f"{item.file} exits on import: {one_line(err, path)}"
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


def check_isolated(
    folder: str | os.PathLike[str], number: int, timeout: float = EXERCISE_SECONDS
) -> str | None:
    """As :func:`check_exercise`, in a child process stopped after ``timeout`` seconds: an
    exit before the child's report and a timeout are problems too. Raises ValueError for an
    unknown ``number`` or a ``timeout`` that is not a positive, finite number."""
    item = exercise(number)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout < inf:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    missing = _missing(folder, item)
    if missing:  # said without starting a child
        return missing
    nonce = secrets.token_hex(16)
    with tempfile.TemporaryDirectory(prefix="ptrnet-check-") as scratch:
        report = Path(scratch) / "report.json"
        command = [sys.executable, "-m", __spec__.name, os.fspath(folder), str(number), str(report)]
        child = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            child.communicate(f"{nonce}\n".encode(), timeout=timeout)
        except subprocess.TimeoutExpired:
            return f"{item.file} timed out: still running after the limit of {timeout:g} s"
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        return _reported(item, report, nonce, child.returncode)


def check_folder(
    folder: str | os.PathLike[str], timeout: float = EXERCISE_SECONDS
) -> list[tuple[Exercise, str | None]]:
    """Every exercise of ``folder`` with its problem (None when it passes), each checked by
    :func:`check_isolated`, as many at once as there are CPU cores."""
    workers = max(1, min(len(EXERCISES), os.cpu_count() or 1))
    with ThreadPoolExecutor(workers) as pool:
        problems = pool.map(lambda e: check_isolated(folder, e.number, timeout), EXERCISES)
        return list(zip(EXERCISES, problems, strict=True))


def _reported(item: Exercise, report: Path, nonce: str, status: int) -> str | None:
    """The problem the child reported, or why its report does not count."""
    try:
        result = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        result = None
    if not isinstance(result, dict) or result.get("nonce") != nonce or "problem" not in result:
        how = f"was killed by signal {-status}" if status < 0 else f"exited with status {status}"
        return f"{item.file}: the check {how} before reporting a result (an exit is a failure)"
    if status != 0:
        return f"{item.file}: the check exited with status {status} after its report"
    return None if result["problem"] is None else str(result["problem"])


def _child(argv: list[str]) -> None:
    """The child of :func:`check_isolated`: check exercise NUMBER of FOLDER, write
    ``{"nonce", "problem"}`` to REPORT, then end at once (no exit handler or thread that the
    student's file left behind can change the status)."""
    folder, number, report = argv
    nonce = sys.stdin.readline().strip()
    torch.set_num_threads(1)
    problem = check_exercise(folder, int(number))
    with open(report, "x", encoding="utf-8") as stream:
        json.dump({"nonce": nonce, "problem": problem}, stream)
    os._exit(0)


def _missing(folder: str | os.PathLike[str], item: Exercise) -> str | None:
    path = Path(folder) / item.file
    if not path.is_file():
        return f"{path} is missing (write the exercises with `ptrnet exercises {folder}`)"
    return None


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
    """``function``, whose exceptions and exits become :class:`Wrong` (``not implemented yet``
    for NotImplementedError); a ValueError is passed through for the cases that expect one."""

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
        except SystemExit as err:
            raise Wrong(f"exited: {one_line(err, path)}") from None

    return call


def one_line(err: BaseException, path: Path) -> str:
    """``TypeError: message (ex1_pointer_attention.py line 31)``: the error and the last line
    of the student's file it passed through."""
    message = str(err).strip().splitlines()[0] if str(err).strip() else ""
    here = os.path.abspath(path)  # frames name the file absolute, whatever the path loaded
    lines = [f.lineno for f in traceback.extract_tb(err.__traceback__) if f.filename == here]
    if isinstance(err, SyntaxError) and err.lineno:
        lines.append(err.lineno)
        message = err.msg
    where = f" ({path.name} line {lines[-1]})" if lines else ""
    return f"{type(err).__name__}{': ' + message if message else ''}{where}"


if __name__ == "__main__":
    _child(sys.argv[1:])
