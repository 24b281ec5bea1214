"""benchmarks/bench_lone_decode.py runs end to end with the bundled folder and a checkpoint,
without Kool's checkout: one figure per size and model."""

from pathlib import Path

from benchmarks.bench_lone_decode import main

PROBE = Path(__file__).parent.parent / "docs/beyond-runs/light-probe/pomo50/best.safetensors"


def test_it_times_every_model_at_every_size(capsys):
    rows = main(["--model", "bundled", "--model", f"light={PROBE}", "--n", "6", "12",
                 "--count", "1", "--rounds", "1"])  # fmt: skip
    assert [sorted(row) for row in rows] == [["light", "n", "ptrnet"]] * 2
    assert all(row["light"] > 0 and row["ptrnet"] > 0 for row in rows)
    assert capsys.readouterr().out.count("n = ") == 2
