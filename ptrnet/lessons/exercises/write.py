"""Write the exercise folder: the stubs (or, with ``solutions``, the filled-in files), the
training script and a pytest file that checks them."""

from __future__ import annotations

import re
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


def write_exercises(folder: str | Path, solutions: bool = False) -> list[Path]:
    """Write the five exercise files, the training script and the pytest file into ``folder``
    (created if missing); returns their paths. Stubs unless ``solutions``.

    Raises:
        FileExistsError: ``folder`` already holds one of the exercise files (a student's work
            is never overwritten).
    """
    folder = Path(folder)
    names = [e.file for e in EXERCISES] + [TRAINER, TEST_FILE]
    taken = [name for name in names if (folder / name).exists()]
    if taken:
        raise FileExistsError(f"{folder / taken[0]} exists; choose an empty folder")
    folder.mkdir(parents=True, exist_ok=True)
    texts = {
        e.file: solution(source(e.file)) if solutions else stub(source(e.file), e.number)
        for e in EXERCISES
    }
    texts[TRAINER] = source(TRAINER)
    texts[TEST_FILE] = TEST_SOURCE
    for name, text in texts.items():
        (folder / name).write_text(text, encoding="utf-8")
    return [folder / name for name in names]
