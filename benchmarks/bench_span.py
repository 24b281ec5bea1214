"""The span pointer against the answer classifier on the span task: SQuAD's exact match and F1 on
held-out-name test questions and on held-out questions whose answer the classifier saw in
training, one thread, a markdown table on stdout.

    python benchmarks/bench_span.py --classifier runs/span-classifier [--span bundled] \
        [--count 2000] [--seed 7]

The test questions are ``ptrnet generate span --count N --seed S``'s (the test stream: names and
numbers no training example holds, so no test answer is a class of the classifier). The
seen-answer questions are the first N questions of the training stream (seed 1, stream 0) from
example 1,000,000 on, far past every example either run trained on, whose answer is one of the
classifier's classes: what a classifier can know (:func:`ptrnet.text.span_eval.
seen_answer_pairs`). A line after the table says how many fresh questions were read to find
them, and their answers' kinds. Both models answer greedily
(:func:`ptrnet.text.span_eval.evaluate_spans`).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

import torch

from ptrnet.cli.common import positive_int
from ptrnet.tasks import Stream, get_task
from ptrnet.text.span_eval import evaluate_spans, load_span, seen_answer_pairs


def answer_kind(answer: tuple[str, ...]) -> str:
    """``number`` (a year or a staff count), ``place`` (one word), or ``other`` (a person,
    organisation, date or amount: the span task's answers of several words)."""
    if len(answer) == 1:
        return "number" if answer[0].isdigit() else "place"
    return "other"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--span", default=None, help="span pointer run (default: bundled)")
    parser.add_argument("--classifier", required=True, help="classifier run or checkpoint")
    parser.add_argument("--count", type=positive_int, default=2000, help="questions per set")
    parser.add_argument("--seed", type=int, default=7, help="seed of the test questions")
    args = parser.parse_args()
    torch.set_num_threads(1)
    models = [load_span(args.span), load_span(args.classifier)]
    classes = models[1].answers
    if classes is None:
        parser.error(f"--classifier: {models[1].path} is a span pointer, not a classifier")
    seen, read = seen_answer_pairs(classes, args.count)
    if not seen:
        parser.error(f"no fresh training-pool question has an answer among {models[1].path}'s")
    sets = {
        f"test (held-out names, seed {args.seed})": list(
            get_task("span").generate_pairs(args.count, args.seed, Stream.TEST)
        ),
        "seen answers (fresh training-pool questions)": seen,
    }
    print("| model | questions | exact match | F1 | seconds |")
    print("|---|---|---:|---:|---:|")
    for loaded in models:
        for name, pairs in sets.items():
            start = time.perf_counter()
            metrics, _ = evaluate_spans(loaded, pairs)
            seconds = time.perf_counter() - start
            print(
                f"| {loaded.config.arch} | {name}, {len(pairs)} | "
                f"{100 * metrics['exact_match']:.1f}% | {100 * metrics['f1']:.1f}% | "
                f"{seconds:.1f} |"
            )
    kinds = Counter(answer_kind(p.target) for p in seen)
    shares = ", ".join(f"{k} {100 * c / len(seen):.0f}%" for k, c in kinds.most_common())
    print(
        f"\nseen answers: {len(seen)} of {read} fresh training-pool questions "
        f"({100 * len(seen) / read:.0f}%) have an answer among the classifier's "
        f"{len(classes) - 1} classes; their kinds: {shares}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
