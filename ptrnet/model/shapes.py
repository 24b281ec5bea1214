"""The parameter shapes a configuration builds, computed without allocating them.

A checkpoint's configuration can ask for any size (``hidden`` = 10^9 would need 32 GB); comparing
the shapes it implies with the tensors the file actually holds, on PyTorch's ``meta`` device
(shapes only, no memory), refuses a mismatch before a single weight is allocated.
"""

from __future__ import annotations

from ptrnet.model.config import ModelConfig

MAX_PARAMETERS = 2**31
"""Parameters a loadable model may have (8 GiB of float32; the bundled ones have < 1M)."""


def state_shapes(config: ModelConfig) -> dict[str, tuple[int, ...]]:
    """``{name: shape}`` of the state dict :func:`ptrnet.model.build_model` gives ``config``.

    Raises:
        ValueError: the configuration cannot be built, or has over ``MAX_PARAMETERS``.
    """
    import torch

    from ptrnet.model import build_model

    try:
        with torch.device("meta"):
            state = build_model(config).state_dict()
    except (RuntimeError, ValueError, TypeError, OverflowError) as err:
        raise ValueError(f"cannot build the model: {' '.join(str(err).split())[:120]}") from None
    total = sum(tensor.numel() for tensor in state.values())
    if total > MAX_PARAMETERS:
        raise ValueError(f"{total} parameters, over the limit of {MAX_PARAMETERS}")
    return {name: tuple(tensor.shape) for name, tensor in state.items()}
