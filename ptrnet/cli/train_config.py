"""``ptrnet train``'s run configuration from its command line: a fresh run (``--dry-run``
preset < explicit options), a warm start (``--init-from``: the model from the checkpoint) or a
resumed run (the saved configuration with the resumable changes), and the options a run would
ignore, refused."""

from __future__ import annotations

import argparse
import os

from ptrnet.cli.kinds import flag
from ptrnet.io.errors import UsageError
from ptrnet.model.config import DEFAULT_HIDDEN, SET_DECODERS
from ptrnet.runs.config import DEFAULT_STEPS, RunConfig, TrainConfig
from ptrnet.tasks import SizeRange, get_point_task

DRY_RUN_HIDDEN = 16
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
    "features",
)
# --decoder heavy without --encoder / --encoder-layers: LEHD's light encoder.
HEAVY_DEFAULTS = {"encoder": "transformer", "encoder_layers": 1}
LIGHT_DEFAULTS = {"encoder": "transformer", "logit_clip": 10.0}  # Kool et al. 2019
MODEL_OPTIONS = ("arch", "hidden", "layers", "init", *POINTER_OPTIONS)
# Options that map one-to-one onto TrainConfig fields (the rest build the ModelConfig).
TRAIN_OPTIONS = (
    "sizes",
    "capacity",
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
    "learn_opening",
    "opening_rollouts",
    "log_every",
    "keep_every",
    "seed",
    "threads",
    "workers",
    "precision",
    "device",
)


def explicit_options(args: argparse.Namespace) -> dict[str, object]:
    """The TrainConfig fields given on the command line."""
    options = {k: getattr(args, k) for k in TRAIN_OPTIONS if getattr(args, k) is not None}
    if "sizes" in options:
        options["sizes"] = str(options["sizes"])
    return options


def fresh_config(args: argparse.Namespace, out: str) -> RunConfig:
    """A new run's configuration in the run directory ``out`` (which names ``--init-from``'s
    checkpoint, :func:`ptrnet.runs.recorded_path`): preset (``--dry-run``) < explicit options."""
    from ptrnet.api.training import file_sizes
    from ptrnet.model import ModelConfig
    from ptrnet.model.features import ROW_WIDTH

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
        config = warm_start_config(args, options, out)
        check_used(config, set(explicit))
        return config
    hidden = args.hidden or (DRY_RUN_HIDDEN if args.dry_run else DEFAULT_HIDDEN)
    kind = task.check_arch(args.arch)
    max_n = None if kind == "pointer" else SizeRange.parse(options["sizes"]).hi
    pointer = {k: getattr(args, k) for k in POINTER_OPTIONS if getattr(args, k) is not None}
    defaults = {"heavy": HEAVY_DEFAULTS, "light": LIGHT_DEFAULTS, "route": LIGHT_DEFAULTS}
    defaults = defaults.get(pointer.get("decoder"), {})
    pointer = {**defaults, **pointer}
    if "capacity" in options:  # generated instances state a capacity: a model that reads it
        pointer.setdefault("features", "capacity")
    pointer.setdefault("features", task.features)
    model = ModelConfig(
        kind=kind,
        input_dim=ROW_WIDTH.get(pointer.get("features")) or task.dim,
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
        "capacity": (
            train.data is not None and train.val_data is not None,
            "generated data or validation (no --data, or no --val-data)",
        ),
        "encoder_layers": (model.encoder != "transformer", "--encoder transformer"),
        "heads": (
            model.encoder != "transformer" and model.decoder not in SET_DECODERS,
            "--encoder transformer or --decoder heavy|light|route",
        ),
        "decoder_layers": (model.decoder != "heavy", "--decoder heavy"),
    }
    for name in sorted(given & unused.keys()):
        ignored, needs = unused[name]
        if ignored:
            raise UsageError(f"{flag(name)} applies only with {needs}; this run would ignore it")


def warm_start_config(args: argparse.Namespace, options: dict[str, object], out: str) -> RunConfig:
    """A new run in ``out`` that starts from ``--init-from``'s weights, so its model
    configuration; the checkpoint named as :func:`ptrnet.runs.recorded_path` names it."""
    from ptrnet.inference import resolve_checkpoint
    from ptrnet.runs import recorded_path
    from ptrnet.runs.checkpoint import load_checkpoint

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
    options["init_from"] = recorded_path(path, out)
    return RunConfig(saved.model, TrainConfig(task=args.task, **options))


def resumed_config(args: argparse.Namespace, out: str) -> RunConfig:
    """The saved configuration of the run in ``out`` with the explicit resumable changes;
    options repeated with their saved values are no change."""
    from ptrnet.inference import resolve_checkpoint
    from ptrnet.runs import recorded_file
    from ptrnet.runs.checkpoint import load_checkpoint
    from ptrnet.runs.resume import resume_config
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
        saved_from = saved.train.init_from
        saved_model["init_from"] = saved_from and os.path.abspath(recorded_file(saved_from, out))
        given["init_from"] = os.path.abspath(resolve_checkpoint(name, args.task))
    changes = [
        f"--{a.replace('_', '-')} from {saved_model[a]} to {v}"
        for a, v in given.items()
        if saved_model[a] != v
    ]
    if changes:
        raise UsageError(f"cannot change {'; '.join(changes)} when resuming")
    return resume_config(saved, explicit_options(args))
