"""Size-routed models (``sizes.json`` in a model directory, the bundled Delaunay folder): each
instance decodes with the model that serves its n, in every front end, against decoding each
size group with its model alone."""

import json

import numpy as np
import pytest
import torch

import ptrnet
from ptrnet import inference
from ptrnet.cli.main import main
from ptrnet.inference import SIZES_JSON, load_model, predict, read_size_routes
from ptrnet.io.errors import InputError
from ptrnet.io.paper_format import read_examples, write_examples
from ptrnet.model import ModelConfig, build_model
from ptrnet.runs.checkpoint import save_checkpoint
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.tasks import get_task
from ptrnet.viz.trace import decode_trace
from ptrnet.web.answers import model_answer, model_info

torch.set_num_threads(1)
SORT = get_task("sort")  # constrained to permutations: outputs do not depend on the batch


def tiny(path, seed, task="sort", sizes="5-9"):
    torch.manual_seed(seed)
    config = RunConfig(
        ModelConfig(input_dim=get_task(task).dim, hidden=8),
        TrainConfig(task=task, sizes=sizes, steps=1),
    )
    path.mkdir(parents=True, exist_ok=True)
    save_checkpoint(path / "best.safetensors", config, seed, build_model(config.model))


@pytest.fixture
def routed(tmp_path, monkeypatch):
    """A bundled sort folder: its own model (step 1) and n = 5 and n = 7-8 routes (steps 2, 3)."""
    folder = tmp_path / "bundled" / "sort"
    tiny(folder, 1)
    tiny(folder / "n5", 2, sizes="5")
    tiny(folder / "n7", 3, sizes="7-8")
    routes = [{"sizes": "5", "dir": "n5"}, {"sizes": "7-8", "dir": "n7"}]
    (folder / SIZES_JSON).write_text(json.dumps({"models": routes}))
    monkeypatch.setattr("ptrnet.inference.load.BUNDLED_DIR", str(tmp_path / "bundled"))
    return folder


def mixed_instances():
    rng = np.random.default_rng(4)
    return [rng.random((n, 1)) for n in (5, 6, 7, 8, 9, 5, 6, 7, 10, 5)]


def alone(folder, points):
    """Each instance decoded by the model its n maps to, loaded on its own (by file)."""
    files = {5: folder / "n5", 7: folder / "n7", 8: folder / "n7"}
    out = []
    for p in points:
        path = files.get(len(p), folder) / "best.safetensors"
        (seq,) = predict(load_model(path, "sort"), SORT, [p])
        out.append(seq)
    return out


def test_predict_decodes_each_size_with_its_model(routed):
    loaded = load_model(None, "sort")
    assert [(str(r.sizes), r.model.step) for r in loaded.routes] == [("5", 2), ("7-8", 3)]
    assert [loaded.for_size(n).step for n in (4, 5, 6, 7, 8, 9)] == [1, 2, 1, 3, 3, 1]
    points = mixed_instances()
    got = predict(loaded, SORT, points)
    expected = alone(routed, points)
    assert all(np.array_equal(a, b) for a, b in zip(got, expected, strict=True))
    # The models differ, so the routing is what makes the outputs match.
    unrouted = predict(load_model(routed / "best.safetensors"), SORT, points)
    assert any(not np.array_equal(a, b) for a, b in zip(unrouted, expected, strict=True))


def test_a_checkpoint_file_names_one_model_and_a_plain_run_directory_has_no_routes(routed):
    assert load_model(routed / "best.safetensors").routes == ()
    assert load_model(routed / "n5").routes == ()


def test_the_python_api_routes_by_size_and_scores_with_the_model_that_decoded(routed):
    solver = ptrnet.load("sort", device="cpu")
    points = mixed_instances()
    results = solver.solve(points)
    expected = alone(routed, points)
    assert all(np.array_equal(r.sequence, e) for r, e in zip(results, expected, strict=True))
    for p, r in zip(points, results, strict=True):
        served = ptrnet.load(routed / "n5" if len(p) == 5 else routed, device="cpu")
        if len(p) in (5, 6, 9, 10):
            assert r.log_prob == pytest.approx(served.solve(p).log_prob, abs=1e-5)


def test_cli_eval_and_predict_route_a_file_of_mixed_sizes(routed, tmp_path, capsys):
    points = mixed_instances()
    data = tmp_path / "mixed.txt"
    write_examples(data, ((p, SORT.solve(p)) for p in points))
    out = tmp_path / "pred.txt"
    assert main(["predict", "sort", str(data), "-o", str(out), "-q", "--threads", "1"]) == 0
    got = [example.seq for example in read_examples(out, SORT)]
    expected = alone(routed, points)
    assert all(np.array_equal(a, b) for a, b in zip(got, expected, strict=True))
    capsys.readouterr()
    assert main(["eval", "sort", str(data), "--threads", "1", "--device", "cpu"]) == 0
    report = capsys.readouterr().out
    assert f"n = 5: {routed / 'n5' / 'best.safetensors'}" in report
    assert f"n = 7-8: {routed / 'n7' / 'best.safetensors'}" in report


