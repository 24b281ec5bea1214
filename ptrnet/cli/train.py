"""``ptrnet train``: train a Ptr-Net (or a Table 1 baseline) with teacher forcing, or fine-tune
one on the task's cost (``--objective reinforce``, TSP).

Data are generated fresh on the fly (or read from ``--data``); the best checkpoint is picked on
the task's decoded validation metric. The run directory gets ``config.json``, ``log.csv``,
``last.safetensors``, ``best.safetensors`` and ``best.json`` (see :mod:`ptrnet.training.loop`).
``--resume`` continues a run exactly; only the run length, threads, workers, precision, device
and logging intervals may be changed then, every other option is taken from the saved
configuration (a hand edit of ``config.json`` is refused, not ignored).

Ctrl-C, or SIGTERM (``kill``, ``timeout``, a batch scheduler), stops training; SIGTERM waits for
the step under way to end. Either way the run keeps its last validation's checkpoint, and the
note printed says so and gives the command that continues it; the exit status is 128 + the
signal's number (130, 143).

Under ``torchrun --nproc-per-node=K -m ptrnet train ...`` the run is data-parallel over K
processes; ``--batch-size`` stays the global batch (docs/distributed.md).

``--dry-run`` is a tiny preset (a few steps, hidden 16, batch 8, 16 validation instances, n 5-6)
written to ``--out`` or a temporary directory; options given explicitly still apply.

A sentence task (copy) trains the pointer-generator (``--arch pointer_generator``, the
default), or the same network with one path switched off (``seq2seq``, ``pointer``), on
examples drawn fresh from the task. It takes only ``--arch``, ``--out``, ``--steps``,
``--batch-size``, ``--lr``, ``--embed``, ``--hidden``, ``--seed``, ``--val-every``,
``--val-count``, ``--threads`` and ``--dry-run``, with its own defaults (3000 steps of 64
examples, Adam lr 0.002, embed 64, hidden 128, seed 1, 500 validation examples every 250 steps,
one thread); the run directory gets ``best.safetensors``, ``best.json`` and ``log.csv``.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ptrnet.cli.common import (
    add_quiet_argument,
    add_task_argument,
    count_or_off,
    positive_int,
    seed_int,
    size_range,
)
from ptrnet.cli.kinds import add_kind_arguments, finish, flag
from ptrnet.io.errors import UsageError
from ptrnet.model.config import DECODERS, ENCODERS
from ptrnet.precision import PRECISIONS
from ptrnet.runs.config import BASELINES
from ptrnet.tasks import TASKS, Task, get_point_task

if TYPE_CHECKING:
    from collections.abc import Callable

    from ptrnet.runs.config import RunConfig

NAME = "train"
EXIT_SIGTERM = 128 + signal.SIGTERM  # what a shell reports for a command SIGTERM ended
# Every registered task's architectures (each task takes those its card lists).
ARCHS = tuple(dict.fromkeys(arch for task in TASKS.values() for arch in task.archs))
DEFAULT_STEPS = 10_000
DEFAULT_HIDDEN, DRY_RUN_HIDDEN = 256, 16
DRY_RUN = {
    "sizes": "5-6",
    "batch_size": 8,
    "steps": 4,
    "val_count": 16,
    "val_every": 2,
    "log_every": 1,
}
# Options that build the ModelConfig; the pointer's beyond-the-paper ones map one-to-one.
POINTER_OPTIONS = (
    "encoder",
    "encoder_layers",
    "heads",
    "glimpses",
    "logit_clip",
    "decoder",
    "decoder_layers",
)
# --decoder heavy without --encoder / --encoder-layers: LEHD's light encoder.
HEAVY_DEFAULTS = {"encoder": "transformer", "encoder_layers": 1}
MODEL_OPTIONS = ("arch", "hidden", "layers", "init", *POINTER_OPTIONS)
# Options that map one-to-one onto TrainConfig fields (the rest build the ModelConfig).
TRAIN_OPTIONS = (
    "sizes",
    "data",
    "labels",
    "label_solver",
    "optimizer",
    "lr",
    "decay",
    "decay_every",
    "warmup",
    "clip_norm",
    "ema",
    "batch_size",
    "steps",
    "epochs",
    "epoch_size",
    "bucket",
    "augment",
    "val_count",
    "val_every",
    "val_data",
    "val_constraints",
    "train_constraints",
    "objective",
    "rl_samples",
    "label_steps",
    "shared_label_steps",
    "baseline",
    "baseline_every",
    "log_every",
    "keep_every",
    "seed",
    "threads",
    "workers",
    "precision",
    "device",
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(NAME, help="train a model", description=__doc__)
    add_task_argument(parser)
    add = parser.add_argument
    add(
        "-n",
        "--sizes",
        type=size_range,
        metavar="N|LO-HI",
        help="training sizes, e.g. 5-50 (default with --data: the file's smallest to largest n)",
    )
    add(
        "--out",
        metavar="RUN_DIR",
        help="run directory (required, except with --dry-run: default a new temporary folder)",
    )
    add("--resume", action="store_true", help="continue the run in --out exactly")
    add("--dry-run", action="store_true", help="tiny preset that finishes in seconds")
    add("--arch", choices=ARCHS, help=f"model (default: the task's first). {_archs_by_kind()}")
    add("--hidden", type=positive_int, metavar="D", help="LSTM units (default: 256)")
    add("--layers", type=positive_int, metavar="L", help="LSTM layers (default: 1)")
    add("--init", choices=("paper", "default"), help="paper = uniform(-0.08, 0.08) (default)")
    add(
        "--encoder",
        choices=ENCODERS,
        help="lstm (the paper, default) or transformer (self-attention, no positional "
        "encoding: invariant to the input order)",
    )
    add("--encoder-layers", type=positive_int, metavar="L", help="transformer layers (default: 3)")
    add("--heads", type=positive_int, metavar="H", help="transformer attention heads (default: 8)")
    add(
        "--decoder",
        choices=DECODERS,
        help="lstm (the paper, default) or heavy (LEHD: each step re-reads the remaining inputs "
        "through --decoder-layers attention layers; tsp and sort; implies --encoder transformer "
        "--encoder-layers 1 unless given)",
    )
    add("--decoder-layers", type=positive_int, metavar="L", help="heavy decoder layers (default 6)")
    add("--glimpses", type=int, metavar="G", help="pointer glimpses (Bello et al.; default 0)")
    add("--logit-clip", type=float, metavar="C", help="pointer logits C tanh(u) (default 0: off)")
    add("--optimizer", choices=("sgd", "adam"), help="sgd: lr 1.0; adam: lr 1e-3 (default)")
    add("--lr", type=float, metavar="X", help="learning rate (default: per optimizer)")
    add(
        "--decay",
        type=float,
        help="lr factor per --decay-every steps (default: sgd 1.0, adam 0.96)",
    )
    add("--decay-every", type=positive_int, metavar="N", help="default: 1000")
    add(
        "--warmup",
        type=count_or_off,
        metavar="N",
        help="raise the lr linearly over the first N steps (for fine-tunes; default: off)",
    )
    add("--clip-norm", type=float, metavar="X", help="gradient L2 norm limit (default: 2.0)")
    add(
        "--ema",
        type=float,
        metavar="D",
        help="validate and keep a moving average of the weights, D per step (e.g. 0.999; "
        "default 0: off, the paper)",
    )
    add("--batch-size", type=positive_int, metavar="B", help="default: 128")
    length = parser.add_mutually_exclusive_group()
    length.add_argument("--steps", type=positive_int, help=f"default: {DEFAULT_STEPS}")
    length.add_argument(
        "--epochs", type=positive_int, help="passes over --data / --epoch-size (default: --steps)"
    )
    add(
        "--epoch-size",
        type=positive_int,
        metavar="N",
        help="generated instances per epoch (default: 1000000)",
    )
    add("--data", metavar="FILE", help="paper-format training file (default: generate fresh data)")
    add(
        "--val-data",
        metavar="FILE",
        help="validate on this paper-format file (labels: the file's, else the exact solver's) "
        "(default: --val-count generated instances)",
    )
    add("--labels", choices=("solve", "file"), help="targets: task.solve (default) or the file's")
    add(
        "--label-solver",
        metavar="SOLVER",
        help="solver for the training labels (default: the task's; e.g. tsp local, near-exact "
        "and 20-50x faster than exact at n = 20); validation keeps the default",
    )
    add("--bucket", action="store_true", default=None, help="batch similar sizes together")
    add(
        "--augment",
        action="store_true",
        default=None,
        help="each epoch, shuffle every instance's input order and reflect it in the unit square "
        "(planar tasks); labels are relabelled, not solved again",
    )
    add("--val-count", type=positive_int, metavar="N", help="validation instances (default 1000)")
    add(
        "--val-every",
        type=positive_int,
        metavar="N",
        help="steps between validations (default: 500)",
    )
    add("--val-constraints", choices=("none", "task"), help="default: the task's")
    add(
        "--train-constraints",
        choices=("none", "task"),
        help="none (paper, default): loss softmax over all inputs; task: over allowed ones",
    )
    add(
        "--objective",
        choices=("likelihood", "reinforce", "dagger"),
        help="likelihood (paper, default): imitate the labels; reinforce: policy gradient on "
        "the task's cost (tsp: tour length), no labels; dagger (tsp): imitate the solver "
        "from the model's own greedy prefixes; both for fine-tuning with --init-from",
    )
    add(
        "--label-steps",
        type=count_or_off,
        metavar="K",
        help="heavy decoder, likelihood or dagger: teacher-force only K random steps of each "
        "label per training step (LEHD-style; default: every step)",
    )
    add(
        "--shared-label-steps",
        action="store_true",
        default=None,
        help="with --label-steps K: the whole batch takes the same K distances from the end of "
        "its labels, so each runs as one attention pass (faster; best with --bucket)",
    )
    add(
        "--rl-samples",
        type=positive_int,
        metavar="K",
        help="reinforce: outputs sampled per instance, each judged against the others (default: 8)",
    )
    add(
        "--baseline",
        choices=BASELINES,
        help="reinforce: samples (the other samples' mean, default), rollout (a frozen greedy "
        "copy), ema (moving average of costs) or pomo (a sample from every start)",
    )
    add(
        "--baseline-every",
        type=positive_int,
        metavar="N",
        help="reinforce, rollout: steps between tests of the policy (default: 100)",
    )
    add("--log-every", type=positive_int, metavar="N", help="steps between log rows (default: 50)")
    add(
        "--keep-every",
        type=count_or_off,
        metavar="N",
        help="also keep the weights of every validation at a multiple of N steps, as "
        "RUN_DIR/kept/step-STEP.safetensors (a multiple of --val-every; default: off)",
    )
    add(
        "--init-from",
        metavar="MODEL",
        help="start from these weights: a run directory, checkpoint file or 'bundled' "
        "(default: a fresh initialisation, --init)",
    )
    add("--seed", type=seed_int, help="seed for init and data (default: 0)")
    add(
        "--threads",
        type=positive_int,
        metavar="T",
        help="torch threads (default: the idle cores left by --workers)",
    )
    add(
        "--workers",
        type=int,
        metavar="W",
        help="data worker processes (default: one per 4 idle cores; 0 = label between steps)",
    )
    add(
        "--precision",
        choices=PRECISIONS,
        help="auto (default): bf16 autocast where the hardware has native bf16, else fp16 with "
        "loss scaling on CUDA and fp32 on the CPU",
    )
    add("--device", help="auto (default: a CUDA GPU if torch sees one), cpu, cuda or cuda:N")
    add_quiet_argument(parser)
    add_kind_arguments(NAME, parser)
    finish(parser, NAME, run)


def _archs_by_kind() -> str:
    """The architectures each input kind's tasks take, in words."""
    kinds = {task.input_kind: task.archs for task in TASKS.values()}
    return "; ".join(f"{kind}: {', '.join(archs)}" for kind, archs in kinds.items())


