"""``ptrnet generate|train|eval|predict copy``: the copy task's commands (pointer-generator).

The copy task's options differ from the point tasks' (no sizes, solvers or constraints; an
``--arch`` and a ``--p-gen`` instead), so ``ptrnet COMMAND copy ...`` is parsed by the parser
built here: :func:`handles` tells :func:`ptrnet.cli.main.main` when to use it. The data format
is that of :mod:`ptrnet.text.format` (``SOURCE<TAB>TARGET`` per line).

* ``generate copy --count N --seed S [--stream K] -o FILE``: examples of the grammar.
* ``train copy --arch pointer_generator|seq2seq|pointer --out RUN``: train (one thread).
* ``eval copy FILE [--json] [--model RUN]``: exact_match, token_accuracy, oov_recall and the
  mean p_gen on copied and generated words (default model: the bundled pointer-generator).
* ``predict copy SENTENCE_OR_FILE [-o FILE] [--explain]``: headlines of one's own sentences.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ptrnet.cli.common import Parser, add_quiet_argument, note, positive_int

if TYPE_CHECKING:
    from ptrnet.text.decode import Explanation

TASK = "copy"
COMMANDS = ("generate", "train", "eval", "predict")
DRY_RUN = {"steps": 4, "val_every": 2, "val_count": 8, "hidden": 8, "embed": 4}
DRY_RUN_COUNT = 16
TRAIN_OPTIONS = ("steps", "batch_size", "lr", "embed", "hidden", "seed", "val_every", "val_count")


def handles(argv: Sequence[str]) -> bool:
    """Whether ``argv`` (without the program name) is ``COMMAND copy ...``."""
    return len(argv) >= 2 and argv[0] in COMMANDS and argv[1] == TASK


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``ptrnet COMMAND copy ...``; each command sets ``run``."""
    parser = Parser(prog="ptrnet", description=__doc__)
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=Parser
    )
    for name, helper, doc in _COMMANDS:
        sub = commands.add_parser(name, help=doc, description=doc)
        sub.add_argument("task", choices=(TASK,), metavar="TASK", help="copy")
        helper(sub)
    return parser


