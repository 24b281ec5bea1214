"""The front end of the sentence tasks (``copy``): what ``ptrnet generate|train|eval|predict
TASK`` run when the task's inputs are sentences (:mod:`ptrnet.cli.kinds`). Data is the text
format of :mod:`ptrnet.text.format` (``SOURCE<TAB>TARGET`` per line).

* ``generate TASK --count N [--seed S] [--stream K] -o FILE``: the task's examples.
* ``train TASK [--arch pointer_generator|seq2seq|pointer] --out RUN [--resume]``: train
  (:mod:`ptrnet.cli.sentence_train`).
* ``eval TASK FILE [--json] [--model RUN]``: exact_match, token_accuracy, oov_recall and the
  mean p_gen on copied and generated words (default model: the task's bundled one).
* ``predict TASK SENTENCE_OR_FILE [-o FILE] [--explain] [--text]``: outputs for one's own
  sentences. The argument is a file when that path exists (a regular file, ``/dev/stdin``, a
  pipe; a directory is refused); when it does not, it is a sentence, unless it looks like a
  file name (:func:`looks_like_path`), which is an error ``NAME: no such file``. With
  ``--text`` it is a sentence, always.

Inputs are bounded as in :mod:`ptrnet.io.limits`: tokens per line and per file, and the beam
width (:data:`~ptrnet.io.limits.MAX_SENTENCE_BEAM_WIDTH`); decoding batches hold a bounded
number of tokens. Words are written with their control characters escaped
(:func:`ptrnet.text.format.printable`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ptrnet.cli.common import DRY_RUN_COUNT, note, output_name, positive_int, set_threads
from ptrnet.cli.decode_args import decode_options, flagged
from ptrnet.cli.sentence_train import TRAIN_OPTIONS, train
from ptrnet.io.errors import InputError, UsageError
from ptrnet.io.limits import MAX_LINE_TOKENS
from ptrnet.quoting import quote

if TYPE_CHECKING:
    from ptrnet.decoding.options import DecodeOptions
    from ptrnet.tasks import SentenceTask
    from ptrnet.text.checkpoint import CopyModel
    from ptrnet.text.decode import Explanation

DECODE_OPTIONS = (
    "model", "decode", "beam_width", "samples", "temperature", "seed", "p_gen", "batch_size",
    "threads", "device",
)  # fmt: skip
#: A data file's extension after a name: a dot and 2 to 5 letters of one case (.txt, .tsv,
#: .json, .text, .TXT). Not ``e.g``, ``U.S``, ``v1.2`` or ``Mr.Smith``: words, not files.
EXTENSION = re.compile(r"[^./]\.([a-z]{2,5}|[A-Z]{2,5})$")
#: The starts of a path, whatever follows them.
PATH_STARTS = ("/", "./", "../", "~/")
STDIN = "-"  # predict's INPUT for standard input, as -o - is standard output
#: The options of each command that sentence tasks take (argparse ``dest``).
OPTIONS = {
    "generate": ("count", "seed", "stream", "output", "quiet"),
    "train": ("arch", "out", "resume", "dry_run", "threads", "quiet", *TRAIN_OPTIONS),
    "eval": (*DECODE_OPTIONS, "dry_run", "json", "quiet"),
    "predict": (*DECODE_OPTIONS, "dry_run", "output", "explain", "text", "quiet"),
}
#: The options only sentence tasks take.
EXTRA = {
    "generate": (),
    "train": ("embed",),
    "eval": ("p_gen",),
    "predict": ("p_gen", "explain", "text"),
}


def add_arguments(command: str, parser: argparse.ArgumentParser) -> None:
    """Add the options of ``command`` that only sentence tasks take (:data:`EXTRA`)."""
    add = parser.add_argument
    if command == "train":
        add(
            "--embed",
            type=positive_int,
            metavar="E",
            help="sentence tasks: word vector size (default: 64; span: 32)",
        )
    if command in ("eval", "predict"):
        add(
            "--p-gen",
            type=_probability,
            metavar="P",
            help="sentence tasks: override p_gen at every step, 0-1 (default: the model's own)",
        )
    if command == "predict":
        add(
            "--explain",
            action="store_true",
            help="sentence tasks: per word, p_gen and the vocabulary's and attention's favourites",
        )
        add(
            "--text",
            action="store_true",
            help="sentence tasks: INPUT is a sentence, even one that names a file or looks like "
            "a file name",
        )


def _probability(text: str) -> float:
    """argparse type for a number in [0, 1]."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {quote(text)}")
    return value


