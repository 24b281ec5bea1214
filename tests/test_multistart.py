"""Multi-start greedy decoding and best-of-k sampling, against plain greedy decoding and plain
sampling of the same model as oracles."""

import numpy as np
import pytest
import torch
from tiny_models import TRANSFORMER

from ptrnet.datasets.batching import Batch, collate
from ptrnet.decoding.dataset import decode_all
from ptrnet.decoding.decode import decode
from ptrnet.decoding.multistart import rotate, rotations, unrotate_tokens
from ptrnet.decoding.options import DecodeOptions
from ptrnet.decoding.view_scores import image_tokens
from ptrnet.model import ModelConfig, build_model
from ptrnet.solvers.tsp import tour_length
from ptrnet.tasks import SizeRange, from_tokens, get_task
from ptrnet.tasks.symmetry import ROTATIONS, square_symmetry_tensor

torch.set_num_threads(1)

TSP = get_task("tsp")


def make_model(arch, seed=0):
    torch.manual_seed(seed)
    extra = TRANSFORMER if arch == "transformer" else {}
    return build_model(ModelConfig(input_dim=2, hidden=16, init="default", **extra)).eval()


def tsp_batch(sizes=(6, 4, 7, 5), seed=0):
    rng = np.random.default_rng(seed)
    points = [rng.random((n, 2)) for n in sizes]
    return points, collate(points)


def costs(points, result):
    return np.array([tour_length(p, s) for p, s in zip(points, result.sequences, strict=True)])


def test_rotations_put_each_start_first_and_keep_pads_in_place():
    order = rotations(torch.tensor([3, 2]), 3)
    assert order.tolist() == [
        [0, 1, 2],
        [1, 2, 0],
        [2, 0, 1],
        [0, 1, 2],  # instance 1 (n = 2, one pad): starts 0, 1, then 2 = start 0 again
        [1, 0, 2],
        [0, 1, 2],
    ]
    tokens = torch.tensor([[1, 2, 3, 1, 0], [3, 1, 2, 3, 0]])  # over rows 1 and 2's inputs
    back = unrotate_tokens(tokens, order[1:3])
    assert back.tolist() == [[2, 3, 1, 2, 0], [2, 3, 1, 2, 0]]


def test_rotated_copies_hold_the_same_points_in_rotated_order():
    points, batch = tsp_batch((3, 2))
    copies = rotate(batch, rotations(batch.lengths, 3))
    assert copies.size == 6 and copies.lengths.tolist() == [3, 3, 3, 2, 2, 2]
    np.testing.assert_allclose(copies.points[2, :3].numpy(), points[0][[2, 0, 1]], rtol=1e-6)


@pytest.mark.parametrize("arch", ["lstm", "transformer"])
def test_multistart_tours_are_valid_and_no_longer_than_greedy(arch):
    model = make_model(arch)
    points, batch = tsp_batch()
    greedy = decode(model, TSP, batch, DecodeOptions("greedy"))
    likely = decode(model, TSP, batch, DecodeOptions(multistart=1))
    shortest = decode(model, TSP, batch, DecodeOptions(multistart=1, pick="shortest"))
    for result in (likely, shortest):
        assert all(TSP.is_valid(p, s) for p, s in zip(points, result.sequences, strict=True))
    # start 0 reads the instance as given, so it is the greedy run: both picks beat it
    assert np.all(costs(points, shortest) <= costs(points, greedy) + 1e-9)
    assert torch.all(likely.log_prob >= greedy.log_prob - 1e-5)
    assert np.all(costs(points, shortest) <= costs(points, likely) + 1e-9)


def test_every_start_begins_its_tour_at_its_city_and_likely_keeps_the_best_score():
    model = make_model("transformer")
    points, batch = tsp_batch((5,))
    runs = [
        decode(model, TSP, Batch(batch.points[:, order], batch.lengths), DecodeOptions("greedy"))
        for order in rotations(batch.lengths, 5)
    ]
    for start, run in enumerate(runs):  # the first input read, city `start`, comes first
        assert run.tokens[0, 0] == 1 and run.sequences[0][0] == 0
        assert rotations(batch.lengths, 5)[start, 0] == start
    best = max(float(run.log_prob[0]) for run in runs)
    chosen = decode(model, TSP, batch, DecodeOptions(multistart=1))
    assert chosen.log_prob[0].item() == pytest.approx(best, abs=1e-5)
    start = int(np.argmax([float(r.log_prob[0]) for r in runs]))
    assert chosen.tokens[0, 0].item() - 1 == start  # the run's own tokens, from its start
    tour = from_tokens(chosen.tokens[0].numpy())  # the sequence: that tour from city 0
    np.testing.assert_array_equal(chosen.sequences[0], TSP.at_label_start(tour))
    assert chosen.sequences[0][0] == 0 and sorted(chosen.sequences[0][:-1]) == list(range(5))
    assert tour.tolist() != chosen.sequences[0].tolist() or start == 0


