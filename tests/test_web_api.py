"""The web API through FastAPI's TestClient, with tiny random models injected into the factory."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

pytest.importorskip("fastapi", reason="the web extra is not installed")
from fastapi import Request  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from ptrnet.tasks import DRAWINGS, get_task  # noqa: E402
from ptrnet.web.app import MAX_BODY, create_app, last_event_id  # noqa: E402
from ptrnet.web.live_train import LiveTrainer  # noqa: E402
from ptrnet.web.schemas import MAX_POINTS, TRACE_LIMIT  # noqa: E402
from tests.test_viz import instance, tiny_model  # noqa: E402

torch.set_num_threads(1)
TINY_RUN = {"hidden": 8, "steps": 6, "batch_size": 4, "min_len": 2, "max_len": 4}


@pytest.fixture(scope="module")
def client():
    models = {name: tiny_model(name) for name in ("convex_hull", "tsp", "delaunay")}
    with TestClient(
        create_app(models), base_url="http://localhost"
    ) as c:  # sort: no model, exact answers only
        yield c


def body(task="convex_hull", n=8, **extra):
    return {"task": task, "points": instance(task, n).tolist(), **extra}


def test_page_and_static_files(client):
    page = client.get("/")
    assert page.status_code == 200 and '<svg id="board"' in page.text
    for name in ("app.js", "board.js", "chart.js", "metrics.js", "train.js", "style.css"):
        assert client.get(f"/static/{name}").status_code == 200


def test_tasks_lists_models_and_limits(client):
    data = client.get("/api/tasks").json()
    models = {t["name"]: t["model"] for t in data["tasks"]}
    assert models["sort"] is None and models["tsp"]["hidden"] == 8
    assert data["limits"]["max_points"] == MAX_POINTS
    drawings = {t["name"]: t["drawing"] for t in data["tasks"]}  # what the page draws by
    assert drawings == {name: get_task(name).drawing for name in drawings}
    assert {"hull", "tour", "triangles", "bars"} <= set(drawings.values()) <= set(DRAWINGS)


@pytest.mark.parametrize("task", ["convex_hull", "tsp", "delaunay"])
@pytest.mark.parametrize(
    "decoding", [{}, {"strategy": "beam", "beam_width": 3, "constraints": "task"}]
)
def test_predict_answers_model_exact_metrics_and_trace(client, task, decoding):
    response = client.post("/api/predict", json=body(task, decoding=decoding))
    assert response.status_code == 200, response.text
    data = response.json()
    points = np.array(body(task)["points"])
    assert data["reference"] == get_task(task).solve(points).tolist()
    model = data["model"]
    trace = model["trace"]
    assert len(trace["probs"]) == len(trace["allowed"]) == len(trace["tokens"])
    assert all(len(row) == 9 for row in trace["probs"])
    assert set(data["metrics"]) >= set(get_task(task).metric_keys) | {"valid"}
    if decoding:
        assert model["constraints"] == "task" and model["beam_width"] == 3
        assert data["metrics"]["valid"] is True


@pytest.mark.parametrize("task", ["convex_hull", "tsp", "delaunay"])
def test_predict_decodes_under_the_tasks_rules_by_default(client, task):
    """Even an untrained model's answer is well formed: the page decodes as the API does."""
    data = client.post("/api/predict", json=body(task, n=12)).json()
    assert data["model"]["constraints"] == "task" and data["metrics"]["valid"] is True


def test_predict_without_a_model_still_gives_the_exact_answer(client):
    response = client.post("/api/predict", json={"task": "sort", "points": [[0.5], [0.1], [0.9]]})
    data = response.json()
    assert data["reference"] == [1, 0, 2] and data["model"] is None
    assert "no model loaded for sort" in data["message"]


def test_large_instances_skip_the_trace_and_json_has_no_nan(client):
    data = client.post("/api/predict", json=body("tsp", TRACE_LIMIT + 1)).json()
    assert data["model"]["trace"] is None and "step-through" in data["message"]
    assert "NaN" not in json.dumps(data)


