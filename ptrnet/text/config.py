"""Configuration of a sentence task's training run (``ptrnet train copy``; no torch, so the CLI
can build its parser and check options without importing it)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, TypeVar

from ptrnet.quoting import quote
from ptrnet.tasks import SentenceTask, get_task

# Each architecture a sentence task's card lists (SentenceTask.archs) is the pointer-generator
# with p_gen learned or fixed (vocabulary only: the seq2seq; copy only: the pure pointer):
# PointerGeneratorConfig.p_gen.
FIXED_P_GEN = {"pointer_generator": None, "seq2seq": 1.0, "pointer": 0.0}


def arch_of(p_gen: float | None) -> str:
    """The architecture whose switch is ``p_gen`` (None: learned, the pointer-generator; 1:
    seq2seq; 0: pointer); another fixed value, which a configuration may hold, is named as
    the pointer-generator with that fixed p_gen."""
    found = [arch for arch, fixed in FIXED_P_GEN.items() if fixed == p_gen]
    return found[0] if found else f"pointer_generator (p_gen fixed at {p_gen:g})"


C = TypeVar("C", bound="DictConfig")


class DictConfig:
    """``to_dict`` / ``from_dict`` for a frozen config dataclass (the checkpoint's JSON)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]

    @classmethod
    def from_dict(cls: type[C], data: dict[str, Any]) -> C:
        """Inverse of :meth:`to_dict`. Raises ValueError on unknown keys (or bad values)."""
        unknown = set(data) - {f.name for f in fields(cls)}  # type: ignore[arg-type]
        if unknown:
            raise ValueError(f"unknown {cls.__name__} keys: {quote(sorted(map(str, unknown)))}")
        return cls(**data)


@dataclass(frozen=True)
class CopyTrainConfig(DictConfig):
    """A sentence task's training run (every field is saved in the checkpoint).

    Attributes:
        task: the registered sentence task whose examples it learns (default ``copy``, also
            for checkpoints written before the field existed).
        arch: one of the task's ``archs``: ``pointer_generator``, ``seq2seq`` or ``pointer``.
        embed, hidden: model sizes (:class:`PointerGeneratorConfig`).
        steps, batch_size, lr, clip: Adam steps, examples per step, learning rate, gradient
            norm clip.
        seed: seeds the data, the vocabulary and the initial weights.
        min_count, vocab_pairs: the vocabulary keeps words seen ``min_count`` times in the first
            ``vocab_pairs`` training examples.
        val_count, val_every: validation examples, and steps between validations.
    """

    arch: str = "pointer_generator"
    task: str = "copy"
    embed: int = 64
    hidden: int = 128
    steps: int = 3000
    batch_size: int = 64
    lr: float = 2e-3
    clip: float = 2.0
    seed: int = 1
    min_count: int = 10
    vocab_pairs: int = 20000
    val_count: int = 500
    val_every: int = 250

    def __post_init__(self) -> None:
        task = get_task(self.task)
        if not isinstance(task, SentenceTask):
            raise ValueError(f"task {self.task} does not take sentences")
        task.check_arch(self.arch)
        counts = (
            self.steps,
            self.batch_size,
            self.min_count,
            self.vocab_pairs,
            self.val_count,
            self.val_every,
        )
        if min(counts) < 1 or self.lr <= 0 or self.clip <= 0:
            raise ValueError("steps, sizes and counts must be >= 1, lr and clip > 0")
