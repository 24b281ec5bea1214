"""Smoke tests of ``ptrnet train``, ``eval`` and ``predict`` (dry-run presets, end to end)."""

import json

import pytest
import torch

from ptrnet.cli.main import main
from ptrnet.decoding.options import DecodeOptions, several_ways
from ptrnet.decoding.strategies import taking
from ptrnet.io.paper_format import read_examples
from ptrnet.runs.csvlog import read_log
from ptrnet.tasks import POINT_TASKS, get_task

# The tasks whose cost is their objective, which a pick may rank by (the error lists them).
COSTED = " or ".join(n for n, task in POINT_TASKS.items() if task.objective_cost)
# The strategies that read a beam width, and those that draw several samples, by name and title.
BEAM_WIDTH_USERS = " or ".join(card.name for card in taking("beam_width"))
SAMPLERS = " or ".join(card.title for card in taking("samples"))

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Labelled test files (5-6 points) per task, made with ``ptrnet generate``."""
    root = tmp_path_factory.mktemp("data")
    files = {}
    for task in ("sort", "convex_hull", "tsp"):
        files[task] = root / f"{task}.txt"
        args = ["generate", task, "-n", "5-6", "--count", "20", "--seed", "7", "--stream", "9"]
        assert main([*args, "--workers", "1", "-q", "-o", str(files[task])]) == 0
    return files


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A dry-run model per task."""
    root = tmp_path_factory.mktemp("runs")
    for task in ("sort", "convex_hull", "tsp"):
        assert (
            main(["train", task, "--dry-run", "--threads", "1", "-q", "--out", str(root / task)])
            == 0
        )
    return root


def test_train_dry_run_writes_a_complete_run(runs, capsys):
    run = runs / "tsp"
    names = {"config.json", "log.csv", "last.safetensors", "best.safetensors", "best.json"}
    assert names <= {p.name for p in run.iterdir()}
    config = json.loads((run / "config.json").read_text())
    assert config["model"]["hidden"] == 16 and config["train"]["steps"] == 4
    rows = read_log(run / "log.csv")
    assert [r["step"] for r in rows] == ["1", "2", "3", "4"]
    assert rows[1]["val_mean_length"] and rows[1]["val_tf_loss"] and not rows[0]["val_tf_loss"]
    assert json.loads((run / "best.json").read_text())["metric"] == "mean_gap"


def test_train_dry_run_without_out_uses_a_temporary_directory(capsys):
    assert main(["train", "sort", "--dry-run", "--steps", "2", "--threads", "1", "-q"]) == 0
    assert "ptrnet-dry-run-" in capsys.readouterr().out


def test_resume_extends_a_run(runs, capsys):
    assert (
        main(["train", "sort", "--resume", "--steps", "6", "-q", "--out", str(runs / "sort")]) == 0
    )
    assert "sort: 6 steps" in capsys.readouterr().out


@pytest.mark.parametrize("task", ["sort", "convex_hull", "tsp"])
def test_eval_prints_the_score_keys(runs, data, task, capsys):
    assert (
        main(["eval", task, str(data[task]), "--model", str(runs / task), "--json", "--dry-run"])
        == 0
    )
    metrics = json.loads(capsys.readouterr().out)
    assert list(metrics) == [*get_task(task).metric_keys, "count"]
    assert metrics["count"] == 16


