"""Edge cases of the command line's inputs and outputs: pipes read like files, a CSV first row
with a typo, output paths checked before any work, generate's sizes bounded by what the readers
take back, and seeds checked as they are parsed."""

from __future__ import annotations

import contextlib
import io
import json
import os
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ptrnet.cli.main import build_parser
from ptrnet.io.atomic import atomic_write
from ptrnet.io.errors import InputError
from ptrnet.io.instances import read_instances
from ptrnet.io.limits import MAX_LINE_BYTES
from ptrnet.io.paper_format import format_line, write_examples
from ptrnet.tasks import POINT_TASKS, get_point_task

TSP = get_point_task("tsp")


def _paper_lines(count: int, n: int = 5) -> bytes:
    """``count`` unlabelled tsp instances of ``n`` cities in the paper's format."""
    rng = np.random.default_rng(7)
    return b"".join(f"{format_line(rng.random((n, 2)))}\n".encode() for _ in range(count))


@pytest.fixture
def piped() -> Iterator:
    """``piped(data)``: a ``/dev/fd/N`` path reading ``data`` from a pipe (what ``<(...)`` and
    a shell pipe into ``/dev/stdin`` give), fed by a thread so it may exceed the pipe buffer."""
    fds: list[int] = []

    def make(data: bytes) -> str:
        read_end, write_end = os.pipe()
        fds.append(read_end)

        def feed() -> None:
            with contextlib.suppress(BrokenPipeError), os.fdopen(write_end, "wb") as stream:
                stream.write(data)  # a reader that stops early (a bug, a limit) breaks the pipe

        threading.Thread(target=feed, daemon=True).start()
        return f"/dev/fd/{read_end}"

    yield make
    for fd in fds:
        os.close(fd)


# Pipes: detection must not consume a pipe.


@pytest.mark.parametrize(
    "data",
    [
        b"0.1 0.2 0.3 0.4 0.5 0.6\n",  # one paper line (was: empty file, no instances)
        b"0.1 0.2\n0.3 0.4\n0.5 0.6\n",  # one point per line
        _paper_lines(1500),  # past the 64 KiB detection read (was: a fragment, then lost lines)
    ],
    ids=["one-line", "points", "1500-lines"],
)
def test_pipe_reads_exactly_like_a_file(data: bytes, piped, tmp_path: Path) -> None:
    (tmp_path / "same.txt").write_bytes(data)
    from_file = read_instances(tmp_path / "same.txt", TSP)
    from_pipe = read_instances(piped(data), TSP)
    assert len(from_pipe) == len(from_file) > 0
    for a, b in zip(from_pipe, from_file, strict=True):
        assert a.line == b.line and np.array_equal(a.points, b.points)


def test_pipe_of_an_npy_array(piped) -> None:
    buffer = io.BytesIO()
    points = np.random.default_rng(1).random((3, 6, 2))
    np.save(buffer, points)
    got = read_instances(piped(buffer.getvalue()), TSP, "npy")
    assert np.array_equal(np.stack([inst.points for inst in got]), points)


def test_pipe_over_the_file_limit_is_refused(piped, monkeypatch) -> None:
    monkeypatch.setattr("ptrnet.io.text.MAX_FILE_BYTES", 1000)
    path = piped(_paper_lines(50))
    with pytest.raises(InputError, match="input over the limit of 1000 bytes") as caught:
        read_instances(path, TSP)
    assert caught.value.path == path


def test_solve_from_stdin_matches_the_file(tmp_path: Path) -> None:
    """A pipe on standard input: ``cat FILE | ptrnet solve tsp /dev/stdin -o -``."""
    data = _paper_lines(1000)
    (tmp_path / "b.txt").write_bytes(data)
    command = [sys.executable, "-m", "ptrnet.cli.main", "solve", "tsp"]
    kwargs = {"cwd": tmp_path, "capture_output": True, "timeout": 120, "check": False}
    piped = subprocess.run([*command, "/dev/stdin", "-o", "-", "-q"], input=data, **kwargs)
    direct = subprocess.run([*command, "b.txt", "-o", "-", "-q"], **kwargs)
    assert piped.returncode == 0, piped.stderr.decode()
    assert piped.stdout == direct.stdout and piped.stdout.count(b"\n") == 1000


