"""The span task: its generator (pure, answerable, held-out names), SQuAD's metrics, the inputs'
exact-match flags, and the two-step span search against brute force."""

from __future__ import annotations

import itertools

import pytest
import torch

from ptrnet.decoding.options import DecodeOptions
from ptrnet.model.span import SpanPointer
from ptrnet.tasks.sentences import Pair
from ptrnet.tasks.span import (
    BUILDINGS,
    FACTS,
    KINDS,
    MONTHS,
    QUESTION_MARK,
    ROLES,
    SpanTask,
    find_spans,
    sample_pair,
    split_source,
)
from ptrnet.tasks.streams import Stream
from ptrnet.text.metrics import normalize_answer, span_metrics, squad_f1
from ptrnet.text.span import gold_spans, span_inputs, spans_to_answers
from ptrnet.text.span_decoder import decode_spans
from ptrnet.text.vocab import Vocabulary


def _closed_words() -> set[str]:
    """Words any pool may use: the templates' own words, the closed lists, days of the month."""
    words = {str(day) for day in range(1, 29)} | set(MONTHS) | set(KINDS) | set(ROLES)
    words |= set(BUILDINGS) | {QUESTION_MARK}
    for sentence, questions in FACTS:
        for text in (sentence, *(q for q, _ in questions)):
            words |= {w for w in text.split() if not w.startswith("{")}
    return words


def test_examples_are_a_pure_function_of_seed_stream_and_index():
    assert sample_pair(3, 17, 0) == sample_pair(3, 17, 0)
    assert sample_pair(3, 17, 0) != sample_pair(3, 18, 0)
    assert SpanTask().sample_pair(3, 17, 0) == sample_pair(3, 17, 0)


def test_every_answer_is_one_span_of_its_passage():
    for index in range(300):
        pair = sample_pair(0, index, Stream.TEST)
        passage, question = split_source(pair.source)
        assert len(find_spans(passage, pair.target)) == 1
        assert question[-1] == "?"


def test_test_names_and_numbers_never_occur_in_training_data():
    closed = _closed_words()
    train = {w for i in range(3000) for w in sample_pair(0, i, Stream.TRAIN).source} - closed
    test = {w for i in range(1000) for w in sample_pair(0, i, Stream.TEST).source} - closed
    valid = {w for i in range(1000) for w in sample_pair(0, i, Stream.VALIDATION).source} - closed
    assert len(test) > 1000 and len(train) > 5000
    assert not train & test and not train & valid and not valid & test


def test_a_source_without_a_question_is_refused():
    with pytest.raises(ValueError, match="no '|'"):
        split_source(("a", "b"))
    with pytest.raises(ValueError, match="empty question"):
        split_source(("a", QUESTION_MARK))


def test_a_second_question_mark_is_refused():
    """One ``|`` between passage and question, as ``ptrnet.load("span")`` takes them: ``a | b |
    c`` is refused, not answered with ``b | c`` as the question."""
    with pytest.raises(ValueError, match="more than one '|'"):
        split_source(("a", QUESTION_MARK, "b", QUESTION_MARK, "c"))
    with pytest.raises(ValueError, match="more than one '|'"):
        split_source(("a", QUESTION_MARK, QUESTION_MARK, "c"))


@pytest.mark.parametrize(
    ("predicted", "target", "f1"),
    [
        (["the", "cat"], ["cat"], 1.0),  # articles go
        (["x", "y", "z"], ["y", "z", "w"], 2 / 3),
        (["a", "b", "c"], ["b", "c", "d"], 0.8),  # "a" is an article: [b, c] against [b, c, d]
        (["x"], ["y"], 0.0),
        ([], ["y"], 0.0),
        (["cat", "."], ["Cat"], 1.0),  # punctuation and case go
    ],
)
def test_squad_f1_matches_the_official_definition(predicted, target, f1):
    assert squad_f1(predicted, target) == pytest.approx(f1)


def test_span_metrics_average_exact_match_and_f1():
    pairs = [Pair(("q",), ("kanori", "sato")), Pair(("q",), ("1987",))]
    got = span_metrics(pairs, [("kanori",), ("1987",)])
    assert got == {"exact_match": 0.5, "f1": pytest.approx((2 / 3 + 1) / 2), "count": 2}
    assert normalize_answer(["The", "Mivel", "labs", "!"]) == ["mivel", "labs"]


def test_exact_match_flags_mark_an_unseen_name_in_the_passage():
    vocab = Vocabulary(["<pad>", "<unk>", "<s>", "</s>", "who", "paid", "?", "."])
    source = ("zuko", "paid", "mira", ".", QUESTION_MARK, "who", "paid", "mira", "?")
    x = span_inputs(vocab, [source])
    assert x.passage[0].tolist() == [1, 5, 1, 7]  # both names unknown words
    assert x.passage_match[0].tolist() == [0.0, 1.0, 1.0, 0.0]  # but only mira is asked about
    assert x.question_match[0].tolist() == [0.0, 1.0, 1.0, 0.0]


def test_gold_spans_and_answers_round_trip():
    pairs = [sample_pair(0, i, Stream.TEST) for i in range(20)]
    starts, ends = gold_spans(pairs)
    assert spans_to_answers([p.source for p in pairs], starts, ends) == [p.target for p in pairs]
    with pytest.raises(ValueError, match="example 1: the answer is not a span"):
        gold_spans([Pair(("a", QUESTION_MARK, "b"), ("c",))])


def test_shared_beam_search_with_every_start_finds_the_brute_force_best_span():
    torch.manual_seed(0)
    model = SpanPointer(vocab_size=12, embed=8, hidden=8).eval()
    vocab = Vocabulary(["<pad>", "<unk>", "<s>", "</s>", *"abcdefgh"])
    sources = [tuple("abcdefgh"[: 4 + i]) + (QUESTION_MARK, "a", "c") for i in range(4)]
    x = span_inputs(vocab, sources)
    max_length = 3
    with torch.no_grad():
        memory = model.encode(x)
        beam = DecodeOptions("beam", beam_width=12)
        starts, ends, scores = decode_spans(model, x, beam, max_length=max_length)
        greedy = decode_spans(model, x, max_length=max_length)
        assert bool((scores >= greedy[2] - 1e-6).all())  # the beam never finds less
        start_logp, state = model.first_step(memory)
        start_logp = start_logp.log_softmax(-1)
        for b, source in enumerate(sources):
            n = len(source) - 3
            best = (float("-inf"), None)
            for s, e in itertools.product(range(n), range(n)):
                if not 0 <= e - s < max_length:
                    continue
                pick = torch.full((len(sources),), s)
                end_logits = model.second_step(memory, state, pick)[b]
                allowed = torch.tensor([0 <= j - s < max_length for j in range(len(end_logits))])
                end_logp = end_logits.masked_fill(~allowed, float("-inf")).log_softmax(-1)
                score = float(start_logp[b, s] + end_logp[e])
                best = max(best, (score, (s, e)), key=lambda t: t[0])
            assert (int(starts[b]), int(ends[b])) == best[1]
            assert float(scores[b]) == pytest.approx(best[0], abs=1e-5)
            assert 0 <= ends[b] - starts[b] < max_length
