"""The Python API (ptrnet.load, Solver.solve, Result, ptrnet.train), checked against the
inference layer, the decoder's own scores and the task's exact geometry."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest
import torch

import ptrnet
from ptrnet.datasets.batching import collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.options import DecodeOptions
from ptrnet.inference import predict
from ptrnet.io.errors import InputError, UsageError
from ptrnet.io.paper_format import read_examples
from ptrnet.io.unit_square import UnitMap
from ptrnet.solvers.tsp import tour_length
from ptrnet.tasks import get_task
from ptrnet.tasks.convex_hull import simple_polygon_area

torch.set_num_threads(1)
RNG = np.random.default_rng(7)


@pytest.fixture(scope="module")
def tsp():
    return ptrnet.load("tsp", device="cpu")


def test_import_stays_light_and_names_load_on_use():
    code = "import sys, ptrnet; ptrnet.__version__; print('torch' in sys.modules)"
    assert subprocess.check_output([sys.executable, "-c", code], text=True).strip() == "False"
    assert set(ptrnet.__all__) <= set(dir(ptrnet))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        ptrnet.nope  # noqa: B018


def test_one_instance_gives_one_result_that_matches_the_inference_layer(tsp):
    points = RNG.random((12, 2))
    result = tsp.solve(points)
    assert isinstance(result, ptrnet.Result)
    expected = predict(tsp.loaded, "tsp", [points])[0]
    np.testing.assert_array_equal(result.sequence, expected)
    assert result.sequence[0] == result.sequence[-1] == 0 and len(result.sequence) == 13
    assert result.valid and result.cost == pytest.approx(tour_length(points, result.sequence))
    assert result.probs is None


def test_log_prob_is_the_decoders_own_score(tsp):
    points = [RNG.random((n, 2)) for n in (6, 9, 14)]
    results = tsp.solve(points)
    for p, result in zip(points, results, strict=True):  # each by the model serving its n
        model = tsp.loaded.for_size(len(p)).model
        decoded = decode(model, get_task("tsp"), collate([p]), DecodeOptions(constraints="task"))
        assert result.log_prob == pytest.approx(float(decoded.log_prob[0]), abs=1e-4)
        assert result.log_prob < 0


def test_batches_in_every_form_give_the_same_results(tsp):
    batch = RNG.random((3, 10, 2))
    as_list = tsp.solve(list(batch))
    for form in (batch, torch.from_numpy(batch), batch.tolist()):
        got = tsp.solve(form)
        assert isinstance(got, list) and len(got) == 3
        for a, b in zip(got, as_list, strict=True):
            np.testing.assert_array_equal(a.sequence, b.sequence)
    ragged = tsp.solve([batch[0], batch[1][:7]])
    np.testing.assert_array_equal(ragged[0].sequence, as_list[0].sequence)
    assert len(ragged[1].sequence) == 8
    assert tsp.solve([]) == []


def test_probs_are_the_distributions_greedy_decoding_followed(tsp):
    points = RNG.random((9, 2))
    result = tsp.solve(points, return_probs=True)
    probs = result.probs
    assert probs.shape == (len(result.sequence) + 1, 10)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)
    tokens = np.append(result.sequence + 1, 0)  # the end symbol is column 0
    np.testing.assert_array_equal(result.tokens, tokens)
    np.testing.assert_array_equal(probs.argmax(axis=1), tokens)
    picked = np.log(probs[np.arange(len(tokens)), tokens]).sum()
    assert result.log_prob == pytest.approx(picked, abs=1e-5)


def test_decoding_options_take_the_cli_names(tsp):
    points = RNG.random((10, 2))
    beam = tsp.solve(points, decode="beam", beam_width=5, search_views=8, average_views=4)
    options = DecodeOptions(strategy="beam", beam_width=5, search_views=8, average_views=4)
    expected = predict(tsp.loaded, "tsp", [points], options)[0]
    np.testing.assert_array_equal(beam.sequence, expected)
    shortest = tsp.solve(points, decode="beam", beam_width=5, pick="shortest")
    assert shortest.cost <= tsp.solve(points, decode="beam", beam_width=5).cost + 1e-12
    with pytest.raises(ValueError, match="decode: unknown strategy 'beem'"):
        tsp.solve(points, decode="beem")
    with pytest.raises(ValueError, match="beam_width: "):
        tsp.solve(points, decode="beam", beam_width=0)
    with pytest.raises(ValueError, match="pick: "):
        tsp.solve(points, pick="shortest")
    with pytest.raises(TypeError, match="'beam'"):
        tsp.solve(points, beam=3)
    with pytest.raises(TypeError, match="views=8 is search_views=8"):
        tsp.solve(points, views=8)
    with pytest.raises(ValueError, match="decode: multistart is not a strategy"):
        tsp.solve(points, decode="multistart")


@pytest.mark.parametrize("seed", [-1, 2**64, 10**40, True, 1.5, 2.0, "3", None])
@pytest.mark.parametrize("decode", ["greedy", "sample"])
def test_a_seed_outside_the_command_lines_range_is_refused(tsp, seed, decode):
    """``--seed`` takes 0..2^64 - 1 (``seed_int``); so does ``solve``, whatever the strategy
    (it was: -1 and True accepted, 2^64 an overflow deep in torch when sampling)."""
    points = RNG.random((6, 2))
    with pytest.raises(ValueError) as caught:
        tsp.solve(points, decode=decode, seed=seed)
    assert str(caught.value).startswith("seed must be an integer from 0 to 2^64 - 1, got ")
    assert len(str(caught.value)) < 120


def test_every_seed_the_command_line_takes_is_taken(tsp):
    from ptrnet.cli import common
    from ptrnet.io.limits import MAX_SEED, check_seed

    assert MAX_SEED == common.MAX_SEED == common.seed_int(str(MAX_SEED)) == check_seed(MAX_SEED)
    points = RNG.random((8, 2))
    for seed in (0, 2**64 - 1, np.uint64(2**64 - 1), np.int32(7)):
        assert tsp.solve(points, decode="sample", seed=seed).valid
    same = [tsp.solve(points, decode="sample", seed=s).sequence for s in (7, np.int64(7))]
    np.testing.assert_array_equal(*same)


@pytest.mark.parametrize(
    "bad, message",
    [
        (np.zeros((5, 3)), r"\(n, 2\) array"),
        (np.zeros((0, 2)), r"\(n, 2\) array"),
        (np.full((5, 2), np.nan), "not a finite number"),
        (np.full((5, 2), 1e101), r"beyond \+-1e\+100"),
        ("points", "expected tsp instances"),
        ([np.zeros((5, 2)), np.zeros((4, 3))], r"\(n, 2\) array"),
    ],
)
def test_inputs_that_are_not_instances_are_named(tsp, bad, message):
    with pytest.raises(ValueError, match=message):
        tsp.solve(bad)


def test_sort_takes_plain_vectors():
    solver = ptrnet.load("sort")
    values = RNG.random(8)
    result = solver.solve(values)
    assert sorted(result.sequence.tolist()) == list(range(8))
    assert result.cost == np.count_nonzero(np.diff(values[result.sequence]) < 0)
    many = solver.solve([RNG.random(5), RNG.random(7)])
    assert [len(r.sequence) for r in many] == [5, 7]
    np.testing.assert_array_equal(solver.solve(values[:, None]).sequence, result.sequence)


def test_hull_cost_is_the_output_polygons_area():
    solver = ptrnet.load("convex_hull")
    points = RNG.random((8, 2))
    result = solver.solve(points)
    area = simple_polygon_area(points, result.sequence)
    assert result.cost == pytest.approx(area) if area is not None else math.isnan(result.cost)


def test_load_names_and_errors(tmp_path):
    assert ptrnet.load("bundled", task="sort").task.name == "sort"
    with pytest.raises(UsageError, match="needs task="):
        ptrnet.load("bundled")
    with pytest.raises(UsageError, match="trained on tsp, not sort"):
        ptrnet.load("tsp", task="sort")
    with pytest.raises(InputError, match="no such model"):
        ptrnet.load(tmp_path / "missing")
    with pytest.raises(ValueError, match="unknown device"):
        ptrnet.load("tsp", device="tpu")
    with pytest.raises(InputError, match=r"tps: .*nor a task \(sort, convex_hull"):
        ptrnet.load("tps")


def test_instances_outside_the_unit_square_decode_as_their_image_in_it(tsp):
    raw = RNG.random((20, 2))
    points = UnitMap.fit(raw).to_unit(raw)  # its longer side spans [0, 1]: its own image
    inside = tsp.solve(points)
    for scale, shift in ((1000.0, 0.0), (1.0, 5.0), (1e-3, -7.0)):
        outside = tsp.solve(points * scale + shift)
        np.testing.assert_array_equal(outside.sequence, inside.sequence)
        assert outside.cost == pytest.approx(inside.cost * scale)
        assert outside.log_prob == pytest.approx(inside.log_prob, abs=1e-4)
    hull = ptrnet.load("convex_hull")
    np.testing.assert_array_equal(hull.solve(points * 1000).sequence, hull.solve(points).sequence)
    assert ptrnet.load("sort").solve([300.0, 100.0, 200.0]).sequence.tolist() == [1, 2, 0]


def test_refused_sizes_and_windows_are_value_errors(tsp):
    with pytest.raises(ValueError, match="lstm decoder"):
        tsp.solve(RNG.random((8, 2)), window=5)
    with pytest.raises(ValueError, match="models decode n <= 1000"):
        tsp.solve(RNG.random((1001, 2)))


def test_multistart_tours_and_hulls_come_back_in_the_label_form(tsp):
    points = RNG.random((12, 2))
    for pick in ("likely", "shortest"):
        result = tsp.solve(points, multistart=True, pick=pick)
        assert result.sequence[0] == result.sequence[-1] == 0 and result.valid
        assert np.isfinite(result.log_prob)
        assert result.cost == pytest.approx(tour_length(points, result.sequence))
    hull = ptrnet.load("convex_hull").solve(points, multistart=1)
    assert hull.sequence[0] == hull.sequence[:-1].min() == hull.sequence[-1]


def test_from_pretrained_returns_the_network():
    model = ptrnet.PointerNetwork.from_pretrained("tsp")
    assert isinstance(model, ptrnet.PointerNetwork) and isinstance(model, torch.nn.Module)
    assert not model.training


def test_train_from_arrays_validates_on_the_given_instances(tmp_path):
    train = [RNG.random(n) for n in (4, 5, 6, 5, 4, 6, 5, 4)]
    val = [RNG.random(5) for _ in range(3)]
    run = ptrnet.train("sort", train, val_data=val, out=tmp_path / "run", hidden=8, steps=2,
                       batch_size=4, val_every=1, workers=0, threads=1)  # fmt: skip
    config = json.loads((tmp_path / "run" / "config.json").read_text())["train"]
    assert config["sizes"] == "4-6"  # from the data
    assert config["val_data"].endswith("val-data.txt")
    saved = read_examples(config["val_data"], get_task("sort"), "ignore")
    np.testing.assert_array_equal(saved[2].points[:, 0], val[2])
    assert json.loads((tmp_path / "run" / "best.json").read_text())["metrics"]["count"] == 3
    assert ptrnet.load(run).solve(val[0]).sequence.shape == (5,)


def test_train_refuses_an_used_run_directory_before_writing_into_it(tmp_path):
    data = [RNG.random(5) for _ in range(8)]
    ptrnet.train("sort", data, out=tmp_path, hidden=8, steps=1, batch_size=4, val_count=4)
    before = (tmp_path / "train-data.txt").read_text()
    with pytest.raises(ValueError, match="already holds a run; give another out"):
        ptrnet.train("sort", [RNG.random(6) for _ in range(8)], out=tmp_path, hidden=8)
    assert (tmp_path / "train-data.txt").read_text() == before


def test_train_names_what_it_cannot_train():
    with pytest.raises(ValueError, match="needs a task whose inputs are points"):
        ptrnet.train("copy", sizes="5-10", steps=1)


def test_train_needs_data_or_sizes(tmp_path):
    with pytest.raises(ValueError, match="give training data or sizes"):
        ptrnet.train("sort", out=tmp_path)


def test_a_hull_solve_gives_closed_simple_hulls_by_default():
    """1,000 random instances of 30 points: every default answer is a closed simple polygon
    (shapely as the oracle) with a finite area; the paper's protocol may give other ones."""
    from shapely.geometry import Polygon

    solver = ptrnet.load("convex_hull", device="cpu")
    instances = np.random.default_rng(30).random((1000, 30, 2))
    for points, result in zip(instances, solver.solve(instances), strict=True):
        seq = result.sequence
        assert len(seq) >= 4 and seq[0] == seq[-1], seq
        polygon = Polygon(points[seq[:-1]])
        assert polygon.is_valid and polygon.exterior.is_simple, seq
        assert result.valid and result.cost == pytest.approx(polygon.area)
    paper = solver.solve(instances[:300], protocol="paper")
    assert not all(r.valid and np.isfinite(r.cost) for r in paper)


