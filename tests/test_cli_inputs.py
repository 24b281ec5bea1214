"""Forgiving inputs on the command line: generate's default seed, train's sizes taken from
--data, validation on the user's own --val-data."""

import json

import numpy as np
import pytest
import torch

from ptrnet.cli.generate import DEFAULT_SEED
from ptrnet.cli.main import build_parser, main
from ptrnet.io.paper_format import write_examples

torch.set_num_threads(1)
TINY = ["--hidden", "8", "--batch-size", "4", "--steps", "2", "--val-every", "1", "--workers",
        "0", "--threads", "1", "-q"]  # fmt: skip


@pytest.fixture
def sort_files(tmp_path):
    rng = np.random.default_rng(3)
    train = tmp_path / "train.txt"
    write_examples(train, ((rng.random((n, 1)), None) for n in (4, 7, 5, 6, 4, 7, 6, 5)))
    val = tmp_path / "val.txt"
    write_examples(val, ((rng.random((6, 1)), None) for _ in range(5)))
    return train, val


def test_generate_has_a_stated_default_seed(tmp_path):
    help_text = build_parser()._subparsers._group_actions[0].choices["generate"].format_help()
    assert f"default: {DEFAULT_SEED}" in help_text
    args = ["generate", "sort", "-n", "5", "--count", "4", "-q", "-o"]
    assert main([*args, str(tmp_path / "a.txt")]) == 0
    assert main([*args, str(tmp_path / "b.txt"), "--seed", str(DEFAULT_SEED)]) == 0
    assert (tmp_path / "a.txt").read_bytes() == (tmp_path / "b.txt").read_bytes()


def test_train_takes_its_sizes_from_the_data_file(tmp_path, sort_files):
    train, _ = sort_files
    out = tmp_path / "run"
    assert main(["train", "sort", "--data", str(train), "--out", str(out), *TINY]) == 0
    assert json.loads((out / "config.json").read_text())["train"]["sizes"] == "4-7"
    dry = tmp_path / "dry"
    assert main(["train", "sort", "--data", str(train), "--dry-run", "--out", str(dry), "-q"]) == 0
    assert json.loads((dry / "config.json").read_text())["train"]["sizes"] == "4-7"


def test_train_validates_on_the_users_file(tmp_path, sort_files):
    train, val = sort_files
    out = tmp_path / "run"
    argv = ["train", "sort", "-n", "4-7", "--val-data", str(val), "--out", str(out), *TINY]
    assert main(argv) == 0
    assert json.loads((out / "config.json").read_text())["train"]["val_data"] == str(val)
    best = json.loads((out / "best.json").read_text())
    assert best["metrics"]["count"] == 5  # the file's five instances, not --val-count's 1000


def test_training_data_holding_a_validation_instance_is_refused(tmp_path, sort_files, capsys):
    train, _ = sort_files
    argv = ["train", "sort", "--data", str(train), "--val-data", str(train), "--out",
            str(tmp_path / "run"), *TINY]  # fmt: skip
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"ptrnet: error: {train}:1: instance is in the validation set ({train})")


def test_a_malformed_validation_file_is_a_one_line_error(tmp_path, sort_files, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text("0.1 0.2 output 1 2\n0.3 x\n")
    argv = ["train", "sort", "-n", "4-7", "--val-data", str(bad), "--out", str(tmp_path / "r"),
            *TINY]  # fmt: skip
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"ptrnet: error: {bad}:2:") and err.count("\n") == 1
