"""The map into the unit square (ptrnet.io.unit_square): which instances it moves, that a model
decodes a tiny cluster as the same shape at full size, and that the command line answers scaled
inputs in their own units."""

import numpy as np
import pytest
import torch

import ptrnet
from ptrnet.io.unit_square import MIN_EXTENT, UnitMap, fit_unit_square, to_unit_square
from ptrnet.tasks import get_task

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


def test_scaled_inputs_give_the_same_sequence_in_their_own_units(cli, tmp_path, models) -> None:
    raw = np.random.default_rng(3).random((10, 2))
    points = UnitMap.fit(raw).to_unit(raw)  # the unit-square image of any scaled copy
    np.savetxt(tmp_path / "unit.txt", points)
    np.savetxt(tmp_path / "big.txt", points * 1000 + 500)
    for command in ("solve", "predict"):
        _, unit, _ = cli(command, "tsp", "unit.txt", "-o", "-", "-q")
        status, big, err = cli(command, "tsp", "big.txt", "-o", "-")
        assert status == 0 and unit.split(" output ")[1] == big.split(" output ")[1]
        noted = "mapped 1 instance(s) into the unit square" in err
        assert noted == (command == "predict")  # a solver's answer does not depend on the map
        coords = np.array(big.split(" output ")[0].split(), dtype=float).reshape(-1, 2)
        assert np.allclose(coords, points * 1000 + 500)  # written in the input's units


def test_eval_reports_lengths_in_the_input_units(cli, tmp_path, models) -> None:
    points = np.random.default_rng(4).random((6, 2))
    tsp = get_task("tsp")
    seq = " ".join(str(i + 1) for i in tsp.solve(points))
    for name, scale in (("unit.txt", 1.0), ("big.txt", 1000.0)):
        coords = " ".join(map(repr, (points * scale).ravel().tolist()))
        (tmp_path / name).write_text(f"{coords} output {seq}\n")
    lengths = []
    for name in ("unit.txt", "big.txt"):
        status, out, _ = cli("eval", "tsp", name, "--json")
        assert status == 0
        lengths.append(float(out.split('"mean_length": ')[1].split(",")[0]))
    assert lengths[1] == pytest.approx(1000 * lengths[0])
