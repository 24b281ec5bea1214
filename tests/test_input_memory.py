"""What reading an input costs in memory: the point-list and CSV readers hold a row at a time
and the parsed float64 points, never the whole file as Python objects, and stop at the first
row past the points limit; no read reserves the 4 GiB file limit up front, so a small file
reads normally under an address-space limit (``ulimit -v``). Measured with tracemalloc in this
process and with a child process under RLIMIT_AS; nothing is timed."""

from __future__ import annotations

import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from ptrnet.io.errors import InputError
from ptrnet.io.instances import read_instances
from ptrnet.io.limits import MAX_POINTS
from ptrnet.tasks import get_task

resource = pytest.importorskip("resource")  # POSIX only

TSP = get_task("tsp")
POINTS_BYTES = MAX_POINTS * TSP.dim * 8  # the float64 array of the largest instance: 1.6 MB
OVERHEAD = 4 * 2**20  # rows in flight (a block of 4,096), a line buffer, the delimiter sample
ADDRESS_SPACE = 2 * 2**30  # above what python, numpy and torch reserve; below the file limit


def peak_bytes_of_reading(path: Path, **options) -> tuple[int, object]:
    """The most bytes Python held at once while reading ``path``, and what the read gave (the
    instances or the InputError)."""
    tracemalloc.start()
    try:
        result = read_instances(path, TSP, **options)
    except InputError as err:
        result = err
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak, result


def test_a_wide_csv_is_held_as_its_points_not_its_cells(tmp_path):
    """20 MB of 100,000 rows of 25 cells: the old reader held every cell as a Python string
    (over 150 MB); now the memory is bounded by the two picked columns' float64 array."""
    rng = np.random.default_rng(0)
    header = ",".join(f"c{j}" for j in range(25)) + "\n"
    cells = ",".join(["0.123456"] * 23)
    rows = [f"{x!r},{cells},{y!r}\n" for x, y in rng.random((MAX_POINTS, 2)).tolist()]
    (tmp_path / "wide.csv").write_text(header + "".join(rows))
    assert (tmp_path / "wide.csv").stat().st_size > 20 * 10**6
    peak, (instance,) = peak_bytes_of_reading(tmp_path / "wide.csv", columns=("c0", "c24"))
    assert instance.points.shape == (MAX_POINTS, 2)
    assert peak < 4 * POINTS_BYTES + OVERHEAD


@pytest.mark.parametrize("suffix, separator", [(".csv", ","), (".txt", " ")])
def test_a_file_past_the_points_limit_is_refused_at_its_first_row_over(tmp_path, suffix, separator):
    """20 MB of short rows, 2.5 million points: refused at row 100,001 with what that many
    points hold, not what the file holds (1 GB before)."""
    path = tmp_path / f"many{suffix}"
    row = f"0.5{separator}0.25\n"
    path.write_text(row * (20 * 10**6 // len(row)))
    peak, err = peak_bytes_of_reading(path)
    assert str(err) == f"{path}:{MAX_POINTS + 1}: more than {MAX_POINTS} points, the limit"
    assert peak < 4 * POINTS_BYTES + OVERHEAD


def limited_child(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    """``python -m ptrnet ARGV`` in a child whose address space is :data:`ADDRESS_SPACE`."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))

    command = [sys.executable, "-m", "ptrnet", *argv]
    return subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=300, preexec_fn=limit
    )


def test_small_files_read_normally_under_an_address_space_limit(tmp_path):
    """``ptrnet eval copy`` read the bundled checkpoint with ``read(4 GiB + 1)``, which
    reserves 4 GiB: a MemoryError traceback under ``ulimit -v 4G``."""
    (tmp_path / "copy.txt").write_text("the cat sat on the mat\n")
    done = limited_child("eval", "copy", "copy.txt", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (1, "ptrnet: error: copy.txt:1: expected "
                                              "'SOURCE<TAB>TARGET', found no tab\n")  # fmt: skip
    (tmp_path / "c.csv").write_text("name,x,y\na,0.1,0.2\nb,0.5,0.9\nc,0.3,0.4\n")
    done = limited_child("solve", "tsp", "c.csv", "-o", "-", "-q", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == "0.1 0.2 0.5 0.9 0.3 0.4 output 1 3 2 1\n"
