"""The lesson panels' API, registered on the app by :func:`add_lesson_routes`.

Routes:

* ``GET /api/lesson`` -- which lesson models are installed (each ``null`` when not, with the
  reason), and ``train_defaults``: the live-training settings the page proposes per task
  (:data:`~ptrnet.web.live_train.LIVE_DEFAULTS`).
* ``POST /api/lesson/vocabulary`` -- "seq2seq cannot say 6": a convex-hull instance of ``n``
  points answered by the fixed-vocabulary seq2seq baseline and by the Ptr-Net
  (:class:`VocabularyRequest`, :mod:`ptrnet.web.vocabulary`).
* ``POST /api/lesson/copy`` -- "generate or copy": one sentence of the copy task through the
  pointer-generator, every step's P_vocab, attention, p_gen and mixture, p_gen optionally
  overridden (:class:`CopyRequest`, :mod:`ptrnet.web.copy_panel`).
* ``POST /api/lesson/induction`` -- "a pointer grown by itself": the bundled induction model's
  attention on a sequence A A, A typed or drawn at random (:class:`InductionRequest`,
  :mod:`ptrnet.web.induction_panel`).
* ``POST /api/lesson/span`` -- "point at the answer": the bundled span pointer's start and end
  distributions over a passage, typed or drawn from the test stream (:class:`SpanRequest`,
  :mod:`ptrnet.web.span_panel`).
* ``POST /api/lesson/train`` -- live training of sort or convex hull
  (:class:`LessonTrainRequest`); its events, cancel and length test are the ``/api/train/*``
  routes of the app.

Lesson models come from :class:`Lessons` (by default the bundled ones,
:func:`bundled_lessons`); no request names a file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from fastapi import FastAPI, HTTPException
from pydantic import Field, model_validator

from ptrnet.inference import LoadedModel, load_model
from ptrnet.inference.load import BUNDLED_DIR
from ptrnet.tasks import TASKS
from ptrnet.web.answers import model_info
from ptrnet.web.copy_panel import CopyRequest, copy_answer, copy_info, load_bundled_copy
from ptrnet.web.induction_panel import (
    InductionRequest,
    induction_answer,
    induction_info,
    load_bundled_induction,
)
from ptrnet.web.live_train import LIVE_DEFAULTS, JobBusy, LiveTrainer
from ptrnet.web.schemas import Strict, TrainRequest
from ptrnet.web.span_panel import SpanRequest, load_bundled_span, span_answer, span_info
from ptrnet.web.vocabulary import check_baseline, lesson_instance, vocabulary_answer

HULL = TASKS["convex_hull"]
SEQ2SEQ_DIR = os.path.join(BUNDLED_DIR, "convex_hull_seq2seq")


@dataclass(frozen=True)
class Lessons:
    """The lesson panels' models; None where not installed, ``copy_missing`` saying why."""

    seq2seq: LoadedModel | None = None
    copy: Any = None  # a ptrnet.text.checkpoint.CopyModel
    copy_missing: str = "copy model not installed"
    induction: Any = None  # a ptrnet.induction.model.AttentionOnly
    induction_missing: str = "induction model not installed"
    span: Any = None  # a ptrnet.text.span_checkpoint.SpanModel (a span pointer)
    span_missing: str = "span model not installed"

    def __post_init__(self) -> None:
        if self.seq2seq is not None:
            check_baseline(self.seq2seq, HULL)


def bundled_lessons() -> Lessons:
    """The bundled seq2seq baseline (``ptrnet/bundled/convex_hull_seq2seq/``), copy model and
    induction model and span pointer."""

    seq2seq = None
    if os.path.isfile(os.path.join(SEQ2SEQ_DIR, "best.safetensors")):
        seq2seq = load_model(SEQ2SEQ_DIR, HULL)
    copy, missing = load_bundled_copy()
    induction, induction_missing = load_bundled_induction()
    span, span_missing = load_bundled_span()
    return Lessons(
        seq2seq=seq2seq,
        copy=copy,
        copy_missing=missing,
        induction=induction,
        induction_missing=induction_missing,
        span=span,
        span_missing=span_missing,
    )


