"""``ptrnet reproduce``: the plans match the paper's rows; dry runs of every table end to end,
reuse and resume of trained runs, test sets disjoint from training data, one-line errors."""

import json
import os
from dataclasses import replace

import numpy as np
import pytest
import torch

from ptrnet.cli.main import main
from ptrnet.decoding.options import DecodeOptions
from ptrnet.evaluation.paper_numbers import PAPER_RESULTS
from ptrnet.io.errors import UsageError
from ptrnet.io.paper_format import read_examples, write_examples
from ptrnet.reproduce.compute import examples_seen
from ptrnet.reproduce.plans import (
    HULL_FILE,
    SCALES,
    TABLES,
    TEST_STREAM,
    ModelPlan,
    RowPlan,
    TablePlan,
    describe_budget,
    estimate_hours,
    get_scale,
    get_table,
    paper_numbers,
    run_config,
    total_steps,
)
from ptrnet.reproduce.run import Reproduction
from ptrnet.reproduce.tables import _cell, _compute_note, format_table
from ptrnet.tasks import SizeRange, get_task
from ptrnet.training.data import BUCKET_STREAM, ORDER_STREAM, TRAIN_STREAM, VAL_STREAM, TrainingData

torch.set_num_threads(1)
DRY = SCALES["dry-run"]


def keys(points_list):
    return {np.asarray(p, dtype=np.float32).tobytes() for p in points_list}


# --- plans -----------------------------------------------------------------------------------


def rows_of(table):
    return [(r.label, r.model, r.n) for r in TABLES[table].rows]


def test_table1_plan_has_the_papers_rows_with_baselines_at_their_n():
    plan = TABLES["table1"]
    tested = {(plan.model(r.model).arch, plan.model(r.model).sizes, r.n) for r in plan.rows}
    assert tested == {
        ("seq2seq", "50", 50),
        ("attention", "50", 50),
        ("pointer", "50", 50),
        ("seq2seq", "5", 5),
        ("seq2seq", "10", 10),
        *{("pointer", "5-50", n) for n in (5, 10, 50, 100, 200, 500)},
    }
    for row in plan.rows:
        model = plan.model(row.model)
        assert model.max_n in (None, row.n)  # baselines: fixed vocabulary = the tested n
        config = run_config(model, SCALES["cpu"], None)
        assert config.model.kind == model.arch and config.model.max_n == model.max_n
        assert paper_numbers("convex_hull", row.paper_model, row.n)["accuracy"] > 0
    assert {r.n for r in plan.rows if r.paper_file == HULL_FILE} == {5}
    assert paper_numbers("convex_hull", "lstm n", 10) == {"accuracy": 0.299, "fail": True}


def test_table2_plan_has_a1_a3_label_models_and_the_5_20_generalisation_rows():
    plan = TABLES["table2"]
    assert plan.decoding == DecodeOptions(
        "beam", beam_width=5, constraints="task", protocol="paper"
    ) and plan.comparators == ("a1", "a2", "a3")
    labelled = {m.labels: (m.sizes, m.arch) for m in plan.models if m.labels in ("a1", "a3")}
    assert labelled == {"a1": ("50", "pointer"), "a3": ("50", "pointer")}
    assert [r.n for r in plan.rows if r.model == "tsp-ptr-5-20"] == [5, 10, 20, 25, 30, 40, 50]
    assert paper_numbers("tsp", "ptr n a1", 50) == {"mean_length": 6.42}
    assert paper_numbers("tsp", "ptr n a3", 50) == {"mean_length": 6.09}
    assert paper_numbers("tsp", "a3", 25) == {"mean_length": 4.24}
    assert paper_numbers("tsp", "optimal", 20) == PAPER_RESULTS[("tsp", "optimal", 20)]
    file_model = plan.model("tsp-ptr-50-a1")
    config = run_config(file_model, SCALES["cpu"], "a1.txt")
    assert config.train.labels == "file" and config.train.data == "a1.txt"