def bad_point(value):
    points = instance("convex_hull").tolist()
    points[2][1] = value
    return {"task": "convex_hull", "points": points}


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"task": "no_such_task", "points": [[0, 0]] * 5}, "unknown task"),
        (body(n=MAX_POINTS + 1), "at most 300"),
        ({"task": "tsp", "points": [[0.1, 0.2, 0.3]] * 5}, "2 number(s) per point"),
        ({"task": "sort", "points": [[0.1, 0.2]]}, "1 number(s) per point"),
        ({"task": "tsp", "points": [0.1, 0.2]}, "valid list"),
        ({"task": "convex_hull", "points": [[0, 0], [1, 1]]}, "at least 3 points"),
        ({"task": "tsp", "points": []}, "at least 1 item"),
        ({"task": "tsp"}, "points: Field required"),
        (bad_point(1e300), "less than or equal to 1000000"),
        (body(decoding={"strategy": "top_k"}), "unknown strategy 'top_k'"),
        (body(decoding={"samples": 3}), "samples > 1 needs"),
        (body(decoding={"strategy": "beam", "beam_width": 0}), "greater than or equal to 1"),
        (body(decoding={"strategy": "beam", "beam_width": 99}), "less than or equal to 16"),
        (body(decoding={"constraints": "yes"}), "decoding.constraints"),
        (body("delaunay", 100, decoding={"strategy": "beam", "beam_width": 16}), "too much"),
        (body(model="/etc/passwd"), "model: Extra inputs are not permitted"),
        (body(decoding={"path": "x"}), "Extra inputs are not permitted"),
    ],
)
def test_bad_predict_bodies_are_422_with_a_message(client, payload, message):
    response = client.post("/api/predict", json=payload)
    assert response.status_code == 422
    assert message in response.json()["detail"]


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_are_refused(client, token):
    text = json.dumps(bad_point(0.5)).replace("0.5", token, 1)
    response = client.post(
        "/api/predict", content=text, headers={"content-type": "application/json"}
    )
    assert response.status_code == 422 and "finite number" in response.json()["detail"]


def test_malformed_oversized_and_degenerate_bodies(client):
    broken = client.post("/api/predict", content="{", headers={"content-type": "application/json"})
    assert broken.status_code == 422 and "JSON" in broken.json()["detail"]
    huge = client.post(
        "/api/predict", content=b" " * (MAX_BODY + 1), headers={"content-type": "application/json"}
    )
    assert huge.status_code == 413
    line = {"task": "convex_hull", "points": [[0.1, 0.1], [0.2, 0.2], [0.3, 0.3]]}
    response = client.post("/api/predict", json=line)
    assert response.status_code == 422 and "collinear" in response.json()["detail"]
    for points in ([[0, 0], [0, 0]], [[5, 5], [5, 5], [5, 5]], [[0, 0], [1e-200, 0]]):
        same = client.post("/api/predict", json={"task": "tsp", "points": points})
        assert same.status_code == 200  # every tour has length 0: no gap to divide by
        assert same.json()["metrics"]["mean_gap"] == 0.0


def test_factory_refuses_a_model_under_another_task():
    with pytest.raises(ValueError, match="trained on tsp"):
        create_app({"convex_hull": tiny_model("tsp")})


def events_of(client) -> list[dict]:
    with client.stream("GET", "/api/train/events") as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in response.iter_lines() if line.startswith("data: ")]
    return [json.loads(line[6:]) for line in lines]


def test_live_training_streams_events_then_tests_lengths():
    with TestClient(create_app(), base_url="http://localhost") as client:
        assert client.get("/api/train/events").status_code == 404
        assert client.post("/api/train/test", json={"lengths": [5]}).status_code == 409
        assert client.post("/api/train", json=TINY_RUN).status_code == 202
        events = events_of(client)
        kinds = [e["type"] for e in events]
        assert kinds[0] == "start" and kinds[-1] == "end" and events[-1]["status"] == "done"
        assert "progress" in kinds and "eval" in kinds
        assert [e["id"] for e in events] == list(range(len(events)))
        resumed = client.get("/api/train/events", headers={"Last-Event-ID": str(len(events) - 2)})
        assert resumed.text.count("data: ") == 1
        result = client.post("/api/train/test", json={"lengths": [6, 3], "count": 5}).json()
        assert result["lengths"] == [3, 6] and result["trained_on"] == "2-4"
        for series in result["decoding"].values():
            assert len(series["accuracy"]) == len(series["invalid_rate"]) == 2
        assert result["decoding"]["task"]["invalid_rate"] == [0.0, 0.0]


