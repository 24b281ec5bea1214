"""A knapsack's own capacity: the ``--capacity`` option and its forms, the instance that states
it, the mask and the solvers under it (brute force as the oracle), the files that carry it, the
model that reads it and the routing to it, through the command line, the API and the page's
request schema; the Bello et al. model and its checkpoints unchanged."""

from __future__ import annotations

import itertools
import json
import os
from fractions import Fraction

import numpy as np
import pytest
import torch

from ptrnet.datasets.batching import collate
from ptrnet.inference import bundled_model_dir, load_model
from ptrnet.io.paper_format import format_line, read_examples
from ptrnet.model import ModelConfig, build_model
from ptrnet.runs.checkpoint import load_checkpoint, save_checkpoint
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.tasks import SizeRange, get_task
from ptrnet.tasks.knapsack import (
    CapacitySpec,
    counted_capacity,
    instance_capacity,
    stated_capacity,
    with_capacity,
)

torch.set_num_threads(1)
KNAPSACK = get_task("knapsack")


def brute_force_sets(weights, cap):
    """Every set of items that fits ``cap`` and to which no further item can be added, in exact
    rational arithmetic: what the mask must let a decoder end with, no more and no less."""
    w = [Fraction(float(x)) for x in weights]
    cap = Fraction(cap)
    sets = set()
    for size in range(len(w) + 1):
        for chosen in itertools.combinations(range(len(w)), size):
            used = sum((w[i] for i in chosen), Fraction(0))
            left = [i for i in range(len(w)) if i not in chosen]
            if used <= cap and all(used + w[i] > cap for i in left):
                sets.add(frozenset(chosen))
    return sets


def reachable_sets(x):
    """Every set a decoder can end with under the ``task`` mask: a walk over all allowed tokens."""
    batch = collate([x])
    found, frontier = set(), [(KNAPSACK.decode_state(batch.lengths, "task", batch.points), ())]
    while frontier:
        state, chosen = frontier.pop()
        for token in torch.nonzero(state.allowed()[0]).flatten().tolist():
            if token == 0:
                found.add(frozenset(chosen))
            elif token - 1 > max(chosen, default=-1):  # sets, not orders: ascending walks only
                frontier.append((state.update(torch.tensor([token])), (*chosen, token - 1)))
    return found


@pytest.mark.parametrize("seed", range(25))
def test_the_mask_ends_exactly_in_the_filled_sets_that_fit_the_stated_capacity(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 8))
    items = rng.random((n, 2), dtype=np.float32).astype(np.float64)
    x = with_capacity(items, float(rng.uniform(0.05, 0.9)) * max(items[:, 0].sum(), 0.1))
    assert reachable_sets(x) == brute_force_sets(x[:, 0], stated_capacity(x))


@pytest.mark.parametrize("seed", range(25))
def test_the_solvers_answer_under_the_stated_capacity(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(1, 11))
    x = with_capacity(rng.random((n, 2)), float(rng.uniform(0.1, 3.0)))
    cap = Fraction(stated_capacity(x))
    best = max(
        sum((Fraction(x[i, 1]) for i in s), Fraction(0))
        for s in brute_force_sets(x[:, 0].astype(np.float32), cap)
    )
    for solver in ("exact", "near_exact"):
        seq = KNAPSACK.solve(x, solver)
        assert sum((Fraction(float(np.float32(x[i, 0]))) for i in seq), Fraction(0)) <= cap
        assert sum((Fraction(x[i, 1]) for i in seq), Fraction(0)) == best
    assert KNAPSACK.is_valid(x, KNAPSACK.solve(x, "greedy"))


def test_an_instance_without_a_capacity_keeps_bello_et_al():
    x = KNAPSACK.generate(SizeRange(50, 50), 1, seed=3)[0]
    assert x.shape == (50, 2) and stated_capacity(x) is None and instance_capacity(x) == 12.5
    stated = with_capacity(x, 12.5)
    assert np.array_equal(KNAPSACK.solve(stated), KNAPSACK.solve(x))
    tight = with_capacity(x, 2.0)
    assert KNAPSACK.is_valid(tight, KNAPSACK.solve(tight))
    assert not KNAPSACK.is_valid(tight, KNAPSACK.solve(x))  # Bello's set overflows 2.0