def test_every_row_has_a_model_and_model_names_are_unique():
    names = [m.name for t in TABLES.values() for m in t.models]
    assert len(names) == len(set(names))
    for table in TABLES.values():
        assert {r.model for r in table.rows} == {m.name for m in table.models}
    assert rows_of("delaunay") == [
        (f"Ptr-Net {n}→{n}", f"delaunay-ptr-{n}", n) for n in (5, 10, 50)
    ]


def test_budgets_per_scale():
    hull = TABLES["table1"].model("hull-ptr-5-50")
    assert total_steps(hull, SCALES["cpu"]) == hull.cpu_steps
    assert total_steps(hull, SCALES["paper"]) == 10 * 7813  # 10 epochs of 1M at batch 128
    assert total_steps(hull, DRY) == 4
    assert describe_budget(hull, SCALES["cpu"]) == "cpu: 20,000 steps × 128, hidden 256"
    config = run_config(hull, SCALES["paper"], None)
    assert (config.train.epochs, config.train.epoch_size, config.model.hidden) == (10, 10**6, 256)
    assert (
        config.train.bucket
        and not run_config(TABLES["table1"].model("hull-lstm-50"), DRY, None).train.bucket
    )
    assert examples_seen(3, 10, 4) == 10 and examples_seen(4, 10, 4) == 14
    assert examples_seen(5, 1000, 128) == 640


def test_unknown_names_list_the_choices():
    with pytest.raises(ValueError, match="unknown table 'table3'; choose from table1, table2"):
        get_table("table3")
    with pytest.raises(ValueError, match="unknown scale 'gpu'; choose from dry-run, cpu, paper"):
        get_scale("gpu")


# --- dry runs end to end ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def paper_data(tmp_path_factory):
    """Stand-ins for the released n = 5 files (30 labelled lines each)."""
    folder = tmp_path_factory.mktemp("paper")
    for task, name in ((get_task("convex_hull"), HULL_FILE), (get_task("tsp"), "tsp5_test.txt")):
        points = task.generate(SizeRange(5, 5), 30, seed=99)
        write_examples(folder / name, [(p, task.solve(p)) for p in points])
    return folder


def reproduce(table, out, paper_data):
    argv = ["reproduce", table, "--scale", "dry-run", "--out", str(out), "-q"]
    return main([*argv, "--threads", "1", "--paper-data", str(paper_data)])


def last_mtimes(out):
    return {
        p: os.stat(out / p / "last.safetensors").st_mtime_ns
        for p in os.listdir(out)
        if (out / p / "last.safetensors").exists()
    }


@pytest.mark.parametrize("table", ["table1", "table2", "delaunay"])
def test_dry_run_writes_tables_and_reuses_runs(table, paper_data, tmp_path):
    out = tmp_path / "out"
    assert reproduce(table, out, paper_data) == 0
    report = json.loads((out / f"{table}.json").read_text())
    markdown = (out / f"{table}.md").read_text()
    assert markdown == format_table(report)
    plan = TABLES[table]
    assert [r["label"] for r in report["rows"]] == [r.label for r in plan.rows]
    for row in report["rows"]:
        compute = row["compute"]
        assert compute["steps"] == 4 and compute["examples"] == 32 and compute["threads"] == 1
        assert compute["device"] == "cpu" and compute["train_wall_s"] >= 0
        assert row["scale"] == "dry-run" and row["budget"].startswith("dry-run: 4 steps × 8")
        assert row["test"]["count"] == 20 and not compute["reused"]
        assert row["paper"] and set(row["metrics"]) >= set(report["metrics"])
        assert f"| {row['label']} | {row['n']} |" in markdown
    first = {"convex_hull": "92.0% / 99.6%", "tsp": "2.12 / ", "delaunay": "80.7% / 93.0%"}
    assert first[plan.task] in markdown and "dry-run: 4 steps × 8" in markdown
    before = last_mtimes(out)
    assert len(before) == len(plan.models)
    assert reproduce(table, out, paper_data) == 0
    again = json.loads((out / f"{table}.json").read_text())
    assert last_mtimes(out) == before
    assert all(r["compute"]["reused"] and r["compute"]["steps"] == 4 for r in again["rows"])
    assert [r["metrics"] for r in again["rows"]] == [r["metrics"] for r in report["rows"]]
    if table == "table2":
        check_tsp_data_disjoint(out)


