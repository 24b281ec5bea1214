"""ptrnet: Pointer Networks (Vinyals, Fortunato & Jaitly, NeurIPS 2015) done right.

The Python API in one screen (docs/api.md)::

    import numpy as np, ptrnet
    solver = ptrnet.load("tsp")                   # the bundled model, or a run directory
    result = solver.solve(np.random.rand(20, 2))  # .sequence, .cost, .log_prob
    run_dir = ptrnet.train("sort", sizes="5-10", steps=100, out="runs/sort")

Importing the package is cheap (numpy only): the names below are looked up on first use
(:func:`__getattr__`), so torch, scipy and shapely load only when a model or solver is needed.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# Public name -> the module that defines it.
_EXPORTS = {
    "load": "ptrnet.api.loading",
    "train": "ptrnet.api.training",
    "Solver": "ptrnet.api.solver",
    "Result": "ptrnet.api.results",
    "PointerNetwork": "ptrnet.api.loading",
    "TASKS": "ptrnet.tasks",
    "get_task": "ptrnet.tasks",
}

__all__ = [
    "TASKS",
    "PointerNetwork",
    "Result",
    "Solver",
    "__version__",
    "get_task",
    "load",
    "train",
]


def __getattr__(name: str) -> Any:
    """The public name ``name``, imported from its module on first use (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ptrnet' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
