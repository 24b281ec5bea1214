"""The GPU path, tested without a GPU: checkpoints name no device (a run trained on ``cuda``
loads and resumes on the CPU), a missing GPU is a one-line usage error, batches move unchanged."""

import json
from dataclasses import replace

import numpy as np
import pytest
import torch

from ptrnet.datasets.batching import collate
from ptrnet.inference import load_model
from ptrnet.io.errors import UsageError
from ptrnet.model import ModelConfig, build_model
from ptrnet.runs import LAST
from ptrnet.runs.checkpoint import load_checkpoint, save_checkpoint
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.training.loop import build_optimizer, train

torch.set_num_threads(1)
NO_GPU = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the machine without a GPU")


def gpu_run(tmp_path):
    """A run directory whose configuration says it trained on ``cuda`` (as one copied from a GPU
    machine: the file format holds no device, only the configuration names one)."""
    train_cfg = TrainConfig(
        task="sort", sizes="4-5", steps=4, batch_size=8, val_count=8, val_every=2, threads=1
    )
    config = RunConfig(ModelConfig(input_dim=1, hidden=16), train_cfg)
    train(config, tmp_path, progress=False)
    gpu_config = replace(config, train=replace(train_cfg, device="cuda"))
    ckpt = load_checkpoint(tmp_path / LAST)
    model = build_model(config.model)
    model.load_state_dict(ckpt.model_state)
    optimizer = build_optimizer(model, train_cfg)
    optimizer.load_state_dict(ckpt.optimizer_state)
    save_checkpoint(tmp_path / LAST, gpu_config, ckpt.step, model, optimizer, ckpt.info)
    return gpu_config


def test_a_gpu_trained_checkpoint_loads_on_the_cpu(tmp_path):
    gpu_run(tmp_path)
    loaded = load_model(tmp_path / LAST, "sort")
    assert loaded.config.train.device == "cuda"
    assert {p.device.type for p in loaded.model.parameters()} == {"cpu"}
    assert all(
        t.device.type == "cpu" for t in load_checkpoint(tmp_path / LAST).model_state.values()
    )


def test_a_gpu_run_resumes_on_the_cpu(tmp_path):
    config = gpu_run(tmp_path)
    on_cpu = replace(config, train=replace(config.train, device="cpu", steps=6))
    result = train(on_cpu, tmp_path, resume=True, progress=False)
    assert result.step == 6
    assert json.loads((tmp_path / "config.json").read_text())["train"]["device"] == "cpu"


@NO_GPU
def test_asking_for_a_missing_gpu_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="torch sees no CUDA GPU"):
        load_model(None, "sort", device="cuda")
    config = RunConfig(
        ModelConfig(input_dim=1, hidden=8),
        TrainConfig(task="sort", sizes="4", steps=1, device="cuda"),
    )
    with pytest.raises(UsageError, match="torch sees no CUDA GPU"):
        train(config, tmp_path, progress=False)
    assert not any(tmp_path.iterdir())  # nothing written


def test_batches_move_unchanged():
    rng = np.random.default_rng(0)
    batch = collate([rng.random((n, 2)) for n in (3, 5)], [np.arange(n) for n in (3, 5)])
    moved = batch.to("cpu")
    for name in ("points", "lengths", "targets"):
        assert torch.equal(getattr(moved, name), getattr(batch, name))