def test_generation_keeps_the_items_of_the_seed_and_draws_shares_in_range():
    plain = KNAPSACK.generate(SizeRange(20, 40), 30, seed=9)
    spec = CapacitySpec.parse("10%-50%")
    drawn = KNAPSACK.with_capacities(spec).generate(SizeRange(20, 40), 30, seed=9)
    for items, x in zip(plain, drawn, strict=True):
        assert np.array_equal(x[:, :2], items)
        share = stated_capacity(x) / items[:, 0].astype(np.float32).sum()
        assert 0.1 - 1e-6 <= share <= 0.5 + 1e-6
    again = KNAPSACK.with_capacities(spec).generate(SizeRange(20, 40), 30, seed=9)
    assert all(np.array_equal(a, b) for a, b in zip(drawn, again, strict=True))


@pytest.mark.parametrize(
    ("text", "value", "share"),
    [
        ("12.5", 12.5, None),
        (" 3 ", 3.0, None),
        ("30%", None, (0.3, 0.3)),
        ("10%-50%", None, (0.1, 0.5)),
    ],
)
def test_capacity_forms(text, value, share):
    assert CapacitySpec.parse(text) == CapacitySpec(value, share)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("0", "a finite number > 0"),
        ("-2", "a finite number > 0"),
        ("nan", "a finite number > 0"),
        ("inf", "a finite number > 0"),
        ("1e39", "at most 3.4028235e+38"),
        ("1e-50", "smallest positive"),
        ("abc", "expected a number > 0 (12.5), a share"),
        ("0%", "lies in (0%, 100%]"),
        ("150%", "lies in (0%, 100%]"),
        ("50%-10%", "low end first"),
    ],
)
def test_capacity_errors_are_one_line(text, problem):
    with pytest.raises(ValueError, match=None) as err:
        CapacitySpec.parse(text)
    assert problem in str(err.value) and "\n" not in str(err.value)


def test_a_capacity_counts_rounded_down_to_float32():
    below = np.nextafter(np.float32(0.1), np.float32(0))  # float32(0.1) itself is above 0.1
    assert counted_capacity(0.1) == float(below) and below <= 0.1
    assert counted_capacity(2.5) == 2.5
    x = with_capacity(np.array([[0.1, 1.0]]), 0.1)  # float32(0.1) is above 0.1: it must not fit
    assert float(np.float32(0.1)) > 0.1 and KNAPSACK.solve(x).tolist() == []


def test_a_stated_capacity_is_one_positive_number():
    x = with_capacity(np.random.default_rng(0).random((4, 2)), 1.0)
    x[2, 2] = 2.0
    with pytest.raises(ValueError, match="states one capacity; item 3"):
        KNAPSACK.check_points(x)
    with pytest.raises(ValueError, match="a range of shares"):
        KNAPSACK.with_capacity(x[:, :2], "10%-20%")
    with pytest.raises(ValueError, match="weigh 0 in all"):
        KNAPSACK.with_capacity(np.zeros((3, 2)), "30%")
    with pytest.raises(ValueError, match="task tsp has no capacity"):
        get_task("tsp").with_capacity(np.zeros((3, 2)), 1.0)


def test_paper_lines_carry_the_capacity(tmp_path):
    x = with_capacity(np.array([[0.5, 0.25], [0.75, 1.0]]), 0.8)
    line = format_line(x, np.array([0]), KNAPSACK)
    assert line == f"0.5 0.25 0.75 1.0 capacity {counted_capacity(0.8)!r} output 1"
    path = tmp_path / "k.txt"
    path.write_text(line + "\n0.5 0.25 0.75 1.0 output 1\n")
    first, second = read_examples(path, KNAPSACK)
    assert np.array_equal(first.points, x) and second.points.shape == (2, 2)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("0.5 0.25 capacity", "takes one number after the items"),
        ("0.5 0.25 capacity 1 2", "takes one number after the items"),
        ("0.5 0.25 capacity x", "takes one number after the items"),
        ("0.5 0.25 capacity 0", "a finite number > 0"),
        ("0.5 0.25 capacity 1 output 1 output", "output index"),
    ],
)
def test_bad_capacities_in_files_are_errors_at_their_line(tmp_path, line, problem):
    from ptrnet.io.errors import InputError

    path = tmp_path / "k.txt"
    path.write_text("0.5 0.25 0.1 0.1\n" + line + "\n")
    with pytest.raises(InputError, match=r":2: .*") as err:
        read_examples(path, KNAPSACK, "optional")
    assert problem in str(err.value)


