"""docs/model.md names code that exists: every ``path:name`` and every ``Class.member`` of the
Ptr-Net it maps the paper to, so the map cannot silently go stale."""

import importlib
import re
from pathlib import Path

import pytest
import torch

from ptrnet.model import ModelConfig, build_model

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs" / "model.md").read_text()
FILE_NAMES = sorted(set(re.findall(r"`(ptrnet/[\w/]+\.py):([\w.]+)`", PAGE)))
MEMBERS = sorted(set(re.findall(r"`(EncoderDecoder|PointerNetwork|Memory)\.(\w+)", PAGE)))


def test_the_page_names_code():
    assert len(FILE_NAMES) >= 6 and len(MEMBERS) >= 8


@pytest.mark.parametrize(("path", "name"), FILE_NAMES)
def test_each_file_reference_names_something_defined_there(path, name):
    assert (ROOT / path).is_file(), path
    module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    target = module
    for part in name.split("."):
        assert hasattr(target, part), f"{path}:{name}"
        target = getattr(target, part)


@pytest.mark.parametrize(("owner", "member"), MEMBERS)
def test_each_member_of_the_ptr_net_exists(owner, member):
    from ptrnet.model import pointer

    model = build_model(ModelConfig(hidden=8, glimpses=1))
    memory = model.encode(torch.rand(1, 3, 2), torch.tensor([3]))
    instance = {"PointerNetwork": model, "EncoderDecoder": model, "Memory": memory}[owner]
    assert isinstance(instance, getattr(pointer, owner))
    assert hasattr(instance, member), f"{owner}.{member}"