def run(args: argparse.Namespace, task: Task) -> int:
    from ptrnet.training.loop import RunDirError, TrainingStopped, train

    if args.out is None and (args.resume or not args.dry_run):
        raise UsageError("--out RUN_DIR is required")
    try:
        config = resumed_config(args, args.out) if args.resume else fresh_config(args)
    except ValueError as err:  # an impossible option value (the config validates them)
        raise UsageError(str(err)) from None
    out = args.out or tempfile.mkdtemp(prefix="ptrnet-dry-run-")
    progress = not args.quiet and sys.stderr.isatty()
    try:
        with sigterm_requests() as sigterm:
            result = train(config, out, resume=args.resume, progress=progress, should_stop=sigterm)
    except RunDirError as err:
        raise UsageError(str(err)) from None
    except TrainingStopped as stopped:
        if stopped.rank == 0:
            print(interrupted_note(config.train.task, out, "SIGTERM"), file=sys.stderr)
        return EXIT_SIGTERM
    except KeyboardInterrupt:
        print(interrupted_note(config.train.task, out, "Ctrl-C"), file=sys.stderr)
        raise
    if result.rank != 0:  # under torchrun, rank 0 alone reports
        return 0
    best = result.best
    print(
        f"ptrnet: {config.train.task}: {result.step} steps, "
        f"{result.examples_per_s:.0f} examples/s; best {best.get('metric')} "
        f"{best.get('value')} at step {best.get('step')}; run in {out}"
    )
    return 0


