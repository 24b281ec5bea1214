"""Request bodies of the web API: every field typed, bounded and checked before any work is done.

Each model forbids unknown fields, so a request cannot smuggle in options (or a file path: the
server loads models only from the command line and the bundled folder). Numbers must be finite;
sizes are capped, and so is the decoding work (beam width times output steps), so one request
stays within seconds of CPU.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

import numpy as np
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    FiniteFloat,
    ValidationInfo,
    field_validator,
    model_validator,
)

from ptrnet.decoding.options import CONSTRAINTS, DEFAULT_BEAM_WIDTH, DecodeOptions
from ptrnet.decoding.strategies import strategy_card
from ptrnet.quoting import quote
from ptrnet.searches.plan import NONE, SearchOptionError, SearchPlan, declared
from ptrnet.solvers.distances import RULES
from ptrnet.tasks import TASKS, get_point_task
from ptrnet.tasks.searches import LocalSearch, Rebuild

if TYPE_CHECKING:
    from ptrnet.decoding.options import DecodeOptions
    from ptrnet.tasks import Task

MAX_POINTS = 300  # points per instance on the page
TRACE_LIMIT = 100  # instances up to this size also get the per-step pointer distributions
COORD_LIMIT = 1e6  # |coordinate| bound: keeps float32 activations finite
MAX_BEAM = 16  # rows per instance a request may search: beams, samples
STEP_BUDGET = 4000  # rows x decoding steps per request (Delaunay emits about 6n tokens)
MAX_RRC_ITERATIONS = 100  # improve="rrc" rounds per request: --iterations's default at most
RRC_BUDGET = 6000  # RRC rounds x cities per request: about 5 s of CPU at n = 300
MAX_TEST_LENGTH = 100
TEST_BUDGET = 60_000  # lists x numbers per length test: one or two seconds of CPU
MAX_CAPACITY_TEXT = 40  # characters of a capacity given as text ("30%", "12.5")

Coordinate = Annotated[FiniteFloat, Field(ge=-COORD_LIMIT, le=COORD_LIMIT)]


class Strict(BaseModel):
    """Base: unknown fields are errors (no smuggled options), and types are strict: ``"5"`` or
    ``true`` is not an integer, ``1`` is not a boolean."""

    model_config = ConfigDict(extra="forbid", strict=True)


class DecodingRequest(Strict):
    """How to decode: a registered strategy (:mod:`ptrnet.decoding.strategies`, listed by
    ``GET /api/tasks``) with the options it reads (``beam_width``, ``samples``, ``seed``), with
    or without the task's mask; then the searches the task offers (``Task.searches``), as
    ``ptrnet predict`` and ``Solver.solve`` run them (:func:`ptrnet.searches.run.run_searches`):
    a rebuild search ``improve`` (tsp: ``"rrc"``) for ``iterations`` rounds (None: its
    default) seeded by ``seed``, then each local search named true (tsp: ``two_opt``,
    ``or_opt``), a field of its own here for any search a registered task declares (kept in
    :attr:`local`).

    ``constraints`` None means the task's rules (the ``valid`` protocol, as the API). The page's
    bounds on top of :class:`ptrnet.decoding.options.DecodeOptions`, which
    :meth:`to_options` builds, and of :class:`~ptrnet.searches.plan.SearchPlan`, which
    :meth:`plan` builds.
    """

    strategy: str = "greedy"
    beam_width: int = Field(DEFAULT_BEAM_WIDTH, ge=1, le=MAX_BEAM)
    samples: int = Field(1, ge=1, le=MAX_BEAM)
    constraints: Literal[CONSTRAINTS] | None = None
    improve: str = NONE
    iterations: int | None = Field(None, ge=1, le=MAX_RRC_ITERATIONS)
    local: dict[str, bool] = {}
    seed: int = Field(0, ge=0, le=2**64 - 1)

    @field_validator("strategy")
    @classmethod
    def _known_strategy(cls, name: str) -> str:
        strategy_card(name)  # raises ValueError naming the registered strategies
        return name

    @model_validator(mode="after")
    def _valid_options(self) -> DecodingRequest:
        self.to_options()  # DecodeOptionError, a ValueError: samples > 1 without sampling
        return self

    @model_validator(mode="before")
    @classmethod
    def _gather_local_searches(cls, data: object) -> object:
        """The fields named after a declared local search, gathered into ``local``
        (refused under that name itself: a request names each search)."""
        if not isinstance(data, dict):
            return data
        if "local" in data:
            raise ValueError("local: not a decoding field; name each search (two_opt: true)")
        names = declared(LocalSearch)
        local = {key: value for key, value in data.items() if key in names}
        return {key: value for key, value in data.items() if key not in names} | {"local": local}

    @field_validator("improve")
    @classmethod
    def _known_rebuild(cls, improve: str) -> str:
        if improve != NONE and improve not in declared(Rebuild):
            raise ValueError(" or ".join(repr(name) for name in (*declared(Rebuild), NONE)))
        return improve

    def plan(self) -> SearchPlan:
        """The searches this request asks for (unchecked: :meth:`PredictRequest._check_search`
        checks them against the task)."""
        local = tuple(name for name, wanted in self.local.items() if wanted)
        return SearchPlan(self.improve, self.iterations, local, self.seed)

    def to_options(self) -> DecodeOptions:
        """The decoding options of this request (built once, passed down unchanged)."""

        return DecodeOptions(
            strategy=self.strategy,
            beam_width=self.beam_width,
            samples=self.samples,
            constraints=self.constraints,
            seed=self.seed,
        )


class PredictRequest(Strict):
    """One instance of a task: ``points`` is n rows of ``task.dim`` numbers (``[[v], ...]`` for
    sort), n between the task's minimum and :data:`MAX_POINTS`; ``capacity`` (knapsack) the
    capacity it is solved and decoded under, as ``--capacity`` takes it: a number, or its text
    (``"12.5"``, or ``"30%"`` of the items' total weight), parsed by the task's
    :class:`~ptrnet.tasks.knapsack.CapacitySpec` (None: the task's default, Bello et al.'s
    ``min(n / 4, 25)``); ``distances`` (a task that measures lengths: TSP) the rule its lengths
    are measured by (:data:`ptrnet.solvers.distances.RULES`), as ``POST /api/read`` names a
    file's: ``euclidean`` (the default), ``great_circle`` (``points`` are ``[lon, lat]``
    degrees), ``tsplib_geo`` or ``tsplib_att`` (a TSPLIB file's coordinates as it gives them).
    """

    task: str
    points: list[list[Coordinate]] = Field(min_length=1, max_length=MAX_POINTS)
    decoding: DecodingRequest = DecodingRequest()
    capacity: float | str | None = None
    distances: str = "euclidean"

    def measured_task(self) -> Task:
        """The request's task measuring lengths by its ``distances`` (the task itself for
        ``euclidean``): the task of every reference, cost, search and decoding of the answer."""
        task = TASKS[self.task]
        return task if self.distances == "euclidean" else task.with_distances(RULES[self.distances])

    def instance(self) -> np.ndarray:
        """The points as an (n, dim) float64 array, stating ``capacity`` where given."""
        points = np.asarray(self.points, dtype=np.float64)
        if self.capacity is None:
            return points
        return TASKS[self.task].with_capacity(points, self.capacity)

    @field_validator("task")
    @classmethod
    def _known_task(cls, name: str) -> str:
        get_point_task(name, "the page")  # raises ValueError naming the point tasks
        return name

    @field_validator("capacity", mode="before")
    @classmethod
    def _capacity_taken(cls, capacity: object, info: ValidationInfo) -> object:
        """``capacity`` as given, once the task takes it as ``--capacity`` does
        (:meth:`Task.with_capacity` on one item of weight 1; the request's own items are
        checked in :meth:`_shape`).

        Raises:
            ValueError: one line (the CLI's wording): not a number or a text, a text longer
                than :data:`MAX_CAPACITY_TEXT`, a capacity the task refuses, or a task without
                one.
        """
        if capacity is None:
            return None
        if isinstance(capacity, bool) or not isinstance(capacity, int | float | str):
            raise ValueError(
                f"a capacity is a number or a text such as '30%', not {quote(capacity)}"
            )
        if isinstance(capacity, str) and len(capacity) > MAX_CAPACITY_TEXT:
            raise ValueError(
                f"{quote(capacity)}: a capacity is at most {MAX_CAPACITY_TEXT} characters"
            )
        task = TASKS.get(info.data.get("task"))  # None: the task was refused already
        if task is not None:
            task.with_capacity(np.ones((1, task.dim)), capacity)
        return capacity

    @field_validator("distances")
    @classmethod
    def _known_rule(cls, name: str) -> str:
        if name not in RULES:
            raise ValueError(f"{name!r} is not a distance rule; one of {', '.join(RULES)}")
        return name

    @model_validator(mode="after")
    def _shape(self) -> PredictRequest:
        task = TASKS[self.task]
        bad = next((i for i, p in enumerate(self.points) if len(p) != task.dim), None)
        if bad is not None:
            raise ValueError(
                f"task {task.name} needs {task.dim} number(s) per point; "
                f"point {bad} has {len(self.points[bad])}"
            )
        if len(self.points) < task.min_n:
            raise ValueError(f"task {task.name} needs at least {task.min_n} points")
        self.instance()  # ValueError: a share of items that weigh nothing
        options = self.decoding.to_options()
        steps = task.max_steps(len(self.points))
        if options.width * steps > STEP_BUDGET:
            card = options.card
            raise ValueError(
                f"too much decoding work: {options.width} {card.rows_word} x up to {steps} steps "
                f"for {len(self.points)} points is over {STEP_BUDGET}; "
                f"use fewer {card.rows_word} or fewer points"
            )
        self._check_search(task)
        self._check_distances(task)
        return self

    def _check_distances(self, task: Task) -> None:
        """A rule other than Euclidean only for a task that measures lengths, on points it
        can measure (:meth:`Task.check_points`: a latitude of 95 is refused)."""
        if self.distances == "euclidean":
            return
        if task.distances is None:
            raise ValueError(
                f"distances={self.distances!r}: task {task.name} measures no distances "
                "(tsp and cvrp do)"
            )
        self.measured_task().check_points(np.asarray(self.points, dtype=np.float64))

    def _check_search(self, task: Task) -> None:
        """The searches ``task`` offers (:meth:`SearchPlan.for_task`, the Python API's
        wording), a rebuild's rounds within :data:`RRC_BUDGET`."""
        try:
            plan = self.decoding.plan().for_task(task, self.decoding.constraints)
        except SearchOptionError as err:
            raise ValueError(str(err)) from None
        work = plan.rounds * len(self.points)
        if work > RRC_BUDGET:
            rebuild = plan.stages(task)[0].words
            raise ValueError(
                f"too much search work: {plan.rounds} {rebuild} rounds x "
                f"{len(self.points)} points is over {RRC_BUDGET}; use fewer iterations or "
                "fewer points"
            )


class SampleRequest(Strict):
    """A fresh instance of a point task from its own generator (:meth:`Task.generate`, rows
    laid out as the task lays them out): ``n`` of the task's sizes (a routing task's
    customers), ``seed`` any; the page's *Randomise* for a task whose inputs are more than a
    point on the board (``dim`` above 2: a depot and customers with demands)."""

    task: str
    n: int = Field(ge=1, le=MAX_POINTS - 1)
    seed: int = Field(0, ge=0, le=2**32 - 1)

    @field_validator("task")
    @classmethod
    def _known_task(cls, name: str) -> str:
        get_point_task(name, "the page")  # raises ValueError naming the point tasks
        return name

    @model_validator(mode="after")
    def _size(self) -> SampleRequest:
        task = TASKS[self.task]
        if self.n < task.min_n:
            raise ValueError(f"task {task.name} needs n >= {task.min_n}")
        return self


class TrainRequest(Strict):
    """A live sorting run: a small Ptr-Net trained on lists of ``min_len..max_len`` numbers.

    ``masked`` applies the task's rule (each input once, end only after all) both in the loss
    (softmax over the allowed inputs only) and when decoding validation lists.
    """

    hidden: int = Field(64, ge=8, le=128)
    steps: int = Field(300, ge=1, le=3000)
    batch_size: int = Field(64, ge=1, le=256)
    min_len: int = Field(5, ge=1, le=30)
    max_len: int = Field(10, ge=1, le=30)
    masked: bool = True
    lr: FiniteFloat = Field(3e-3, gt=0, le=0.1)
    seed: int = Field(0, ge=0, le=2**31 - 1)

    @model_validator(mode="after")
    def _range(self) -> TrainRequest:
        if self.min_len > self.max_len:
            raise ValueError(f"min_len {self.min_len} is above max_len {self.max_len}")
        return self


class LengthTestRequest(Strict):
    """Test the last trained model on ``count`` fresh lists of each length in ``lengths``."""

    lengths: list[Annotated[int, Field(ge=1, le=MAX_TEST_LENGTH)]] = Field(
        min_length=1, max_length=12
    )
    count: int = Field(100, ge=1, le=500)
    seed: int = Field(1, ge=0, le=2**31 - 1)

    @model_validator(mode="after")
    def _budget(self) -> LengthTestRequest:
        work = self.count * sum(set(self.lengths))
        if work > TEST_BUDGET:
            raise ValueError(
                f"too much work: count x the sum of the lengths is {work}, over {TEST_BUDGET}"
            )
        return self
