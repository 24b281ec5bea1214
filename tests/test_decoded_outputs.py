"""A decoded output is returned only when it can be trusted: a model whose scores are not finite
numbers (weights that overflow float32) and an output that breaks the constraints it was decoded
under are one error line naming the instance, never an empty answer with exit status 0."""

import numpy as np
import pytest
import torch

import ptrnet
from ptrnet.decoding.dataset import decode_all
from ptrnet.decoding.options import DecodeOptions
from ptrnet.decoding.search import DecodingError
from ptrnet.model import ModelConfig, build_model
from ptrnet.runs.checkpoint import save_checkpoint
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.tasks import get_task

torch.set_num_threads(1)
SORT = get_task("sort")
OVERFLOW = (
    "the model's scores are not finite numbers (NaN or infinity) at output step 1: its weights "
    "overflow float32 on this input, so it has no output"
)


def tiny_sort_model(fill: float | None = None):
    torch.manual_seed(0)
    config = RunConfig(
        ModelConfig(input_dim=1, hidden=8), TrainConfig(task="sort", sizes="5", steps=1)
    )
    model = build_model(config.model).eval()
    if fill is not None:
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.fill_(fill)
    return config, model


@pytest.fixture
def absurd(tmp_path):
    """A sort checkpoint whose finite weights are all 3e38."""
    config, model = tiny_sort_model(3e38)
    path = tmp_path / "absurd.safetensors"
    save_checkpoint(path, config, 0, model)
    return path


def test_absurd_weights_are_an_error_not_an_empty_sort(cli, tmp_path, absurd):
    (tmp_path / "s.txt").write_text("0.3 0.1 0.2 0.5\n")
    status, out, err = cli("predict", "sort", "s.txt", "--model", absurd, "-o", "-")
    assert (status, out) == (1, "")  # bad input: named at its file and line
    assert err == f"ptrnet: error: s.txt:1: {OVERFLOW}\n"


def test_absurd_weights_are_a_value_error_in_the_api(absurd):
    solver = ptrnet.load(str(absurd), device="cpu")
    with pytest.raises(ValueError) as caught:
        solver.solve([[0.3, 0.1], [0.2, 0.5, 0.4]])
    assert str(caught.value) == f"instance 1: {OVERFLOW}"


MARKER = 0.125


class BrokenOnMarker(torch.nn.Module):
    """A sort model whose scores are NaN for the decoder rows of any instance holding
    :data:`MARKER`, whatever order the rows are in (beams, starts)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def encode(self, points, lengths):
        return self.model.encode(points, lengths)

    def step(self, memory, prev_token, state):
        logits, state = self.model.step(memory, prev_token, state)
        broken = (memory.inputs == MARKER).any(dim=2).any(dim=1)  # (R,)
        return logits.masked_fill(broken[:, None], float("nan")), state


@pytest.mark.parametrize(
    "options",
    [
        DecodeOptions(),
        DecodeOptions("beam", beam_width=3),
        DecodeOptions(multistart=1),
        DecodeOptions("sample", samples=3),
        DecodeOptions(batch_size=1),
    ],
    ids=["greedy", "beam", "multistart", "sample", "one-per-batch"],
)
def test_the_error_names_the_instance_in_the_callers_order(options):
    model = BrokenOnMarker(tiny_sort_model()[1])
    rng = np.random.default_rng(0)
    points = [rng.random((n, 1)) for n in (6, 7, 4, 5)]  # decoded by size: 4, 5, 6, 7
    points[3][2, 0] = MARKER
    with pytest.raises(DecodingError) as caught:
        decode_all(model, SORT, points, options)
    assert str(caught.value) == f"instance 4: {OVERFLOW}"


def test_an_output_that_breaks_the_task_constraints_is_never_returned(monkeypatch):
    model = tiny_sort_model()[1]
    points = [np.array([[0.3], [0.1], [0.2]]), np.array([[0.5], [0.4]])]
    monkeypatch.setattr(SORT, "is_valid", lambda p, seq: len(p) != 2)
    with pytest.raises(DecodingError) as caught:
        decode_all(model, SORT, points, DecodeOptions(constraints="task"))
    assert str(caught.value).startswith("instance 2: the decoded output [")
    assert str(caught.value).endswith(
        "is not a valid sort output for its 2 points, although decoded under the task's constraints"
    )
    # Without the task's constraints an invalid output is an ordinary result (the paper's).
    assert len(decode_all(model, SORT, points, DecodeOptions(constraints="none"))) == 2


def test_the_page_answers_a_model_without_a_trustworthy_output_with_422(absurd):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from ptrnet.inference import load_model
    from ptrnet.web.app import create_app

    app = create_app({"sort": load_model(str(absurd), "sort")})
    with TestClient(app, base_url="http://localhost") as client:
        body = {"task": "sort", "points": [[0.3], [0.1], [0.2], [0.5]]}
        response = client.post("/api/predict", json=body)
    assert response.status_code == 422
    assert response.json()["detail"] == f"no trustworthy model output: {OVERFLOW}"
