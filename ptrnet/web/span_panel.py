"""The lesson panel "point at the answer": the bundled span pointer's start and end
distributions over one passage (docs/span.md).

:func:`span_answer` reads a passage and a question, typed by the user or drawn from the span
task's generator (example ``seed`` of the test stream, :data:`~ptrnet.tasks.streams.Stream.TEST`:
held-out names), and returns the passage tokens, the greedy span (start, end, its words), the
gold answer of a drawn example, the start distribution over every passage token and the end
distribution given the chosen start (masked to the allowed ends as decoding does, so each sums
to 1 over the passage and ``end >= start``), as :func:`ptrnet.text.span_eval.explain_span`.

The model is ``ptrnet/bundled/span/``; without it the panel says so (:func:`load_bundled_span`).
"""

from __future__ import annotations

import os
import re
from typing import Any

import torch
from pydantic import Field, model_validator

from ptrnet.inference.load import BUNDLED_DIR
from ptrnet.tasks.span import QUESTION_MARK, sample_pair
from ptrnet.tasks.streams import Stream
from ptrnet.text.span import span_inputs
from ptrnet.text.span_checkpoint import SpanModel
from ptrnet.text.span_decoder import SpanDecoder
from ptrnet.text.span_eval import load_span
from ptrnet.web.schemas import Strict

BUNDLED_SPAN = os.path.join(BUNDLED_DIR, "span", "best.safetensors")
MAX_PASSAGE, MAX_QUESTION = 120, 30  #: tokens of a typed passage and question
WORD = re.compile(r"[a-z0-9]+|[^\sa-z0-9]")  # a word, or one punctuation mark


class SpanRequest(Strict):
    """A typed passage and question, or (both None) example ``seed`` of the test stream."""

    passage: str | None = Field(None, min_length=1, max_length=2000)
    question: str | None = Field(None, min_length=1, max_length=500)
    seed: int = Field(0, ge=0, le=2**31 - 1)

    @model_validator(mode="after")
    def _both_or_neither(self) -> SpanRequest:
        if (self.passage is None) != (self.question is None):
            raise ValueError("give both a passage and a question, or neither (a drawn example)")
        return self


def load_bundled_span(path: str = BUNDLED_SPAN) -> tuple[SpanModel | None, str]:
    """The bundled span pointer and ``""``, or None and why it is missing."""
    if not os.path.isfile(path):
        return None, "span model not installed: no ptrnet/bundled/span/best.safetensors"
    loaded = load_span(path)
    if loaded.answers is not None:
        return None, "span model not installed: the bundled span model is not a span pointer"
    return loaded, ""


def span_info(loaded: SpanModel) -> dict[str, Any]:
    """What the page says about the model: its sizes and vocabulary."""
    config = loaded.config
    params = sum(p.numel() for p in loaded.model.parameters())
    return {"embed": config.embed, "hidden": config.hidden, "vocabulary": config.vocab_size,
            "parameters": params, "step": loaded.step}  # fmt: skip


def words_of(text: str, what: str, limit: int) -> tuple[str, ...]:
    """``text`` as the task's tokens: lower case, each punctuation mark a token of its own.

    Raises:
        ValueError: no words, more than ``limit``, or the question mark ``|``.
    """
    words = tuple(WORD.findall(text.lower()))
    if not words:
        raise ValueError(f"the {what} has no words")
    if len(words) > limit:
        raise ValueError(f"the {what} has {len(words)} tokens; at most {limit}")
    if QUESTION_MARK in words:
        raise ValueError(f"the {what} may not contain {QUESTION_MARK!r}")
    return words


def source_of(request: SpanRequest) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    """The request's source (passage ``|`` question) and the gold answer (None when typed).

    Raises:
        ValueError: a bad typed passage or question (:func:`words_of`).
    """
    if request.passage is None or request.question is None:
        pair = sample_pair(request.seed, 0, Stream.TEST)
        return tuple(pair.source), tuple(pair.target)
    passage = words_of(request.passage, "passage", MAX_PASSAGE)
    question = words_of(request.question, "question", MAX_QUESTION)
    return (*passage, QUESTION_MARK, *question), None


@torch.no_grad()
def span_answer(loaded: SpanModel, request: SpanRequest) -> dict[str, Any]:
    """The request's passage through the span pointer: tokens, the greedy span, the gold
    answer of a drawn example, and both pointer distributions over the passage.

    Raises:
        ValueError: a bad typed passage or question (:func:`source_of`).
    """
    source, gold = source_of(request)
    cut = source.index(QUESTION_MARK)
    passage, question = source[:cut], source[cut + 1 :]
    decoder = SpanDecoder(loaded.model, span_inputs(loaded.vocab, [source]), width=1)
    state, chosen, probs = decoder.start(), [], []
    for _ in ("start", "end"):
        log_probs, state = decoder.step(state)  # (1, P)
        probs.append([round(float(p), 5) for p in log_probs[0].exp()])
        choice = log_probs.argmax(1)  # (1,)
        chosen.append(int(choice))
        state = decoder.advance(state, choice)
    start, end = chosen
    return {
        "passage": list(passage),
        "question": list(question),
        "typed": gold is None,
        "seed": request.seed,
        "start": start,
        "end": end,
        "answer": " ".join(passage[start : end + 1]),
        "gold": None if gold is None else " ".join(gold),
        "start_probs": probs[0],
        "end_probs": probs[1],
        "unknown": [w not in loaded.vocab for w in passage],  # shown dashed: not in vocabulary
        "info": span_info(loaded),
    }
