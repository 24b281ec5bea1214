"""``keep_every``: a run keeps the weights of every validation at a multiple of N steps under
``kept/``, as checkpoints that load, evaluate and start other runs like ``best``."""

from dataclasses import replace

import pytest
import torch

from ptrnet.cli.main import main
from ptrnet.inference import load_model
from ptrnet.model import ModelConfig
from ptrnet.runs import kept_path
from ptrnet.runs.checkpoint import load_checkpoint
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.training.loop import train

torch.set_num_threads(1)


def run_config(**changes) -> RunConfig:
    train_cfg = TrainConfig(task="sort", sizes="4-6", steps=6, batch_size=4, val_count=8,
                            val_every=2, log_every=1, threads=1, workers=0)  # fmt: skip
    return RunConfig(ModelConfig(input_dim=1, hidden=8), replace(train_cfg, **changes))


def kept_steps(run_dir) -> list[int]:
    return sorted(int(p.stem.split("-")[1]) for p in (run_dir / "kept").glob("step-*.safetensors"))


def test_every_validation_at_a_multiple_is_kept(tmp_path):
    train(run_config(keep_every=4, steps=8), tmp_path, progress=False)
    assert kept_steps(tmp_path) == [4, 8]
    kept = load_checkpoint(kept_path(str(tmp_path), 8))
    last = load_checkpoint(str(tmp_path / "last.safetensors"))
    assert kept.step == 8 and kept.info["kept"]["step"] == 8
    assert set(kept.info["kept"]["metrics"]) >= {"exact_match", "position_accuracy"}
    assert all(torch.equal(kept.model_state[k], v) for k, v in last.model_state.items())
    assert kept.optimizer_state is None  # weights only, like best


def test_off_by_default(tmp_path):
    train(run_config(), tmp_path, progress=False)
    assert not (tmp_path / "kept").exists()


def test_kept_weights_load_and_start_a_run(tmp_path):
    train(run_config(keep_every=2), tmp_path / "a", progress=False)
    path = kept_path(str(tmp_path / "a"), 4)
    assert load_model(path).step == 4
    result = train(run_config(init_from=path, steps=2), tmp_path / "b", progress=False)
    assert result.step == 2


def test_a_resumed_run_may_start_keeping(tmp_path):
    train(run_config(steps=4), tmp_path, progress=False)
    train(run_config(steps=8, keep_every=2), tmp_path, resume=True, progress=False)
    assert kept_steps(tmp_path) == [6, 8]


@pytest.mark.parametrize("keep_every", [3, -2, 1.5, True])
def test_keep_every_must_be_a_multiple_of_val_every(keep_every):
    with pytest.raises(ValueError, match="keep_every"):
        run_config(keep_every=keep_every)


def test_cli_flag(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["train", "sort", "-n", "4-5", "--steps", "4", "--batch-size", "4", "--hidden", "8",
            "--val-count", "8", "--val-every", "2", "--keep-every", "2", "--threads", "1",
            "--workers", "0", "--out", str(out), "-q"]  # fmt: skip
    assert main(args) == 0
    assert kept_steps(out) == [2, 4]
    assert main([*args[:-3], "--keep-every", "3", "--out", str(tmp_path / "bad"), "-q"]) != 0
    assert "multiple of val_every" in capsys.readouterr().err
