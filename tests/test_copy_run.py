"""``ptrnet train copy`` in the loop every run shares: the same run files as a point task's run,
exact resume, a stop between two steps, the data of the documented command (streams 1 and 2),
the configuration's names and one-line errors, and the migrated bundled model."""

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from ptrnet.cli.main import main
from ptrnet.inference import bundled_model_dir
from ptrnet.runs.csvlog import columns_for
from ptrnet.tasks import get_task
from ptrnet.text.checkpoint import load_copy_model
from ptrnet.text.config import CopyTrainConfig
from ptrnet.text.train import CopyRunConfig, CopyTrainer, train_copy
from ptrnet.text.vocab import Vocabulary
from ptrnet.training.runloop import TrainingStopped

torch.set_num_threads(1)

TINY = {"embed": 4, "hidden": 8, "batch_size": 8, "val_count": 4, "vocab_pairs": 400}
TRAIN = ("train", "copy", "--threads", "1", "-q", "--embed", "4", "--hidden", "8")
TRAIN += ("--batch-size", "8", "--val-count", "4", "--val-every", "2")
RUN_FILES = {"config.json", "log.csv", "last.safetensors", "best.safetensors", "best.json"}
COPY = get_task("copy")


def tiny(**changes) -> CopyTrainConfig:
    return CopyTrainConfig(**{**TINY, "steps": 4, "val_every": 2, **changes})


def weights(path) -> dict[str, torch.Tensor]:
    return load_copy_model(path).model.state_dict()


