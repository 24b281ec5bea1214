"""Which validation becomes ``best``: the primary metric, then the task's secondary metric,
then the later step (a short run whose validations all score accuracy 0 keeps its last one)."""

import json
import math

import pytest
import torch

import ptrnet.training.loop as loop
from ptrnet.model import ModelConfig
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.runs.csvlog import read_log
from ptrnet.tasks import POINT_TASKS, get_task

torch.set_num_threads(1)


def tiny_run(task: str, steps: int = 6) -> RunConfig:
    train = TrainConfig(task=task, sizes="5-6", steps=steps, batch_size=4, val_count=8,
                        val_every=1, log_every=1, threads=1, workers=0)  # fmt: skip
    return RunConfig(ModelConfig(input_dim=get_task(task).dim, hidden=8), train)


def selection_key(task: str, metrics: dict) -> tuple:
    return get_task(task).selection_key(metrics)


def test_ties_on_the_primary_metric_go_to_the_secondary_one():
    hull = {"accuracy": 0.0, "area_coverage": 0.7}
    assert selection_key("convex_hull", hull) < selection_key(
        "convex_hull", {**hull, "area_coverage": 0.6}
    )
    assert selection_key("convex_hull", {**hull, "accuracy": 0.1, "area_coverage": 0.1}) < (
        selection_key("convex_hull", hull)
    )
    sort = {"exact_match": 0.0, "position_accuracy": 0.4}
    assert selection_key("sort", sort) < selection_key("sort", {**sort, "position_accuracy": 0.3})
    delaunay = {"triangle_coverage": 0.5, "accuracy": 0.2}
    assert selection_key("delaunay", delaunay) < selection_key(
        "delaunay", {**delaunay, "accuracy": 0.1}
    )
    # An undefined secondary value ranks below any defined one.
    assert selection_key("convex_hull", hull) < selection_key(
        "convex_hull", {**hull, "area_coverage": math.nan}
    )
    assert {name for name, task in POINT_TASKS.items() if task.tiebreak_metric} == {
        "sort",
        "convex_hull",
        "delaunay",
    }


def test_equal_validations_keep_the_later_checkpoint(tmp_path, monkeypatch):
    constant = {"accuracy": 0.0, "area_coverage": 0.5, "non_simple_rate": 0.0, "fail": False,
                "count": 8}  # fmt: skip
    monkeypatch.setattr(loop, "evaluate", lambda *args, **kwargs: dict(constant))
    result = loop.train(tiny_run("convex_hull", steps=4), tmp_path, progress=False)
    assert result.best["step"] == 4  # not 1, the first validation
    assert json.loads((tmp_path / "best.json").read_text())["step"] == 4


@pytest.mark.parametrize("task", ["convex_hull", "sort"])
def test_best_is_the_latest_of_the_top_ranked_validations(tmp_path, task):
    result = loop.train(tiny_run(task), tmp_path, progress=False)
    primary = {"convex_hull": "accuracy", "sort": "exact_match"}[task]
    rows = read_log(tmp_path / "log.csv")
    validations = [r for r in rows if r.get(f"val_{primary}") not in (None, "")]
    assert len(validations) == 6

    def rank(row):  # independent of selection_key: bigger is better, later wins ties
        second = float(row[f"val_{get_task(task).tiebreak_metric}"])
        return (float(row[f"val_{primary}"]), second if math.isfinite(second) else -1.0,
                int(row["step"]))  # fmt: skip

    assert result.best["step"] == int(max(validations, key=rank)["step"])
