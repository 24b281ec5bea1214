"""Training compute of every bundled model: FLOPs per training example, the examples and CPU
time its logs record, and the hours that would take on a GPU at an assumed sustained rate.

Usage: ``python benchmarks/training_compute.py [--gpu-tflops 100] [--per-size 2] [--json]``

Method:

* **FLOPs per training example**, counted for each run at its own configuration: one forward
  and backward pass of the training loss (:func:`ptrnet.training.losses.teacher_forced_loss`,
  masked by the task's rules where the run was, over the label steps it teacher-forced) on
  teacher-forced batches made by :func:`ptrnet.datasets.batching.collate` from generated, labelled
  instances (:func:`ptrnet.datasets.generation.labelled_instance`, the training stream): a batch of
  ``--per-size`` instances at every n of the run's training sizes, divided by its rows and
  averaged over n (training draws n uniformly, so this is the expectation over sizes). The
  run's saved ``config.json`` builds the model and says the sizes
  (:func:`benchmarks.flop_count.flops_per_example`; the module's docstring says what is
  counted, and how the LSTM is). A model's row gives its runs' total FLOPs over their examples,
  so a line whose runs drew other sizes (a fine-tune on larger instances) is counted at each
  run's own.
* **Padding is not counted**: each counted batch holds one n, so only labels of different
  lengths (hull, Delaunay) pad. Bucketed training batches span a few sizes and pad a little
  more, and the Delaunay n = 5 runs did not bucket: the figures are the model's work.
* **Examples and time**: each run's ``docs/bundled-runs/RUN/log.csv`` and the batch size of
  its ``config.json``, summed over sittings by :mod:`benchmarks.run_logs` (wall time, and
  "train-step h": the steps' own time; lower bounds, as its docstring says why); the runs of
  each model are those its ``COMMAND.md`` lists (:data:`MODELS`).
* **GPU hours**: total FLOPs / (``--gpu-tflops`` x 1e12 FLOP/s) / 3600: an assumed sustained
  rate, not a measurement (docs/distributed.md, section 6, on why an LSTM pointer network
  reaches only a small part of a GPU's peak).
* **Plans** (a second table, :data:`PLANS`): the training budgets of Kool et al. (TSP-50 and
  TSP-100: 100 epochs of 1.28M instances, docs/results.md) and of LEHD (150 epochs of 1M
  TSP-100 instances, its released ``train.py``), priced for ptrnet's LSTM pointer network and
  its heavy decoder with every label step teacher-forced, in one-thread days at the rate the
  bundled TSP model's runs reached and in GPU hours at the assumed rate.

The sentence tasks' models (copy, span) are left out: they are trained by ``ptrnet.text``'s own
losses on vocabulary batches, not by ``teacher_forced_loss`` on point batches (each whole
training is in its COMMAND.md: copy 1,000 steps of 64 sentences in 288 s). So is the CVRP
model: trained by REINFORCE, a step samples route sets from every start and scores them again,
which one teacher-forced pass does not count (its COMMAND.md: 2,155 steps of 64 instances, 20
starts each, in 100 minutes of one thread).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict, dataclass

import torch

try:
    from benchmarks.bench_distributed import cpu_model
    from benchmarks.flop_count import counted_fields, flops_per_example
    from benchmarks.run_logs import LogError, RunRecord, read_run, run_config
except ModuleNotFoundError:  # run as a script: benchmarks/ itself is on sys.path
    from bench_distributed import cpu_model
    from flop_count import counted_fields, flops_per_example
    from run_logs import LogError, RunRecord, read_run, run_config
from ptrnet.inference import load_model
from ptrnet.inference.load import BUNDLED_DIR
from ptrnet.io.errors import InputError
from ptrnet.model import build_model
from ptrnet.model.config import ModelConfig
from ptrnet.runs.config import RunConfig, TrainConfig


@dataclass(frozen=True)
class Bundled:
    """A bundled model and the runs that made it, in the order they ran (its COMMAND.md).

    Attributes:
        folder: under ptrnet/bundled/.
        runs: folders under docs/bundled-runs/ (a fine-tuned model lists the runs of the models
            it started from too); empty where the logs were not kept.
    """

    folder: str
    runs: tuple[str, ...]


# The heavy TSP models' lines: each fine-tune starts from the end of the line before it.
HEAVY20_50 = ("tsp/heavy20-50/1-from-scratch", "tsp/heavy20-50/2-continued")
HEAVY10_30 = (
    *HEAVY20_50,
    *(
        f"tsp/heavy10-30/{run}"
        for run in ("3-on-10-30", "4-lower-lr", "5-on-15-25", "6-local-labels", "7-anneal", "8-n20")
    ),
)

MODELS = (
    Bundled("sort", ("sort/1-constrained", "sort/2-fp32", "sort/3-fp32-low-lr")),
    Bundled("convex_hull", ("convex_hull",)),
    Bundled("convex_hull/tf5-12", ("convex_hull/tf5-12",)),
    Bundled("convex_hull/tf20-50", ("convex_hull/tf5-12", "convex_hull/tf20-50")),
    Bundled("convex_hull_seq2seq", ()),
    Bundled("knapsack", ("knapsack",)),
    Bundled("knapsack/capacity", ("knapsack-capacity/n50", "knapsack-capacity")),
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
        "delaunay/n10",
        ("delaunay/n10-transformer/1-from-scratch", "delaunay/n10-transformer/2-anneal"),
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
    Bundled("tsp/heavy20-50", HEAVY20_50),
    Bundled("tsp/heavy10-30", HEAVY10_30),
    Bundled("tsp/heavy40-52", (*HEAVY10_30, "tsp/heavy40-52/1-on-40-52")),
    Bundled(
        "tsp/heavy20-100",
        (
            *HEAVY20_50,
            "tsp/heavy20-100/3-on-20-100",
            "tsp/heavy20-100/4-lower-lr",
        ),
    ),
)


# counts already made, by model configuration and counted fields: runs of one line share them
_COUNTS: dict[tuple, float] = {}


def run_flops(run: str, per_size: int, seed: int) -> float:
    """FLOPs of one training example of ``docs/bundled-runs/<run>``, at its own configuration
    (counted once for all runs with the same model and :func:`counted_fields`).

    Raises:
        LogError: the run's config.json cannot build its model, or its objective is not counted.
    """
    try:
        config = RunConfig.from_dict(run_config(run))
        key = (config.model, counted_fields(config.train), per_size, seed)
        if key not in _COUNTS:
            torch.manual_seed(seed)
            model = build_model(config.model)
            _COUNTS[key] = flops_per_example(model, config.train, per_size, seed)
        return _COUNTS[key]
    except (TypeError, ValueError) as err:
        raise LogError(f"docs/bundled-runs/{run}/config.json: {err}") from None


def run_dict(record: RunRecord, per_example: float) -> dict:
    """One run's record with its FLOPs per example and achieved FLOP/s over its wall time."""
    rate = record.examples * per_example / record.wall_s / 1e9
    return {
        **asdict(record),
        "examples": record.examples,
        "flops_per_example": per_example,
        "cpu_gflops_wall": rate,
    }


