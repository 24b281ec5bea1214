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
import json
import os
import sys
import tempfile
from collections.abc import Callable
from typing import TYPE_CHECKING

from ptrnet.cli.common import DRY_RUN_COUNT, note, output_name
from ptrnet.cli.sentence_train import TRAIN_OPTIONS
from ptrnet.cli.sentences import (
    check_decoding,
    generate,
    predict_sources,
)
from ptrnet.io.errors import UsageError

if TYPE_CHECKING:
    from ptrnet.tasks import SentenceTask
    from ptrnet.text.span_checkpoint import SpanModel
    from ptrnet.text.span_config import SpanTrainConfig
    from ptrnet.text.span_eval import SpanExplanation
    from ptrnet.training.runloop import TrainResult

DRY_RUN = {"steps": 4, "val_every": 2, "val_count": 8, "hidden": 8, "embed": 4,
           "vocab_pairs": 64, "answer_pairs": 64}  # fmt: skip


def _refuse_p_gen(args: argparse.Namespace, task: SentenceTask) -> None:
    if getattr(args, "p_gen", None) is not None:
        raise UsageError(
            f"--p-gen: task {task.name} answers with a span of its input, and --p-gen applies "
            "to tasks that write sentences (copy)"
        )


def train(args: argparse.Namespace, task: SentenceTask) -> int:
    import torch

    from ptrnet.cli.interrupts import run_stoppable
    from ptrnet.text.span_train import train_span

    if args.out is None and (args.resume or not args.dry_run):
        raise UsageError("--out RUN_DIR is required")
    torch.set_num_threads(args.threads or 1)
    try:
        config = _resumed_config(args, task) if args.resume else _fresh_config(args, task)
    except ValueError as err:  # an impossible option value (the config checks them)
        raise UsageError(str(err)) from None
    out = args.out or tempfile.mkdtemp(prefix="ptrnet-dry-run-")

    def run(stop: Callable[[], bool]) -> TrainResult:
        log, progress = (lambda line: note(args, line)), not args.quiet
        return train_span(config, out, log, progress, resume=args.resume, should_stop=stop)

    result = run_stoppable(run, task.name, out)
    if isinstance(result, int):
        return result
    best, metric = result.best, task.validation_metric
    note(args, f"best validation {metric} {best['value']:.4f} at step {best['step']}; run in {out}")
    return 0


def _explicit(args: argparse.Namespace) -> dict[str, object]:
    return {k: getattr(args, k) for k in TRAIN_OPTIONS if getattr(args, k) is not None}


def _fresh_config(args: argparse.Namespace, task: SentenceTask) -> SpanTrainConfig:
    """A new run's configuration: the ``--dry-run`` preset < the options given."""
    from ptrnet.text.span_config import SpanTrainConfig

    options = {**(DRY_RUN if args.dry_run else {}), **_explicit(args)}
    return SpanTrainConfig(args.arch or task.archs[0], task.name, **options)


def _resumed_config(args: argparse.Namespace, task: SentenceTask) -> SpanTrainConfig:
    """The configuration saved in ``--out``'s ``last`` with the options given."""
    from ptrnet.runs import LAST
    from ptrnet.runs.resume import resumed_train
    from ptrnet.text.span_checkpoint import load_span_model
    from ptrnet.text.span_config import SpanTrainConfig

    path = os.path.join(args.out, LAST)
    if not os.path.exists(path):
        raise UsageError(f"nothing to resume: {path} does not exist")
    saved = SpanTrainConfig.from_dict(load_span_model(path).train)
    if saved.task != task.name:
        raise UsageError(f"the run in {args.out} trains {saved.task}, not {task.name}")
    given = {**_explicit(args), **({"arch": args.arch} if args.arch else {})}
    return resumed_train(saved, given)


def _load(args: argparse.Namespace, task: SentenceTask) -> SpanModel:
    from ptrnet.text.span_eval import load_span

    _refuse_p_gen(args, task)
    check_decoding(args, task)
    return load_span(args.model, task.name)


def evaluate(args: argparse.Namespace, task: SentenceTask) -> int:
    from ptrnet.text.format import read_pairs
    from ptrnet.text.span_eval import evaluate_spans

    if len(args.data) != 1:
        raise UsageError("give one DATA file of PASSAGE | QUESTION<TAB>ANSWER lines")
    loaded = _load(args, task)
    path = args.data[0]
    pairs = read_pairs(path)[: DRY_RUN_COUNT if args.dry_run else None]
    _check_sources(path, [p.source for p in pairs])
    metrics, _ = evaluate_spans(
        loaded, pairs, args.decode, _width(args), args.batch_size, args.seed
    )
    if args.json:
        print(json.dumps(metrics))
        return 0
    width = max(map(len, metrics))
    for key, value in {"task": task.name, "arch": loaded.config.arch, **metrics}.items():
        shown = f"{value:.4f}" if isinstance(value, float) else value
        print(f"{key:<{width}}  {shown}")
    return 0


def _width(args: argparse.Namespace) -> int:
    return args.samples if args.decode == "sample" else args.beam_width


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
    from ptrnet.text.format import Pair, printable, write_pairs
    from ptrnet.text.span_eval import answer_sources, explain_span

    loaded = _load(args, task)
    path, sources = predict_sources(args)
    _check_sources(path, sources)
    if args.explain:
        for source in sources:
            print(_explained(explain_span(loaded, source)))
        return 0
    answers = answer_sources(loaded, sources, args.decode, _width(args), args.batch_size, args.seed)
    if args.output:
        written = write_pairs(
            args.output, (Pair(s, a) for s, a in zip(sources, answers, strict=True))
        )
        note(args, f"wrote {written} {task.name} predictions to {output_name(args.output)}")
    else:
        sys.stdout.writelines(printable(" ".join(a)) + "\n" for a in answers)
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