def piped_eil51(*argv: str) -> subprocess.CompletedProcess:
    """``cat eil51.tsp | ptrnet ARGV`` (the bundled TSPLIB file on standard input)."""
    from ptrnet.data import TSPLIB_DIR

    return subprocess.run(
        [sys.executable, "-m", "ptrnet", *argv],
        input=(TSPLIB_DIR / "eil51.tsp").read_bytes(),
        capture_output=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    "command",
    [["solve", "tsp", "--solver", "a2"], ["predict", "tsp"]],  # a2: no time budget, same tour
    ids=["solve", "predict"],
)
def test_tsplib_through_a_pipe_reads_as_the_file_does(cli, command: list[str]) -> None:
    """``cat eil51.tsp | ptrnet COMMAND tsp /dev/stdin``: no ``.tsp`` in the name, so TSPLIB is
    told by the first line (was: ``/dev/stdin:1: coordinate 1 is 'NAME', not a number``)."""
    from ptrnet.data import TSPLIB_DIR

    piped = piped_eil51(*command, "/dev/stdin", "-o", "-", "-q")
    assert (piped.returncode, piped.stderr) == (0, b"")
    status, out, _ = cli(*command, TSPLIB_DIR / "eil51.tsp", "-o", "-", "-q")
    assert status == 0 and piped.stdout.decode() == out and " output " in out


def test_eval_and_solve_take_tsplib_through_a_pipe(cli) -> None:
    """``eval`` read the pipe as the paper's format (``coordinate 1 is 'NAME'``); ``solve``
    left out its TSPLIB tour-length note, sniffing the unread name instead of the held bytes."""
    from ptrnet.data import TSPLIB_DIR

    piped = piped_eil51("eval", "tsp", "/dev/stdin", "--json", "--threads", "1")
    status, out, _ = cli("eval", "tsp", TSPLIB_DIR / "eil51.tsp", "--json", "--threads", "1")
    assert piped.returncode == 0 and status == 0
    assert json.loads(piped.stdout)["instances"][0]["gap"] == json.loads(out)["instances"][0]["gap"]
    solved = piped_eil51("solve", "tsp", "/dev/stdin", "--solver", "a2", "-o", "-")
    assert solved.returncode == 0 and b"eil51: tour length" in solved.stderr


def test_an_explicit_format_wins_over_a_tsplib_first_line() -> None:
    paper = piped_eil51("solve", "tsp", "/dev/stdin", "--format", "paper", "-o", "-")
    assert paper.returncode == 1
    assert paper.stderr == b"ptrnet: error: /dev/stdin:1: coordinate 1 is 'NAME', not a number\n"


# CSV headers: a CSV first row is a header only when none of its cells is a number.


def test_csv_first_row_with_a_typo_is_an_error_at_line_1(cli, tmp_path: Path) -> None:
    (tmp_path / "g.csv").write_text("0.1,0.2x\n0.3,0.4\n0.5,0.6\n0.7,0.1\n")
    status, out, err = cli("solve", "convex_hull", "g.csv", "-o", "-")
    assert status == 1 and out == ""
    assert err == "ptrnet: error: g.csv:1: coordinate 2 is '0.2x', not a number\n"


def test_csv_header_without_numbers_is_still_skipped(tmp_path: Path) -> None:
    (tmp_path / "h.csv").write_text("x, y\n0.1,0.2\n0.3,0.4\n0.5,0.6\n")
    (instance,) = read_instances(tmp_path / "h.csv", TSP)
    assert instance.line == 2 and instance.points.shape == (3, 2)


# Outputs: output paths checked before any work, errors naming the path given.

OUTPUT_COMMANDS = {
    "generate": ["generate", "tsp", "-n", "20", "--count", "30", "--workers", "1"],
    "solve": ["solve", "tsp", "in.txt"],
    "predict": ["predict", "tsp", "in.txt"],
}


@pytest.mark.parametrize("command", OUTPUT_COMMANDS)
@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ("adir", "is a directory"),
        ("adir/", "is a directory"),
        ("afile/", "ends in a path separator"),
        ("", "empty file name"),
        ("nodir/x.txt", "cannot write into"),
    ],
)
def test_unusable_output_is_refused_up_front(
    command: str, output: str, reason: str, cli, tmp_path: Path, monkeypatch
) -> None:
    (tmp_path / "adir").mkdir()
    (tmp_path / "in.txt").write_text("0.1 0.2 0.3 0.4 0.5 0.6\n")

    def no_work(*args, **kwargs):
        raise AssertionError("work started before the output path was checked")

    monkeypatch.setattr("ptrnet.cli.generate.generate_dataset", no_work)
    monkeypatch.setattr("ptrnet.cli.solve.read_args", no_work)
    monkeypatch.setattr("ptrnet.cli.predict.load_model_on", no_work)
    status, _, err = cli(*OUTPUT_COMMANDS[command], "-o", output)
    assert status == 2, err
    assert f"error: argument -o/--output: {output!r}: {reason}" in err
    assert ".tmp" not in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir", "in.txt"]


def test_atomic_writer_errors_name_the_path_given(tmp_path: Path, monkeypatch) -> None:
    """Past the up-front check (a directory made in between), the writer's own error."""
    target = tmp_path / "late"
    monkeypatch.setattr("ptrnet.io.atomic.check_output_path", lambda path: target.mkdir())
    with pytest.raises(OSError) as caught, atomic_write(target) as stream:
        stream.write("data\n")
    assert caught.value.filename == str(target) and ".tmp" not in str(caught.value)
    assert [p.name for p in tmp_path.iterdir()] == ["late"]  # no temporary file left