def architecture(m: ModelConfig) -> str:
    """A model configuration's kind, encoder, decoder and width."""
    encoder = f"{m.encoder}x{m.encoder_layers}" if m.encoder == "transformer" else m.encoder
    decoder = f"heavy x{m.decoder_layers}" if m.decoder == "heavy" else "lstm"
    lstm = m.encoder == "lstm" or m.decoder == "lstm"
    extra = (f" L={m.layers}" if lstm else "") + (f", {m.glimpses} glimpses" if m.glimpses else "")
    return f"{m.kind} {encoder}/{decoder} d={m.hidden}{extra}"


def model_row(entry: Bundled, per_size: int, seed: int, gpu_tflops: float) -> dict:
    """Everything the table says about one bundled model (None where no log was kept).

    Its FLOPs per example are its runs' total over their examples, each run counted at its own
    configuration; a model without logs is counted at its checkpoint's configuration.
    """
    loaded = load_model(os.path.join(BUNDLED_DIR, entry.folder, "best.safetensors"))
    runs = [run_dict(read_run(run), run_flops(run, per_size, seed)) for run in entry.runs]
    row = {
        "model": entry.folder,
        "task": loaded.task,
        "architecture": architecture(loaded.config.model),
        "parameters": sum(p.numel() for p in loaded.model.parameters()),
        "train_sizes": str(loaded.config.train.size_range),
        "runs": runs,
        **dict.fromkeys(("steps", "examples", "wall_h", "train_h", "total_flops")),
        **dict.fromkeys(("cpu_gflops_wall", "gpu_h")),
    }
    if not runs:
        try:
            per_example = flops_per_example(loaded.model, loaded.config.train, per_size, seed)
        except ValueError as err:
            raise LogError(f"{loaded.path}: {err}") from None
        return {**row, "flops_per_example": per_example}
    examples = sum(r["examples"] for r in runs)
    wall = sum(r["wall_s"] for r in runs)
    total = sum(r["examples"] * r["flops_per_example"] for r in runs)
    return row | {
        "flops_per_example": total / examples,
        "steps": sum(r["steps"] for r in runs),
        "examples": examples,
        "wall_h": wall / 3600,
        "train_h": sum(r["train_s"] for r in runs) / 3600,
        "total_flops": total,
        "cpu_gflops_wall": total / wall / 1e9,
        "gpu_h": total / (gpu_tflops * 1e12) / 3600,
    }


@dataclass(frozen=True)
class Plan:
    """A training budget of the literature, priced for a ptrnet model (docs/distributed.md, 6)."""

    name: str
    model: ModelConfig
    n: int
    examples: int
    budget: str


HEAVY = ModelConfig(hidden=128, encoder="transformer", encoder_layers=1, decoder="heavy")
PLANS = (
    Plan("LSTM Ptr-Net, TSP-50", ModelConfig(), 50, 128_000_000, "Kool et al.: 100 x 1.28M"),
    Plan("LSTM Ptr-Net, TSP-100", ModelConfig(), 100, 128_000_000, "Kool et al.: 100 x 1.28M"),
    Plan("heavy decoder, TSP-100", HEAVY, 100, 150_000_000, "LEHD: 150 epochs x 1M"),
)


def plan_row(plan: Plan, per_size: int, seed: int, cpu_gflops: float | None, gpu_tflops: float):
    """One plan priced: supervised, every label step teacher-forced, constrained loss."""
    torch.manual_seed(seed)
    model = build_model(plan.model)
    cfg = TrainConfig(task="tsp", sizes=str(plan.n), steps=1, train_constraints="task")
    per_example = flops_per_example(model, cfg, per_size, seed)
    total = plan.examples * per_example
    days = None if cpu_gflops is None else total / (cpu_gflops * 1e9) / 86400
    return {
        "model": plan.name,
        "architecture": architecture(plan.model),
        "parameters": sum(p.numel() for p in model.parameters()),
        "train_sizes": str(plan.n),
        "flops_per_example": per_example,
        "budget": plan.budget,
        "examples": plan.examples,
        "total_flops": total,
        "cpu_thread_days": days,
        "gpu_h": total / (gpu_tflops * 1e12) / 3600,
    }


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
    ("cpu_gflops_wall", "CPU GFLOP/s", "{:.1f}"),
    ("gpu_h", "GPU h (assumed rate)", "{:.4f}"),
)
PLAN_COLUMNS = (
    *COLUMNS[:5],
    ("budget", "budget", "{}"),
    ("examples", "examples", "{:,}"),
    ("total_flops", "total FLOPs", "{:.3g}"),
    ("cpu_thread_days", "one-thread days", "{:.1f}"),
    ("gpu_h", "GPU h (assumed rate)", "{:.2f}"),
)


def markdown(rows: list[dict], columns: tuple) -> str:
    """The rows as a markdown table; a value of None reads "no log"."""
    lines = ["| " + " | ".join(title for _, title, _ in columns) + " |"]
    lines.append("|" + "---|" * len(columns))
    for row in rows:
        runs = row.get("runs") or []
        sittings = f"{len(runs)} ({sum(r['sittings'] for r in runs)})" if runs else None
        shown = {**row, "sittings": sittings}
        cells = [
            "no log" if shown[key] is None else fmt.format(shown[key]) for key, _, fmt in columns
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def notes(rows: list[dict], gpu_tflops: float, cpu_gflops: float | None) -> str:
    """The lines printed under the tables: the CPU, the assumptions, what is not counted."""
    lines = [
        f"CPU: {cpu_model()} (this machine). The runs: one training thread each (two in the "
        "later sittings of delaunay/n10), on shared 2-core machines (docs/speed.md: some "
        "sessions had AVX-512, some AVX2 only).",
        f"GPU h = total FLOPs / ({gpu_tflops:g} TFLOP/s x 1e12) / 3600 s: an ASSUMED sustained "
        "rate (--gpu-tflops), an estimate, not a measurement.",
        "FLOPs count 2 per multiply-add of matrix products, forward and backward; padding, "
        "elementwise ops, the optimiser, validation and labelling are not counted.",
    ]
    lines.append(
        "A model's row counts every run of its line (those of the models it was fine-tuned "
        "from too), each at its own training sizes; FLOPs/example = total FLOPs / examples."
    )
    for row in rows:
        if not row["runs"]:
            lines.append(f"{row['model']}: its training logs were not kept (its COMMAND.md).")
    lines.append("copy: not counted (a sentence task; module docstring).")
    if cpu_gflops is not None:
        lines.append(
            f"Plans: supervised with every label step teacher-forced (LEHD trains on sub-paths, "
            f"Kool et al. by REINFORCE); one-thread days at the bundled tsp model's "
            f"{cpu_gflops:.0f} GFLOP/s; labelling not counted."
        )
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
        "--per-size", type=int, default=2, help="instances counted at each size n (default 2)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the counted instances")
    parser.add_argument("--only", nargs="*", help="bundled folders to count (default: all)")
    parser.add_argument("--no-plans", action="store_true", help="skip the literature budgets")
    parser.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    args = parser.parse_args(argv)
    if args.gpu_tflops <= 0 or args.per_size < 1:
        parser.error("--gpu-tflops must be > 0 and --per-size >= 1")
    torch.set_num_threads(1)
    chosen = [m for m in MODELS if not args.only or m.folder in args.only]
    try:
        rows = [model_row(m, args.per_size, args.seed, args.gpu_tflops) for m in chosen]
    except (ValueError, OSError, InputError) as err:  # LogError, bad JSON, a bad checkpoint
        sys.exit(f"training_compute: error: {err}")
    tsp = next((r for r in rows if r["model"] == "tsp"), None)
    cpu_gflops = None if tsp is None else tsp["cpu_gflops_wall"]
    plans = [] if args.no_plans else PLANS
    planned = [plan_row(p, args.per_size, args.seed, cpu_gflops, args.gpu_tflops) for p in plans]
    if args.json:
        report = {"gpu_tflops_assumed": args.gpu_tflops, "models": rows, "plans": planned}
        print(json.dumps(report, indent=2))
        return
    print(markdown(rows, COLUMNS))
    if planned:
        print()
        print(markdown(planned, PLAN_COLUMNS))
    print()
    print(notes(rows, args.gpu_tflops, cpu_gflops if planned else None))


if __name__ == "__main__":
    main()
