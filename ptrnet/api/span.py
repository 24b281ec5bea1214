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
from typing import Any

from ptrnet.decoding.checks import at_least_one
from ptrnet.decoding.options import (
    DEFAULT_BEAM_WIDTH,
    DEFAULT_DECODE_BATCH,
    DecodeOptionError,
    DecodeOptions,
)
from ptrnet.io.limits import MAX_LINE_TOKENS, check_seed, check_threads
from ptrnet.tasks import get_task
from ptrnet.tasks.sentences import tokenize
from ptrnet.tasks.span import QUESTION_MARK, SpanTask
from ptrnet.text.decode import check_sentence_options
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

    def answer(self, passage: str, question: str, **options: Any) -> str:
        """The answer to ``question`` about ``passage``: a span of the passage's words (the
        classifier: its most likely training answer), joined by spaces.

        Args:
            **options: the decoding, as :meth:`ptrnet.api.Solver.solve` names it: ``decode``
                (a registered strategy: ``greedy``, ``sample``, ``beam``, ...), ``beam_width``,
                ``samples``, ``temperature``, ``seed``.

        Raises:
            ValueError: a passage or question without words or with the question mark ``|``,
                more than :data:`~ptrnet.io.limits.MAX_LINE_TOKENS` tokens in all, or a
                decoding option :meth:`ptrnet.api.Solver.solve` would refuse (an unknown
                ``decode``, a count below 1, a seed outside 0 .. 2^64 - 1), or more beams or
                samples than :data:`~ptrnet.io.limits.MAX_SENTENCE_BEAM_WIDTH`, named in the
                message.
            TypeError: an option not among these.
        """
        return self.answer_all([(passage, question)], **options)[0]

    def answer_all(
        self,
        questions: Iterable[tuple[str, str]],
        *,
        decode: str = "greedy",
        beam_width: int = DEFAULT_BEAM_WIDTH,
        samples: int = 1,
        temperature: float = 1.0,
        seed: int = 0,
        batch_size: int = DEFAULT_DECODE_BATCH,
    ) -> list[str]:
        """The answer to each (passage, question), in order, decoded in batches of
        ``batch_size``; arguments and errors as :meth:`answer`'s."""
        options = _decoding(
            self.task.name, decode=decode, beam_width=beam_width, samples=samples,
            temperature=temperature, seed=seed, batch_size=batch_size,
        )  # fmt: skip
        sources = [source_words(passage, question) for passage, question in questions]
        with torch_threads(decoding_threads(self.threads)):
            answers = answer_sources(self.loaded, sources, options)
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


def _decoding(task: str, *, decode: str, seed: int, **fields: Any) -> DecodeOptions:
    """The :class:`~ptrnet.decoding.options.DecodeOptions` of these keywords (the point API's
    names, ``decode`` the strategy), checked as the point API checks them
    (:func:`ptrnet.api.solver.decode_options`) and against the sentence decoders' bound
    (:func:`~ptrnet.text.decode.check_sentence_options`).

    Raises:
        ValueError: naming the keyword (``beam_width: ...``).
    """
    seed = check_seed(seed)  # whatever the strategy, as the point API checks it
    try:
        options = DecodeOptions(strategy=decode, seed=seed, **fields)
        check_sentence_options(options, f"task {task}")
    except DecodeOptionError as err:
        keyword = "decode" if err.option == "strategy" else err.option
        raise ValueError(f"{keyword}: {err}") from None
    return options