def _register_generate(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--count", required=True, type=positive_int, metavar="N", help="examples")
    parser.add_argument("--seed", required=True, type=int, help="random seed")
    parser.add_argument("--stream", type=int, default=0, help="sub-stream under the seed (0)")
    parser.add_argument("-o", "--output", required=True, metavar="FILE", help="written atomically")
    add_quiet_argument(parser)
    parser.set_defaults(run=_generate)


def _generate(args: argparse.Namespace) -> int:
    from ptrnet.text.format import write_pairs
    from ptrnet.text.grammar import generate_pairs

    written = write_pairs(args.output, generate_pairs(args.count, args.seed, args.stream))
    note(args, f"wrote {written} copy examples to {args.output}")
    return 0


def _register_train(parser: argparse.ArgumentParser) -> None:
    from ptrnet.text.config import ARCHS, CopyTrainConfig

    add = parser.add_argument
    defaults = CopyTrainConfig()
    add("--arch", choices=ARCHS, default=defaults.arch, help="which paths the model has")
    add("--out", required=True, metavar="RUN", help="run directory (created if missing)")
    for name in TRAIN_OPTIONS:
        value = getattr(defaults, name)
        add(f"--{name.replace('_', '-')}", type=type(value), default=value, help=f"default {value}")
    add("--threads", type=positive_int, default=1, metavar="T", help="torch threads (1)")
    add("--dry-run", action="store_true", help=f"a tiny run: {DRY_RUN}")
    add_quiet_argument(parser)
    parser.set_defaults(run=_train)


def _train(args: argparse.Namespace) -> int:
    import torch

    from ptrnet.io.errors import UsageError
    from ptrnet.text.config import CopyTrainConfig
    from ptrnet.text.train import train_copy

    torch.set_num_threads(args.threads)
    try:
        options = {k: getattr(args, k) for k in TRAIN_OPTIONS}
        config = CopyTrainConfig(args.arch, **{**options, **(DRY_RUN if args.dry_run else {})})
        os.makedirs(args.out, exist_ok=True)
    except ValueError as err:
        raise UsageError(str(err)) from None
    best = train_copy(config, args.out, log=lambda line: note(args, line))
    note(
        args,
        f"best validation exact_match {best['metrics']['exact_match']:.4f} at step {best['step']}",
    )
    return 0


def _add_model_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("--model", metavar="RUN_DIR_OR_CHECKPOINT", help="trained model (default: the bundled one)")
    add("--decode", choices=("greedy", "beam"), default="greedy", help="strategy (greedy)")
    add("--beam-width", type=positive_int, default=5, metavar="K", help="beam width (5)")
    add("--p-gen", type=_probability, metavar="P", help="override p_gen at every step (0-1)")
    add("--batch-size", type=positive_int, default=256, metavar="B", help="decoding batch")
    add("--threads", type=positive_int, default=1, metavar="T", help="torch threads (1)")
    add("--dry-run", action="store_true", help=f"only the first {DRY_RUN_COUNT} sentences")


def _probability(text: str) -> float:
    """argparse type for a number in [0, 1]."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}")
    return value


def _register_eval(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("data", metavar="FILE", help="examples, SOURCE<TAB>TARGET per line")
    _add_model_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(run=_eval)


def _eval(args: argparse.Namespace) -> int:
    import torch

    from ptrnet.text.evaluate import evaluate_pairs, load
    from ptrnet.text.format import read_pairs

    torch.set_num_threads(args.threads)
    loaded = load(args.model)
    pairs = read_pairs(args.data)[: DRY_RUN_COUNT if args.dry_run else None]
    metrics, _ = evaluate_pairs(
        loaded, pairs, args.decode, args.beam_width, args.batch_size, args.p_gen
    )
    if args.json:
        print(json.dumps(metrics))
    else:
        width = max(map(len, metrics))
        for key, value in {"task": TASK, "arch": loaded.train.get("arch"), **metrics}.items():
            shown = (
                f"{value:.4f}" if isinstance(value, float) else "n/a" if value is None else value
            )
            print(f"{key:<{width}}  {shown}")
    return 0


def _register_predict(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", metavar="SENTENCE_OR_FILE", help="a sentence, or a file of them")
    parser.add_argument("-o", "--output", metavar="FILE", help="write SOURCE<TAB>PREDICTION lines")
    parser.add_argument(
        "--explain",
        action="store_true",
        help="per word: p_gen, the vocabulary's and the attention's favourites",
    )
    _add_model_arguments(parser)
    add_quiet_argument(parser)
    parser.set_defaults(run=_predict)


def _predict(args: argparse.Namespace) -> int:
    import torch

    from ptrnet.io.errors import UsageError
    from ptrnet.text.decode import decode_sources, explain
    from ptrnet.text.evaluate import load
    from ptrnet.text.format import Pair, read_pairs, tokenize, write_pairs

    torch.set_num_threads(args.threads)
    loaded = load(args.model)
    if os.path.isfile(args.input):
        pairs = read_pairs(args.input, need_target=False)[: DRY_RUN_COUNT if args.dry_run else None]
        sources = [p.source for p in pairs]
    else:
        sources = [tokenize(args.input)]
        if not sources[0]:
            raise UsageError("the sentence has no words")
    if args.explain:
        for source in sources:
            print(_explained(explain(loaded.model, loaded.vocab, source, args.p_gen)))
        return 0
    decoded = decode_sources(
        loaded.model,
        loaded.vocab,
        sources,
        args.decode,
        args.beam_width,
        args.batch_size,
        args.p_gen,
    )
    if args.output:
        written = write_pairs(
            args.output, (Pair(s, d.words) for s, d in zip(sources, decoded, strict=True))
        )
        note(args, f"wrote {written} copy predictions to {args.output}")
    else:
        sys.stdout.writelines(" ".join(d.words) + "\n" for d in decoded)
    return 0


def _explained(explanation: Explanation) -> str:
    """The source, then per output step: the word, p_gen, its probability under the mixture,
    the vocabulary path's favourite word and the most attended source word."""
    lines = [" ".join(explanation.source)]
    for t, word in enumerate(explanation.output):
        vocab_p, vocab_i = explanation.p_vocab[t].max(0)
        attn_p, attn_i = explanation.attention[t].max(0)
        lines.append(
            f"  {word:<12} p_gen {float(explanation.p_gen[t]):.3f}"
            f"  P {float(explanation.mixture[t].max()):.3f}"
            f"  vocabulary: {explanation.vocabulary[int(vocab_i)]} ({float(vocab_p):.3f})"
            f"  source: {explanation.source[int(attn_i)]} ({float(attn_p):.3f})"
        )
    return "\n".join(lines)


_COMMANDS = (
    ("generate", _register_generate, "generate copy-task examples (SOURCE<TAB>TARGET lines)"),
    ("train", _register_train, "train a pointer-generator, seq2seq or pointer on the copy task"),
    ("eval", _register_eval, "evaluate a copy-task model on a file of examples"),
    ("predict", _register_predict, "summarise sentences with a copy-task model"),
)
