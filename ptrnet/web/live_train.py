"""Live training of a small Ptr-Net for the web page: the length-generalisation demo.

The task is sorting, or the request's ``task`` when it has one (the lesson panel's
:class:`~ptrnet.web.lesson.LessonTrainRequest` adds convex hull). A run learns from a fixed
training set of :data:`TRAIN_COUNT` instances (:class:`TrainingSet`) with the training loop's
own step; :data:`LIVE_DEFAULTS` are the settings the page proposes.

One job at a time runs in a background thread with one torch thread (``torch.set_num_threads``
is process-wide, so the server's own predictions then use one thread too). The job appends
events to a list that the server streams as server-sent events:

* ``start`` -- the request it runs;
* ``progress`` -- every :data:`LOG_EVERY` steps: ``step``, mean ``loss`` since the last one;
* ``eval`` -- every :data:`EVAL_EVERY` steps and at the end: decoded ``accuracy`` (the task's
  validation metric: exact match for sort, the right hull for convex hull) and ``valid_rate``
  on fixed validation instances of the training lengths;
* both with ``elapsed_s`` (wall seconds since the first step) and ``cpu_s`` (the training
  thread's CPU seconds);
* ``end`` -- ``status`` ``done``, ``cancelled`` or ``error`` (with ``message``); always last.

Once a job has finished, :meth:`LiveTrainer.test` decodes fresh lists of other (longer) lengths
with and without the mask and reports accuracy and invalid-output rate per length.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
import torch

from ptrnet.datasets.batching import Batch, collate
from ptrnet.decoding.dataset import decode_all
from ptrnet.decoding.options import DecodeOptions
from ptrnet.model import ModelConfig, build_model
from ptrnet.model.pointer import EncoderDecoder
from ptrnet.runs.config import TrainConfig
from ptrnet.tasks import SizeRange, Stream, Task, get_task
from ptrnet.training.steps import build_optimizer, train_step
from ptrnet.web.schemas import LengthTestRequest, TrainRequest

LOG_EVERY = 5
EVAL_EVERY = 25
VAL_COUNT = 200
TRAIN_COUNT = 6400  # the fixed training set of a live run (:class:`TrainingSet`)
# The settings the page proposes per task (served by GET /api/lesson as ``train_defaults``):
# runs that show learning within a minute or two on one CPU thread
# (benchmarks/bench_live_train.py measures them), and the lengths to test on.
LIVE_DEFAULTS: dict[str, dict[str, Any]] = {
    "sort": {
        "hidden": 64,
        "steps": 1000,
        "batch_size": 64,
        "min_len": 5,
        "max_len": 10,
        "lr": 0.003,
        "test_lengths": [5, 10, 15, 20, 30, 40],
    },
    "convex_hull": {
        "hidden": 64,
        "steps": 800,
        "batch_size": 64,
        "min_len": 5,
        "max_len": 10,
        "lr": 0.01,
        "test_lengths": [5, 10, 15, 20, 30, 50],
    },
}


class JobBusy(RuntimeError):
    """A job is already running (one at a time)."""


class TrainingSet:
    """A fixed training set, as in the paper: instances ``0 .. count-1`` of the training stream,
    visited in epochs, each in the order drawn from ``(seed, Stream.ORDER, epoch)``.

    Labels are solved when an instance is first drawn and kept: after the first epoch a step
    costs no solver time (the exact hull is about half of a small hull model's step otherwise;
    benchmarks/bench_live_train.py). A batch is a pure function of the step.
    """

    def __init__(self, task: Task, sizes: SizeRange, count: int, batch_size: int, seed: int):
        self.task, self.seed, self.batch_size = task, seed, min(batch_size, count)
        self.points = task.generate(sizes, count, seed, Stream.TRAIN)
        self.labels: list[np.ndarray | None] = [None] * count
        self.batches_per_epoch = count // self.batch_size  # the last partial batch is dropped
        self._order: tuple[int, np.ndarray] | None = None  # (epoch, its visiting order)

    def batch(self, step: int) -> Batch:
        """The batch of 0-based step ``step``."""
        epoch, k = divmod(step, self.batches_per_epoch)
        if self._order is None or self._order[0] != epoch:
            rng = np.random.default_rng([self.seed, Stream.ORDER, epoch])
            self._order = (epoch, rng.permutation(len(self.points)))
        ids = self._order[1][k * self.batch_size : (k + 1) * self.batch_size]
        for i in ids:
            if self.labels[i] is None:
                self.labels[i] = self.task.solve(self.points[i])
        return collate([self.points[i] for i in ids], [self.labels[i] for i in ids])


def scores(
    model: EncoderDecoder, task: Task, points: list, refs: list, mode: str
) -> dict[str, float]:
    """Decoded ``accuracy`` (the task's validation metric) and ``valid_rate`` (share of outputs
    the task accepts: a permutation for sort, a closed polygon without repeats for a hull)."""
    preds = decode_all(model, task, points, DecodeOptions(constraints=mode))
    metrics = task.metrics(points, refs, preds)
    valid = [task.is_valid(p, s) for p, s in zip(points, preds, strict=True)]
    return {
        "accuracy": float(metrics[task.validation_metric]),
        "valid_rate": float(np.mean(valid)),
    }


class TrainJob:
    """One training run in its own thread; read its ``events`` with :meth:`events_from`."""

    def __init__(self, request: TrainRequest) -> None:
        self.request = request
        self.task = get_task(getattr(request, "task", "sort"))
        self.events: list[dict[str, Any]] = []
        self.model: EncoderDecoder | None = None
        self.status = "running"
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="ptrnet-live-train", daemon=True)

    @property
    def running(self) -> bool:
        return self.status == "running"

    def start(self) -> None:
        self._thread.start()

    def cancel(self) -> None:
        """Ask the job to stop after the current step."""
        self._cancel.set()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def ended(self) -> bool:
        """Whether the ``end`` event has been emitted (it is always the last)."""
        with self._lock:
            return bool(self.events) and self.events[-1]["type"] == "end"

    def events_from(self, index: int) -> list[dict[str, Any]]:
        """Events ``index ..`` so far (each with its position as ``id``)."""
        with self._lock:
            return self.events[index:]

    def _emit(self, kind: str, **fields: Any) -> None:
        with self._lock:
            self.events.append({"id": len(self.events), "type": kind, **fields})

    def _run(self) -> None:
        torch.set_num_threads(1)
        self._emit("start", config=self.request.model_dump())
        try:
            self._train()
            self.status = "cancelled" if self._cancel.is_set() else "done"
            self._emit("end", status=self.status)
        except Exception as err:  # reported to the page; the server keeps running
            self.status = "error"
            self._emit("end", status="error", message=f"{type(err).__name__}: {err}")

    def _train(self) -> None:
        req = self.request
        torch.manual_seed(req.seed)
        task = self.task
        model = build_model(ModelConfig(input_dim=task.dim, hidden=req.hidden, init="default"))
        cfg = self._config()
        optimizer = build_optimizer(model, cfg)
        sizes = SizeRange(req.min_len, req.max_len)
        val = task.generate(sizes, VAL_COUNT, req.seed, Stream.VALIDATION)
        val_refs = [task.solve(p) for p in val]
        data = TrainingSet(task, sizes, TRAIN_COUNT, req.batch_size, req.seed)
        losses, started = [], (time.perf_counter(), time.thread_time())
        for step in range(1, req.steps + 1):
            if self._cancel.is_set():
                break
            batch = data.batch(step - 1)
            loss = train_step(model, optimizer, batch, cfg, step - 1)  # the real training step
            losses.append(loss)
            if step % LOG_EVERY == 0 or step == req.steps:
                self._emit(
                    "progress",
                    step=step,
                    loss=float(np.mean(losses)),
                    **self._clock(started),
                )
                losses = []
            if step % EVAL_EVERY == 0 or step == req.steps:
                metrics = scores(model, task, val, val_refs, self._mode())
                self._emit("eval", step=step, **metrics, **self._clock(started))
        self.model = model

    @staticmethod
    def _clock(started: tuple[float, float]) -> dict[str, float]:
        """Wall seconds and this thread's CPU seconds since ``started`` (a busy machine
        stretches the first, hardly the second)."""
        return {
            "elapsed_s": round(time.perf_counter() - started[0], 2),
            "cpu_s": round(time.thread_time() - started[1], 2),
        }

    def _config(self) -> TrainConfig:
        """The request as a training configuration: Adam at a constant rate, gradients clipped
        at 2; the mask option applies the task's rule in the loss (``train_constraints``)."""
        req = self.request
        return TrainConfig(
            task=self.task.name,
            sizes=f"{req.min_len}-{req.max_len}",
            lr=req.lr,
            decay=1.0,
            clip_norm=2.0,
            batch_size=req.batch_size,
            steps=req.steps,
            train_constraints=self._mode(),
            seed=req.seed,
            precision="fp32",
            device="cpu",
        )

    def _mode(self) -> str:
        return "task" if self.request.masked else "none"


