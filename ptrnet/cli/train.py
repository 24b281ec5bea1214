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
examples drawn fresh from the task, in the same loop and run directory, ``--resume`` and stops
included. It takes ``--arch``, ``--out``, ``--resume``, ``--steps``, ``--batch-size``, ``--lr``,
``--clip-norm``, ``--embed``, ``--hidden``, ``--seed``, ``--val-every``, ``--val-count``,
``--log-every``, ``--keep-every``, ``--threads`` and ``--dry-run``, with its own defaults (3000
steps of 64 examples, Adam lr 0.002, embed 64, hidden 128, seed 1, 500 validation examples
every 250 steps, one thread). The span task (extractive QA) takes the same options for
``--arch span_pointer`` (the default) or ``classifier``, with its defaults (400 steps of 64,
embed 32, hidden 40, 200 validation examples every 50 steps).

``induction`` is not a task but the induction-head lesson (docs/induction.md): a two-layer
attention-only Transformer trained on sequences whose second half repeats the first. It takes
only ``--out``, ``--steps``, ``--seed``, ``--vocab``, ``--length``, ``--threads``,
``--dry-run`` and ``--quiet`` (defaults: 2000 steps, V 256, L 16, seed 0, one thread); the
run directory gets ``config.json``, ``log.csv``, ``weights.safetensors`` and
``measurements.json``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from dataclasses import fields

from ptrnet.cli.common import (
    add_quiet_argument,
    add_task_argument,
    count_or_off,
    positive_int,
    seed_int,
    size_range,
    threads_int,
)
from ptrnet.cli.inputs import capacity_text
from ptrnet.cli.interrupts import run_stoppable
from ptrnet.cli.kinds import add_kind_arguments, finish
from ptrnet.cli.train_config import fresh_config, resumed_config
from ptrnet.compute.precision import PRECISIONS
from ptrnet.decoding.options import CONSTRAINTS
from ptrnet.io.errors import UsageError
from ptrnet.model.config import DECODERS, ENCODERS, INITS, ModelConfig
from ptrnet.model.features import FEATURES
from ptrnet.runs.config import (
    BASELINES,
    DEFAULT_DECAY,
    DEFAULT_LR,
    DEFAULT_STEPS,
    LABELS,
    OBJECTIVES,
    OPENINGS,
    OPTIMIZERS,
    TrainConfig,
)
from ptrnet.tasks import TASKS, Task, get_task

