"""What each of the paper's tables needs, as data: models, test rows, decoding, budgets per scale.

One definition serves the training and the tables (:mod:`ptrnet.reproduce.run`,
:mod:`ptrnet.reproduce.tables`): a :class:`TablePlan` lists the models to train
(:class:`ModelPlan`) and the rows to report (:class:`RowPlan`, a model tested at one n); a
:class:`Scale` sizes the training and the test sets.

Choices the paper leaves open, made here [not in paper]:

* Optimiser: ptrnet's default recipe (Adam 1e-3, decay 0.96 per 1000 steps, batch 128, clipping
  2.0); the paper's SGD did not reach its numbers in public replications.
* Models trained on a size range (hull 5-50, TSP 5-20) batch similar sizes together
  (``bucket``); every instance still draws its n uniformly.
* The ``paper`` scale trains 10 epochs of 1M pairs (the paper's dataset size; the number of
  passes is not stated). Generated epochs are fresh pairs; file-trained models (TSP labelled by
  a solver) make 10 passes over one file of 1M pairs.
* Test sets: instances of :data:`TEST_STREAM` under :data:`TEST_SEED`, a stream no training or
  validation run draws from (those use streams 0 and 1), so test and training never overlap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ptrnet.decoding.options import PAPER_BEAM_WIDTH, DecodeOptions
from ptrnet.evaluation.paper_numbers import paper_result
from ptrnet.model import ModelConfig
from ptrnet.quoting import quote
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.tasks import SizeRange, Stream, get_task

TEST_SEED, TEST_STREAM, TRAIN_SEED = 0, Stream.TEST, 0
HULL_FILE, TSP_FILE = "convex_hull_5_test.txt", "tsp5_test.txt"


def describe_decoding(decoding: DecodeOptions) -> str:
    """A table's decoding in words, for its report."""
    how = decoding.card.words(decoding)  # greedy, beam search, width 2, ...
    limit = "restricted to valid outputs" if decoding.constraints == "task" else "unconstrained"
    return f"{how}, {limit}"


def decoding_record(decoding: DecodeOptions) -> dict[str, object]:
    """A table's decoding in its JSON report (``beam_width`` 1 for greedy decoding)."""
    return {
        "strategy": decoding.strategy,
        "constraints": decoding.constraints,
        "beam_width": decoding.width,
        "text": describe_decoding(decoding),
    }


@dataclass(frozen=True)
class ModelPlan:
    """One model to train.

    Attributes:
        name: its run directory under the output folder (unique across tables).
        task, arch, sizes: the task, ``pointer``/``seq2seq``/``attention``, training sizes.
        labels: None = fresh generated data labelled by ``task.solve``; a solver name = a
            training file generated once with that solver and trained on with its own labels.
        cpu_steps: the step budget at the ``cpu`` scale.
        ms_per_step: measured milliseconds per training step of 128 at hidden 256 on one
            busy CPU thread (AMD EPYC, bf16 autocast; docs/reproduce.md), for
            :func:`estimate_hours`; the measurements are good to about ±50%.
    """

    name: str
    task: str
    arch: str
    sizes: str
    cpu_steps: int
    ms_per_step: float
    labels: str | None = None

    @property
    def max_n(self) -> int | None:
        """The baselines' fixed output vocabulary: the largest n they train on."""
        return None if self.arch == "pointer" else SizeRange.parse(self.sizes).hi


@dataclass(frozen=True)
class RowPlan:
    """One table row: ``model`` tested at ``n``; ``paper_model`` keys the paper's number
    (:func:`paper_numbers`); ``paper_file`` names the released test file to use, if any."""

    label: str
    model: str
    n: int
    paper_model: str
    paper_file: str | None = None


