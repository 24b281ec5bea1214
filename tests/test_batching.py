"""Padding and targets of :func:`ptrnet.datasets.batching.collate`."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from ptrnet.datasets.batching import IGNORE_INDEX, Batch, collate
from ptrnet.tasks import from_tokens
from tests.fuzzing import cases

torch.set_num_threads(1)


def test_collate_pads_points_and_targets():
    points = [np.arange(6.0).reshape(3, 2), np.ones((1, 2)), np.full((2, 2), 7.0)]
    seqs = [np.array([2, 0, 1, 2]), np.array([0]), np.array([1])]
    batch = collate(points, seqs)
    assert batch.points.dtype == torch.float32 and batch.points.shape == (3, 3, 2)
    assert batch.lengths.tolist() == [3, 1, 2]
    assert torch.equal(batch.points[0], torch.arange(6.0).view(3, 2))
    assert batch.points[1, 1:].abs().sum() == 0 and batch.points[2, 2:].abs().sum() == 0
    # Tokens = 1-based indices, end token 0 appended, then ignore-index pads.
    assert batch.targets.tolist() == [
        [3, 1, 2, 3, 0],
        [1, 0, IGNORE_INDEX, IGNORE_INDEX, IGNORE_INDEX],
        [2, 0, IGNORE_INDEX, IGNORE_INDEX, IGNORE_INDEX],
    ]


def test_inference_batch_has_no_targets():
    batch = collate([np.zeros((2, 1))])
    assert batch.targets is None and batch.size == 1


@pytest.mark.parametrize(
    "points, seqs",
    [
        ([], None),
        ([np.zeros((0, 2))], None),
        ([np.zeros((2, 2)), np.zeros((2, 1))], None),
        ([np.zeros((2, 2))], [np.array([0]), np.array([1])]),
        ([np.zeros((2, 2))], [np.array([2])]),
        ([np.zeros((2, 2))], [np.array([-1])]),
    ],
)
def test_collate_rejects_bad_input(points, seqs):
    with pytest.raises(ValueError):
        collate(points, seqs)


@cases(40)
@given(st.lists(st.integers(1, 7), min_size=1, max_size=6), st.integers(0, 2**31 - 1))
def test_collate_roundtrip(sizes, seed):
    rng = np.random.default_rng(seed)
    points = [rng.random((n, 2)) for n in sizes]
    seqs = [rng.permutation(n)[: rng.integers(0, n + 1)] for n in sizes]
    batch = collate(points, seqs)
    for b, (x, s) in enumerate(zip(points, seqs, strict=True)):
        n = len(x)
        np.testing.assert_allclose(batch.points[b, :n].numpy(), x, rtol=1e-6)
        assert batch.points[b, n:].abs().sum() == 0
        row = batch.targets[b]
        real = row[row != IGNORE_INDEX].numpy()
        assert real[-1] == 0 and np.array_equal(from_tokens(real), s)


def test_batch_to_device_keeps_content():
    batch = collate([np.zeros((2, 2))], [np.array([1, 0])])
    moved = batch.to("cpu")
    assert isinstance(moved, Batch) and torch.equal(moved.targets, batch.targets)
