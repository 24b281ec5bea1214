"""Hostile and unusual input files: each reproducer of the hardening issue gets one clear line
(``ptrnet: error: FILE:LINE: problem``, non-zero exit, nothing written) or a defined result.
Also the input layouts (point lists, CSV, .npy) and the unit-square mapping."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tiny_models import bundle_tiny_models

from ptrnet.cli.main import main
from ptrnet.io.limits import MAX_LINE_BYTES, QUOTE_CHARS
from ptrnet.io.paper_format import read_examples
from ptrnet.io.unit_square import UnitMap
from ptrnet.solvers.tsp import solve_tour, tour_length
from ptrnet.tasks import DegenerateInstanceError, get_task


def run_cli(capsys, *argv: object) -> tuple[int, str, str]:
    """``ptrnet ARGV`` in the current folder: (status, stdout, stderr)."""
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def cli(capsys, monkeypatch, tmp_path):
    """:func:`run_cli` inside ``tmp_path``."""
    monkeypatch.chdir(tmp_path)
    return functools.partial(run_cli, capsys)


@pytest.fixture
def models(tmp_path, monkeypatch):
    """Tiny random models in place of the bundled ones."""
    root = tmp_path / "bundled"
    bundle_tiny_models(root, ("sort", "convex_hull", "tsp"))
    monkeypatch.setattr("ptrnet.inference.load.BUNDLED_DIR", str(root))
    return root


def one_line_error(status: int, err: str, start: str) -> None:
    assert status == 1, err
    assert err.startswith(f"ptrnet: error: {start}") and err.count("\n") == 1, err
    assert "Traceback" not in err and len(err) < 400


def test_item1_huge_output_index_is_out_of_range(cli, tmp_path: Path) -> None:
    (tmp_path / "r1.txt").write_text("0.1 0.2 0.3 output 99999999999999999999 1 2\n")
    status, _, err = cli("score", "sort", "r1.txt", "r1.txt")
    one_line_error(status, err, "r1.txt:1: output index 1 is '99999999999999999999', out of range")


def test_item2_error_quotes_a_short_prefix_of_a_huge_token(cli, tmp_path: Path) -> None:
    (tmp_path / "r2.txt").write_text("x" * 500_000 + " 0.5\n")
    status, _, err = cli("solve", "sort", "r2.txt", "-o", "o2.txt")
    one_line_error(status, err, f"r2.txt:1: coordinate 1 is '{'x' * QUOTE_CHARS}'...")
    assert not (tmp_path / "o2.txt").exists()


@pytest.mark.parametrize("end", ["\r", "\n", "\r\n"])
def test_item3_every_line_end_separates_instances(cli, tmp_path: Path, end: str) -> None:
    lines = ["0.1 0.2 0.9 0.1 0.5 0.8", "0.3 0.3 0.6 0.2 0.4 0.9", "0.2 0.7 0.8 0.8 0.1 0.1"]
    (tmp_path / "r3.txt").write_bytes(end.join(lines).encode() + end.encode())
    assert cli("solve", "convex_hull", "r3.txt", "-o", "o3.txt", "-q")[0] == 0
    examples = read_examples(tmp_path / "o3.txt", get_task("convex_hull"))
    assert [len(ex.points) for ex in examples] == [3, 3, 3]
    assert [ex.line for ex in read_examples(tmp_path / "r3.txt", get_task("tsp"), "ignore")] == [
        1,
        2,
        3,
    ]


def test_item5_line_over_the_limit_is_refused(cli, tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_text("0.5 " * (MAX_LINE_BYTES // 4 + 10) + "\n")
    status, _, err = cli("solve", "sort", "long.txt", "-o", "o.txt")
    one_line_error(status, err, f"long.txt:1: line longer than the limit of {MAX_LINE_BYTES}")


def test_item5_exact_tsp_beyond_its_limit_names_a_solver(cli, tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    (tmp_path / "big.txt").write_text(" ".join(map(str, rng.random(2 * 30))) + "\n")
    status, _, err = cli("solve", "tsp", "big.txt", "--solver", "exact", "-o", "o.txt")
    one_line_error(status, err, "big.txt:1: cannot solve: TSP solver 'exact' handles n <= 20")
    assert "use --solver near_exact" in err


def test_item5_200000_numbers_are_refused_before_allocating(cli, tmp_path: Path) -> None:
    (tmp_path / "huge.txt").write_text("0.5 " * 200_000 + "\n")
    status, _, err = cli("solve", "tsp", "huge.txt", "-o", "o.txt")
    one_line_error(status, err, "huge.txt:1: 100000 points; a line ptrnet reads back takes n <=")


def test_item5_model_limit(cli, tmp_path: Path, models) -> None:
    (tmp_path / "big.txt").write_text(" ".join(["0.5"] * 1001) + "\n")
    status, _, err = cli("predict", "sort", "big.txt", "-o", "o.txt")
    one_line_error(status, err, "big.txt:1: 1001 points; the model takes n <= 1000")


@pytest.mark.parametrize("value", ["1e200", "1e308", "-1e308", "1e101"])
def test_item4_tsplib_extreme_coordinates_are_input_errors(cli, tmp_path: Path, value) -> None:
    (tmp_path / "x.tsp").write_text(
        "NAME : x\nEDGE_WEIGHT_TYPE : EUC_2D\nNODE_COORD_SECTION\n"
        f"1 0 0\n2 {value} 0\n3 0 {value}\n4 5 5\nEOF\n"
    )
    for command in ("solve", "predict"):
        status, _, err = cli(command, "tsp", "x.tsp", "-o", "o.txt")
        one_line_error(status, err, "x.tsp:5: coordinates must be finite and within +-1e+100")
        assert not (tmp_path / "o.txt").exists()


def test_item4_tsplib_at_the_limit_reports_finite_lengths(cli, tmp_path: Path) -> None:
    (tmp_path / "x.tsp").write_text(
        "NAME : x\nEDGE_WEIGHT_TYPE : EUC_2D\nNODE_COORD_SECTION\n"
        "1 0 0\n2 1e100 0\n3 1e100 1e100\n4 0 1e100\nEOF\n"
    )
    status, _, err = cli("solve", "tsp", "x.tsp", "-o", "o.txt")
    assert status == 0 and "tour length 4e+100" in err


def test_item8_extreme_and_subnormal_geometry_solves_like_the_unit_square() -> None:
    rng = np.random.default_rng(1)
    unit = rng.random((12, 2))
    for scale in (1e300, 5e-324 * 2**40, 1e-300):
        points = unit * scale
        for name in ("convex_hull", "delaunay"):
            assert np.array_equal(get_task(name).solve(points), get_task(name).solve(unit))
        tour = solve_tour(points, "auto")
        assert tour_length(unit, tour) == pytest.approx(tour_length(unit, solve_tour(unit)))


def test_item8_degenerate_instances_have_a_defined_outcome(cli, tmp_path: Path, models) -> None:
    (tmp_path / "line.txt").write_text("0 0 0.5 0.5 1 1\n0.2 0.2 0.2 0.2 0.2 0.2\n")
    status, _, err = cli("solve", "convex_hull", "line.txt", "-o", "o.txt")
    one_line_error(status, err, "line.txt:1: cannot solve: convex hull undefined: all points")
    assert cli("solve", "tsp", "line.txt", "-o", "t.txt", "-q")[0] == 0  # a tour exists
    status, _, err = cli("predict", "convex_hull", "line.txt", "-o", "p.txt")
    one_line_error(status, err, "line.txt:1: degenerate instance (all points are collinear)")
    assert "--protocol paper writes the model's output as decoded" in err
    status, _, err = cli("predict", "convex_hull", "line.txt", "-o", "p.txt", "--protocol", "paper")
    assert status == 0 and (tmp_path / "p.txt").exists()
    assert "warning: line.txt:1: degenerate instance (all points are collinear)" in err
    assert "warning: line.txt:2: degenerate instance (needs at least 3 distinct points)" in err
    with pytest.raises(DegenerateInstanceError):
        get_task("delaunay").solve(np.full((4, 2), 1e300))


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("0_5 0.2\n", "coordinate 1 is '0_5', not a number"),
        ("\u0663 0.2\n", "coordinate 1 is '\u0663', not a number"),
        ("0.1 0.2 output 1 \u0662\n", "output index 2 is '\u0662', not an integer"),
    ],
)
def test_item11_only_ascii_decimal_numbers(cli, tmp_path: Path, text: str, problem: str) -> None:
    (tmp_path / "n.txt").write_text(text, encoding="utf-8")
    status, _, err = cli("score", "sort", "n.txt", "n.txt")
    one_line_error(status, err, f"n.txt:1: {problem}")


def test_item11_bom_is_skipped_in_paper_and_tsplib_files(cli, tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_bytes(b"\xef\xbb\xbf0.3 0.1 0.2\n")
    assert cli("solve", "sort", "b.txt", "-o", "o.txt", "-q")[0] == 0
    (tmp_path / "b.tsp").write_bytes(
        b"\xef\xbb\xbfNAME : bom\nEDGE_WEIGHT_TYPE : EUC_2D\n"
        b"NODE_COORD_SECTION\n1 0 0\n2 3 4\nEOF\n"
    )
    status, _, err = cli("solve", "tsp", "b.tsp", "-o", "t.txt")
    assert status == 0 and "bom: tour length 10" in err


def test_item11_repeated_tsplib_key_and_plain_floats_in_mismatch(cli, tmp_path: Path) -> None:
    (tmp_path / "r.tsp").write_text(
        "NAME : a\nNAME : b\nEDGE_WEIGHT_TYPE : EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 1 1\nEOF\n"
    )
    one_line_error(*cli("solve", "tsp", "r.tsp", "-o", "o.txt")[::2], "r.tsp:2: header key 'NAME'")
    (tmp_path / "ref.txt").write_text("0.1 0.2 output 1 2\n")
    (tmp_path / "pred.txt").write_text("0.1 0.3 output 1 2\n")
    status, _, err = cli("score", "sort", "ref.txt", "pred.txt")
    one_line_error(status, err, "pred.txt:1: points differ from ref.txt:1: coordinate 2 is 0.3,")
    assert "np.float64" not in err


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


def test_scaled_inputs_give_the_same_sequence_in_their_own_units(cli, tmp_path, models) -> None:
    raw = np.random.default_rng(3).random((10, 2))
    points = UnitMap.fit(raw).to_unit(raw)  # the unit-square image of any scaled copy
    np.savetxt(tmp_path / "unit.txt", points)
    np.savetxt(tmp_path / "big.txt", points * 1000 + 500)
    for command in ("solve", "predict"):
        _, unit, _ = cli(command, "tsp", "unit.txt", "-o", "-", "-q")
        status, big, err = cli(command, "tsp", "big.txt", "-o", "-")
        assert status == 0 and unit.split(" output ")[1] == big.split(" output ")[1]
        assert "mapped 1 instance(s) into the unit square" in err
        coords = np.array(big.split(" output ")[0].split(), dtype=float).reshape(-1, 2)
        assert np.allclose(coords, points * 1000 + 500)  # written in the input's units


def test_eval_reports_lengths_in_the_input_units(cli, tmp_path, models) -> None:
    points = np.random.default_rng(4).random((6, 2))
    tsp = get_task("tsp")
    seq = " ".join(str(i + 1) for i in tsp.solve(points))
    for name, scale in (("unit.txt", 1.0), ("big.txt", 1000.0)):
        coords = " ".join(map(repr, (points * scale).ravel().tolist()))
        (tmp_path / name).write_text(f"{coords} output {seq}\n")
    lengths = []
    for name in ("unit.txt", "big.txt"):
        status, out, _ = cli("eval", "tsp", name, "--json")
        assert status == 0
        lengths.append(float(out.split('"mean_length": ')[1].split(",")[0]))
    assert lengths[1] == pytest.approx(1000 * lengths[0])


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
