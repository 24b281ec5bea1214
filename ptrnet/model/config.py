"""Model configuration: one frozen, validated dataclass that is saved beside the weights."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

KINDS = ("pointer", "seq2seq", "attention")
INITS = ("paper", "default")


@dataclass(frozen=True)
class ModelConfig:
    """What rebuilds a model.

    Attributes:
        kind: ``pointer`` (Ptr-Net, Sec. 2.3), ``seq2seq`` (LSTM baseline, Sec. 2.1) or
            ``attention`` (LSTM + content-based input attention baseline, Sec. 2.2).
        input_dim: coordinates per input element (1 for sort, 2 for the geometric tasks).
        hidden: LSTM units d, the same for encoder and decoder (paper: 256 or 512).
        layers: stacked LSTM layers on each side (paper: 1).
        init: ``paper`` = uniform(-0.08, 0.08) on every parameter (Sec. 4); ``default`` = PyTorch's.
        max_n: size of the fixed output vocabulary minus the end class, required by the
            baselines and rejected for ``pointer`` (a Ptr-Net has no fixed vocabulary).
    """

    kind: str = "pointer"
    input_dim: int = 2
    hidden: int = 256
    layers: int = 1
    init: str = "paper"
    max_n: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown model kind {self.kind!r}; choose from {', '.join(KINDS)}")
        if self.init not in INITS:
            raise ValueError(f"unknown init {self.init!r}; choose from {', '.join(INITS)}")
        for name in ("input_dim", "hidden", "layers"):
            value = getattr(self, name)
            if not _is_int(value) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.kind == "pointer":
            if self.max_n is not None:
                raise ValueError("max_n applies only to the seq2seq and attention baselines")
        elif not _is_int(self.max_n) or self.max_n < 1:
            raise ValueError(
                f"the {self.kind} baseline needs a positive integer max_n, got {self.max_n!r}"
            )

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ModelConfig:
        """Build from a dict (e.g. a checkpoint's). Raises ValueError naming unknown keys."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(
                f"unknown model config keys: {', '.join(unknown)}; "
                f"known: {', '.join(sorted(known))}"
            )
        return cls(**d)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict that :meth:`from_dict` turns back into an equal config."""
        return asdict(self)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