@dataclass(frozen=True)
class TablePlan:
    """A table: its models, rows, decoding, shown metrics and (TSP) comparator solvers.

    ``decoding`` is the paper's protocol (``protocol="paper"``), resolved for ``task`` on
    construction. ``models`` is also the training order: Ptr-Nets and cheap models first, so an
    interrupted reproduction has its main rows early (``ptrnet reproduce --partial`` reports
    them).
    """

    name: str
    title: str
    task: str
    decoding: DecodeOptions
    metrics: tuple[str, ...]
    models: tuple[ModelPlan, ...]
    rows: tuple[RowPlan, ...]
    comparators: tuple[str, ...] = ()
    setup_hours: float = 0.0  # labelling files, test sets and comparators at the cpu scale

    def __post_init__(self) -> None:
        # The paper's protocol resolved for the table's task, so the report names its mask.
        object.__setattr__(self, "decoding", self.decoding.for_task(get_task(self.task)))

    def model(self, name: str) -> ModelPlan:
        """The model called ``name`` (every row's model is one of ``models``, tested)."""
        return next(m for m in self.models if m.name == name)


@dataclass(frozen=True)
class Scale:
    """How big everything is at one scale.

    Attributes:
        hidden, batch_size: model width (encoder and decoder) and batch.
        steps: the same step budget for every model; None = each model's ``cpu_steps``.
        epochs: train ``epochs`` passes instead (over ``epoch_size`` fresh generated pairs, or
            over the training file); overrides ``steps``.
        epoch_size: generated pairs per epoch.
        file_count: pairs in a solver-labelled training file.
        test_count: instances per generated test set (every reference solver labels 10,000
            within minutes: Qhull, Held–Karp up to n = 20, fast-tsp's 2-5 ms local search
            beyond); ``paper_file_count``: lines used of a released file (None = all).
        val_count, val_every: the validation set and interval during training.
        parallel: label and build training data in worker processes; False = in this process.
        threads: torch threads unless ``--threads`` says otherwise (None: the cores).
    """

    name: str
    hidden: int
    test_count: int
    file_count: int
    steps: int | None = None
    epochs: int | None = None
    epoch_size: int = 1_000_000
    batch_size: int = 128
    paper_file_count: int | None = None
    val_count: int = 1000
    val_every: int = 1000
    parallel: bool = True
    threads: int | None = None


SCALES: dict[str, Scale] = {
    s.name: s
    for s in (
        Scale(
            "dry-run",
            hidden=16,
            test_count=20,
            file_count=64,
            steps=4,
            batch_size=8,
            paper_file_count=20,
            val_count=16,
            val_every=2,
            parallel=False,
            threads=1,
        ),
        Scale("cpu", hidden=256, test_count=10_000, file_count=200_000),
        Scale("paper", hidden=256, test_count=10_000, file_count=1_000_000, epochs=10),
    )
}


def _hull_rows() -> tuple[RowPlan, ...]:
    fixed = (
        RowPlan("LSTM 50→50", "hull-lstm-50", 50, "lstm n"),
        RowPlan("+attention 50→50", "hull-attention-50", 50, "attention n"),
        RowPlan("Ptr-Net 50→50", "hull-ptr-50", 50, "ptr n"),
        RowPlan("LSTM 5→5", "hull-lstm-5", 5, "lstm n", HULL_FILE),
        RowPlan("LSTM 10→10", "hull-lstm-10", 10, "lstm n"),
    )
    ranged = tuple(
        RowPlan(f"Ptr-Net 5-50→{n}", "hull-ptr-5-50", n, "ptr 5-50", HULL_FILE if n == 5 else None)
        for n in (5, 10, 50, 100, 200, 500)
    )
    return fixed + ranged


def _tsp_rows() -> tuple[RowPlan, ...]:
    fixed = (
        RowPlan("Ptr-Net 5→5", "tsp-ptr-5", 5, "ptr n", TSP_FILE),
        RowPlan("Ptr-Net 10→10", "tsp-ptr-10", 10, "ptr n"),
        RowPlan("Ptr-Net 50→50, A1 labels", "tsp-ptr-50-a1", 50, "ptr n a1"),
        RowPlan("Ptr-Net 50→50, A3 labels", "tsp-ptr-50-a3", 50, "ptr n a3"),
    )
    ranged = tuple(
        RowPlan(f"Ptr-Net 5-20→{n}", "tsp-ptr-5-20", n, "ptr 5-20", TSP_FILE if n == 5 else None)
        for n in (5, 10, 20, 25, 30, 40, 50)
    )
    return fixed + ranged


