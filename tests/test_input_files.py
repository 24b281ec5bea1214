"""Hostile and unusual input files: each gets one clear line (``ptrnet: error: FILE:LINE:
problem``, non-zero exit, nothing written) or a defined result. Huge indices and tokens, every
line end, size limits, extreme coordinates, degenerate instances, non-ASCII digits and a BOM."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

from ptrnet.cli.main import main
from ptrnet.io.limits import MAX_LINE_BYTES, QUOTE_CHARS
from ptrnet.io.paper_format import read_examples
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


def one_line_error(status: int, err: str, start: str) -> None:
    assert status == 1, err
    assert err.startswith(f"ptrnet: error: {start}") and err.count("\n") == 1, err
    assert "Traceback" not in err and len(err) < 400


def test_a_huge_output_index_is_out_of_range(cli, tmp_path: Path) -> None:
    (tmp_path / "r1.txt").write_text("0.1 0.2 0.3 output 99999999999999999999 1 2\n")
    status, _, err = cli("score", "sort", "r1.txt", "r1.txt")
    one_line_error(status, err, "r1.txt:1: output index 1 is '99999999999999999999', out of range")


def test_an_error_quotes_a_short_prefix_of_a_huge_token(cli, tmp_path: Path) -> None:
    (tmp_path / "r2.txt").write_text("x" * 500_000 + " 0.5\n")
    status, _, err = cli("solve", "sort", "r2.txt", "-o", "o2.txt")
    one_line_error(status, err, f"r2.txt:1: coordinate 1 is '{'x' * QUOTE_CHARS}'...")
    assert not (tmp_path / "o2.txt").exists()


@pytest.mark.parametrize("end", ["\r", "\n", "\r\n"])
def test_every_line_end_separates_instances(cli, tmp_path: Path, end: str) -> None:
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


def test_a_line_over_the_limit_is_refused(cli, tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_text("0.5 " * (MAX_LINE_BYTES // 4 + 10) + "\n")
    status, _, err = cli("solve", "sort", "long.txt", "-o", "o.txt")
    one_line_error(status, err, f"long.txt:1: line longer than the limit of {MAX_LINE_BYTES}")


def test_exact_tsp_beyond_its_limit_names_a_solver(cli, tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    (tmp_path / "big.txt").write_text(" ".join(map(str, rng.random(2 * 30))) + "\n")
    status, _, err = cli("solve", "tsp", "big.txt", "--solver", "exact", "-o", "o.txt")
    one_line_error(status, err, "big.txt:1: cannot solve: TSP solver 'exact' handles n <= 20")
    assert "use --solver near_exact" in err


def test_200000_numbers_are_refused_before_allocating(cli, tmp_path: Path) -> None:
    (tmp_path / "huge.txt").write_text("0.5 " * 200_000 + "\n")
    status, _, err = cli("solve", "tsp", "huge.txt", "-o", "o.txt")
    one_line_error(status, err, "huge.txt:1: 100000 points; a line ptrnet reads back takes n <=")


def test_an_instance_over_the_models_size_limit_is_refused(cli, tmp_path: Path, models) -> None:
    (tmp_path / "big.txt").write_text(" ".join(["0.5"] * 1001) + "\n")
    status, _, err = cli("predict", "sort", "big.txt", "-o", "o.txt")
    one_line_error(status, err, "big.txt:1: 1001 points; the model takes n <= 1000")


@pytest.mark.parametrize("value", ["1e200", "1e308", "-1e308", "1e101"])
def test_tsplib_coordinates_past_1e100_are_input_errors(cli, tmp_path: Path, value) -> None:
    (tmp_path / "x.tsp").write_text(
        "NAME : x\nEDGE_WEIGHT_TYPE : EUC_2D\nNODE_COORD_SECTION\n"
        f"1 0 0\n2 {value} 0\n3 0 {value}\n4 5 5\nEOF\n"
    )
    for command in ("solve", "predict"):
        status, _, err = cli(command, "tsp", "x.tsp", "-o", "o.txt")
        one_line_error(status, err, "x.tsp:5: coordinates must be finite and within +-1e+100")
        assert not (tmp_path / "o.txt").exists()


def test_tsplib_coordinates_at_the_limit_give_finite_lengths(cli, tmp_path: Path) -> None:
    (tmp_path / "x.tsp").write_text(
        "NAME : x\nEDGE_WEIGHT_TYPE : EUC_2D\nNODE_COORD_SECTION\n"
        "1 0 0\n2 1e100 0\n3 1e100 1e100\n4 0 1e100\nEOF\n"
    )
    status, _, err = cli("solve", "tsp", "x.tsp", "-o", "o.txt")
    assert status == 0 and "tour length 4e+100" in err


def test_huge_and_subnormal_coordinates_solve_like_the_unit_square() -> None:
    rng = np.random.default_rng(1)
    unit = rng.random((12, 2))
    for scale in (1e300, 5e-324 * 2**40, 1e-300):
        points = unit * scale
        for name in ("convex_hull", "delaunay"):
            assert np.array_equal(get_task(name).solve(points), get_task(name).solve(unit))
        tour = solve_tour(points, "auto")
        assert tour_length(unit, tour) == pytest.approx(tour_length(unit, solve_tour(unit)))


def test_degenerate_instances_have_a_defined_outcome(cli, tmp_path: Path, models) -> None:
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
def test_only_ascii_decimal_numbers_are_read(cli, tmp_path: Path, text: str, problem: str) -> None:
    (tmp_path / "n.txt").write_text(text, encoding="utf-8")
    status, _, err = cli("score", "sort", "n.txt", "n.txt")
    one_line_error(status, err, f"n.txt:1: {problem}")


def test_a_bom_is_skipped_in_paper_and_tsplib_files(cli, tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_bytes(b"\xef\xbb\xbf0.3 0.1 0.2\n")
    assert cli("solve", "sort", "b.txt", "-o", "o.txt", "-q")[0] == 0
    (tmp_path / "b.tsp").write_bytes(
        b"\xef\xbb\xbfNAME : bom\nEDGE_WEIGHT_TYPE : EUC_2D\n"
        b"NODE_COORD_SECTION\n1 0 0\n2 3 4\nEOF\n"
    )
    status, _, err = cli("solve", "tsp", "b.tsp", "-o", "t.txt")
    assert status == 0 and "bom: tour length 10" in err


def test_a_repeated_tsplib_key_is_an_error_and_mismatches_print_plain_floats(
    cli, tmp_path: Path
) -> None:
    (tmp_path / "r.tsp").write_text(
        "NAME : a\nNAME : b\nEDGE_WEIGHT_TYPE : EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 1 1\nEOF\n"
    )
    one_line_error(*cli("solve", "tsp", "r.tsp", "-o", "o.txt")[::2], "r.tsp:2: header key 'NAME'")
    (tmp_path / "ref.txt").write_text("0.1 0.2 output 1 2\n")
    (tmp_path / "pred.txt").write_text("0.1 0.3 output 1 2\n")
    status, _, err = cli("score", "sort", "ref.txt", "pred.txt")
    one_line_error(status, err, "pred.txt:1: points differ from ref.txt:1: coordinate 2 is 0.3,")
    assert "np.float64" not in err
