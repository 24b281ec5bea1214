"""The span pointer against the answer classifier on the span task: SQuAD's exact match and F1 on
held-out-name test questions and on questions of the training stream, one thread, a markdown
table on stdout.

    python benchmarks/bench_span.py --classifier runs/span-classifier [--span bundled] \
        [--count 2000] [--seed 7]

The test questions are ``ptrnet generate span --count N --seed S``'s (the test stream: names and
numbers no training example holds); the training-stream questions are the first N of the runs'
own training stream (seed 1, stream 0: answers the classifier has among its classes). Both
models answer greedily (:func:`ptrnet.text.span_eval.evaluate_spans`).
"""

from __future__ import annotations

import argparse
import time

import torch

from ptrnet.cli.common import positive_int
from ptrnet.tasks import Stream, get_task
from ptrnet.text.span_eval import evaluate_spans, load_span


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--span", default=None, help="span pointer run (default: bundled)")
    parser.add_argument("--classifier", required=True, help="classifier run or checkpoint")
    parser.add_argument("--count", type=positive_int, default=2000, help="questions per set")
    parser.add_argument("--seed", type=int, default=7, help="seed of the test questions")
    args = parser.parse_args()
    torch.set_num_threads(1)
    task = get_task("span")
    sets = {
        f"test (held-out names, seed {args.seed})": list(
            task.generate_pairs(args.count, args.seed, Stream.TEST)
        ),
        "training stream (seed 1)": list(task.generate_pairs(args.count, 1, Stream.TRAIN)),
    }
    print("| model | questions | exact match | F1 | seconds |")
    print("|---|---|---:|---:|---:|")
    for path in (args.span, args.classifier):
        loaded = load_span(path)
        for name, pairs in sets.items():
            start = time.perf_counter()
            metrics, _ = evaluate_spans(loaded, pairs)
            seconds = time.perf_counter() - start
            print(
                f"| {loaded.config.arch} | {name}, {len(pairs)} | "
                f"{100 * metrics['exact_match']:.1f}% | {100 * metrics['f1']:.1f}% | "
                f"{seconds:.1f} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
