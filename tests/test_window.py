"""Decoding a heavy-decoder model through a local window (ptrnet.decoding.window): each step is
the model's own step on the rescaled window, tours only move within it, small instances are
untouched, every decoder runs through it, and the front ends take ``--window`` / ``window=``."""

import json

import numpy as np
import pytest
import torch

import ptrnet
from ptrnet.cli.main import main
from ptrnet.datasets.batching import collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.likelihood import masked_sequence_log_likelihood
from ptrnet.decoding.options import DecodeOptionError, DecodeOptions
from ptrnet.decoding.window import LocalWindow, unit_square
from ptrnet.model import ModelConfig, build_model
from ptrnet.runs.checkpoint import save_checkpoint
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.tasks import get_task

torch.set_num_threads(1)
TSP = get_task("tsp")
HEAVY = dict(encoder="transformer", encoder_layers=1, decoder="heavy", decoder_layers=2, heads=2)


def heavy_model(seed=0):
    torch.manual_seed(seed)
    return build_model(ModelConfig(input_dim=2, hidden=16, **HEAVY)).eval()


def instances(sizes, seed=1):
    rng = np.random.default_rng(seed)
    return [rng.random((n, 2)).astype(np.float32) for n in sizes]


def reference_step(model, points, prefix, k):
    """The window's logits after ``prefix`` (0-based inputs), built by hand: numpy picks the k
    remaining inputs nearest the last one and rescales the window, and the model decodes that
    small instance itself (its own ``step``) through the first and the last input."""
    n = len(points)
    left = [j for j in range(n) if j not in prefix]
    near = sorted(left, key=lambda j: ((points[j] - points[prefix[-1]]) ** 2).sum())[:k]
    ends = [prefix[0]] if prefix[-1] == prefix[0] else [prefix[0], prefix[-1]]
    window = points[ends + near].astype(np.float64)
    low = window.min(axis=0)
    window = (window - low) / (window.max(axis=0) - low).max()
    sub = torch.tensor(window, dtype=torch.float32)[None]
    memory = model.encode(sub, torch.tensor([len(window)]))
    state, logits = memory.state, None
    for token in [0] + list(range(1, len(ends) + 1)):
        logits, state = model.step(memory, torch.tensor([token]), state)
    want = torch.full((n + 1,), float("-inf"))
    want[0] = logits[0, 0]
    for slot, j in enumerate(ends + near):
        if j in near:
            want[j + 1] = logits[0, slot + 1]
    return want


@pytest.mark.parametrize("prefix", [[0], [0, 7], [3, 9, 1, 4], [0, 2, 4, 6, 8, 10, 1, 3]])
def test_a_window_step_is_the_models_own_step_on_the_rescaled_window(prefix):
    model, (points,) = heavy_model(), instances([12])
    targets = torch.tensor([[j + 1 for j in prefix] + [0]])  # the last step follows the prefix
    got = LocalWindow(model, 4)(torch.tensor(points)[None], torch.tensor([12]), targets)
    assert got.shape == (1, len(prefix) + 1, 13)
    torch.testing.assert_close(got[0, -1], reference_step(model, points, prefix, 4))


def test_forward_is_the_step_loop_teacher_forced():
    model, points = heavy_model(), instances([11, 9])
    batch = collate(points, [TSP.solve(p.astype(np.float64)) for p in points])
    window = LocalWindow(model, 3)
    logits = window(batch.points, batch.lengths, batch.targets)  # (B, T, n+1)
    tokens = batch.targets.clamp(min=0)
    memory = window.encode(batch.points, batch.lengths)
    state, prev = memory.state, torch.zeros(2, dtype=torch.long)
    for i in range(tokens.shape[1]):
        step, state = window.step(memory, prev, state)
        torch.testing.assert_close(logits[:, i], step)
        prev = tokens[:, i]


def test_greedy_tours_only_step_to_one_of_the_k_nearest_cities_left():
    model, points = heavy_model(seed=3), instances([15, 14, 13], seed=4)
    result = decode(model, TSP, collate(points), DecodeOptions(window=4))
    for p, seq in zip(points, result.sequences, strict=True):
        assert TSP.is_valid(p, seq)
        tour = list(seq[:-1])
        for i in range(1, len(tour)):
            left = [j for j in range(len(p)) if j not in tour[:i]]
            dist = sorted(((p[j] - p[tour[i - 1]]) ** 2).sum() for j in left)
            assert ((p[tour[i]] - p[tour[i - 1]]) ** 2).sum() <= dist[min(3, len(dist) - 1)]