def test_best_of_one_sample_is_one_sample():
    model = make_model("lstm")
    _, batch = tsp_batch()
    one = decode(
        model, TSP, batch, DecodeOptions("sample"), generator=torch.Generator().manual_seed(4)
    )
    k1 = decode(
        model,
        TSP,
        batch,
        DecodeOptions("sample", samples=1),
        generator=torch.Generator().manual_seed(4),
    )
    assert torch.equal(one.tokens, k1.tokens) and torch.equal(one.log_prob, k1.log_prob)


def test_best_of_k_keeps_the_shortest_or_most_likely_of_the_same_k_samples():
    """The K samples per instance are the draws of plain sampling on each instance repeated K
    times with the same generator; best-of-K returns the shortest (or likeliest) of them."""
    model, k = make_model("lstm"), 6
    points, batch = tsp_batch()
    rows = torch.arange(batch.size).repeat_interleave(k)
    plain = decode(
        model,
        TSP,
        Batch(batch.points[rows], batch.lengths[rows]),
        DecodeOptions("sample"),
        generator=torch.Generator().manual_seed(2),
    )
    each = costs([points[i] for i in rows.tolist()], plain).reshape(batch.size, k)
    for pick, want in (("shortest", each.min(axis=1)), ("likely", None)):
        options = DecodeOptions("sample", samples=k, pick=pick)
        best = decode(model, TSP, batch, options, generator=torch.Generator().manual_seed(2))
        if want is not None:
            np.testing.assert_allclose(costs(points, best), want, rtol=1e-9)
        else:
            top = plain.log_prob.view(batch.size, k).max(dim=1).values
            torch.testing.assert_close(best.log_prob, top)


def test_decode_all_multistart_matches_decode_and_keeps_the_order():
    model = make_model("transformer")
    points = TSP.generate(SizeRange.parse("4-8"), 9, seed=5)
    options = DecodeOptions(multistart=1, pick="shortest", batch_size=16)  # 2 instances a batch
    tours = decode_all(model, TSP, points, options)
    for p, tour in zip(points, tours, strict=True):
        alone = decode(model, TSP, collate([p]), options).sequences[0]
        assert tour_length(p, tour) == pytest.approx(tour_length(p, alone))


def per_view_multistart(model, batch, symmetries, pick):
    """Oracle: plain multistart on each symmetric copy, one decode call per view."""
    return [
        decode(
            model,
            TSP,
            Batch(square_symmetry_tensor(batch.points, which), batch.lengths),
            DecodeOptions(multistart=1, pick=pick),
        )
        for which in symmetries
    ]


@pytest.mark.parametrize(("views", "symmetries"), [(4, ROTATIONS), (8, range(8))])
def test_multistart_views_keep_the_shortest_of_every_views_multistart(views, symmetries):
    model = make_model("transformer", seed=3)
    points, batch = tsp_batch()
    each = per_view_multistart(model, batch, symmetries, "shortest")
    want = np.min([costs(points, run) for run in each], axis=0)  # lengths: symmetries keep them
    got = decode(model, TSP, batch, DecodeOptions(multistart=views, pick="shortest"))
    assert all(TSP.is_valid(p, s) for p, s in zip(points, got.sequences, strict=True))
    np.testing.assert_allclose(costs(points, got), want, rtol=1e-9)
    one = decode(model, TSP, batch, DecodeOptions(multistart=1, pick="shortest"))
    assert np.all(costs(points, got) <= costs(points, one) + 1e-9)


def test_multistart_eight_views_keep_the_likeliest_run_mapped_back_to_the_instance():
    model = make_model("lstm", seed=2)
    points, batch = tsp_batch()
    each = per_view_multistart(model, batch, range(8), "likely")
    scores = torch.stack([run.log_prob for run in each])  # (8, B)
    got = decode(model, TSP, batch, DecodeOptions(multistart=8))
    torch.testing.assert_close(got.log_prob, scores.max(dim=0).values)
    for b, which in enumerate(scores.argmax(dim=0).tolist()):
        tokens = each[which].tokens[b : b + 1]
        back = image_tokens(TSP, [points[b]], tokens, which)  # a mirror reads it backwards
        n = len(points[b])
        assert got.tokens[b, : n + 1].tolist() == back[0, : n + 1].tolist()


def test_multistart_views_refuse_to_return_distributions():
    model = make_model("transformer")
    _, batch = tsp_batch()
    with pytest.raises(ValueError, match=r"return_probs needs multistart 1 \(one view\)"):
        decode(model, TSP, batch, DecodeOptions(multistart=2), return_probs=True)