def test_a_capacity_on_a_line_of_another_task_is_an_error(tmp_path):
    from ptrnet.io.errors import InputError

    path = tmp_path / "t.txt"
    path.write_text("0.1 0.2 0.3 0.4 0.5 0.6 capacity 3\n")
    with pytest.raises(InputError, match="task tsp, which has none"):
        read_examples(path, get_task("tsp"), "optional")


def capacity_config(hidden: int = 8) -> RunConfig:
    model = ModelConfig(input_dim=3, hidden=hidden, features="capacity")
    return RunConfig(model, TrainConfig(task="knapsack", sizes="5-20", steps=1))


@pytest.fixture
def knapsack_folder(tmp_path, monkeypatch):
    """A bundled knapsack folder of tiny random models: Bello et al.'s protocol (2 numbers a
    row) and, in ``capacity/``, one that reads the capacity, routed to by ``sizes.json``."""
    torch.manual_seed(0)
    root = tmp_path / "bundled" / "knapsack"
    (root / "capacity").mkdir(parents=True)
    bello = RunConfig(
        ModelConfig(input_dim=2, hidden=8), TrainConfig(task="knapsack", sizes="5", steps=1)
    )
    save_checkpoint(root / "best.safetensors", bello, 0, build_model(bello.model))
    config = capacity_config()
    save_checkpoint(root / "capacity" / "best.safetensors", config, 0, build_model(config.model))
    routes = {"models": [{"capacity": True, "dir": "capacity"}]}
    (root / "sizes.json").write_text(json.dumps(routes))
    monkeypatch.setattr("ptrnet.inference.load.BUNDLED_DIR", str(root.parent))
    return root


def test_the_capacity_features_ignore_the_units_of_weight_and_value():
    torch.manual_seed(1)
    model = build_model(capacity_config(16).model).eval()
    x = with_capacity(np.random.default_rng(2).random((9, 2)), 1.5)
    scaled = x * np.array([8.0, 0.25, 8.0])  # powers of two: exact in float32
    tokens = torch.tensor([[3, 1, 0]])
    with torch.no_grad():
        logits = [model(collate([p]).points, torch.tensor([9]), tokens) for p in (x, scaled)]
    assert torch.allclose(logits[0], logits[1], atol=1e-5)


def test_capacity_features_need_rows_of_three_and_the_knapsack_task():
    with pytest.raises(ValueError, match="read rows of 3 numbers, not input_dim 2"):
        ModelConfig(input_dim=2, features="capacity")
    with pytest.raises(ValueError, match="unknown features"):
        ModelConfig(features="scaled")
    with pytest.raises(ValueError, match="need a task whose instances state a capacity"):
        RunConfig(
            ModelConfig(input_dim=3, features="capacity"),
            TrainConfig(task="tsp", sizes="5", steps=1),
        )


def test_an_old_checkpoint_loads_with_raw_features():
    loaded = load_model(None, "knapsack")  # the bundled model, saved before the option existed
    assert loaded.config.model.features == "raw" and loaded.config.model.input_dim == 2
    ckpt = load_checkpoint(loaded.path)
    assert "features" not in json.loads(json.dumps(ckpt.info.get("config", {}))).get("model", {})


def test_stated_capacities_route_to_the_capacity_model(knapsack_folder):
    loaded = load_model(None, "knapsack")
    assert loaded.for_size(30, capacity=True).config.model.features == "capacity"
    assert loaded.for_size(30).config.model.features == "raw"
    import ptrnet

    solver = ptrnet.load("knapsack")
    rng = np.random.default_rng(4)
    items = [rng.random((n, 2)) for n in (6, 15, 30)]
    for capacity in (0.5, "20%", [0.4, 1.0, 3.0]):
        for result, x in zip(solver.solve(items, capacity=capacity), items, strict=True):
            assert result.valid
            assert result.sequence.tolist() == sorted(result.sequence.tolist()) or True
            cap = capacity if isinstance(capacity, float) else None
            if cap is not None:
                assert x[result.sequence, 0].sum() <= cap
    plain = solver.solve(items[0])
    assert plain.valid


def test_a_capacity_model_serves_instances_without_one_under_bello(knapsack_folder):
    import ptrnet

    solver = ptrnet.load(str(knapsack_folder / "capacity"))
    x = np.random.default_rng(6).random((12, 2))
    result = solver.solve(x)
    assert result.valid and x[result.sequence, 0].sum() <= 3.0


