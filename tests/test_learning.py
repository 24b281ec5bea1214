"""Learning, not only shapes: a small Ptr-Net learns to sort 5 numbers (and, with the constrained
loss, 10) on one CPU thread.

About a minute: 7000 Adam steps of 64 instances (448k fresh instances), hidden 128. The best
checkpoint (picked on decoded validation exact match) is then scored on a fresh set that neither
training nor validation saw. With these settings seeds 0-2 reach 97-98% exact match; the test
asks for 95%.
"""

import pytest
import torch

from ptrnet.decoding.options import DecodeOptions
from ptrnet.evaluation.evaluate import evaluate
from ptrnet.inference import load_model
from ptrnet.model import ModelConfig
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.tasks import SizeRange, get_task
from ptrnet.training.loop import train

torch.set_num_threads(1)

RECIPE = {
    "optimizer": "adam",
    "lr": 3e-3,
    "decay": 0.3,
    "decay_every": 2000,
    "batch_size": 64,
    "steps": 7000,
    "val_count": 500,
    "val_every": 1000,
    "log_every": 500,
    "threads": 1,
}


@pytest.mark.slow
def test_ptrnet_learns_to_sort_five_numbers(tmp_path):
    config = RunConfig(
        ModelConfig(input_dim=1, hidden=128), TrainConfig(task="sort", sizes="5", seed=0, **RECIPE)
    )
    result = train(config, tmp_path, progress=False)
    assert result.best["metric"] == "exact_match"
    task = get_task("sort")
    fresh = task.generate(SizeRange(5, 5), 2000, seed=2024, stream=7)  # unseen stream
    loaded = load_model(tmp_path, task)
    metrics = evaluate(
        loaded.model, task, fresh, [task.solve(p) for p in fresh], DecodeOptions(constraints="task")
    )
    assert metrics["valid_rate"] == 1.0
    assert metrics["exact_match"] >= 0.95, metrics


@pytest.mark.slow
def test_the_constrained_loss_learns_to_sort_ten_numbers_in_2000_steps(tmp_path):
    """With ``train_constraints="task"`` the softmax only compares unsorted numbers, so the model
    needs to learn "smallest remaining" rather than also "not yet output". Seeds 0 and 1 reach
    96.8% and 96.6% exact match at n = 10 in about 30 s; the plain loss reaches 49.5% (seed 0)."""
    recipe = {**RECIPE, "steps": 2000, "decay_every": 666, "val_every": 500}
    train_cfg = TrainConfig(task="sort", sizes="10", seed=0, train_constraints="task", **recipe)
    train(RunConfig(ModelConfig(input_dim=1, hidden=128), train_cfg), tmp_path, progress=False)
    task = get_task("sort")
    fresh = task.generate(SizeRange(10, 10), 2000, seed=2024, stream=7)
    loaded = load_model(tmp_path, task)
    metrics = evaluate(
        loaded.model, task, fresh, [task.solve(p) for p in fresh], DecodeOptions(constraints="task")
    )
    assert metrics["exact_match"] >= 0.93, metrics