NAME = "train"
DRY_RUN_PREFIX = "ptrnet-dry-run-"
# Every registered task's architectures (each task takes those its card lists).
ARCHS = tuple(dict.fromkeys(arch for task in TASKS.values() for arch in task.archs))
# The default of each option, as the configurations that apply it hold it: what --help states.
DEFAULT = {field.name: field.default for field in (*fields(ModelConfig), *fields(TrainConfig))}


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
    add(
        "--hidden",
        type=positive_int,
        metavar="D",
        help=f"LSTM units (default: {DEFAULT['hidden']})",
    )
    add(
        "--layers",
        type=positive_int,
        metavar="L",
        help=f"LSTM layers (default: {DEFAULT['layers']})",
    )
    add(
        "--init",
        choices=INITS,
        help=f"paper = uniform(-0.08, 0.08), default = PyTorch's (default: {DEFAULT['init']})",
    )
    add(
        "--encoder",
        choices=ENCODERS,
        help="lstm (the paper) or transformer (self-attention, no positional encoding: "
        f"invariant to the input order) (default: {DEFAULT['encoder']})",
    )
    add(
        "--encoder-layers",
        type=positive_int,
        metavar="L",
        help=f"transformer layers (default: {DEFAULT['encoder_layers']})",
    )
    add(
        "--heads",
        type=positive_int,
        metavar="H",
        help=f"transformer attention heads (default: {DEFAULT['heads']})",
    )
    add(
        "--decoder",
        choices=DECODERS,
        help="lstm (the paper), heavy (LEHD: each step re-reads the remaining inputs "
        "through --decoder-layers attention layers; implies --encoder transformer "
        "--encoder-layers 1 unless given) or light (Kool et al.: one context query and glimpse "
        "per step over keys computed once; implies --encoder transformer --logit-clip 10 unless "
        "given); heavy and light: tsp and sort; route (the light decoder for vehicle routing: "
        "the depot revisited, the load left in its context; implies the same): cvrp "
        f"(default: {DEFAULT['decoder']})",
    )
    add(
        "--decoder-layers",
        type=positive_int,
        metavar="L",
        help=f"heavy decoder layers (default: {DEFAULT['decoder_layers']})",
    )
    add(
        "--glimpses",
        type=int,
        metavar="G",
        help=f"pointer glimpses (Bello et al.; default: {DEFAULT['glimpses']})",
    )
    add(
        "--logit-clip",
        type=float,
        metavar="C",
        help=f"pointer logits C tanh(u), 0: off (default: {DEFAULT['logit_clip']:g})",
    )
    add(
        "--capacity",
        type=capacity_text,
        metavar="C|P%|P%-Q%",
        help="knapsack: the capacity every generated instance states (training and validation), "
        "a number, a share of its total weight (30%%) or a range of shares drawn per instance "
        "(10%%-50%%); implies --features capacity (default: none stated, Bello et al.'s "
        "min(n/4, 25))",
    )
    add(
        "--features",
        choices=FEATURES,
        help="what the network reads of each input: raw, capacity (knapsack whose instances "
        "state a capacity, --data from generate --capacity: weight / capacity and value / the "
        "largest value) or demand (a routing instance's rows: x, y, demand / capacity, a depot "
        "flag); default: the task's own (demand for routing, else raw)",
    )
    add(
        "--optimizer",
        choices=OPTIMIZERS,
        help="; ".join(f"{name}: lr {lr:g}" for name, lr in DEFAULT_LR.items())
        + f" (default: {DEFAULT['optimizer']})",
    )
    add("--lr", type=float, metavar="X", help="learning rate (default: per optimizer)")
    add(
        "--decay",
        type=float,
        help="lr factor per --decay-every steps (default: "
        + ", ".join(f"{name} {decay:g}" for name, decay in DEFAULT_DECAY.items())
        + ")",
    )
    add("--decay-every", type=positive_int, metavar="N", help=f"default: {DEFAULT['decay_every']}")
    add(
        "--warmup",
        type=count_or_off,
        metavar="N",
        help="raise the lr linearly over the first N steps (for fine-tunes; default: off)",
    )
    add(
        "--clip-norm",
        type=float,
        metavar="X",
        help=f"gradient L2 norm limit (default: {DEFAULT['clip_norm']})",
    )
    add(
        "--ema",
        type=float,
        metavar="D",
        help="validate and keep a moving average of the weights, D per step (e.g. 0.999; "
        f"0: off, the paper; default: {DEFAULT['ema']:g})",
    )
    add("--batch-size", type=positive_int, metavar="B", help=f"default: {DEFAULT['batch_size']}")
    length = parser.add_mutually_exclusive_group()
    length.add_argument("--steps", type=positive_int, help=f"default: {DEFAULT_STEPS}")
    length.add_argument(
        "--epochs", type=positive_int, help="passes over --data / --epoch-size (default: --steps)"
    )
    add(
        "--epoch-size",
        type=positive_int,
        metavar="N",
        help=f"generated instances per epoch (default: {DEFAULT['epoch_size']})",
    )
    add(
        "--data",
        metavar="FILE",
        help="training instances, any layout predict reads (default: generate fresh data)",
    )
    add(
        "--val-data",
        metavar="FILE",
        help="validate on these instances, any layout (labels: the file's, else the solver's) "
        "(default: --val-count generated instances)",
    )
    add(
        "--labels",
        choices=LABELS,
        help=f"targets: task.solve (solve) or the file's (default: {DEFAULT['labels']})",
    )
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
        "(planar tasks; cvrp: the depot kept first, x and y reflected); labels are relabelled, "
        "not solved again",
    )
    add(
        "--val-count",
        type=positive_int,
        metavar="N",
        help=f"validation instances (default: {DEFAULT['val_count']})",
    )
    add(
        "--val-every",
        type=positive_int,
        metavar="N",
        help=f"steps between validations (default: {DEFAULT['val_every']})",
    )
    add("--val-constraints", choices=CONSTRAINTS, help="default: the task's")
    add(
        "--train-constraints",
        choices=CONSTRAINTS,
        help="none (paper): loss softmax over all inputs; task: over allowed ones (default: "
        f"{DEFAULT['train_constraints']})",
    )
    add(
        "--objective",
        choices=OBJECTIVES,
        help="likelihood (paper): imitate the labels; reinforce: policy gradient on the task's "
        "cost (tsp: tour length), no labels; dagger (tsp): imitate the solver from the model's "
        "own greedy prefixes; both for fine-tuning with --init-from (default: "
        f"{DEFAULT['objective']})",
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
        help="reinforce: outputs sampled per instance, each judged against the others "
        f"(default: {DEFAULT['rl_samples']})",
    )
    add(
        "--baseline",
        choices=BASELINES,
        help="reinforce: samples (the other samples' mean), rollout (a frozen greedy copy), ema "
        "(moving average of costs) or pomo (a sample from every start) (default: "
        f"{DEFAULT['baseline']})",
    )
    add(
        "--learn-opening",
        action="store_true",
        default=None,
        help="reinforce, pomo on cvrp: also train the first customer a single greedy run "
        "chooses (POMO forces it), on the expected cost over the network's own first choice",
    )
    add(
        "--opening-rollouts",
        choices=OPENINGS,
        help="with --learn-opening: train the first choice on the sampled runs' costs or on a "
        f"greedy run's from each start (one more decoding; default: {DEFAULT['opening_rollouts']})",
    )
    add(
        "--baseline-every",
        type=positive_int,
        metavar="N",
        help="reinforce, rollout: steps between tests of the policy (default: "
        f"{DEFAULT['baseline_every']})",
    )
    add(
        "--log-every",
        type=positive_int,
        metavar="N",
        help=f"steps between log rows (default: {DEFAULT['log_every']})",
    )
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
    add("--seed", type=seed_int, help=f"seed for init and data (default: {DEFAULT['seed']})")
    add(
        "--threads",
        type=threads_int,
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
        help="auto: bf16 autocast where the hardware has native bf16 (on a CPU: LSTM models "
        "only; attention is faster in fp32 there), else fp16 with loss scaling on CUDA and "
        f"fp32 on the CPU (default: {DEFAULT['precision']})",
    )
    add(
        "--device",
        help="auto (a CUDA GPU if torch sees one), cpu, cuda or cuda:N (default: "
        f"{DEFAULT['device']})",
    )
    add_quiet_argument(parser)
    add_kind_arguments(NAME, parser)
    finish(parser, NAME, run)