class VocabularyRequest(Strict):
    """A convex-hull instance of ``n`` points from the lesson stream, picked by ``seed``."""

    n: int = Field(6, ge=3, le=12)
    seed: int = Field(0, ge=0, le=2**31 - 1)


class LessonTrainRequest(TrainRequest):
    """A live run (:class:`~ptrnet.web.schemas.TrainRequest`) of sort or convex hull."""

    task: Literal["sort", "convex_hull"] = "sort"

    @model_validator(mode="after")
    def _task_sizes(self) -> LessonTrainRequest:
        if self.min_len < TASKS[self.task].min_n:
            raise ValueError(f"{self.task} needs at least {TASKS[self.task].min_n} points")
        return self


def panel_answer(
    model: Any,
    missing: str,
    answer: Callable[[Any, Any], dict[str, Any]],
    request: Any,
    field: str,
) -> dict[str, Any]:
    """A lesson panel's answer to ``request``: ``answer(model, request)``.

    Raises:
        HTTPException: 404 with ``missing`` when the panel's model is not installed (None);
            422 ``FIELD: problem`` when ``answer`` refuses the request's input (ValueError).
    """
    if model is None:
        raise HTTPException(404, missing)
    try:
        return answer(model, request)
    except ValueError as err:
        raise HTTPException(422, f"{field}: {err}") from None


def add_lesson_routes(
    app: FastAPI, models: Mapping[str, LoadedModel], trainer: LiveTrainer, lessons: Lessons
) -> None:
    """Register the lesson routes; ``models`` are the app's Ptr-Nets (task -> model)."""

    @app.get("/api/lesson")
    def lesson() -> dict[str, Any]:
        s2s = lessons.seq2seq
        return {
            "seq2seq": None if s2s is None else model_info(s2s),
            "seq2seq_missing": None if s2s else "no seq2seq baseline installed",
            "pointer": None if HULL.name not in models else model_info(models[HULL.name]),
            "copy": None if lessons.copy is None else copy_info(lessons.copy),
            "copy_missing": None if lessons.copy else lessons.copy_missing,
            "induction": None if lessons.induction is None else induction_info(lessons.induction),
            "induction_missing": None if lessons.induction else lessons.induction_missing,
            "span": None if lessons.span is None else span_info(lessons.span),
            "span_missing": None if lessons.span else lessons.span_missing,
            "train_defaults": LIVE_DEFAULTS,
        }

    @app.post("/api/lesson/vocabulary")
    def vocabulary(request: VocabularyRequest) -> dict[str, Any]:
        if lessons.seq2seq is None:
            raise HTTPException(404, "no seq2seq baseline installed")
        max_n = lessons.seq2seq.config.model.max_n
        points, seed = lesson_instance(HULL, request.n, request.seed, max_n)
        answer = vocabulary_answer(HULL, points, lessons.seq2seq, models.get(HULL.name))
        return {**answer, "seed": seed}

    @app.post("/api/lesson/copy")
    def copy(request: CopyRequest) -> dict[str, Any]:
        return panel_answer(lessons.copy, lessons.copy_missing, copy_answer, request, "sentence")

    @app.post("/api/lesson/induction")
    def induction(request: InductionRequest) -> dict[str, Any]:
        missing = lessons.induction_missing
        return panel_answer(lessons.induction, missing, induction_answer, request, "tokens")

    @app.post("/api/lesson/span")
    def span(request: SpanRequest) -> dict[str, Any]:
        return panel_answer(lessons.span, lessons.span_missing, span_answer, request, "text")

    @app.post("/api/lesson/train", status_code=202)
    def train(request: LessonTrainRequest) -> dict[str, str]:
        try:
            trainer.start(request)
        except JobBusy as err:
            raise HTTPException(409, str(err)) from None
        return {"status": "started"}
