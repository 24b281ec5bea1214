"""The commands of the span task (extractive QA): a task of the sentence kind whose answer is a
span of its input, served here with the sentence front end's options and parsing
(:mod:`ptrnet.cli.sentences`; :data:`ptrnet.cli.kinds.BY_ANSWER` sends it here):

* ``generate span --count N [--seed S] [--stream K] -o FILE``: the sentence front end's; the
  default stream is the task's test stream (held-out names).
* ``train span [--arch span_pointer|classifier] --out RUN [--resume]``: the shared loop and run
  directory (:func:`ptrnet.text.span_train.train_span`), the shared option names.
* ``eval span FILE [--json] [--model RUN]``: SQuAD's exact_match and f1 (default model: the
  bundled span pointer).
* ``predict span PASSAGE_OR_FILE [-o FILE] [--explain] [--text]``: the answers (with
  ``--explain``, the start and end pointers' most likely positions).

``--p-gen`` (the pointer-generator's switch) is refused in one line.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ptrnet.cli import sentence_train
from ptrnet.cli.common import DRY_RUN_COUNT
from ptrnet.cli.sentence_train import TrainKind
from ptrnet.cli.sentences import (
    check_decoding,
    generate,
    predict_sources,
    show_metrics,
    write_predictions,
)
from ptrnet.io.errors import UsageError

if TYPE_CHECKING:
    from ptrnet.decoding.options import DecodeOptions
    from ptrnet.tasks import SentenceTask
    from ptrnet.text.sentence_run import SentenceTrainer
    from ptrnet.text.span_checkpoint import SpanModel
    from ptrnet.text.span_eval import SpanExplanation

DRY_RUN = {**sentence_train.DRY_RUN, "vocab_pairs": 64, "answer_pairs": 64}


def _refuse_p_gen(args: argparse.Namespace, task: SentenceTask) -> None:
    if getattr(args, "p_gen", None) is not None:
        raise UsageError(
            f"--p-gen: task {task.name} answers with a span of its input, and --p-gen applies "
            "to tasks that write sentences (copy)"
        )


def _span_trainer() -> type[SentenceTrainer]:
    from ptrnet.text.span_train import SpanTrainer

    return SpanTrainer


SPAN = TrainKind(_span_trainer, DRY_RUN)


def train(args: argparse.Namespace, task: SentenceTask) -> int:
    """``ptrnet train span``: the sentence tasks' command (:func:`ptrnet.cli.sentence_train.
    train`) with the span trainer and preset."""
    return sentence_train.train(args, task, SPAN)


def _load(args: argparse.Namespace, task: SentenceTask) -> tuple[SpanModel, DecodeOptions]:
    from ptrnet.text.span_eval import load_span

    _refuse_p_gen(args, task)
    options = check_decoding(args, task)
    return load_span(args.model, task.name), options


def evaluate(args: argparse.Namespace, task: SentenceTask) -> int:
    from ptrnet.text.format import read_pairs
    from ptrnet.text.span_eval import evaluate_spans

    if len(args.data) != 1:
        raise UsageError("give one DATA file of PASSAGE | QUESTION<TAB>ANSWER lines")
    loaded, options = _load(args, task)
    path = args.data[0]
    pairs = read_pairs(path)[: DRY_RUN_COUNT if args.dry_run else None]
    _check_sources(path, [p.source for p in pairs])
    metrics, _ = evaluate_spans(loaded, pairs, options)
    show_metrics(args, task, loaded.config.arch, metrics)
    return 0


def _check_sources(where: str | None, sources: list[tuple[str, ...]]) -> None:
    """Raise UsageError naming the file ``where`` and the example (None: the one passage given)
    for a source without a passage, the question mark and a question."""
    from ptrnet.tasks.span import split_source

    for number, source in enumerate(sources, 1):
        try:
            split_source(source)
        except ValueError as err:
            raise UsageError(f"{where}: example {number}: {err}" if where else str(err)) from None


def predict(args: argparse.Namespace, task: SentenceTask) -> int:
    from ptrnet.text.span_eval import answer_sources, explain_span

    loaded, options = _load(args, task)
    path, sources = predict_sources(args)
    _check_sources(path, sources)
    if args.explain:
        for source in sources:
            print(_explained(explain_span(loaded, source)))
        return 0
    answers = answer_sources(loaded, sources, options)
    write_predictions(args, task, sources, answers)
    return 0


def _explained(explanation: SpanExplanation) -> str:
    """The source, the answer, then per decision its most likely choices with probabilities."""
    from ptrnet.text.format import printable

    lines = [" ".join(explanation.source), f"  answer: {' '.join(explanation.answer)}"]
    for label, choices in explanation.rows:
        shown = "  ".join(f"{what} ({p:.3f})" for what, p in choices)
        lines.append(f"  {label:<6} {shown}")
    return "\n".join(printable(line) for line in lines)


#: What each command runs for a span task (``generate`` is the sentence front end's).
RUNS = {"generate": generate, "train": train, "eval": evaluate, "predict": predict}