TABLES: dict[str, TablePlan] = {
    t.name: t
    for t in (
        TablePlan(
            "table1",
            "Table 1: planar convex hull (accuracy / area coverage)",
            "convex_hull",
            DecodeOptions("beam", beam_width=PAPER_BEAM_WIDTH, protocol="paper"),
            ("accuracy", "area_coverage"),
            (
                ModelPlan(
                    "hull-ptr-5-50", "convex_hull", "pointer", "5-50", 20_000, ms_per_step=85
                ),
                ModelPlan("hull-lstm-5", "convex_hull", "seq2seq", "5", 20_000, ms_per_step=25),
                ModelPlan("hull-lstm-10", "convex_hull", "seq2seq", "10", 20_000, ms_per_step=30),
                ModelPlan("hull-ptr-50", "convex_hull", "pointer", "50", 10_000, ms_per_step=200),
                ModelPlan("hull-lstm-50", "convex_hull", "seq2seq", "50", 10_000, ms_per_step=160),
                ModelPlan(
                    "hull-attention-50", "convex_hull", "attention", "50", 10_000, ms_per_step=300
                ),
            ),
            _hull_rows(),
        ),
        TablePlan(
            "table2",
            "Table 2: planar TSP (mean closed-tour length)",
            "tsp",
            DecodeOptions("beam", beam_width=PAPER_BEAM_WIDTH, protocol="paper"),
            ("mean_length",),
            (
                ModelPlan("tsp-ptr-5", "tsp", "pointer", "5", 20_000, ms_per_step=23),
                ModelPlan("tsp-ptr-10", "tsp", "pointer", "10", 20_000, ms_per_step=34),
                ModelPlan(
                    "tsp-ptr-5-20", "tsp", "pointer", "5-20", 20_000, ms_per_step=65, labels="auto"
                ),
                ModelPlan(
                    "tsp-ptr-50-a1", "tsp", "pointer", "50", 6_000, ms_per_step=335, labels="a1"
                ),
                ModelPlan(
                    "tsp-ptr-50-a3", "tsp", "pointer", "50", 6_000, ms_per_step=335, labels="a3"
                ),
            ),
            _tsp_rows(),
            comparators=("a1", "a2", "a3"),
            setup_hours=2.0,  # 200,000-pair files (57 min) and 10,000-instance sets (about 1 h)
        ),
        TablePlan(
            "delaunay",
            "Delaunay triangulation (accuracy / triangle coverage)",
            "delaunay",
            DecodeOptions("beam", beam_width=PAPER_BEAM_WIDTH, protocol="paper"),
            ("accuracy", "triangle_coverage"),
            (
                ModelPlan("delaunay-ptr-5", "delaunay", "pointer", "5", 20_000, ms_per_step=40),
                ModelPlan("delaunay-ptr-10", "delaunay", "pointer", "10", 15_000, ms_per_step=100),
                ModelPlan("delaunay-ptr-50", "delaunay", "pointer", "50", 2_000, ms_per_step=2200),
            ),
            tuple(
                RowPlan(f"Ptr-Net {n}→{n}", f"delaunay-ptr-{n}", n, "ptr n") for n in (5, 10, 50)
            ),
        ),
    )
}


def get_table(name: str) -> TablePlan:
    """The plan of table ``name``; raises ValueError listing the tables otherwise."""
    if name not in TABLES:
        raise ValueError(f"unknown table {quote(name)}; choose from {', '.join(TABLES)}")
    return TABLES[name]


def get_scale(name: str) -> Scale:
    """The scale ``name``; raises ValueError listing the scales otherwise."""
    if name not in SCALES:
        raise ValueError(f"unknown scale {quote(name)}; choose from {', '.join(SCALES)}")
    return SCALES[name]


def epoch_length(model: ModelPlan, scale: Scale) -> int:
    """Training pairs per epoch: the training file's or the generated epoch's."""
    return scale.file_count if model.labels else scale.epoch_size


def total_steps(model: ModelPlan, scale: Scale) -> int:
    """Optimiser steps that train ``model`` at ``scale`` (what a finished run has taken)."""
    if scale.epochs is None:
        return scale.steps or model.cpu_steps
    return scale.epochs * math.ceil(epoch_length(model, scale) / scale.batch_size)


