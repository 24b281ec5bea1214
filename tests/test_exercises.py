"""``ptrnet exercises``: the stubs, the solutions, and the checker's one-line diagnoses.

The solutions must pass the checker, the stubs must be reported as not implemented yet, and one
planted mistake in each exercise must be named by its own one-line message.
"""

import errno
import os
import subprocess
import sys

import pytest

from ptrnet.lessons.exercises import write as writer
from ptrnet.lessons.exercises.check import (
    NOT_IMPLEMENTED,
    check_exercise,
    check_isolated,
)
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
    assert [check_exercise(solved, e.number) for e in EXERCISES] == [None] * 5


def test_the_stubs_report_not_implemented_yet(tmp_path):
    write_exercises(tmp_path)
    assert [check_exercise(tmp_path, e.number) for e in EXERCISES] == [NOT_IMPLEMENTED] * 5
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


def only(folder, number, text_added):
    """``folder`` holding exercise ``number``'s stub with ``text_added`` at its end and no other
    exercise file (a missing file is reported without a child process: each test starts one)."""
    write_exercises(folder)
    for item in EXERCISES:
        if item.number != number:
            (folder / item.file).unlink()
    path = folder / EXERCISES[number - 1].file
    path.write_text(path.read_text() + text_added)


@pytest.mark.parametrize(
    ("added", "message"),
    [
        ("import sys; sys.exit(0)\n", "ex1_pointer_attention.py exits on import: SystemExit: 0"),
        ("import os; os._exit(0)\n",
         "ex1_pointer_attention.py: the check exited with status 0 before reporting a result"),
        ("import os; os._exit(3)\n",
         "ex1_pointer_attention.py: the check exited with status 3 before reporting a result"),
    ],
)  # fmt: skip
def test_an_exit_from_the_students_file_is_a_failure(tmp_path, added, message):
    only(tmp_path, 1, added)
    assert check_isolated(tmp_path, 1).startswith(message)


def test_an_exit_inside_the_function_is_named_with_its_line(tmp_path):
    only(tmp_path, 4, "\n\ndef tour_length(points, tour):\n    raise SystemExit(0)\n")
    assert check_exercise(tmp_path, 4).startswith("exited: SystemExit: 0 (ex4_tour_cost.py line")


def test_a_hang_is_stopped_at_the_limit_and_named(tmp_path):
    only(tmp_path, 3, "import time\ntime.sleep(1000)\n")
    problem = check_isolated(tmp_path, 3, timeout=3)
    assert problem == "ex3_hull_labels.py timed out: still running after the limit of 3 s"


@pytest.mark.parametrize("timeout", [0, -1, float("inf"), float("nan"), True, "5"])
def test_check_isolated_refuses_a_bad_timeout(tmp_path, timeout):
    with pytest.raises(ValueError, match="timeout must be a positive number of seconds"):
        check_isolated(tmp_path, 1, timeout=timeout)


def test_the_command_fails_an_exit_instead_of_passing_it(cli, tmp_path):
    """`import sys; sys.exit(0)` appended to a stub used to end `check` with status 0 and no
    output; now that exercise fails, named with its line, and the status is 1."""
    only(tmp_path / "mine", 1, "import sys; sys.exit(0)\n")
    status, out, err = cli("exercises", "check", "mine", "--timeout", "120")
    assert (status, err) == (1, "")
    assert (
        "1 pointer attention (ex1_pointer_attention.py): ex1_pointer_attention.py exits on "
        "import: SystemExit: 0 (ex1_pointer_attention.py line" in out
    )
    assert "0 of 5 pass" in out
    for bad in ("0", "-2", "soon", "inf"):
        status, _, err = cli("exercises", "check", "mine", "--timeout", bad)
        assert status == 2 and "expected a positive number of seconds" in err
    status, _, err = cli("exercises", "other", "--timeout", "5")
    assert (
        status == 2
        and err == "ptrnet: error: --timeout applies to check, not to writing a folder\n"
    )


def test_writing_never_follows_a_link_inside_the_folder(tmp_path):
    """A dangling link named like an exercise file used to be written through."""
    folder, outside = tmp_path / "mine", tmp_path / "outside.py"
    folder.mkdir()
    (folder / EXERCISES[0].file).symlink_to(outside)
    with pytest.raises(FileExistsError, match="ex1_pointer_attention.py .a symbolic link. exists"):
        write_exercises(folder)
    assert not os.path.lexists(outside) and os.listdir(folder) == [EXERCISES[0].file]


def test_writing_refuses_a_folder_that_is_a_link(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "mine").symlink_to(tmp_path / "real")
    with pytest.raises(ValueError, match="mine is a symbolic link"):
        write_exercises(tmp_path / "mine")
    assert os.listdir(tmp_path / "real") == []


def test_writing_refuses_a_folder_that_is_not_empty(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="notes.txt exists; choose an empty folder"):
        write_exercises(tmp_path)
    assert os.listdir(tmp_path) == ["notes.txt"]


def test_an_empty_folder_name_is_refused(cli, tmp_path):
    """`ptrnet exercises ''` used to write into the current folder."""
    status, out, err = cli("exercises", "")
    assert (status, out) == (2, "") and err.count("\n") == 1 and "empty folder name" in err
    assert os.listdir(tmp_path) == []
    with pytest.raises(ValueError, match="empty folder name"):
        write_exercises("")


def full_disk_after(count, monkeypatch):
    """Make the writer fail with ENOSPC after ``count`` files, as a full disk would."""
    written = []
    write_file = writer.write_file

    def failing(path, text):
        if len(written) == count:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        write_file(path, text)
        written.append(path)

    monkeypatch.setattr(writer, "write_file", failing)


@pytest.mark.parametrize("existing", [False, True])
def test_a_failed_write_leaves_nothing_and_a_retry_works(tmp_path, monkeypatch, existing):
    """On a full disk the folder used to keep 5 of its 7 files, and a retry was refused."""
    folder = tmp_path / "a" / "b" / "mine"
    if existing:
        folder.mkdir(parents=True)
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    full_disk_after(5, monkeypatch)
    with pytest.raises(OSError) as raised:
        write_exercises(folder)
    assert (raised.value.errno, raised.value.filename) == (errno.ENOSPC, str(folder))
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before  # no file, no temporary folder
    monkeypatch.undo()
    paths = write_exercises(folder)
    assert sorted(os.listdir(folder)) == sorted(p.name for p in paths) and len(paths) == 7


def test_the_command_reports_a_full_disk_in_one_line(cli, tmp_path, monkeypatch):
    full_disk_after(6, monkeypatch)
    status, out, err = cli("exercises", "mine")
    assert (status, out) == (1, "") and err == "ptrnet: error: mine: No space left on device\n"
    assert os.listdir(tmp_path) == []
