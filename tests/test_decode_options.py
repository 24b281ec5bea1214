"""DecodeOptions: every decoding choice validated in one place, and the task card it reads."""

from __future__ import annotations

import dataclasses

import pytest

from ptrnet.decoding.options import DecodeOptionError, DecodeOptions
from ptrnet.tasks import POINT_TASKS, get_task


def test_defaults_are_greedy_under_the_tasks_rules():
    options = DecodeOptions()
    assert (options.strategy, options.pick, options.width) == ("greedy", "likely", 1)
    assert (options.average_views, options.search_views, options.multistart) == (1, 1, 0)
    assert options.constraints is None
    assert DecodeOptions().for_task(get_task("tsp")).constraints == "task"
    for name in POINT_TASKS:
        assert DecodeOptions().for_task(get_task(name)).constraints == "task", name


def test_the_paper_protocol_decodes_with_each_tasks_paper_mask():
    paper = DecodeOptions(protocol="paper")
    assert paper.for_task(get_task("convex_hull")).constraints == "none"
    assert paper.for_task(get_task("delaunay")).constraints == "none"
    assert paper.for_task(get_task("tsp")).constraints == "task"
    given = DecodeOptions(protocol="paper", constraints="task")
    assert given.for_task(get_task("convex_hull")).constraints == "task"
    with pytest.raises(DecodeOptionError, match="unknown protocol"):
        DecodeOptions(protocol="strict")
    assert DecodeOptions(constraints="none").for_task(get_task("tsp")).constraints == "none"
    assert DecodeOptions("beam", beam_width=3).width == 3


def test_options_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        DecodeOptions().average_views = 4  # type: ignore[misc]


@pytest.mark.parametrize(
    "fields, option, message",
    [
        ({"strategy": "topk"}, "strategy", "unknown strategy 'topk'"),
        ({"constraints": "strict"}, "constraints", "unknown constraints 'strict'"),
        ({"pick": "best"}, "pick", "unknown pick 'best'"),
        ({"average_views": 3}, "average_views", "average_views must be 1, 2 or 4"),
        ({"strategy": "multistart"}, "strategy", "multistart is not a strategy"),
        ({"beam_width": 0}, "beam_width", "beam_width must be an integer >= 1"),
        ({"beam_width": True}, "beam_width", "beam_width must be an integer >= 1"),
        ({"batch_size": 0}, "batch_size", "batch_size must be an integer >= 1"),
        ({"temperature": 0.0}, "temperature", "temperature must be > 0"),
        ({"temperature": float("inf")}, "temperature", "temperature must be finite"),
        ({"seed": 1.5}, "seed", "seed must be an integer"),
        ({"seed": -1}, "seed", r"seed must lie in 0..2\^64 - 1, got -1"),
        ({"seed": 2**64}, "seed", r"seed must lie in 0..2\^64 - 1"),
        ({"device": "tpu"}, "device", "unknown device 'tpu'"),
        ({"pick": "shortest"}, "pick", "pick 'shortest' needs several candidates"),
        ({"samples": 0}, "samples", "samples must be an integer >= 1"),
        ({"samples": 4}, "samples", "samples > 1 needs sampling, not greedy decoding"),
        ({"strategy": "beam", "samples": 2}, "samples", "needs sampling, not beam"),
        ({"strategy": "sample", "pick": "shortest"}, "pick", "needs several candidates"),
    ],
)
def test_invalid_values_are_refused_with_the_option_named(fields, option, message):
    with pytest.raises(DecodeOptionError, match=message) as caught:
        DecodeOptions(**fields)
    assert caught.value.option == option
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize(
    "task_name, fields, message",
    [
        ("sort", {"average_views": 2}, "label order depends"),
        ("delaunay", {"average_views": 4}, "label order depends"),
        ("sort", {"search_views": 8}, "a flip reverses a sorted order"),
        ("convex_hull", {"strategy": "beam", "pick": "shortest"}, "convex_hull has not"),
    ],
)
def test_combinations_a_task_cannot_use_are_refused_by_for_task(task_name, fields, message):
    options = DecodeOptions(**fields)  # valid on its own
    with pytest.raises(DecodeOptionError, match=message):
        options.for_task(get_task(task_name))


def test_combinations_a_task_can_use_pass():
    DecodeOptions(search_views=8).for_task(get_task("delaunay"))
    DecodeOptions(average_views=4).for_task(get_task("convex_hull"))
    DecodeOptions(multistart=8).for_task(get_task("delaunay"))
    tsp = get_task("tsp")
    options = DecodeOptions("beam", pick="shortest").for_task(tsp)
    assert options.reranker(tsp) == tsp.sequence_cost
    assert DecodeOptions("beam").reranker(tsp) is None


@pytest.mark.parametrize("task_name", list(POINT_TASKS))
def test_every_task_card_is_complete_and_consistent(task_name):
    """What the rest of ptrnet reads from a task, present and pointing at real metrics."""
    from ptrnet.viz.draw import DRAWERS

    task = get_task(task_name)
    assert task.validation_metric in task.metric_keys
    assert task.validity_metric is None or task.validity_metric in task.metric_keys
    assert set(task.summary_metrics) <= set(task.metric_keys)
    assert task.paper_constraints in ("none", "task")
    assert task.rate_metrics <= set(task.metric_keys)
    models = {model for model, _ in task.paper_results}
    assert task.paper_model is None or task.paper_model in models
    assert task.drawing in DRAWERS
    assert task.demo_sizes and min(task.demo_sizes) >= task.min_n
    assert isinstance(task.lower_is_better, bool)


def test_label_checks_and_rerank_cost_live_on_the_task():
    import numpy as np

    square = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    tsp, hull, delaunay = get_task("tsp"), get_task("convex_hull"), get_task("delaunay")
    assert "expected n + 1 = 5" in tsp.label_problem(square, np.array([0, 1, 2, 3]))
    assert tsp.label_problem(square, np.array([0, 1, 2, 3, 0])) is None
    assert "closed by repeating" in hull.label_problem(square, np.array([0, 1, 2, 3]))
    assert "not a multiple of 3" in delaunay.label_problem(square, np.array([0, 1]))
    assert "not a valid tsp label" in tsp.label_problem(square, np.array([0, 1, 1, 3, 0]))
    assert tsp.sequence_cost(square, np.array([0, 1, 2, 3, 0])) == pytest.approx(4.0)
    assert tsp.sequence_cost(square, np.array([0, 1, 1, 3, 0])) == float("inf")


def test_random_streams_are_distinct():
    from ptrnet.tasks import Stream

    assert len({int(s) for s in Stream}) == len(Stream)
    assert Stream.SAMPLING != Stream.TEST  # they once shared stream 5


def test_multistart_is_taken_by_a_task_that_keeps_its_first_input_first():
    """``Task.rotated_starts`` false (a routing instance's depot is its first input): its runs
    are forced to start at every other input instead of reading rotated copies
    (tests/test_multistart_forced.py), so the option passes as it does for any task."""
    from ptrnet.tasks.sort import SortTask

    class DepotFirst(SortTask):
        name = "toy_depot_first"
        rotated_starts = False

    DecodeOptions(multistart=1).for_task(DepotFirst())
    DecodeOptions(multistart=1).for_task(get_task("cvrp"))
