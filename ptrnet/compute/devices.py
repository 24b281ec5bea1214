"""Which torch device a run uses: ``auto`` (a CUDA GPU when torch sees one, else the CPU),
``cpu``, ``cuda`` or ``cuda:N``. Names are checked without importing torch."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ptrnet.quoting import quote

if TYPE_CHECKING:
    import torch

DEVICE_PATTERN = re.compile(r"auto|cpu|cuda(:\d+)?")


def check_device_name(name: str) -> str:
    """``name`` if it is a device name ptrnet accepts; raises ValueError otherwise."""
    if not isinstance(name, str) or not DEVICE_PATTERN.fullmatch(name):
        raise ValueError(f"unknown device {quote(name)}; choose auto, cpu, cuda or cuda:N")
    return name


def resolve_device(name: str) -> torch.device:
    """The torch device for ``name``.

    Raises:
        ValueError: an unknown name, or a CUDA device that torch cannot see.
    """
    import torch

    check_device_name(name)
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {quote(name)} requested, but torch sees no CUDA GPU")
    return torch.device(name)
