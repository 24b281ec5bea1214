"""The span panel's API (POST /api/lesson/span) with a tiny untrained span pointer, and the
bundled one answering drawn test-stream examples."""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("fastapi", reason="the web extra is not installed")
from fastapi.testclient import TestClient  # noqa: E402

from ptrnet.model.span import SpanPointer  # noqa: E402
from ptrnet.tasks.span import sample_pair  # noqa: E402
from ptrnet.tasks.streams import Stream  # noqa: E402
from ptrnet.text.span import span_inputs  # noqa: E402
from ptrnet.text.span_checkpoint import SpanModel, SpanModelConfig  # noqa: E402
from ptrnet.text.span_decoder import MAX_ANSWER_TOKENS  # noqa: E402
from ptrnet.text.vocab import SPECIALS, Vocabulary  # noqa: E402
from ptrnet.web.app import create_app  # noqa: E402
from ptrnet.web.lesson import Lessons  # noqa: E402
from ptrnet.web.span_panel import SpanRequest, load_bundled_span, span_answer  # noqa: E402

torch.set_num_threads(1)
LOCAL = "http://localhost"
WORDS = ("who", "founded", "in", ".", "?", "labs", "|")


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    vocab = Vocabulary([*SPECIALS, *WORDS])
    config = SpanModelConfig("span_pointer", len(vocab), 8, 8)
    network = SpanPointer(len(vocab), 8, 8).eval()
    return SpanModel(model=network, config=config, vocab=vocab, answers=None)


@pytest.fixture(scope="module")
def client(model):
    with TestClient(create_app(lessons=Lessons(span=model)), base_url=LOCAL) as c:
        yield c


def distributions(model, source, start):
    """The start distribution and the end one given ``start``, straight from the network."""
    with torch.no_grad():
        memory = model.model.encode(span_inputs(model.vocab, [source]))
        logits, cell = model.model.first_step(memory)  # (1, P)
        ends = model.model.second_step(memory, cell, torch.tensor([start]))  # (1, P)
    offset = torch.arange(ends.shape[1]) - start
    ends = ends.masked_fill((offset < 0) | (offset >= MAX_ANSWER_TOKENS), float("-inf"))
    return logits[0].softmax(-1), ends[0].softmax(-1)


def test_lesson_lists_the_span_model(client):
    info = client.get("/api/lesson").json()
    assert info["span"]["embed"] == 8 and info["span"]["vocabulary"] == len(SPECIALS) + 7
    assert info["span_missing"] is None


def test_a_typed_passage_gets_both_distributions_and_its_span(client, model):
    body = {"passage": "Kanori Sato founded Mivel Labs in Dabeno.", "question": "Who founded?"}
    data = client.post("/api/lesson/span", json=body).json()
    passage = ["kanori", "sato", "founded", "mivel", "labs", "in", "dabeno", "."]
    assert data["passage"] == passage and data["question"] == ["who", "founded", "?"]
    assert data["typed"] and data["gold"] is None
    assert data["unknown"] == [w not in WORDS for w in passage]
    start, end = data["start"], data["end"]
    assert 0 <= start <= end < len(passage)
    assert data["answer"] == " ".join(passage[start : end + 1])
    p_start, p_end = distributions(model, (*passage, "|", *data["question"]), start)
    assert start == int(p_start.argmax()) and end == int(p_end.argmax())
    assert torch.allclose(torch.tensor(data["start_probs"]), p_start, atol=1e-4)
    assert torch.allclose(torch.tensor(data["end_probs"]), p_end, atol=1e-4)
    assert sum(data["start_probs"]) == pytest.approx(1, abs=1e-3)
    assert sum(data["end_probs"]) == pytest.approx(1, abs=1e-3)
    assert all(p == 0 for p in data["end_probs"][:start])  # an end before the start: never


def test_a_drawn_example_is_the_test_streams_by_seed(client):
    first = client.post("/api/lesson/span", json={"seed": 4}).json()
    again = client.post("/api/lesson/span", json={"seed": 4}).json()
    other = client.post("/api/lesson/span", json={"seed": 5}).json()
    assert first == again and first["passage"] != other["passage"]
    pair = sample_pair(4, 0, Stream.TEST)
    assert [*first["passage"], "|", *first["question"]] == list(pair.source)
    assert first["gold"] == " ".join(pair.target) and not first["typed"]
    for probs in (first["start_probs"], first["end_probs"]):
        assert len(probs) == len(first["passage"]) and sum(probs) == pytest.approx(1, abs=1e-3)
    assert first["end"] >= first["start"]


@pytest.mark.parametrize(
    "body, message",
    [
        ({"passage": "a b c"}, "both a passage and a question"),
        ({"question": "who ?"}, "both a passage and a question"),
        ({"passage": " ".join(["a"] * 121), "question": "who ?"}, "at most 120"),
        ({"passage": "a b", "question": " ".join(["q"] * 31)}, "at most 30"),
        ({"passage": "a | b", "question": "who ?"}, "'|'"),
        ({"passage": "   ", "question": "who ?"}, "the passage has no words"),
        ({"passage": "", "question": "who ?"}, "passage"),
        ({"passage": "a" * 2001, "question": "who ?"}, "passage"),
        ({"seed": -1}, "seed"),
        ({"seed": "1"}, "seed"),
        ({"seed": 1, "extra": 1}, "extra"),
    ],
)
def test_bad_bodies_are_422(client, body, message):
    response = client.post("/api/lesson/span", json=body)
    detail = response.json()["detail"]
    assert response.status_code == 422 and message in detail and "\n" not in detail


def test_a_missing_model_is_404_with_the_reason():
    lessons = Lessons(span_missing="span model not installed: test")
    with TestClient(create_app(lessons=lessons), base_url=LOCAL) as c:
        assert c.get("/api/lesson").json()["span"] is None
        response = c.post("/api/lesson/span", json={"seed": 0})
    assert response.status_code == 404 and response.json()["detail"].endswith(": test")


def test_the_bundled_span_pointer_answers_held_out_names():
    """The bundled model (ptrnet/bundled/span, exact match 97.5% on test names) on 10 drawn
    examples: its span is the generator's answer in at least 8."""
    bundled, missing = load_bundled_span()
    assert bundled is not None, missing
    answers = [span_answer(bundled, SpanRequest(seed=seed)) for seed in range(10)]
    assert sum(a["answer"] == a["gold"] for a in answers) >= 8
    assert all(a["start"] <= a["end"] for a in answers)


def test_a_missing_file_says_why(tmp_path):
    model, missing = load_bundled_span(str(tmp_path / "best.safetensors"))
    assert model is None and "span model not installed" in missing
