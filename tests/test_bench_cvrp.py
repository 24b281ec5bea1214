"""The pieces of benchmarks/bench_cvrp.py that need neither Kool's checkout nor a trained model:
their CVRP input format, the lengths and validity of routes in either system's form, the
reference files read back as written, the summary and its table, and one-line errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks.bench_cvrp import (
    KOOL_GREEDY,
    CvrpSet,
    Row,
    kool_available,
    kool_size,
    load_references,
    main,
    parse_models,
    ptrnet_row,
    served_length,
    summary,
    table,
)
from benchmarks.kool_models import BenchError, to_kool_cvrp_input
from ptrnet.datasets.generation import generate_dataset
from ptrnet.io.errors import InputError
from ptrnet.io.paper_format import write_examples
from ptrnet.solvers.cvrp import exact_routes, routes_length, sample_instance
from ptrnet.tasks.cvrp import instance_rows

# A depot at the origin, customers at (0, 0.3), (0, 0.4) and (0.5, 0), demands 2, 1, 3,
# capacity 4: routes depot-1-2-depot (0.8 long) and depot-3-depot (1.0 long).
LINE = instance_rows([[0, 0], [0, 0.3], [0, 0.4], [0.5, 0]], [0, 2, 1, 3], 4)


def test_kool_input_carries_locations_depot_and_demand_over_capacity():
    rng = np.random.default_rng(3)
    parts = [sample_instance(rng, 20) for _ in range(3)]
    given = to_kool_cvrp_input([instance_rows(*p) for p in parts])
    assert given["loc"].shape == (3, 20, 2) and given["depot"].shape == (3, 2)
    for b, (coords, demands, capacity) in enumerate(parts):
        assert capacity == 30
        np.testing.assert_allclose(given["depot"][b].numpy(), coords[0], atol=1e-7)
        np.testing.assert_allclose(given["loc"][b].numpy(), coords[1:], atol=1e-7)
        back = given["demand"][b].double().numpy() * capacity  # their demand / capacity, back
        np.testing.assert_array_equal(np.rint(back).astype(np.int64), demands[1:])
        np.testing.assert_allclose(back, demands[1:], atol=1e-5)


def test_kool_input_refuses_mixed_sizes_and_points_outside_the_square():
    with pytest.raises(BenchError, match="one shape"):
        to_kool_cvrp_input([LINE, LINE[:3]])
    far = LINE.copy()
    far[1, 0] = 2.0
    with pytest.raises(BenchError, match=r"\[0, 1\]\^2"):
        to_kool_cvrp_input([far])


def test_served_length_measures_both_forms_and_refuses_what_does_not_serve():
    assert served_length(LINE, [1, 2, 0, 3]) == pytest.approx(0.8 + 1.0)  # ptrnet's form
    assert served_length(LINE, [1, 2, 0, 3, 0, 0]) == pytest.approx(1.8)  # Kool's padding
    assert served_length(LINE, [3, 0, 2, 1]) == pytest.approx(1.8)  # a route either way
    roomy = LINE.copy()
    roomy[:, 3] = 6  # one vehicle carries all
    assert served_length(roomy, [1, 2, 3]) == pytest.approx(0.4 + math.hypot(0.5, 0.4) + 0.5)
    assert math.isnan(served_length(LINE, [1, 2, 3]))  # load 6 over the capacity 4
    assert math.isnan(served_length(LINE, [1, 3, 0, 2]))  # load 5 over the capacity 4
    assert math.isnan(served_length(LINE, [1, 2]))  # customer 3 not served
    assert math.isnan(served_length(LINE, [1, 2, 0, 3, 0, 1]))  # customer 1 twice


def test_references_read_back_the_instances_and_label_lengths_written(tmp_path):
    path = tmp_path / "cvrp6.txt"
    written = list(generate_dataset("cvrp", 6, 4, seed=11, solver="exact", workers=1, stream=5))
    write_examples(path, written)  # what ptrnet generate cvrp writes
    test = load_references(path)
    assert test.n == 6 and len(test.rows) == 4
    for rows, (points, _), ref in zip(test.rows, written, test.refs, strict=True):
        np.testing.assert_array_equal(rows, points)
        coords, demands, capacity = rows[:, :2], rows[:, 2].astype(int), int(rows[0, 3])
        best = routes_length(coords, exact_routes(coords, demands, capacity))  # solved again
        assert ref == pytest.approx(best, rel=1e-12)
    assert len(load_references(path, 2).rows) == 2


def test_references_refuse_a_missing_file_mixed_sizes_and_a_bad_label(tmp_path):
    with pytest.raises(BenchError, match="no reference file"):
        load_references(tmp_path / "cvrp20.txt")
    mixed = tmp_path / "mixed.txt"
    write_examples(mixed, generate_dataset("cvrp", "3-6", 6, seed=1, workers=1, stream=5))
    with pytest.raises(BenchError, match="one size"):
        load_references(mixed)
    bad = tmp_path / "bad.txt"
    write_examples(bad, [(LINE, np.array([1, 3, 0, 2]))])  # over the capacity
    with pytest.raises(InputError, match="bad.txt:1: output is not a valid cvrp label"):
        load_references(bad)


def test_summary_gives_valid_rate_gap_paired_difference_and_rate():
    refs = np.array([1.0, 2.0, 4.0])
    kool = Row(20, KOOL_GREEDY, np.array([1.1, 2.2, 4.4]), cpu_s=0.5)
    ours = Row(20, "ptrnet greedy", np.array([1.2, np.nan, 4.0]), cpu_s=2.0)
    s = summary(ours, refs, kool)
    assert s["valid_rate"] == pytest.approx(2 / 3)
    assert s["gap"] == pytest.approx((0.2 + 0.0) / 2)
    assert s["vs_kool"] == pytest.approx(((0.2 - 0.1) + (0.0 - 0.1)) / 2)  # instances 0 and 2
    assert s["vs_kool_se"] == pytest.approx(np.std([0.1, -0.1], ddof=1) / math.sqrt(2))
    assert s["per_s"] == pytest.approx(1.5)
    k = summary(kool, refs, kool)
    assert k["gap"] == pytest.approx(0.1) and "vs_kool" not in k and k["per_s"] == 6.0
    assert "vs_kool" not in summary(ours, refs, None)


def test_the_table_shows_each_row_and_a_refusal_in_one_line():
    refs = np.array([1.0, 2.0])
    kool = Row(50, KOOL_GREEDY, np.array([1.05, 2.1]), cpu_s=0.1)
    rows = [
        Row(50, "ptrnet greedy", np.array([1.1, 2.0]), cpu_s=0.4),
        Row(50, "ptrnet views8", refused="views 8 need ..."),
        kool,
    ]
    text = table([summary(r, refs, kool) for r in rows]).splitlines()
    assert text[0].startswith("| n | method |") and len(text) == 5
    assert text[2] == "| 50 | ptrnet greedy | 2 | 100.0% | 5.00% | +0.00 ± 5.00 pts | 5.0 |"
    assert text[3] == "| 50 | ptrnet views8 | 2 | - | refused: views 8 need ... | - | - |"
    assert text[4] == "| 50 | kool greedy | 2 | 100.0% | 5.00% | - | 20.0 |"


def test_a_decoding_refused_while_decoding_is_a_refused_row(monkeypatch):
    import ptrnet.inference
    from ptrnet.decoding.options import DecodeOptionError

    def refuse(*_args, **_kwargs):
        raise DecodeOptionError("multistart", "multistart is refused here\nsecond line")

    monkeypatch.setattr(ptrnet.inference, "predict", refuse)
    test = CvrpSet(3, [LINE], np.array([1.8]))
    row = ptrnet_row(None, "m", "greedy", test)
    assert row.method == "m greedy" and "multistart is refused here" in row.refused
    assert "\n" not in row.refused


def test_kool_models_by_size_and_the_model_names():
    assert [kool_size(n) for n in (5, 20, 30, 35, 50, 75, 80, 200)] == [10, 20, 20, 20, 50, 50,
                                                                         100, 100]  # fmt: skip
    assert parse_models(None) == {"ptrnet": "bundled"}
    assert parse_models(["run", "b=x.safetensors"]) == {"ptrnet": "run", "b": "x.safetensors"}
    for bad in (["a=x", "a=y"], ["kool=x"], ["2x=y"]):
        with pytest.raises(BenchError, match="--model"):
            parse_models(bad)


def test_without_a_checkout_kool_rows_are_left_out_with_a_note(tmp_path, capsys):
    assert not kool_available(None)
    assert not kool_available(str(tmp_path))
    assert capsys.readouterr().err.count("bench_cvrp: Kool rows left out") == 2


def test_errors_are_one_line(tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        main(["--model", str(tmp_path / "nowhere"), "--references", str(tmp_path)])
    text = str(exit_info.value)
    assert text.startswith("bench_cvrp: error: ") and "\n" not in text


def test_the_route_search_row_shortens_the_decoded_routes_and_keeps_them_valid(tmp_path):
    """``+route-search`` runs the task's route search on the decoding's answers: with an
    untrained model every answer stays valid and none gets longer."""
    import torch

    from benchmarks.bench_cvrp import decoded
    from ptrnet.inference import load_model
    from ptrnet.model import ModelConfig, build_model
    from ptrnet.runs.checkpoint import save_checkpoint
    from ptrnet.runs.config import RunConfig, TrainConfig
    from ptrnet.solvers.cvrp import routes_problem, split_routes

    torch.manual_seed(0)
    config = RunConfig(
        ModelConfig(input_dim=4, hidden=8, features="demand"),
        TrainConfig(task="cvrp", sizes="8", steps=1),
    )
    save_checkpoint(tmp_path / "best.safetensors", config, 0, build_model(config.model))
    loaded = load_model(str(tmp_path / "best.safetensors"), "cvrp")
    rows = [instance_rows(*sample_instance(np.random.default_rng(s), 8)) for s in range(4)]
    plain = decoded(loaded, rows, "multistart8-shortest")
    searched = decoded(loaded, rows, "multistart8-shortest+route-search")
    for r, a, b in zip(rows, plain, searched, strict=True):
        assert routes_problem(r[:, 2].astype(int), int(r[0, 3]), split_routes(b)) is None
        assert (
            routes_length(r[:, :2], split_routes(b))
            <= routes_length(r[:, :2], split_routes(a)) + 1e-12
        )
