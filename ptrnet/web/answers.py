"""What ``POST /api/predict`` answers: the exact solution, the model's output, its trace, metrics.

Everything returned is plain JSON: sequences are 0-based index lists (the page labels points
1-based, like the paper's files), NaN becomes null, probabilities are rounded to 4 decimals.

The instance arrives in the user's units and under its task's distance rule (cities as
``(lon, lat)`` degrees for great-circle km): every reference, cost, gap and search is measured
on it by that rule, and the model decodes it as ``ptrnet predict`` does
(:func:`ptrnet.inference.predict_outputs`: the unit-square image of :meth:`Task.plane`, mapped
once there); :func:`ptrnet.io.unit_square.model_image` is the same image, for the page to
draw and describe.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ptrnet.inference import LoadedModel
from ptrnet.io.unit_square import model_image
from ptrnet.searches.plan import SearchPlan
from ptrnet.searches.run import run_searches
from ptrnet.tasks import Task
from ptrnet.tasks.searches import Rebuild
from ptrnet.viz.trace import InstanceTrace, decode_trace
from ptrnet.web.schemas import TRACE_LIMIT, DecodingRequest

if TYPE_CHECKING:
    from ptrnet.decoding.options import DecodeOptions


def json_number(value: float | bool) -> float | bool | None:
    """A metric as JSON: booleans kept, NaN and infinities as null."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    value = float(value)
    return value if math.isfinite(value) else None


def metrics_for(task: Task, points: np.ndarray, ref: np.ndarray, pred: np.ndarray) -> dict:
    """The task's metrics for one prediction (``count`` dropped), plus ``valid``; for a task
    whose cost is its objective also the reference's measure (:meth:`Task.answer_cost`, what
    a user reads: TSP's tour length) as ``reference_cost``, and as ``optimal_cost`` only where
    the reference is exact (:meth:`Task.reference_is_exact`; else null: a heuristic's length
    is not optimal, and a gap to it may be negative)."""
    values = task.metrics([points], [ref], [pred])
    out = {key: json_number(values[key]) for key in task.metric_keys}
    out["valid"] = bool(task.is_valid(points, pred))
    if task.objective_cost:
        cost = reference_cost(task, points, ref)
        out["reference_cost"] = cost
        out["optimal_cost"] = cost if task.reference_is_exact(len(points)) else None
    return out


def model_name(path: str) -> str:
    """A model's name for the page: its run directory's name (``bundled/tsp`` for the bundled
    ones), never an absolute path, which would tell a remote page about the machine."""

    folder = Path(path).parent
    return f"{folder.parent.name}/{folder.name}" if folder.parent.name == "bundled" else folder.name


def model_info(loaded: LoadedModel) -> dict[str, Any]:
    """What the page says about a loaded model; ``window``: the local window it decodes
    through (0: none); ``routes``: the sizes it hands to other models
    (:attr:`ptrnet.inference.LoadedModel.routes`), their names and windows, and whether a route
    serves the knapsack instances that state a capacity."""
    return {
        "name": model_name(loaded.path),
        "kind": loaded.config.model.kind,
        "hidden": loaded.config.model.hidden,
        "trained_sizes": loaded.config.train.sizes,
        "step": loaded.step,
        "window": loaded.window,
        "routes": [
            {
                "sizes": str(r.sizes),
                "name": model_name(r.model.path),
                "window": r.model.window,
                "capacity": r.capacity,  # knapsack: the route of instances stating a capacity
            }
            for r in loaded.routes
        ],
    }


def trace_json(trace: InstanceTrace) -> dict[str, Any]:
    """The per-step view: tokens, distributions and masks (T rows, n+1 columns, 0 = end)."""
    return {
        "tokens": trace.tokens.tolist(),
        "probs": np.round(trace.probs.astype(np.float64), 4).tolist(),
        "allowed": trace.allowed.astype(int).tolist(),
    }


def reference_cost(task: Task, points: np.ndarray, ref: np.ndarray) -> float | None:
    """The reference's measure (:meth:`Task.answer_cost`: TSP's tour length, by the task's
    distances) for a task whose cost is its objective, else None."""
    return json_number(task.answer_cost(points, ref)) if task.objective_cost else None


def model_answer(
    task: Task, points: np.ndarray, loaded: LoadedModel, options: DecodeOptions
) -> dict[str, Any]:
    """The model's output for ``points`` (in the user's units: decoded on their image, mapped
    once, by :func:`~ptrnet.viz.trace.decode_trace`); the step trace only up to
    :data:`TRACE_LIMIT` points; ``info`` describes the model that answered (the one ``loaded``
    routes the size to)."""
    trace = decode_trace(loaded, task, points, options)
    return {
        "sequence": trace.sequence.tolist(),
        "log_prob": json_number(trace.log_prob),
        "strategy": options.strategy,
        "beam_width": options.beam_width if "beam_width" in options.card.takes else None,
        "decoding": options.card.words(options),  # what the page shows: the card's words
        "constraints": trace.constraints,
        "trace": trace_json(trace) if len(points) <= TRACE_LIMIT else None,
        "info": model_info(loaded.for_size(len(points), task.stated_capacity(points) is not None)),
    }