def test_instances_no_larger_than_the_window_decode_as_without_it():
    model, points = heavy_model(), instances([5, 8, 12, 8], seed=5)
    options = DecodeOptions(window=8)
    mixed = decode(model, TSP, collate(points), options)
    plain = decode(model, TSP, collate([points[0], points[1], points[3]]), DecodeOptions())
    for row, want in zip((0, 1, 3), plain.sequences, strict=True):
        np.testing.assert_array_equal(mixed.sequences[row], want)
    alone = decode(model, TSP, collate([points[2]]), options)  # batch mates change nothing
    np.testing.assert_array_equal(mixed.sequences[2], alone.sequences[0])
    torch.testing.assert_close(mixed.log_prob[2], alone.log_prob[0])


def test_a_window_sees_neither_where_nor_how_large_the_instance_is():
    model, (points,) = heavy_model(seed=6), instances([16], seed=6)
    options = DecodeOptions(window=5)
    base = decode(model, TSP, collate([points]), options)
    for moved in (points * 4.0, points * 0.5 + 2.0):
        other = decode(model, TSP, collate([moved]), options)
        np.testing.assert_array_equal(other.sequences[0], base.sequences[0])
        torch.testing.assert_close(other.log_prob, base.log_prob, atol=1e-4, rtol=1e-4)


OPTIONS = [
    DecodeOptions(window=4),
    DecodeOptions(strategy="beam", beam_width=3, window=4),
    DecodeOptions(strategy="sample", samples=3, window=4),
    DecodeOptions(multistart=1, pick="shortest", window=4),
    DecodeOptions(average_views=4, window=4),
    DecodeOptions(search_views=8, average_views=4, window=4),
    DecodeOptions(multistart=2, window=4),
]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: f"{o.strategy}-{o.view_words}")
def test_every_decoder_runs_through_a_window(options):
    model, points = heavy_model(), instances([9, 7, 4])
    result = decode(model, TSP, collate(points), options, generator=torch.Generator())
    assert all(TSP.is_valid(p, s) for p, s in zip(points, result.sequences, strict=True))


def test_the_decoded_score_is_the_windowed_likelihood():
    model, points = heavy_model(seed=2), instances([13, 10])
    batch = collate(points)
    result = decode(model, TSP, batch, DecodeOptions(window=4))
    scored = masked_sequence_log_likelihood(
        LocalWindow(model, 4), TSP, batch.points, batch.lengths, result.tokens
    )
    torch.testing.assert_close(scored, result.log_prob, atol=1e-4, rtol=1e-4)


def test_unit_square_spans_the_longer_side_and_zeroes_pads():
    points = torch.tensor([[[1.0, 2.0], [3.0, 3.0], [2.0, 2.5], [9.0, 9.0]]])
    real = torch.tensor([[True, True, True, False]])
    out = unit_square(points, real)
    torch.testing.assert_close(out[0, :3], torch.tensor([[0.0, 0.0], [1.0, 0.5], [0.5, 0.25]]))
    assert out[0, 3].eq(0).all()


@pytest.mark.parametrize("bad", [1, -3, True, 2.5])
def test_bad_window_sizes_are_refused(bad):
    with pytest.raises(DecodeOptionError, match="window") as err:
        DecodeOptions(window=bad)
    assert err.value.option == "window"


def test_a_window_needs_the_heavy_decoder():
    torch.manual_seed(0)
    lstm = build_model(ModelConfig(input_dim=2, hidden=8)).eval()
    with pytest.raises(DecodeOptionError, match="heavy-decoder model.*lstm decoder"):
        LocalWindow(lstm, 4)
    small = decode(lstm, TSP, collate(instances([4])), DecodeOptions(window=4))
    assert TSP.is_valid(instances([4])[0], small.sequences[0])  # no window needed: decoded
    with pytest.raises(DecodeOptionError, match="heavy-decoder"):
        decode(lstm, TSP, collate(instances([6])), DecodeOptions(window=4))


def save(path, model):
    config = RunConfig(model.config, TrainConfig(task="tsp", sizes="5", steps=1))
    save_checkpoint(path, config, 0, model)
    return str(path)


