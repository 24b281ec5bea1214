"""The pointer model's choices beyond the paper: Transformer encoder (order invariance), glimpses,
logit clipping; their configuration, checkpoints, and the bundled paper models still loading."""

import json
import os

import numpy as np
import pytest
import torch
from tiny_models import TRANSFORMER

from ptrnet.datasets.batching import collate
from ptrnet.inference import bundled_model_dir, load_model
from ptrnet.model import ModelConfig, build_model
from ptrnet.runs.checkpoint import load_checkpoint, save_checkpoint
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.tasks import POINT_TASKS

torch.set_num_threads(1)


def make_model(seed=0, **kw):
    torch.manual_seed(seed)
    return build_model(ModelConfig(input_dim=2, hidden=16, **{**TRANSFORMER, **kw})).eval()


def test_transformer_encoder_is_equivariant_to_the_input_order():
    """Permuting the inputs permutes the encoder states and leaves the decoder's start state
    unchanged; so the first pointer distribution is permuted the same way."""
    model = make_model()
    points = torch.rand(1, 7, 2, generator=torch.Generator().manual_seed(1))
    perm = torch.tensor([3, 0, 6, 1, 5, 2, 4])
    lengths = torch.tensor([7])
    base, moved = model.encode(points, lengths), model.encode(points[:, perm], lengths)
    torch.testing.assert_close(moved.enc[:, 1:], base.enc[:, 1 + perm], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(moved.enc[:, 0], base.enc[:, 0])  # the end vector
    for a, b in zip(moved.state, base.state, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
    first, _ = model.step(base, torch.zeros(1, dtype=torch.long), base.state)
    again, _ = model.step(moved, torch.zeros(1, dtype=torch.long), moved.state)
    torch.testing.assert_close(again[:, 1:], first[:, 1 + perm], atol=1e-5, rtol=1e-5)


def test_the_lstm_encoder_is_not_order_invariant():
    """The same check fails for the paper's encoder: the test can tell the two apart."""
    model = make_model(encoder="lstm", glimpses=0, logit_clip=0.0)
    points = torch.rand(1, 7, 2, generator=torch.Generator().manual_seed(1))
    perm, lengths = torch.tensor([3, 0, 6, 1, 5, 2, 4]), torch.tensor([7])
    base, moved = model.encode(points, lengths), model.encode(points[:, perm], lengths)
    assert not torch.allclose(moved.enc[:, 1:], base.enc[:, 1 + perm], atol=1e-3)


def test_clipped_logits_lie_within_the_clip():
    model = make_model(logit_clip=2.5)
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(20.0)  # huge raw scores
    rng = np.random.default_rng(0)
    batch = collate([rng.random((6, 2)), rng.random((4, 2))], [np.arange(6), np.arange(4)])
    logits = model(batch.points, batch.lengths, batch.targets)
    finite = logits[torch.isfinite(logits)]
    assert finite.abs().max() <= 2.5 and finite.abs().max() > 2.0


def test_glimpse_changes_the_pointer_query_and_ignores_pads():
    """A glimpse attends over the real positions only: a pad column's value cannot change it."""
    model = make_model(glimpses=2)
    memory = model.encode(torch.rand(2, 5, 2), torch.tensor([5, 3]))
    query = torch.rand(2, 4, 16)
    glimpsed = model.glimpse(memory, query)
    assert glimpsed.shape == query.shape and not torch.allclose(glimpsed, query)
    poked = memory.glimpse_proj.clone()
    poked[1, 4:] = 1e3  # row 1's pads (positions 4, 5 of n+1 = 6)
    changed = model.glimpse(type(memory)(**{**memory.__dict__, "glimpse_proj": poked}), query)
    torch.testing.assert_close(changed[1], glimpsed[1])


def test_paper_init_leaves_the_transformer_layers_at_their_defaults():
    model = make_model(init="paper")
    norms = [m for m in model.encoder.modules() if isinstance(m, torch.nn.LayerNorm)]
    assert norms and all(torch.equal(m.weight, torch.ones_like(m.weight)) for m in norms)
    assert model.w1.weight.abs().max() <= 0.08 and model.decoder.weight_hh_l0.abs().max() <= 0.08


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"encoder": "gru"}, "unknown encoder 'gru'"),
        ({"heads": 3}, "hidden 16 must divide by heads 3"),
        ({"encoder_layers": 0}, "encoder_layers must be a positive integer"),
        ({"glimpses": -1}, "glimpses must be an integer in 0..64"),
        ({"glimpses": 10**20}, "glimpses must be an integer in 0..64"),
        ({"hidden": 10**6}, "hidden must be at most 8,192"),
        ({"decoder_layers": 10**20}, "decoder_layers must be at most 64"),
        ({"logit_clip": -1.0}, "logit_clip must be 0"),
        ({"logit_clip": True}, "logit_clip must be 0"),
        ({"kind": "seq2seq", "max_n": 5}, "apply to the pointer model only"),
    ],
)
def test_bad_choices_are_refused(kw, message):
    with pytest.raises(ValueError, match=message):
        ModelConfig(**{"input_dim": 2, "hidden": 16, **TRANSFORMER, **kw})


def test_a_config_without_the_new_keys_is_the_papers_lstm_pointer():
    old = {"kind": "pointer", "input_dim": 2, "hidden": 16, "layers": 1, "init": "paper"}
    config = ModelConfig.from_dict(old)
    assert (config.encoder, config.glimpses, config.logit_clip) == ("lstm", 0, 0.0)
    assert ModelConfig.from_dict(config.to_dict()) == config


@pytest.mark.parametrize(
    "name", [name for name in sorted(POINT_TASKS) if os.path.isdir(bundled_model_dir(name))]
)
def test_bundled_models_load_as_the_lstm_paper_model(name):
    """A bundled checkpoint that predates the new keys loads with the paper's defaults; one
    written since (a task bundled later) loads as it was saved."""
    path = f"{bundled_model_dir(name)}/best.safetensors"
    with open(path, "rb") as f:
        size = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(size))
    saved = json.loads(header["__metadata__"]["ptrnet"])["config"]["model"]
    loaded = load_model(None, name)
    if "encoder" in saved:  # written after this change
        assert ModelConfig.from_dict(saved) == loaded.config.model
        return
    assert loaded.config.model.encoder == "lstm" and loaded.config.model.glimpses == 0
    assert isinstance(loaded.model.encoder, torch.nn.LSTM)


def test_a_transformer_checkpoint_rebuilds_the_same_model(tmp_path):
    model = make_model(seed=3)
    config = RunConfig(model.config, TrainConfig(task="tsp", sizes="5", steps=1))
    save_checkpoint(tmp_path / "m.safetensors", config, 0, model)
    assert load_checkpoint(tmp_path / "m.safetensors").config == config
    loaded = load_model(tmp_path / "m.safetensors", "tsp").model
    rng = np.random.default_rng(0)
    batch = collate([rng.random((6, 2)), rng.random((4, 2))], [np.arange(6), np.arange(4)])
    want = model(batch.points, batch.lengths, batch.targets)
    torch.testing.assert_close(loaded(batch.points, batch.lengths, batch.targets), want)
