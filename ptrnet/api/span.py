"""Extractive question answering from Python (docs/api.md, docs/span.md): ``ptrnet.load("span")``
is a :class:`SpanReader`, a span model (the bundled span pointer by default) that answers a
question about a passage with a span of the passage.

A thin layer over :mod:`ptrnet.text.span_eval`, the functions ``ptrnet eval|predict span`` run:
the same models (:func:`~ptrnet.text.span_eval.load_span`), the same decoding
(:func:`~ptrnet.text.span_eval.answer_sources`) and the same words: passage and question are
split as ``ptrnet predict`` splits a sentence (:func:`ptrnet.tasks.sentences.tokenize`: lower
case, each punctuation mark a word), so the answer is the passage's words joined by spaces.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from ptrnet.decoding.checks import at_least_one, at_most
from ptrnet.decoding.options import DEFAULT_BEAM_WIDTH, DEFAULT_DECODE_BATCH, SEARCH_STRATEGIES
from ptrnet.io.limits import MAX_LINE_TOKENS, MAX_SENTENCE_BEAM_WIDTH, check_seed, check_threads
from ptrnet.quoting import quote
from ptrnet.tasks import get_task
from ptrnet.tasks.sentences import tokenize
from ptrnet.tasks.span import QUESTION_MARK, SpanTask
from ptrnet.text.span_checkpoint import SpanModel
from ptrnet.text.span_eval import SpanExplanation, answer_sources, explain_span, load_span
from ptrnet.training.cpu import decoding_threads, torch_threads

__all__ = ["SpanReader", "is_span_task", "load_reader"]


def is_span_task(name: str | None) -> bool:
    """Whether ``name`` is a registered span task (``span``)."""
    try:
        return name is not None and isinstance(get_task(name), SpanTask)
    except ValueError:  # not a task name
        return False


def load_reader(
    model: str | os.PathLike[str] | None = None,
    task: str = "span",
    device: str = "auto",
    threads: int | None = None,
) -> SpanReader:
    """The :class:`SpanReader` of ``model``: a run directory or checkpoint file of a span
    model, or None for the bundled span pointer of ``task``; ``threads`` as
    :func:`ptrnet.api.loading.load` takes it.

    Raises:
        ValueError: a ``device`` other than ``auto`` or ``cpu`` (span models run on the CPU).
        UsageError: a model trained on another task.
        InputError: a missing model; CheckpointError: a file that is not a span-task checkpoint.
    """
    if device not in ("auto", "cpu"):
        raise ValueError(f"device {device!r}: task {task} runs on the CPU only (auto or cpu)")
    return SpanReader(load_span(model, task), threads)


class SpanReader:
    """A loaded span model and its task; :meth:`answer` answers a question about a passage.

    Attributes:
        loaded: the model, its configuration, vocabularies and checkpoint record
            (:class:`ptrnet.text.span_checkpoint.SpanModel`).
        task: the span task it was trained on.
        threads: the torch threads each call decodes with; None = the idle cores at the time
            of the call (:func:`ptrnet.training.cpu.decoding_threads`), set for the call only.
    """

    def __init__(self, loaded: SpanModel, threads: int | None = None) -> None:
        self.loaded = loaded
        self.threads = None if threads is None else check_threads(threads)
        task = get_task(loaded.train.get("task", "span"))
        assert isinstance(task, SpanTask)  # load_span checked the task
        self.task = task

    def __repr__(self) -> str:
        arch, path = self.loaded.config.arch, self.loaded.path
        return f"SpanReader(task={self.task.name!r}, arch={arch!r}, path={path!r})"

    def answer(
        self,
        passage: str,
        question: str,
        *,
        decode: str = "greedy",
        beam_width: int = DEFAULT_BEAM_WIDTH,
        seed: int = 0,
    ) -> str:
        """The answer to ``question`` about ``passage``: a span of the passage's words (the
        classifier: its most likely training answer), joined by spaces.

        Args:
            decode: ``greedy``, ``beam`` (``beam_width`` beams) or ``sample`` (``beam_width``
                samples drawn under ``seed``, the most likely kept), as ``ptrnet eval``'s.

        Raises:
            ValueError: a passage or question without words or with the question mark ``|``,
                more than :data:`~ptrnet.io.limits.MAX_LINE_TOKENS` tokens in all, an
                unknown ``decode``, a ``beam_width`` (or ``batch_size``) that is not an integer
                from 1 (to :data:`~ptrnet.io.limits.MAX_SENTENCE_BEAM_WIDTH`), or a ``seed``
                that is not an integer from 0 to 2^64 - 1, as :meth:`ptrnet.api.Solver.solve`
                checks them.
        """
        return self.answer_all([(passage, question)], decode=decode, beam_width=beam_width,
                               seed=seed)[0]  # fmt: skip

    def answer_all(
        self,
        questions: Iterable[tuple[str, str]],
        *,
        decode: str = "greedy",
        beam_width: int = DEFAULT_BEAM_WIDTH,
        seed: int = 0,
        batch_size: int = DEFAULT_DECODE_BATCH,
    ) -> list[str]:
        """The answer to each (passage, question), in order, decoded in batches of
        ``batch_size``; arguments and errors as :meth:`answer`'s."""
        seed = _check_decoding(decode, beam_width, seed, batch_size)
        sources = [source_words(passage, question) for passage, question in questions]
        with torch_threads(decoding_threads(self.threads)):
            answers = answer_sources(self.loaded, sources, decode, beam_width, batch_size, seed)
        return [" ".join(answer) for answer in answers]

    def explain(self, passage: str, question: str, top: int = 3) -> SpanExplanation:
        """The greedy answer with the ``top`` most likely choices at each decision (the start
        and end positions, ``index:word``; the classifier's answers), as ``ptrnet predict span
        --explain`` prints them. Raises ValueError as :meth:`answer`, and for a ``top`` that is
        not an integer >= 1."""
        at_least_one("top", top)
        source = source_words(passage, question)
        with torch_threads(decoding_threads(self.threads)):
            return explain_span(self.loaded, source, top)