def answer(
    task: Task,
    points: np.ndarray,
    loaded: LoadedModel | None,
    decoding: DecodingRequest,
    capacity_given: float | str | None = None,
) -> dict[str, Any]:
    """The full answer for one instance of ``task`` (measuring lengths by its distance rule).
    ``capacity`` is the capacity it is solved and decoded under (knapsack; in the items' own
    units: the one ``points`` state, counted at float32, else Bello et al.'s
    ``min(n / 4, 25)``), ``capacity_given`` the request's as sent (``"30%"``, a number; None:
    the default).
    The model decodes the instance's unit-square image (of its plane: the projection of cities
    on the sphere) when it lies outside [0, 1]^2 (``unit_square`` states the map); lengths,
    metrics and searches stay in the instance's units, or the rule's (``units``: ``"km"``).

    The reference is :meth:`Task.reference`'s by the task's ``answer_solver``, whose work is
    bounded on every instance the page takes; where it is not proved optimal (knapsack past its
    exact search's bound) ``reference_note`` says how far from the optimum it may be,
    ``reference_exact`` is false and no ``optimal_cost`` is reported.

    Raises:
        DegenerateInstanceError: the instance has no exact solution (e.g. all points collinear).
    """
    ref, note = task.reference(points, task.answer_solver)
    out: dict[str, Any] = {
        "task": task.name,
        "n": len(points),
        "capacity": task.instance_capacity(points),  # knapsack: the one solved under, else null
        "capacity_given": capacity_given,
        "reference": ref.tolist(),
        "reference_note": note,
        "reference_exact": task.reference_is_exact(len(points)),  # else a heuristic's answer
        "model": None,
        "metrics": None,
        "message": f"no model loaded for {task.name}: showing the exact solution only",
        "unit_square": None,
        "distances": None if task.distances is None else task.distances.name,
        "units": task.length_unit,  # None: the instance's own units
        "reference_cost": reference_cost(task, points, ref),
    }
    if loaded is not None:
        _, mapping = model_image(task, points)
        out["unit_square"] = None if mapping is None else mapping.describe()
        out["model"] = model_answer(task, points, loaded, decoding.to_options())
        out["message"] = None
        if out["model"]["trace"] is None:
            out["message"] = f"step-through is shown for up to {TRACE_LIMIT} points"
        if decoding.plan():
            out["model"] = searched_answer(task, out["model"], points, loaded, decoding)
            out["message"] = "a searched answer is not the model's own output: no step-through"
        pred = np.asarray(out["model"]["sequence"], dtype=np.int64)
        out["metrics"] = metrics_for(task, points, ref, pred)
    if note is not None:
        out["reference_exact"] = False
        said = out["message"] if loaded is not None else f"no model loaded for {task.name}"
        out["message"] = "; ".join(filter(None, [said, f"the reference is {note}"]))
        if out["metrics"] is not None:
            out["metrics"]["optimal_cost"] = None
    return out


def searched_answer(
    task: Task,
    model: dict[str, Any],
    points: np.ndarray,
    loaded: LoadedModel,
    decoding: DecodingRequest,
) -> dict[str, Any]:
    """``model`` (the :func:`model_answer` of ``points``, an instance in its own units) with its
    answer searched as ``ptrnet predict`` searches it (:func:`run_searches`, on ``task``'s
    distances: great-circle km for cities on the sphere): the searched ``sequence``, no
    ``log_prob`` and no ``trace`` (neither is the searched answer's), ``decoded_sequence`` the
    model's own and ``decoded_cost`` its cost, ``search`` the options
    (:meth:`SearchPlan.describe`, with ``words``: :func:`search_words`).

    Raises:
        UsageError: a rebuild search with a model it cannot use (RRC: no heavy or light
            decoder).
    """
    decoded = np.asarray(model["sequence"], dtype=np.int64)
    plan = decoding.plan().for_task(task, decoding.constraints)
    (found,) = run_searches(loaded, task, [points], [decoded], plan)
    search = plan.describe(task) | {"words": search_words(plan, task)}
    return model | {
        "sequence": found.tolist(),
        "log_prob": None,
        "trace": None,
        "decoded_sequence": decoded.tolist(),
        "decoded_cost": json_number(task.answer_cost(points, decoded)),
        "search": search,
    }


def search_words(plan: SearchPlan, task: Task) -> str:
    """The page's words for a checked ``plan`` of ``task``: ``RRC 2 rounds, then 2-opt and
    Or-opt``."""
    stages = []
    for search in plan.stages(task):
        rounds = f" {plan.rounds} round{'' if plan.rounds == 1 else 's'}"
        stages.append(search.words + (rounds if isinstance(search, Rebuild) else ""))
    return ", then ".join(stages)
