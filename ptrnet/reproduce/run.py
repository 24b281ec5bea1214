"""Reproduce one of the paper's tables: train (or reuse) its models, evaluate them with the
paper's decoding, write ``DIR/<table>.md`` and ``DIR/<table>.json``.

Layout of the output folder ``DIR``:

* ``DIR/<model>/``: a training run (:mod:`ptrnet.training.loop`) plus ``compute.json``, the
  compute it used (wall time summed over sessions, steps, examples, threads, device), updated at
  every validation so an interrupted run keeps its count.
* ``DIR/data/``: solver-labelled training files (e.g. TSP-50 with A1 labels), made once.
* ``DIR/testsets/``: generated test sets with their reference labels, made once, and
  ``comparators.json``, the TSP comparators' mean lengths per test set
  (:mod:`ptrnet.reproduce.testsets`).

Train or reuse: a run whose ``last.safetensors`` has the same configuration (up to the fields a
resume may change, e.g. threads or the step budget) is reused when it has taken its steps and
resumed exactly otherwise; a run with another configuration is an error.

Partial reports (``partial=True``, ``ptrnet reproduce --partial``): nothing is trained or
labelled for training; every row whose model has a run with a best checkpoint is evaluated, a
run still short of its budget included (its steps column says how far it got, e.g. while the
training runs in another process), and the other rows keep empty cells: their test sets are
not generated and their TSP comparators not run (at the cpu scale, about an hour of labelling
for rows that show nothing).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import torch

from ptrnet.compute.devices import resolve_device
from ptrnet.datasets.generation import default_workers, generate_dataset
from ptrnet.evaluation.evaluate import evaluate
from ptrnet.evaluation.score import json_safe
from ptrnet.inference import load_model
from ptrnet.io.atomic import atomic_write
from ptrnet.io.errors import UsageError
from ptrnet.io.paper_format import write_examples
from ptrnet.reproduce.compute import read_compute, write_compute
from ptrnet.reproduce.plans import (
    TEST_SEED,
    TEST_STREAM,
    TRAIN_SEED,
    ModelPlan,
    RowPlan,
    Scale,
    TablePlan,
    decoding_record,
    describe_budget,
    paper_numbers,
    run_config,
    total_steps,
)
from ptrnet.reproduce.tables import format_table
from ptrnet.reproduce.testsets import (
    TestSet,
    generated_test_set,
    mean_tour_lengths,
    paper_test_set,
)
from ptrnet.runs.checkpoint import load_checkpoint
from ptrnet.runs.config import RunConfig
from ptrnet.runs.resume import resume_config
from ptrnet.tasks import get_task
from ptrnet.training.cpu import decoding_threads
from ptrnet.training.loop import BEST, LAST, RunDirError, train


class Reproduction:
    """One table at one scale into ``out``.

    Args:
        plan, scale: what to train and evaluate, and how big.
        out: the output folder (created if missing).
        threads: torch threads (None: the scale's, else the idle cores,
            :func:`ptrnet.training.cpu.cpu_plan` while training and
            :func:`~ptrnet.training.cpu.decoding_threads` while evaluating); also the
            labelling processes.
        paper_data: folder with the paper's released test files, or None.
        log: receives one-line progress notes.
        progress: show the training loop's progress bar.
        partial: train nothing; report the runs there are (see the module docstring).
        device: where training and decoding run (:func:`ptrnet.compute.devices.resolve_device`).
    """

    def __init__(
        self,
        plan: TablePlan,
        scale: Scale,
        out: str,
        *,
        threads: int | None = None,
        paper_data: str | None = None,
        log: Callable[[str], None] = lambda _: None,
        progress: bool = False,
        partial: bool = False,
        device: str = "auto",
    ) -> None:
        self.plan, self.scale, self.out = plan, scale, out
        self.partial, self.device = partial, device
        self.threads = threads or scale.threads
        self.paper_data, self.log, self.progress = paper_data, log, progress
        self.task = get_task(plan.task)
        self.workers = (self.threads or default_workers()) if scale.parallel else 1
        self.notes: list[str] = []
        self._tests: dict[tuple[int, str | None], TestSet] = {}
        self._comparators: dict[tuple[int, str | None], dict[str, float]] = {}

    def run(self) -> dict[str, Any]:
        """Train or reuse every model, evaluate every row; write and return the JSON report."""

        for row in self.plan.rows:  # a malformed released file fails before hours of training
            if row.paper_file is not None:
                self.test_set(row)
        prepare = self.existing if self.partial else self.prepare
        computes = {m.name: prepare(m) for m in self.plan.models}
        torch.set_num_threads(decoding_threads(self.threads))
        rows = [self.evaluate_row(r, computes[r.model]) for r in self.plan.rows]
        report = self.report(rows)
        if self.partial:
            trained = sum(c is not None for c in computes.values())
            report["partial"] = True
            report["notes"].append(
                f"Partial report: {trained} of {len(computes)} models have a run; a row of an "
                "unfinished run evaluates its best checkpoint so far (steps: taken of planned); "
                "rows without a run are empty."
            )
        base = os.path.join(self.out, self.plan.name)
        with atomic_write(f"{base}.json") as stream:
            json.dump(report, stream, indent=2)
        with atomic_write(f"{base}.md") as stream:
            stream.write(format_table(report))
        return report

    def locate(self, model: ModelPlan) -> tuple[str, RunConfig, int | None]:
        """``model``'s run directory, its training configuration, and the steps the run there
        has taken (None: no run). Raises UsageError for a run of another configuration."""
        run_dir = os.path.join(self.out, model.name)
        data = self.training_file_path(model)
        config = run_config(model, self.scale, data, self.threads, self.device)
        return run_dir, config, saved_step(run_dir, config)

    def prepare(self, model: ModelPlan) -> dict[str, Any]:
        """Train ``model``, resume it, or reuse the finished run; returns its compute record."""
        run_dir, config, step = self.locate(model)
        data = config.train.data
        if step is not None and step >= total_steps(model, self.scale):
            self.log(f"{model.name}: reusing the finished run in {run_dir} ({step:,} steps)")
            return {**read_compute(run_dir), "reused": True}
        if data is not None and not os.path.exists(data):
            self.make_training_file(model, data)
        self.log(f"{model.name}: training, {describe_budget(model, self.scale)}")
        self.train(model, config, run_dir, resume=step is not None)
        return {**read_compute(run_dir), "reused": False}

    def existing(self, model: ModelPlan) -> dict[str, Any] | None:
        """The compute record of ``model``'s run as it is now (``planned_steps`` added); None
        when there is no run with a best checkpoint yet. Trains nothing."""

        run_dir, _, step = self.locate(model)
        if step is None or not os.path.exists(os.path.join(run_dir, BEST)):
            self.log(f"{model.name}: no run with a checkpoint in {run_dir}; its rows stay empty")
            return None
        planned = total_steps(model, self.scale)
        return {**read_compute(run_dir), "reused": True, "planned_steps": planned}

    def train(self, model: ModelPlan, config: RunConfig, run_dir: str, resume: bool) -> None:
        """Run the training loop, keeping ``compute.json`` current at every validation."""

        prior = read_compute(run_dir).get("train_wall_s", 0.0) if resume else 0.0
        start, total = time.perf_counter(), total_steps(model, self.scale)
        primary = get_task(model.task).validation_metric

        def record(step: int) -> None:
            wall = prior + time.perf_counter() - start
            write_compute(run_dir, model, self.scale, config, step, wall)

        def on_validation(trainer: Any, metrics: dict[str, Any]) -> bool:
            record(trainer.step)
            self.log(f"{model.name}: step {trainer.step:,}/{total:,}, {primary} {metrics[primary]}")
            return False

        try:
            result = train(
                config, run_dir, resume=resume, progress=self.progress, on_validation=on_validation
            )
        except RunDirError as err:
            raise UsageError(str(err)) from None
        record(result.step)

    def training_file_path(self, model: ModelPlan) -> str | None:
        """Where the solver-labelled training file of ``model`` lives; None for generated data."""
        if model.labels is None:
            return None
        name = f"{model.task}-{model.sizes}-{model.labels}-{self.scale.file_count}.txt"
        return os.path.abspath(os.path.join(self.out, "data", name))

    def make_training_file(self, model: ModelPlan, path: str) -> None:
        """Label ``scale.file_count`` training pairs (stream 0, the training stream) with the
        model's solver, e.g. the paper's A1-labelled TSP-50."""
        self.log(f"{model.name}: labelling {self.scale.file_count:,} pairs with {model.labels}")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        pairs = generate_dataset(
            self.task,
            model.sizes,
            self.scale.file_count,
            TRAIN_SEED,
            solver=model.labels,
            workers=self.workers,
        )
        write_examples(path, pairs)

    def evaluate_row(self, row: RowPlan, compute: dict[str, Any] | None) -> dict[str, Any]:
        """Decode the row's test set with the table's decoding; the row of the JSON report.
        ``compute`` None (a partial report without this model's run): empty metrics, and no
        test set or comparators, which would cost labelling time for a row nobody evaluates."""

        model, decoding = self.plan.model(row.model), self.plan.decoding
        if compute is None:
            return self.row_record(row, model, None, {}, {"trained": False})
        test = self.test_set(row)
        loaded = load_model(os.path.join(self.out, model.name), self.task)
        start = time.perf_counter()
        metrics = evaluate(
            loaded.model.to(resolve_device(self.device)),
            self.task,
            test.points,
            test.refs,
            decoding,
        )
        compute = {
            **compute,
            "best_step": loaded.step,
            "eval_s": round(time.perf_counter() - start, 2),
        }
        self.log(f"{row.label}: {json_safe(metrics)}")
        return self.row_record(row, model, test, json_safe(metrics), compute)

    def row_record(
        self, row: RowPlan, model: ModelPlan, test: TestSet | None, metrics: dict, compute: dict
    ) -> dict[str, Any]:
        """One row of the JSON report: what was trained and tested, ours, the paper's, compute.
        ``test`` None (a row without a run): ``"test"`` is None and our comparators are None."""
        record = {
            "label": row.label,
            "model": model.name,
            "arch": model.arch,
            "trained_sizes": model.sizes,
            "labels": model.labels or "reference",
            "n": row.n,
            "scale": self.scale.name,
            "budget": describe_budget(model, self.scale),
            "test": None if test is None else {"source": test.source, "count": len(test.points)},
            "metrics": metrics,
            "paper": paper_numbers(self.plan.task, row.paper_model, row.n),
            "compute": compute,
        }
        if self.plan.comparators:
            names = ("optimal", *self.plan.comparators)
            record["comparators"] = dict.fromkeys(names) if test is None else self.comparators(row)
            record["paper_comparators"] = {
                name: paper_numbers(self.plan.task, name, row.n).get("mean_length")
                for name in names
            }
        return record

    def test_set(self, row: RowPlan) -> TestSet:
        """The row's test set: the paper's released file if available, else generated."""
        key = (row.n, row.paper_file)
        if key not in self._tests:
            path = self.paper_file_path(row.paper_file)
            if path is not None:
                test = paper_test_set(path, self.task, self.scale.paper_file_count)
            else:
                folder = os.path.join(self.out, "testsets")
                count = self.scale.test_count
                test = generated_test_set(self.task, row.n, count, folder, self.workers, self.log)
            self._tests[key] = test
        return self._tests[key]

    def paper_file_path(self, name: str | None) -> str | None:
        """The released file ``name`` in ``paper_data``; None (with a note) when absent."""
        if name is None:
            return None
        path = None if self.paper_data is None else os.path.join(self.paper_data, name)
        if path is not None and os.path.isfile(path):
            return path
        where = f"in {self.paper_data}" if self.paper_data else "(no --paper-data folder)"
        note = f"The paper's {name} was not found {where}; its rows use a generated test set."
        if note not in self.notes:
            self.notes.append(note)
        return None

    def comparators(self, row: RowPlan) -> dict[str, float]:
        """Mean tour lengths on the row's test set: reference tours and the table's solvers."""
        key = (row.n, row.paper_file)
        if key not in self._comparators:
            test, folder = self.test_set(row), os.path.join(self.out, "testsets")
            os.makedirs(folder, exist_ok=True)
            cache = os.path.join(folder, "comparators.json")
            solvers = self.plan.comparators
            self._comparators[key] = mean_tour_lengths(test, solvers, self.workers, cache)
        return self._comparators[key]

    def report(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """The JSON report: the table's setting, its notes and its rows."""
        return {
            "table": self.plan.name,
            "title": self.plan.title,
            "task": self.plan.task,
            "scale": self.scale.name,
            "metrics": list(self.plan.metrics),
            "decoding": decoding_record(self.plan.decoding),
            "test_data": {"seed": TEST_SEED, "stream": TEST_STREAM, "paper_data": self.paper_data},
            "notes": self.notes,
            "rows": rows,
        }


def saved_step(run_dir: str, config: RunConfig) -> int | None:
    """Steps taken by the run in ``run_dir``; None when there is none.

    Raises:
        UsageError: the run there has another configuration (beyond resumable fields).
    """

    last = os.path.join(run_dir, LAST)
    if not os.path.exists(last):
        return None
    saved = load_checkpoint(last)
    try:
        if saved.config.model != config.model:
            raise ValueError(f"model {saved.config.model} instead of {config.model}")
        resume_config(saved.config, asdict(config.train))
    except ValueError as err:
        raise UsageError(
            f"{run_dir} holds a run with another configuration ({err}); "
            "remove it or choose another --out"
        ) from None
    return saved.step