def check_tsp_data_disjoint(out):
    """Training files and test sets of the TSP dry run share no instance; the n = 5 rows use
    the paper's file."""
    report = json.loads((out / "table2.json").read_text())
    assert {r["test"]["source"] for r in report["rows"] if r["n"] == 5} == {
        "paper file tsp5_test.txt"
    }
    task = get_task("tsp")
    train = {
        f: keys(e.points for e in read_examples(out / "data" / f, task))
        for f in os.listdir(out / "data")
    }
    assert set(train) == {"tsp-5-20-auto-64.txt", "tsp-50-a1-64.txt", "tsp-50-a3-64.txt"}
    tests = [name for name in os.listdir(out / "testsets") if name.endswith(".txt")]
    assert len(tests) == 6  # n = 10, 20, 25, 30, 40, 50; n = 5 is the paper's file
    cached = json.loads((out / "testsets" / "comparators.json").read_text())
    assert len(cached) == 7  # one entry per test set, the paper's file included
    assert all(set(v) == {"optimal", "a1", "a2", "a3"} for v in cached.values())
    for name in tests:
        test = keys(e.points for e in read_examples(out / "testsets" / name, task))
        assert all(not (test & seen) for seen in train.values())


def test_generated_training_batches_never_hold_test_instances(tmp_path):
    assert TEST_STREAM not in (TRAIN_STREAM, VAL_STREAM, ORDER_STREAM, BUCKET_STREAM)
    model = TABLES["table1"].model("hull-ptr-5-50")
    config = run_config(model, replace(DRY, batch_size=64), None)
    data = TrainingData(get_task("convex_hull"), config.train, [])
    seen = set()
    for step in range(4):
        batch = data.batch(step)
        seen |= keys(
            p[:n] for p, n in zip(batch.points.numpy(), batch.lengths.tolist(), strict=True)
        )
    plan = Reproduction(TABLES["table1"], DRY, str(tmp_path), paper_data=None)
    for n in (5, 10, 50):
        test = plan.test_set(RowPlan("r", "hull-ptr-5-50", n, "ptr 5-50"))
        assert len(test.points) == 20 and not keys(test.points) & seen


# --- reuse, resume, errors -------------------------------------------------------------------


def tiny_plan():
    model = ModelPlan("hull-tiny", "convex_hull", "pointer", "5", cpu_steps=1, ms_per_step=1.0)
    row = RowPlan("Ptr-Net 5→5", "hull-tiny", 5, "ptr 5-50", HULL_FILE)
    decoding = DecodeOptions("greedy", constraints="none")
    return TablePlan("tiny", "Tiny", "convex_hull", decoding, ("accuracy",), (model,), (row,))


