"""The bundled span model: its size, its configuration under the shared names, and the exact match
its COMMAND.md states on 200 held-out-name test questions, reproduced within one point."""

import re
from pathlib import Path

import torch

from ptrnet.inference import bundled_model_dir
from ptrnet.tasks import Stream, get_task
from ptrnet.text.span_config import SpanTrainConfig
from ptrnet.text.span_eval import evaluate_spans, load_span

torch.set_num_threads(1)

FOLDER = Path(bundled_model_dir("span"))
STATED = re.compile(
    r"first 200 test questions of seed (\d+)\D.*?exact_match (\d\.\d+), f1 (\d\.\d+)", re.S
)


def test_the_bundled_model_is_small_and_its_config_loads():
    assert (FOLDER / "best.safetensors").stat().st_size < 1_000_000
    loaded = load_span(None)
    assert loaded.config.arch == "span_pointer"
    assert SpanTrainConfig.from_dict(loaded.train).task == "span"


def test_the_bundled_model_reproduces_its_stated_exact_match():
    found = STATED.search((FOLDER / "COMMAND.md").read_text())
    assert found, "COMMAND.md states the exact match on the first 200 test questions"
    seed, exact, f1 = int(found.group(1)), float(found.group(2)), float(found.group(3))
    pairs = list(get_task("span").generate_pairs(200, seed, Stream.TEST))
    metrics, _ = evaluate_spans(load_span(None), pairs)
    assert abs(metrics["exact_match"] - exact) <= 0.01
    assert abs(metrics["f1"] - f1) <= 0.01
    assert metrics["exact_match"] >= 0.95
