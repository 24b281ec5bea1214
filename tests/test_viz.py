"""Pictures: drawing per task, the heatmap's error marks, training curves, ``ptrnet plot``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from ptrnet.decoding.options import DecodeOptions
from ptrnet.inference import LoadedModel
from ptrnet.io.errors import InputError
from ptrnet.io.paper_format import write_examples
from ptrnet.model import ModelConfig, build_model
from ptrnet.runs.checkpoint import save_checkpoint
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.tasks import POINT_TASKS, get_task, to_tokens
from ptrnet.tasks.base import trim_steps
from ptrnet.viz.curves import curves_figure, panel_columns, read_log, run_rates
from ptrnet.viz.figures import prediction_figure, save_png
from ptrnet.viz.trace import allowed_masks, decode_trace

torch.set_num_threads(1)
PNG = b"\x89PNG\r\n\x1a\n"


def tiny_model(task_name: str) -> LoadedModel:
    """A randomly initialised Ptr-Net posing as a trained model of ``task_name``."""
    torch.manual_seed(0)
    task = get_task(task_name)
    config = RunConfig(
        ModelConfig(input_dim=task.dim, hidden=8), TrainConfig(task=task_name, sizes="5", steps=1)
    )
    return LoadedModel(build_model(config.model).eval(), config, "<tiny>", 0, {})


def instance(task_name: str, n: int = 8, seed: int = 0) -> np.ndarray:
    return get_task(task_name).sample_points(np.random.default_rng(seed), n)


def test_steps_agree_by_token_and_step_and_not_past_the_reference():
    agrees = get_task("sort").steps_as_reference
    assert agrees(np.array([2, 1, 3, 0]), np.array([2, 3, 1, 0])).tolist() == [
        True,
        False,
        False,
        True,
    ]
    assert agrees(np.array([1, 2, 0]), np.array([1, 0])).tolist() == [True, False, False]


def test_a_tour_run_the_other_way_round_agrees_with_the_reference_at_every_step():
    """Tokens of city c are c + 1: the reference 0-1-2-3-4-0 backwards is 0-4-3-2-1-0."""
    tsp = get_task("tsp")
    ref = to_tokens(np.array([0, 1, 2, 3, 4, 0]))
    assert tsp.steps_as_reference(to_tokens(np.array([0, 4, 3, 2, 1, 0])), ref).all()
    # one swap (0-1-3-2-4-0): edges 1-3 and 2-4 are not the reference's, 3-2 is (reversed)
    swapped = tsp.steps_as_reference(to_tokens(np.array([0, 1, 3, 2, 4, 0])), ref)
    assert swapped.tolist() == [True, True, False, True, False, True, True]
    # the same tour from another start: the start is on it, every edge is the reference's
    other = tsp.steps_as_reference(to_tokens(np.array([2, 1, 0, 4, 3, 2])), ref)
    assert other.all()


def test_a_hull_from_another_vertex_agrees_and_a_wrong_vertex_does_not():
    hull = get_task("convex_hull")
    ref = to_tokens(np.array([0, 2, 4, 6, 0]))
    assert hull.steps_as_reference(to_tokens(np.array([4, 6, 0, 2, 4])), ref).all()
    assert hull.steps_as_reference(to_tokens(np.array([6, 4, 2, 0, 6])), ref).all()
    # input 5 is not a hull vertex: the start there, and both edges through it, disagree
    wrong = hull.steps_as_reference(to_tokens(np.array([5, 2, 4, 6, 5])), ref)
    assert wrong.tolist() == [False, False, True, True, False, True]
    # sort keeps the step-by-step rule
    assert get_task("sort").cycle_answer is False


def test_the_heatmap_marks_a_reversed_tour_as_the_reference(tmp_path):
    task, points = get_task("tsp"), instance("tsp")
    ref = task.solve(points)
    backwards = np.append(ref[0], ref[-2::-1])
    tokens = to_tokens(backwards)
    probs = np.eye(len(points) + 1)[tokens]
    fig = prediction_figure(task, points, ref, backwards, probs, tokens, "t")
    agree, differ = (len(c.get_offsets()) for c in fig.axes[1].collections)
    assert (agree, differ) == (len(tokens), 0)
    legend = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert legend == [
        "chosen, an edge of the reference tour",
        "chosen, not an edge of the reference tour",
    ]


def test_trim_steps_stops_after_the_first_end_token():
    assert trim_steps(np.array([3, 1, 0, 0, 0])) == 3
    assert trim_steps(np.array([3, 1])) == 2


@pytest.mark.parametrize("task_name", list(POINT_TASKS))
def test_trace_matches_the_decoded_sequence_and_its_mask(task_name):
    task, points = get_task(task_name), instance(task_name)
    trace = decode_trace(tiny_model(task_name), task, points, DecodeOptions(constraints="task"))
    assert np.array_equal(trace.tokens[: len(trace.sequence)] - 1, trace.sequence)
    assert trace.probs.shape == trace.allowed.shape == (len(trace.tokens), len(points) + 1)
    np.testing.assert_allclose(trace.probs.sum(axis=1), 1.0, rtol=1e-5)
    assert not np.any(trace.probs[~trace.allowed] > 0)  # masked tokens get no probability
    assert trace.allowed[np.arange(len(trace.tokens)), trace.tokens].all()


def test_allowed_masks_grey_out_already_chosen_sort_inputs():
    masks = allowed_masks(get_task("sort"), np.zeros((3, 1)), np.array([2, 1, 3, 0]), "task")
    assert masks.tolist() == [
        [False, True, True, True],
        [False, True, False, True],
        [False, False, False, True],
        [True, False, False, False],
    ]


@pytest.mark.parametrize("task_name", list(POINT_TASKS))
def test_prediction_figure_renders_for_every_task(task_name, tmp_path):
    task, points = get_task(task_name), instance(task_name)
    trace = decode_trace(tiny_model(task_name), task, points)
    ref = task.solve(points)
    fig = prediction_figure(task, points, ref, trace.sequence, trace.probs, trace.tokens, "t")
    assert len(fig.axes) == 3  # instance, heatmap, colorbar
    heat = fig.axes[1]
    agrees = task.steps_as_reference(trace.tokens, to_tokens(ref))
    marks = [c.get_offsets() for c in heat.collections]
    assert [len(m) for m in marks] == [int(agrees.sum()), int((~agrees).sum())]
    save_png(fig, tmp_path / "p.png")
    assert (tmp_path / "p.png").read_bytes().startswith(PNG)


def test_exact_only_figure_has_one_panel():
    task, points = get_task("tsp"), instance("tsp")
    fig = prediction_figure(task, points, task.solve(points))
    assert len(fig.axes) == 1


def write_log(path, rows: list[str]) -> None:
    header = "step,examples,loss,lr,examples_per_s,elapsed_s,val_tf_loss,val_accuracy,val_fail"
    path.write_text("\n".join([header, *rows]) + "\n")


def test_curves_read_blanks_as_gaps_and_flags_as_numbers(tmp_path):
    write_log(
        tmp_path / "log.csv",
        ["50,6400,2.1,0.001,900,7,,,", "100,12800,1.5,0.001,950,14,1.4,0.25,False"],
    )
    log = read_log(tmp_path)
    assert np.isnan(log["val_accuracy"][0]) and log["val_accuracy"][1] == 0.25
    assert log["val_fail"][1] == 0.0
    panels = panel_columns(log, frozenset({"accuracy"}))
    assert panels == {
        "loss": ["loss", "val_tf_loss"],
        "decoded validation rates": ["val_accuracy"],
        "other decoded validation metrics": ["val_fail"],
        "throughput": ["examples_per_s"],
    }
    fig = curves_figure(log, rates=frozenset({"accuracy"}))
    assert len(fig.axes) == 4
    assert [t.get_text() for t in fig.axes[2].get_yticklabels()] == ["no", "yes"]  # val_fail
    del log["val_fail"]  # no other metric: no panel for them
    assert len(curves_figure(log, rates=frozenset({"accuracy"})).axes) == 3


def test_plot_curves_draws_a_tsp_runs_gap_in_percent_apart_from_its_length(tmp_path):
    from ptrnet.cli.plot import curves_figure_for

    (tmp_path / "config.json").write_text('{"train": {"task": "tsp"}}')
    (tmp_path / "log.csv").write_text(
        "step,loss,lr,examples_per_s,elapsed_s,val_tf_loss,val_valid_rate,val_mean_length,"
        "val_mean_gap\n50,2.1,0.001,900,7,,,,\n100,1.5,0.001,950,14,1.4,1.0,2.95,0.0321\n"
    )
    loss, rates, others, speed = curves_figure_for(str(tmp_path)).axes
    assert [ax.get_ylabel() for ax in (loss, rates, others, speed)] == [
        "loss",
        "percent",
        "mean length",
        "examples per second",
    ]
    assert all(ax.get_xlabel() == "training step" for ax in (loss, rates, others, speed))
    drawn = {line.get_label(): line.get_ydata()[-1] for line in rates.lines}
    assert drawn == pytest.approx({"valid rate": 100.0, "mean gap": 3.21})
    assert [(line.get_label(), line.get_ydata()[-1]) for line in others.lines] == [
        ("mean length", 2.95)
    ]


def test_curves_rates_come_from_the_runs_task_or_every_task_without_a_config(tmp_path):
    (tmp_path / "log.csv").write_text("step,loss\n1,0.5\n")
    assert run_rates(tmp_path) >= {"mean_gap", "accuracy", "exact_match"}
    assert "mean_length" not in run_rates(tmp_path / "log.csv")
    (tmp_path / "config.json").write_text('{"train": {"task": "delaunay"}}')
    assert run_rates(tmp_path / "log.csv") == get_task("delaunay").rate_metrics


def test_curves_name_the_line_and_column_of_a_bad_cell(tmp_path):
    (tmp_path / "log.csv").write_text("step,loss\n1,0.5\n\n2,abc\n")  # a blank line counts
    with pytest.raises(InputError, match=r"log\.csv:4: column 'loss': 'abc' is not a number"):
        read_log(tmp_path)


def test_curves_reject_a_log_without_steps(tmp_path):
    (tmp_path / "log.csv").write_text("loss\n1.0\n")
    with pytest.raises(InputError, match="step"):
        read_log(tmp_path / "log.csv")


@pytest.mark.parametrize(
    "rows, line, cells",
    [
        (["1,0.5", "2,0.4,9"], 3, "3 cells"),  # the extra cell was dropped silently
        (["1,0.5,9", "2,0.4"], 2, "3 cells"),  # in the first row: a traceback
        (["1,0.5", "2"], 3, "1 cell"),  # a short row was read as gaps
    ],
)
def test_plot_curves_refuses_a_row_whose_cells_do_not_match_the_header(
    rows, line, cells, tmp_path, capsys
):
    (tmp_path / "log.csv").write_text("\n".join(["step,loss", *rows]) + "\n")
    assert plot("curves", tmp_path, "-o", tmp_path / "c.png") == 1
    err = capsys.readouterr().err
    assert err == (
        f"ptrnet: error: {tmp_path / 'log.csv'}:{line}: {cells}, but the header has 2 columns\n"
    )
    assert not (tmp_path / "c.png").exists()


@pytest.fixture
def hull_file(tmp_path):
    task = get_task("convex_hull")
    points = [instance("convex_hull", 6, seed) for seed in range(3)]
    path = tmp_path / "hull.txt"
    write_examples(path, zip(points, [task.solve(points[0]), None, None], strict=True))
    return path


def plot(*argv: str) -> int:
    from ptrnet.cli.main import main

    return main(["plot", *map(str, argv)])


def test_plot_cli_task_model_and_curves(tmp_path, hull_file, capsys):
    assert (
        plot("convex_hull", hull_file, "--index", 1, "--model", "none", "-o", tmp_path / "a.png")
        == 0
    )
    loaded = tiny_model("convex_hull")
    save_checkpoint(tmp_path / "m.safetensors", loaded.config, 0, loaded.model)
    out = tmp_path / "b.png"
    assert plot(tmp_path / "m.safetensors", hull_file, "--decode", "beam", "-o", out) == 0
    write_log(tmp_path / "log.csv", ["50,6400,2.1,0.001,900,7,1.9,0.1,False"])
    assert plot("curves", tmp_path, "-o", tmp_path / "c.png") == 0
    for name in ("a", "b", "c"):
        assert (tmp_path / f"{name}.png").read_bytes().startswith(PNG)


def test_plot_cli_takes_the_bundled_model_by_default_or_by_name(tmp_path, hull_file):
    for name, model in (("default", ()), ("bundled", ("--model", "bundled"))):
        out = tmp_path / f"{name}.png"
        assert plot("convex_hull", hull_file, *model, "--device", "cpu", "-o", out) == 0
        assert out.read_bytes().startswith(PNG)
    assert plot("convex_hull", hull_file, "--device", "tpu", "-o", tmp_path / "x.png") == 2


def test_plot_cli_errors_are_one_line(tmp_path, hull_file, capsys):
    assert plot("hull", hull_file, "-o", tmp_path / "x.png") == 2
    assert plot("convex_hull", hull_file, "--index", 3, "-o", tmp_path / "x.png") == 2
    assert plot("curves", tmp_path, "-o", tmp_path / "x.png") == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 3 and all(line.startswith("ptrnet: error: ") for line in lines)
    assert "neither a task" in lines[0] and "fewer than 4" in lines[1] and "log.csv" in lines[2]


def test_plot_cli_refuses_a_zero_beam_and_a_vocabulary_too_small(tmp_path, hull_file, capsys):
    assert plot("convex_hull", hull_file, "--beam-width", 0, "-o", tmp_path / "x.png") == 2
    assert "argument --beam-width: expected an integer from 1 to 1,024" in capsys.readouterr().err
    seq2seq = "ptrnet/bundled/convex_hull_seq2seq"  # trained on 5 points; the file has 6
    assert plot(Path(__file__).parents[1] / seq2seq, hull_file, "-o", tmp_path / "x.png") == 1
    err = capsys.readouterr().err
    assert err.startswith(f"ptrnet: error: {hull_file}:1: the seq2seq model at ")
    assert err.rstrip().endswith("handles n <= 5; an instance has 6 points")


def save_tiny_copy_model(path) -> None:
    """A randomly initialised pointer-generator saved as the copy task saves its models."""
    from ptrnet.model.pointer_generator import PointerGenerator, PointerGeneratorConfig
    from ptrnet.text.checkpoint import save_copy_model
    from ptrnet.text.vocab import SPECIALS, Vocabulary

    torch.manual_seed(0)
    vocab = Vocabulary([*SPECIALS, "the", "record"])
    model = PointerGenerator(PointerGeneratorConfig(vocab_size=len(vocab), embed=8, hidden=8))
    save_copy_model(path, model, vocab, {}, 0)


def test_plot_refuses_a_copy_model_naming_what_it_draws(tmp_path, hull_file, capsys):
    """Both forms that take a model (MODEL INPUT and TASK INPUT --model MODEL) name a copy-task
    model as such, not as a checkpoint of an unknown format."""
    (tmp_path / "run").mkdir()
    save_tiny_copy_model(tmp_path / "run" / "best.safetensors")
    save_tiny_copy_model(tmp_path / "copy.safetensors")
    calls = [
        ((tmp_path / "copy.safetensors", hull_file), tmp_path / "copy.safetensors"),
        (("convex_hull", hull_file, "--model", tmp_path / "run"), tmp_path / "run"),
    ]
    for argv, model in calls:
        assert plot(*argv, "-o", tmp_path / "x.png") == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "unknown checkpoint format" not in err
        assert "is a copy-task model" in err
        assert f"point tasks only ({', '.join(POINT_TASKS)})" in err
        assert err.rstrip().endswith(f"ptrnet predict copy SENTENCE --model {model} --explain")
    assert not (tmp_path / "x.png").exists()


def test_every_drawing_kind_has_a_drawer():
    from ptrnet.tasks import DRAWINGS
    from ptrnet.viz.draw import DRAWERS

    assert set(DRAWERS) == set(DRAWINGS)


def test_a_subset_is_drawn_as_rings_and_dots_without_lines():
    """The exact choice ringed, the output's choices dotted (blue where exact also chose the
    input, red where not), and no line: a set has no order to draw."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_hex

    from ptrnet.viz.draw import EXACT_GID, MODEL, MODEL_GID, WRONG, draw_subset

    points = np.array([[0.1, 0.9], [0.5, 0.5], [0.9, 0.1], [0.3, 0.3]])
    fig, ax = plt.subplots()
    draw_subset(ax, points, np.array([0, 1]), np.array([1, 2]))
    by_gid = {c.get_gid(): c for c in ax.collections}
    assert not ax.lines
    assert by_gid[EXACT_GID].get_offsets().tolist() == [[0.1, 0.9], [0.5, 0.5]]
    model = by_gid[MODEL_GID]
    assert model.get_offsets().tolist() == [[0.5, 0.5], [0.9, 0.1]]
    assert [to_hex(c) for c in model.get_facecolors()] == [MODEL, WRONG]
    plt.close(fig)


