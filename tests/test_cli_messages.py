"""What the command line says when a command is mistyped or an instance is odd: every argparse
error one line naming the help to read (exit status 2, no usage block), task names in any case,
the closest name for an unknown one, warnings worded by the task, and no note about the unit
square from ``solve``."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest

from ptrnet.cli.kinds import command_task
from ptrnet.cli.main import build_parser
from ptrnet.decoding.strategies import STRATEGIES
from ptrnet.quoting import did_you_mean
from ptrnet.tasks import POINT_TASKS, TASKS, get_task

COMMANDS = sorted(
    next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
)


def one_line(status: int, err: str, expected: str) -> None:
    """A usage error: status 2 and exactly the line ``expected`` on stderr."""
    assert (status, err) == (2, expected + "\n")


@pytest.mark.parametrize("command", COMMANDS)
def test_an_unknown_option_of_every_command_is_one_line(command: str, cli) -> None:
    status, out, err = cli(command, "--no-such-option")
    assert status == 2 and out == "", err
    assert err.count("\n") == 1 and "usage:" not in err, err
    assert err.startswith("ptrnet: error: ") and err.endswith(f" (see ptrnet {command} --help)\n")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["predict", "tsp", "in.txt", "-o", "-", "--decode", "beam", "--beam-width", "0"],
            "argument --beam-width: expected an integer from 1 to 1,024, got '0'",
        ),
        (
            ["predict", "tsp", "in.txt", "-o", "/no-such-dir/out.txt"],
            "argument -o/--output: '/no-such-dir/out.txt': cannot write into /no-such-dir: No such "
            "file or directory",
        ),
        (["predict", "tsp", "in.txt", "-o", "-", "--bogus"], "unrecognized arguments: --bogus"),
        (["predict", "tsp"], "the following arguments are required: INPUT"),
        (
            ["predict", "tsp", "in.txt", "-o", "-", "--decode", "bean"],
            f"argument --decode: choose from {', '.join(STRATEGIES)}, got 'bean'; did you mean "
            "'beam'?",
        ),
        (
            ["predict", "tsp", "in.txt", "-o", "-", "--views", "8"],
            "--views is split into options that say what they do: --views 2 or 4 is "
            "--average-views 2 or 4; --views 8 is --search-views 8 (with --average-views 4 for "
            "convex_hull and tsp, as --views 8 searched); --decode multistart --views V is "
            "--multistart V",
        ),
        (
            ["lesson", "masking"],
            "argument TRAP: invalid choice: 'masking' (choose from 'mixing', 'mask', "
            "'label-order', 'decoder-inputs'); did you mean 'mask'?",
        ),
        (
            ["train", "sort", "--threads", "0"],
            "argument --threads: expected an integer from 1 to 4,096, got '0'",
        ),  # fmt: skip
    ],
    ids=["type", "output", "unknown", "missing", "strategy", "moved", "choice", "threads"],
)
def test_argparse_errors_are_one_line_with_the_help_to_read(argv, message, cli) -> None:
    one_line(*cli(*argv)[::2], f"ptrnet: error: {message} (see ptrnet {argv[0]} --help)")


def test_a_mistyped_command_gets_the_closest_one(cli) -> None:
    status, _, err = cli("predcit", "tsp")
    assert status == 2 and err.count("\n") == 1
    assert err.startswith("ptrnet: error: argument COMMAND: invalid choice: 'predcit' (choose")
    assert err.endswith("'lesson'); did you mean 'predict'? (see ptrnet --help)\n")


def test_help_still_prints_the_usage(cli) -> None:
    status, out, _ = cli("predict", "--help")
    assert status == 0 and out.startswith("usage: ptrnet predict")


def paper_file(path: Path, rows: np.ndarray) -> Path:
    path.write_text("\n".join(" ".join(map(repr, row.ravel().tolist())) for row in rows) + "\n")
    return path


@pytest.mark.parametrize("spelled", ["TSP", "Tsp", "tsP"])
def test_a_task_name_is_taken_in_any_case(spelled: str, cli, tmp_path: Path, models) -> None:
    paper_file(tmp_path / "in.txt", np.random.default_rng(0).random((2, 12)))
    for command in ("predict", "solve"):
        expected = cli(command, "tsp", "in.txt", "-o", "-", "-q")
        assert cli(command, spelled, "in.txt", "-o", "-", "-q") == expected
        assert expected[0] == 0
    status, _, err = cli("plot", spelled, "in.txt", "--model", "none", "-o", "p.png")
    assert status == 0 and (tmp_path / "p.png").exists(), err
    assert build_parser().parse_args(["demo", "--tasks", "TSP", "Sort"]).tasks == ["tsp", "sort"]
    lesson = build_parser().parse_args(["train", "Induction", "--out", "r"])
    assert command_task(lesson, "train").name == "induction"


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("predict", ["in.txt", "-o", "-"]),
        ("solve", ["in.txt", "-o", "-"]),
        ("generate", ["-n", "5", "--count", "1", "-o", "-"]),
        ("score", ["ref.txt", "pred.txt"]),
    ],
)
def test_an_unknown_task_gets_the_closest_name(command: str, argv, cli) -> None:
    choices = ", ".join(TASKS)
    one_line(
        *cli(command, "tps", *argv)[::2],
        f"ptrnet: error: unknown task 'tps'; choose from {choices}; did you mean 'tsp'?",
    )
    status, _, err = cli(command, "hull", *argv)
    assert status == 2 and err.endswith("; did you mean 'convex_hull'?\n")
    status, _, err = cli(command, "qqqq", *argv)
    assert status == 2 and err == f"ptrnet: error: unknown task 'qqqq'; choose from {choices}\n"


def test_plot_names_the_closest_task_for_a_source_that_is_neither(cli) -> None:
    status, _, err = cli("plot", "tps", "in.txt", "-o", "p.png")
    assert status == 2 and err.endswith(" nor a model path; did you mean 'tsp'?\n"), err


def test_did_you_mean_is_difflib_then_the_one_name_containing_it() -> None:
    assert did_you_mean("TPS", POINT_TASKS) == "; did you mean 'tsp'?"
    assert did_you_mean("delaunya", POINT_TASKS) == "; did you mean 'delaunay'?"
    assert did_you_mean("hull", POINT_TASKS) == "; did you mean 'convex_hull'?"
    assert did_you_mean("xyz", POINT_TASKS) == ""
    assert did_you_mean("hul", ["convex_hull", "hull_two"]) == ""  # two contain it


LINE = np.array([[0.0, 0.0], [0.5, 0.5], [1.0, 1.0]])  # all points collinear
SPOT = np.full((3, 2), 0.2)  # fewer than 3 distinct points


@pytest.mark.parametrize(
    ("task", "points", "warning"),
    [
        ("convex_hull", LINE, "degenerate instance (all points are collinear): no convex hull "
         "exists; the model's output is written as decoded"),
        ("convex_hull", SPOT, "degenerate instance (needs at least 3 distinct points): no "
         "convex hull exists; the model's output is written as decoded"),
        ("delaunay", LINE, "degenerate instance (all points are collinear): no triangulation "
         "exists; the model's output is written as decoded"),
        ("tsp", LINE, None),
        ("tsp", SPOT, None),
        ("convex_hull", np.eye(3)[:, :2], None),
    ],
)  # fmt: skip
def test_each_task_words_its_degenerate_warning(task: str, points, warning) -> None:
    assert get_task(task).degenerate_warning(points) == warning


def test_predict_warns_in_the_tasks_words(cli, tmp_path: Path, models) -> None:
    paper_file(tmp_path / "in.txt", np.stack([LINE.ravel(), SPOT.ravel()]))
    status, _, err = cli("predict", "tsp", "in.txt", "-o", "tour.txt")
    assert status == 0 and "warning" not in err and "hull" not in err, err
    status, _, err = cli("predict", "convex_hull", "in.txt", "-o", "h.txt", "--protocol", "paper")
    assert status == 0
    assert err.splitlines()[:2] == [
        "ptrnet: warning: in.txt:1: degenerate instance (all points are collinear): no convex "
        "hull exists; the model's output is written as decoded",
        "ptrnet: warning: in.txt:2: degenerate instance (needs at least 3 distinct points): no "
        "convex hull exists; the model's output is written as decoded",
    ]


def test_solve_says_nothing_of_the_unit_square(cli, tmp_path: Path, models) -> None:
    paper_file(tmp_path / "km.txt", np.random.default_rng(1).random((1, 16)) * 5000)
    status, _, err = cli("solve", "tsp", "km.txt", "-o", "-")
    assert status == 0 and err == "ptrnet: wrote 1 tsp instances to standard output\n"
    status, _, err = cli("predict", "tsp", "km.txt", "-o", "-")
    assert status == 0 and "mapped 1 instance(s) into the unit square" in err
