"""The web app: a FastAPI factory serving the page and its JSON API.

Routes:

* ``GET /`` -- the page (``static/index.html``); ``/static/*`` its scripts and styles.
* ``GET /api/tasks`` -- the tasks (name, ``dim``, ``drawing`` kind, ...), which have a model
  loaded, the decoding strategies (the registry's cards, :func:`strategy_entry`) and the
  request limits.
* ``POST /api/predict`` -- exact solution, the model's output and trace (for TSP optionally
  searched: RRC, 2-opt), metrics
  (:class:`~ptrnet.web.schemas.PredictRequest`).
* ``POST /api/sample`` -- a fresh instance from the task's own generator
  (:class:`~ptrnet.web.schemas.SampleRequest`): the page's *Randomise* for a task whose inputs
  are more than a point (a depot and customers with demands).
* ``POST /api/read`` -- points pasted or dropped on the page, read by the command line's reader
  (:mod:`ptrnet.web.reading`).
* ``POST /api/train`` -- start a live sorting run (:class:`~ptrnet.web.schemas.TrainRequest`);
  ``POST /api/train/cancel`` stops it; ``GET /api/train/events`` streams its events as
  server-sent events (resuming after ``Last-Event-ID``; a stream ends after the limits'
  ``stream_lifetime_s`` and the browser reconnects); ``POST /api/train/test`` measures
  length generalisation (:class:`~ptrnet.web.schemas.LengthTestRequest`).

Models come only from the factory's ``models`` argument (the command line, bundled defaults);
no request names a file and no answer shows one. Every bad request is answered 4xx with
``{"detail": message}``. :class:`~ptrnet.web.guard.Guard` checks the Host, the content type,
the body size and read time, and bounds concurrent heavy requests before any route runs; it
also adds the security headers (Content-Security-Policy, X-Frame-Options) to every answer.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles

from ptrnet.decoding.search import DecodingError
from ptrnet.decoding.strategies import STRATEGIES, StrategyCard
from ptrnet.inference import LoadedModel
from ptrnet.io.errors import UsageError
from ptrnet.quoting import quote
from ptrnet.solvers.distances import RULES
from ptrnet.tasks import POINT_TASKS, DegenerateInstanceError, SizeRange, Stream, Task
from ptrnet.tasks.searches import Rebuild
from ptrnet.web.answers import answer, model_info
from ptrnet.web.guard import Guard, GuardLimits
from ptrnet.web.lesson import Lessons, add_lesson_routes, bundled_lessons
from ptrnet.web.live_train import JobBusy, LiveTrainer, TrainJob
from ptrnet.web.reading import add_read_route
from ptrnet.web.schemas import (
    MAX_BEAM,
    MAX_POINTS,
    MAX_RRC_ITERATIONS,
    MAX_TEST_LENGTH,
    RRC_BUDGET,
    STEP_BUDGET,
    TEST_BUDGET,
    TRACE_LIMIT,
    LengthTestRequest,
    PredictRequest,
    SampleRequest,
    TrainRequest,
)

STATIC = Path(__file__).parent / "static"
MAX_BODY = GuardLimits().max_body
POLL_S = 0.2  # how often the event stream looks for new training events
LIMITS = {
    "max_points": MAX_POINTS,
    "trace_limit": TRACE_LIMIT,
    "max_beam": MAX_BEAM,
    "step_budget": STEP_BUDGET,
    "max_rrc_iterations": MAX_RRC_ITERATIONS,
    "rrc_budget": RRC_BUDGET,
    "max_test_length": MAX_TEST_LENGTH,
    "test_budget": TEST_BUDGET,
    "max_body": MAX_BODY,
}


def create_app(
    models: Mapping[str, LoadedModel] | None = None,
    trainer: LiveTrainer | None = None,
    limits: GuardLimits | None = None,
    lessons: Lessons | None = None,
) -> FastAPI:
    """The app, serving ``models`` (task name -> loaded model; tasks may lack one) within
    ``limits`` (default :class:`GuardLimits`: answers only for localhost names), and the lesson
    panels' ``lessons`` (default: the bundled ones, :mod:`ptrnet.web.lesson`).

    Raises:
        ValueError: a model registered under a task it was not trained on.
    """
    models = dict(models or {})
    for name, loaded in models.items():
        if name not in POINT_TASKS or loaded.task != name:
            raise ValueError(f"model {loaded.path} was trained on {loaded.task}, not {quote(name)}")
    trainer = trainer or LiveTrainer()
    limits = limits or GuardLimits()
    app = FastAPI(title="ptrnet", docs_url=None, redoc_url=None, openapi_url=None)
    add_error_handlers(app)
    app.add_middleware(Guard, limits=limits)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/api/tasks")
    async def tasks() -> dict[str, Any]:  # async: answered on the event loop, never queued
        return {
            "tasks": [task_entry(name, models.get(name)) for name in POINT_TASKS],
            "strategies": [strategy_entry(card) for card in STRATEGIES.values()],
            "limits": LIMITS,
        }

    @app.post("/api/predict")
    def predict(request: PredictRequest) -> dict[str, Any]:
        task = request.measured_task()  # great-circle km for cities given as [lon, lat]
        points = request.instance()  # knapsack: stating its capacity, where the request gives one
        try:
            return answer(task, points, models.get(task.name), request.decoding, request.capacity)
        except DegenerateInstanceError as err:
            raise HTTPException(422, f"no exact solution: {err}") from None
        except DecodingError as err:  # e.g. a model whose scores overflow on these points
            raise HTTPException(422, f"no trustworthy model output: {err.problem}") from None
        except UsageError as err:  # improve="rrc" with a model that has no heavy or light decoder
            raise HTTPException(422, str(err)) from None

    @app.post("/api/sample")
    def sample(request: SampleRequest) -> dict[str, Any]:
        task = POINT_TASKS[request.task]
        points = task.generate(SizeRange(request.n, request.n), 1, request.seed, Stream.DEMO)[0]
        if len(points) > MAX_POINTS:  # rows beyond the size (a depot)
            raise HTTPException(422, f"n = {request.n}: {len(points)} points, over {MAX_POINTS}")
        return {"task": task.name, "points": points.tolist()}

    add_read_route(app)
    add_training_routes(app, trainer, limits.stream_lifetime_s)
    add_lesson_routes(app, models, trainer, lessons or bundled_lessons())
    return app


def strategy_entry(card: StrategyCard) -> dict[str, Any]:
    """A strategy as the page lists it: its name, title and description, and the request field
    its width (rows per instance, up to ``limits.max_beam``) goes in (None: one row)."""
    return {
        "name": card.name,
        "title": card.title,
        "description": card.description,
        "width_option": card.width_option,
    }


def task_entry(name: str, loaded: LoadedModel | None) -> dict[str, Any]:
    task = POINT_TASKS[name]
    return {
        "name": name,
        "dim": task.dim,
        "drawing": task.drawing,  # the page draws by this, never by the task's name
        "min_n": task.min_n,
        "metric_keys": list(task.metric_keys),
        "default_constraints": "task",  # the page decodes under the task's rules by default
        "paper_constraints": task.paper_constraints,
        "searches": search_entries(task),  # what decoding may ask for after it (RRC, 2-opt)
        "capacity": task.capacity_column,  # a request may give the instance's capacity
        "added_rows": task.added_rows,  # the numbers past x, y of a point added on the board
        "distances": None if task.distances is None else list(RULES),  # rules a request may name
        "model": None if loaded is None else model_info(loaded),
    }


def search_entries(task: Task) -> list[dict[str, str]]:
    """The searches after decoding ``task`` offers (``Task.searches``), as the page offers them:
    ``name`` (a request's field; a rebuild's is ``improve``'s value), ``words`` and ``kind``
    (``rebuild``: rounds of it; ``local``: a choice of the Search list)."""
    return [
        {"name": s.name, "words": s.words, "kind": "rebuild" if isinstance(s, Rebuild) else "local"}
        for s in task.searches
    ]


def add_training_routes(app: FastAPI, trainer: LiveTrainer, stream_lifetime_s: float) -> None:
    """The live-training endpoints (one job at a time); an event stream lasts at most
    ``stream_lifetime_s`` seconds."""

    @app.post("/api/train", status_code=202)
    def train(request: TrainRequest) -> dict[str, str]:
        try:
            trainer.start(request)
        except JobBusy as err:
            raise HTTPException(409, str(err)) from None
        return {"status": "started"}

    @app.post("/api/train/cancel")
    def cancel() -> dict[str, bool]:
        return {"cancelled": trainer.cancel()}

    @app.post("/api/train/test")
    def test(request: LengthTestRequest) -> dict[str, Any]:
        try:
            return trainer.test(request)
        except (JobBusy, LookupError) as err:
            raise HTTPException(409, str(err.args[0])) from None
        except ValueError as err:  # a length the trained task has no instance of
            raise HTTPException(422, str(err)) from None

    @app.get("/api/train/events")
    def events(request: Request) -> StreamingResponse:
        job = trainer.job
        if job is None:
            raise HTTPException(404, "no training job has been started")
        start = last_event_id(request) + 1
        return StreamingResponse(
            event_stream(job, start, request, stream_lifetime_s),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache"},
        )


def last_event_id(request: Request) -> int:
    """The ``Last-Event-ID`` an EventSource sends on reconnecting; -1 when absent or not an
    event id (1 to 18 ASCII digits: ``isdigit`` also takes ``"²"``, which ``int`` refuses)."""
    value = request.headers.get("last-event-id", "")
    return int(value) if re.fullmatch(r"[0-9]{1,18}", value) else -1


async def event_stream(
    job: TrainJob, index: int, request: Request, lifetime_s: float
) -> AsyncIterator[str]:
    """Server-sent events from ``index`` on, until the job's ``end`` event has been sent or
    ``lifetime_s`` has passed (the client's EventSource then reconnects, resuming after the
    last event's id)."""
    loop = asyncio.get_running_loop()
    until = loop.time() + lifetime_s
    while True:
        ended = job.ended()  # read first: then every event up to the end is in ``events``
        events = job.events_from(index)
        for event in events:
            yield f"id: {event['id']}\ndata: {json.dumps(event)}\n\n"
        index += len(events)
        left = until - loop.time()
        if ended or left <= 0 or await request.is_disconnected():
            return
        await asyncio.sleep(min(POLL_S, left))


def add_error_handlers(app: FastAPI) -> None:
    """4xx answers with one readable ``detail`` line."""

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, err: RequestValidationError) -> JSONResponse:
        errors = [{"loc": [str(p) for p in e["loc"]], "msg": e["msg"]} for e in err.errors()]
        detail = "; ".join(f"{'.'.join(e['loc'][1:]) or 'body'}: {e['msg']}" for e in errors)
        return JSONResponse({"detail": detail, "errors": errors}, status_code=422)