def test_the_web_answer_and_the_trace_come_from_the_routed_model(routed):
    from ptrnet.decoding.options import DecodeOptions

    loaded = load_model(None, "sort")
    info = model_info(loaded)
    assert info["routes"] == [
        {"sizes": "5", "name": "n5", "window": 0, "capacity": False},
        {"sizes": "7-8", "name": "n7", "window": 0, "capacity": False},
    ]
    points = mixed_instances()[0]  # n = 5
    answer = model_answer(SORT, points, loaded, DecodeOptions().for_task(SORT))
    assert answer["info"]["step"] == 2 and answer["info"]["trained_sizes"] == "5"
    trace = decode_trace(loaded, SORT, points)
    assert np.array_equal(trace.sequence, alone(routed, [points])[0])


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[", "not a size routing file"),
        ('{"models": [{"sizes": "5"}]}', "needs the keys 'sizes' and 'dir'"),
        ('{"models": [{"sizes": "5", "dir": "n5", "windows": 4}]}', "may have 'window'"),
        ('{"models": [{"sizes": "5", "dir": "n5", "window": 1}]}', "window must be 0"),
        ('{"models": [{"sizes": "5", "dir": "n5", "window": "50"}]}', "window must be 0"),
        ('{"models": [{"sizes": "5", "dir": "../n5"}]}', "'dir' must name a sub-folder"),
        ('{"models": [{"sizes": "five", "dir": "n5"}]}', "invalid size 'five'"),
        ('{"models": [{"sizes": "5-7", "dir": "n5"}, {"sizes": "7", "dir": "n7"}]}', "overlap"),
    ],
)
def test_a_bad_sizes_file_is_one_line_naming_it(routed, text, problem):
    (routed / SIZES_JSON).write_text(text)
    with pytest.raises(InputError, match=problem) as err:
        load_model(None, "sort")
    assert str(err.value).startswith(str(routed / SIZES_JSON)) and "\n" not in str(err.value)


def test_a_route_to_another_task_a_window_without_heavy_decoder_or_no_checkpoint_is_refused(routed):
    tiny(routed / "n5", 5, task="tsp", sizes="5")
    with pytest.raises(InputError, match="routes n = 5 to a tsp model"):
        load_model(None, "sort")
    tiny(routed / "n5", 5, sizes="5")
    (routed / SIZES_JSON).write_text('{"models": [{"sizes": "5", "dir": "n5", "window": 3}]}')
    with pytest.raises(InputError, match="window 3 for n = 5: .* has no heavy decoder"):
        load_model(None, "sort")  # a window is for heavy-decoder models only
    (routed / "n5" / "best.safetensors").unlink()
    with pytest.raises(InputError, match="no checkpoint in this directory"):
        load_model(None, "sort")


def test_the_bundled_delaunay_folder_routes_n_5_and_n_10_to_their_own_models():
    """The shipped manifest: n = 5 to the hidden-256 n = 5 model, n = 10 to the Transformer
    n = 10 model, every other n to the 5-10 one (the manifest is read, not assumed: one line
    per range)."""
    folder = inference.bundled_model_dir("delaunay")
    routes = [(str(s), p, w) for s, p, w, _ in read_size_routes(folder)]
    assert routes == [("5", f"{folder}/n5", 0), ("10", f"{folder}/n10", 0)]
    loaded = load_model(None, "delaunay")
    five, nine, ten = loaded.for_size(5), loaded.for_size(9), loaded.for_size(10)
    assert five.path.endswith("delaunay/n5/best.safetensors")
    assert (five.config.model.hidden, five.config.train.sizes) == (256, "5")
    assert ten.path.endswith("delaunay/n10/best.safetensors")
    assert (ten.config.model.encoder, ten.config.train.sizes) == ("transformer", "10")
    assert nine is loaded and loaded.config.train.sizes == "5-10"


def test_the_bundled_cvrp_folder_routes_30_customers_and_more_to_its_n50_model():
    """The shipped manifest: rows 31-1,000 (30 customers and more, the depot counted) to the
    model fine-tuned on 50 customers, fewer to the folder's own n = 20 model."""
    folder = inference.bundled_model_dir("cvrp")
    routes = [(str(s), p, w) for s, p, w, _ in read_size_routes(folder)]
    assert routes == [("31-1000", f"{folder}/n50", 0)]
    loaded = load_model(None, "cvrp")
    thirty, fifty_one = loaded.for_size(30), loaded.for_size(51)
    assert thirty is loaded and loaded.config.train.sizes == "20"
    assert fifty_one.path.endswith("cvrp/n50/best.safetensors")
    assert (fifty_one.config.model.decoder, fifty_one.config.train.sizes) == ("route", "50")
