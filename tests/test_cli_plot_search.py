"""``ptrnet plot`` draws what ``predict`` writes after a search (``--two-opt``, ``--or-opt``,
``--improve rrc``) or a predictions file (``--prediction``), titled in plain words with the
drawn tour's length and its gap in percent."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from ptrnet.cli.main import main
from ptrnet.io.paper_format import write_examples
from ptrnet.viz.draw import MODEL_GID

torch.set_num_threads(1)


@pytest.fixture
def cities(tmp_path):
    """Two 24-city instances in km, in the paper's format without labels."""
    rng = np.random.default_rng(11)
    points = [rng.uniform(0, 800, (24, 2)) for _ in range(2)]
    path = tmp_path / "cities.txt"
    write_examples(path, [(p, None) for p in points])
    return path, points


def plotted(monkeypatch, *argv) -> object:
    """Run ``ptrnet plot`` and return the figure it would have saved."""
    figures = []
    monkeypatch.setattr("ptrnet.viz.figures.save_png", lambda fig, path: figures.append(fig))
    assert main(["plot", *map(str, argv), "-o", "unused.png"]) == 0
    return figures[0]


def drawn(fig) -> np.ndarray:
    """The (k, 2) vertices of the answer drawn on the map."""
    (line,) = [line for line in fig.axes[0].lines if line.get_gid() == MODEL_GID]
    return np.asarray(line.get_xydata())


def predicted(capsys, path, *flags) -> list[dict]:
    argv = ["predict", "tsp", str(path), "-o", "-", "--output-format", "json", "-q", *flags]
    assert main(argv) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


@pytest.mark.parametrize(
    "flags",
    [("--or-opt",), ("--two-opt",), ("--improve", "rrc", "--iterations", "2", "--seed", "3")],
)
def test_plot_draws_the_searched_tour_predict_writes(cities, tmp_path, capsys, monkeypatch, flags):
    """For the instance alone: RRC's random draws depend on the instances searched together."""
    _, points = cities
    path = tmp_path / "one.txt"
    write_examples(path, [(points[1], None)])
    (plain,) = predicted(capsys, path)
    (searched,) = predicted(capsys, path, *flags)
    fig = plotted(monkeypatch, "tsp", path, *flags)
    np.testing.assert_array_equal(drawn(fig), points[1][searched["sequence"]])
    title = fig.get_suptitle()
    assert f"length {searched['cost']:.4g}, gap " in title.splitlines()[-1]
    assert "constraints" not in title and "only valid outputs, then " in title
    heat = fig.axes[1].get_title()  # the heatmap shows the model's own steps
    assert heat.startswith("the model's own steps, before the search: ")
    assert f"length {plain['cost']:.4g}" in heat
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend[-1] == "model, then the search"


def test_a_gap_in_the_title_is_in_percent(cities, capsys, monkeypatch):
    path, points = cities
    fig = plotted(monkeypatch, "tsp", path)
    metrics = fig.get_suptitle().splitlines()[-1]
    gap = metrics.split(", gap ")[1]
    assert gap.endswith("%") and 0 <= float(gap[:-1]) < 50
    assert metrics.startswith("valid rate 100.00%, length ")
    assert "greedy, only valid outputs" in fig.get_suptitle()


def test_plot_draws_the_tour_of_a_predictions_file(cities, tmp_path, capsys, monkeypatch):
    path, points = cities
    out = tmp_path / "pred.txt"
    assert main(["predict", "tsp", str(path), "-o", str(out), "--or-opt", "-q"]) == 0
    (searched,) = predicted(capsys, path, "--or-opt")[1:]
    fig = plotted(monkeypatch, "tsp", path, "--index", 1, "--prediction", out)
    np.testing.assert_array_equal(drawn(fig), points[1][searched["sequence"]])
    assert len(fig.axes) == 1  # no model decoded: no heatmap
    assert f"answer from {out}:2" in fig.get_suptitle()
    assert f"length {searched['cost']:.4g}" in fig.get_suptitle()


@pytest.mark.parametrize(
    "argv, message",
    [
        (("convex_hull", "{hull}", "--or-opt"), "--or-opt: shortens tours, for task tsp"),
        (("tsp", "{path}", "--model", "none", "--two-opt"), "searches a model's tour"),
        (("tsp", "{path}", "--constraints", "none", "--or-opt"), "--constraints task"),
        (("tsp", "{path}", "--prediction", "{path}", "--or-opt"), "as written, without --or-opt"),
        (("tsp", "{path}", "--prediction", "{path}", "--model", "bundled"), "give a task"),
    ],
)
def test_plot_refuses_a_search_it_cannot_draw(cities, tmp_path, capsys, argv, message):
    path, _ = cities
    hull = tmp_path / "hull.txt"
    write_examples(hull, [(np.random.default_rng(0).random((8, 2)), None)])
    argv = [a.format(path=path, hull=hull) for a in argv]
    assert main(["plot", *argv, "-o", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ptrnet: error: ") and err.count("\n") == 1 and message in err
    assert not (tmp_path / "x.png").exists()


def test_a_predictions_file_of_other_instances_is_refused_at_its_line(cities, tmp_path, capsys):
    path, points = cities
    other = tmp_path / "other.txt"
    tour = np.append(np.arange(24), 0)
    write_examples(other, [(points[0], tour), (points[0] + 1, tour)])
    out = tmp_path / "x.png"
    assert main(["plot", "tsp", str(path), "--prediction", str(other), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"ptrnet: error: {other}:2: points differ from {path}:2")
    assert not out.exists()