def test_resume_extends_a_run_and_another_config_is_an_error(tmp_path):
    scale = replace(DRY, steps=2, val_every=1, test_count=5)
    first = Reproduction(tiny_plan(), scale, str(tmp_path)).run()
    assert first["rows"][0]["compute"]["steps"] == 2
    assert "convex_hull_5_test.txt was not found (no --paper-data folder)" in first["notes"][0]
    assert "not found" in (tmp_path / "tiny.md").read_text()
    longer = Reproduction(tiny_plan(), replace(scale, steps=3), str(tmp_path)).run()
    compute = longer["rows"][0]["compute"]
    assert compute["steps"] == 3 and not compute["reused"]
    assert compute["train_wall_s"] >= first["rows"][0]["compute"]["train_wall_s"]
    with pytest.raises(UsageError, match="holds a run with another configuration"):
        Reproduction(tiny_plan(), replace(scale, hidden=8), str(tmp_path)).run()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["table3"], "ptrnet: error: unknown table 'table3'; choose from table1, table2, delaunay"),
        (["table1", "--scale", "huge"], "ptrnet: error: unknown scale 'huge'"),
        (["table1", "--paper-data", "/nonexistent"], "ptrnet: error: --paper-data /nonexistent"),
        (["table1", "--device", "tpu"], "ptrnet: error: unknown device 'tpu'; choose auto, cpu"),
    ],
)
def test_bad_arguments_are_one_line_errors(argv, message, capsys, tmp_path):
    assert main(["reproduce", *argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1


def test_without_scale_the_plan_is_printed_and_nothing_trains(capsys, tmp_path, monkeypatch):
    from ptrnet.reproduce import run as reproduce_run

    started = []
    monkeypatch.setattr(
        reproduce_run.Reproduction, "run", lambda self: started.append(self) or {"rows": []}
    )
    out = tmp_path / "runs"
    assert main(["reproduce", "table1", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    hours = estimate_hours(get_table("table1"), get_scale("cpu"))
    assert f"about {hours:.1f} hours" in text and "--yes" in text and "hull-ptr-5-50" in text
    assert not started and not out.exists()
    assert 2 < hours < 4  # docs/reproduce.md: about 2.9 h for table1 on one thread
    assert main(["reproduce", "table1", "--yes", "--out", str(out), "-q"]) == 0
    assert [r.scale.name for r in started] == ["cpu"]


def test_estimates_grow_with_the_scale():

    for plan in TABLES.values():
        dry, cpu, paper = (estimate_hours(plan, get_scale(s)) for s in ("dry-run", "cpu", "paper"))
        assert dry < 0.01 < cpu < paper


def test_a_malformed_released_file_fails_before_any_training(capsys, tmp_path):
    bad = tmp_path / "paper"
    bad.mkdir()
    (bad / HULL_FILE).write_text("0.1 0.2 0.3 output 1 2 1\n")
    out = tmp_path / "out"
    assert main(["reproduce", "table1", "--scale", "dry-run", "--out", str(out), "-q",
                 "--threads", "1", "--paper-data", str(bad)]) == 1  # fmt: skip
    assert f"{bad / HULL_FILE}:1:" in capsys.readouterr().err
    assert not any(out.glob("*/last.safetensors"))  # nothing was trained


def test_unwritable_out_is_a_one_line_error(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["reproduce", "delaunay", "--scale", "dry-run", "--out", str(blocker / "x")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ptrnet: error: cannot use {blocker / 'x'} as the output folder")


def test_partial_report_trains_nothing_and_marks_unfinished_and_missing_runs(tmp_path):
    model = ModelPlan("hull-tiny", "convex_hull", "pointer", "5", cpu_steps=1, ms_per_step=1.0)
    other = ModelPlan("hull-other", "convex_hull", "pointer", "5", cpu_steps=1, ms_per_step=1.0)
    rows = (
        RowPlan("Ptr-Net 5→5", "hull-tiny", 5, "ptr 5-50"),
        RowPlan("Other 5→5", "hull-other", 5, "ptr 5-50"),
    )
    plan = TablePlan(
        "tiny",
        "Tiny",
        "convex_hull",
        DecodeOptions("greedy", constraints="none"),
        ("accuracy",),
        (model,),
        rows[:1],
    )
    scale = replace(DRY, steps=2, val_every=1, test_count=5)
    Reproduction(plan, scale, str(tmp_path)).run()  # a finished 2-step run of hull-tiny
    both = replace(plan, models=(model, other), rows=rows)
    report = Reproduction(both, replace(scale, steps=3), str(tmp_path), partial=True).run()
    assert not (tmp_path / "hull-other").exists()  # nothing trained
    ran, empty = report["rows"]
    assert ran["compute"]["steps"] == 2 and ran["compute"]["planned_steps"] == 3
    assert 0 <= ran["metrics"]["accuracy"] <= 1
    assert empty["metrics"] == {} and empty["compute"] == {"trained": False}
    markdown = (tmp_path / "tiny.md").read_text()
    assert "| 2 of 3 |" in markdown and "| not trained |" in markdown
    assert "Partial report: 1 of 2 models have a run" in markdown
    assert "| Other 5→5 | 5 | 92.0% | — |" in markdown
    again = Reproduction(both, replace(scale, steps=3), str(tmp_path), partial=True).run()
    assert again["rows"][0]["metrics"] == ran["metrics"]  # the same run, evaluated again


def test_fail_cells_keep_our_area_and_share_not_simple():

    metrics = ("accuracy", "area_coverage")
    ours = {"accuracy": 0.893, "area_coverage": 0.99741, "non_simple_rate": 0.0112, "fail": True}
    assert _cell(ours, metrics) == "89.3% / FAIL (99.7%; 1.1% not simple)"
    assert _cell({"accuracy": 0.019, "fail": True}, metrics) == "1.9% / FAIL"  # the paper's
    assert _cell({**ours, "fail": False}, metrics) == "89.3% / 99.7%"


def test_partial_report_without_runs_labels_nothing_and_names_no_device(tmp_path):
    """A row without a run gets no test set and no comparators (at the cpu scale about an hour
    of labelling for table2, for rows that show nothing), and a table without any run says so
    instead of printing an empty device name."""
    model = ModelPlan("tsp-tiny", "tsp", "pointer", "5", cpu_steps=1, ms_per_step=1.0)
    plan = TablePlan(
        "tinytsp",
        "Tiny TSP",
        "tsp",
        DecodeOptions("greedy", constraints="task"),
        ("mean_length",),
        (model,),
        (RowPlan("Ptr-Net 6→6", "tsp-tiny", 6, "ptr n"),),
        comparators=("a1", "a2", "a3"),
    )
    report = Reproduction(plan, replace(DRY, test_count=5), str(tmp_path), partial=True).run()
    assert not (tmp_path / "testsets").exists()
    (row,) = report["rows"]
    assert row["test"] is None
    assert row["comparators"] == {"optimal": None, "a1": None, "a2": None, "a3": None}
    markdown = (tmp_path / "tinytsp.md").read_text()
    assert markdown == format_table(report)
    assert "| — | dry-run: 4 steps × 8, hidden 16 | not trained |" in markdown  # test set: —
    assert "device ." not in markdown and "Train time is" not in markdown
    assert "- No model has a run with a checkpoint yet: no train time or device to report." in (
        markdown
    )


def test_a_table_without_any_run_prints_no_empty_device():
    row = {
        "label": "Ptr-Net 5→5",
        "n": 5,
        "paper": {"accuracy": 0.92},
        "metrics": {},
        "test": {"count": 20, "source": "generated"},
        "budget": "cpu: 20,000 steps × 128, hidden 256",
        "compute": {"trained": False},
    }
    report = {
        "title": "Tiny",
        "scale": "cpu",
        "metrics": ["accuracy"],
        "decoding": {"text": "greedy"},
        "test_data": {"seed": 0, "stream": 5},
        "notes": [],
        "rows": [row],
    }
    notes = format_table(report).split("\n\n")[-1]
    assert "device ." not in notes and "device :" not in notes
    assert "- No model has a run with a checkpoint yet: no train time or device to report." in notes


def test_compute_note_names_the_devices_it_knows():

    note = _compute_note(
        [
            {"compute": {"device": "cpu", "processor": "AMD EPYC"}},
            {"compute": {"device": "cuda:0", "processor": ""}},
            {"compute": {"trained": False}},
        ]
    )
    assert "; device cpu: AMD EPYC; cuda:0. Rows marked (reused)" in note
    assert "device not recorded." in _compute_note([{"compute": {"reused": True}}])
    assert _compute_note([{"compute": {"trained": False}}]).startswith("No model has a run")
