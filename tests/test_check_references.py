"""benchmarks/check_references.py finds a test file's long reference tours."""

import numpy as np

from benchmarks.check_references import excesses, report
from ptrnet.io.paper_format import write_examples
from ptrnet.tasks import get_task


def test_a_poor_reference_shows_and_a_good_one_does_not(tmp_path):
    task = get_task("tsp")
    rng = np.random.default_rng(3)
    good, poor = rng.random((25, 2)), rng.random((25, 2))
    identity = np.r_[np.arange(25), 0]  # the input order: a poor tour on random points
    path = tmp_path / "tsp25.txt"
    write_examples(path, [(good, task.solve(good)), (poor, identity)])
    rows = excesses(str(path), None, factor=2.0)
    assert [(i, n) for i, n, _ in rows] == [(0, 25), (1, 25)]
    assert abs(rows[0][2]) < 1e-3  # the same search, twice the budget
    assert rows[1][2] > 0.5  # the input order is far longer than a near-exact tour
    text = report(str(path), rows, 1.0)
    assert "2 instances, 1 references longer" in text and "(1, 25," in text
    assert len(excesses(str(path), 1, factor=2.0)) == 1


def test_bad_counts_factors_and_files_are_one_line_errors(tmp_path, capsys):
    import pytest

    from benchmarks.check_references import main

    for argv, message in (
        (["x.txt", "--count", "-1"], "argument --count: expected a positive integer"),
        (["x.txt", "--factor", "0"], "argument --factor: expected a positive number"),
        ([str(tmp_path / "none.txt")], "none.txt: cannot read"),
    ):
        with pytest.raises(SystemExit):
            main(argv)
        assert message in capsys.readouterr().err
