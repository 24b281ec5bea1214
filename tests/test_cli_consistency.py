"""The same conventions in every command: 'bundled' names a task's bundled model, --device
where a model runs, eval reports what it ran, FAIL spelled one way."""

import numpy as np
import pytest
import torch

from ptrnet.cli import serve
from ptrnet.cli.main import main
from ptrnet.cli.score import format_table
from ptrnet.evaluation.score import area_text
from ptrnet.io.paper_format import write_examples
from ptrnet.tasks import get_task

torch.set_num_threads(1)


@pytest.fixture
def sort_data(tmp_path):
    task, rng = get_task("sort"), np.random.default_rng(5)
    points = [rng.random((6, 1)) for _ in range(7)]
    path = tmp_path / "sort.txt"
    write_examples(path, ((p, task.solve(p)) for p in points))
    return path


def test_eval_reports_the_model_the_decoding_and_the_time(sort_data, capsys):
    argv = ["eval", "sort", str(sort_data), "--model", "bundled", "--device", "cpu"]
    assert main([*argv, "--decode", "beam", "--beam-width", "3", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    assert "exact_match" in out
    assert "bundled/sort/best.safetensors (step" in out and ", cpu)" in out
    assert "beam search, width 3, most likely; 1 view; only valid outputs" in out
    assert "7 instances in" in out
    assert main([*argv, "--json", "--threads", "1"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("{") and captured.out.count("\n") == 1  # JSON alone
    assert "decoding greedy; 1 view; only valid outputs; time 7 instances in" in captured.err


def test_predict_takes_bundled_and_a_device(sort_data, tmp_path, capsys):
    out = tmp_path / "pred.txt"
    argv = ["predict", "sort", str(sort_data), "-o", str(out), "--model", "bundled", "-q"]
    assert main([*argv, "--device", "cpu"]) == 0
    assert len(out.read_text().splitlines()) == 7
    assert main([*argv, "--device", "cuda:x"]) == 2
    assert capsys.readouterr().err.startswith("ptrnet: error: --device cuda:x: unknown device")


def test_serve_loads_bundled_models_on_the_device():
    models = serve.load_models(["tsp=bundled"], "cpu")
    assert models["tsp"].path.endswith("bundled/tsp/best.safetensors")
    assert next(models["sort"].model.parameters()).device.type == "cpu"


def test_fail_reads_the_same_in_every_table():
    flagged = {"accuracy": 0.5, "area_coverage": 0.997, "non_simple_rate": 0.02, "fail": True}
    assert area_text(flagged) == "FAIL (99.7%; 2.0% not simple)"
    assert area_text({**flagged, "fail": False}) == "99.7%"
    table = format_table("convex_hull", flagged)
    assert "FAIL (more than 1% not simple)" in table and "yes" not in table
    assert format_table("convex_hull", {**flagged, "fail": False}).splitlines()[-1].split() == [
        "fail",
        "no",
    ]


def test_eval_names_each_decoding_strategy() -> None:
    """The decoding line says what ran: multi-start and best-of-k are not beam search."""
    from ptrnet.cli.eval import describe_decoding
    from ptrnet.decoding.options import DecodeOptions

    tsp = get_task("tsp")

    def words(**kwargs) -> str:
        return describe_decoding(DecodeOptions(**kwargs).for_task(tsp), tsp)

    assert words(multistart=1, pick="shortest").startswith(
        "multi-start greedy (a run from every input), shortest tour;"
    )
    assert words(strategy="sample", samples=8, seed=3).startswith(
        "best of 8 samples (seed 3), most likely;"
    )
    assert words(strategy="beam", beam_width=4).startswith("beam search, width 4, most likely;")
    assert words(strategy="greedy").startswith("greedy;")
    knapsack = get_task("knapsack")
    picked = DecodeOptions(strategy="beam", beam_width=4, pick="shortest").for_task(knapsack)
    assert describe_decoding(picked, knapsack).startswith(
        "beam search, width 4, most valuable load;"
    )
