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

import math
from typing import ClassVar

from ptrnet.quoting import quote
from ptrnet.tasks.streams import Stream

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
        validity_metric, tiebreak_metric: the decoded metrics ranked before and after it
            (:meth:`selection_key`; None: none).
        rate_metrics: the metrics that are rates in [0, 1] or relative gaps, which every
            human-readable output (tables, titles, training's progress and summary lines)
            shows in percent; JSON, ``log.csv`` and the API keep the fractions.
    """

    name: ClassVar[str]
    input_kind: ClassVar[str]
    archs: ClassVar[tuple[str, ...]]
    metric_keys: ClassVar[tuple[str, ...]]
    validation_metric: ClassVar[str]
    lower_is_better: ClassVar[bool] = False
    validity_metric: ClassVar[str | None] = None
    tiebreak_metric: ClassVar[str | None] = None
    rate_metrics: ClassVar[frozenset[str]] = frozenset()

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

    def stream(self, role: Stream) -> int:
        """The stream a training run draws the data of ``role`` from (:class:`Stream`): the
        role's own value for point tasks."""
        return int(role)

    def selection_key(self, metrics: dict[str, float | None]) -> tuple[float, ...]:
        """Sort key of decoded validation metrics: smaller is better.

        ``validity_metric`` (if any) decides first, then ``validation_metric``, then
        ``tiebreak_metric`` (if any). An undefined or missing value (NaN, or None in a JSON
        record) ranks last. Equal keys are left to the caller: training keeps the later step.
        """
        key = []
        if self.validity_metric is not None:
            key.append(-_number(metrics.get(self.validity_metric, 1.0)))
        value = _number(metrics.get(self.validation_metric))
        if not math.isfinite(value):
            key.append(math.inf)
        else:
            key.append(value if self.lower_is_better else -value)
        if self.tiebreak_metric is not None:
            tiebreak = _number(metrics.get(self.tiebreak_metric))
            key.append(-tiebreak if math.isfinite(tiebreak) else math.inf)
        return tuple(key)

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


def _number(raw: float | None) -> float:
    """A metric as a float; None (how JSON records hold NaN) becomes NaN."""
    return math.nan if raw is None else float(raw)
