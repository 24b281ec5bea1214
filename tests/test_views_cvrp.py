"""The square's symmetries on vehicle routing rows (x, y, demand, capacity): x and y moved by
maps written out by hand, demand and capacity kept, every route kept with its length; and every
view option decoding cvrp, checked against separate decodes of the images and a hand-run
teacher-forced likelihood."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from test_multistart_forced import pointer, tight_instances

from ptrnet.datasets.batching import collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.options import DecodeOptions
from ptrnet.decoding.view_scores import image_tokens
from ptrnet.runs.config import TrainConfig
from ptrnet.tasks import from_tokens, get_task, to_tokens
from ptrnet.tasks.symmetry import SQUARE_SYMMETRIES, square_symmetry, square_symmetry_tensor
from ptrnet.training.augment import augment
from ptrnet.training.baselines import make_baseline
from ptrnet.training.data import TrainingData
from ptrnet.training.loop import build_optimizer, train_step

torch.set_num_threads(1)
CVRP = get_task("cvrp")
#: Symmetry code -> the map of (x, y), written out (bit 0 flips x, bit 1 y, bit 2 then swaps).
BY_HAND = {
    0: lambda x, y: (x, y),
    1: lambda x, y: (1 - x, y),
    2: lambda x, y: (x, 1 - y),
    3: lambda x, y: (1 - x, 1 - y),
    4: lambda x, y: (y, x),
    5: lambda x, y: (y, 1 - x),
    6: lambda x, y: (1 - y, x),
    7: lambda x, y: (1 - y, 1 - x),
}


def hand_log_likelihood(model, points: np.ndarray, tokens: list[int]) -> float:
    """The masked log-likelihood of ``tokens`` (the end included), by a loop of its own over
    ``model``'s encode and step and the task's rule."""
    x = torch.tensor(points, dtype=torch.float32)[None]
    lengths = torch.tensor([len(points)])
    memory = model.encode(x, lengths)
    state, prev = memory.state, torch.zeros(1, dtype=torch.long)
    rules, total = CVRP.decode_state(lengths, "task", x), 0.0
    with torch.no_grad():
        for token in tokens:
            logits, state = model.step(memory, prev, state)
            logp = torch.log_softmax(logits[0].masked_fill(~rules.allowed()[0], -math.inf), dim=0)
            total += float(logp[token])
            prev = torch.tensor([token])
            rules = rules.update(prev)
    return total


@pytest.mark.parametrize("which", range(SQUARE_SYMMETRIES))
def test_a_symmetry_moves_x_and_y_only_and_keeps_every_route_and_its_length(which):
    points = tight_instances((7,), which)[0]
    image = square_symmetry(points, which)
    want = np.array([BY_HAND[which](x, y) for x, y in points[:, :2]])
    np.testing.assert_allclose(image[:, :2], want, atol=1e-12)
    np.testing.assert_array_equal(image[:, 2:], points[:, 2:])  # demand, capacity
    batched = square_symmetry_tensor(torch.tensor(points)[None], which)[0].numpy()
    np.testing.assert_allclose(batched, image, atol=1e-12)
    routes = CVRP.solve(points)
    assert CVRP.is_valid(image, routes)
    assert CVRP.sequence_cost(image, routes) == pytest.approx(CVRP.sequence_cost(points, routes))
    far = points.copy()
    far[:, :2] *= 100.0  # outside the unit square: still an isometry
    moved = square_symmetry(far, which)
    assert CVRP.sequence_cost(moved, routes) == pytest.approx(CVRP.sequence_cost(far, routes))


def test_an_output_means_the_same_routes_in_every_view():
    tokens = torch.tensor([[3, 2, 1, 4, 0], [2, 1, 3, 0, 0]])
    points = tight_instances((4, 3), 1)
    for which in range(SQUARE_SYMMETRIES):
        assert torch.equal(image_tokens(CVRP, points, tokens, which), tokens)


def test_augmentation_keeps_the_depot_first_moves_coordinates_only_and_relabels():
    points = tight_instances((8,), 2)[0]
    label = CVRP.solve(points)
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(24):
        moved, seq = augment(CVRP, points, label, rng)
        np.testing.assert_array_equal(moved[0, 2:], points[0, 2:])  # the depot's row, first
        which = next(  # the symmetry applied, found by the depot's image and every row's
            w
            for w in range(SQUARE_SYMMETRIES)
            if np.allclose(np.sort(square_symmetry(points, w), axis=0), np.sort(moved, axis=0))
        )
        seen.add(which)
        origin = [  # the original row each moved row came from
            int(np.flatnonzero(np.all(np.isclose(square_symmetry(points, which), row), 1))[0])
            for row in moved
        ]
        assert origin[0] == 0 and sorted(origin) == list(range(len(points)))
        np.testing.assert_array_equal(moved[:, 2:], points[origin, 2:])
        assert CVRP.is_valid(moved, seq)
        assert CVRP.sequence_cost(moved, seq) == pytest.approx(CVRP.sequence_cost(points, label))
    assert len(seen) > 4  # the symmetries are drawn, not just the order


@pytest.mark.parametrize(
    "options",
    [
        dict(average_views=2),
        dict(average_views=4),
        dict(search_views=8),
        dict(search_views=8, average_views=4),
        dict(multistart=4),
        dict(multistart=8, pick="shortest"),
        dict(strategy="beam", beam_width=3, search_views=8),
    ],
    ids=str,
)
def test_every_view_option_decodes_cvrp_to_valid_routes(options):
    points = tight_instances((5, 3, 6), 3)
    result = decode(pointer(), CVRP, collate(points), DecodeOptions(**options))
    assert all(CVRP.is_valid(p, s) for p, s in zip(points, result.sequences, strict=True))


def test_multistart_on_eight_views_is_the_best_of_multistart_on_each_image():
    points = tight_instances((5, 4, 6), 4)
    model = pointer(1)
    shortest = DecodeOptions(multistart=1, pick="shortest")
    best = [math.inf] * len(points)
    for which in range(SQUARE_SYMMETRIES):  # each image decoded on its own
        images = [square_symmetry(p, which) for p in points]
        found = decode(model, CVRP, collate(images), shortest)
        for b, seq in enumerate(found.sequences):
            best[b] = min(best[b], CVRP.sequence_cost(points[b], seq))
    pooled = decode(model, CVRP, collate(points), DecodeOptions(multistart=8, pick="shortest"))
    costs = [CVRP.sequence_cost(p, s) for p, s in zip(points, pooled.sequences, strict=True)]
    np.testing.assert_allclose(costs, best, rtol=1e-6)


def test_eight_view_search_scores_its_answer_by_the_mean_of_the_eight_views():
    points = tight_instances((6, 4), 5)
    model = pointer(2)
    found = decode(model, CVRP, collate(points), DecodeOptions(search_views=8))
    for b, p in enumerate(points):
        tokens = to_tokens(from_tokens(found.tokens[b].numpy())).tolist()
        views = [hand_log_likelihood(model, square_symmetry(p, w), tokens) for w in range(8)]
        assert found.log_prob[b].item() == pytest.approx(np.mean(views), abs=1e-4)
        assert CVRP.is_valid(p, found.sequences[b])


def test_pomo_training_on_augmented_cvrp_batches_takes_finite_steps():
    """The training data with ``augment``: each instance a symmetry of the plain run's with
    its customers reordered, the depot first, demands and capacity carried along unchanged;
    three POMO steps on those batches."""
    base = dict(task="cvrp", sizes="6", steps=3, batch_size=4, objective="reinforce",
                baseline="pomo", precision="fp32", threads=1, seed=3)  # fmt: skip
    cfg = TrainConfig(**base, augment=True)
    plain, shown = TrainingData(CVRP, TrainConfig(**base), []), TrainingData(CVRP, cfg, [])
    model = pointer()
    optimizer, baseline = build_optimizer(model, cfg), make_baseline(cfg, model, CVRP)
    model.train()
    moved = 0
    for step in range(3):
        batch, given = shown.batch(step), plain.batch(step)
        moved += int(not torch.equal(batch.points[:, :, :2], given.points[:, :, :2]))
        for p, q in zip(batch.points.double().numpy(), given.points.double().numpy(), strict=True):
            np.testing.assert_array_equal(p[0, 2:], q[0, 2:])  # the depot's demand, capacity
            assert any(  # some symmetry of the plain instance, customers reordered
                np.allclose(np.sort(square_symmetry(q, w)[1:], axis=0), np.sort(p[1:], axis=0))
                and np.allclose(square_symmetry(q, w)[0], p[0], atol=1e-6)
                for w in range(SQUARE_SYMMETRIES)
            )
        cost = train_step(model, optimizer, batch, cfg, step, baseline=baseline)
        assert math.isfinite(cost)
    assert moved == 3  # every batch shown in other views than the plain run's
