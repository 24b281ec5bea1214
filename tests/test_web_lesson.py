"""The lesson panels' API (ptrnet/web/lesson.py) with tiny random models: the fixed-vocabulary
baseline against the library's own decoding, convex-hull live training, the copy panel's state."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

pytest.importorskip("fastapi", reason="the web extra is not installed")
from fastapi.testclient import TestClient  # noqa: E402

from ptrnet.datasets.batching import collate  # noqa: E402
from ptrnet.decoding.decode import decode  # noqa: E402
from ptrnet.decoding.options import DecodeOptions  # noqa: E402
from ptrnet.inference import LoadedModel  # noqa: E402
from ptrnet.model import ModelConfig, build_model  # noqa: E402
from ptrnet.runs.config import RunConfig, TrainConfig  # noqa: E402
from ptrnet.tasks import SizeRange, Stream, get_task  # noqa: E402
from ptrnet.web.app import create_app  # noqa: E402
from ptrnet.web.lesson import Lessons, LessonTrainRequest  # noqa: E402
from ptrnet.web.live_train import TrainingSet  # noqa: E402
from ptrnet.web.schemas import LengthTestRequest  # noqa: E402
from ptrnet.web.vocabulary import fixed_vocabulary_greedy  # noqa: E402
from tests.test_viz import instance, tiny_model  # noqa: E402

torch.set_num_threads(1)
LOCAL = "http://localhost"  # the server answers only the host names it was started for
HULL = get_task("convex_hull")
TINY_HULL_RUN = {"task": "convex_hull", "hidden": 8, "steps": 6, "batch_size": 4}


def tiny_baseline(kind: str = "seq2seq", max_n: int = 5) -> LoadedModel:
    """A randomly initialised fixed-vocabulary baseline posing as a hull model of n = max_n."""
    torch.manual_seed(1)
    config = RunConfig(
        ModelConfig(kind=kind, input_dim=2, hidden=8, max_n=max_n),
        TrainConfig(task="convex_hull", sizes=str(max_n), steps=1),
    )
    return LoadedModel(build_model(config.model).eval(), config, "<tiny baseline>", 0, {})


@pytest.fixture(scope="module")
def client():
    lessons = Lessons(seq2seq=tiny_baseline())
    app = create_app({"convex_hull": tiny_model("convex_hull")}, lessons=lessons)
    with TestClient(app, base_url=LOCAL) as c:
        yield c


@pytest.mark.parametrize("kind", ["seq2seq", "attention"])
def test_fixed_vocabulary_greedy_is_the_library_decode_where_the_library_can(kind):
    loaded = tiny_baseline(kind)
    points = instance("convex_hull", 5, seed=3)
    tokens, probs = fixed_vocabulary_greedy(loaded.model, points)
    with torch.no_grad():
        options = DecodeOptions(constraints="none")
        result = decode(loaded.model, HULL, collate([points]), options, return_probs=True)
    expected = result.tokens[0].numpy()[: len(tokens)]
    assert tokens.tolist() == expected.tolist()
    np.testing.assert_allclose(probs, result.probs[0, : len(tokens)].numpy(), atol=1e-5)


def test_fixed_vocabulary_greedy_has_no_class_past_its_vocabulary():
    loaded = tiny_baseline("attention")
    with pytest.raises(ValueError, match="built for n <= 5"):  # the library refuses n = 8
        loaded.model.encode(torch.rand(1, 8, 2), torch.tensor([8]))
    tokens, probs = fixed_vocabulary_greedy(loaded.model, instance("convex_hull", 8))
    assert probs.shape[1] == 6 and tokens.max() <= 5  # end + points 1..5, whatever n is
    np.testing.assert_allclose(probs.sum(1), 1.0, atol=1e-5)


def test_lesson_lists_installed_models(client):
    data = client.get("/api/lesson").json()
    assert data["seq2seq"]["kind"] == "seq2seq" and data["pointer"]["hidden"] == 8
    assert data["copy"] is None or data["copy_missing"] is None
    for task, proposed in data["train_defaults"].items():  # the page's live-training settings
        fields = {k: v for k, v in proposed.items() if k != "test_lengths"}
        LessonTrainRequest(task=task, **fields)  # each is a valid request
        LengthTestRequest(lengths=proposed["test_lengths"])


def test_vocabulary_panel_picks_a_hull_that_needs_a_missing_point(client):
    data = client.post("/api/lesson/vocabulary", json={"n": 7, "seed": 2}).json()
    assert data["vocabulary"] == 5 and data["missing"] == [5, 6]
    points = np.array(data["points"])
    assert data["reference"] == HULL.solve(points).tolist()
    assert max(data["reference"]) >= 5  # the hull uses point 6 or 7
    s2s = data["seq2seq"]
    assert all(len(row) == 6 for row in s2s["probs"]) and max(s2s["tokens"]) <= 5
    assert s2s["metrics"]["accuracy"] == 0.0  # it cannot name a hull vertex past point 5
    pointer = data["pointer"]
    assert all(len(row) == 8 for row in pointer["trace"]["probs"])
    assert s2s["info"]["kind"] == "seq2seq" and s2s["info"]["validation"] is None  # no record
    again = client.post("/api/lesson/vocabulary", json={"n": 7, "seed": data["seed"]}).json()
    assert again["seed"] == data["seed"] and again["points"] == data["points"]


def test_vocabulary_panel_at_the_trained_size_has_nothing_missing(client):
    data = client.post("/api/lesson/vocabulary", json={"n": 5, "seed": 4}).json()
    assert data["missing"] == [] and data["seed"] == 4


@pytest.mark.parametrize("n", [3, 4])
def test_vocabulary_panel_below_the_trained_size_names_only_real_points(client, n):
    for seed in range(8):
        response = client.post("/api/lesson/vocabulary", json={"n": n, "seed": seed})
        assert response.status_code == 200
        data = response.json()["seq2seq"]
        assert all(0 <= i < n for i in data["sequence"])
        assert all(sum(step[n + 1 :]) == 0 for step in data["probs"])  # classes naming no point


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"n": 2}, "greater than or equal to 3"),
        ({"n": 99}, "less than or equal to 12"),
        ({"n": 6, "path": "/etc/passwd"}, "Extra inputs"),
    ],
)
def test_bad_vocabulary_bodies_are_422(client, payload, message):
    response = client.post("/api/lesson/vocabulary", json=payload)
    assert response.status_code == 422 and message in response.json()["detail"]


def test_missing_lesson_models_are_404_with_the_reason():
    missing = Lessons(copy_missing="copy model not installed: test")
    with TestClient(create_app(lessons=missing), base_url=LOCAL) as client:
        info = client.get("/api/lesson").json()
        assert info["seq2seq"] is None and info["copy_missing"].startswith("copy model not")
        response = client.post("/api/lesson/vocabulary", json={"n": 6})
        assert response.status_code == 404 and "no seq2seq" in response.json()["detail"]
        response = client.post("/api/lesson/copy", json={"seed": 1})
        assert response.status_code == 404 and response.json()["detail"].endswith("test")


def test_lessons_refuse_a_model_that_is_not_a_baseline():
    with pytest.raises(ValueError, match="not a fixed-vocabulary baseline"):
        Lessons(seq2seq=tiny_model("convex_hull"))


def events_of(client) -> list[dict]:
    with client.stream("GET", "/api/train/events") as response:
        lines = [line for line in response.iter_lines() if line.startswith("data: ")]
    return [json.loads(line[6:]) for line in lines]


def test_live_training_of_convex_hull_then_the_length_test():
    with TestClient(create_app(lessons=Lessons()), base_url=LOCAL) as client:
        assert client.post("/api/lesson/train", json=TINY_HULL_RUN).status_code == 202
        events = events_of(client)
        assert events[0]["config"]["task"] == "convex_hull" and events[-1]["status"] == "done"
        evals = [e for e in events if e["type"] == "eval"]
        assert evals and all(0.0 <= e["valid_rate"] <= 1.0 for e in evals)
        result = client.post("/api/train/test", json={"lengths": [12, 6], "count": 4}).json()
        assert result["task"] == "convex_hull" and result["lengths"] == [6, 12]
        assert result["decoding"]["task"]["invalid_rate"] == [0.0, 0.0]  # the mask's promise
        short = client.post("/api/train/test", json={"lengths": [1, 2, 3], "count": 4})
        assert short.status_code == 422 and "at least 3 points" in short.json()["detail"]


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"task": "convex_hull", "min_len": 2, "max_len": 5}, "at least 3 points"),
        ({"task": "tsp"}, "task"),
        ({"task": "sort", "hidden": 4096}, "less than or equal to 128"),
    ],
)
def test_bad_lesson_training_bodies_are_422(payload, message):
    with TestClient(create_app(lessons=Lessons()), base_url=LOCAL) as client:
        response = client.post("/api/lesson/train", json=payload)
    assert response.status_code == 422 and message in response.json()["detail"]


def tiny_copy_model():
    """A randomly initialised pointer-generator over a small vocabulary (needs ptrnet.text)."""
    checkpoint = pytest.importorskip("ptrnet.text.checkpoint", reason="no copy task in ptrnet")
    from ptrnet.model.pointer_generator import PointerGenerator, PointerGeneratorConfig
    from ptrnet.text.vocab import SPECIALS, Vocabulary

    vocab = Vocabulary([*SPECIALS, "breaks", "record", "the", "on", "friday", "by"])
    torch.manual_seed(0)
    config = PointerGeneratorConfig(vocab_size=len(vocab), embed=8, hidden=8)
    return checkpoint.CopyModel(PointerGenerator(config).eval(), vocab, path="<tiny copy>")


@pytest.fixture(scope="module")
def copy_client():
    with TestClient(create_app(lessons=Lessons(copy=tiny_copy_model())), base_url=LOCAL) as c:
        yield c


SENTENCE = "late on friday akinyi broke the lisbon record by 4 seconds"


def test_copy_panel_terms_add_up_to_the_models_mixture(copy_client):
    data = copy_client.post("/api/lesson/copy", json={"sentence": SENTENCE}).json()
    assert data["source"][:-1] == SENTENCE.split() and data["target"] is None
    assert set(data["oov"]) >= {"akinyi", "lisbon", "4"} and "friday" not in data["oov"]
    for step in data["steps"]:
        assert step["mixture"] == pytest.approx(step["generate"] + step["copy"], abs=2e-4)
        assert 0.0 <= step["p_gen"] <= 1.0 and len(step["attention"]) == len(data["source"])
        assert sum(step["attention"]) == pytest.approx(1.0, abs=1e-3)
        assert step["mixture_top"][0][1] == pytest.approx(step["mixture"], abs=1e-4)  # greedy


@pytest.mark.parametrize("p_gen", [0.0, 1.0])
def test_copy_panel_override_leaves_one_path(copy_client, p_gen):
    data = copy_client.post("/api/lesson/copy", json={"sentence": SENTENCE, "p_gen": p_gen}).json()
    assert data["p_gen_override"] == p_gen
    for step in data["steps"]:
        assert step["p_gen"] == p_gen
        if p_gen == 0.0:  # copying alone: only source words, no generated mass
            assert step["generate"] == 0.0 and step["in_source"]
        else:  # the vocabulary alone: no copied mass, only vocabulary words
            assert step["copy"] == 0.0 and step["in_vocabulary"]


def test_copy_panel_samples_a_sentence_with_its_reference(copy_client):
    first = copy_client.post("/api/lesson/copy", json={"seed": 3}).json()
    again = copy_client.post("/api/lesson/copy", json={"seed": 3}).json()
    assert first["target"] and first["source"] == again["source"]


@pytest.mark.parametrize(
    ("payload", "status", "message"),
    [
        ({"sentence": "word " * 61}, 422, "1 to 60 words"),
        ({"sentence": "..."}, 200, ""),
        ({"p_gen": 1.5}, 422, "less than or equal to 1"),
        ({"sentence": ""}, 422, "at least 1 character"),
    ],
)
def test_bad_copy_bodies(copy_client, payload, status, message):
    response = copy_client.post("/api/lesson/copy", json=payload)
    assert response.status_code == status and message in response.json().get("detail", "")


def test_a_live_run_visits_its_fixed_training_set_once_per_epoch():
    sizes = SizeRange(5, 8)
    data = TrainingSet(HULL, sizes, count=10, batch_size=4, seed=3)
    points = HULL.generate(sizes, 10, 3, Stream.TRAIN)  # the training stream, not validation
    assert data.batches_per_epoch == 2  # 10 // 4: the partial batch is dropped
    for epoch in range(2):
        seen = []
        for k in range(2):
            batch = data.batch(2 * epoch + k)
            for row in range(4):
                got = batch.points[row, : int(batch.lengths[row])].numpy()
                i = next(j for j, p in enumerate(points) if np.array_equal(np.float32(p), got))
                want = collate([points[i]], [HULL.solve(points[i])]).targets[0]
                assert batch.targets[row, : len(want)].tolist() == want.tolist()
                seen.append(i)
        assert len(set(seen)) == 8  # no instance twice within an epoch
    again = TrainingSet(HULL, sizes, count=10, batch_size=4, seed=3)
    assert torch.equal(again.batch(3).points, data.batch(3).points)  # a pure function of the step
    assert not torch.equal(data.batch(0).points, data.batch(2).points)  # epochs are reshuffled