def source_words(passage: str, question: str) -> tuple[str, ...]:
    """The task's source: the passage's words, the question mark ``|``, the question's words.

    Raises:
        ValueError: a passage or question without words or with ``|``, or more than
            :data:`~ptrnet.io.limits.MAX_LINE_TOKENS` tokens in all.
    """
    parts = []
    for what, text in (("passage", passage), ("question", question)):
        if not isinstance(text, str):
            raise ValueError(f"the {what} must be a string, got {type(text).__name__}")
        words = tokenize(text)
        if not words:
            raise ValueError(f"the {what} has no words")
        if QUESTION_MARK in words:
            raise ValueError(f"the {what} may not contain {QUESTION_MARK!r}")
        parts.append(words)
    source = (*parts[0], QUESTION_MARK, *parts[1])
    if len(source) > MAX_LINE_TOKENS:
        raise ValueError(f"{len(source):,} tokens, over the limit of {MAX_LINE_TOKENS:,}")
    return source


def _check_decoding(decode: str, beam_width: int, seed: int, batch_size: int) -> int:
    """``seed`` as an ``int``, after the checks the point API makes
    (:func:`ptrnet.api.solver.decode_options`): ValueError for a search the span decoder does
    not run, a ``beam_width`` or ``batch_size`` that is not an integer >= 1 (a bool neither),
    a beam wider than :data:`~ptrnet.io.limits.MAX_SENTENCE_BEAM_WIDTH`, or a seed outside
    0 .. 2^64 - 1 (:func:`~ptrnet.io.limits.check_seed`)."""
    if decode not in SEARCH_STRATEGIES:
        raise ValueError(f"decode {quote(decode)}: choose {', '.join(SEARCH_STRATEGIES)}")
    at_least_one("beam_width", beam_width)  # a DecodeOptionError: a ValueError
    at_least_one("batch_size", batch_size)
    at_most("beam_width", beam_width, MAX_SENTENCE_BEAM_WIDTH)
    return check_seed(seed)