@contextmanager
def sigterm_requests() -> Iterator[Callable[[], bool]]:
    """Within the block SIGTERM no longer ends the process: it sets a flag, and the function
    yielded says whether it is set (training's ``should_stop``). The previous handlers are
    back after the block. Outside the main thread, where Python sets no handlers, SIGTERM
    keeps its handler and the flag stays down.

    SIGTERM sent to the whole process group (``timeout``, Slurm) also ends the data workers,
    and torch's SIGCHLD handler would then raise about them wherever the main process is; so
    the first SIGTERM sets SIGCHLD's default too, and training's loop ends at its next step or
    when torch finds the batch it waits for lost.
    """
    asked, swapped = threading.Event(), []

    def request(signum: int, frame: object) -> None:
        if not asked.is_set() and hasattr(signal, "SIGCHLD"):
            swapped.append(signal.signal(signal.SIGCHLD, signal.SIG_DFL))
        asked.set()

    if threading.current_thread() is not threading.main_thread():
        yield asked.is_set
        return
    previous = signal.signal(signal.SIGTERM, request)
    try:
        yield asked.is_set
    finally:
        signal.signal(signal.SIGTERM, _settable(previous))
        for handler in swapped:
            signal.signal(signal.SIGCHLD, _settable(handler))


def _settable(handler: object) -> object:
    """``handler`` as ``signal.signal`` takes it: None (one not set from Python, which cannot
    be put back) becomes the default."""
    return signal.SIG_DFL if handler is None else handler


