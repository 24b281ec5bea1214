"""benchmarks/bench_local_search.py runs end to end on small sizes: a row per size and search,
each reporting that the compiled and the numpy search reached the same tours."""

from benchmarks.bench_local_search import main


def test_it_reports_one_row_per_size_and_search_with_the_same_tours(capsys):
    rows = main(["--n", "9", "30", "--count", "3", "--start", "random"])
    assert [(row["n"], row["search"]) for row in rows] == [
        (9, "2-opt"),
        (9, "2-opt + Or-opt"),
        (30, "2-opt"),
        (30, "2-opt + Or-opt"),
    ]
    assert all(row["same"] for row in rows)
    assert capsys.readouterr().out.count("| True |") == 4