class FinishedJob:
    """A finished training job with three events (no training)."""

    events = [{"id": k, "type": kind} for k, kind in enumerate(("start", "progress", "end"))]

    def ended(self) -> bool:
        return True

    def events_from(self, index: int) -> list[dict]:
        return self.events[index:]


@pytest.mark.parametrize("value", [b"\xb2", "\uff11".encode(), b"9" * 5000, b"-1", b"1e3", b" "])
def test_a_last_event_id_that_is_no_event_id_reads_as_absent(value):
    """``"²".isdigit()`` is true and ``int`` refuses it, as it refuses 5,000 digits: both were
    a 500 with a traceback. The header's bytes here are what uvicorn passes on."""
    assert last_event_id(Request({"type": "http", "headers": [(b"last-event-id", value)]})) == -1


def test_events_after_a_5000_digit_last_event_id_start_from_the_first():
    trainer = LiveTrainer()
    trainer.job = FinishedJob()  # type: ignore[assignment]
    with TestClient(create_app(trainer=trainer), base_url="http://localhost") as client:
        response = client.get("/api/train/events", headers={"Last-Event-ID": "9" * 5000})
        assert response.status_code == 200 and response.text.count("data: ") == 3
        resumed = client.get("/api/train/events", headers={"Last-Event-ID": "1"})
        assert resumed.text.count("data: ") == 1


@pytest.mark.parametrize(("n", "exact"), [(20, True), (21, False)])
def test_a_heuristic_tsp_reference_is_not_called_optimal(client, n, exact):
    """Beyond 20 cities the reference tour is near-exact (a heuristic), so the model's gap to it
    may be negative: the answer says so, and its length is no ``optimal_cost``."""
    data = client.post("/api/predict", json=body("tsp", n)).json()
    assert data["reference_exact"] is exact
    metrics = data["metrics"]
    assert metrics["reference_cost"] > 0
    assert metrics["optimal_cost"] == (metrics["reference_cost"] if exact else None)


def test_one_job_at_a_time_and_cancel():
    with TestClient(create_app(), base_url="http://localhost") as client:
        assert client.post("/api/train/cancel", json={}).json() == {"cancelled": False}
        assert client.post("/api/train", json={**TINY_RUN, "steps": 3000}).status_code == 202
        busy = client.post("/api/train", json=TINY_RUN)
        assert busy.status_code == 409 and "already running" in busy.json()["detail"]
        assert client.post("/api/train/test", json={"lengths": [5]}).status_code == 409
        assert client.post("/api/train/cancel", json={}).json() == {"cancelled": True}
        assert events_of(client)[-1]["status"] == "cancelled"


@pytest.mark.parametrize(
    ("url", "payload", "message"),
    [
        ("/api/train", {"hidden": 4096}, "less than or equal to 128"),
        ("/api/train", {"min_len": 9, "max_len": 3}, "above max_len"),
        ("/api/train", {"lr": "NaN"}, "valid number"),
        ("/api/train", {"data": "/etc/passwd"}, "Extra inputs"),
        ("/api/train/test", {"lengths": []}, "at least 1 item"),
        ("/api/train/test", {"lengths": [1000]}, "less than or equal to 100"),
        ("/api/train/test", {"lengths": [5], "count": 10**6}, "less than or equal to 500"),
    ],
)
def test_bad_training_bodies_are_422(url, payload, message):
    with TestClient(create_app(), base_url="http://localhost") as client:
        response = client.post(url, json=payload)
    assert response.status_code == 422 and message in response.json()["detail"]