def test_a_fifo_output_is_written_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    write_examples(fifo, [(np.array([[0.5]]), None)])
    reader.join(timeout=30)
    assert received == [b"0.5\n"] and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_dash_writes_standard_output_for_every_command(cli, tmp_path: Path) -> None:
    status, out, _ = cli("generate", "sort", "-n", "3", "--count", "2", "--seed", 0, "-o", "-")
    assert status == 0 and out.count(" output ") == 2 and not os.path.exists(tmp_path / "-")
    (tmp_path / "d.txt").write_text(out)
    plot = subprocess.run(
        [sys.executable, "-m", "ptrnet.cli.main", "plot", "sort", "d.txt", "-o", "-"],
        cwd=tmp_path,
        capture_output=True,
        check=False,
    )
    assert plot.returncode == 0 and plot.stdout.startswith(b"\x89PNG")
    assert not os.path.exists(tmp_path / "-")


# Sizes: generate refuses sizes whose lines the readers cannot take back.


@pytest.mark.parametrize("sizes", ["30000", "10-10000000"])
def test_generate_refuses_unreadable_sizes(sizes: str, cli, tmp_path: Path) -> None:
    from ptrnet.io.paper_format import largest_readable_n

    status, _, err = cli("generate", "convex_hull", "-n", sizes, "--count", "1", "-o", "g.txt")
    largest = largest_readable_n(get_point_task("convex_hull"))
    assert status == 2 and err.startswith(f"ptrnet: error: -n/--sizes {sizes}: ")
    assert err.rstrip().endswith(f"the largest n allowed is {largest}")
    assert not (tmp_path / "g.txt").exists()


def test_solve_refuses_an_instance_its_output_line_could_not_hold(cli, tmp_path: Path) -> None:
    from ptrnet.io.paper_format import largest_readable_n

    largest = largest_readable_n(get_point_task("convex_hull"))
    points = np.random.default_rng(0).random((largest + 1, 2))
    np.savetxt(tmp_path / "big.csv", points, delimiter=",")  # one point a row: readable
    status, _, err = cli("solve", "convex_hull", "big.csv", "-o", "out.txt")
    assert status == 1 and not (tmp_path / "out.txt").exists()
    assert err == (
        f"ptrnet: error: big.csv:1: {largest + 1} points; a line ptrnet reads back takes "
        f"n <= {largest}\n"
    )


@pytest.mark.parametrize("name", POINT_TASKS)
def test_size_bound_covers_the_widest_line(name: str) -> None:
    from ptrnet.io.paper_format import largest_readable_n, line_bytes_bound

    task = get_point_task(name)
    largest = largest_readable_n(task)
    assert line_bytes_bound(task, largest) <= MAX_LINE_BYTES < line_bytes_bound(task, largest + 1)
    widest = np.full((40, task.dim), -2.2250738585072014e-308)  # the longest float64 repr
    seq = np.full(task.max_steps(40), 39)
    assert len(format_line(widest, seq)) <= line_bytes_bound(task, 40)


# Seeds: every --seed and --stream is checked as it is parsed, naming the flag.


@pytest.mark.parametrize(
    "argv",
    [
        ["generate", "tsp", "-n", "5", "--count", "2", "--seed", "-1", "-o", "-"],
        ["generate", "tsp", "-n", "5", "--count", "2", "--stream", "-1", "-o", "-"],
        ["generate", "copy", "--count", "2", "--seed", "-1", "-o", "-"],
        ["demo", "--seed", "-1", "--dry-run", "--tasks", "sort", "--out", "d4"],
        ["train", "sort", "-n", "5", "--seed", "-1", "--dry-run"],
        ["eval", "sort", "x.txt", "--seed", "-1"],
        ["predict", "sort", "x.txt", "--seed", str(2**64), "-o", "-"],
    ],
    ids=["generate", "stream", "copy", "demo", "train", "eval", "predict"],
)
def test_bad_seed_is_a_usage_error_naming_the_flag(argv: list[str], cli, tmp_path: Path) -> None:
    status, out, err = cli(*argv)
    flag = argv[argv.index("--stream") if "--stream" in argv else argv.index("--seed")]
    assert status == 2 and out == "" and "Traceback" not in err
    assert f"error: argument {flag}: expected an integer from 0 to 2^64 - 1" in err
    assert list(tmp_path.iterdir()) == []  # demo made no empty d4/


def test_largest_seed_is_accepted() -> None:
    args = build_parser().parse_args(["demo", "--seed", str(2**64 - 1)])
    assert args.seed == 2**64 - 1