def test_a_run_writes_a_point_runs_files(tmp_path):
    result = train_copy(tiny(log_every=1), tmp_path / "run", log=lambda line: None)
    run = tmp_path / "run"
    assert {p.name for p in run.iterdir()} == RUN_FILES
    with open(run / "log.csv", newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert list(rows[0]) == columns_for(COPY.metric_keys)
    assert [int(r["step"]) for r in rows] == [1, 2, 3, 4]  # log_every 1, validations at 2 and 4
    assert [bool(r["val_exact_match"]) for r in rows] == [False, True, False, True]
    config = json.loads((run / "config.json").read_text())
    assert CopyRunConfig.from_dict(config).train == tiny(log_every=1)
    best = json.loads((run / "best.json").read_text())
    assert best["step"] == result.best["step"] and best["metric"] == "exact_match"
    assert load_copy_model(run / "last.safetensors").step == 4 == result.step


def test_resume_continues_exactly(cli, tmp_path):
    assert cli(*TRAIN, "--steps", "6", "--out", "whole")[0] == 0
    assert cli(*TRAIN, "--steps", "4", "--out", "split")[0] == 0
    assert cli("train", "copy", "--resume", "--steps", "6", "--out", "split", "-q")[0] == 0
    whole, split = (
        weights(tmp_path / "whole/last.safetensors"),
        weights(tmp_path / "split/last.safetensors"),
    )
    assert whole.keys() == split.keys()
    assert all(torch.equal(whole[k], split[k]) for k in whole)
    logs = [(tmp_path / name / "log.csv").read_text().splitlines() for name in ("whole", "split")]
    columns = [line.split(",")[:2] + line.split(",")[5:] for line in logs[0]]  # no times
    assert columns == [line.split(",")[:2] + line.split(",")[5:] for line in logs[1]]


def test_resume_refuses_what_would_make_another_run(cli, tmp_path):
    assert cli(*TRAIN, "--steps", "2", "--out", "run")[0] == 0
    status, _, err = cli("train", "copy", "--resume", "--lr", "0.5", "--out", "run")
    assert status == 2 and err.startswith("ptrnet: error: cannot change lr from 0.002 to 0.5")
    status, _, err = cli("train", "copy", "--resume", "--out", "nothing")
    assert (status, err) == (
        2,
        "ptrnet: error: nothing to resume: nothing/last.safetensors does not exist\n",
    )


def test_a_stop_request_ends_the_run_between_steps_keeping_its_last_validation(tmp_path):
    asked = iter([False] * 3 + [True] * 100)  # before step 1, after steps 1, 2, then stop
    with pytest.raises(TrainingStopped) as stopped:
        train_copy(tiny(), tmp_path, log=lambda line: None, should_stop=lambda: next(asked))
    assert stopped.value.step == 3
    assert load_copy_model(tmp_path / "last.safetensors").step == 2


def test_the_data_are_the_documented_commands_streams(tmp_path):
    """Batches: examples ``s*B ..`` of stream 1; validation: stream 2; the vocabulary: the first
    ``vocab_pairs`` of stream 1 (the bundled model's 193 words)."""
    trainer = CopyTrainer(tiny(), str(tmp_path), resume=False)
    first, second = list(trainer.batches(0))[:2]
    expected = list(COPY.generate_pairs(8, 1, 1, start=8))
    assert [e.words for e in second.encoded] == [
        trainer.vocab.encode_source(p.source).words for p in expected
    ]
    assert first.size == 8
    assert trainer.valid == list(COPY.generate_pairs(4, 1, 2))
    bundled = load_copy_model(Path(bundled_model_dir("copy")) / "best.safetensors")
    train = CopyTrainConfig.from_dict(bundled.train)
    vocab = Vocabulary.build(COPY.generate_pairs(train.vocab_pairs, train.seed, 1), 10)
    assert vocab.words == bundled.vocab.words


def test_the_bundled_models_config_loads_under_the_shared_names():
    folder = Path(bundled_model_dir("copy"))
    best = json.loads((folder / "best.json").read_text())
    config = CopyRunConfig.from_dict(best["config"])
    model = load_copy_model(folder / "best.safetensors")
    assert config.train == CopyTrainConfig.from_dict(model.train)
    assert config.model == model.model.config
    assert config.train.clip_norm == 2.0 and "clip" not in best["config"]["train"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"clip_norm": 0}, "clip_norm must be a positive number, got 0"),
        ({"lr": -1.0}, "lr must be a positive number, got -1.0"),
        ({"steps": 0}, "steps must be a positive integer, got 0"),
        ({"batch_size": 2.5}, "batch_size must be a positive integer, got 2.5"),
        ({"seed": -1}, "seed must be a non-negative integer, got -1"),
        ({"hidden": 7}, "hidden must be an even integer >= 2"),
        ({"min_count": 0}, "min_count must be a positive integer, got 0"),
        ({"keep_every": 3}, "keep_every must be 0 (off) or a multiple of val_every (250)"),
        ({"task": "sort"}, "task sort does not take sentences"),
        ({"arch": "lstm"}, "unknown arch 'lstm' for task copy"),
    ],
)
def test_bad_values_are_one_line_errors(change, message):
    with pytest.raises(ValueError) as caught:
        CopyTrainConfig(**change)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_the_shared_options_have_the_point_tasks_names(cli, tmp_path):
    status, _, err = cli(
        *TRAIN, "--steps", "2", "--clip-norm", "0.5", "--log-every", "1", "--out", "r"
    )
    assert (status, err) == (0, "")
    train = json.loads((tmp_path / "r/config.json").read_text())["train"]
    assert (train["clip_norm"], train["log_every"]) == (0.5, 1)


def test_sigterm_stops_a_copy_run_as_any_training(tmp_path):
    """SIGTERM: a clean stop between two steps, exit 143, the note naming ``--resume``, and
    ``last`` of the last validation; the run then resumes."""
    run = tmp_path / "run"
    command = [sys.executable, "-m", "ptrnet", *TRAIN, "--steps", "100000", "--out", str(run)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not (run / "last.safetensors").exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143
    assert err.decode().splitlines()[-1] == (
        f"ptrnet: interrupted (SIGTERM); {run} keeps its checkpoint of the last validation "
        f"(ptrnet train copy --resume --out {run} continues from it)"
    )
    step = load_copy_model(run / "last.safetensors").step
    assert step % 2 == 0 and step > 0
    resume = ["train", "copy", "--resume", "--steps", str(step + 2), "--out", str(run), "-q"]
    assert main(resume) == 0
    assert load_copy_model(run / "last.safetensors").step == step + 2
