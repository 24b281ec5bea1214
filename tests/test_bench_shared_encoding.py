"""benchmarks/bench_shared_encoding.py runs end to end on tiny shapes: a Markdown row per
decoder and job, each after checking that both ways give the same value."""

from benchmarks.bench_shared_encoding import main


def test_it_prints_one_row_per_decoder_and_job(capsys):
    main(["--n", "6", "--batch", "2", "--repeats", "1", "--decoders", "light", "heavy"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    jobs = [row.split(" | ")[:4] for row in rows[1:]]  # after the header row
    assert jobs == [
        ["| light", "6", "2", "POMO step"],
        ["| light", "6", "2", "multistart"],
        ["| heavy", "6", "2", "POMO step"],
        ["| heavy", "6", "2", "multistart"],
    ]
