"""The induction lesson's settings: the model's size, the data and the training run.

One :class:`InductionConfig` says everything a run did; it is written to ``config.json`` in the
run directory and read back by :func:`InductionConfig.from_dict` (unknown or missing keys, and
values out of range, are refused with a one-line ``ValueError``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

MAX_VOCAB = 4096
MAX_LENGTH = 256


@dataclass(frozen=True)
class InductionConfig:
    """A two-layer attention-only Transformer trained on repeated random sequences.

    Attributes:
        vocab: tokens 0..vocab-1, drawn uniformly (chance loss: log vocab).
        length: the half-length L of the measured sequences (a sequence is BOS A A, with A of L
            fresh random tokens; the context holds 2 L + 1 positions). Training draws the repeat's
            length m from ``min_length``..L per example, so that no fixed positional offset
            finds the earlier occurrence: only its content does.
        min_length: the shortest repeat in training (0: L // 2).
        d_model: the residual stream's width. heads: attention heads per layer. layers: 2.
        steps, batch_size, lr: Adam on the mean next-token loss of both halves.
        seed: seeds the initialisation and the training data; measurements draw from
            ``seed + 1`` onwards, sequences no training step saw.
        log_every: steps between rows of ``log.csv``. eval_count: fresh sequences measured.
        threads: torch threads.
    """

    vocab: int = 256
    length: int = 16
    min_length: int = 0
    d_model: int = 32
    heads: int = 1
    layers: int = 2
    steps: int = 2000
    batch_size: int = 64
    lr: float = 3e-3
    seed: int = 0
    log_every: int = 25
    eval_count: int = 512
    threads: int = 1

    def __post_init__(self) -> None:
        bounds = {
            "vocab": (2, MAX_VOCAB),
            "length": (2, MAX_LENGTH),
            "min_length": (0, self.length),
            "d_model": (1, 1024),
            "heads": (1, 64),
            "layers": (2, 2),
            "steps": (1, 10**7),
            "batch_size": (1, 4096),
            "log_every": (1, 10**7),
            "eval_count": (1, 10**6),
            "threads": (1, 1024),
            "seed": (0, 2**31 - 1),
        }
        for name, (low, high) in bounds.items():
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                raise ValueError(f"{name}: expected an integer in {low}..{high}, got {value!r}")
        if self.min_length == 1:
            raise ValueError("min_length: a repeat of 1 token has nothing to predict; use >= 2")
        if self.d_model % self.heads:
            raise ValueError(f"d_model {self.d_model} is not a multiple of heads {self.heads}")
        if not (isinstance(self.lr, float) and 0 < self.lr < 1):
            raise ValueError(f"lr: expected a number in (0, 1), got {self.lr!r}")

    @property
    def shortest(self) -> int:
        """The shortest repeat drawn in training."""
        return self.min_length or max(2, self.length // 2)

    @property
    def context(self) -> int:
        """Positions in one sequence: BOS and 2 L tokens."""
        return 2 * self.length + 1

    @property
    def bos(self) -> int:
        """The beginning-of-sequence token, V: embedded, never predicted."""
        return self.vocab

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> InductionConfig:
        """The config written by :meth:`to_dict`.

        Raises:
            ValueError: not an object, unknown or missing keys, or a bad value.
        """
        if not isinstance(data, dict):
            raise ValueError("expected a JSON object of induction settings")
        names = {f.name for f in fields(cls)}
        if set(data) != names:
            extra, missing = sorted(set(data) - names), sorted(names - set(data))
            raise ValueError(f"induction config: unknown keys {extra}, missing keys {missing}")
        return cls(
            **{k: float(v) if k == "lr" and isinstance(v, int) else v for k, v in data.items()}
        )