def _archs_by_kind() -> str:
    """The architectures each input kind's tasks take, in words."""
    kinds = {task.input_kind: task.archs for task in TASKS.values()}
    return "; ".join(f"{kind}: {', '.join(archs)}" for kind, archs in kinds.items())


def run(args: argparse.Namespace, task: Task) -> int:
    from ptrnet.evaluation.score import metric_text
    from ptrnet.training.loop import train

    if args.out is None and (args.resume or not args.dry_run):
        raise UsageError("--out RUN_DIR is required")
    # a dry run's folder is made once the options are good; init_from is named from its parent
    planned = args.out or os.path.join(tempfile.gettempdir(), DRY_RUN_PREFIX)
    try:
        config = resumed_config(args, args.out) if args.resume else fresh_config(args, planned)
    except ValueError as err:  # an impossible option value (the config validates them)
        raise UsageError(str(err)) from None
    out = args.out or tempfile.mkdtemp(prefix=DRY_RUN_PREFIX)
    progress = not args.quiet  # a bar on a terminal, else a line every 10 s (io/progress.py)
    result = run_stoppable(
        lambda stop: train(config, out, resume=args.resume, progress=progress, should_stop=stop),
        config.train.task,
        out,
    )
    if isinstance(result, int):
        return result
    if result.rank != 0:  # under torchrun, rank 0 alone reports
        return 0
    best = result.best
    shown = metric_text(get_task(config.train.task), best.get("metric"), best.get("value"))
    print(
        f"ptrnet: {config.train.task}: {result.step} steps, "
        f"{result.examples_per_s:.0f} examples/s; best {best.get('metric')} "
        f"{shown} at step {best.get('step')}; run in {out}"
    )
    return 0
