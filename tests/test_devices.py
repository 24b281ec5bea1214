"""The ``device`` option: names are validated, CUDA is refused clearly where torch has none."""

import pytest
import torch

from ptrnet.compute.devices import check_device_name, resolve_device
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.runs.resume import resume_config


@pytest.mark.parametrize("name", ["auto", "cpu", "cuda", "cuda:1"])
def test_known_names(name):
    assert check_device_name(name) == name


@pytest.mark.parametrize("name", ["gpu", "CUDA", "cuda:", "cpu:0", "", 3])
def test_unknown_names_raise(name):
    with pytest.raises(ValueError, match="unknown device"):
        check_device_name(name)
    with pytest.raises(ValueError, match="unknown device"):
        TrainConfig(task="sort", sizes="5", steps=1, device=name)


def test_auto_follows_cuda_availability():
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device("auto").type == expected
    assert resolve_device("cpu") == torch.device("cpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA GPU")
def test_cuda_without_a_gpu_is_a_clear_error():
    with pytest.raises(ValueError, match="sees no CUDA GPU"):
        resolve_device("cuda")


def test_device_may_change_on_resume():
    saved = RunConfig.from_dict(
        {
            "model": {"input_dim": 1, "hidden": 8},
            "train": {"task": "sort", "sizes": "5", "steps": 2},
        }
    )
    changed = resume_config(saved, {"device": "cpu", "steps": 4})
    assert changed.train.device == "cpu" and changed.train.steps == 4