def test_the_paper_protocol_decodes_hulls_unconstrained_as_eval_does():
    solver = ptrnet.load("convex_hull", device="cpu")
    points = list(np.random.default_rng(4).random((20, 15, 2)))
    unconstrained = predict(solver.loaded, "convex_hull", points, DecodeOptions(constraints="none"))
    for name, options in (("protocol", {"protocol": "paper"}), ("mask", {"constraints": "none"})):
        for result, seq in zip(solver.solve(points, **options), unconstrained, strict=True):
            np.testing.assert_array_equal(result.sequence, seq, err_msg=name)


def test_a_solve_runs_the_network_in_one_decoding_pass(tsp, monkeypatch):
    """The sequence, log-likelihood and step distributions come from one decoding pass: the
    network encodes each batch once and is never run again teacher-forced."""
    model = tsp.loaded.for_size(9).model
    calls = {"encode": 0, "forward": 0}

    def counted(name, method):
        def run(*args, **kwargs):
            calls[name] += 1
            return method(*args, **kwargs)

        return run

    monkeypatch.setattr(model, "encode", counted("encode", model.encode))
    monkeypatch.setattr(model, "forward", counted("forward", model.forward))
    result = tsp.solve(RNG.random((9, 2)), return_probs=True)
    assert calls == {"encode": 1, "forward": 0}
    picked = np.log(result.probs[np.arange(len(result.tokens)), result.tokens]).sum()
    assert result.log_prob == pytest.approx(picked, abs=1e-5)