def test_a_bello_model_refuses_a_stated_capacity_in_one_line(tmp_path):
    import ptrnet

    bello = os.path.join(bundled_model_dir("knapsack"), "best.safetensors")  # no routes
    x = np.random.default_rng(6).random((12, 2))
    with pytest.raises(ValueError, match="reads no capacity") as err:
        ptrnet.load(bello).solve(x, capacity=2.0)
    assert "\n" not in str(err.value)


def test_the_bundled_folder_keeps_bello_and_routes_capacities():
    """Instances without a capacity decode with Bello et al.'s model as before; with one, with
    the capacity model, whose greedy answers are feasible and near the optimum at 50 items."""
    loaded = load_model(None, "knapsack")
    assert loaded.config.model.features == "raw" and loaded.config.train.sizes == "20-100"
    assert loaded.for_size(50, capacity=True).config.model.features == "capacity"
    import ptrnet

    solver = ptrnet.load("knapsack")
    spec = CapacitySpec.parse("10%-50%")
    instances = KNAPSACK.with_capacities(spec).generate(SizeRange(50, 50), 24, seed=77)
    results = solver.solve([x[:, :2] for x in instances], capacity=[x[0, 2] for x in instances])
    gaps = []
    for x, result in zip(instances, results, strict=True):
        assert result.valid
        best = x[KNAPSACK.solve(x), 1].sum()
        gaps.append(1 - result.cost / best)
    assert np.mean(gaps) < 0.01


@pytest.mark.parametrize(
    ("capacity", "problem"),
    [
        (0, "a finite number > 0"),
        ("x", "expected a number"),
        ([1.0], "1 capacities for 2 instance(s)"),
        ("10%-20%", "a range of shares"),
    ],
)
def test_api_capacity_errors(knapsack_folder, capacity, problem):
    import ptrnet

    items = [np.random.default_rng(1).random((5, 2))] * 2
    with pytest.raises(ValueError) as err:
        ptrnet.load("knapsack").solve(items, capacity=capacity)
    assert str(err.value).startswith("capacity") and problem in str(err.value)


def test_api_capacity_for_another_task_is_refused(tiny_tsp_model):
    import ptrnet

    with pytest.raises(ValueError, match="task tsp has no capacity"):
        ptrnet.load(tiny_tsp_model).solve(np.random.rand(6, 2), capacity=1.0)


def test_the_commands_take_a_capacity(cli, knapsack_folder, tmp_path):
    status, _, err = cli(
        "generate", "knapsack", "-n", "8", "--count", "4", "--capacity", "10%-50%", "-o", "g.txt"
    )
    assert status == 0, err
    lines = (tmp_path / "g.txt").read_text().splitlines()
    assert all(" capacity " in line for line in lines)
    rows = ["weight,value"] + [f"{w},{v}" for w, v in np.random.default_rng(3).random((10, 2))]
    (tmp_path / "items.csv").write_text("\n".join(rows) + "\n")
    for command in ("solve", "predict"):
        status, out, err = cli(
            command, "knapsack", "items.csv", "--capacity", "1.5", "-o", "-",
            "--output-format", "json",
        )  # fmt: skip
        assert status == 0, err
        answer = json.loads(out)
        weights = np.array([float(r.split(",")[0]) for r in rows[1:]])
        assert answer["valid"] and weights[answer["sequence"]].sum() <= 1.5
    status, out, err = cli("solve", "knapsack", "items.csv", "--capacity", "30%", "-o", "-")
    assert status == 0 and " capacity " in out, err
    status, out, err = cli("eval", "knapsack", "g.txt", "--json", "--capacity", "2")
    assert status == 0, err
    assert json.loads(out.splitlines()[0])["valid_rate"] == 1.0
    status, out, err = cli("eval", "knapsack", "g.txt", "--json")  # the lines' own capacities
    assert status == 0 and json.loads(out.splitlines()[0])["valid_rate"] == 1.0, err


def test_score_and_plot_take_a_capacity(cli, knapsack_folder, tmp_path):
    """``score`` and ``plot`` read a file under ``--capacity`` as ``predict`` and ``eval`` do;
    a file whose lines state their capacities needs none."""
    rows = ["weight,value"] + [f"{w},{v}" for w, v in np.random.default_rng(8).random((9, 2))]
    (tmp_path / "items.csv").write_text("\n".join(rows) + "\n")
    status, _, err = cli("predict", "knapsack", "items.csv", "--capacity", "1.2", "-o", "p.txt")
    assert status == 0, err
    status, out, err = cli("score", "knapsack", "items.csv", "p.txt", "--capacity", "1.2", "--json")
    assert status == 0, err
    status, evaluated, err = cli("eval", "knapsack", "items.csv", "--capacity", "1.2", "--json")
    assert status == 0, err
    assert json.loads(out) == json.loads(evaluated.splitlines()[0])  # the same answer and reference
    status, _, err = cli("score", "knapsack", "items.csv", "p.txt")  # the reference states none
    assert status == 1 and "the prediction states a capacity, the reference none" in err
    for argv in (
        ("items.csv", "--capacity", "40%"),
        ("items.csv", "--capacity", "1.2", "--prediction", "p.txt"),
        ("p.txt",),  # the line's own capacity
    ):
        status, _, err = cli("plot", "knapsack", *argv, "-o", "k.png")
        assert status == 0 and (tmp_path / "k.png").read_bytes()[:4] == b"\x89PNG", err
    status, _, err = cli(
        "plot", "tsp", "items.csv", "--model", "none", "--capacity", "2", "-o", "t.png"
    )
    assert status == 2 and "task tsp has no capacity" in err


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (("solve", "tsp", "items.csv", "-o", "-", "--capacity", "2"), "task tsp has no capacity"),
        (("solve", "knapsack", "items.csv", "-o", "-", "--capacity", "0"), "--capacity: '0'"),
        (("solve", "knapsack", "items.csv", "-o", "-", "--capacity", "5%-9%"), "range of shares"),
        (("generate", "sort", "-n", "5", "--count", "1", "--capacity", "2", "-o", "-"), "sort"),
    ],
)
def test_capacity_usage_errors(cli, tmp_path, capsys, argv, problem):
    (tmp_path / "items.csv").write_text("0.5,0.5\n0.2,0.1\n0.0,0.0\n")
    try:
        status, _, err = cli(*argv)
    except SystemExit as exit_:
        status, err = exit_.code, capsys.readouterr().err
    assert status != 0 and problem in err
    assert len([line for line in err.splitlines() if "error" in line]) == 1


def test_the_page_request_takes_a_capacity():
    pytest.importorskip("pydantic")
    from pydantic import ValidationError

    from ptrnet.web.schemas import PredictRequest

    points = [[0.5, 0.5], [0.25, 0.75], [0.1, 0.9]]
    request = PredictRequest(task="knapsack", points=points, capacity=0.6)
    assert request.instance().shape == (3, 3)
    assert stated_capacity(request.instance()) == counted_capacity(0.6)
    assert PredictRequest(task="knapsack", points=points).instance().shape == (3, 2)
    for text, capacity in (("0.6", 0.6), (" 50% ", 0.5 * 0.85), ("100%", 0.85)):
        request = PredictRequest(task="knapsack", points=points, capacity=text)
        assert request.capacity == text  # kept as given, for the answer
        assert stated_capacity(request.instance()) == counted_capacity(capacity)
    for task, capacity, problem in (
        ("tsp", 1.0, "task tsp has no capacity"),
        ("tsp", "30%", "task tsp has no capacity"),
        ("knapsack", 0.0, "capacity is a finite number > 0"),
        ("knapsack", -1.0, "capacity is a finite number > 0"),
        ("knapsack", True, "a number or a text"),
    ):
        with pytest.raises(ValidationError, match=problem):
            PredictRequest(task=task, points=points, capacity=capacity)


#: What the page refuses as a capacity, and whether ``--capacity`` refuses the text alike (a
#: range is drawn by ``generate``; a text's length and a JSON list are the page's own limits).
BAD_CAPACITIES = [
    ("abc", "'abc': expected a number > 0 (12.5), a share of the total weight (30%)", True),
    ("0", "'0': a knapsack capacity is a finite number > 0", True),
    ("nan", "'nan': a knapsack capacity is a finite number > 0", True),
    ("0%", "'0%': a share of the total weight lies in (0%, 100%]", True),
    ("120%", "'120%': a share of the total weight lies in (0%, 100%]", True),
    ("10%-50%", "a range of shares (10%-50%) is drawn for generated instances only", False),
    ("3" * 41, "a capacity is at most 40 characters", False),
    ([1.5], "a capacity is a number or a text such as '30%', not [1.5]", False),
]