def test_serve_loads_command_line_models_then_bundled_defaults(tmp_path, monkeypatch):
    from ptrnet.cli import serve
    from ptrnet.runs.checkpoint import save_checkpoint

    for task in ("tsp", "convex_hull"):
        loaded = tiny_model(task)
        (tmp_path / "bundled" / task).mkdir(parents=True)
        save_checkpoint(
            tmp_path / "bundled" / task / "best.safetensors", loaded.config, 0, loaded.model
        )
    (tmp_path / "bundled" / "sort").mkdir()  # an empty folder is no model

    monkeypatch.setattr("ptrnet.inference.load.BUNDLED_DIR", str(tmp_path / "bundled"))
    explicit = tmp_path / "bundled" / "tsp" / "best.safetensors"
    models = serve.load_models([f"tsp={explicit}"])
    assert sorted(models) == ["convex_hull", "tsp"] and models["tsp"].path == str(explicit)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("tsp", "expected TASK=PATH"),
        ("no_such_task=x", "unknown task"),
        ("tsp=/nonexistent/model", "no such model"),
    ],
)
def test_serve_refuses_bad_model_options_before_serving(spec, message, capsys):
    from ptrnet.cli.main import main

    assert main(["serve", "--model", spec]) in (1, 2)
    err = capsys.readouterr().err
    assert err.startswith("ptrnet: error: ") and message in err


@pytest.mark.parametrize(("port", "message"), [("99999", "outside 0-65535"), ("x", "not a port")])
def test_serve_refuses_a_port_that_does_not_exist(port, message, capsys):
    from ptrnet.cli.main import main

    assert main(["serve", "--port", port]) == 2
    assert message in capsys.readouterr().err


def points(n: int = 8, seed: int = 0) -> list[list[float]]:
    return np.random.default_rng(seed).random((n, 2)).round(6).tolist()


@pytest.mark.parametrize("width", ["5", True, 5.0])
def test_a_beam_width_that_is_not_a_json_integer_is_422(client, width) -> None:
    body = {"task": "convex_hull", "points": points(), "decoding": {"beam_width": width}}
    assert client.post("/api/predict", json=body).status_code == 422


def test_points_outside_the_unit_square_decode_on_its_image(client) -> None:
    unit = points(10, seed=3)
    a = client.post("/api/predict", json={"task": "convex_hull", "points": unit}).json()
    big = (np.array(unit) * 1e5 + 3).tolist()
    b = client.post("/api/predict", json={"task": "convex_hull", "points": big}).json()
    assert a["reference"] == b["reference"] and b["unit_square"].startswith("x' = ")
    degenerate = [[0.1 * k, 0.1 * k] for k in range(5)]
    response = client.post("/api/predict", json={"task": "convex_hull", "points": degenerate})
    assert response.status_code == 422 and "collinear" in response.json()["detail"]


def test_sample_draws_a_fresh_instance_from_the_task_s_generator(client):
    """POST /api/sample: the page's Randomise for a task whose points carry more than x and y;
    any point task answers, with rows as its generator lays them out, the same for one seed."""
    from ptrnet.tasks import SizeRange, Stream

    answer = client.post("/api/sample", json={"task": "tsp", "n": 7, "seed": 3})
    assert answer.status_code == 200, answer.text
    expected = get_task("tsp").generate(SizeRange(7, 7), 1, 3, Stream.DEMO)[0]
    assert answer.json() == {"task": "tsp", "points": expected.tolist()}
    for payload, message in (
        ({"task": "copy", "n": 3}, "the page needs a task whose inputs are points"),
        ({"task": "tsp", "n": 0}, "greater than or equal to 1"),
        ({"task": "tsp", "n": MAX_POINTS}, f"less than or equal to {MAX_POINTS - 1}"),
        ({"task": "tsp", "n": 5, "seed": -1}, "greater than or equal to 0"),
        ({"task": "delaunay", "n": 2}, "task delaunay needs n >= 3"),
    ):
        answer = client.post("/api/sample", json=payload)
        assert answer.status_code == 422 and message in answer.json()["detail"], answer.text
