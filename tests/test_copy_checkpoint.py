"""The copy-task checkpoint (ptrnet/text/checkpoint.py): a round trip keeps everything, and a
file whose metadata or tensors do not fit is refused with one line (a CheckpointError), never a
traceback or a model built from bad values."""

import pytest
import torch

from ptrnet.io.atomic import atomic_write_bytes
from ptrnet.model.pointer_generator import PointerGenerator, PointerGeneratorConfig
from ptrnet.runs.checkpoint import CheckpointError, checksummed_file
from ptrnet.text.checkpoint import FORMAT, load_copy_model, save_copy_model
from ptrnet.text.evaluate import load
from ptrnet.text.vocab import SPECIALS, Vocabulary

torch.set_num_threads(1)

VOCAB = Vocabulary([*SPECIALS, "the", "record", "breaks"])


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return PointerGenerator(PointerGeneratorConfig(len(VOCAB), None, embed=8, hidden=12))


def _write(path, model, change=None, drop=(), extra_tensors=None):
    """A copy checkpoint of ``model`` with its metadata changed by ``change`` and ``drop``."""
    tensors = {f"model.{k}": v.detach().contiguous() for k, v in model.state_dict().items()}
    tensors.update(extra_tensors or {})
    meta = {
        "format": FORMAT,
        "model": model.config.to_dict(),
        "vocabulary": list(VOCAB.words),
        "train": {"arch": "pointer_generator", "task": "copy"},
        "step": 3,
        "info": {},
        **(change or {}),
    }
    for key in drop:
        del meta[key]
    atomic_write_bytes(path, checksummed_file(tensors, meta))
    return path


def test_a_saved_copy_model_loads_with_its_weights_vocabulary_step_and_info(model, tmp_path):
    path = tmp_path / "m.safetensors"
    save_copy_model(path, model, VOCAB, {"task": "copy"}, 5, {"exact_match": 0.5})
    loaded = load_copy_model(path)
    assert loaded.step == 5 and loaded.info == {"exact_match": 0.5}
    assert loaded.vocab.words == VOCAB.words and not loaded.model.training
    for key, value in model.state_dict().items():
        assert torch.equal(loaded.model.state_dict()[key], value)


@pytest.mark.parametrize(
    ("change", "drop", "problem"),
    [
        ({}, ("step",), "no 'step'"),
        ({"step": "x"}, (), "'step' is not a JSON integer"),
        ({"step": True}, (), "'step' is not a JSON integer"),
        ({"step": -4}, (), "'step' is -4"),
        ({"train": [1]}, (), "'train' is not a JSON object"),
        ({"info": 5}, (), "'info' is not a JSON object"),
        ({"model": [1]}, (), "'model' is not a JSON object"),
        ({"vocabulary": "abc"}, (), "'vocabulary' is not a JSON array"),
        ({"vocabulary": [*VOCAB.words[:-1], 5]}, (), "not a string"),
    ],
)
def test_metadata_of_the_wrong_type_is_one_line(model, tmp_path, change, drop, problem):
    path = _write(tmp_path / "m.safetensors", model, change, drop)
    with pytest.raises(CheckpointError, match=problem) as caught:
        load_copy_model(path)
    assert "\n" not in str(caught.value)


def test_train_not_an_object_does_not_crash_the_loader(model, tmp_path):
    """``load`` reads ``train["task"]``: a list there was an AttributeError."""
    path = _write(tmp_path / "m.safetensors", model, {"train": ["copy"]})
    with pytest.raises(CheckpointError, match="'train'"):
        load(path)


@pytest.mark.parametrize(
    ("change", "extra", "problem"),
    [
        ({"hidden": 16}, None, r"model\.\S+ has shape \[\d+, \d+\], the configuration needs"),
        ({"vocab_size": 9}, None, "vocabulary and model disagree"),
        ({}, {"model.extra": torch.zeros(2)}, r"'model\.extra' is missing or unexpected"),
    ],
)
def test_tensors_that_do_not_fit_the_configuration_are_one_line(
    model, tmp_path, change, extra, problem
):
    """torch's load_state_dict error ran over many lines, one per tensor."""
    config = {**model.config.to_dict(), **change}
    path = _write(tmp_path / "m.safetensors", model, {"model": config}, extra_tensors=extra)
    with pytest.raises(CheckpointError, match=problem) as caught:
        load_copy_model(path)
    assert "\n" not in str(caught.value)


def test_a_vast_configuration_is_refused_before_anything_is_built(model, tmp_path):
    """The tensors are compared with the configuration's shapes on the meta device: a
    configuration whose model would take terabytes (hidden 2^20) is never allocated (it was
    an allocator error, or with less, memory taken before the shapes were compared)."""
    config = {**model.config.to_dict(), "hidden": 2**20}
    path = _write(tmp_path / "m.safetensors", model, {"model": config})
    with pytest.raises(CheckpointError, match="has shape"):
        load_copy_model(path)
