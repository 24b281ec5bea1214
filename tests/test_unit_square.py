"""The map into the unit square (ptrnet.io.unit_square): which instances it moves, and that a
model decodes a tiny cluster as the same shape at full size."""

import numpy as np
import pytest
import torch

import ptrnet
from ptrnet.io.unit_square import MIN_EXTENT, UnitMap, fit_unit_square, to_unit_square

torch.set_num_threads(1)
RNG = np.random.default_rng(3)


def test_instances_inside_the_square_and_not_tiny_are_left_alone():
    points = RNG.random((10, 2))
    assert fit_unit_square(points) is None
    assert fit_unit_square(np.full((4, 2), 0.5)) is None  # one place: nothing to scale
    full = UnitMap.fit(points).to_unit(points)  # its longer side spans [0, 1]
    assert fit_unit_square(0.25 + full * MIN_EXTENT) is None  # at the bound
    assert fit_unit_square(0.25 + full * MIN_EXTENT * 0.99) is not None


@pytest.mark.parametrize("scale", [1e-3, 1e-9, 1e-12])
def test_tiny_instances_inside_the_square_are_scaled_to_fill_it(scale):
    points = 0.25 + RNG.random((10, 2)) * scale
    mapping = fit_unit_square(points)
    assert isinstance(mapping, UnitMap)
    unit = mapping.to_unit(points)
    assert unit.min() == 0.0 and unit.max() == pytest.approx(1.0)


def test_a_model_answers_a_tiny_cluster_as_its_full_size_shape():
    hull = ptrnet.load("convex_hull")
    shape = RNG.random((8, 2))
    big = hull.solve(UnitMap.fit(shape).to_unit(shape))
    tiny = hull.solve(0.5 + UnitMap.fit(shape).to_unit(shape) * 1e-9)
    np.testing.assert_array_equal(tiny.sequence, big.sequence)
    assert tiny.cost == pytest.approx(big.cost * 1e-18)


@pytest.mark.parametrize("points", [RNG.random((9, 2)) * 4000 - 800, RNG.random((9, 2)) * 1e-6])
def test_mapping_an_image_again_changes_nothing(points):
    image = to_unit_square(points)
    assert image.min() == 0 and image.max() == 1
    np.testing.assert_array_equal(to_unit_square(image), image)
