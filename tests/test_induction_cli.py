"""``ptrnet train induction`` and ``ptrnet plot induction``: the run directory, the options the
lesson takes and refuses, the commands it does not serve, and the figure."""

from __future__ import annotations

import json
import re

import pytest
import torch

from ptrnet.cli.main import main
from ptrnet.induction.config import InductionConfig
from ptrnet.induction.measure import example_tokens, look

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("induction") / "run"
    argv = ["train", "induction", "--out", str(out), "--steps", "8", "--vocab", "12",
            "--length", "5", "--seed", "3", "--threads", "1"]  # fmt: skip
    assert main(argv) == 0
    return out


def test_train_writes_the_run_directory(run_dir, capsys):
    config = json.loads((run_dir / "config.json").read_text())
    assert (config["vocab"], config["length"], config["steps"], config["seed"]) == (12, 5, 8, 3)
    rows = (run_dir / "log.csv").read_text().splitlines()
    assert rows[0].split(",")[:5] == [
        "step", "loss", "first_half_loss", "repeat_loss", "repeat_accuracy",
    ]  # fmt: skip
    assert rows[-1].startswith("8,")
    measured = json.loads((run_dir / "measurements.json").read_text())
    assert measured["steps"] == 8 and measured["threads"] == 1
    assert 0 <= measured["repeat_accuracy"] <= 1 and 0 <= measured["induction_score"] <= 1
    assert (run_dir / "weights.safetensors").stat().st_size > 0


def test_dry_run_prints_the_measurements(capsys):
    assert main(["train", "induction", "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"repeated half: accuracy \d+\.\d\d%, loss", err)
    assert "first half: loss" in err
    assert "induction score" in err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["train", "induction", "--dry-run", "--hidden", "8"], "--hidden: task induction takes"),
        (["train", "sort", "--dry-run", "--vocab", "8"], "--vocab: task sort takes points"),
        (["train", "copy", "--dry-run", "--length", "8"], "--length: task copy takes sentences"),
        (["train", "induction", "--steps", "5"], "--out RUN_DIR is required"),
        (["train", "induction", "--dry-run", "--length", "1"], "length"),
        (["eval", "induction", "x.txt"], "induction is a lesson, not a task"),
        (["generate", "induction", "--count", "3", "-o", "x.txt"], "ptrnet train induction"),
    ],
)
def test_options_and_commands_the_lesson_refuses(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_used_run_directory_is_refused(run_dir, capsys):
    assert main(["train", "induction", "--out", str(run_dir), "--steps", "2"]) == 2
    assert "already holds a run" in capsys.readouterr().err


def test_plot_induction_draws_the_curves_and_both_layers(run_dir, tmp_path, monkeypatch):
    figures = []
    monkeypatch.setattr("ptrnet.viz.figures.save_png", lambda fig, path: figures.append(fig))
    assert main(["plot", "induction", str(run_dir), "--index", "2", "-o", "x.png"]) == 0
    curves, layer1, layer2 = figures[0].axes[:3]
    assert [line.get_label() for line in curves.lines][:2] == [
        "first half (unpredictable)", "repeated half",
    ]  # fmt: skip
    config = InductionConfig.from_dict(json.loads((run_dir / "config.json").read_text()))
    from ptrnet.induction.train import load_run

    seen = look(load_run(str(run_dir)), example_tokens(config, 2))
    shown = layer2.images[0].get_array()
    expected = seen["patterns"][-1][seen["induction_head"]].numpy()
    assert shown.shape == (config.context, config.context)
    assert abs(shown - expected).max() < 1e-6
    stripe = layer2.lines[0].get_xydata()  # (key, query) of the outlined cells
    assert [(q - k) for k, q in stripe] == [config.length - 1] * (config.length - 1)


def test_plot_induction_writes_a_png_and_refuses_a_folder_without_a_run(run_dir, tmp_path, capsys):
    out = tmp_path / "f.png"
    assert main(["plot", "induction", str(run_dir), "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["plot", "induction", str(tmp_path), "-o", str(out)]) == 1
    assert "no induction run here" in capsys.readouterr().err
