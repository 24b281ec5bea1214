"""Extractive question answering: a two-step pointer over the passage, and the classifier it is
compared with.

* :class:`SpanPointer` -- the boundary model of Wang & Jiang (2017, "Machine Comprehension Using
  Match-LSTM and Answer Pointer"): the passage is read in the light of the question, then a
  Ptr-Net decoder (Vinyals et al. 2015, eq. 3) takes two steps: the first points at the
  answer's first token, the second, fed the token pointed at, at its last. Its output is a span
  of the input, so a name it never saw in training is as easy to answer as one it did.
* :class:`AnswerClassifier` -- the same reader with a softmax over a fixed answer vocabulary
  (every answer seen in training, then "unknown"): it can only name answers it has seen.

Both read the same :class:`SpanInputs`. The exact-match flags (a passage token occurs in the
question, and the reverse; DrQA's feature, Chen et al. 2017) are what lets the reader find a
name outside its vocabulary: every unseen word shares the unknown word's embedding, and the flag
says which of them the question asks about.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn


@dataclass(frozen=True)
class SpanInputs:
    """B passages and questions as ids.

    Attributes:
        passage: (B, P) word ids, padding past each passage's length.
        passage_mask: (B, P) True at real tokens.
        passage_match: (B, P) 1.0 where the passage token occurs in the question.
        question: (B, Q) word ids.
        question_mask: (B, Q) True at real tokens.
        question_match: (B, Q) 1.0 where the question token occurs in the passage.
    """

    passage: torch.Tensor
    passage_mask: torch.Tensor
    passage_match: torch.Tensor
    question: torch.Tensor
    question_mask: torch.Tensor
    question_match: torch.Tensor


@dataclass
class SpanMemory:
    """What :meth:`SpanPointer.encode` computes once per batch.

    Attributes:
        passage: (B, P, 2H) question-aware passage encodings, the vectors pointed at.
        keys: (B, P, H) W1 times the passage encodings (the pointer's first term, cached).
        mask: (B, P) True at real passage tokens.
        question: (B, 2H) the question's summary, the decoder's first input.
    """

    passage: torch.Tensor
    keys: torch.Tensor
    mask: torch.Tensor
    question: torch.Tensor


def _masked_fill(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return scores.masked_fill(~mask, float("-inf"))


class Reader(nn.Module):
    """Embeddings + exact-match flags -> BiLSTM encodings of passage and question, the question
    pooled by attention, and the passage re-read with the question (Match-LSTM's role, here a
    second BiLSTM over ``[p, p * q, p - q]``)."""

    def __init__(self, vocab_size: int, embed: int, hidden: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed, padding_idx=0)
        self.passage_rnn = nn.LSTM(embed + 1, hidden, batch_first=True, bidirectional=True)
        self.question_rnn = nn.LSTM(embed + 1, hidden, batch_first=True, bidirectional=True)
        self.pool = nn.Linear(2 * hidden, 1)
        self.match_rnn = nn.LSTM(6 * hidden, hidden, batch_first=True, bidirectional=True)

    def forward(self, x: SpanInputs) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, P, 2H) passage encodings and (B, 2H) question summaries."""
        p_in = torch.cat([self.embed(x.passage), x.passage_match.unsqueeze(-1)], -1)
        q_in = torch.cat([self.embed(x.question), x.question_match.unsqueeze(-1)], -1)
        p, _ = self.passage_rnn(p_in)  # (B, P, 2H)
        q, _ = self.question_rnn(q_in)  # (B, Q, 2H)
        weights = _masked_fill(self.pool(q).squeeze(-1), x.question_mask).softmax(-1)  # (B, Q)
        summary = torch.einsum("bq,bqh->bh", weights, q)  # (B, 2H)
        s = summary.unsqueeze(1).expand_as(p)
        m, _ = self.match_rnn(torch.cat([p, p * s, p - s], -1))  # (B, P, 2H)
        return m, summary


class SpanPointer(nn.Module):
    """The reader, then a Ptr-Net decoder of two steps over the passage (start, then end).

    Decoding interface (encode once, then step), as every ptrnet decoder:
    :meth:`encode` -> :class:`SpanMemory`; :meth:`first_step` -> (B, P) start logits and the
    decoder state; :meth:`second_step` (the start pointed at) -> (B, P) end logits. Positions
    outside the passage are -inf; the end >= start rule is the decoding's (a mask on the
    second step), so training sees the plain distributions.
    """

    def __init__(self, vocab_size: int, embed: int, hidden: int) -> None:
        super().__init__()
        self.reader = Reader(vocab_size, embed, hidden)
        self.cell = nn.LSTMCell(2 * hidden, 2 * hidden)
        self.w1 = nn.Linear(2 * hidden, hidden, bias=False)  # W1 e_j (encoder side)
        self.w2 = nn.Linear(2 * hidden, hidden, bias=False)  # W2 d_i (decoder side)
        self.v = nn.Linear(hidden, 1, bias=False)  # v^T

    def encode(self, x: SpanInputs) -> SpanMemory:
        passage, question = self.reader(x)
        return SpanMemory(passage, self.w1(passage), x.passage_mask, question)

    def _point(self, memory: SpanMemory, d: torch.Tensor) -> torch.Tensor:
        """u_j = v^T tanh(W1 e_j + W2 d) for every passage position j: (B, P) logits."""
        u = self.v(torch.tanh(memory.keys + self.w2(d).unsqueeze(1))).squeeze(-1)
        return _masked_fill(u, memory.mask)

    def first_step(self, memory: SpanMemory) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
        """(B, P) start logits and the decoder state after reading the question summary."""
        state = self.cell(memory.question)
        return self._point(memory, state[0]), state

    def second_step(
        self, memory: SpanMemory, state: tuple[torch.Tensor, ...], start: torch.Tensor
    ) -> torch.Tensor:
        """(B, P) end logits, the decoder fed the passage vector at ``start`` ((B,) indices)."""
        chosen = memory.passage[torch.arange(len(start)), start]  # (B, 2H)
        h, _ = self.cell(chosen, state)
        return self._point(memory, h)

    def forward(self, x: SpanInputs, start: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Teacher-forced (B, P) start and end log-probabilities (the true ``start`` fed)."""
        memory = self.encode(x)
        start_logits, state = self.first_step(memory)
        end_logits = self.second_step(memory, state, start)
        return start_logits.log_softmax(-1), end_logits.log_softmax(-1)


ANSWER_WORDS = 4  #: the longest answer a classifier's class may be, in words


class AnswerClassifier(nn.Module):
    """The reader, its passage pooled by an attention beside the question summary, then a
    softmax over ``answers`` classes (index 0: an answer outside the training answers).

    The classes share the reader's word vectors (weight tying, Press & Wolf 2017): class c's
    vector is the sum of its words' embeddings (``answer_words``, a buffer the trainer fills
    with :meth:`set_answer_words`), and its logit is ``h . A_c + b_c``, h the pooled reading
    projected to the word-vector size. So an answer seen as a class once is not a free
    parameter learned from one example: the class is as recognisable as its words.
    """

    def __init__(self, vocab_size: int, answers: int, embed: int, hidden: int) -> None:
        super().__init__()
        self.reader = Reader(vocab_size, embed, hidden)
        self.attend = nn.Linear(2 * hidden, 1)
        self.out = nn.Sequential(
            nn.Linear(4 * hidden + embed, 2 * hidden), nn.Tanh(), nn.Linear(2 * hidden, embed)
        )
        self.bias = nn.Parameter(torch.zeros(answers))
        self.register_buffer("answer_words", torch.zeros(answers, ANSWER_WORDS, dtype=torch.long))

    def set_answer_words(self, ids: torch.Tensor) -> None:
        """Class c is the words ``ids[c]`` ((answers, ANSWER_WORDS) word ids, 0-padded)."""
        self.answer_words.copy_(ids)

    def forward(self, x: SpanInputs) -> torch.Tensor:
        """(B, answers) log-probabilities."""
        passage, question = self.reader(x)  # (B, P, 2H), (B, 2H)
        weights = _masked_fill(self.attend(passage).squeeze(-1), x.passage_mask).softmax(-1)
        pooled = torch.einsum("bp,bph->bh", weights, passage)  # (B, 2H)
        words = torch.einsum("bp,bpe->be", weights, self.reader.embed(x.passage))  # (B, E)
        h = self.out(torch.cat([pooled, words, question], -1))  # (B, E)
        classes = self.reader.embed(self.answer_words).sum(1)  # (answers, E)
        return (h @ classes.T + self.bias).log_softmax(-1)