def describe_budget(model: ModelPlan, scale: Scale) -> str:
    """One line for a table cell, e.g. ``cpu: 20,000 steps × 128, hidden 256``."""
    text = f"{scale.name}: {total_steps(model, scale):,} steps × {scale.batch_size}"
    if scale.epochs is not None:
        text += f" ({scale.epochs} epochs of {epoch_length(model, scale):,})"
    if model.labels:
        labels = "exact" if model.labels == "auto" else model.labels.upper()
        text += f", {scale.file_count:,}-pair file, {labels} labels"
    return f"{text}, hidden {scale.hidden}"


def estimate_hours(table: TablePlan, scale: Scale) -> float:
    """Hours of one CPU thread that training every model of ``table`` at ``scale`` takes:
    steps × measured step time (scaled by batch and width), plus a tenth for validation, plus
    the table's ``setup_hours`` (at the cpu scale; scaled with the training file's size)."""
    step_scale = (scale.batch_size / 128) * (scale.hidden / 256) ** 2
    seconds = sum(
        1.1 * total_steps(m, scale) * m.ms_per_step / 1000 * step_scale for m in table.models
    )
    setup = table.setup_hours * scale.file_count / SCALES["cpu"].file_count
    return seconds / 3600 + setup


def run_config(
    model: ModelPlan,
    scale: Scale,
    data: str | None,
    threads: int | None = None,
    device: str = "auto",
) -> RunConfig:
    """The training configuration of ``model`` at ``scale``.

    Args:
        data: the solver-labelled training file (``model.labels`` set), else None.
        threads: torch threads (None: :func:`ptrnet.training.cpu.cpu_plan`'s choice).
        device: the training device (``auto``: a CUDA GPU if torch sees one, else the CPU).
    """
    net = ModelConfig(
        kind=model.arch,
        input_dim=get_task(model.task).dim,
        hidden=scale.hidden,
        max_n=model.max_n,
    )
    train = TrainConfig(
        task=model.task,
        sizes=model.sizes,
        data=data,
        labels="file" if data else "solve",
        epoch_size=scale.epoch_size,
        bucket=SizeRange.parse(model.sizes).lo < SizeRange.parse(model.sizes).hi,
        val_count=scale.val_count,
        val_every=scale.val_every,
        log_every=min(50, scale.val_every),
        seed=TRAIN_SEED,
        threads=threads,
        batch_size=scale.batch_size,
        steps=None if scale.epochs else total_steps(model, scale),
        epochs=scale.epochs,
        workers=None if scale.parallel else 0,
        device=device,
    )
    return RunConfig(net, train)


# The paper's numbers that ptrnet.evaluation.paper_numbers does not hold: the LSTM 10→10 row,
# the FAIL flags, the Ptr-Nets trained on A1/A3 labels and the comparator columns of Table 2
# (the paper gives only A3 for n = 25..50; the n = 50 comparators are one test set's).
PAPER_EXTRA: dict[tuple[str, str, int], dict[str, float | bool]] = {
    ("convex_hull", "lstm n", 10): {"accuracy": 0.299, "fail": True},
    ("convex_hull", "lstm n", 50): {"fail": True},
    ("tsp", "ptr n a1", 50): {"mean_length": 6.42},
    ("tsp", "ptr n a3", 50): {"mean_length": 6.09},
    **{
        ("tsp", solver, n): {"mean_length": length}
        for n, lengths in {
            5: (2.18, 2.12, 2.12),
            10: (3.07, 2.87, 2.87),
            20: (4.24, 3.86, 3.85),
            25: (None, None, 4.24),
            30: (None, None, 4.60),
            40: (None, None, 5.23),
            50: (6.46, 5.84, 5.79),
        }.items()
        for solver, length in zip(("a1", "a2", "a3"), lengths, strict=True)
        if length is not None
    },
}


def paper_numbers(task: str, model: str, n: int) -> dict[str, float | bool]:
    """The paper's numbers for ``(task, model, n)`` (``model`` as in ``PAPER_RESULTS``, or a
    comparator ``optimal``/``a1``/``a2``/``a3``); empty when the paper reports none."""
    return {**paper_result(task, model, n), **PAPER_EXTRA.get((task, model, n), {})}
