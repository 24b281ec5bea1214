"""What every registered task says about itself, whatever its inputs are: the part of a task
card that the front ends (``ptrnet generate|train|eval|predict``) read before anything else.

Two kinds of input exist: ``points`` (an instance is an (n, dim) float array and the answer a
sequence of indices into it: :class:`ptrnet.tasks.base.Task`, the paper's four problems) and
``sentences`` (an instance is a tuple of word tokens and the answer another one:
:class:`ptrnet.tasks.sentences.SentenceTask`, the copy mechanism's tasks). The kind decides the
file format, the models and the metrics a task gets; the point machinery (sizes, solvers,
decoding constraints, symmetry views, drawings, costs) is for ``points`` only.
"""

from __future__ import annotations

from typing import ClassVar

from ptrnet.quoting import quote

INPUT_KINDS = ("points", "sentences")


class TaskCard:
    """The fields every task sets; :class:`~ptrnet.tasks.base.Task` and
    :class:`~ptrnet.tasks.sentences.SentenceTask` extend it, and the registry in
    :mod:`ptrnet.tasks` holds one instance of either.

    Attributes:
        name: the task's name on the command line and in checkpoints.
        input_kind: one of :data:`INPUT_KINDS`.
        archs: the model architectures ``ptrnet train --arch`` takes for it; the first is the
            default.
        metric_keys: the keys of its dataset metrics (``count`` aside).
        validation_metric: the decoded metric that picks the best checkpoint;
            ``lower_is_better`` says its direction.
    """

    name: ClassVar[str]
    input_kind: ClassVar[str]
    archs: ClassVar[tuple[str, ...]]
    metric_keys: ClassVar[tuple[str, ...]]
    validation_metric: ClassVar[str]
    lower_is_better: ClassVar[bool] = False

    @property
    def takes_points(self) -> bool:
        """Whether instances are point sets, so the point machinery applies."""
        return self.input_kind == "points"

    def check_arch(self, arch: str | None) -> str:
        """``arch`` (None: the default, ``archs[0]``) if the task takes it.

        Raises:
            ValueError: an architecture the task has no model for, listing the choices.
        """
        return self.choice("arch", arch, self.archs)

    def choice(self, what: str, value: str | None, choices: tuple[str, ...]) -> str:
        """``value`` (None: the first of ``choices``) if it is one of ``choices``.

        Raises:
            ValueError: naming ``what``, the task and the choices.
        """
        value = value or choices[0]
        if value not in choices:
            raise ValueError(
                f"unknown {what} {quote(value)} for task {self.name}; "
                f"choose from {', '.join(choices)}"
            )
        return value