def generate(args: argparse.Namespace, task: SentenceTask) -> int:
    from ptrnet.text.format import write_pairs

    stream = task.default_stream if args.stream is None else args.stream
    pairs = task.generate_pairs(args.count, args.seed, stream)
    written = write_pairs(args.output, pairs)
    note(args, f"wrote {written} {task.name} examples to {output_name(args.output)}")
    return 0


def _load(args: argparse.Namespace, task: SentenceTask) -> tuple[CopyModel, DecodeOptions]:
    """The model of ``--model`` on the CPU, with ``--threads`` set, and the decoding options
    (:func:`check_decoding`)."""
    from ptrnet.text.evaluate import load

    options = check_decoding(args, task)
    return load(args.model, task.name), options


def check_decoding(args: argparse.Namespace, task: SentenceTask) -> DecodeOptions:
    """The decoding options of the flags (:func:`ptrnet.cli.decode_args.decode_options`, the
    point tasks' one check), after refusing what the sentence decoders do not do (another
    device; more beams or samples than :data:`~ptrnet.io.limits.MAX_SENTENCE_BEAM_WIDTH`:
    :func:`~ptrnet.text.decode.check_sentence_options`); then set ``--threads``."""
    from ptrnet.decoding.options import DecodeOptionError
    from ptrnet.text.decode import check_sentence_options

    if args.device not in ("auto", "cpu"):
        raise UsageError(f"--device {args.device}: task {task.name} decodes on the CPU only")
    options = decode_options(args)
    try:
        check_sentence_options(options, f"task {task.name}")
    except DecodeOptionError as err:
        raise flagged(args, err) from None
    set_threads(args.threads)
    return options


def evaluate(args: argparse.Namespace, task: SentenceTask) -> int:
    from ptrnet.text.evaluate import evaluate_pairs
    from ptrnet.text.format import read_pairs

    if len(args.data) != 1:
        raise UsageError("give one DATA file of SOURCE<TAB>TARGET lines")
    loaded, options = _load(args, task)
    pairs = read_pairs(args.data[0])[: DRY_RUN_COUNT if args.dry_run else None]
    metrics, _ = evaluate_pairs(loaded, pairs, options, args.p_gen)
    show_metrics(args, task, loaded.train.get("arch"), metrics)
    return 0


def show_metrics(
    args: argparse.Namespace, task: SentenceTask, arch: object, metrics: dict[str, Any]
) -> None:
    """Print ``eval``'s metrics: one JSON object (fractions) with ``--json``, else a table
    (the task and ``arch`` first; rates, ``task.rate_metrics``, in percent to 2 decimals as
    the point tasks' tables show them, other floats to 4 places, None as ``n/a``)."""
    from ptrnet.evaluation.score import percent

    if args.json:
        print(json.dumps(metrics))
        return
    width = max(map(len, metrics))
    for key, value in {"task": task.name, "arch": arch, **metrics}.items():
        if value is None:
            shown = "n/a"
        elif key in task.rate_metrics:
            shown = percent(value, 2)
        else:
            shown = f"{value:.4f}" if isinstance(value, float) else value
        print(f"{key:<{width}}  {shown}")


def predict_sources(args: argparse.Namespace) -> tuple[str | None, list[tuple[str, ...]]]:
    """``predict``'s input: the file's sources (the first :data:`DRY_RUN_COUNT` with
    ``--dry-run``) and its path, or with ``--text`` the one sentence typed (path None)."""
    from ptrnet.text.format import read_pairs

    path = None if args.text else input_file(args.input)
    if path is None:
        return None, [sentence_tokens(args.input)]
    pairs = read_pairs(path, need_target=False)[: DRY_RUN_COUNT if args.dry_run else None]
    return path, [p.source for p in pairs]


def predict(args: argparse.Namespace, task: SentenceTask) -> int:
    from ptrnet.text.decode import decode_sources, explain

    loaded, options = _load(args, task)
    path, sources = predict_sources(args)
    if args.explain:
        for source in sources:
            print(_explained(explain(loaded.model, loaded.vocab, source, args.p_gen)))
        return 0
    decoded = decode_sources(loaded.model, loaded.vocab, sources, options, args.p_gen)
    write_predictions(args, task, sources, [d.words for d in decoded])
    return 0


