"""The span task: extractive question answering on a seeded grammar of short news passages.

Task card (:class:`SpanTask`, input kind ``sentences``):

* **input**: a passage of 3-5 facts about people, places, organisations, dates and amounts,
  then :data:`QUESTION_MARK` and a question about one of the facts, e.g. ``kanori sato founded
  mivel labs in dabeno in 1987 . ... | who founded mivel labs ?``.
* **output**: the answer, a span of the passage (``kanori sato``); the span model points at its
  first and last token (Wang & Jiang 2017, "Machine Comprehension Using Match-LSTM and Answer
  Pointer": a Ptr-Net with two steps), the way BERT answers SQuAD.
* **held-out names**: every name, place, organisation word and number belongs to exactly one of
  three pools (:func:`pool_of`: training, validation, test, by a hash of the word). Training
  data draws from the training pool only, validation data from the validation pool and test
  data (``ptrnet generate span``'s default stream) from the test pool, so no test name or
  number ever occurs in training: a model must read the question and point, since it cannot
  have memorised the answer.
* **metric**: SQuAD's exact match and F1 (:func:`ptrnet.text.metrics.span_metrics`).

Data is a pure function of ``(seed, stream, index)`` as for every sentence task.
"""

from __future__ import annotations

import functools
import itertools
import random
import string
import zlib
from collections.abc import Callable
from typing import ClassVar

from ptrnet.tasks.sentences import Pair, SentenceTask
from ptrnet.tasks.streams import Stream

QUESTION_MARK = "|"  #: between the passage and the question in a source sentence
POOLS = ("train", "validation", "test")
MIN_FACTS, MAX_FACTS = 3, 5  #: facts per passage
MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)  # fmt: skip
KINDS = ("labs", "group", "bank", "motors", "foods", "media")
ROLES = ("director", "engineer", "treasurer", "chair", "editor")
BUILDINGS = ("factory", "office", "warehouse", "clinic", "studio")
SYLLABLES = (
    "ka", "ki", "ko", "ma", "mi", "na", "no", "ri", "ro", "sa", "se", "ta", "to", "la", "le",
    "li", "da", "do", "ba", "be", "ya", "yo", "zu", "fe", "gi", "ho", "ju", "pa", "ve", "wa",
    "ne", "vel",
)  # fmt: skip


def pool_of(word: str) -> str:
    """The pool an open word (a name, place, organisation word or number) belongs to: ``test``
    for a tenth of the words, ``validation`` for another tenth, ``train`` for the rest; a
    stable hash, so every file and run agrees."""
    bucket = zlib.crc32(word.encode()) % 10
    return POOLS[2] if bucket == 0 else POOLS[1] if bucket == 1 else POOLS[0]


def stream_pool(stream: int) -> str:
    """The pool a stream's examples draw from: test for :attr:`Stream.TEST`, validation for
    :attr:`Stream.VALIDATION`, training otherwise."""
    if stream == Stream.TEST:
        return POOLS[2]
    return POOLS[1] if stream == Stream.VALIDATION else POOLS[0]


@functools.cache
def _pool_words(syllables: int, pool: str) -> tuple[str, ...]:
    """Every word of ``syllables`` syllables in ``pool``, in a fixed order."""
    words = ("".join(parts) for parts in itertools.product(SYLLABLES, repeat=syllables))
    return tuple(w for w in words if pool_of(w) == pool)


@functools.cache
def _pool_numbers(lo: int, hi: int, pool: str) -> tuple[str, ...]:
    """Every number ``lo .. hi`` (as text) in ``pool``, in order."""
    return tuple(str(n) for n in range(lo, hi + 1) if pool_of(str(n)) == pool)


class _Draw:
    """Open words of one pool, each distinct within one passage."""

    def __init__(self, rng: random.Random, pool: str) -> None:
        self.rng, self.pool, self.used = rng, pool, set()

    def _fresh(self, choices: tuple[str, ...]) -> str:
        while True:
            word = self.rng.choice(choices)
            if word not in self.used:
                self.used.add(word)
                return word

    def word(self, syllables: int) -> str:
        return self._fresh(_pool_words(syllables, self.pool))

    def number(self, lo: int, hi: int) -> str:
        return self._fresh(_pool_numbers(lo, hi, self.pool))

    def person(self) -> str:
        return f"{self.word(2)} {self.word(3)}"

    def org(self) -> str:
        return f"{self.word(3)} {self.rng.choice(KINDS)}"

    def date(self) -> str:
        """A day of the month (any pool: 1-28 are too few to split), a month and a year."""
        day, month = self.rng.randint(1, 28), self.rng.choice(MONTHS)
        return f"{day} {month} {self.number(1800, 2199)}"


