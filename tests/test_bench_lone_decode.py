"""benchmarks/bench_lone_decode.py runs end to end with the bundled folder and a checkpoint,
without Kool's checkout: one figure per size and model, and ratios to Kool's; and
benchmarks/step_operations.py counts a lone decoding step's tensor operations."""

from pathlib import Path

from benchmarks import step_operations
from benchmarks.bench_lone_decode import KOOL_IM, main, ratios

PROBE = Path(__file__).parent.parent / "docs/beyond-runs/light-probe/pomo50/best.safetensors"


def test_it_times_every_model_at_every_size(capsys):
    rows = main(["--model", "bundled", "--model", f"light={PROBE}", "--n", "6", "12",
                 "--count", "1", "--rounds", "1"])  # fmt: skip
    assert [sorted(row) for row in rows] == [["light", "n", "ptrnet"]] * 2
    assert all(row["light"] > 0 and row["ptrnet"] > 0 for row in rows)
    assert capsys.readouterr().out.count("n = ") == 2


def test_ratios_divide_each_ptrnet_row_by_kools_under_inference_mode():
    cells = {"light": 9.0, "kool": 12.0, KOOL_IM: 10.0, "heavy": 25.0}
    assert ratios(cells) == ["light 0.90", "heavy 2.50"]


def test_a_light_decoder_step_costs_51_tensor_operations_not_112(capsys):
    """benchmarks/step_operations.py on the light probe: a lone greedy TSP step's operations
    by source (112 before docs/speed.md's 'One instance at a time' changes: 51 in the model's
    step, 45 in the task's state and mask, 16 in the search loop); a decoding's total follows."""
    found = step_operations.main(["--model", str(PROBE), "--sizes", "6", "12"])
    steps = {k: v for k, v in found.items() if not k.startswith("total")}
    assert found["total"] == sum(steps.values()) <= 55
    assert steps["model step"] <= 30 and steps["task state and mask"] <= 14
    assert found["total n=12"] - found["total n=6"] == 6 * found["total"]
    assert "tensor operations per step" in capsys.readouterr().out
