"""benchmarks/gpu_recipe.py at toy size on the CPU: labels, supervision and POMO in bf16
autocast (the mixed-precision path a GPU run takes), then the frontier of the trained model;
a second call finds every phase done and only reruns the frontier."""

from __future__ import annotations

import json

from benchmarks.gpu_recipe import main, parse_args
from ptrnet.runs.checkpoint import load_checkpoint


def test_the_toy_recipe_trains_both_phases_in_bf16_and_runs_the_frontier(tmp_path):
    main(["--toy", "--out", str(tmp_path)])
    for name in ("sup", "pomo"):
        run = tmp_path / "n10" / name
        config = json.loads((run / "config.json").read_text())["train"]
        assert config["precision"] == "bf16" and config["device"] == "cpu"
        assert load_checkpoint(run / "last.safetensors").step == 3
    sup = json.loads((tmp_path / "n10" / "sup" / "config.json").read_text())["train"]
    assert sup["labels"] == "file" and sup["data"].endswith("labels10.txt") and sup["augment"]
    pomo = json.loads((tmp_path / "n10" / "pomo" / "config.json").read_text())["train"]
    assert pomo["baseline"] == "pomo" and pomo["init_from"].endswith("sup/last.safetensors")
    rows = [json.loads(x) for x in (tmp_path / "frontier" / "rows.jsonl").read_text().splitlines()]
    names = {r["method"] for r in rows}
    assert {"gpu10 greedy", "gpu10 multistart-shortest + or-opt", "fast-tsp"} <= names
    assert (tmp_path / "frontier" / "frontier_n10.png").stat().st_size > 1000
    main(["--toy", "--out", str(tmp_path)])  # resumes nothing: both runs are at their step
    assert load_checkpoint(tmp_path / "n10" / "pomo" / "last.safetensors").step == 3


def test_gpu_scale_defaults_leave_device_and_precision_to_the_machine():
    args = parse_args(["--out", "x"])
    assert (args.device, args.precision, args.sizes) == ("auto", "auto", [20, 50])
    assert args.sup_batch >= 512 and args.pomo_batch >= 256
