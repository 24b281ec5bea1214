"""``ptrnet train span`` in the loop every run shares: the run files, exact resume, the pools each
role draws from, the checkpoint read back safely, and the classifier's limit (it cannot name an
answer it never saw)."""

import csv
import json
import re

import pytest
import torch

from ptrnet.runs.checkpoint import CheckpointError
from ptrnet.runs.csvlog import columns_for
from ptrnet.tasks import Stream, get_task
from ptrnet.tasks.span import KINDS, MONTHS, pool_of, split_source
from ptrnet.text.span import AnswerVocabulary
from ptrnet.text.span_checkpoint import load_span_model
from ptrnet.text.span_config import SpanTrainConfig
from ptrnet.text.span_eval import answer_sources
from ptrnet.text.span_train import SpanRunConfig, train_span
from ptrnet.training.runloop import TrainingStopped

torch.set_num_threads(1)

SPAN = get_task("span")
TINY = {"embed": 8, "hidden": 8, "batch_size": 16, "val_count": 8, "vocab_pairs": 200}
TINY |= {"min_count": 2, "answer_pairs": 480}
TRAIN = ("train", "span", "--threads", "1", "-q", "--embed", "8", "--hidden", "8")
TRAIN += ("--batch-size", "16", "--val-count", "8", "--val-every", "10")
RUN_FILES = {"config.json", "log.csv", "last.safetensors", "best.safetensors", "best.json"}


def tiny(**changes) -> SpanTrainConfig:
    return SpanTrainConfig(**{**TINY, "steps": 4, "val_every": 2, **changes})


def test_a_run_writes_every_runs_files(tmp_path):
    result = train_span(tiny(log_every=1), tmp_path / "run", log=lambda line: None)
    run = tmp_path / "run"
    assert {p.name for p in run.iterdir()} == RUN_FILES
    with open(run / "log.csv", newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert list(rows[0]) == columns_for(SPAN.metric_keys)
    assert [int(r["step"]) for r in rows] == [1, 2, 3, 4]
    config = json.loads((run / "config.json").read_text())
    assert SpanRunConfig.from_dict(config).train == tiny(log_every=1)
    loaded = load_span_model(run / "last.safetensors")
    assert loaded.step == 4 == result.step and loaded.optimizer_state is not None
    assert json.loads((run / "best.json").read_text())["metric"] == "exact_match"


def test_resume_continues_exactly(cli, tmp_path):
    """Thirty steps in one go, or twenty then resumed to thirty: the same weights and log."""
    assert cli(*TRAIN, "--steps", "30", "--out", "whole")[0] == 0
    assert cli(*TRAIN, "--steps", "20", "--out", "split")[0] == 0
    assert cli("train", "span", "--resume", "--steps", "30", "--out", "split", "-q")[0] == 0
    whole, split = (
        load_span_model(tmp_path / name / "last.safetensors").model.state_dict()
        for name in ("whole", "split")
    )
    assert whole.keys() == split.keys()
    assert all(torch.equal(whole[k], split[k]) for k in whole)
    logs = [(tmp_path / name / "log.csv").read_text().splitlines() for name in ("whole", "split")]
    assert [r.split(",")[:2] + r.split(",")[5:] for r in logs[0]] == [
        r.split(",")[:2] + r.split(",")[5:] for r in logs[1]
    ]  # all but the times
    status, _, err = cli("train", "span", "--resume", "--lr", "0.5", "--out", "split")
    assert status == 2 and err.startswith("ptrnet: error: cannot change lr from 0.002 to 0.5")


def test_each_role_draws_its_own_pool():
    """Training examples use training words only, validation examples validation words: the
    roles map to the streams whose pools they name (not the copy task's 1 and 2)."""
    for role, pool in ((Stream.TRAIN, "train"), (Stream.VALIDATION, "validation")):
        pairs = SPAN.generate_pairs(30, 1, SPAN.stream(role))
        closed = {*MONTHS, *KINDS, "dollars", *map(str, range(1, 29))}  # any pool's words
        words = {w for p in pairs for w in p.target} - closed
        assert len(words) > 20 and all(pool_of(w) == pool for w in words)


def test_a_damaged_checkpoint_is_one_line(tmp_path):
    train_span(tiny(), tmp_path / "run", log=lambda line: None)
    path = tmp_path / "run" / "best.safetensors"
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError) as caught:
        load_span_model(path)
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"arch": "pointer_generator"}, "arch"),
        ({"task": "copy"}, "not a span task"),
        ({"clip_norm": 0}, "clip_norm must be a positive number"),
        ({"answer_pairs": 0}, "answer_pairs must be a positive integer"),
    ],
)
def test_bad_values_are_one_line_errors(change, message):
    with pytest.raises(ValueError, match=message):
        SpanTrainConfig(**change)


def test_the_classifier_never_names_an_unseen_answer(tmp_path):
    """Test questions' answers are held-out names, outside the classifier's classes, so its
    answer to each is another (a training answer), never the right one."""
    cfg = tiny(arch="classifier", steps=20, val_every=10)
    train_span(cfg, tmp_path / "run", log=lambda line: None)
    loaded = load_span_model(tmp_path / "run" / "best.safetensors")
    assert loaded.answers is not None
    train_answers = AnswerVocabulary(list(SPAN.generate_pairs(cfg.answer_pairs, cfg.seed, 0)))
    assert loaded.answers.answers == train_answers.answers
    test = list(SPAN.generate_pairs(100, 4, Stream.TEST))
    assert all(p.target not in set(train_answers.answers) for p in test)
    answers = answer_sources(loaded, [p.source for p in test])
    assert all(a in set(train_answers.answers[1:]) for a in answers)
    assert all(a != p.target for a, p in zip(answers, test, strict=True))
    assert all(split_source(p.source) for p in test)


def test_the_copy_configuration_refuses_a_span_arch():
    from ptrnet.text.config import CopyTrainConfig

    with pytest.raises(ValueError, match="span_pointer is not a pointer-generator's"):
        CopyTrainConfig(arch="span_pointer", task="span")


def test_a_stop_request_ends_the_run_between_steps_keeping_its_last_validation(tmp_path):
    asked = iter([False] * 3 + [True] * 100)  # before step 1, after steps 1, 2, then stop
    with pytest.raises(TrainingStopped) as stopped:
        train_span(tiny(), tmp_path, log=lambda line: None, should_stop=lambda: next(asked))
    assert stopped.value.step == 3
    assert load_span_model(tmp_path / "last.safetensors").step == 2


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda meta: meta.update(answers=[["x"], ["y"]]), "answers: [] first"),
        (lambda meta: meta["model"].update(hidden=9), "invalid span-task checkpoint"),
        (lambda meta: meta.update(vocabulary=[1, 2]), "not a string"),
        (lambda meta: meta.update(format="ptrnet-copy-1"), "not a span-task checkpoint"),
    ],
)
def test_checkpoint_metadata_that_does_not_fit_is_one_line(tmp_path, edit, problem):
    from ptrnet.io.atomic import atomic_write_bytes
    from ptrnet.runs.checkpoint import checksummed_file, read_checkpoint_file

    train_span(tiny(arch="classifier", steps=2), tmp_path / "run", log=lambda line: None)
    meta, tensors = read_checkpoint_file(tmp_path / "run" / "best.safetensors")
    edit(meta)
    path = tmp_path / "edited.safetensors"
    atomic_write_bytes(path, checksummed_file(tensors, meta))
    with pytest.raises(CheckpointError, match=re.escape(problem)) as caught:
        load_span_model(path)
    assert "\n" not in str(caught.value)
