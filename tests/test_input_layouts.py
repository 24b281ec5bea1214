"""The input layouts of the one instance reader seen through the command line: a point list, CSV
with and without a header and .npy give the paper format's tour, a file matching no layout
names them, and ``--format`` overrides detection."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.test_input_files import one_line_error


def write_layouts(tmp_path: Path, points: np.ndarray) -> list[str]:
    """The same instance as a point list, CSV with and without a header, and .npy."""
    np.savetxt(tmp_path / "pts.txt", points)
    np.savetxt(tmp_path / "head.csv", points, delimiter=",", header="x,y", comments="")
    np.savetxt(tmp_path / "plain.csv", points, delimiter=",")
    np.save(tmp_path / "pts.npy", points)
    return ["pts.txt", "head.csv", "plain.csv", "pts.npy"]


def test_every_layout_gives_the_same_tour_as_the_paper_format(cli, tmp_path: Path) -> None:
    points = np.random.default_rng(2).random((9, 2))
    (tmp_path / "paper.txt").write_text(" ".join(map(repr, points.ravel().tolist())) + "\n")
    assert cli("solve", "tsp", "paper.txt", "-o", "ref.txt", "-q")[0] == 0
    expected = (tmp_path / "ref.txt").read_text()
    for name in write_layouts(tmp_path, points):
        status, out, _ = cli("solve", "tsp", name, "-o", "-", "-q")
        assert status == 0 and out.split(" output ")[1] == expected.split(" output ")[1], name


def test_a_file_matching_no_layout_names_the_layouts(cli, tmp_path: Path) -> None:
    (tmp_path / "semi.txt").write_text("0.1;0.2\n0.3;0.4\n")
    status, _, err = cli("solve", "tsp", "semi.txt", "-o", "o.txt")
    one_line_error(status, err, "semi.txt:1: coordinate 1 is '0.1;0.2', not a number; expected")
    assert "one point per line" in err and ".npy" in err
    (tmp_path / "bad.npy").write_bytes(b"not numpy")
    one_line_error(*cli("solve", "tsp", "bad.npy", "-o", "o.txt")[::2], "bad.npy: not a .npy")
    np.save(tmp_path / "obj.npy", np.zeros((3, 3)))  # 3-D points
    status, _, err = cli("solve", "tsp", "obj.npy", "-o", "o.txt")
    one_line_error(status, err, "obj.npy: array of shape (3, 3); expected (n, dim) or (B, n, dim)")


def test_format_option_overrides_detection(cli, tmp_path: Path) -> None:
    (tmp_path / "two.txt").write_text("0.1 0.9\n0.4 0.2\n")
    status, out, _ = cli("solve", "sort", "two.txt", "-o", "-", "-q", "--format", "paper")
    assert status == 0 and out.count("\n") == 2  # two instances of two numbers
    status, out, _ = cli("solve", "tsp", "two.txt", "-o", "-", "-q")
    assert status == 0 and out.count("\n") == 1  # auto: one instance of two points
