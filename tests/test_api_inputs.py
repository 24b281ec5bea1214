"""Points the Python API cannot read as real numbers are one clear line, never a warning and a
silently cut value or a traceback from deep inside numpy or torch: complex values, meta tensors
and tensors on a device this torch cannot copy from."""

import warnings

import numpy as np
import pytest
import torch

import ptrnet

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def sort():
    return ptrnet.load("sort", device="cpu")


COMPLEX = {
    "array": np.array([0.3, 0.1, 0.2]) + 1j,
    "list": [0.3, 1j, 0.2],
    "tensor": torch.rand(5, dtype=torch.complex64),
    "ragged": [[0.1, 0.2, 0.3], [0.3j, 0.1]],
    "list of tensors": [torch.rand(4, dtype=torch.complex64), torch.rand(3)],
}


@pytest.mark.parametrize("points", COMPLEX.values(), ids=COMPLEX)
def test_complex_points_are_refused_not_cut_to_their_real_part(sort, points):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning either
        with pytest.raises(TypeError) as caught:
            sort.solve(points)
    assert str(caught.value) == "sort points must be real numbers, got complex values"


def test_a_meta_tensor_is_one_line(sort):
    with pytest.raises(ValueError) as caught:
        sort.solve(torch.rand(5, device="meta"))
    assert str(caught.value) == "sort points are a meta tensor, which holds no values"


class UnreadableTensor:
    """What a CUDA tensor is to a CPU-only torch: its copy to the CPU fails with torch's
    AssertionError."""

    device = torch.device("cuda", 0)

    def is_complex(self) -> bool:
        return False

    def detach(self):
        return self

    def cpu(self):
        raise AssertionError("Torch not compiled with CUDA enabled")


@pytest.mark.parametrize("wrap", [lambda t: t, lambda t: [t]], ids=["tensor", "list"])
def test_a_tensor_on_a_device_torch_cannot_read_names_the_device(sort, wrap):
    with pytest.raises(ValueError) as caught:
        sort.solve(wrap(UnreadableTensor()))
    assert str(caught.value) == (
        "sort points are a tensor on device 'cuda:0', whose values cannot be read here "
        "(Torch not compiled with CUDA enabled)"
    )


def test_a_fake_cuda_tensor_names_its_device(sort):
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        fake = torch.rand(5, device="cuda")
    with pytest.raises(ValueError, match=r"^sort points are a tensor on device 'cuda:0', whose"):
        sort.solve(fake)


def test_real_tensors_and_arrays_still_decode(sort):
    values = [0.3, 0.1, 0.2, 0.5]
    expected = [1, 2, 0, 3]
    assert sort.solve(values).sequence.tolist() == expected
    assert sort.solve(torch.tensor(values)).sequence.tolist() == expected
    assert sort.solve(np.array(values, dtype=np.float32)).sequence.tolist() == expected


TOO_LARGE = {
    "one instance": [10**400, 0.1, 0.2],
    "points as lists": [[0.3], [-(10**400)], [0.2]],
    "ragged instances": [[0.1, 0.2, 0.3], [0.3, 10**400]],
    "object array": np.array([0.3, 10**400, 0.2], dtype=object),
}


@pytest.mark.parametrize("points", TOO_LARGE.values(), ids=TOO_LARGE)
def test_an_integer_too_large_for_a_float_is_a_value_error(sort, points):
    """``10**400`` raised numpy's OverflowError; a point after a good one was also reported as
    a shape error (the overflow read as ragged input)."""
    with pytest.raises(ValueError) as caught:
        sort.solve(points)
    assert str(caught.value) == (
        "a sort instance has an integer too large for a float64 (coordinates must be finite "
        "and within +-1e+100)"
    )


def test_a_tsp_point_too_large_for_a_float_is_a_value_error_wherever_it_is():
    from ptrnet.api.solver import as_instances
    from ptrnet.tasks import get_task

    for points in ([[10**400, 0], [0, 1], [1, 1]], [[0, 1], [10**400, 0], [1, 1]]):
        with pytest.raises(ValueError, match=r"^a tsp instance has an integer too large"):
            as_instances(get_task("tsp"), points)
