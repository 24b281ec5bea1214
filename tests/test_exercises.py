"""``ptrnet exercises``: the stubs, the solutions, and the checker's one-line diagnoses.

The solutions must pass the checker, the stubs must be reported as not implemented yet, and one
planted mistake in each exercise must be named by its own one-line message.
"""

import subprocess
import sys

import pytest

from ptrnet.lessons.exercises.check import NOT_IMPLEMENTED, check_exercise, check_folder
from ptrnet.lessons.exercises.write import EXERCISES, solution, source, write_exercises

# (exercise, text in the solution, its replacement, the start of the expected message)
MISTAKES = [
    (1, "enc @ w1.T + (dec @ w2.T)", "enc @ w2.T + (dec @ w1.T)", "W1 and W2 swapped"),
    (1, "return torch.log_softmax(scores, dim=-1)", "return torch.softmax(scores, dim=-1)",
     "returned probabilities, not log-probabilities"),
    (1, "return torch.log_softmax(scores, dim=-1)", "return scores", "log-probs not normalised"),
    (1, "    batch, n, d = enc.shape\n", "    batch, n, d = enc.shape\n    n = n + None\n",
     "raised TypeError"),
    (2, 'scores.masked_fill(chosen, float("-inf")), dim=-1)',
     'scores, dim=-1).masked_fill(chosen, float("-inf"))',
     "log-probs not normalised over the allowed positions"),
    (2, "scores.masked_fill(chosen,", "scores.masked_fill(~chosen,", "unmasked position"),
    (2, "    if scores.shape != chosen.shape:\n", "    chosen[:] = False\n    if False:\n",
     "modified the chosen mask in place"),
    (3, "np.array([*cycle, cycle[0]]", "np.array([*cycle]", "hull not closed"),
    (3, "cycle = cycle[start:] + cycle[:start]", "cycle = cycle[1:] + cycle[:1]",
     "hull not canonical: start at the lowest index"),
    (3, "    start = cycle.index", "    cycle = cycle[::-1]\n    start = cycle.index",
     "hull not canonical: clockwise"),
    (4, "points[np.roll(tour, -1)] - points[tour]", "np.diff(points[tour], axis=0)",
     "tour not closed"),
    (4, "        raise ValueError(f\"not a tour", "        print(f\"not a tour",
     "no ValueError for the tour [0, 0, 1]"),
    (5, 'scores.masked_fill(chosen, float("-inf")).argmax', "scores.argmax",
     "unmasked position chosen"),
    (5, "        scores, state = step(prev, state)", "        scores, _ = step(prev, state)",
     "step 1 got an old state"),
    (5, "        order.append(prev)", "        order.append(prev)\n        prev = prev * 0",
     "step 1 was fed prev"),
]  # fmt: skip


def write(folder, number, text):
    (folder / EXERCISES[number - 1].file).write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("solved")
    write_exercises(folder, solutions=True)
    return folder


def test_the_solutions_pass(solved):
    assert [problem for _, problem in check_folder(solved)] == [None] * 5


def test_the_stubs_report_not_implemented_yet(tmp_path):
    write_exercises(tmp_path)
    assert [problem for _, problem in check_folder(tmp_path)] == [NOT_IMPLEMENTED] * 5
    text = (tmp_path / EXERCISES[0].file).read_text()
    assert "# solution" not in text and "log_softmax" not in text.split('"""')[-1]


@pytest.mark.parametrize("number, old, new, message", MISTAKES)
def test_a_planted_mistake_is_named_in_one_line(tmp_path, number, old, new, message):
    write_exercises(tmp_path, solutions=True)
    text = solution(source(EXERCISES[number - 1].file))
    assert text.count(old) == 1
    write(tmp_path, number, text.replace(old, new))
    problem = check_exercise(tmp_path, number)
    assert problem is not None and problem.startswith(message), problem
    assert "\n" not in problem


def test_a_file_that_does_not_import_is_reported_with_its_line(tmp_path):
    write_exercises(tmp_path)
    write(tmp_path, 4, "import numpy\n\ndef tour_length(points, tour)\n    return 0\n")
    problem = check_exercise(tmp_path, 4)
    assert problem.startswith("ex4_tour_cost.py does not import: SyntaxError")
    assert problem.endswith("(ex4_tour_cost.py line 3)")


def test_an_existing_exercise_is_never_overwritten(tmp_path):
    write_exercises(tmp_path)
    with pytest.raises(FileExistsError, match="ex1_pointer_attention.py exists"):
        write_exercises(tmp_path, solutions=True)


def test_the_command_writes_and_checks(cli, tmp_path):
    status, out, _ = cli("exercises", "mine")
    assert status == 0 and "ptrnet exercises check mine" in out
    status, out, _ = cli("exercises", "check", "mine")
    assert status == 1 and out.count(NOT_IMPLEMENTED) == 5 and "0 of 5 pass" in out
    status, _, err = cli("exercises", "mine", "--solutions")
    assert status == 2 and "exists; choose an empty folder" in err
    status, out, _ = cli("exercises", "solved", "--solutions")
    status, out, _ = cli("exercises", "check", "solved")
    assert status == 0 and out.count(": ok") == 5


def test_pytest_in_the_folder_checks_it(solved, tmp_path):
    write_exercises(tmp_path)
    write(tmp_path, 4, (solved / EXERCISES[3].file).read_text())
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "."],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert "1 passed" in run.stdout and "4 failed" in run.stdout, run.stdout
    assert f"Failed: {NOT_IMPLEMENTED}" in run.stdout and "Traceback" not in run.stdout


@pytest.mark.slow
def test_the_training_script_sorts_with_the_solutions(solved):
    """train_sorter.py runs on the student's files; 300 steps sort most lists of 6."""
    run = subprocess.run(
        [sys.executable, "train_sorter.py", "300"],
        cwd=solved, capture_output=True, text=True, check=True,
    )  # fmt: skip
    share = float(run.stdout.split("sorted exactly: ")[1].split("%")[0])
    assert share > 50, run.stdout
