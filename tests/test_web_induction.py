"""The induction panel's API (POST /api/lesson/induction) with a tiny untrained model, and the
bundled model's measured effect."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

pytest.importorskip("fastapi", reason="the web extra is not installed")
from fastapi.testclient import TestClient  # noqa: E402

from ptrnet.induction.config import InductionConfig  # noqa: E402
from ptrnet.induction.measure import measure, stripe_score  # noqa: E402
from ptrnet.induction.model import AttentionOnly  # noqa: E402
from ptrnet.induction.train import BUNDLED_INDUCTION, MEASUREMENTS  # noqa: E402
from ptrnet.web.app import create_app  # noqa: E402
from ptrnet.web.induction_panel import load_bundled_induction  # noqa: E402
from ptrnet.web.lesson import Lessons  # noqa: E402

torch.set_num_threads(1)
LOCAL = "http://localhost"


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return AttentionOnly(InductionConfig(vocab=10, length=6, d_model=8)).eval()


@pytest.fixture(scope="module")
def client(model):
    with TestClient(create_app(lessons=Lessons(induction=model)), base_url=LOCAL) as c:
        yield c


def test_lesson_lists_the_induction_model(client):
    info = client.get("/api/lesson").json()
    assert info["induction"]["vocab"] == 10 and info["induction"]["length"] == 6
    assert info["induction"]["bos"] == 10 and info["induction_missing"] is None
    assert "measured" not in info["induction"]  # a model without a run's measurements


def test_a_typed_first_half_is_repeated_after_bos(client, model):
    data = client.post("/api/lesson/induction", json={"tokens": [3, 1, 4, 1]}).json()
    assert data["tokens"] == [10, 3, 1, 4, 1, 3, 1, 4, 1] and data["half"] == 4 and data["typed"]
    assert len(data["layer2"]) == 9 and all(len(row) == 9 for row in data["layer2"])
    tokens = torch.tensor(data["tokens"])
    with torch.no_grad():
        _, patterns = model(tokens[None])
    head = data["layer2_head"]
    assert torch.allclose(torch.tensor(data["layer2"]), patterns[1][0, head], atol=1e-4)
    assert data["induction_score"] == pytest.approx(
        float(stripe_score(patterns[1][0, head], 4)), abs=1e-4
    )
    predicted = data["predicted"]
    assert data["right"] == [predicted[t] == data["tokens"][t + 1] for t in (5, 6, 7)]


def test_a_random_sequence_is_drawn_by_seed(client):
    first = client.post("/api/lesson/induction", json={"seed": 4}).json()
    again = client.post("/api/lesson/induction", json={"seed": 4}).json()
    other = client.post("/api/lesson/induction", json={"seed": 5}).json()
    assert first["tokens"] == again["tokens"] != other["tokens"]
    assert len(first["tokens"]) == 13 and not first["typed"]


@pytest.mark.parametrize(
    "body, message",
    [
        ({"tokens": [1, 2, 3, 4, 5, 6, 7]}, "at most 6 tokens"),
        ({"tokens": [1, 10]}, "tokens are 0..9"),
        ({"tokens": [1, -1]}, "tokens are 0..9"),
        ({"tokens": [1]}, "tokens"),
        ({"seed": -1}, "seed"),
        ({"tokens": [1, 2], "extra": 1}, "extra"),
    ],
)
def test_bad_bodies_are_422(client, body, message):
    response = client.post("/api/lesson/induction", json=body)
    assert response.status_code == 422 and message in response.json()["detail"]


def test_a_missing_model_is_404_with_the_reason():
    lessons = Lessons(induction_missing="induction model not installed: test")
    with TestClient(create_app(lessons=lessons), base_url=LOCAL) as c:
        assert c.get("/api/lesson").json()["induction"] is None
        response = c.post("/api/lesson/induction", json={"seed": 0})
    assert response.status_code == 404 and response.json()["detail"].endswith(": test")


def test_the_bundled_model_points_at_the_stripe():
    """The bundled model (ptrnet/bundled/induction) and the figures it was shipped with."""
    bundled, missing = load_bundled_induction()
    assert bundled is not None, missing
    measured = json.loads((Path(BUNDLED_INDUCTION) / MEASUREMENTS).read_text())
    assert bundled.measured == measured
    assert measured["repeat_accuracy"] >= 0.95 and measured["induction_score"] > 0.5
    # and the weights do it: 64 fresh sequences of another stream, measured again here
    again = measure(bundled, 64, seed=bundled.config.seed + 100)
    assert again["repeat_accuracy"] > 0.9 and again["induction_score"] > 0.8
