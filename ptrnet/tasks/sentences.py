"""Tasks whose instances are sentences: a source sentence in, a target sentence out, learnt by
the pointer-generator (See, Liu & Manning 2017) and its two one-path variants.

Conventions, stated once:

* A *sentence* is a tuple of tokens: lower-case words, numbers and single punctuation marks
  (:func:`tokenize`).
* An *example* is a :class:`Pair`: the source sentence and its target sentence.
* Data is a pure function of ``(seed, stream, index)`` (:meth:`SentenceTask.sample_pair`), like
  the point tasks' instances.

Everything else a sentence task needs is shared by every task of the kind and lives above the
tasks layer: the file format (:mod:`ptrnet.text.format`), the vocabulary and model
(:mod:`ptrnet.text`), the metrics (:data:`METRIC_KEYS`, :mod:`ptrnet.text.metrics`) and the
commands (:mod:`ptrnet.cli.sentences`). A new sentence task is one module with a subclass that
sets ``name`` and provides :meth:`~SentenceTask.sample_pair`, plus its line in the registry.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from ptrnet.tasks.card import TaskCard
from ptrnet.tasks.streams import SENTENCE_STREAMS, Stream

#: The metrics of every sentence task (:func:`ptrnet.text.metrics.copy_metrics`).
METRIC_KEYS = ("exact_match", "token_accuracy", "oov_recall", "p_gen_copied", "p_gen_generated")
#: Between source and target on a line of the text format (:mod:`ptrnet.text.format`).
SEPARATOR = "\t"
#: The unknown-word token a model may output (ptrnet.text.vocab.UNK, a layer above): one token,
#: so a written prediction reads back as it was written.
UNKNOWN = "<unk>"
_TOKEN = re.compile(re.escape(UNKNOWN) + r"|[^\W_]+|[^\w\s]|_", re.UNICODE)


def tokenize(text: str) -> tuple[str, ...]:
    """Lower-case ``text`` and split it into words, numbers and single punctuation marks (``_``
    is one): ``"Late on Friday, Akinyi won."`` -> ``("late", "on", "friday", ",", "akinyi",
    "won", ".")``. ``<unk>`` stays one token.
    """
    return tuple(_TOKEN.findall(text.lower()))


@dataclass(frozen=True)
class Pair:
    """A source sentence and its target sentence, as token tuples (the target may be empty when
    only sources are read)."""

    source: tuple[str, ...]
    target: tuple[str, ...]

    def line(self) -> str:
        """The pair as one line of the text format (``SOURCE<TAB>TARGET``), without the
        newline."""
        return f"{' '.join(self.source)}{SEPARATOR}{' '.join(self.target)}"


class SentenceTask(TaskCard, ABC):
    """A task whose instances are sentences (its task card).

    A subclass sets ``name`` and provides :meth:`sample_pair`; it may override ``archs`` (the
    first is the default) and ``validation_metric`` (default: exact match).
    """

    input_kind: ClassVar[str] = "sentences"
    #: The pointer-generator, then the same network with p_gen fixed at 1 (vocabulary only) and
    #: at 0 (copy only).
    archs: ClassVar[tuple[str, ...]] = ("pointer_generator", "seq2seq", "pointer")
    metric_keys: ClassVar[tuple[str, ...]] = METRIC_KEYS
    validation_metric: ClassVar[str] = "exact_match"
    #: The shares among :data:`METRIC_KEYS` (the mean p_gen values are probabilities).
    rate_metrics: ClassVar[frozenset[str]] = frozenset(
        {"exact_match", "token_accuracy", "oov_recall"}
    )
    #: The stream ``ptrnet generate TASK`` writes without ``--stream``.
    default_stream: ClassVar[int] = 0

    def stream(self, role: Stream) -> int:
        """A sentence task's stream for ``role`` (:data:`~ptrnet.tasks.streams.SENTENCE_STREAMS`):
        training 1, validation 2.

        Raises:
            KeyError: a role a sentence task's run has no data for.
        """
        return SENTENCE_STREAMS[role]

    @abstractmethod
    def sample_pair(self, seed: int, index: int, stream: int = 0) -> Pair:
        """Example ``index`` of the dataset ``(seed, stream)``: a pure function of the three."""

    def generate_pairs(
        self, count: int, seed: int, stream: int = 0, start: int = 0
    ) -> Iterator[Pair]:
        """Examples ``start .. start + count - 1`` of the dataset ``(seed, stream)``.

        Raises:
            ValueError: a negative ``count`` or ``start``.
        """
        if count < 0 or start < 0:
            raise ValueError(f"count and start must be >= 0, got {count} and {start}")
        for index in range(start, start + count):
            yield self.sample_pair(seed, index, stream)
