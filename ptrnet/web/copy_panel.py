"""The lesson panel "generate or copy": one sentence of the copy task through the
pointer-generator (See, Liu & Manning 2017), every quantity of its mixture, step by step.

At output step t the model has a vocabulary distribution P_vocab, an attention a over the source
and a switch p_gen; the word's probability is

    P(w) = p_gen * P_vocab(w) + (1 - p_gen) * sum_{i: w_i = w} a_i.

:func:`copy_answer` reports, for each output word, its ``generate`` term (the first), its
``copy`` term (the second) and ``mixture`` (the model's own P(w), which equals their sum), with
the attention and the top words of P_vocab and of the mixture. Overriding p_gen (1: the
vocabulary path alone, 0: copying alone) re-runs the greedy decode with that value at every step.

The copy task and its model live in ``ptrnet.text`` and ``ptrnet/bundled/copy/``; without them
the panel says "copy model not installed" (:func:`load_bundled_copy`).
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import Field, FiniteFloat

from ptrnet.inference import bundled_model_dir
from ptrnet.tasks.copy import sample_pair
from ptrnet.text.config import arch_of
from ptrnet.text.decode import explain
from ptrnet.text.evaluate import load
from ptrnet.text.format import tokenize
from ptrnet.web.answers import model_name
from ptrnet.web.schemas import Strict

COPY_STREAM = 7  # sampled sentences: a stream no training run draws from
MAX_WORDS = 60  # source tokens a request may send
TOP = 5  # words listed per distribution


class CopyRequest(Strict):
    """A sentence to summarise (None: sentence ``seed`` of the copy task's generator) and an
    optional p_gen override in [0, 1]."""

    sentence: str | None = Field(None, min_length=1, max_length=400)
    seed: int = Field(0, ge=0, le=2**31 - 1)
    p_gen: FiniteFloat | None = Field(None, ge=0, le=1)


def load_bundled_copy() -> tuple[Any, str]:
    """The bundled copy model and ``""``, or None and why it is missing."""
    folder = bundled_model_dir("copy")
    if not os.path.isfile(os.path.join(folder, "best.safetensors")):
        return None, "copy model not installed: no ptrnet/bundled/copy/best.safetensors"
    return load(folder), ""


def copy_info(model: Any) -> dict[str, Any]:
    """What the page says about a loaded copy model (a ``CopyModel``)."""
    config = model.model.config
    return {
        "name": model_name(model.path),
        "arch": arch_of(config.p_gen),
        "hidden": config.hidden,
        "vocabulary": len(model.vocab),
        "step": model.step,
    }


def source_of(request: CopyRequest) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    """The request's source tokens and, for a generated sentence, its reference target.

    Raises:
        ValueError: a sentence with no word or more than :data:`MAX_WORDS` tokens.
    """

    if request.sentence is None:
        pair = sample_pair(request.seed, 0, COPY_STREAM)
        return pair.source, pair.target
    tokens = tokenize(request.sentence)
    if not tokens or len(tokens) > MAX_WORDS:
        raise ValueError(f"1 to {MAX_WORDS} words, please (got {len(tokens)})")
    return tokens, None


def top_words(probs: list[float], words: tuple[str, ...]) -> list[list]:
    """The :data:`TOP` most likely words of one distribution, as ``[word, p]`` pairs."""
    order = sorted(range(len(probs)), key=lambda i: -probs[i])[:TOP]
    return [[words[i], round(probs[i], 4)] for i in order]


def step_json(explanation: Any, t: int, vocab_size: int) -> dict[str, Any]:
    """Output step ``t`` of an explanation: the word, its two terms and the distributions."""
    words, source = explanation.vocabulary, explanation.source
    word = explanation.output[t]
    index = words.index(word)
    p_gen = float(explanation.p_gen[t])
    attention = [float(a) for a in explanation.attention[t]]
    p_vocab = [float(p) for p in explanation.p_vocab[t]]
    in_vocab = index < vocab_size
    copied = sum(a for a, w in zip(attention, source, strict=True) if w == word)
    return {
        "word": word,
        "in_vocabulary": in_vocab,
        "in_source": word in source,
        "p_gen": round(p_gen, 4),
        "generate": round(p_gen * (p_vocab[index] if in_vocab else 0.0), 4),
        "copy": round((1.0 - p_gen) * copied, 4),
        "mixture": round(float(explanation.mixture[t, index]), 4),
        "attention": [round(a, 4) for a in attention],
        "p_vocab_top": top_words(p_vocab, words[:vocab_size]),
        "mixture_top": top_words([float(p) for p in explanation.mixture[t]], words),
    }


def copy_answer(model: Any, request: CopyRequest) -> dict[str, Any]:
    """The greedy decode of the request's sentence with every step's quantities.

    Raises:
        ValueError: a sentence with no word or too many.
    """

    source, target = source_of(request)
    explanation = explain(model.model, model.vocab, source, p_gen=request.p_gen)
    vocab_size = len(model.vocab)
    return {
        "source": list(explanation.source),
        "oov": [w for w in explanation.source if w not in model.vocab],
        "target": None if target is None else list(target),
        "p_gen_override": request.p_gen,
        "steps": [step_json(explanation, t, vocab_size) for t in range(len(explanation.output))],
        "info": copy_info(model),
    }