def write_predictions(
    args: argparse.Namespace,
    task: SentenceTask,
    sources: Sequence[tuple[str, ...]],
    outputs: Sequence[Sequence[str]],
) -> None:
    """``predict``'s outputs: with ``-o FILE``, ``SOURCE<TAB>OUTPUT`` lines (and a note of how
    many), else each output's words on a line of standard output (control characters escaped:
    :func:`~ptrnet.text.format.printable`)."""
    from ptrnet.text.format import Pair, printable, write_pairs

    if args.output:
        pairs = (Pair(s, tuple(o)) for s, o in zip(sources, outputs, strict=True))
        written = write_pairs(args.output, pairs)
        note(args, f"wrote {written} {task.name} predictions to {output_name(args.output)}")
    else:
        sys.stdout.writelines(printable(" ".join(o)) + "\n" for o in outputs)


def sentence_tokens(text: str) -> tuple[str, ...]:
    """The tokens of ``predict``'s sentence argument.

    Raises:
        UsageError: no words, or more than :data:`~ptrnet.io.limits.MAX_LINE_TOKENS`.
    """
    from ptrnet.text.format import tokenize

    tokens = tokenize(text)
    if not tokens:
        raise UsageError("the sentence has no words")
    if len(tokens) > MAX_LINE_TOKENS:
        raise UsageError(
            f"the sentence has {len(tokens):,} tokens, over the limit of {MAX_LINE_TOKENS:,}"
        )
    return tokens


def input_file(text: str) -> str | None:
    """The file that ``predict``'s INPUT names, or None when INPUT is a sentence.

    ``-`` is standard input (``/dev/stdin``). INPUT names a file when that path exists, whatever
    it is (a regular file, ``/dev/stdin``, a pipe; reading a directory fails with ``NAME: cannot
    read``). A path that does not exist is a sentence, unless it :func:`looks_like_path`
    (``predict --text`` skips this function: INPUT is then a sentence, always).

    Raises:
        InputError: ``NAME: no such file ...``, for INPUT that looks like a path but is not one;
            the message names ``--text``.
    """
    if text == STDIN:
        return "/dev/stdin"
    if os.path.lexists(text):
        return text
    if looks_like_path(text):
        raise InputError(text, None, "no such file (for a sentence, pass --text)")
    return None


def looks_like_path(text: str) -> bool:
    """Whether ``text``, a path that does not exist, reads as a file name rather than a
    sentence: it starts as a path does (``/``, ``./``, ``../``, ``~/``), or it is one word
    that ends in a data file's extension (:data:`EXTENSION`: ``sentss.txt``, ``data/s.tsv``)
    or names an entry of a directory that exists (``data/test`` when ``data/`` is one).
    ``24/7``, ``and/or``, ``e.g.``, ``v1.2`` and ``U.S`` are words."""
    if text.startswith(PATH_STARTS):
        return True
    if len(text.split()) != 1:
        return False
    if EXTENSION.search(text):
        return True
    parent = os.path.dirname(text)
    return bool(parent) and os.path.isdir(parent)


def _explained(explanation: Explanation) -> str:
    """The source, then per output step: the word, p_gen, its probability under the mixture
    (the word's own, which is not the mixture's largest when decoding ruled that word out, e.g.
    ``<pad>``), the vocabulary path's favourite word and the most attended source word; each
    line :func:`~ptrnet.text.format.printable`."""
    from ptrnet.text.format import printable

    lines = [" ".join(explanation.source)]
    for t, word in enumerate(explanation.output):
        vocab_p, vocab_i = explanation.p_vocab[t].max(0)
        attn_p, attn_i = explanation.attention[t].max(0)
        chosen = explanation.mixture[t, explanation.vocabulary.index(word)]
        lines.append(
            f"  {word:<12} p_gen {float(explanation.p_gen[t]):.3f}"
            f"  P {float(chosen):.3f}"
            f"  vocabulary: {explanation.vocabulary[int(vocab_i)]} ({float(vocab_p):.3f})"
            f"  source: {explanation.source[int(attn_i)]} ({float(attn_p):.3f})"
        )
    return "\n".join(printable(line) for line in lines)


#: What each generic command runs for a sentence task.
RUNS = {"generate": generate, "train": train, "eval": evaluate, "predict": predict}
