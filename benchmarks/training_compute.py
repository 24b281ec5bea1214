"""Training compute of every bundled model: FLOPs per training example, the examples and CPU
time its logs record, and the hours that would take on a GPU at an assumed sustained rate.

Usage: ``python benchmarks/training_compute.py [--gpu-tflops 100] [--per-size 2] [--json]``

Method:

* **FLOPs per training example**: one forward and backward pass of the training loss
  (:func:`ptrnet.training.losses.teacher_forced_loss`, masked by the task's rules where the run
  was) on teacher-forced batches made by :func:`ptrnet.batching.collate` from generated,
  labelled instances (:func:`ptrnet.generation.labelled_instance`, the training stream): a batch
  of ``--per-size`` instances at every n of the model's training sizes, divided by its rows and
  averaged over n (training draws n uniformly, so this is the expectation over sizes). The
  checkpoint's own configuration builds the model (:func:`benchmarks.flop_count.training_flops`
  counts; its docstring says what, and how the LSTM is counted).
* **Padding is not counted**: each counted batch holds one n, so only labels of different
  lengths (hull, Delaunay) pad. Bucketed training batches span a few sizes and pad a little
  more, and the Delaunay n = 5 runs did not bucket: the figures are the model's work.
* **Examples and time**: each run's ``docs/bundled-runs/RUN/log.csv`` (step, examples_per_s,
  elapsed_s) and ``config.json`` (batch_size); the runs of each model are those its
  ``COMMAND.md`` lists (:data:`MODELS`). A run resumed in sittings restarts ``elapsed_s``, so a
  fall of ``elapsed_s`` starts a sitting and the wall time is the sum of each sitting's last
  ``elapsed_s``; ``train h`` sums only the training steps' time (the log's ``examples_per_s``
  over each interval: no validation, but any wait for data). Steps after the last logged row of
  a run stopped by hand, and rows a resume dropped (:mod:`ptrnet.runs.csvlog`), are missing
  from the logs, so every total is a lower bound.
* **GPU hours**: total FLOPs / (``--gpu-tflops`` x 1e12 FLOP/s) / 3600: an assumed sustained
  rate, not a measurement (docs/distributed.md, section 6, on why an LSTM pointer network
  reaches only a small part of a GPU's peak).

The copy task's model is left out: it is a sentence task, trained by ``ptrnet.text``'s own
loss on vocabulary batches, not by ``teacher_forced_loss`` on point batches (its whole
training, 1,000 steps of 64 sentences in 288 s, is in its COMMAND.md).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from benchmarks.bench_distributed import cpu_model
from benchmarks.flop_count import training_flops
from ptrnet.batching import Batch, collate
from ptrnet.generation import labelled_instance
from ptrnet.inference import BUNDLED_DIR, LoadedModel, load_model
from ptrnet.runs.csvlog import read_log
from ptrnet.tasks import Stream, get_task
from ptrnet.tasks.base import SizeRange
from ptrnet.training.losses import loss_mask_task, sample_generator, sample_label_steps

RUNS_DIR = Path(__file__).resolve().parent.parent / "docs" / "bundled-runs"


class LogError(ValueError):
    """A run log that cannot be summed; ``str`` is ``FILE:LINE: problem``."""


@dataclass(frozen=True)
class Bundled:
    """A bundled model and the runs that made it, in the order they ran (its COMMAND.md).

    Attributes:
        folder: under ptrnet/bundled/.
        runs: folders under docs/bundled-runs/; empty where the logs were not kept.
        start: the bundled model it was fine-tuned from ("" = trained from scratch).
    """

    folder: str
    runs: tuple[str, ...]
    start: str = ""


MODELS = (
    Bundled("sort", ("sort/1-constrained", "sort/2-fp32", "sort/3-fp32-low-lr")),
    Bundled("convex_hull", ("convex_hull",)),
    Bundled("convex_hull_seq2seq", ()),
    Bundled(
        "delaunay",
        ("delaunay/1-first", "delaunay/2-warm-restart", "delaunay/3-warm-restart"),
    ),
    Bundled(
        "delaunay/n5",
        tuple(
            "delaunay/probe-n5-wide" + tail
            for tail in ("", "/continued", "/continued2", "/continued4")
        ),
    ),
    Bundled(
        "tsp",
        tuple(
            f"tsp/{run}"
            for run in (
                "1-plain-loss",
                "2-constrained",
                "3-constrained-500k",
                "4-augmented",
                "5-augmented-b256",
                "6-augmented-1m",
            )
        ),
    ),
    Bundled("tsp/n31plus", ("tsp/n31plus",), start="tsp"),
)


@dataclass(frozen=True)
class RunRecord:
    """What one run's log records: optimiser steps, sittings, wall and training-step seconds."""

    run: str
    batch_size: int
    steps: int
    sittings: int
    wall_s: float
    train_s: float

    @property
    def examples(self) -> int:
        return self.steps * self.batch_size


