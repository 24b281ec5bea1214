"""The bundled models after the model's rewrite: same weights, same outputs, fused or plain.

tests/bundled_outputs.json was recorded (``python tests/bundled_outputs.py``) from the model
code before ``ptrnet/model/pointer.py`` was rewritten to read as the paper; every figure in the
docs comes from these models, so their outputs must not move.
"""

import json
import math

import pytest
import torch
from bundled_outputs import FIXTURE, MODELS, model_outputs

from ptrnet.inference.load import bundled_model_dir, load_model
from ptrnet.runs.checkpoint import load_checkpoint

torch.set_num_threads(1)

RECORDED = json.loads(FIXTURE.read_text())


def logits_tensor(rows):
    return torch.tensor([[-math.inf if x is None else x for x in row] for row in rows])


def assert_same_outputs(got, want):
    assert got["sequences"] == want["sequences"]
    torch.testing.assert_close(
        torch.tensor(got["log_probs"]), torch.tensor(want["log_probs"]), atol=1e-5, rtol=1e-5
    )
    torch.testing.assert_close(
        logits_tensor(got["logits"]), logits_tensor(want["logits"]), atol=1e-5, rtol=1e-5
    )


@pytest.mark.parametrize("name", MODELS)
def test_bundled_model_outputs_match_the_recorded_ones(name):
    assert_same_outputs(model_outputs(name), RECORDED[name])


@pytest.mark.parametrize("name", ["sort", "convex_hull", "tsp", "delaunay"])
def test_bundled_models_give_the_same_outputs_with_the_plain_pointer(name):
    assert_same_outputs(model_outputs(name, fused=False), model_outputs(name, fused=True))


@pytest.mark.parametrize("name", MODELS)
def test_bundled_weights_load_bit_identically(name):
    loaded = load_model(bundled_model_dir(name), MODELS[name][0])
    saved = load_checkpoint(loaded.path).model_state
    state = loaded.model.state_dict()
    assert sorted(state) == sorted(saved)
    assert all(torch.equal(state[key], saved[key]) for key in saved)
