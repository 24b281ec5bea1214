"""Metrics of the sentence tasks (``copy``), on words (no torch); the keys are the task card's
(:data:`ptrnet.tasks.sentences.METRIC_KEYS`).

* ``exact_match``: share of examples whose predicted headline equals the target.
* ``token_accuracy``: words equal at the same position, over the longer of prediction and
  target, summed over the dataset (a missing or extra word counts as wrong).
* ``oov_recall``: of the target words outside the model's vocabulary (counted with
  multiplicity), the share the prediction contains (as many times); None without such words.
* ``p_gen_copied`` / ``p_gen_generated``: mean p_gen at the steps that output a word present in
  the source / absent from it (None when there are none), from the decoder's record.
"""

from __future__ import annotations

import string
from collections import Counter
from collections.abc import Container, Sequence
from typing import Any

from ptrnet.tasks.sentences import METRIC_KEYS, Pair

KEYS = (*METRIC_KEYS, "count")


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def copy_metrics(
    pairs: Sequence[Pair],
    predictions: Sequence[Sequence[str]],
    vocabulary: Container[str],
    p_gen: Sequence[Sequence[float]] | None = None,
) -> dict[str, Any]:
    """The metrics above for ``predictions[i]`` against ``pairs[i].target``.

    Args:
        vocabulary: the model's fixed vocabulary (what counts as in-vocabulary).
        p_gen: per prediction, the p_gen of each of its words (None: the p_gen keys are None).
    Raises:
        ValueError: different counts, or no examples.
    """
    if len(pairs) != len(predictions) or (p_gen is not None and len(p_gen) != len(pairs)):
        raise ValueError("one prediction (and one p_gen record) per example is required")
    if not pairs:
        raise ValueError("no examples to score")
    exact = right = positions = oov_total = oov_found = 0
    copied: list[float] = []
    generated: list[float] = []
    for i, (pair, predicted) in enumerate(zip(pairs, predictions, strict=True)):
        predicted = tuple(predicted)
        exact += predicted == tuple(pair.target)  # a list target never equals a tuple
        right += sum(a == b for a, b in zip(predicted, pair.target, strict=False))
        positions += max(len(predicted), len(pair.target))
        wanted = Counter(w for w in pair.target if w not in vocabulary)
        output = Counter(predicted)
        oov_total += sum(wanted.values())
        oov_found += sum(min(c, output[w]) for w, c in wanted.items())
        for word, gate in zip(predicted, p_gen[i] if p_gen is not None else (), strict=False):
            (copied if word in pair.source else generated).append(gate)
    return {
        "exact_match": exact / len(pairs),
        "token_accuracy": right / positions if positions else 1.0,
        "oov_recall": oov_found / oov_total if oov_total else None,
        "p_gen_copied": _mean(copied),
        "p_gen_generated": _mean(generated),
        "count": len(pairs),
    }


_ARTICLES = frozenset({"a", "an", "the"})


def normalize_answer(tokens: Sequence[str]) -> list[str]:
    """SQuAD v1.1's answer normalisation on tokens: lower case, punctuation and the articles
    a/an/the removed (Rajpurkar et al. 2016, the official evaluation script)."""
    text = "".join(ch for ch in " ".join(tokens).lower() if ch not in string.punctuation)
    return [word for word in text.split() if word not in _ARTICLES]


def squad_f1(predicted: Sequence[str], target: Sequence[str]) -> float:
    """SQuAD v1.1's F1: the harmonic mean of token precision and recall after
    :func:`normalize_answer` (0 when nothing is shared, an empty answer included)."""
    guess, truth = normalize_answer(predicted), normalize_answer(target)
    shared = sum((Counter(guess) & Counter(truth)).values())
    if shared == 0:
        return 0.0
    precision, recall = shared / len(guess), shared / len(truth)
    return 2 * precision * recall / (precision + recall)


def span_metrics(pairs: Sequence[Pair], predictions: Sequence[Sequence[str]]) -> dict[str, Any]:
    """``exact_match`` (normalised answers equal) and ``f1`` (:func:`squad_f1`), means over the
    examples, SQuAD v1.1's definitions with one reference answer per question.

    Raises:
        ValueError: different counts, or no examples.
    """
    if len(pairs) != len(predictions):
        raise ValueError("one prediction per example is required")
    if not pairs:
        raise ValueError("no examples to score")
    exact = f1 = 0.0
    for pair, predicted in zip(pairs, predictions, strict=True):
        exact += normalize_answer(predicted) == normalize_answer(pair.target)
        f1 += squad_f1(predicted, pair.target)
    return {"exact_match": exact / len(pairs), "f1": f1 / len(pairs), "count": len(pairs)}