def sum_log(rows: list[dict[str, str]], batch_size: int, path: str) -> RunRecord:
    """Sum the rows of one run's ``log.csv`` (module docstring: sittings, lower bounds).

    Raises:
        LogError: a step that does not increase, or a row without a step, time or rate.
    """
    steps = sittings = 0
    wall = train = last = 0.0
    for line, row in enumerate(rows, start=2):  # line 1 is the header
        try:
            step, elapsed = int(row["step"]), float(row["elapsed_s"])
            rate = float(row["examples_per_s"])
        except (KeyError, TypeError, ValueError):
            raise LogError(f"{path}:{line}: no step, elapsed_s or examples_per_s") from None
        if step <= steps or rate <= 0:
            raise LogError(f"{path}:{line}: step {step} after step {steps}, rate {rate}")
        if sittings == 0 or elapsed < last:  # a resumed sitting restarts its clock
            sittings += 1
            last = 0.0
        wall += elapsed - last
        train += (step - steps) * batch_size / rate
        steps, last = step, elapsed
    if sittings == 0:
        raise LogError(f"{path}: no rows")
    return RunRecord(path, batch_size, steps, sittings, wall, train)


def read_run(run: str) -> RunRecord:
    """The :class:`RunRecord` of ``docs/bundled-runs/<run>`` (its config.json and log.csv)."""
    folder = RUNS_DIR / run
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    return sum_log(read_log(folder / "log.csv"), int(config["train"]["batch_size"]), run)


@functools.cache
def size_batch(task_name: str, n: int, count: int, seed: int) -> Batch:
    """``count`` labelled training-stream instances of exactly n points, as one batch."""
    task, sizes = get_task(task_name), SizeRange(n, n)
    pairs = [labelled_instance(task, sizes, seed, i, stream=Stream.TRAIN) for i in range(count)]
    return collate([p for p, _ in pairs], [s for _, s in pairs])


def flops_per_example(loaded: LoadedModel, per_size: int, seed: int) -> float:
    """Mean FLOPs of one training example over the model's training sizes (module docstring).

    Raises:
        SystemExit: a run trained by REINFORCE (its step also decodes samples; not counted).
    """
    cfg, model = loaded.config.train, loaded.model.train()
    if cfg.objective != "likelihood":
        raise SystemExit(f"training_compute: error: {loaded.path}: {cfg.objective} not counted")
    mask, sizes = loss_mask_task(cfg), cfg.size_range
    per_n = []
    for n in range(sizes.lo, sizes.hi + 1):
        batch = size_batch(cfg.task, n, per_size, seed)
        active = None
        if cfg.label_steps:  # the heavy decoder's sub-sampled teacher forcing
            generator = sample_generator(seed, n, stream=Stream.LABEL_STEPS)
            active = sample_label_steps(batch.targets, cfg.label_steps, generator)
        per_n.append(training_flops(model, batch, mask, active) / batch.size)
    return statistics.fmean(per_n)


def run_dict(record: RunRecord, per_example: float) -> dict:
    """One run's record with its examples and achieved FLOP/s over its wall time."""
    rate = record.examples * per_example / record.wall_s / 1e9
    return {**asdict(record), "examples": record.examples, "cpu_gflops_wall": rate}


def architecture(loaded: LoadedModel) -> str:
    """The model's kind, encoder, decoder and width, from the checkpoint's configuration."""
    m = loaded.config.model
    encoder = f"{m.encoder}x{m.encoder_layers}" if m.encoder == "transformer" else m.encoder
    decoder = f"heavy x{m.decoder_layers}" if m.decoder == "heavy" else "lstm"
    extra = f", {m.glimpses} glimpses" if m.glimpses else ""
    return f"{m.kind} {encoder}/{decoder} d={m.hidden} L={m.layers}{extra}"


def model_row(entry: Bundled, per_size: int, seed: int, gpu_tflops: float) -> dict:
    """Everything the table says about one bundled model (None where no log was kept)."""
    loaded = load_model(os.path.join(BUNDLED_DIR, entry.folder, "best.safetensors"))
    per_example = flops_per_example(loaded, per_size, seed)
    runs = [read_run(run) for run in entry.runs]
    row = {
        "model": entry.folder,
        "task": loaded.task,
        "architecture": architecture(loaded),
        "parameters": sum(p.numel() for p in loaded.model.parameters()),
        "train_sizes": str(loaded.config.train.size_range),
        "flops_per_example": per_example,
        "starts_from": entry.start,
        "runs": [run_dict(r, per_example) for r in runs],
        "steps": None,
        "examples": None,
        "wall_h": None,
        "train_h": None,
        "total_flops": None,
        "cpu_gflops_wall": None,
        "gpu_h": None,
    }
    if runs:
        examples = sum(r.examples for r in runs)
        wall = sum(r.wall_s for r in runs)
        total = examples * per_example
        row |= {
            "steps": sum(r.steps for r in runs),
            "examples": examples,
            "wall_h": wall / 3600,
            "train_h": sum(r.train_s for r in runs) / 3600,
            "total_flops": total,
            "cpu_gflops_wall": total / wall / 1e9,
            "gpu_h": total / (gpu_tflops * 1e12) / 3600,
        }
    return row


COLUMNS = (
    ("model", "model", "{}"),
    ("architecture", "architecture", "{}"),
    ("parameters", "params", "{:,}"),
    ("train_sizes", "n", "{}"),
    ("flops_per_example", "FLOPs/example", "{:.3g}"),
    ("examples", "examples", "{:,}"),
    ("sittings", "runs (sittings)", "{}"),
    ("wall_h", "CPU wall h", "{:.2f}"),
    ("train_h", "train-step h", "{:.2f}"),
    ("total_flops", "total FLOPs", "{:.3g}"),
    ("cpu_gflops_wall", "CPU GFLOP/s", "{:.2f}"),
    ("gpu_h", "GPU h (assumed rate)", "{:.4f}"),
)


def markdown(rows: list[dict]) -> str:
    """The rows as a markdown table; a model without logs reads "no log" in their columns."""
    lines = ["| " + " | ".join(title for _, title, _ in COLUMNS) + " |"]
    lines.append("|" + "---|" * len(COLUMNS))
    for row in rows:
        runs = row["runs"]
        shown = {**row, "sittings": f"{len(runs)} ({sum(r['sittings'] for r in runs)})"}
        cells = [
            "no log" if shown[key] is None else fmt.format(shown[key]) for key, _, fmt in COLUMNS
        ]
        if not runs:
            cells[[key for key, _, _ in COLUMNS].index("sittings")] = "no log"
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def notes(rows: list[dict], gpu_tflops: float) -> str:
    """The lines printed under the table: the CPU, the assumption, what is not counted."""
    lines = [
        f"CPU: {cpu_model()} (the runs: one training thread each, on a shared 2-core machine).",
        f"GPU h = total FLOPs / ({gpu_tflops:g} TFLOP/s x 1e12) / 3600 s: an ASSUMED sustained "
        f"rate (--gpu-tflops), an estimate, not a measurement.",
        "FLOPs count 2 per multiply-add of matrix products, forward and backward; padding, "
        "elementwise ops, validation and labelling are not counted.",
    ]
    for row in rows:
        if row["starts_from"]:
            lines.append(
                f"{row['model']} starts from the bundled {row['starts_from']} model; "
                "its row counts its own runs only."
            )
        if not row["runs"]:
            lines.append(f"{row['model']}: its training logs were not kept (its COMMAND.md).")
    lines.append("copy: not counted (a sentence task; module docstring).")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--gpu-tflops",
        type=float,
        default=100.0,
        help="ASSUMED sustained GPU rate in TFLOP/s for the GPU column (default 100)",
    )
    parser.add_argument(
        "--per-size",
        type=int,
        default=2,
        help="instances counted at each training size n (default 2)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the counted instances")
    parser.add_argument("--only", nargs="*", help="bundled folders to count (default: all)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    args = parser.parse_args(argv)
    if args.gpu_tflops <= 0 or args.per_size < 1:
        parser.error("--gpu-tflops must be > 0 and --per-size >= 1")
    torch.set_num_threads(1)
    chosen = [m for m in MODELS if not args.only or m.folder in args.only]
    try:
        rows = [model_row(m, args.per_size, args.seed, args.gpu_tflops) for m in chosen]
    except (LogError, OSError) as err:
        sys.exit(f"training_compute: error: {err}")
    if args.json:
        print(json.dumps({"gpu_tflops_assumed": args.gpu_tflops, "models": rows}, indent=2))
    else:
        print(markdown(rows))
        print()
        print(notes(rows, args.gpu_tflops))


if __name__ == "__main__":
    main()
