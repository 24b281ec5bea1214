"""Smoke and error-path tests of ``ptrnet generate``, ``solve`` and ``score`` via ``main``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ptrnet.tasks import POINT_TASKS, get_task


def _sizes(task_name: str) -> str:
    return f"{max(get_task(task_name).min_n, 4)}-7"


@pytest.mark.parametrize("task_name", POINT_TASKS)
def test_generate_solve_score_round_trip(task_name: str, cli, tmp_path: Path) -> None:
    status, _, err = cli(
        "generate",
        task_name,
        "-n",
        _sizes(task_name),
        "--count",
        8,
        "--seed",
        3,
        "--workers",
        1,
        "-o",
        "data.txt",
    )
    assert status == 0 and err == f"ptrnet: wrote 8 {task_name} instances to data.txt\n"
    assert len((tmp_path / "data.txt").read_text().splitlines()) == 8
    assert cli("solve", task_name, "data.txt", "-o", "solved.txt", "-q") == (0, "", "")
    assert (tmp_path / "solved.txt").read_bytes() == (tmp_path / "data.txt").read_bytes()
    status, out, _ = cli("score", task_name, "data.txt", "solved.txt", "--json")
    metrics = json.loads(out)
    assert status == 0 and list(metrics) == [*get_task(task_name).metric_keys, "count"]
    assert metrics["count"] == 8
    status, out, _ = cli("score", task_name, "data.txt", "solved.txt")
    assert status == 0 and out.splitlines()[0].split() == ["task", task_name]


def test_generate_is_byte_identical_across_workers_and_shards(cli, tmp_path: Path) -> None:
    common = ("generate", "convex_hull", "-n", "5-9", "--count", 20, "--seed", 4, "-q")
    assert cli(*common, "--workers", 1, "-o", "w1.txt")[0] == 0
    assert cli(*common, "--workers", 2, "-o", "w2.txt")[0] == 0
    for i in (1, 2, 3):
        assert cli(*common, "--workers", 2, "--shard", f"{i}/3", "-o", f"s{i}.txt")[0] == 0
    whole = (tmp_path / "w1.txt").read_bytes()
    assert (tmp_path / "w2.txt").read_bytes() == whole
    assert b"".join((tmp_path / f"s{i}.txt").read_bytes() for i in (1, 2, 3)) == whole


def test_solve_plain_point_list(cli, tmp_path: Path) -> None:
    (tmp_path / "pts.txt").write_text("0 0 1 0 1 1 0 1 0.5 0.5\n0 0\t2 0 1 3\n")
    assert cli("solve", "convex_hull", "pts.txt", "-o", "out.txt", "-q")[0] == 0
    lines = (tmp_path / "out.txt").read_text().splitlines()
    assert [line.split("output ")[1] for line in lines] == ["1 2 3 4 1", "1 2 3 1"]


def test_solve_tsplib_writes_its_own_points_and_reports_lengths(cli, tmp_path: Path) -> None:
    (tmp_path / "rect.tsp").write_text(
        "NAME : rect\nTYPE : TSP\nDIMENSION : 5\nEDGE_WEIGHT_TYPE : EUC_2D\nNODE_COORD_SECTION\n"
        "1 10 10\n2 40 10\n3 40 30\n4 25 31\n5 10 30\nEOF\n"
    )
    status, _, err = cli("solve", "tsp", "rect.tsp", "-o", "rect.txt")
    assert status == 0
    coords, tour = (tmp_path / "rect.txt").read_text().split(" output ")
    assert [float(v) for v in coords.split()][:4] == [10.0, 10.0, 40.0, 10.0]
    assert tour.split() == ["1", "2", "3", "4", "5", "1"]
    # Edges 30, 20, 20 and twice sqrt(15^2 + 1): TSPLIB rounds each of those to 15.
    assert "rect: tour length 100.0665928 (TSPLIB EUC_2D: 100)" in err


def _assert_one_line_error(err: str, start: str) -> None:
    assert err.startswith(f"ptrnet: error: {start}") and err.count("\n") == 1, err
    assert "Traceback" not in err


def _assert_nothing_written(tmp_path: Path, keep: set[str]) -> None:
    assert set(os.listdir(tmp_path)) == keep


def test_bad_input_line_writes_no_output(cli, tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("0 0 1 0 0 1\n0 0 1 0 0 1\n0 0 1 0 zz 1\n")
    status, _, err = cli("solve", "convex_hull", "in.txt", "-o", "out.txt")
    assert status == 1
    _assert_one_line_error(err, "in.txt:3: coordinate 5 is 'zz', not a number")
    _assert_nothing_written(tmp_path, {"in.txt"})


def test_degenerate_instance_in_solve_names_its_line(cli, tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("0 0 1 0 0 1\n\n0 0 1 1 2 2\n")
    status, _, err = cli("solve", "delaunay", "in.txt", "-o", "out.txt")
    assert status == 1
    _assert_one_line_error(err, "in.txt:3: cannot solve: ")
    _assert_nothing_written(tmp_path, {"in.txt"})


def test_solver_failure_in_generate_writes_no_output(cli, tmp_path: Path) -> None:
    status, _, err = cli(
        "generate",
        "tsp",
        "-n",
        21,
        "--count",
        2,
        "--seed",
        0,
        "--solver",
        "exact",
        "--workers",
        1,
        "-o",
        "out.txt",
    )
    assert status == 2
    _assert_one_line_error(err, "TSP solver 'exact' handles n <= 20")
    _assert_nothing_written(tmp_path, set())


@pytest.mark.parametrize("command", ["generate", "solve", "score"])
def test_unknown_task_lists_choices(command: str, cli, tmp_path: Path) -> None:
    args = {
        "generate": ["-n", 5, "--count", 1, "--seed", 0, "-o", "x"],
        "solve": ["in.txt", "-o", "x"],
        "score": ["ref.txt", "pred.txt"],
    }[command]
    status, _, err = cli(command, "hull", *args)
    assert status == 2
    _assert_one_line_error(err, "unknown task 'hull'; choose from sort, convex_hull, delaunay, tsp")


def test_unknown_solver_lists_choices(cli, tmp_path: Path) -> None:
    status, _, err = cli(
        "generate", "tsp", "-n", 5, "--count", 1, "--seed", 0, "--solver", "lk", "-o", "x"
    )
    assert status == 2
    _assert_one_line_error(err, "unknown solver 'lk' for task tsp; choose from auto, exact")
    _assert_nothing_written(tmp_path, set())


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["-n", "5", "--count", "3", "--shard", "4/3"], "expected I/K with 1 <= I <= K"),
        (["-n", "5", "--count", "0"], "expected a positive integer"),
        (["-n", "5-", "--count", "3"], "invalid size"),
    ],
)
def test_bad_option_values_are_usage_errors(argv: list[str], words: str, cli) -> None:
    status, _, err = cli("generate", "sort", "--seed", "0", "-o", "x", *argv)
    assert status == 2 and words in err


def test_score_reports_mismatched_points(cli, tmp_path: Path) -> None:
    (tmp_path / "ref.txt").write_text("0.1 0.2 output 1 2\n0.3 0.4 output 1 2\n")
    (tmp_path / "pred.txt").write_text("0.1 0.2 output 1 2\n0.3 0.5 output 2 1\n")
    status, out, err = cli("score", "sort", "ref.txt", "pred.txt", "--json")
    assert status == 1 and out == ""
    _assert_one_line_error(err, "pred.txt:2: points differ from ref.txt:2: coordinate 2")


def test_missing_output_directory(cli, tmp_path: Path) -> None:
    status, _, err = cli(
        "generate",
        "sort",
        "-n",
        3,
        "--count",
        2,
        "--seed",
        0,
        "--workers",
        1,
        "-o",
        "no/such/dir.txt",
    )
    # A bad -o is a bad option, found as it is parsed (before any work), naming the path given.
    assert status == 2 and "No such file or directory" in err and "Traceback" not in err
    assert "error: argument -o/--output: 'no/such/dir.txt': cannot write into " in err
    assert ".tmp" not in err


def test_help_exits_zero_and_stays_light(cli) -> None:
    status, out, _ = cli("--help")
    assert status == 0 and "generate" in out and "score" in out
    code = "import sys, ptrnet.cli.main; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_closed_stdout_ends_quietly(cli, tmp_path: Path) -> None:
    """`ptrnet score ... | head -1`: the reader leaving is not an error to report."""
    assert cli("generate", "sort", "-n", "5", "--count", "5", "--seed", "1", "-o", "d.txt")[0] == 0
    proc = subprocess.Popen(
        [sys.executable, "-m", "ptrnet.cli.main", "score", "sort", "d.txt", "d.txt"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # before the command has printed anything
    _, err = proc.communicate(timeout=120)
    assert err.decode() == "" and proc.returncode == 141
