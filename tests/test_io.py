"""The paper format, TSPLIB reading and atomic writes, against the released files as oracles."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from shared_data import PAPER_DATA, TSPLIB

from ptrnet.io.atomic import atomic_write
from ptrnet.io.errors import InputError
from ptrnet.io.instances import is_tsplib, read_instances, starts_like_tsplib
from ptrnet.io.limits import MAX_COORDINATE
from ptrnet.io.paper_format import (
    format_line,
    parse_line,
    read_examples,
    write_examples,
)
from ptrnet.io.text import HeldInput
from ptrnet.io.tsplib import read_optimal, read_tsplib, tsplib_length
from ptrnet.solvers.tsp import tour_length
from ptrnet.tasks import POINT_TASKS, SizeRange, get_task
from tests.fuzzing import cases

PAPER = PAPER_DATA
FLOATS = st.floats(-MAX_COORDINATE, MAX_COORDINATE, allow_subnormal=True)


@st.composite
def instances(draw: st.DrawFn, task_name: str) -> tuple[np.ndarray, np.ndarray]:
    """Points within the coordinate limit (tiny, huge, negative), any in-range sequence."""
    task = get_task(task_name)
    n = draw(st.integers(task.min_n, 8))
    points = draw(arrays(np.float64, (n, task.dim), elements=FLOATS))
    seq = draw(st.lists(st.integers(0, n - 1), max_size=12))
    return points, np.array(seq, dtype=np.int64)


@pytest.mark.parametrize("task_name", POINT_TASKS)
@cases(60)
@given(data=st.data())
def test_line_round_trip_is_exact(task_name: str, data: st.DataObject) -> None:
    points, seq = data.draw(instances(task_name))
    task = get_task(task_name)
    back = parse_line(format_line(points, seq), task, "prediction", "f", 1)
    assert back.points.dtype == np.float64 and back.seq.dtype == np.int64
    assert np.array_equal(back.points, points) and np.array_equal(back.seq, seq)
    # Same bits, not just equal values: -0.0 stays -0.0.
    assert back.points.tobytes() == points.tobytes()
    unlabelled = parse_line(format_line(points), task, "optional", "f", 1)
    assert unlabelled.seq is None and np.array_equal(unlabelled.points, points)


@pytest.mark.parametrize("task_name", POINT_TASKS)
def test_dataset_written_then_read_is_identical(task_name: str, tmp_path: Path) -> None:
    task = get_task(task_name)
    data = [(x, task.solve(x)) for x in task.generate(SizeRange(max(task.min_n, 4), 9), 30, seed=3)]
    path = tmp_path / "d.txt"
    assert write_examples(path, data) == 30
    back = read_examples(path, task)
    assert [e.line for e in back] == list(range(1, 31))
    for (x, seq), example in zip(data, back, strict=True):
        assert np.array_equal(x, example.points) and np.array_equal(seq, example.seq)
    write_examples(tmp_path / "again.txt", back)
    assert (tmp_path / "again.txt").read_bytes() == path.read_bytes()


@pytest.mark.parametrize(
    "value", [5e-324, -2.2250738585072014e-308, 1e-300, -MAX_COORDINATE, -0.0, 0.1, 1e22]
)
def test_extreme_floats_round_trip(value: float) -> None:
    points = np.array([[value, -value], [1.0, 2.0], [value / 3, 0.5]])
    back = parse_line(format_line(points, [0, 2]), get_task("tsp"), "prediction", "f", 1)
    assert back.points.tobytes() == points.tobytes()


def test_format_matches_paper_layout() -> None:
    hull = get_task("convex_hull")
    points = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, 1.0]])
    assert format_line(points, hull.solve(points)) == "0.0 0.0 1.0 0.0 0.5 1.0 output 1 2 3 1"
    assert format_line(np.array([[0.25], [-1e-300]])) == "0.25 -1e-300"


def test_released_hull_labels_equal_our_solver() -> None:
    """Key oracle: all 10,000 released hull labels are our canonical CCW-from-lowest hull."""
    task = get_task("convex_hull")
    examples = read_examples(PAPER / "convex_hull_5_test.txt", task)
    assert len(examples) == 10_000
    assert all(len(e.points) == 5 for e in examples)
    wrong = [e.line for e in examples if not np.array_equal(task.solve(e.points), e.seq)]
    assert wrong == []


def test_released_tsp_tours_are_optimal() -> None:
    task = get_task("tsp")
    examples = read_examples(PAPER / "tsp5_test.txt", task)
    assert len(examples) == 10_000
    assert all(len(e.seq) == 6 and e.seq[0] == e.seq[-1] == 0 for e in examples)
    given_lengths = np.array([tour_length(e.points, e.seq) for e in examples])
    optimal = np.array([tour_length(e.points, task.solve(e.points)) for e in examples])
    np.testing.assert_allclose(given_lengths, optimal, rtol=0, atol=1e-12)
    assert round(given_lengths.mean(), 4) == 2.1228


HULL_OK = "0.1 0.1 0.9 0.1 0.5 0.9 output 1 2 3 1"
# (task, labels mode, bad line, words the problem must contain)
BAD_LINES = [
    ("convex_hull", "reference", "0.1 abc 0.9 0.1 0.5 0.9 output 1 2 3 1", "'abc', not a number"),
    ("convex_hull", "reference", "0.1 nan 0.9 0.1 0.5 0.9 output 1 2 3 1", "must be finite"),
    ("convex_hull", "reference", "0.1 0.1 inf 0.1 0.5 0.9 output 1 2 3 1", "must be finite"),
    ("convex_hull", "reference", "0.1 0.1 0.9 0.1 0.5 output 1 2 3 1", "not a multiple of 2"),
    ("convex_hull", "reference", "0.1 0.1 0.9 0.1 output 1 2 1", "needs at least 3"),
    ("convex_hull", "reference", "output 1 2 3 1", "no coordinates"),
    ("convex_hull", "reference", "0.1 0.1 0.9 0.1 0.5 0.9 output 1 2 4 1", "out of range 1..3"),
    ("convex_hull", "prediction", "0.1 0.1 0.9 0.1 0.5 0.9 output 0 1 2 0", "1-based"),
    ("convex_hull", "prediction", "0.1 0.1 0.9 0.1 0.5 0.9 output 1 2.0 3", "not an integer"),
    ("convex_hull", "reference", "0.1 0.1 0.9 0.1 0.5 0.9 output 1 2 3", "closed"),
    ("convex_hull", "reference", "0.1 0.1 0.9 0.1 0.5 0.9", "no 'output' part"),
    ("convex_hull", "prediction", "0.1 0.1 0.9 0.1 0.5 0.9", "no 'output' part"),
    ("tsp", "reference", "0.1 0.1 0.9 0.1 0.5 0.9 output 1 2 3", "expected n + 1 = 4"),
    ("tsp", "reference", "0.1 0.1 0.9 0.1 0.5 0.9 output 1 2 2 1", "not a valid tsp label"),
    ("delaunay", "reference", "0.1 0.1 0.9 0.1 0.5 0.9 output 1 2 3 1", "not a multiple of 3"),
    ("delaunay", "optional", "0.1 0.1 0.9 0.1 0.5 0.9 output 1 1 2", "not a valid delaunay"),
    (
        "delaunay",
        "reference",
        "0.1 0.2 0.9 0.1 0.5 0.9 0.5 0.5 output 1 2 4 1 2 4 2 3 4 1 3 4",
        "lists a triangle twice",
    ),
    ("sort", "reference", "0.3 0.1 0.2 output 2 3 3", "not a valid sort label"),
]


@pytest.mark.parametrize(("task_name", "labels", "bad", "words"), BAD_LINES)
def test_bad_line_error_names_file_and_line(task_name, labels, bad, words, tmp_path) -> None:
    good = {
        "sort": "0.3 0.1 0.2 output 2 3 1",
        "delaunay": "0.1 0.1 0.9 0.1 0.5 0.9 output 1 2 3",
        "tsp": HULL_OK,
    }.get(task_name, HULL_OK)
    path = tmp_path / "in.txt"
    path.write_text(f"{good}\n\n{good} \n{bad}\n{good}\n")  # bad is on line 4 (blank line 2)
    with pytest.raises(InputError) as info:
        read_examples(path, get_task(task_name), labels)
    message = str(info.value)
    assert message.startswith(f"{path}:4: ") and words in message and "\n" not in message
    assert info.value.line == 4


@pytest.mark.parametrize(
    ("content", "line", "words"),
    [
        ("", 1, "empty file"),
        ("\n  \n", 1, "empty file"),
        (f"{HULL_OK}\n".encode() + b"\xff\xfe 0.1\n", 2, "not UTF-8"),
    ],
)
def test_file_level_errors(content, line, words, tmp_path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    with pytest.raises(InputError, match=f"^{path}:{line}: .*{words}"):
        read_examples(path, get_task("convex_hull"))


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^.*nope\.txt: cannot read: No such file"):
        read_examples(tmp_path / "nope.txt", get_task("sort"))


def test_predictions_may_be_structurally_invalid(tmp_path: Path) -> None:
    path = tmp_path / "p.txt"
    path.write_text("0.1 0.1 0.9 0.1 0.5 0.9 output 1 2 2\n0.1 0.1 0.9 0.1 0.5 0.9 output\n")
    first, empty = read_examples(path, get_task("tsp"), "prediction")
    assert first.seq.tolist() == [0, 1, 1] and empty.seq.tolist() == []


def test_ignore_mode_skips_output_and_optional_keeps_none(tmp_path: Path) -> None:
    path = tmp_path / "p.txt"
    path.write_text("0.1 0.1 0.9 0.1 0.5 0.9 output 9 x\n0.1 0.1 0.9 0.1 0.5 0.9\n")
    task = get_task("convex_hull")
    assert [e.seq for e in read_examples(path, task, "ignore")] == [None, None]
    with pytest.raises(InputError, match=":1: output index 2 is 'x', not an integer"):
        read_examples(path, task, "optional")


# TSPLIB


def _file_coords(path: Path) -> np.ndarray:
    """The NODE_COORD_SECTION of a .tsp file, parsed independently of ptrnet."""
    body = path.read_text().split("NODE_COORD_SECTION")[1].split("EOF")[0]
    return np.array([[float(v) for v in row.split()[1:]] for row in body.strip().splitlines()])


@pytest.mark.parametrize("name", ["eil51", "d198", "bier127", "berlin52"])
def test_tsplib_scaling_keeps_aspect_and_maps_back(name: str) -> None:
    path = TSPLIB / f"{name}.tsp"
    instance = read_tsplib(path)
    coords = _file_coords(path)
    assert instance.name == name and np.array_equal(instance.coords, coords)
    assert instance.points.min(axis=0).tolist() == [0.0, 0.0]
    assert instance.points.max() == 1.0  # the longer side spans [0, 1] exactly
    np.testing.assert_allclose(instance.to_original(instance.points), coords, rtol=1e-14)
    extent = coords.max(axis=0) - coords.min(axis=0)
    assert instance.scale == extent.max()


def test_tsplib_length_rounds_each_edge_half_up() -> None:
    # Edges 2.5, 6 and 6.5: nint gives 3 + 6 + 7 = 16 (round-half-even would give 14).
    coords = np.array([[0.0, 0.0], [0.0, 2.5], [6.0, 2.5]])
    assert tsplib_length(coords, [0, 1, 2]) == 16
    assert tsplib_length(coords, [0, 1, 2, 0]) == 16
    assert tsplib_length(np.array([[0.0, 0.0], [3.0, 4.0]]), [0, 1]) == 10


def test_tsplib_lengths_in_own_units(tmp_path: Path) -> None:
    path = tmp_path / "sq.tsp"
    path.write_text(
        "NAME: sq\nTYPE: TSP\nDIMENSION: 4\nEDGE_WEIGHT_TYPE: EUC_2D\n"
        "NODE_COORD_SECTION\n1 10 10\n2 30 10\n3 30 20\n4 10 20\nEOF\n"
    )
    instance = read_tsplib(path)
    assert instance.scale == 20.0 and instance.offset.tolist() == [10.0, 10.0]
    assert instance.points[2].tolist() == [1.0, 0.5]
    assert instance.length([0, 1, 2, 3]) == 60.0 and instance.tsplib_length([0, 1, 2, 3]) == 60
    assert tour_length(instance.points, [0, 1, 2, 3]) * instance.scale == 60.0


def test_optimal_file_covers_every_instance() -> None:
    optimal = read_optimal(TSPLIB / "optimal.txt")
    assert optimal["eil51"] == 426 and optimal["berlin52"] == 7542
    for path in TSPLIB.glob("*.tsp"):
        instance = read_tsplib(path)
        order = np.arange(len(instance.coords))
        assert instance.tsplib_length(order) >= optimal[instance.name]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            "NAME: g\nTYPE: TSP\nEDGE_WEIGHT_TYPE: MAN_2D\nNODE_COORD_SECTION\n1 1 1\n2 2 2\n",
            ": EDGE_WEIGHT_TYPE MAN_2D is not supported; supported: EUC_2D, GEO, ATT",
        ),
        ("EDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 1 1\n2 2 x\n", ":4: expected 'id x y'"),
        (
            "EDGE_WEIGHT_TYPE: EUC_2D\nDIMENSION: 3\nNODE_COORD_SECTION\n1 1 1\n2 2 2\n",
            ":3: DIMENSION is 3 but 2 nodes follow",
        ),
        ("EDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 1 1\n3 2 2\n", ":2: node ids must be"),
        ("EDGE_WEIGHT_TYPE: EUC_2D\n1 1 1\n", ":2: expected 'KEY : value'"),
    ],
)
def test_tsplib_errors(text: str, words: str, tmp_path: Path) -> None:
    path = tmp_path / "bad.tsp"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        read_tsplib(path)
    assert str(info.value).startswith(str(path)) and words in str(info.value)


@pytest.mark.parametrize(
    ("first", "tsplib"),
    [
        ("NAME : eil51", True),
        ("NAME: eil51", True),
        ("TYPE TSP", True),
        ("COMMENT : 51-city problem", True),
        ("DIMENSION: 5", True),
        ("EDGE_WEIGHT_TYPE : EUC_2D", True),
        ("name : lower-case keys, as the reader takes them", True),
        ("NODE_COORD_SECTION", True),
        ("NAMES : not a keyword", False),
        ("0.1 0.2 0.3 0.4", False),
        ("x,y", False),
        ("", False),
    ],
)
def test_tsplib_is_told_by_its_first_non_blank_line(first: str, tsplib: bool) -> None:
    held = HeldInput("/dev/fd/9", f"\n  \n{first}\n1 0 0\n".encode())
    assert starts_like_tsplib(held) is tsplib


def test_a_tsplib_file_without_its_extension_reads_as_tsplib(tmp_path: Path) -> None:
    """A ``.tsp`` file given through a pipe or ``<(...)`` has no telling name; read as the
    paper's format, it was ``coordinate 1 is 'NAME', not a number``."""
    data = (TSPLIB / "eil51.tsp").read_bytes()
    expected = read_tsplib(TSPLIB / "eil51.tsp").coords
    (tmp_path / "eil51").write_bytes(data)
    (tmp_path / "eil51.txt").write_bytes(data)
    (tmp_path / "eil51.csv").write_bytes(data)
    tsp = get_task("tsp")
    for path in (HeldInput("/dev/stdin", data), tmp_path / "eil51", tmp_path / "eil51.txt"):
        assert is_tsplib(path)
        (instance,) = read_instances(path, tsp)
        assert np.array_equal(instance.points, expected)
    with pytest.raises(InputError, match=r"eil51:1: coordinate 1 is 'NAME', not a number$"):
        read_instances(tmp_path / "eil51", tsp, "paper")  # an explicit format wins
    assert not is_tsplib(tmp_path / "missing") and not is_tsplib(TSPLIB / "optimal.txt")
    assert not is_tsplib(tmp_path / "eil51.csv")  # its extension tells, and says CSV


def test_is_tsplib_never_reads_a_pipe_it_would_consume() -> None:
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, b"NAME : p\n")
        os.close(write_end)
        assert not is_tsplib(f"/dev/fd/{read_end}")
        assert os.read(read_end, 100) == b"NAME : p\n"  # still all there for the reader
    finally:
        os.close(read_end)


# Atomic writes


def test_atomic_write_replaces_only_on_success(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_write(path) as stream:
        stream.write("partial")
        raise RuntimeError("boom")
    assert path.read_text() == "old\n" and os.listdir(tmp_path) == ["out.txt"]
    with atomic_write(path) as stream:
        stream.write("new\n")
    assert path.read_text() == "new\n" and os.listdir(tmp_path) == ["out.txt"]
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask
