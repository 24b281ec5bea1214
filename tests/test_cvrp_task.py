"""The CVRP task (ptrnet/tasks/cvrp.py): its rule against a plain-Python one along walks and
labels, its own decoding state through beams, costs and metrics by hand, its answers' form, and
every command, the API and the page's endpoints on it."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from ptrnet.solvers import cvrp as solver
from ptrnet.tasks import DegenerateInstanceError, SizeRange, get_task, to_tokens
from ptrnet.tasks.constraints import replay_masks, teacher_forcing_mask
from ptrnet.tasks.cvrp import instance_rows

pytest.importorskip("pyvrp")  # a core dependency where Python >= 3.11
torch.set_num_threads(1)
CVRP = get_task("cvrp")


def rule(points: np.ndarray, prefix: list[int]) -> set[int]:
    """The legal next tokens after ``prefix`` (0-based indices), in plain Python: a customer
    not served whose demand fits the load left since the last depot visit, the depot (token 1)
    unless at it, the end (0) once all are served."""
    demands, capacity = points[:, 2], points[0, 3]
    served = {i for i in prefix if i}
    since = prefix[len(prefix) - prefix[::-1].index(0) :] if 0 in prefix else prefix
    load = capacity - sum(demands[i] for i in since)
    left = [i for i in range(1, len(points)) if i not in served]
    if not left:
        return {0}
    allowed = {i + 1 for i in left if demands[i] <= load}
    if prefix and prefix[-1] != 0:
        allowed.add(1)
    return allowed


def instances(seed: int, count: int, n: int) -> list[np.ndarray]:
    return CVRP.generate(SizeRange(n, n), count, seed)


@pytest.mark.parametrize("seed", range(6))
def test_the_mask_is_the_plain_rule_along_random_walks_and_walks_end_valid(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 12))
    points = CVRP.sample_points(rng, n)
    points[:, 3] = int(rng.integers(9, 20))  # tight: many routes
    state = CVRP.decode_state(torch.tensor([n + 1]), "task", torch.tensor(points)[None])
    prefix: list[int] = []
    while True:
        allowed = set(np.flatnonzero(state.allowed()[0].numpy()).tolist())
        assert allowed == rule(points, prefix), prefix
        token = int(rng.choice(sorted(allowed)))
        state = state.update(torch.tensor([token]))
        if token == 0:
            break
        prefix.append(token - 1)
    assert CVRP.is_valid(points, np.array(prefix))


def test_labels_pass_their_own_mask_batched_and_padded():
    points = [*instances(1, 3, 6), *instances(2, 2, 9)]
    refs = [CVRP.solve(p) for p in points]
    assert all(CVRP.is_valid(p, r) for p, r in zip(points, refs, strict=True))
    width, steps = max(len(p) for p in points), max(len(r) for r in refs) + 1
    batch = torch.zeros(len(points), width, 4, dtype=torch.float64)
    targets = torch.full((len(points), steps), -100)
    for b, (p, r) in enumerate(zip(points, refs, strict=True)):
        batch[b, : len(p)] = torch.tensor(p)
        targets[b, : len(r) + 1] = torch.tensor(to_tokens(r))
    lengths = torch.tensor([len(p) for p in points])
    teacher_forcing_mask(CVRP, lengths, targets, batch)  # raises on a label its rule refuses


def test_the_depot_never_starts_nor_follows_itself_and_the_end_waits_for_every_customer():
    points = instance_rows(
        np.array([[0.5, 0.5], [0.1, 0.1], [0.9, 0.1], [0.9, 0.9]]), np.array([0, 6, 5, 4]), 10
    )
    tokens = torch.tensor([[2, 1, 3, 4, 0]])  # customer 1; depot; customers 2, 3; end
    masks = replay_masks(CVRP, torch.tensor([4]), tokens, "task", torch.tensor(points)[None])
    allowed = [set(np.flatnonzero(m).tolist()) for m in masks[0].numpy()]
    assert allowed[0] == {2, 3, 4}  # no depot at the start, no end
    assert allowed[1] == {1, 4}  # load 4 left: customer 3 (demand 4) or home
    assert allowed[2] == {3, 4}  # back at the depot: a customer, not the depot again
    assert allowed[3] == {1, 4}  # after customer 2 (5): customer 3 fits the 5 left
    assert allowed[4] == {0}  # all served: the end alone


def test_a_beam_carries_each_row_s_load_through_its_reordering():
    """Beams reorder the task's own load with their rows: every output of a small untrained
    model's beam, greedy and sampling is valid routes on instances of tight capacity."""
    from ptrnet.decoding.dataset import decode_all
    from ptrnet.decoding.options import DecodeOptions
    from ptrnet.model import ModelConfig, build_model

    torch.manual_seed(0)
    model = build_model(ModelConfig(input_dim=4, hidden=16, features="demand")).eval()
    points = instances(4, 4, 9)
    for p in points:
        p[:, 3] = 12
    for options in (
        DecodeOptions(strategy="beam", beam_width=6),
        DecodeOptions(strategy="greedy"),
        DecodeOptions(strategy="sample", samples=8, seed=3),
    ):
        for p, seq in zip(points, decode_all(model, CVRP, points, options), strict=True):
            assert CVRP.is_valid(p, seq), (options.strategy, seq)


def test_costs_by_hand_batched_and_one_at_a_time():
    coords = np.array([[0, 0], [3, 0], [3, 4], [0, 4], [0, 1]], dtype=float)
    points = instance_rows(coords, np.array([0, 2, 2, 2, 2]), 4)
    seq = np.array([1, 2, 0, 3, 4])  # depot-1-2-depot (12) and depot-3-4-depot (8)
    assert CVRP.sequence_cost(points, seq) == 20
    assert CVRP.answer_cost(points, seq) == 20
    assert CVRP.sequence_cost(points, np.array([1, 2, 3, 4])) == math.inf  # load 8 > 4
    tokens = torch.tensor([[*to_tokens(seq), 0, 0, 0], [*to_tokens([4, 0, 3, 0, 2, 0, 1]), 0]])
    batch = torch.tensor(np.stack([points, points]))
    costs = CVRP.batch_cost(batch, tokens[:, :9], torch.tensor([5, 5]))
    expected = 20, sum(solver.route_length(coords, [c]) for c in (4, 3, 2, 1))
    np.testing.assert_allclose(costs.numpy(), expected)


def test_metrics_gap_and_valid_rate_by_hand():
    coords = np.array([[0, 0], [3, 0], [3, 4], [0, 4], [0, 1]], dtype=float)
    points = instance_rows(coords, np.array([0, 2, 2, 2, 2]), 4)
    ref = np.array([1, 2, 0, 3, 4])  # 20
    longer = np.array([1, 0, 2, 0, 3, 4])  # 6 + 10 + 8 = 24
    metrics = CVRP.metrics([points] * 3, [ref] * 3, [ref, longer, np.array([1, 2, 3, 4])])
    assert metrics["valid_rate"] == pytest.approx(2 / 3)
    assert metrics["mean_length"] == pytest.approx(22)
    assert metrics["mean_gap"] == pytest.approx(0.1)
    assert metrics["count"] == 3


def test_answers_are_routes_joined_by_the_depot_and_nothing_else():
    points = instances(3, 1, 6)[0]
    ref = CVRP.solve(points)
    assert ref[0] != 0 and ref[-1] != 0 and sorted(ref[ref != 0].tolist()) == [1, 2, 3, 4, 5, 6]
    for bad in ([0, *ref], [*ref, 0], [1, 0, 0, 2, 3, 4, 5, 6], ref[:-1], [*ref, ref[0]], []):
        assert not CVRP.is_valid(points, np.array(bad, dtype=np.int64)), bad
    turned = solver.join_routes([r[::-1] for r in solver.split_routes(ref)][::-1])
    assert CVRP.is_valid(points, turned) and (CVRP.canonical(points, turned) == ref).all()


def test_generation_follows_the_protocol_and_counts_customers():
    (points,) = instances(0, 1, 20)
    assert points.shape == (21, 4) and CVRP.size_of(points) == 20
    assert (points[:, 3] == 30).all() and points[0, 2] == 0
    assert set(points[1:, 2].tolist()) <= set(range(1, 10))
    assert CVRP.max_steps(21) == 39


def test_references_exact_up_to_ten_customers_pyvrp_beyond_quick_with_a_note():
    small = instances(5, 1, 8)[0]
    exact = CVRP.reference(small, "exact")
    assert (CVRP.reference(small).sequence == exact.sequence).all() and exact.note is None
    assert CVRP.reference_is_exact(11) and not CVRP.reference_is_exact(12)
    larger = instances(5, 1, 14)[0]
    quick = CVRP.reference(larger, "quick")
    assert "after at most 1000 iterations" in quick.note and CVRP.is_valid(larger, quick.sequence)


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda p: p.__setitem__((2, 3), 31), "states one capacity; row 3 has 31, the depot's 15"),
        (lambda p: p.__setitem__((1, 2), 2.5), "demand is an integer; row 2 has 2.5"),
        (lambda p: p.__setitem__((1, 2), 16), "customer 1 has 16"),
        (lambda p: p.__setitem__((0, 2), 1), "the depot's demand is 0"),
    ],
)
def test_instances_the_task_cannot_take_are_refused_in_one_line(change, problem):
    points = instances(6, 1, 5)[0]
    change(points)
    with pytest.raises(DegenerateInstanceError, match=problem):
        CVRP.solve(points)


def test_every_command_the_api_and_the_page_take_cvrp(cli, tmp_path, monkeypatch):
    """generate (-n counts customers), solve, train --dry-run (the demand features), predict,
    eval, score, plot, demo, a .vrp file, ptrnet.load and the page's endpoints."""
    from fastapi.testclient import TestClient

    import ptrnet
    from ptrnet import inference
    from ptrnet.web.app import create_app

    quiet = ("--workers", "1", "-q")
    assert cli("generate", "cvrp", "-n", "6", "--count", "4", "-o", "d.txt", *quiet)[0] == 0
    first = (tmp_path / "d.txt").read_text().splitlines()[0].split("output")
    assert len(first[0].split()) == 7 * 4 and first[1].split().count("1") >= 1
    assert cli("solve", "cvrp", "d.txt", "-o", "s.txt", "-q")[0] == 0
    steps = ("--dry-run", "--workers", "0", "--threads", "1", "--out", "run")
    assert cli("train", "cvrp", *steps)[0] == 0
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["model"]["features"] == "demand" and config["model"]["input_dim"] == 4
    assert cli("predict", "cvrp", "d.txt", "--model", "run", "-o", "p.txt", "-q")[0] == 0
    searched = ("-o", "ps.txt", "--route-search", "-q")
    assert cli("predict", "cvrp", "d.txt", "--model", "run", *searched)[0] == 0
    status, _, err = cli("predict", "cvrp", "d.txt", "--model", "run", "-o", "-", "--two-opt")
    assert status == 2 and "--two-opt: shortens tours, for task tsp, not cvrp" in err
    status, out, _ = cli("eval", "cvrp", "s.txt", "--model", "run", "--json", "--threads", "1")
    metrics = json.loads(out)
    assert status == 0 and metrics["valid_rate"] == 1 and metrics["count"] == 4
    status, out, _ = cli("score", "cvrp", "s.txt", "p.txt", "--json")
    assert status == 0 and json.loads(out)["valid_rate"] == 1
    status, out_searched, _ = cli("score", "cvrp", "s.txt", "ps.txt", "--json")
    lengths = [json.loads(text)["mean_length"] for text in (out_searched, out)]
    assert status == 0 and lengths[0] <= lengths[1] + 1e-12
    assert cli("plot", "cvrp", "s.txt", "--model", "run", "-o", "plot.png")[0] == 0
    assert (tmp_path / "plot.png").read_bytes()[:4] == b"\x89PNG"
    figures = []  # the title counts customers, as -n does; the search is drawn and named
    monkeypatch.setattr("ptrnet.viz.figures.save_png", lambda fig, path: figures.append(fig))
    assert cli("plot", "cvrp", "s.txt", "--model", "run", "--route-search", "-o", "x.png")[0] == 0
    title = figures[0].get_suptitle()
    assert title.startswith("cvrp, n = 6, s.txt") and "2-opt, relocate and swap" in title
    status, out, _ = cli("eval", "cvrp", "s.txt", "--model", "run", "--multistart", "1", "--json")
    assert status == 0 and json.loads(out)["valid_rate"] == 1
    views = ("--search-views", "8", "--average-views", "4", "--json")
    status, out, _ = cli("eval", "cvrp", "s.txt", "--model", "run", *views)
    assert status == 0 and json.loads(out)["valid_rate"] == 1
    vrp = tmp_path.parent / "E-n22-k4.vrp"
    vrp.write_bytes((solver_data() / "E-n22-k4.vrp").read_bytes())
    status, _, err = cli("predict", "cvrp", str(vrp), "--model", "run", "-o", "v.txt")
    assert status == 0 and "CVRPLIB E-n22-k4" in err

    bundled = tmp_path / "bundled" / "cvrp"
    bundled.mkdir(parents=True)
    (bundled / "best.safetensors").write_bytes((tmp_path / "run" / "last.safetensors").read_bytes())
    monkeypatch.setattr("ptrnet.inference.load.BUNDLED_DIR", str(tmp_path / "bundled"))
    points = instances(7, 1, 7)[0]
    result = ptrnet.load("cvrp").solve(points)
    assert result.valid and result.cost == pytest.approx(
        CVRP.sequence_cost(points, result.sequence)
    )
    started = ptrnet.load("cvrp").solve(points, multistart=True, pick="shortest")
    assert started.valid and started.cost <= result.cost + 1e-12  # greedy's start is one of 7
    searched = ptrnet.load("cvrp").solve(points, route_search=True)
    assert searched.valid and searched.log_prob is None and searched.cost <= result.cost + 1e-12

    client = TestClient(create_app({"cvrp": inference.load_model(None, "cvrp")}))
    client.base_url = "http://localhost"
    entry = next(t for t in client.get("/api/tasks").json()["tasks"] if t["name"] == "cvrp")
    assert entry["drawing"] == "routes" and entry["dim"] == 4
    sample = client.post("/api/sample", json={"task": "cvrp", "n": 7, "seed": 1}).json()
    assert len(sample["points"]) == 8 and sample["points"][0][2] == 0
    answer = client.post("/api/predict", json={"task": "cvrp", "points": sample["points"]})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["metrics"]["valid"] and body["reference_exact"]
    assert CVRP.is_valid(np.array(sample["points"]), np.array(body["reference"]))
    search = {"task": "cvrp", "points": sample["points"], "decoding": {"route_search": True}}
    answer = client.post("/api/predict", json=search)
    assert answer.status_code == 200, answer.text
    searched_body = answer.json()
    assert searched_body["metrics"]["valid"] and searched_body["model"]["search"]["route_search"]
    model = searched_body["model"]
    assert searched_body["metrics"]["mean_length"] <= model["decoded_cost"] + 1e-12


def solver_data():
    from pathlib import Path

    return Path(__file__).parent / "data" / "cvrplib"