def test_routes_are_drawn_from_the_depot_and_back_one_colour_each():
    """The depot (the first input) as a square; each route closed on it; the exact routes pale
    in one colour beside an output, the output's a colour per route; alone, the exact routes a
    colour each."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_hex

    from ptrnet.viz.draw import (
        DEPOT_GID,
        EXACT,
        EXACT_GID,
        MODEL_GID,
        ROUTE_COLOURS,
        draw_routes,
        route_stops,
    )

    assert [s.tolist() for s in route_stops(np.array([3, 1, 0, 2]))] == [[0, 3, 1, 0], [0, 2, 0]]
    assert [s.tolist() for s in route_stops(np.array([0, 2, 0, 0, 1, 0]))] == [[0, 2, 0], [0, 1, 0]]
    points = np.array([[0.5, 0.5], [0.1, 0.1], [0.9, 0.1], [0.9, 0.9]])
    fig, ax = plt.subplots()
    draw_routes(ax, points, np.array([1, 2, 0, 3]), np.array([1, 0, 2, 3]))
    depot = next(c for c in ax.collections if c.get_gid() == DEPOT_GID)
    assert depot.get_offsets().tolist() == [[0.5, 0.5]]
    exact = [line for line in ax.lines if line.get_gid() == EXACT_GID]
    model = [line for line in ax.lines if line.get_gid() == MODEL_GID]
    assert [line.get_xydata().tolist() for line in model] == [
        [[0.5, 0.5], [0.1, 0.1], [0.5, 0.5]],
        [[0.5, 0.5], [0.9, 0.1], [0.9, 0.9], [0.5, 0.5]],
    ]
    assert {to_hex(line.get_color()) for line in exact} == {EXACT}
    assert [to_hex(line.get_color()) for line in model] == list(ROUTE_COLOURS[:2])
    plt.close(fig)
    fig, ax = plt.subplots()
    draw_routes(ax, points, np.array([1, 2, 0, 3]), None)
    assert [to_hex(line.get_color()) for line in ax.lines] == list(ROUTE_COLOURS[:2])
    plt.close(fig)