@pytest.mark.parametrize("decode", ["greedy", "beam", "sample", "multistart"])
def test_predict_then_score_round_trip(runs, data, tmp_path, decode, capsys):
    pred = tmp_path / "pred.txt"
    width = ["--beam-width", "3"] if decode == "beam" else []
    how = ["--multistart"] if decode == "multistart" else ["--decode", decode]
    args = [
        "predict",
        "tsp",
        str(data["tsp"]),
        "-o",
        str(pred),
        "--model",
        str(runs / "tsp"),
        *how,
        *width,
        "-q",
    ]
    assert main(args) == 0
    assert len(read_examples(pred, get_task("tsp"), "prediction")) == 20
    assert main(["score", "tsp", str(data["tsp"]), str(pred), "--json"]) == 0
    scored = json.loads(capsys.readouterr().out)
    assert (
        main(
            [
                "eval",
                "tsp",
                str(data["tsp"]),
                "--model",
                str(runs / "tsp"),
                *how,
                *width,
                "--json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out) == scored  # eval = predict + score
    assert scored["valid_rate"] == 1.0  # TSP decodes with task constraints by default


def test_predict_reads_plain_point_lists(runs, tmp_path):
    plain = tmp_path / "points.txt"
    plain.write_text("0.1 0.5 0.3 0.2 0.9\n0.4 0.8 0.7 0.6 0.2 0.05\n")
    pred = tmp_path / "pred.txt"
    assert (
        main(
            [
                "predict",
                "sort",
                str(plain),
                "-o",
                str(pred),
                "--model",
                str(runs / "sort" / "best.safetensors"),
                "-q",
            ]
        )
        == 0
    )
    preds = read_examples(pred, get_task("sort"), "prediction")
    assert [sorted(e.seq.tolist()) for e in preds] == [list(range(5)), list(range(6))]


def error_of(args, capsys):
    status = main(args)
    err = capsys.readouterr().err
    assert status != 0
    assert err.startswith("ptrnet: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


def test_pick_shortest_never_returns_a_longer_tour_than_the_most_likely_beam():
    """The most likely beam is among those ``shortest`` chooses from, so per instance its tour
    can only be as long or shorter (the bundled TSP model, 40 fresh instances of n = 10)."""
    from ptrnet.inference import load_model, predict
    from ptrnet.solvers.tsp import tour_length
    from ptrnet.tasks import SizeRange

    task = get_task("tsp")
    loaded, points = load_model(None, task), task.generate(SizeRange(10, 10), 40, seed=3)
    lengths = {}
    for pick in ("likely", "shortest"):
        tours = predict(loaded, task, points, DecodeOptions("beam", pick=pick))
        lengths[pick] = [tour_length(p, t) for p, t in zip(points, tours, strict=True)]
    pairs = zip(lengths["shortest"], lengths["likely"], strict=True)
    assert all(short <= likely + 1e-12 for short, likely in pairs)
    assert sum(lengths["shortest"]) < sum(lengths["likely"])  # beams differ on some instance


def test_errors_are_one_line(runs, data, tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text("0.1 0.2 0.3 output 1 2 x\n")
    cases = [
        (
            ["eval", "sort", str(data["sort"]), "--model", str(tmp_path / "none")],
            "no such model directory",
        ),
        (["eval", "sort", str(data["sort"]), "--model", str(tmp_path)], "no checkpoint in"),
        (
            ["eval", "tsp", str(data["tsp"]), "--model", str(runs / "sort")],
            "trained on sort, not tsp",
        ),
        (["eval", "sort", str(bad), "--model", str(runs / "sort")], "bad.txt:1:"),
        (
            [
                "predict",
                "sort",
                str(tmp_path / "missing.txt"),
                "-o",
                str(tmp_path / "o.txt"),
                "--model",
                str(runs / "sort"),
            ],
            "missing.txt",
        ),
        (["eval", "sort", str(data["sort"]), "--model", str(bad)], "not a ptrnet checkpoint"),
        (
            ["eval", "tsp", str(data["tsp"]), "--model", str(runs / "tsp"), "--pick", "shortest"],
            "--pick shortest: pick 'shortest' needs several candidates to choose from "
            f"({several_ways()})",
        ),
        (
            ["eval", "tsp", str(data["tsp"]), "--model", str(runs / "tsp"), "--beam-width", "3"],
            f"--beam-width 3: a beam width needs --decode {BEAM_WIDTH_USERS}, not greedy",
        ),
        (
            ["eval", "sort", str(data["sort"]), "--decode", "beam", "--pick", "shortest"],
            "--pick shortest: pick 'shortest' ranks candidates by a cost, which sort has not "
            f"(only {COSTED})",
        ),
        (
            ["train", "sort", "-n", "5", "--lr", "-1", "--out", str(tmp_path / "r")],
            "lr must be a positive number",
        ),
        (["train", "no_such_task", "-n", "5", "--out", str(tmp_path / "r")], "unknown task"),
        (
            ["eval", "tsp", str(data["tsp"]), "--samples", "3"],
            f"--samples 3: samples > 1 needs {SAMPLERS}, not greedy decoding",
        ),
        (
            ["train", "tsp", "-n", "5", "--encoder", "transformer", "--heads", "3", "--out", "r"],
            "hidden 256 must divide by heads 3",
        ),
        (["train", "convex_hull", "-n", "2", "--out", str(tmp_path / "r")], "needs n >= 3"),
        (["train", "sort", "--out", str(tmp_path / "r")], "-n/--sizes is required"),
        (["train", "sort", "-n", "5"], "--out RUN_DIR is required"),
        (
            [
                "train",
                "sort",
                "-n",
                "5",
                "--data",
                str(bad),
                "--steps",
                "1",
                "--out",
                str(tmp_path / "r"),
            ],
            "bad.txt:1:",
        ),
        (
            ["train", "sort", "--resume", "--lr", "0.1", "--out", str(runs / "sort")],
            "cannot change lr from 0.001 to 0.1 when resuming",
        ),
        (["train", "tsp", "--resume", "--out", str(runs / "sort")], "trains sort, not tsp"),
    ]
    for args, message in cases:
        assert message in error_of(args, capsys)


def test_train_init_from_fine_tunes_with_the_constrained_loss(runs, tmp_path, capsys):
    out = tmp_path / "tuned"
    args = ["train", "tsp", "--dry-run", "--threads", "1", "-q", "--out", str(out)]
    init = ["--init-from", str(runs / "tsp"), "--train-constraints", "task"]
    assert main([*args, *init, "--augment"]) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["train"]["init_from"] == str(runs / "tsp" / "best.safetensors")
    assert config["train"]["train_constraints"] == "task"
    assert config["train"]["augment"] is True
    assert config["model"] == json.loads((runs / "tsp" / "config.json").read_text())["model"]
    capsys.readouterr()
    assert "drop hidden" in error_of(
        [*args[:-1], str(tmp_path / "x"), *init, "--hidden", "8"], capsys
    )
    wrong = ["train", "sort", "--dry-run", "-q", "--init-from", str(runs / "tsp")]
    assert "was trained on tsp, not sort" in error_of(wrong, capsys)
    resume = [
        "train",
        "tsp",
        "--resume",
        "-q",
        "--out",
        str(out),
        "--init-from",
        str(runs / "sort"),
    ]
    assert "cannot change --init-from from " in error_of(resume, capsys)


def test_train_reinforce_fine_tunes_tsp_and_refuses_other_tasks(runs, tmp_path, capsys):
    out = tmp_path / "rl"
    args = ["train", "tsp", "--dry-run", "--threads", "1", "-q", "--out", str(out)]
    rl = ["--init-from", str(runs / "tsp"), "--objective", "reinforce", "--rl-samples", "3"]
    assert main([*args, *rl]) == 0
    train_cfg = json.loads((out / "config.json").read_text())["train"]
    assert (train_cfg["objective"], train_cfg["rl_samples"]) == ("reinforce", 3)
    rows = [line.split(",") for line in (out / "log.csv").read_text().splitlines()[1:]]
    assert all(2.0 < float(row[1]) < 10.0 for row in rows)  # mean sampled tour length, n 5-6
    capsys.readouterr()
    delaunay = ["train", "delaunay", "--dry-run", "-q", "--objective", "reinforce"]
    costed = ", ".join(name for name, task in POINT_TASKS.items() if task.has_cost)
    assert f"needs a task with a cost ({costed}); delaunay has none" in error_of(delaunay, capsys)
    few = [*args[:-1], str(tmp_path / "x"), "--objective", "reinforce", "--rl-samples", "1"]
    assert "rl_samples must be at least 2" in error_of(few, capsys)


def test_options_whose_default_is_off_take_an_explicit_zero(tmp_path, capsys):
    off = ["--warmup", "0", "--keep-every", "0", "--label-steps", "0"]
    argv = ["train", "sort", "--dry-run", "--threads", "1", "--out", str(tmp_path / "r"), "-q"]
    assert main([*argv, *off]) == 0
    config = json.loads((tmp_path / "r" / "config.json").read_text())["train"]
    assert (config["warmup"], config["keep_every"], config["label_steps"]) == (0, 0, 0)
    assert main(["train", "sort", "--dry-run", "--warmup", "-1"]) == 2
    assert "expected 0 (off) or a positive integer, got '-1'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--rl-samples", "4"], "--rl-samples applies only with --objective reinforce"),
        (["--baseline", "rollout"], "--baseline applies only with --objective reinforce"),
        (["--heads", "4"], "--heads applies only with --encoder transformer or --decoder heavy"),
        (["--decoder-layers", "2"], "--decoder-layers applies only with --decoder heavy"),
        (["--encoder-layers", "2"], "--encoder-layers applies only with --encoder transformer"),
    ],
)
def test_options_the_run_would_ignore_are_refused(options, message, capsys):
    assert main(["train", "sort", "-n", "5", "--dry-run", "--threads", "1", *options]) == 2
    assert message in capsys.readouterr().err


def test_an_interrupted_run_says_what_it_keeps(tmp_path):
    from ptrnet.cli.interrupts import interrupted_note

    assert "nothing of" in interrupted_note("sort", str(tmp_path))
    (tmp_path / "last.safetensors").write_bytes(b"")
    note = interrupted_note("sort", str(tmp_path))
    assert f"ptrnet train sort --resume --out {tmp_path} continues" in note


def test_predict_gives_valid_hulls_by_default_and_eval_compares_with_the_papers_protocol(
    tmp_path, capsys
):
    """The bundled hull model: ``predict``'s hulls are all closed simple polygons; ``eval``
    decodes as the paper did by default (some polygons not simple), ``--protocol valid`` as
    ``predict`` does."""
    from ptrnet.tasks.convex_hull import simple_polygon_area

    data, out = tmp_path / "hull.txt", tmp_path / "p.txt"
    assert main(["generate", "convex_hull", "-n", "30", "--count", "150", "-o", str(data)]) == 0
    assert main(["predict", "convex_hull", str(data), "-o", str(out), "-q"]) == 0
    examples = read_examples(out, get_task("convex_hull"))
    assert all(simple_polygon_area(e.points, e.seq) is not None for e in examples)
    capsys.readouterr()
    for protocol, simple in (([], False), (["--protocol", "valid"], True)):
        assert main(["eval", "convex_hull", str(data), "--json", *protocol]) == 0
        metrics = json.loads(capsys.readouterr().out)
        assert (metrics["non_simple_rate"] == 0) == simple, protocol