# A fact: its sentence and its questions, each with the slot that answers it.
FACTS = (
    ("{person} founded {org} in {place} in {year} .",
     (("who founded {org} ?", "person"), ("where was {org} founded ?", "place"),
      ("in which year was {org} founded ?", "year"))),
    ("{org} paid {amount} dollars to {person} on {date} .",
     (("how much did {org} pay {person} ?", "amount_dollars"),
      ("when did {org} pay {person} ?", "date"), ("who did {org} pay ?", "person"))),
    ("{person} moved from {place} to {place2} in {year} .",
     (("where did {person} move to ?", "place2"), ("where did {person} move from ?", "place"),
      ("when did {person} move to {place2} ?", "year"))),
    ("{person} joined {org} as {role} on {date} .",
     (("which company did {person} join ?", "org"), ("when did {person} join {org} ?", "date"),
      ("who joined {org} as {role} ?", "person"))),
    ("{org} opened a {building} in {place} with {count} staff .",
     (("how many staff work at the {building} of {org} ?", "count"),
      ("where did {org} open a {building} ?", "place"))),
)  # fmt: skip


SLOTS: dict[str, Callable[[_Draw], str]] = {
    "person": _Draw.person,
    "org": _Draw.org,
    "place": lambda draw: draw.word(3),
    "place2": lambda draw: draw.word(3),
    "year": lambda draw: draw.number(1800, 2199),
    "date": _Draw.date,
    "amount": lambda draw: draw.number(100, 99_999),
    "count": lambda draw: draw.number(2, 999),
    "role": lambda draw: draw.rng.choice(ROLES),
    "building": lambda draw: draw.rng.choice(BUILDINGS),
}


def _slots(draw: _Draw, sentence: str) -> dict[str, str]:
    """Fresh values for the slots of ``sentence`` (each open word new to the passage)."""
    names = [name for _, name, _, _ in string.Formatter().parse(sentence) if name]
    slots = {name: SLOTS[name](draw) for name in names}
    if "amount" in slots:
        slots["amount_dollars"] = f"{slots['amount']} dollars"
    return slots


def sample_pair(seed: int, index: int, stream: int = 0) -> Pair:
    """Example ``index`` of the dataset ``(seed, stream)``: 3-5 facts (a kind may repeat, so a
    question must be matched on its names; every open word distinct), a question about one of
    them, and its answer; a pure function of the three arguments. The answer occurs exactly
    once in the passage."""
    rng = random.Random(f"ptrnet-span:{seed}:{stream}:{index}")
    while True:
        draw = _Draw(rng, stream_pool(stream))
        facts = rng.choices(FACTS, k=rng.randint(MIN_FACTS, MAX_FACTS))  # kinds may repeat
        filled = [(sentence, questions, _slots(draw, sentence)) for sentence, questions in facts]
        passage = " ".join(sentence.format(**slots) for sentence, _, slots in filled).split()
        sentence, questions, slots = rng.choice(filled)
        question, answer_slot = rng.choice(questions)
        answer = tuple(slots[answer_slot].split())
        if len(find_spans(passage, answer)) == 1:
            source = (*passage, QUESTION_MARK, *question.format(**slots).split())
            return Pair(source, answer)


def split_source(source: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(passage, question) of a source sentence: the tokens before and after its one
    :data:`QUESTION_MARK`.

    Raises:
        ValueError: no question mark or more than one (neither the passage nor the question may
            hold one, as ``ptrnet.load("span")`` and the page refuse it), or an empty passage
            or question.
    """
    if QUESTION_MARK not in source:
        raise ValueError(f"no {QUESTION_MARK!r} between passage and question")
    cut = source.index(QUESTION_MARK)
    passage, question = source[:cut], source[cut + 1 :]
    if QUESTION_MARK in question:
        raise ValueError(
            f"more than one {QUESTION_MARK!r}: one goes between passage and question, and "
            "neither may contain another"
        )
    if not passage or not question:
        raise ValueError(f"an empty {'passage' if not passage else 'question'}")
    return passage, question


def find_spans(passage: tuple[str, ...] | list[str], answer: tuple[str, ...]) -> list[int]:
    """Start positions at which ``answer`` occurs in ``passage`` (the answer's span is
    ``start .. start + len(answer) - 1``)."""
    width = len(answer)
    return [i for i in range(len(passage) - width + 1) if tuple(passage[i : i + width]) == answer]


class SpanTask(SentenceTask):
    """The span task's card: passages and questions of the grammar above, answered by a span."""

    name: ClassVar[str] = "span"
    archs: ClassVar[tuple[str, ...]] = ("span_pointer", "classifier")
    metric_keys: ClassVar[tuple[str, ...]] = ("exact_match", "f1")
    validation_metric: ClassVar[str] = "exact_match"
    rate_metrics: ClassVar[frozenset[str]] = frozenset({"exact_match", "f1"})  # SQuAD's percent
    #: ``ptrnet generate span`` writes test examples unless told otherwise (held-out names).
    default_stream: ClassVar[int] = Stream.TEST

    def stream(self, role: Stream) -> int:
        """The stream of ``role`` in a training run: the role's own value (training 0,
        validation 1), so that each role draws from its pool (:func:`stream_pool`); not the
        copy task's 1 and 2, which would train on the validation pool.

        Raises:
            KeyError: a role a sentence task's run has no data for.
        """
        if role not in (Stream.TRAIN, Stream.VALIDATION):
            raise KeyError(role)
        return int(role)

    def sample_pair(self, seed: int, index: int, stream: int = 0) -> Pair:
        return sample_pair(seed, index, stream)
