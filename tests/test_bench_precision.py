"""benchmarks/bench_precision.py: every model family it times is a valid run configuration, and
it times a family in both precisions and prints one table row per family."""

import pytest

from benchmarks import bench_precision
from ptrnet.model import ModelConfig
from ptrnet.runs.config import RunConfig, TrainConfig


@pytest.mark.parametrize("family", list(bench_precision.FAMILIES))
def test_every_family_is_a_valid_run_configuration(family):
    model, train = bench_precision.FAMILIES[family]
    RunConfig(ModelConfig(**model), TrainConfig(steps=1, **train))


def test_it_prints_a_row_per_family_with_both_precisions(monkeypatch, capsys):
    monkeypatch.setattr("sys.argv", ["bench_precision.py", "--families", "lstm-sort",
                                     "--steps", "1", "--rounds", "1"])  # fmt: skip
    bench_precision.main()
    row = capsys.readouterr().out.strip().splitlines()[-1]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[0] == "lstm-sort"
    fp32, bf16, ratio = (float(c) for c in cells[1:])
    assert fp32 > 0 and bf16 > 0 and ratio == pytest.approx(bf16 / fp32, rel=0.1)  # printed rounded
