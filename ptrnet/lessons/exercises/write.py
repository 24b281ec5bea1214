"""Write the exercise folder: the stubs (or, with ``solutions``, the filled-in files), the
training script and a pytest file that checks them.

The folder is written all at once or not at all, so that a failed write (a full disk) leaves
nothing that stops a retry: a new folder is filled under a temporary name beside it and renamed
into place; an existing empty folder gets the files moved in from a temporary folder inside it,
the moves undone on failure. Nothing is written through a symbolic link: the folder may not be
one, and must be empty.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

BEGIN, END = "# solution: begin", "# solution: end"
TRAINER = "train_sorter.py"
TEST_FILE = "test_exercises.py"


@dataclass(frozen=True)
class Exercise:
    """One exercise: its number, file, the function the student writes and a short title."""

    number: int
    file: str
    function: str
    title: str


EXERCISES = (
    Exercise(1, "ex1_pointer_attention.py", "pointer_log_probs", "pointer attention"),
    Exercise(2, "ex2_masking.py", "masked_log_probs", "masking"),
    Exercise(3, "ex3_hull_labels.py", "hull_label", "convex hull labels"),
    Exercise(4, "ex4_tour_cost.py", "tour_length", "tour cost"),
    Exercise(5, "ex5_greedy_decoding.py", "greedy_decode", "greedy decoding"),
)

TEST_SOURCE = '''"""Checks your exercises against ptrnet's own implementations: run `pytest` here
(or `ptrnet exercises check .`). Each failure is one line saying what is wrong."""

from pathlib import Path

import pytest

from ptrnet.lessons.exercises.check import check_exercise

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("number", [1, 2, 3, 4, 5])
def test_exercise(number):
    problem = check_exercise(HERE, number)
    if problem is not None:
        pytest.fail(problem, pytrace=False)
'''


def source(name: str) -> str:
    """The filled-in text of exercise file ``name`` (package data)."""
    package = resources.files("ptrnet.lessons.exercises.sources")
    return package.joinpath(name).read_text(encoding="utf-8")


def stub(text: str, number: int) -> str:
    """``text`` with every solution block replaced by ``raise NotImplementedError``, indented
    as the block was. Raises ValueError if ``text`` has no block."""
    pattern = re.compile(rf"^( *){re.escape(BEGIN)}\n.*?^ *{re.escape(END)}\n", re.M | re.S)
    if not pattern.search(text):
        raise ValueError(f"exercise {number} has no '{BEGIN}' block")
    message = f'raise NotImplementedError("exercise {number}: write this function")'
    return pattern.sub(lambda m: f"{m.group(1)}{message}\n", text)


def solution(text: str) -> str:
    """``text`` without the solution markers (the answer kept)."""
    return re.sub(rf"^ *({re.escape(BEGIN)}|{re.escape(END)})\n", "", text, flags=re.M)


def write_exercises(folder: str | os.PathLike[str], solutions: bool = False) -> list[Path]:
    """Write the five exercise files, the training script and the pytest file into ``folder``
    (created, with its parents, if missing), all or none of them; returns their paths. Stubs
    unless ``solutions``.

    Raises:
        ValueError: an empty name, or ``folder`` is a symbolic link.
        FileExistsError: ``folder`` is not an empty folder (a student's work is never
            overwritten, nor anything written through a link inside it).
        OSError: the write failed (a full disk), named by ``folder``; nothing is left behind.
    """
    if not os.fspath(folder):
        raise ValueError("an empty folder name: name the folder to write (. for this one)")
    folder = Path(folder)
    _check_empty(folder)
    texts = {
        e.file: solution(source(e.file)) if solutions else stub(source(e.file), e.number)
        for e in EXERCISES
    }
    texts[TRAINER] = source(TRAINER)
    texts[TEST_FILE] = TEST_SOURCE
    try:
        if folder.is_dir():
            _fill_existing(folder, texts)
        else:
            _fill_new(folder, texts)
    except OSError as err:
        if err.filename == os.fspath(folder):
            raise
        raise OSError(err.errno, err.strerror or str(err), os.fspath(folder)) from None
    return [folder / name for name in texts]


def write_file(path: Path, text: str) -> None:
    """Create the file ``path`` (never one that exists, nor through a link) holding ``text``."""
    with open(path, "x", encoding="utf-8") as stream:
        stream.write(text)


def _check_empty(folder: Path) -> None:
    """Raise ValueError if ``folder`` is a symbolic link, FileExistsError if it is something
    other than a folder or holds anything (an exercise file named first)."""
    if folder.is_symlink():
        raise ValueError(f"{folder} is a symbolic link; name a real folder to write")
    if not os.path.lexists(folder):
        return
    if not folder.is_dir():
        raise FileExistsError(f"{folder} exists and is not a folder; choose an empty folder")
    held = sorted(os.listdir(folder))
    if held:
        ours = [e.file for e in EXERCISES] + [TRAINER, TEST_FILE]
        first = next((name for name in ours if name in held), held[0])
        link = " (a symbolic link)" if (folder / first).is_symlink() else ""
        raise FileExistsError(f"{folder / first}{link} exists; choose an empty folder")


def _fill(staging: Path, texts: dict[str, str]) -> None:
    for name, text in texts.items():
        write_file(staging / name, text)


def _fill_new(folder: Path, texts: dict[str, str]) -> None:
    """Fill a temporary folder beside ``folder``, then rename it to ``folder``; on failure
    remove it and the parents made for it."""
    made = _make_parents(folder.parent)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".tmp", dir=folder.parent))
    try:
        _fill(staging, texts)
        umask = os.umask(0)
        os.umask(umask)
        staging.chmod(0o777 & ~umask)  # mkdtemp makes it 0700; a plain mkdir would not
        os.rename(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        for parent in made:
            with contextlib.suppress(OSError):
                parent.rmdir()
        raise


def _fill_existing(folder: Path, texts: dict[str, str]) -> None:
    """Fill a temporary folder inside the empty ``folder`` (same file system), then move the
    files up; on failure remove the temporary folder and the files moved."""
    staging = Path(tempfile.mkdtemp(prefix=".ptrnet-exercises.", suffix=".tmp", dir=folder))
    moved: list[Path] = []
    try:
        _fill(staging, texts)
        for name in texts:
            os.rename(staging / name, folder / name)
            moved.append(folder / name)
        staging.rmdir()
    except BaseException:
        for path in moved:
            with contextlib.suppress(OSError):
                path.unlink()
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _make_parents(parent: Path) -> list[Path]:
    """Make the missing folders of ``parent``; returns those made, deepest first (none left
    behind if one cannot be made)."""
    missing = []
    while not os.path.lexists(parent):
        missing.append(parent)
        parent = parent.parent
    made: list[Path] = []
    try:
        for path in reversed(missing):
            path.mkdir()
            made.insert(0, path)
    except OSError:
        for path in made:
            with contextlib.suppress(OSError):
                path.rmdir()
        raise
    return made
