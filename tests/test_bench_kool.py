"""The pure helpers of benchmarks/bench_kool.py (run names, Kool's input format, gaps, test
sets) and its one-line errors; none needs Kool's repository."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.bench_kool import (
    Run,
    load_test,
    main,
    mean_gap,
    parse_models,
    parse_run,
    ptrnet_options,
)
from benchmarks.kool_models import BenchError, model_dir, to_kool_input
from ptrnet.solvers.tsp import tour_length


def test_parse_run_reads_system_size_and_decoding():
    assert parse_run("kool20:greedy") == Run("kool", 20, "greedy")
    assert parse_run("kool100:sample1280").samples == 1280
    assert parse_run("ptrnet:multistart-shortest") == Run("ptrnet", None, "multistart-shortest")
    assert parse_run("ptrnet:greedy").samples == 0


def test_named_ptrnet_models_run_beside_the_default_one():
    models = parse_models(["bundled", "light=runs/light/best.safetensors"])
    assert models == {"ptrnet": "bundled", "light": "runs/light/best.safetensors"}
    assert parse_run("light:multistart-shortest", list(models)) == Run(
        "light", None, "multistart-shortest"
    )
    assert parse_models(None) == {"ptrnet": "bundled"}
    with pytest.raises(BenchError, match="the system is one of kool20, kool50, kool100, ptrnet"):
        parse_run("light:greedy")
    for bad in (["a=x", "a=y"], ["kool50=x"], ["2x=y"]):
        with pytest.raises(BenchError, match="--ptrnet-model"):
            parse_models(bad)


@pytest.mark.parametrize(
    "spec", ["kool30:greedy", "kool20:beam5", "lkh:greedy", "ptrnet:sample0", "ptrnet:views"]
)
def test_parse_run_refuses_what_it_cannot_run(spec):
    with pytest.raises(BenchError, match="--run"):
        parse_run(spec)


def test_ptrnet_decodings_are_ptrnet_eval_options():
    assert ptrnet_options("greedy").strategy == "greedy"
    beam = ptrnet_options("beam5")
    assert (beam.strategy, beam.beam_width, beam.pick) == ("beam", 5, "likely")
    eight = ptrnet_options("views8")  # the saved runs' views 8: search_views 8 averaging 4
    assert (eight.search_views, eight.average_views, eight.multistart) == (8, 4, 0)
    assert ptrnet_options("views4").average_views == 4
    assert ptrnet_options("multistart-shortest").pick == "shortest"
    pomo = ptrnet_options("multistart-shortest-views8")
    assert (pomo.strategy, pomo.pick, pomo.multistart) == ("greedy", "shortest", 8)
    assert ptrnet_options("multistart-likely").multistart == 1
    sample = ptrnet_options("sample1280")
    assert (sample.samples, sample.pick, sample.batch_size) == (1280, "shortest", 1)


def test_kool_input_is_a_float_batch_of_the_same_points():
    rng = np.random.default_rng(0)
    points = [rng.random((7, 2)) for _ in range(3)]
    batch = to_kool_input(points)
    assert batch.shape == (3, 7, 2) and str(batch.dtype) == "torch.float32"
    np.testing.assert_allclose(batch.numpy(), np.stack(points), atol=1e-7)


@pytest.mark.parametrize(
    "points",
    [[np.zeros((5, 2)), np.zeros((6, 2))], [np.zeros((5, 3))], [np.full((5, 2), 2.0)]],
)
def test_kool_input_refuses_mixed_sizes_and_points_outside_the_unit_square(points):
    with pytest.raises(BenchError, match="Kool's models take"):
        to_kool_input(points)


def test_mean_gap_is_the_mean_of_per_instance_gaps():
    # (1.1 / 1 - 1 + 3 / 2 - 1) / 2 = 0.3, while the gap of the means would be 4.1 / 3 - 1.
    assert mean_gap(np.array([1.1, 3.0]), np.array([1.0, 2.0])) == pytest.approx(0.3)
    with pytest.raises(ValueError):
        mean_gap(np.array([1.0]), np.array([0.0]))


def test_tsplib_set_measures_the_proven_optima_as_published():
    test = load_test("tsplib")
    assert test.name == "tsplib" and len(test.points) == 29 and test.rounded
    assert all(p.min() >= 0 and p.max() <= 1 for p in test.points)
    # A proven optimum is a lower bound on every tour, the file's order included.
    lengths = test.lengths([np.arange(len(c)) for c in test.coords])
    assert (lengths >= test.refs).all()


def test_a_labelled_file_gives_its_reference_lengths(tmp_path):
    from ptrnet.io.paper_format import read_examples
    from ptrnet.tasks import get_task

    path = tmp_path / "tsp6.txt"
    rng = np.random.default_rng(1)
    lines = []
    for _ in range(3):
        pts = rng.random((6, 2))
        coords = " ".join(f"{v:.6f}" for v in pts.ravel())
        lines.append(f"{coords} output 1 3 2 4 6 5 1")
    path.write_text("\n".join(lines) + "\n")
    test = load_test(f"{path}:2")
    examples = read_examples(path, get_task("tsp"))[:2]
    assert len(test.points) == 2
    np.testing.assert_allclose(test.refs, [tour_length(e.points, e.seq) for e in examples])
    assert test.lengths([e.seq[:-1] for e in examples]) == pytest.approx(test.refs)


@pytest.mark.parametrize(
    "checkout, message", [(None, "no Kool checkout"), ("/nonexistent", "not a checkout")]
)
def test_a_missing_checkout_is_one_line_before_any_decoding(checkout, message, capsys, monkeypatch):
    monkeypatch.delenv("KOOL_CHECKOUT", raising=False)
    argv = ["--test", "tsplib", "--run", "kool20:greedy"]
    with pytest.raises(SystemExit) as exit_info:
        main(argv + (["--kool", checkout] if checkout else []))
    text = str(exit_info.value)
    assert text.startswith("bench_kool: error: ") and message in text and "\n" not in text
    assert capsys.readouterr().out == ""


def test_a_weights_file_that_is_an_lfs_pointer_is_refused(tmp_path):
    (tmp_path / "nets").mkdir()
    (tmp_path / "nets" / "attention_model.py").write_text("")
    folder = tmp_path / "pretrained" / "tsp_20"
    folder.mkdir(parents=True)
    (folder / "args.json").write_text("{}")
    (folder / "epoch-99.pt").write_text("version https://git-lfs.github.com/spec/v1\n")
    with pytest.raises(BenchError, match="not the model file"):
        model_dir(tmp_path, 20)


def test_the_curve_keeps_the_largest_row_per_size_and_leaves_tsplib_out():
    from benchmarks.plot_generalisation import best_rows, table

    def row(n, count, gap, decode="greedy"):
        return dict(model="m", decode=decode, n=n, count=count, mean_gap=gap)

    rows = [row(20, 100, 0.5), row(20, 1000, 0.25), row(50, 10, 0.1), row("51-200", 29, 9.0)]
    curves = best_rows(rows + [row(20, 5000, 0.9, "beam5")], ["m greedy"])
    assert {n: r["count"] for n, r in curves["m greedy"].items()} == {20: 1000, 50: 10}
    assert table(curves).splitlines()[-1] == "| m greedy | 25.00% (1,000) | 10.00% (10) |"


def test_the_curve_takes_labels_in_series_order_and_a_band_or_none(tmp_path):
    from benchmarks.plot_generalisation import DEFAULT_SPAN, parse_span, read_rows, relabel

    curves = {"a greedy": {20: {}}, "b greedy": {50: {}}}
    assert list(relabel(curves, ["A", "B"])) == ["A", "B"]
    assert relabel(curves, []) is curves
    with pytest.raises(ValueError, match="1 --label for 2 --series"):
        relabel(curves, ["A"])
    assert parse_span(DEFAULT_SPAN) == (5, 20, "training sizes (ptrnet 5-20, Kool 20)")
    assert parse_span("10-100:trained") == (10, 100, "trained") and parse_span("none") is None
    for bad in ("5-20", "20-5:x", "a-b:x", "5:x"):
        with pytest.raises(ValueError, match="LO-HI:TEXT"):
            parse_span(bad)
    good, bad = tmp_path / "rows.jsonl", tmp_path / "bad.jsonl"
    good.write_text('{"n": 20}\n\n{"n": 50}\n')
    bad.write_text('{"n": 20}\n{"n": \n')
    assert read_rows([str(good)]) == [{"n": 20}, {"n": 50}]
    with pytest.raises(ValueError, match=f"{bad}:2: not a JSON line"):
        read_rows([str(good), str(bad)])


@pytest.mark.parametrize("count", ["0", "-2", "abc"])
def test_a_test_count_must_be_a_positive_integer(tmp_path, count):
    path = tmp_path / "tsp5.txt"
    path.write_text("0.1 0.1 0.9 0.1 0.9 0.9 0.1 0.9 0.5 0.5 output 1 2 3 5 4 1\n")
    with pytest.raises(BenchError, match="COUNT must be a positive integer"):
        load_test(f"{path}:{count}")
    assert len(load_test(f"{path}:1").points) == 1