def interrupted_note(task: str, out: str, cause: str = "Ctrl-C") -> str:
    """What a run interrupted by ``cause`` (``Ctrl-C``, ``SIGTERM``) keeps, and how to
    continue it."""
    from ptrnet.runs import LAST

    if not os.path.exists(os.path.join(out, LAST)):
        return (
            f"ptrnet: interrupted ({cause}) before the first validation: nothing of {out} to resume"
        )
    return (
        f"ptrnet: interrupted ({cause}); {out} keeps its checkpoint of the last validation "
        f"(ptrnet train {task} --resume --out {out} continues from it)"
    )


def explicit_options(args: argparse.Namespace) -> dict[str, object]:
    """The TrainConfig fields given on the command line."""
    options = {k: getattr(args, k) for k in TRAIN_OPTIONS if getattr(args, k) is not None}
    if "sizes" in options:
        options["sizes"] = str(options["sizes"])
    return options


def fresh_config(args: argparse.Namespace) -> RunConfig:
    """A new run's configuration: preset (``--dry-run``) < explicit options."""
    from ptrnet.model import ModelConfig
    from ptrnet.runs.config import RunConfig, TrainConfig
    from ptrnet.tasks import SizeRange
    from ptrnet.train_api import file_sizes

    task = get_point_task(args.task)
    preset, explicit = dict(DRY_RUN if args.dry_run else {}), explicit_options(args)
    if "data" in explicit:
        preset.pop("sizes", None)  # a file's own sizes, not the preset's
    options = {**preset, **explicit}
    if "sizes" not in options:
        if "data" not in options:
            raise UsageError("-n/--sizes is required without --data, e.g. -n 5-50")
        options["sizes"] = str(file_sizes(task, options["data"]))
    if "epochs" in options:
        options.pop("steps", None)
    options.setdefault("steps", None if "epochs" in options else DEFAULT_STEPS)
    if args.init_from is not None:
        config = warm_start_config(args, options)
        check_used(config, set(explicit))
        return config
    hidden = args.hidden or (DRY_RUN_HIDDEN if args.dry_run else DEFAULT_HIDDEN)
    kind = task.check_arch(args.arch)
    max_n = None if kind == "pointer" else SizeRange.parse(options["sizes"]).hi
    pointer = {k: getattr(args, k) for k in POINTER_OPTIONS if getattr(args, k) is not None}
    if pointer.get("decoder") == "heavy":
        pointer = {**HEAVY_DEFAULTS, **pointer}
    model = ModelConfig(
        kind=kind,
        input_dim=task.dim,
        hidden=hidden,
        layers=args.layers or 1,
        init=args.init or "paper",
        max_n=max_n,
        **pointer,
    )
    config = RunConfig(model, TrainConfig(task=args.task, **options))
    check_used(config, {*explicit, *pointer})
    return config