class LiveTrainer:
    """Holds the current job; starts a new one only when none is running."""

    def __init__(self) -> None:
        self.job: TrainJob | None = None
        self._lock = threading.Lock()

    def start(self, request: TrainRequest) -> TrainJob:
        """Start a job. Raises JobBusy if one is running."""
        with self._lock:
            if self.job is not None and self.job.running:
                raise JobBusy("a training job is already running; cancel it or wait")
            self.job = TrainJob(request)
            self.job.start()
            return self.job

    def cancel(self) -> bool:
        """Cancel the running job; False if none was running."""
        job = self.job
        if job is None or not job.running:
            return False
        job.cancel()
        return True

    def test(self, request: LengthTestRequest) -> dict[str, Any]:
        """Accuracy and invalid-output rate per length, decoded with and without the mask.

        Raises:
            JobBusy: a job is running (its weights are changing).
            LookupError: no job has produced a model yet.
            ValueError: a length below the smallest instance of the trained task.
        """
        job = self.job
        if job is not None and job.running:
            raise JobBusy("training is still running; test when it has finished")
        if job is None or job.model is None:
            raise LookupError("no trained model yet: train one first")
        lengths = sorted(set(request.lengths))
        if lengths[0] < job.task.min_n:
            raise ValueError(
                f"{job.task.name} instances have at least {job.task.min_n} points; "
                f"got length {lengths[0]}"
            )
        results = {mode: {"accuracy": [], "invalid_rate": []} for mode in ("task", "none")}
        for n in lengths:
            points = job.task.generate(SizeRange(n, n), request.count, request.seed, Stream.TEST)
            refs = [job.task.solve(p) for p in points]
            for mode, series in results.items():
                metrics = scores(job.model, job.task, points, refs, mode)
                series["accuracy"].append(metrics["accuracy"])
                series["invalid_rate"].append(1.0 - metrics["valid_rate"])
        trained = f"{job.request.min_len}-{job.request.max_len}"
        return {
            "task": job.task.name,
            "lengths": lengths,
            "trained_on": trained,
            "masked_training": job.request.masked,
            "decoding": results,
        }
