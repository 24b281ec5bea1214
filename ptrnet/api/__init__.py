"""The Python API (docs/api.md): :func:`load` a model (:mod:`.loading`), :meth:`Solver.solve`
instances (:mod:`.solver`), one :class:`Result` per instance (:mod:`.results`), answer questions
about passages with a span model (:class:`SpanReader`, :mod:`.span`), :func:`train` a model
(:mod:`.training`). ``ptrnet.load``, ``ptrnet.train`` and friends are these names.

The names import their module on first use (PEP 562), so the CLI can use a light part of the
API (``results``, ``training``'s file sizes) without loading torch.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "PointerNetwork": "loading",
    "Solver": "solver",
    "as_instances": "solver",
    "decode_options": "solver",
    "load": "loading",
    "Result": "results",
    "SpanReader": "span",
    "train": "training",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """The public name ``name``, imported from its module on first use."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ptrnet.api' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"ptrnet.api.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