def test_solver_takes_a_window_and_scores_what_it_decoded(tmp_path):
    path = save(tmp_path / "heavy.safetensors", heavy_model(seed=4))
    solver = ptrnet.load(path)
    points = instances([14], seed=8)[0]
    result = solver.solve(points, window=4)
    want = decode(solver.model, TSP, collate([points]), DecodeOptions(window=4))
    np.testing.assert_array_equal(result.sequence, want.sequences[0])
    assert result.log_prob == pytest.approx(float(want.log_prob[0]), abs=1e-4)
    with pytest.raises(ValueError, match="window"):
        solver.solve(points, window=1)


def test_cli_eval_and_predict_take_window(tmp_path, capsys):
    heavy = save(tmp_path / "heavy.safetensors", heavy_model(seed=4))
    torch.manual_seed(0)
    lstm = save(tmp_path / "lstm.safetensors", build_model(ModelConfig(input_dim=2, hidden=8)))
    data = tmp_path / "tsp12.txt"
    assert main(["generate", "tsp", "-n", "12", "--count", "3", "-q", "-o", str(data)]) == 0
    args = ["eval", "tsp", str(data), "--threads", "1", "--window", "5"]
    assert main([*args, "--model", heavy, "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["valid_rate"] == 1.0
    assert "window 5 (n > 5)" in err
    assert main([*args, "--model", lstm]) == 2
    assert "window 5: a window needs a heavy-decoder model" in capsys.readouterr().err
    assert main([*args[:-1], "1", "--model", heavy]) == 2
    assert "--window 1: window must be 0 (off) or an integer >= 2" in capsys.readouterr().err
    preds = tmp_path / "preds.txt"
    predict = ["predict", "tsp", str(data), "--model", heavy, "--window", "5", "-o", str(preds)]
    assert main([*predict, "--threads", "1"]) == 0
    assert len(preds.read_text().splitlines()) == 3


def test_a_batch_mixing_sizes_keeps_each_rows_own_output():
    model, points = heavy_model(seed=9), instances([10, 6, 10], seed=9)
    options = DecodeOptions(strategy="beam", beam_width=2, window=5)
    together = decode(model, TSP, collate(points), options)
    for row, p in enumerate(points):
        alone = decode(model, TSP, collate([p]), options)
        np.testing.assert_array_equal(together.sequences[row], alone.sequences[0])


@pytest.fixture
def windowed_folder(tmp_path):
    """A model folder: its own heavy model, n = 8-10 to it plainly and n = 11-20 to it through
    a window of 4 (two routes, one sub-folder)."""
    folder = tmp_path / "tsp"
    (folder / "big").mkdir(parents=True)
    save(folder / "best.safetensors", heavy_model(seed=4))
    save(folder / "big" / "best.safetensors", heavy_model(seed=5))
    routes = [
        {"sizes": "8-10", "dir": "big"},
        {"sizes": "11-20", "dir": "big", "window": 4},
    ]
    (folder / "sizes.json").write_text(json.dumps({"models": routes}))
    return folder


def test_a_size_route_sets_the_window_its_sizes_decode_through(windowed_folder):
    from ptrnet.inference import load_model, predict

    loaded = load_model(windowed_folder, "tsp")
    plain, windowed = loaded.for_size(9), loaded.for_size(14)
    assert (plain.window, windowed.window, loaded.window) == (0, 4, 0)
    assert plain.model is windowed.model  # one sub-folder, loaded once
    points = instances([14, 9, 14, 6], seed=3)
    got = predict(loaded, TSP, points)
    big = windowed.model
    for p, seq in zip(points, got, strict=True):
        model, window = (big, 4 if len(p) > 10 else 0) if len(p) >= 8 else (loaded.model, 0)
        want = decode(model, TSP, collate([p]), DecodeOptions(window=window)).sequences[0]
        np.testing.assert_array_equal(seq, want)
    off = predict(loaded, TSP, points[:1], DecodeOptions(window=0))[0]  # the caller's 0 wins
    np.testing.assert_array_equal(off, decode(big, TSP, collate(points[:1])).sequences[0])
    six = predict(loaded, TSP, points[:1], DecodeOptions(window=6))[0]  # so does any window
    np.testing.assert_array_equal(
        six, decode(big, TSP, collate(points[:1]), DecodeOptions(window=6)).sequences[0]
    )


def test_the_solver_and_the_cli_follow_a_routes_window(windowed_folder, tmp_path, capsys):
    solver = ptrnet.load(str(windowed_folder))
    points = instances([14], seed=8)[0]
    routed, explicit = solver.solve(points), solver.solve(points, window=4)
    np.testing.assert_array_equal(routed.sequence, explicit.sequence)
    assert routed.log_prob == pytest.approx(explicit.log_prob, abs=1e-5)  # scored as decoded
    data = tmp_path / "tsp14.txt"
    assert main(["generate", "tsp", "-n", "14", "--count", "2", "-q", "-o", str(data)]) == 0
    args = ["eval", "tsp", str(data), "--threads", "1", "--model", str(windowed_folder)]
    assert main(args) == 0
    report = capsys.readouterr().out
    assert "n = 11-20: " in report and "(window 4)" in report
    assert main([*args, "--window", "0"]) == 0
    assert "; no window;" in capsys.readouterr().out


def test_the_bundled_tsp_folder_windows_only_beyond_200_cities():
    """The shipped manifest: the LSTM to n = 10, then three heavy models, the 20-100 one
    through a window of 50 from n = 201 (docs/results.md, "Far larger instances")."""
    from ptrnet.inference import bundled_model_dir, load_model, read_size_routes

    folder = bundled_model_dir("tsp")
    assert [(str(s), p, w) for s, p, w, _ in read_size_routes(folder)] == [
        ("11-37", f"{folder}/heavy10-30", 0),
        ("38-85", f"{folder}/heavy40-52", 0),
        ("86-200", f"{folder}/heavy20-100", 0),
        ("201-1000", f"{folder}/heavy20-100", 50),
    ]
    loaded = load_model(None, "tsp")
    assert loaded.config.model.decoder == "lstm" and loaded.for_size(10) is loaded
    assert loaded.for_size(11).config.model.decoder == "heavy"
    assert loaded.for_size(200).model is loaded.for_size(201).model
    assert (loaded.for_size(200).window, loaded.for_size(1000).window) == (0, 50)


def test_the_web_page_decodes_through_the_routes_window(windowed_folder):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from ptrnet.inference import load_model
    from ptrnet.web.app import create_app

    loaded = load_model(windowed_folder, "tsp")
    points = instances([14], seed=8)[0]
    with TestClient(create_app({"tsp": loaded}), base_url="http://localhost") as client:
        response = client.post("/api/predict", json={"task": "tsp", "points": points.tolist()})
    assert response.status_code == 200, response.text
    model = response.json()["model"]
    assert model["info"]["window"] == 4 and model["info"]["name"].endswith("big")
    want = decode(loaded.for_size(14).model, TSP, collate([points]), DecodeOptions(window=4))
    assert model["sequence"] == want.sequences[0].tolist()


def coincident_instances():
    """The two instances that once failed through the bundled folder's window of 50: 250
    copies of one point, and 150 copies beside 100 random points."""
    rng = np.random.default_rng(0)
    spread = np.concatenate([np.full((150, 2), 0.5), rng.random((100, 2))])
    return [np.full((250, 2), 0.5), spread]


def test_coincident_points_decode_through_a_window_to_tours():
    """Among equal distances the window keeps the lower index, so the first step's window holds
    input 0 (topk's choice among 250 ties left it out: no allowed token, NaN scores)."""
    solver = ptrnet.load("tsp")
    for points in coincident_instances():
        result = solver.solve(points)
        assert TSP.is_valid(points, result.sequence)
        assert np.isfinite(result.log_prob)


def test_predict_writes_tours_for_coincident_points_through_a_window(tmp_path, capsys):
    data = tmp_path / "coincident.txt"
    data.write_text("".join(" ".join(map(str, p.ravel())) + "\n" for p in coincident_instances()))
    out = tmp_path / "tours.txt"
    assert main(["predict", "tsp", str(data), "-o", str(out), "--threads", "1"]) == 0, (
        capsys.readouterr().err
    )
    for points, line in zip(coincident_instances(), out.read_text().splitlines(), strict=True):
        tour = np.array(line.split(" output ")[1].split(), dtype=np.int64) - 1
        assert TSP.is_valid(points, tour)


def test_the_window_keeps_the_lower_index_among_equal_distances(windowed_folder):
    from ptrnet.inference import load_model, predict

    cases = [np.full((20, 2), 0.25), np.concatenate([np.full((12, 2), 0.5), *instances([8])])]
    tours = predict(load_model(windowed_folder, "tsp"), TSP, cases)
    for points, seq in zip(cases, tours, strict=True):
        assert TSP.is_valid(points, seq)