def check_used(config: RunConfig, given: set[str]) -> None:
    """Raise UsageError for an option given on the command line that this run would not read
    (it would be saved in config.json and ignored), naming the option it needs."""
    train, model = config.train, config.model
    unused = {
        "rl_samples": (train.objective != "reinforce", "--objective reinforce"),
        "baseline": (train.objective != "reinforce", "--objective reinforce"),
        "baseline_beta": (train.objective != "reinforce", "--objective reinforce"),
        "baseline_every": (train.objective != "reinforce", "--objective reinforce"),
        "baseline_count": (train.objective != "reinforce", "--objective reinforce"),
        "label_solver": (train.objective == "reinforce", "labels (not --objective reinforce)"),
        "val_count": (train.val_data is not None, "generated validation (no --val-data)"),
        "epoch_size": (train.data is not None, "generated data (no --data)"),
        "encoder_layers": (model.encoder != "transformer", "--encoder transformer"),
        "heads": (
            model.encoder != "transformer" and model.decoder != "heavy",
            "--encoder transformer or --decoder heavy",
        ),
        "decoder_layers": (model.decoder != "heavy", "--decoder heavy"),
    }
    for name in sorted(given & unused.keys()):
        ignored, needs = unused[name]
        if ignored:
            raise UsageError(f"{flag(name)} applies only with {needs}; this run would ignore it")


def warm_start_config(args: argparse.Namespace, options: dict[str, object]) -> RunConfig:
    """A new run that starts from ``--init-from``'s weights, so its model configuration."""
    from ptrnet.inference import resolve_checkpoint
    from ptrnet.runs.checkpoint import load_checkpoint
    from ptrnet.runs.config import RunConfig, TrainConfig

    name = None if args.init_from == "bundled" else args.init_from
    path = os.path.abspath(resolve_checkpoint(name, args.task))
    saved = load_checkpoint(path).config
    if saved.train.task != args.task:
        raise UsageError(f"--init-from {path} was trained on {saved.train.task}, not {args.task}")
    model_changes = [a for a in MODEL_OPTIONS if getattr(args, a) is not None]
    if model_changes:
        raise UsageError(
            f"--init-from takes the model from {path}; drop {', '.join(model_changes)}"
        )
    options["init_from"] = path
    return RunConfig(saved.model, TrainConfig(task=args.task, **options))


def resumed_config(args: argparse.Namespace, out: str) -> RunConfig:
    """The saved configuration of the run in ``out`` with the explicit resumable changes;
    options repeated with their saved values are no change."""
    from ptrnet.inference import resolve_checkpoint
    from ptrnet.runs.checkpoint import load_checkpoint
    from ptrnet.runs.config import resume_config
    from ptrnet.training.loop import LAST

    path = os.path.join(out, LAST)
    if not os.path.exists(path):
        raise UsageError(f"nothing to resume: {path} does not exist")
    saved = load_checkpoint(path).config
    if saved.train.task != args.task:
        raise UsageError(f"the run in {out} trains {saved.train.task}, not {args.task}")
    saved_model = {a: getattr(saved.model, "kind" if a == "arch" else a) for a in MODEL_OPTIONS}
    given = {a: getattr(args, a) for a in saved_model if getattr(args, a) is not None}
    if args.init_from is not None:  # the same source resolves to the same absolute path
        name = None if args.init_from == "bundled" else args.init_from
        saved_model["init_from"] = saved.train.init_from
        given["init_from"] = os.path.abspath(resolve_checkpoint(name, args.task))
    changes = [
        f"--{a.replace('_', '-')} from {saved_model[a]} to {v}"
        for a, v in given.items()
        if saved_model[a] != v
    ]
    if changes:
        raise UsageError(f"cannot change {'; '.join(changes)} when resuming")
    return resume_config(saved, explicit_options(args))
