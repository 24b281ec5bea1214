"""Inference for the span task: load a model by name, answer questions, score a dataset, explain
one answer. The CLI (``ptrnet eval|predict span``, :mod:`ptrnet.cli.spans`) is a thin shell over
these.

The span pointer decodes through the shared search (:func:`ptrnet.text.span_decoder.
decode_spans`: every strategy of :mod:`ptrnet.decoding.strategies`); the classifier answers
with its most likely class among the training answers (class 0, "an answer it never saw",
names no words, so it is never chosen while there is another).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ptrnet.decoding.options import DecodeOptions
from ptrnet.tasks import Stream, get_task
from ptrnet.tasks.sentences import Pair
from ptrnet.tasks.span import split_source
from ptrnet.text.decode import check_sentence_options
from ptrnet.text.metrics import span_metrics
from ptrnet.text.sentence_checkpoint import load_trained
from ptrnet.text.span import UNKNOWN_ANSWER, AnswerVocabulary, span_inputs, spans_to_answers
from ptrnet.text.span_checkpoint import SpanModel, load_span_model
from ptrnet.text.span_decoder import SpanDecoder, decode_spans

Answer = tuple[str, ...]
FRESH = 1_000_000  #: the first training-stream example :func:`seen_answer_pairs` reads


def load_span(path: str | os.PathLike[str] | None, task: str = "span") -> SpanModel:
    """The span model of a run directory or checkpoint file; None = the bundled one.

    Raises:
        UsageError: a model trained on another task; else as
            :func:`ptrnet.inference.resolve_checkpoint` (with InputError);
        CheckpointError: the file is not a span-task checkpoint.
    """
    return load_trained(load_span_model, path, task, "span")


@torch.no_grad()
def answer_sources(
    loaded: SpanModel, sources: Sequence[Sequence[str]], options: DecodeOptions | None = None
) -> list[Answer]:
    """The answer to each source (passage ``|`` question), in order, decoded as ``options`` say
    (None: greedy; as :func:`ptrnet.text.decode.decode_sources` takes them) in batches of
    ``options.batch_size``; ``options.seed`` keys a drawing strategy's draws.

    Raises:
        DecodeOptionError: more rows per source than
            :func:`~ptrnet.text.decode.check_sentence_options` allows.
        ValueError: a source without a passage and a question.
    """
    options = options or DecodeOptions()
    check_sentence_options(options)
    generator = torch.Generator().manual_seed(options.seed) if options.card.seeded else None
    answers: list[Answer] = []
    size = options.batch_size
    for lo in range(0, len(sources), size):
        chunk = sources[lo : lo + size]
        inputs = span_inputs(loaded.vocab, chunk)
        if loaded.answers is None:
            starts, ends, _ = decode_spans(loaded.model, inputs, options, generator)
            answers.extend(spans_to_answers(chunk, starts, ends))
        else:
            log_probs = loaded.model(inputs)  # (B, classes)
            if log_probs.shape[1] > 1:
                log_probs[:, UNKNOWN_ANSWER] = float("-inf")
            answers.extend(loaded.answers.answers[int(i)] for i in log_probs.argmax(1))
    return answers


def evaluate_spans(
    loaded: SpanModel, pairs: Sequence[Pair], options: DecodeOptions | None = None
) -> tuple[dict[str, Any], list[Answer]]:
    """SQuAD's exact match and F1 of the model's answers to ``pairs`` decoded as ``options``
    say (:func:`answer_sources`), and the answers."""
    answers = answer_sources(loaded, [p.source for p in pairs], options)
    return span_metrics(pairs, answers), answers


def seen_answer_pairs(
    answers: AnswerVocabulary, count: int, seed: int = 1, task: str = "span"
) -> tuple[list[Pair], int]:
    """What a classifier can know: the first ``count`` questions of the training stream under
    ``seed`` from example :data:`FRESH` on (past every example a run of fewer than 15,000 steps
    of 64 trains on) whose answer is one of ``answers``' classes; and how many questions were
    read to find them (at most ``100 * count``, so fewer are returned if they are rare)."""
    known, found, read = set(answers.answers[1:]), [], 0
    for pair in get_task(task).generate_pairs(100 * count, seed, Stream.TRAIN, FRESH):
        read += 1
        if pair.target in known:
            found.append(pair)
            if len(found) == count:
                break
    return found, read


@dataclass(frozen=True)
class SpanExplanation:
    """One question's answer and what chose it: ``rows`` (label, [(what, probability), ...])
    in the order decided (the start's top positions, then the end's given the start chosen; or
    the classifier's top answers)."""

    source: tuple[str, ...]
    answer: Answer
    rows: tuple[tuple[str, tuple[tuple[str, float], ...]], ...]


@torch.no_grad()
def explain_span(loaded: SpanModel, source: Sequence[str], top: int = 3) -> SpanExplanation:
    """The greedy answer to ``source`` with the ``top`` most likely choices at each decision:
    the start and end pointer distributions (the end's given the chosen start, masked to the
    allowed ends as decoding does), each position named ``index:word``."""
    source = tuple(source)
    passage, _ = split_source(source)
    inputs = span_inputs(loaded.vocab, [source])
    if loaded.answers is not None:
        probs = loaded.model(inputs)[0].exp()  # (classes,)
        values, ids = probs.topk(min(top, len(probs)))
        named = tuple((" ".join(loaded.answers.answers[int(i)]) or "<unseen>", float(v))
                      for v, i in zip(values, ids, strict=True))  # fmt: skip
        answer = answer_sources(loaded, [source])[0]
        return SpanExplanation(source, answer, (("answer", named),))
    decoder = SpanDecoder(loaded.model, inputs, width=1)
    rows, state, chosen = [], decoder.start(), []
    for label in ("start", "end"):
        log_probs, state = decoder.step(state)
        probs = log_probs[0].exp()  # (P,)
        values, ids = probs.topk(min(top, len(passage)))
        rows.append((label, tuple((f"{int(i)}:{passage[int(i)]}", float(v))
                                  for v, i in zip(values, ids, strict=True))))  # fmt: skip
        choice = log_probs.argmax(1)  # (1,)
        chosen.append(int(choice))
        state = decoder.advance(state, choice)
    return SpanExplanation(source, tuple(passage[chosen[0] : chosen[1] + 1]), tuple(rows))
