"""The classifier baseline of the span task against the span pointer, in direction: a
classifier trained at a small size answers held-out questions whose answer it saw in training
(its classes) and none about held-out names; the span pointer (the bundled model) answers both.
docs/span.md gives the full-size figures (benchmarks/bench_span.py)."""

import pytest
import torch

from ptrnet.tasks import Stream, get_task
from ptrnet.text.span_config import SpanTrainConfig
from ptrnet.text.span_eval import evaluate_spans, load_span, seen_answer_pairs
from ptrnet.text.span_train import train_span

torch.set_num_threads(1)

SMALL = SpanTrainConfig(
    arch="classifier", embed=32, hidden=24, steps=200, batch_size=32, lr=5e-3,
    vocab_pairs=1000, min_count=5, answer_pairs=6400, val_count=8, val_every=200,
)  # fmt: skip


def exact_match(model, pairs) -> float:
    return evaluate_spans(model, pairs)[0]["exact_match"]


@pytest.mark.slow
def test_the_classifier_answers_seen_answers_only_and_the_pointer_both(tmp_path):
    train_span(SMALL, tmp_path / "run", log=lambda line: None)
    classifier = load_span(tmp_path / "run")
    assert classifier.answers is not None
    seen, read = seen_answer_pairs(classifier.answers, 200)
    assert len(seen) == 200 and read > 200  # not every fresh answer is a class
    test = list(get_task("span").generate_pairs(200, 7, Stream.TEST))
    assert not {p.target for p in test} & set(classifier.answers.answers)
    pointer = load_span(None)
    assert exact_match(classifier, seen) >= 0.7
    assert exact_match(classifier, test) == 0.0  # no test answer is a class
    assert exact_match(pointer, seen) >= 0.95 and exact_match(pointer, test) >= 0.95
