"""The span task's words as tensors, its gold spans and answers: the one place a passage and a
question become :class:`~ptrnet.model.span.SpanInputs`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import torch

from ptrnet.model.span import ANSWER_WORDS, SpanInputs
from ptrnet.tasks.sentences import Pair
from ptrnet.tasks.span import find_spans, split_source
from ptrnet.text.vocab import PAD_ID, Vocabulary

UNKNOWN_ANSWER = 0  #: the classifier's class for an answer outside its training answers


def _pad(rows: Sequence[Sequence[float]], dtype: torch.dtype) -> torch.Tensor:
    out = torch.full((len(rows), max(len(r) for r in rows)), PAD_ID, dtype=dtype)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.tensor(row, dtype=dtype)
    return out


def span_inputs(vocab: Vocabulary, sources: Sequence[Sequence[str]]) -> SpanInputs:
    """B source sentences (passage, question mark, question) as padded ids, with the
    exact-match flags computed on the words themselves (so an out-of-vocabulary name in the
    question still marks its occurrence in the passage).

    Raises:
        ValueError: a source without a passage and a question (:func:`split_source`).
    """
    split = [split_source(tuple(source)) for source in sources]
    passages = [[vocab.id(w) for w in p] for p, _ in split]
    questions = [[vocab.id(w) for w in q] for _, q in split]
    p_match = [[float(w in set(q)) for w in p] for p, q in split]
    q_match = [[float(w in set(p)) for w in q] for p, q in split]
    passage, question = _pad(passages, torch.long), _pad(questions, torch.long)
    p_lengths = torch.tensor([len(p) for p, _ in split])
    q_lengths = torch.tensor([len(q) for _, q in split])
    return SpanInputs(
        passage=passage,
        passage_mask=torch.arange(passage.shape[1]) < p_lengths.unsqueeze(1),
        passage_match=_pad(p_match, torch.float32),
        question=question,
        question_mask=torch.arange(question.shape[1]) < q_lengths.unsqueeze(1),
        question_match=_pad(q_match, torch.float32),
    )


def gold_spans(pairs: Sequence[Pair]) -> tuple[torch.Tensor, torch.Tensor]:
    """(B,) first and (B,) last passage positions of each answer (its first occurrence).

    Raises:
        ValueError: an answer that is not a span of its passage, naming the example.
    """
    starts, ends = [], []
    for i, pair in enumerate(pairs):
        passage, _ = split_source(pair.source)
        found = find_spans(passage, pair.target) if pair.target else []
        if not found:
            raise ValueError(f"example {i + 1}: the answer is not a span of the passage")
        starts.append(found[0])
        ends.append(found[0] + len(pair.target) - 1)
    return torch.tensor(starts), torch.tensor(ends)


def spans_to_answers(
    sources: Sequence[Sequence[str]], starts: torch.Tensor, ends: torch.Tensor
) -> list[tuple[str, ...]]:
    """The passage words ``start .. end`` of each source."""
    answers = []
    for source, s, e in zip(sources, starts.tolist(), ends.tolist(), strict=True):
        passage, _ = split_source(tuple(source))
        answers.append(tuple(passage[s : e + 1]))
    return answers


class AnswerVocabulary:
    """The classifier's classes: :data:`UNKNOWN_ANSWER`, then every answer seen at least
    ``min_count`` times in the training pairs (most frequent first), of at most
    :data:`~ptrnet.model.span.ANSWER_WORDS` words."""

    def __init__(self, pairs: Sequence[Pair], min_count: int = 1) -> None:
        counts = Counter(pair.target for pair in pairs)
        fits = (a for a, c in counts.items() if c >= min_count and len(a) <= ANSWER_WORDS)
        kept = sorted(fits, key=lambda a: (-counts[a], a))
        self.answers: tuple[tuple[str, ...], ...] = ((), *kept)
        self._ids = {answer: i for i, answer in enumerate(self.answers)}

    @classmethod
    def from_answers(cls, answers: Sequence[Sequence[str]]) -> AnswerVocabulary:
        """The classes as saved (``answers``: the unknown class's ``[]`` first, then each
        answer's words), in that order.

        Raises:
            ValueError: the first is not empty, or an answer is empty or listed twice.
        """
        kept = [tuple(a) for a in answers]
        if not kept or kept[0] != () or not all(kept[1:]) or len(set(kept)) != len(kept):
            raise ValueError("answers: [] first, then distinct non-empty answers")
        vocab = cls([])
        vocab.answers = tuple(kept)
        vocab._ids = {answer: i for i, answer in enumerate(kept)}
        return vocab

    def __len__(self) -> int:
        return len(self.answers)

    def with_answer_words(self, vocab: Vocabulary) -> Vocabulary:
        """``vocab`` and, after its words, every word of the answers it lacks (the classifier's
        class vectors are sums of word vectors, so each answer's words need their own)."""
        known = set(vocab.words)
        extra = dict.fromkeys(w for answer in self.answers for w in answer if w not in known)
        return Vocabulary([*vocab.words, *extra])

    def word_ids(self, vocab: Vocabulary) -> torch.Tensor:
        """(classes, ANSWER_WORDS) each class's word ids in ``vocab``, padded with PAD_ID."""
        ids = torch.full((len(self.answers), ANSWER_WORDS), PAD_ID, dtype=torch.long)
        for c, answer in enumerate(self.answers):
            ids[c, : len(answer)] = torch.tensor([vocab.id(w) for w in answer], dtype=torch.long)
        return ids

    def ids(self, pairs: Sequence[Pair]) -> torch.Tensor:
        """(B,) class of each pair's answer, :data:`UNKNOWN_ANSWER` for an unseen one."""
        return torch.tensor([self._ids.get(tuple(p.target), UNKNOWN_ANSWER) for p in pairs])