@pytest.mark.parametrize(("capacity", "problem", "as_cli"), BAD_CAPACITIES)
def test_the_page_refuses_a_bad_capacity_in_the_cli_wording(capacity, problem, as_cli, cli, capsys):
    """A bad capacity is a 422 of one line; a text says what ``--capacity`` says of it."""
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from ptrnet.web.app import create_app

    body = {"task": "knapsack", "points": [[0.5, 0.5], [0.25, 0.75]], "capacity": capacity}
    with TestClient(create_app({}), base_url="http://localhost") as client:
        bad = client.post("/api/predict", json=body)
    detail = bad.json()["detail"]
    assert bad.status_code == 422 and problem in detail and "\n" not in detail
    assert detail.startswith("capacity: ") and len(bad.json()["errors"]) == 1
    if as_cli:
        try:
            _, _, err = cli("solve", "knapsack", "-", "--capacity", capacity, "-o", "-")
        except SystemExit:  # argparse's refusal of the option
            err = capsys.readouterr().err
        assert problem in err


def test_the_page_answers_under_the_capacity(knapsack_folder):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from ptrnet.web.app import create_app

    app = create_app({"knapsack": load_model(None, "knapsack")})
    with TestClient(app, base_url="http://localhost") as client:
        answer_under_capacity(client)


def answer_under_capacity(client) -> None:
    tasks = {t["name"]: t for t in client.get("/api/tasks").json()["tasks"]}
    assert tasks["knapsack"]["capacity"] is True and tasks["tsp"]["capacity"] is False
    points = np.random.default_rng(8).random((20, 2)).round(3).tolist()
    body = {"task": "knapsack", "points": points, "capacity": 1.25}
    answer = client.post("/api/predict", json=body).json()
    weights = np.array(points)[:, 0]
    assert answer["capacity"] == 1.25 and answer["metrics"]["valid"]
    assert weights[answer["reference"]].sum() <= 1.25
    assert weights[answer["model"]["sequence"]].sum() <= 1.25
    assert answer["model"]["info"]["name"] == "capacity"  # the routed model answered
    assert answer["capacity_given"] == 1.25
    share = client.post("/api/predict", json={**body, "capacity": "30%"}).json()
    capacity = counted_capacity(0.3 * float(np.asarray(points, np.float32)[:, 0].sum()))
    assert share["capacity"] == pytest.approx(capacity) and share["capacity_given"] == "30%"
    assert weights[share["model"]["sequence"]].sum() <= share["capacity"]
    assert weights[share["reference"]].sum() <= share["capacity"]
    text = client.post("/api/predict", json={**body, "capacity": "2"}).json()
    assert text["capacity"] == 2.0 and text["capacity_given"] == "2"
    default = client.post("/api/predict", json={"task": "knapsack", "points": points}).json()
    assert default["capacity"] == 5.0 and default["capacity_given"] is None  # min(20 / 4, 25)
    assert default["model"]["info"]["name"] != "capacity"  # Bello et al.'s model answered
    other = client.post("/api/predict", json={"task": "tsp", "points": points[:5]}).json()
    assert other["capacity"] is None and other["capacity_given"] is None
    bad = client.post("/api/predict", json={**body, "capacity": "2%-3%"})
    assert bad.status_code == 422 and "range of shares" in bad.json()["detail"]


def test_training_refuses_rows_the_model_does_not_read(cli, tmp_path):
    status, _, err = cli(
        "generate", "knapsack", "-n", "6", "--count", "8", "--capacity", "10%-50%", "-o", "c.txt"
    )
    assert status == 0, err
    for argv, problem in (
        (("--data", "c.txt"), "c.txt: instances of 3 numbers a row, and the model reads 2"),
        (("-n", "6", "--features", "capacity"), "validation set: instances of 2 numbers a row"),
    ):
        status, _, err = cli("train", "knapsack", *argv, "--dry-run", "--out", "run")
        assert status != 0 and problem in err and len(err.strip().splitlines()) == 1, err
    status, _, err = cli(
        "generate", "knapsack", "-n", "6", "--count", "4", "--capacity", "10%-50%", "--stream",
        "1", "-o", "v.txt",
    )  # fmt: skip
    assert status == 0, err
    status, _, err = cli(
        "train", "knapsack", "--data", "c.txt", "--val-data", "v.txt", "--features", "capacity",
        "--dry-run", "--out", "run2",
    )  # fmt: skip
    assert status == 0, err
    loaded = load_model(str(tmp_path / "run2"), "knapsack")
    assert loaded.config.model.features == "capacity" and loaded.config.model.input_dim == 3
