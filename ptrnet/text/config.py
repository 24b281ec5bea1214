"""Configuration of a sentence task's training run (``ptrnet train copy``; no torch, so the CLI
can build its parser and check options without importing it)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar, TypeVar

from ptrnet.quoting import quote
from ptrnet.runs.shared import DEFAULTS, check_shared, is_int, positive_int
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


class SentenceTrainConfig(DictConfig):
    """The base of a sentence task's training configuration (copy: :class:`CopyTrainConfig`,
    span: :class:`ptrnet.text.span_config.SpanTrainConfig`): a frozen dataclass whose fields
    include those of :mod:`ptrnet.runs.shared` (their names, meaning and checks), ``arch``,
    ``embed``, ``hidden``, ``min_count`` and ``vocab_pairs``; each subclass's defaults are its
    task's recipe. Sentence tasks train with Adam (:func:`ptrnet.training.steps.
    build_optimizer`) at a constant learning rate, in fp32.

    ``__post_init__`` checks, in order: ``task`` names a registered task of ``task_kind``
    (else the ``task_refusal`` message), ``arch`` is one of its ``archs``, the shared fields,
    the ``positive_fields``, then :meth:`check_own` (ValueError, one line each).
    """

    optimizer: ClassVar[str] = "adam"
    precision: ClassVar[str] = "fp32"
    #: The task class the configuration trains, and the refusal of another ({task}: its name).
    task_kind: ClassVar[type] = SentenceTask
    task_refusal: ClassVar[str] = "task {task} does not take sentences"
    positive_fields: ClassVar[tuple[str, ...]] = ("embed", "min_count", "vocab_pairs")

    task: str
    arch: str

    def __post_init__(self) -> None:
        if not isinstance(self.task, str):
            raise ValueError(f"task must be a task name, got {quote(self.task)}")
        task = get_task(self.task)
        if not isinstance(task, self.task_kind):
            raise ValueError(self.task_refusal.format(task=self.task))
        task.check_arch(self.arch)
        check_shared(self)
        for name in self.positive_fields:
            positive_int(name, getattr(self, name))
        self.check_own()

    def check_own(self) -> None:
        """Raise ValueError for a value only this task's configuration refuses."""

    def learning_rate(self, step: int) -> float:
        """The learning rate of optimiser step ``step``: ``lr``, constant."""
        return self.lr  # type: ignore[attr-defined, no-any-return]


@dataclass(frozen=True)
class CopyTrainConfig(SentenceTrainConfig):
    """A sentence task's training run (every field is saved in the checkpoint and
    ``config.json``). The fields it shares with :class:`ptrnet.runs.config.TrainConfig` carry
    their names, meaning and checks (:mod:`ptrnet.runs.shared`); the defaults are this task
    kind's recipe (Adam at a constant learning rate, 3000 steps of 64 examples).

    Attributes:
        arch: one of the task's ``archs``: ``pointer_generator``, ``seq2seq`` or ``pointer``.
        task: the registered sentence task whose examples it learns (default ``copy``).
        embed, hidden: model sizes (:class:`PointerGeneratorConfig`; ``hidden`` even).
        steps, batch_size, lr, clip_norm: Adam steps, examples per step, learning rate (constant),
            gradient norm clip.
        seed: seeds the data, the vocabulary and the initial weights.
        min_count, vocab_pairs: the vocabulary keeps words seen ``min_count`` times in the first
            ``vocab_pairs`` training examples.
        val_count, val_every: validation examples, and steps between validations.
        log_every, keep_every: steps between log rows; keep the weights of every validation at
            a multiple of ``keep_every`` steps (0: off), as a point task's run does.
    """

    arch: str = "pointer_generator"
    task: str = "copy"
    embed: int = 64
    hidden: int = 128
    steps: int = 3000
    batch_size: int = 64
    lr: float = 2e-3
    clip_norm: float = DEFAULTS["clip_norm"]
    seed: int = 1
    min_count: int = 10
    vocab_pairs: int = 20000
    val_count: int = 500
    val_every: int = 250
    log_every: int = DEFAULTS["log_every"]
    keep_every: int = DEFAULTS["keep_every"]

    def check_own(self) -> None:
        """The arch must be a switch of the pointer-generator, ``hidden`` even."""
        if self.arch not in FIXED_P_GEN:
            raise ValueError(
                f"arch {self.arch} is not a pointer-generator's: task {self.task} trains with "
                "its own configuration"
            )
        if not is_int(self.hidden) or self.hidden < 2 or self.hidden % 2:
            raise ValueError(
                f"hidden must be an even integer >= 2 (the encoder runs hidden/2 units each "
                f"way), got {quote(self.hidden)}"
            )
